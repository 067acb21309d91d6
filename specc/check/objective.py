"""Rules of a spec whose trainable is the user's own Ray Tune function (`objective`, SPEC §12) rather than a model
trained on a data set: exactly one of the two forms, a search around it, the declared metrics, budgets that mean
something for a function that reports as it likes, and pbt/pb2 only for a function that restores checkpoints.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from specc.check.factories import _defined_names, _module_file, _project_dirs, parsed_module, refusal
from specc.check.fields import Locator
from specc.check.search_space import donors_kept
from specc.check.trainable import derives_from_trainable, read_class
from specc.read.document import SourceMap
from specc.read.project import Project
from specc.spec.errors import Problem
from specc.spec.experiment import Experiment
from specc.spec.space import RAY_INTERPRETED

MODEL_FORM = ("model", "dataset", "training")


def form_problems(data, source: SourceMap) -> list[Problem]:
    """Exactly one of `objective` or model + dataset + training (with framework), read from the raw document so that
    it is said whether or not the rest validates."""
    if not isinstance(data, dict):
        return []
    if data.get("objective") is not None:  # a null objective is its own problem (E103), not one beside the model
        at = Locator(source)
        return [
            at(
                "E230",
                f"{section} beside objective: a spec runs either its objective function or a model trained on a "
                "data set",
                (section,),
                "remove model, dataset and training (the objective's params are its settings), or the objective",
                key=True,
            )
            for section in MODEL_FORM
            if section in data
        ]
    from specc.spec.walk import field_description

    top = source.locate(())
    return [
        Problem(
            "E102",
            f"missing required key '{name}'",
            top.file if top else None,
            1,
            1,
            name,
            field_description(Experiment, (name,)),
        )
        for name in ("framework", *MODEL_FORM)
        if name not in data
    ]


def check_objective(e: Experiment, at: Locator, project: Project | None) -> Iterator[Problem]:
    """The problems of an objective spec (its model-form rules do not apply)."""
    yield from _needs_tune(e, at)
    yield from _params_stay_data(e.objective.params, ("objective", "params"), at)
    yield from _scaling(e, at)
    yield from _budget(e, at)
    form = list(_one_trainable(e, at))
    yield from form
    if form:
        return
    yield from _checkpoints(e, at, project)
    if project is not None:
        problem = refusal(e.objective.reference, project, _project_dirs(e, project))
        if problem:
            code, message, hint = problem
            what = "an objective class" if e.objective.key == "trainable" else "an objective function"
            yield at(code, message.replace("a factory", what), ("objective", e.objective.key), hint)
        else:
            yield from _runnable(e, at, project)


def _one_trainable(e: Experiment, at: Locator) -> Iterator[Problem]:
    """Exactly one of objective.function and objective.trainable (E252); the checkpoint settings Tune takes for a
    class only with a class (Ray refuses them beside a function, which reports its own checkpoints)."""
    objective = e.objective
    if objective.function and objective.trainable:
        yield at(
            "E252",
            "objective names both a function and a trainable class: a trial runs one of them",
            ("objective", "trainable"),
            "keep function for a def(config) that calls tune.report(...), trainable for a ray.tune.Trainable class",
            key=True,
        )
    elif not objective.function and not objective.trainable:
        yield at(
            "E102",
            "objective names no trainable: give function (a def(config) that calls tune.report(...)) or trainable "
            "(a ray.tune.Trainable class)",
            ("objective",),
            "function: 'package.module:function', or trainable: 'package.module:Class'",
            key=True,
        )
        return
    if objective.function and not objective.trainable:
        for name in ("checkpoint_every", "checkpoint_at_end"):
            if getattr(objective, name) is not None:
                yield at(
                    "E252",
                    f"objective.{name} is for a ray.tune.Trainable class (objective.trainable): a function reports "
                    "its own checkpoints, and Ray refuses it beside one",
                    ("objective", name),
                    "remove it, and report checkpoints from the function: tune.report(metrics, checkpoint=...)",
                    key=True,
                )


def _needs_tune(e: Experiment, at: Locator) -> Iterator[Problem]:
    if e.tune is None:
        yield at(
            "E205",
            "an objective runs as Ray Tune trials, but the spec has no tune section",
            ("objective",),
            "add a tune section: metric (one of objective.metrics), mode, and a space over objective.params.<name> "
            "(num_samples: 1 and an empty space run the function once)",
            key=True,
        )


def _params_stay_data(value, path: tuple, at: Locator) -> Iterator[Problem]:
    """params become the Tuner's param_space, where Tune runs a one-key {eval: ...} mapping as Python and expands a
    {grid_search: [...]} one into trials: refused, so that no spec text becomes code (searches go in tune.space)."""
    if isinstance(value, dict) and len(value) == 1 and next(iter(value)) in RAY_INTERPRETED:
        yield at(
            "E203",
            f"a mapping whose only key is '{next(iter(value))}' is run or expanded by Ray Tune, not passed on",
            path,
            "rename the key or add a second one; to search a param, use tune.space with objective.params.<name>",
        )
        return
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        yield from _params_stay_data(item, (*path, key), at)


def _scaling(e: Experiment, at: Locator) -> Iterator[Problem]:
    """A trial of an objective is one process: scaling gives its resources, not a worker group."""
    if e.scaling.num_workers > 1:
        yield at(
            "E211",
            f"an objective runs each trial in one process, but num_workers is {e.scaling.num_workers}",
            ("scaling", "num_workers"),
            "num_workers: 1 with resources_per_worker for what one trial reserves (e.g. {CPU: 2})",
        )
    if e.scaling.backend is not None:
        yield at(
            "W320",
            "scaling.backend has no effect: an objective starts no torch.distributed worker group",
            ("scaling", "backend"),
            "remove it",
            key=True,
        )


def _budget(e: Experiment, at: Locator) -> Iterator[Problem]:
    """Schedulers count Tune's training_iteration (one per report); objective.max_steps is the most a trial runs."""
    scheduler, steps = e.scheduler, e.objective.max_steps
    if scheduler is None or scheduler.time_attr != "training_iteration":  # budgets in another unit than reports
        return
    max_t = getattr(scheduler, "max_t", None)
    if scheduler.type in ("asha", "hyperband", "hyperband_for_bohb") and max_t is None:
        yield at(
            "E209",
            f"{scheduler.type} needs a budget: objective.max_steps is null (the function decides when it ends)",
            ("scheduler",),
            "set scheduler.max_t (reports a trial may make at most), or objective.max_steps",
            key=True,
        )
    if max_t and steps and max_t > steps:  # Ray runs it: the trials end at max_steps, before the later rungs
        yield at(
            "W330",
            f"max_t {max_t} exceeds objective.max_steps {steps}: trials end at step {steps}, and the rungs after it "
            "are never reached",
            ("scheduler", "max_t"),
            "leave max_t out: it defaults to objective.max_steps",
            also=("objective", "max_steps"),
        )
    grace = getattr(scheduler, "grace_period", None)
    budget = max_t or steps
    if grace and budget and grace >= budget and scheduler.type != "fifo":
        yield at(
            "E209",
            f"grace_period {grace} leaves no step at which a trial could be stopped (budget {budget})",
            ("scheduler", "grace_period"),
        )
    interval = getattr(scheduler, "perturbation_interval", None)
    if interval and steps and interval >= steps:
        yield at(
            "E209",
            f"perturbation_interval {interval} is not below objective.max_steps {steps}: trials would never be "
            "perturbed",
            ("scheduler", "perturbation_interval"),
        )


def _checkpoints(e: Experiment, at: Locator, project: Project | None) -> Iterator[Problem]:
    """pbt/pb2 continue a trial from another's checkpoint: only a function that reports checkpoints and restores
    from tune.get_checkpoint() can be exploited (else it would restart from scratch with the donor's step count)."""
    scheduler = e.scheduler
    if scheduler is None or scheduler.type not in ("pbt", "pb2"):
        return
    yield from donors_kept(e, at)
    for kind in ("mutations", "bounds"):
        for key in getattr(scheduler, kind, {}):
            if "." in key.removeprefix("objective.params."):
                yield at(
                    "E202",
                    f"{scheduler.type} perturbs top-level values of the config: {key} is inside a mapping of params",
                    ("scheduler", kind, key),
                    "perturb a top-level param (objective.params.<name>)",
                    key=True,
                )
    if e.objective.key == "trainable":
        yield from _class_checkpoints(e, at, project)
        return
    calls = None if project is None else _calls_get_checkpoint(e, project)
    if calls is False:
        yield at(
            "E206",
            f"{scheduler.type} continues trials from other trials' checkpoints, but {e.objective.function} never "
            "calls get_checkpoint()",
            ("objective", "function"),
            "report a checkpoint (tune.report(metrics, checkpoint=...)) and start from tune.get_checkpoint() "
            "when there is one, as Ray's pbt_function example does",
        )


def _definition(e: Experiment, project: Project) -> ast.AST | None:
    """The `def`, `async def` or `class` the objective names, parsed, never imported (None: not readable here)."""
    found = _located_definition(e, project)
    return found[0] if found else None


def _located_definition(e: Experiment, project: Project) -> tuple[ast.AST, ast.Module, Path] | None:
    """The objective's definition, the tree of its module and the module's file (None: not readable here)."""
    module, _, name = e.objective.reference.partition(":")
    source = _module_file(module, _project_dirs(e, project))
    if source is None or source.suffix != ".py" or name not in (_defined_names(source) or ()):
        return None
    tree = parsed_module(source)
    kinds = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
    found = (node for node in ast.walk(tree) if isinstance(node, kinds) and node.name == name) if tree else ()
    definition = next(found, None)
    return (definition, tree, source) if definition is not None else None


def _runnable(e: Experiment, at: Locator, project: Project) -> Iterator[Problem]:
    """Ray Tune calls a function trainable and waits for it to return: an `async def` gives a coroutine that never
    runs, a generator (a `yield` in its body) an iterator nothing reads; neither trains (E250). A class it would
    build and never step (E251). objective.trainable steps a ray.tune.Trainable class: a function there is E252."""
    found = _located_definition(e, project)
    if e.objective.key == "trainable":
        if found is not None:
            yield from _a_trainable(e, at, project, *found)
        return
    function = found[0] if found else None
    if isinstance(function, ast.ClassDef):
        yield _a_class(e, at, project, *found)
        return
    if isinstance(function, ast.AsyncFunctionDef):
        what = "an async def: Ray Tune calls it and gets a coroutine that never runs"
    elif isinstance(function, ast.FunctionDef) and any(isinstance(node, ast.Yield | ast.YieldFrom) for node in
                                                       _own_nodes(function)):  # fmt: skip
        what = "a generator (it yields): Ray Tune calls it and gets an iterator that nothing reads"
    else:
        return
    hint = "a plain def(config) that calls tune.report(...) for each step (asyncio.run(...) inside it, if need be)"
    yield at("E250", f"{e.objective.function} is {what}", ("objective", "function"), hint)


def _a_class(e: Experiment, at: Locator, project: Project, cls: ast.ClassDef, tree: ast.Module, source: Path):
    """E251: objective.function names a class. Ray Tune's function trainable calls it once with the config: a
    ray.tune.Trainable subclass is built and never stepped (the run ended in Ray's 'did not include the specified
    metric(s)'), any other class built and never heard from. SPEC §13: a Trainable goes under objective.trainable."""
    where = ("objective", "function")
    if derives_from_trainable(cls, tree, source, _project_dirs(e, project), project.root):
        return at(
            "E251",
            f"{e.objective.function} is a ray.tune.Trainable class: objective.function names a function, which Ray "
            "Tune calls once with the config, so the class would be built and never stepped",
            where,
            f"name the class under objective.trainable: trainable: {e.objective.function}",
        )
    return at(
        "E251",
        f"{e.objective.function} is a class, not a function: Ray Tune would call it once with the config, build an "
        "instance and get no reports",
        where,
        "name a def(config) that calls tune.report(...) for each step, or a ray.tune.Trainable class under "
        "objective.trainable",
    )


def _a_trainable(e: Experiment, at: Locator, project: Project, node: ast.AST, tree: ast.Module, source: Path):
    """E252: objective.trainable names a function, or a class that does not derive from ray.tune.Trainable (as far
    as the project's source shows: a base from elsewhere is taken on trust)."""
    where, name = ("objective", "trainable"), e.objective.trainable
    if not isinstance(node, ast.ClassDef):
        yield at(
            "E252",
            f"{name} is a function: objective.trainable names a ray.tune.Trainable class, which Tune steps",
            where,
            f"name the function under objective.function: function: {name}",
            key=True,
        )
        return
    read = read_class(node, tree, source, _project_dirs(e, project), project.root)
    if not read.trainable and read.whole:
        yield at(
            "E252",
            f"{name} is not a ray.tune.Trainable subclass: Tune builds a trainable class with the config and steps it",
            where,
            "derive it from ray.tune.Trainable (setup, step, save_checkpoint, load_checkpoint), or name a "
            "def(config) that calls tune.report(...) under objective.function",
        )
        return
    if read.whole and "step" not in read.methods:
        yield at(
            "E252",
            f"{name} defines no step(): Tune calls it for each report, and Trainable's own raises NotImplementedError",
            where,
            "define step(self), returning the metrics of one step as a dict",
        )


def _class_checkpoints(e: Experiment, at: Locator, project: Project | None) -> Iterator[Problem]:
    """pbt/pb2 save a top trial's state (save_checkpoint) and load it into a bottom one (load_checkpoint): a class
    that defines neither would be exploited with Trainable's own, which raise NotImplementedError."""
    found = None if project is None else _located_definition(e, project)
    if found is None or not isinstance(found[0], ast.ClassDef):
        return
    read = read_class(found[0], found[1], found[2], _project_dirs(e, project), project.root)
    missing = [name for name in ("save_checkpoint", "load_checkpoint") if name not in read.methods]
    if read.whole and missing:
        yield at(
            "E206",
            f"{e.scheduler.type} continues trials from other trials' checkpoints, but {e.objective.trainable} "
            f"defines no {' and no '.join(missing)}",
            ("objective", "trainable"),
            "define save_checkpoint(self, checkpoint_dir) and load_checkpoint(self, checkpoint_dir), as Ray's "
            "pbt_example does",
        )


def _own_nodes(function: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a function's own body, not of the functions, lambdas and classes defined in it."""
    pending = list(ast.iter_child_nodes(function))
    while pending:
        node = pending.pop()
        yield node
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            pending.extend(ast.iter_child_nodes(node))


def _calls_get_checkpoint(e: Experiment, project: Project) -> bool | None:
    """Whether the objective function's own body calls get_checkpoint (None: its source cannot be read here)."""
    function = _definition(e, project)
    if function is None or isinstance(function, ast.ClassDef):  # a class is E251, whatever it calls
        return None
    for node in ast.walk(function):
        if isinstance(node, ast.Call):
            called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            if called == "get_checkpoint":
                return True
    return False
