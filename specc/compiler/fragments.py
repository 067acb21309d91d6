"""The template context of a Plan: quoted values, and the few fixed code fragments specc itself writes.

Every fragment here comes from a table keyed by a validated choice (an activation, a loss, a metric);
spec text reaches the output only through `render.literal`.
"""

from __future__ import annotations

import os

from specc.compiler.activation import activation_context
from specc.compiler.augment import torch_augment, uses_named
from specc.compiler.data_fragments import data_context, data_imports
from specc.compiler.keras_fragments import tensorflow_context, tensorflow_modules
from specc.compiler.render import WIDTH, Code, Multiline, literal
from specc.compiler.resolve import Plan, is_searched
from specc.compiler.schedule_loss import call_arguments, named_loss, schedule_context, searched_keys
from specc.compiler.tune_fragments import optimizer_types, population_train, tune_context, tune_imports
from specc.spec.dump import dump_recorded

ACTIVATIONS = {
    "relu": "nn.ReLU()",
    "gelu": "nn.GELU()",
    "silu": "nn.SiLU()",
    "tanh": "nn.Tanh()",
    "sigmoid": "nn.Sigmoid()",
    "elu": "nn.ELU()",
    "leaky_relu": "nn.LeakyReLU()",
    "linear": "nn.Identity()",
}
LOSSES = {
    "cross_entropy": "nn.CrossEntropyLoss()",
    "mse": "nn.MSELoss()",
    "bce_with_logits": "nn.BCEWithLogitsLoss()",
    "l1": "nn.L1Loss()",
    "huber": "nn.HuberLoss()",
}
# val_<metric> -> the per-batch sum that is added up across workers and divided by the example count.
METRIC_SUMS = {
    "accuracy": "(outputs.argmax(1) == yb).sum().float()",
    "binary_accuracy": "((outputs > 0).float() == yb).sum().float()",
    "top5_accuracy": "(outputs.topk(5, dim=1).indices == yb[:, None]).any(1).sum().float()",
    "mse": "((outputs - yb) ** 2).sum()",
    "mae": "(outputs - yb).abs().sum()",
}
STDLIB = {
    "argparse",
    "bisect",
    "copy",
    "csv",
    "gzip",
    "importlib",
    "inspect",
    "io",
    "itertools",
    "json",
    "logging",
    "math",
    "os",
    "pickle",
    "socket",
    "sys",
}
STDLIB |= {"contextlib", "fcntl", "functools", "re", "stat", "tempfile", "threading", "time", "zipfile"}
STDLIB |= {"concurrent.futures", "ctypes", "hashlib", "shutil", "warnings"}
# run.resume -> Tuner.restore's arguments (never: check_resumable refuses before Tune is asked)
RESTORE = {
    "auto": "resume_unfinished=True, resume_errored=True",
    "errored_only": "resume_unfinished=False, resume_errored=True",
    "never": "resume_unfinished=False, resume_errored=False",
}
# torchvision data sets that name their splits rather than taking train=True/False
SPLITS = {"SVHN": ('split="train"', 'split="test"'), "STL10": ('split="train"', 'split="test"')}


def context(plan: Plan, script_name: str, docstring: str | None = None) -> dict:
    """The template context of a Plan; `docstring` replaces the training script's (an after-training script's)."""
    e = plan.experiment
    lean = plan.shape == "tune"
    runtime_env = runtime_env_of(e)
    return {
        "lean": lean,  # one Tune trial per process: Tune's session, no worker group
        "checkpointed": _checkpointed(e),
        "clipping": _clipping(e),
        "excludes": excludes_beyond(plan),
        "session": Code("tune" if lean else "ray.train"),
        "move_batches": lean and e.scaling.use_gpu and plan.loader != "ray_data",
        "restore_args": Code(RESTORE[e.run.resume]),
        "optimizer_types": optimizer_types(plan.experiment),  # more than one: tune.space chooses among them
        "named_optimizers": named_optimizers(plan.experiment),
        "base_lr": keras_base_lr(plan.experiment),
        "population_train": population_train(plan),  # pbt/pb2 over trials that each drive a Train run
        **tune_context(plan),
        "plan": plan,
        "e": e,
        "docstring": Multiline(docstring if docstring is not None else _docstring(plan, script_name)),
        "resolved_spec": Multiline(dump_recorded(e)),
        "imports": _imports(plan),
        "config": plan.config,
        **activation_context(e, ACTIVATIONS),
        "loss": named_loss(e) or Code(LOSSES[e.training.loss]),
        "named_loss": named_loss(e) is not None,
        "schedule": schedule_context(e),
        "num_outputs_expr": Code(str(plan.num_outputs) if plan.num_outputs else "int(y_train.max()) + 1"),
        "metric_sums": _metric_sums(plan),
        "metric_names": _metric_names(plan),
        "train_metric_sums": _metric_sums(plan, loss="loss.detach() * len(yb)"),
        "train_metric_names": _metric_names(plan, prefix="train_"),
        "checkpoints": e.training.checkpoint_every != "never",
        "partial_epoch": _set_or_searched(e, "steps_per_epoch"),
        "partial_validation": _set_or_searched(e, "validation_steps"),
        "checkpoint_args": Code(_checkpoint_args(plan)),
        "runtime_env": runtime_env,
        "backend": Code(_backend(plan)),
        "report_poll_s": literal(report_poll_s(e.scaling.num_workers)),
        "scaling_config": scaling_config(e.scaling),
        "split_args": [Code(arg) for arg in SPLITS.get(getattr(e.dataset, "name", ""), ("train=True", "train=False"))],
        "cnn": _cnn(e) if e.model.type == "cnn" else {},
        "mlp_batch_norm": _choice(e, "model.batch_norm", getattr(e.model, "batch_norm", False), False),
        # a searched dropout may start at 0.0: the layers are there for the trials that draw more
        "dropout": bool(getattr(e.model, "dropout", 0.0)) or is_searched(e, "model", "dropout"),
        "data": _data(e),
        "data_paths": _data_paths(plan),  # made absolute by the driver
        "rt": Code("specc_runtime."),  # where DataProblem and plain come from; an after-training script has its own
        "has_prepare": bool(_data_paths(plan)) or plan.uses_factory_module,  # run/arguments.py.j2's prepare()
        "spec_side": reads_spec_side(plan),  # HERE, SPEC_DIR and best.json's spec_dir
        **data_context(plan),
        "validates": e.validates(),
        **(tensorflow_context(plan) if e.framework == "tensorflow" else {}),
    }


def reads_spec_side(plan: Plan) -> bool:
    """Whether the script reads from the spec's side (data paths, factories, a working directory): it then knows
    where it stands (HERE) and where the spec is (SPEC_DIR), and best.json records the latter for `specc evaluate`;
    otherwise its text is the same wherever it is compiled."""
    return bool(_data_paths(plan)) or plan.uses_factory_module or plan.working_dir is not None


def _data_paths(plan: Plan) -> list[str]:
    """The dataset fields that name files or directories: made absolute by the driver."""
    dataset = plan.experiment.dataset
    if plan.data_source == "torchvision":
        return ["root"]
    if plan.data_source == "image_folder":
        return ["path", "validation_path"] if dataset.validation_path else ["path"]
    return ["path"] if plan.data_source == "files" or dataset.type == "keras_dataset" else []


def _choice(e, path: str, value, default) -> str:
    """How the code treats a field: "default" (today's code, the value written in), "fixed" (another value
    written in), "searched" (read from the trial's config); fixed values that are booleans read "on"/"off"."""
    if is_searched(e, *path.split(".")):
        return "searched"
    if value == default:
        return "default"
    if isinstance(value, bool):
        return "on" if value else "off"
    return "fixed"


def _cnn(e) -> dict:
    """The cnn's conv blocks: padding, batch norm and pooling, each written in unless searched."""
    model = e.model
    pool = model.pool.model_dump() if model.pool else None
    return {
        "padding": _choice(e, "model.padding", model.padding, "same"),
        "batch_norm": _choice(e, "model.batch_norm", model.batch_norm, False),
        "pool": "off"
        if pool is None and not is_searched(e, "model", "pool")
        else _choice(e, "model.pool", pool, {"size": 2, "stride": 2}),
    }


def _data(e) -> dict:
    """Training order, feature scaling and batch size: each today's code unless the spec turns it."""
    dataset = e.dataset
    return {
        "shuffle": _choice(e, "dataset.shuffle", dataset.shuffle, True),
        "shuffle_validation": dataset.shuffle_validation and e.validates(),
        "standardize": _choice(e, "dataset.standardize", dataset.standardize, True),
        "global_batch": dataset.global_batch_size is not None,
        "subset": dataset.subset is not None,
        "augment": [Code(step) for step in torch_augment(dataset)] if e.framework == "torch" else [],
        "augment_tensors": uses_named(dataset.augment),  # a named transform sees tensors on every path
        "loader_workers": Code(
            f", num_workers={dataset.loader_workers}, persistent_workers=True" if dataset.loader_workers else ""
        ),
    }


def _wrapped(text: str, width: int) -> list[str]:
    """Each line of `text` broken at spaces to fit `width` (a word longer than that stays whole); nothing else in
    it changes, so a description reads in the script as it was written."""
    lines = []
    for line in text.split("\n"):
        while len(line) > width and (cut := line.rfind(" ", 1, width + 1)) > 0:
            lines.append(line[:cut])
            line = line[cut + 1 :]
        lines.append(line)
    return lines


def _docstring(plan: Plan, script_name: str) -> str:
    e = plan.experiment
    summary = e.description or f"{e.model.type} on {e.dataset.type}, {e.framework}, {e.scaling.num_workers} worker(s)"
    return provenance(plan, script_name, f"{e.name}: {summary}", _shape_sentence(plan))


def provenance(plan: Plan, script_name: str, title: str, shape: str) -> str:
    """A compiled script's docstring: its title, what it runs and how to run it, and where it was compiled from."""
    return "\n".join(
        [
            *_wrapped(title, WIDTH - len('"""')),
            "",
            *_wrapped(shape, WIDTH),
            f"Run: python {script_name} [--address auto] [--resume] [--smoke]  (--help: what each option does)",
            *compiled_by(plan, plan.spec_file),
            "Edit the spec and recompile; do not edit this file by hand.",
            "",
        ]
    )


def compiled_by(plan: Plan, spec: str) -> list[str]:
    """A compiled script's provenance in its docstring: the specc and Ray that compiled it, from which spec (read
    back by specc.compiler.stale). A spec path too long for the line goes on a line of its own, which ruff's
    line-length rule lets through at any width when it is one word."""
    line = f"Compiled by specc {plan.specc_version} for Ray {plan.ray_version} from {spec}"
    lines = [line] if len(line) <= WIDTH else [line[: -len(spec) - 1], spec]
    return [*lines, f"(resolved spec sha256 {plan.spec_sha256})."]


def _shape_sentence(plan: Plan) -> str:
    e, workers = plan.experiment, plan.experiment.scaling.num_workers
    if plan.shape == "train":
        on = "in this process (Ray Train's local mode)" if workers == 0 else f"on {workers} worker(s)"
        return f"One Ray Train run {on}."
    from specc.plan.sampling import trial_count

    trials = f"A Ray Tune search of {trial_count(e.tune)} trial(s)"
    if plan.shape == "tune":
        return f"{trials}, each trained in its own process (no Ray Train worker group)."
    return f"{trials}, each a Ray Train run on {workers} workers."


def _imports(plan: Plan) -> list[str]:
    """The script's imports, grouped and sorted as isort (ruff's I rules) wants them."""
    modules = {"contextlib", "functools", "json", "math", "os", "sys", "time", "numpy as np"}  # unused: dropped
    if plan.experiment.training.checkpoint_every != "never":
        modules.add("tempfile")  # a checkpoint is written to a temporary directory, then reported
    modules |= {"pyarrow.fs", "ray", "specc_runtime"}
    torch = plan.experiment.framework == "torch"
    if not torch:
        modules |= tensorflow_modules(plan)
    elif plan.shape != "tune":
        modules |= {"ray.train", "ray.train.torch"}
    if plan.uses_factory_module:
        modules |= {"importlib", "inspect", "sys"}
    if plan.loader == "ray_data":
        modules.add("ray.data")
    if plan.keeps_freed_memory:
        modules.add("ctypes")
    data_modules, data_froms = data_imports(plan)
    modules |= data_modules
    if plan.experiment.dataset.type == "npz":
        modules.add("io")
    dataset = plan.experiment.dataset
    if dataset.type == "keras_dataset" and dataset.name != "mnist":
        modules.add("gzip" if dataset.name == "fashion_mnist" else "pickle")
    if plan.experiment.model.type == "torchvision" or plan.data_source == "torchvision":
        modules.add("torchvision")
    tune_modules, froms = tune_imports(plan)
    modules |= tune_modules
    froms |= data_froms
    if torch:
        modules.add("torch")
        froms.add("from torch import nn")
        if plan.experiment.dataset.augment:
            froms.add("from torchvision.transforms import v2")
    stdlib = sorted(m for m in modules if m in STDLIB)
    third = sorted((m for m in modules if m not in STDLIB), key=lambda m: m.split(" ")[0].lower())
    ordered_froms = sorted(froms, key=lambda line: line.split(" ")[1])
    return [f"import {m}" for m in stdlib] + [""] + [f"import {m}" for m in third] + ordered_froms


def _metric_sums(plan: Plan, loss: str = "loss_fn(outputs, yb) * len(yb)") -> list[Code]:
    """The per-batch sums of the loss, the example count and each metric (validation's, or with `loss` the
    training step's own)."""
    sums = [loss, "torch.tensor(float(len(yb)), device=device)"]
    binary = plan.experiment.binary_targets()
    for metric in plan.experiment.training.metrics:
        sums.append(METRIC_SUMS["binary_accuracy" if metric == "accuracy" and binary else metric])
    return [Code(expression) for expression in sums]


def _metric_names(plan: Plan, prefix: str = "val_") -> list[tuple[str, int]]:
    names = [(f"{prefix}loss", 0)]
    names += [(f"{prefix}{metric}", index + 2) for index, metric in enumerate(plan.experiment.training.metrics)]
    return names


def _set_or_searched(e, field: str) -> bool:
    """Whether training.<field> has a value in the spec or is searched in tune.space (then a trial's may be null)."""
    from specc.check.search_space import space_entries

    path = f"training.{field}"
    return getattr(e.training, field) is not None or any(path in entries for _kind, _where, entries in space_entries(e))


def excludes_beyond(plan: Plan) -> list[str]:
    """What the job's working directory leaves behind besides the runtime's LEFT_BEHIND (which plan.excludes opens
    with): cluster.include's "!" patterns, then cluster.excludes or the data that stays behind."""
    from specc import runtime

    left_behind = [*runtime.constant("ALWAYS_EXCLUDED"), *runtime.constant("SECRETS")]
    if plan.working_dir is None:
        return []
    assert plan.excludes[: len(left_behind)] == left_behind, "plan.excludes opens with the runtime's LEFT_BEHIND"
    return plan.excludes[len(left_behind) :]


def runtime_env_of(experiment) -> dict:
    """cluster.runtime_env for ray.init; tensorflow jobs also get TF_USE_LEGACY_KERAS=1 (unless the spec sets it),
    so that `tf.keras` in a custom factory is tf_keras, the Keras the script uses, in every process of the job."""
    runtime_env = experiment.cluster.runtime_env.model_dump(mode="json", exclude_defaults=True)
    if experiment.framework == "tensorflow":
        runtime_env["env_vars"] = {"TF_USE_LEGACY_KERAS": "1", **runtime_env.get("env_vars", {})}
    return runtime_env


def _backend(plan: Plan) -> str:
    """gloo on CPU; with GPUs the spec's backend, except under --smoke, which runs on CPU."""
    scaling = plan.experiment.scaling
    if not scaling.use_gpu:
        return literal(scaling.backend)
    return f'{literal(scaling.backend)} if scaling["use_gpu"] else "gloo"'


def named_optimizers(e) -> dict[str, Code]:
    """Each optimizer a trial can build that the spec names from its framework (specc.check.named), by type: the
    class's constructor call with the arguments the spec gives (or searches), read from the trial's config, as a
    person would write it: `torch.optim.Adadelta(parameters, lr=cfg["lr"], rho=cfg["rho"])`."""
    from specc import catalog
    from specc.check.named import framework_of
    from specc.spec.training import CURATED_OPTIMIZERS

    if e.objective is not None:
        return {}
    framework, calls = framework_of(e), {}
    entry = e.tune.space.get("training.optimizer") if e.tune else None
    options = [
        o for o in (entry.args if entry is not None and entry.kind in ("choice", "grid") else ()) if isinstance(o, dict)
    ]
    searched = searched_keys(e, "optimizer")
    given = {e.training.optimizer.type: [*(e.training.optimizer.model_extra or {}), *searched]}
    for option in options:
        given.setdefault(option.get("type"), [key for key in option if key != "type"])
    for kind, keys in given.items():
        found = catalog.lookup(framework, "optimizers", kind) if kind not in CURATED_OPTIMIZERS else None
        if found is None:
            continue
        args = ["parameters"] if framework == "torch" else []
        args += call_arguments(found, keys, "cfg")  # the class's own names only
        if framework == "keras" and e.training.grad_clip_norm is not None and "global_clipnorm" not in keys:
            args.append("global_clipnorm=clip_norm")
        module = "torch.optim" if framework == "torch" else "keras.optimizers"
        calls[kind] = Code(f"{module}.{found.class_name}({', '.join(args)})")
    return calls


def keras_base_lr(e) -> Code:
    """The learning rate a Keras lr_schedule starts from: training.optimizer.lr, or the learning_rate argument of an
    optimizer the spec names from Keras (its class's default when the spec leaves it out)."""
    from specc import catalog
    from specc.spec.training import CURATED_OPTIMIZERS

    named = [kind for kind in optimizer_types(e) if kind not in CURATED_OPTIMIZERS] if e.objective is None else []
    if e.framework != "tensorflow" or not named:  # a trial's optimizer is one of specc's: it has an lr
        return Code('training["optimizer"]["lr"]')
    defaults = {}  # each class's own default learning_rate (Lion's is 0.0001, most others' 0.001)
    for kind in named:
        entry = catalog.lookup("keras", "optimizers", kind)
        defaults[kind] = entry.params["learning_rate"].default if entry and "learning_rate" in entry.params else 0.001
    default = (
        literal(defaults[named[0]]) if len(defaults) == 1 else f'{literal(defaults)}[training["optimizer"]["type"]]'
    )
    # evaluated left to right only as far as needed: a trial of specc's own optimizers has an lr (never 0)
    return Code(f'training["optimizer"].get("lr") or training["optimizer"].get("learning_rate") or {default}')


def scaling_config(scaling) -> dict:
    """ray.train.ScalingConfig's arguments from the spec's scaling section (accelerator_type only when set)."""
    config = {
        "num_workers": scaling.num_workers,
        "use_gpu": scaling.use_gpu,
        "resources_per_worker": scaling.resources_per_worker,
        "placement_strategy": scaling.placement_strategy,
    }
    return {**config, "accelerator_type": scaling.accelerator_type} if scaling.accelerator_type else config


def report_poll_s(num_workers: int) -> str:
    """Ray Train's controller poll interval for `num_workers` (bench/report_interval.py measures both sides).

    A report waits for the next poll, so the interval is the least an epoch can take; each poll is one call to
    every worker, so its cost grows with their number. 0.1 s keeps a report under 0.1 s for up to 4 workers; with
    more, the interval grows with them (16 workers: 0.4 s), holding the polls at 40 calls a second, about what
    4 workers at 0.1 s cost.
    """
    return f"{max(0.1, num_workers / 40):g}"


def _checkpoint_args(plan: Plan) -> str:
    """num_to_keep, ranked by run.checkpoint_score, else by tune.metric when searching (SPEC §8), else the latest
    (also when the ranking metric is num_parameters, the same at every epoch, or tune.metric is a list: several
    objectives rank no checkpoint above another, and the front is taken from the trials' last results)."""
    e = plan.experiment
    args = [f"num_to_keep={literal(e.run.checkpoints_to_keep)}"]
    score = e.run.checkpoint_score or (e.tune if e.tune and not e.tune.multi_objective else None)  # no one ranking
    if score and score.metric != "num_parameters":
        args.append(f"checkpoint_score_attribute={literal(score.metric)}")
        args.append(f"checkpoint_score_order={literal(score.mode)}")
    return ", ".join(args)


def script_name(output: str | None, plan: Plan) -> str:
    if output and output != "-":
        return os.path.basename(output)
    return plan.experiment.name.replace("-", "_") + ".py"


def _checkpointed(e) -> list[str]:
    """What a torch checkpoint holds beside the model and the optimizer: the state of the objects the spec uses."""
    schedule = e.training.lr_schedule
    return (["lr_schedule"] if schedule.type != "none" or schedule.warmup is not None else []) + (
        ["scaler"] if e.training.mixed_precision else []
    )


def _clipping(e) -> str | None:
    """How gradients are clipped: "searched" (a trial's training.grad_clip_norm, which may be null), "always" (the
    spec's own value) or None (not at all)."""
    from specc.check.search_space import space_entries

    if any("training.grad_clip_norm" in entries for _kind, _where, entries in space_entries(e)):
        return "searched"
    return "always" if e.training.grad_clip_norm is not None else None
