"""The learning-rate schedule and the loss as the script builds them (SPEC §13): a class the spec names from its
framework is constructed as a person would write it — `torch.optim.lr_scheduler.OneCycleLR(optimizer,
max_lr=cfg["max_lr"], epochs=epochs, steps_per_epoch=steps_per_epoch)`, `nn.CrossEntropyLoss(label_smoothing=
training["loss"]["label_smoothing"])` — with only the arguments the spec gives or searches (the catalog's own names:
spec text never becomes code), and what the loop knows (the optimizer, the step counts, Keras' from_logits) supplied.
"""

from __future__ import annotations

from specc import catalog
from specc.check.named import framework_of
from specc.check.rules import HIGHER_IS_BETTER
from specc.check.schedule import loss_entry, per, plateau_metric, schedule_entry
from specc.compiler.render import Code, literal
from specc.spec.loss import NamedLoss
from specc.spec.schedule import PLATEAU_CLASS, NamedSchedule


def call_arguments(entry: catalog.Entry, keys, source: str) -> list[str]:
    """`key=<source>["key"]` for each key the class takes from a spec (its own names only, in the spec's order); a
    tuple argument a YAML list gives is passed as a tuple."""
    args = []
    for key in (key for key in dict.fromkeys(keys) if key in entry.settable):
        types, value = entry.params[key].types, f"{source}[{literal(key)}]"
        args.append(f"{key}=tuple({value})" if "tuple" in types and "list" not in types else f"{key}={value}")
    return args


def searched_keys(e, field: str) -> list[str]:
    """The arguments of training.<field> a search draws (tune.space, pbt mutations, pb2 bounds)."""
    from specc.check.search_space import space_entries

    prefix = f"training.{field}."
    paths = [path for _kind, _where, entries in space_entries(e) for path in entries]
    return [path[len(prefix) :] for path in paths if path.startswith(prefix) and "." not in path[len(prefix) :]]


def _module(entry: catalog.Entry) -> str:
    """Where the script finds the class: `keras` is tf_keras, torch.nn is imported as nn."""
    if entry.module.startswith("tf_keras."):
        return "keras." + entry.module.removeprefix("tf_keras.")
    return "nn" if entry.module == "torch.nn" else entry.module


def mode_of(metric: str) -> str:
    """The direction a plateau is judged in: up for an accuracy, down for a loss or an error (as check.rules
    judges tune.mode)."""
    return "max" if HIGHER_IS_BETTER.search(metric) else "min"


def schedule_context(e) -> dict:
    """What the templates need of training.lr_schedule: its kind, where it steps, its warm-up, the named class's
    constructor call, and the metric a plateau schedule watches."""
    schedule = e.training.lr_schedule
    entry = schedule_entry(e) if isinstance(schedule, NamedSchedule) else None
    plateau = entry is not None and entry.class_name == PLATEAU_CLASS
    stepped = per(e) == "step" and not plateau and (schedule.type != "none" or schedule.warmup is not None)
    one_cycle = entry is not None and entry.class_name == "OneCycleLR"
    context = {
        "kind": "named" if entry is not None else schedule.type,
        "per": "step" if stepped else "epoch",
        "warmup": schedule.warmup is not None,
        "plateau": plateau,
        "metric": plateau_metric(e) if plateau else None,
        "needs_epochs": one_cycle,  # a OneCycleLR spans the epochs after the warm-up
        "needs_steps": stepped and (one_cycle or schedule.warmup is not None),
        "call": None,
    }
    if entry is None:
        return context
    keys = [*schedule.arguments(), *searched_keys(e, "lr_schedule")]
    keras_plateau = plateau and framework_of(e) == "keras"  # a callback train_func builds, from its training config
    args = call_arguments(entry, keys, 'training["lr_schedule"]' if keras_plateau else "cfg")
    if framework_of(e) == "torch":
        if one_cycle:
            supplied = ["epochs=epochs", "steps_per_epoch=steps_per_epoch"] if stepped else ["total_steps=epochs"]
            args += supplied
        if plateau:
            args.insert(0, f"mode={literal(mode_of(context['metric']))}")
        context["call"] = Code(f"{_module(entry)}.{entry.class_name}({', '.join(['optimizer', *args])})")
    elif plateau:  # Keras' callback, watching the metric as Keras' logs name it
        monitor = context["metric"].removeprefix("train_")
        args = [f"monitor={literal(monitor)}", f"mode={literal(mode_of(monitor))}", *args]
        context["call"] = Code(f"{_module(entry)}.{entry.class_name}({', '.join(args)})")
    else:
        first = ["initial_learning_rate=base"] if "initial_learning_rate" in entry.params else []
        context["call"] = Code(f"{_module(entry)}.{entry.class_name}({', '.join([*first, *args])})")
    return context


def named_loss(e, source: str = 'training["loss"]') -> Code | None:
    """The constructor call of a loss the spec names with arguments (None for one of specc's five names)."""
    loss = e.training.loss
    entry = loss_entry(e) if isinstance(loss, NamedLoss) else None
    if entry is None:
        return None
    args = ["from_logits=True"] if "from_logits" in entry.params else []  # the model outputs logits
    args += call_arguments(entry, [*loss.arguments(), *searched_keys(e, "loss")], source)
    return Code(f"{_module(entry)}.{entry.class_name}({', '.join(args)})")
