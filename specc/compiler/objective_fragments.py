"""The template context of an objective spec (SPEC §12, §13): the user's own Ray Tune function or Trainable class is
the trainable, so the script is Ray's own searcher example with the Tuner built from the spec: CONFIG is
objective.params, the search space is CONFIG with each searched param replaced by its Tune domain. A conditional
space searched by optuna or hyperopt is the searcher's own (define-by-run, nested hp.choice), and the param space
holds only the params it does not sample.
"""

from __future__ import annotations

import copy

from specc.check.conditional import compiled_options, is_conditional, option_label
from specc.compiler.fragments import RESTORE, STDLIB, excludes_beyond, provenance, runtime_env_of
from specc.compiler.render import Code, Multiline, literal
from specc.compiler.resolve import Plan
from specc.compiler.tune_fragments import (
    _labelled,
    hyperopt_expression,
    optuna_suggest,
    param_name,
    space_domain,
    tune_context,
    tune_imports,
)
from specc.spec.dump import dump_recorded


def objective_context(plan: Plan, script_name: str) -> dict:
    e = plan.experiment
    runtime_env = runtime_env_of(e)
    tune = tune_context(plan)
    native = tune["native_space"]
    return {
        **tune,
        "plan": plan,
        "e": e,
        "docstring": Multiline(_docstring(plan, script_name)),
        "resolved_spec": Multiline(dump_recorded(e)),
        "imports": _imports(plan),
        "config": plan.config,
        "param_space": unsampled_params(e) if native else param_space(e),
        "define_space": define_params(e) if native and e.tune.search.type == "optuna" else [],
        "hyperopt_space": hyperopt_params(e) if native and e.tune.search.type == "hyperopt" else {},
        "searched_params": list(dict.fromkeys(param_name(path).split(".")[0] for path in e.tune.space)),
        "trainable_class": e.objective.key == "trainable",
        "restore_args": Code(RESTORE[e.run.resume]),
        "runtime_env": runtime_env,
        "excludes": excludes_beyond(plan),
        "data_paths": [],
        "checkpoint_args": Code(_checkpoint_args(e)),
        "per_trial": trial_resources(e.scaling),
    }


def param_space(e) -> dict:
    """objective.params with each tune.space entry's domain in its place (nested params by their dotted path)."""
    space = copy.deepcopy(e.objective.params)
    for path, distribution in e.tune.space.items():
        *parents, last = param_name(path).split(".")
        node = space
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = space_domain(e, path, distribution)
    return space


def unsampled_params(e) -> dict:
    """objective.params less each tune.space path: what Tune merges into the values the searcher's own space gives
    (a searched param left in would be merged into, an option's fields mixed with the default's)."""
    space = copy.deepcopy(e.objective.params)
    for path in e.tune.space:
        *parents, last = param_name(path).split(".")
        node = space
        for part in parents:
            node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, dict):
            node.pop(last, None)
    return space


def define_params(e) -> list[Code]:
    """The body of define_space(trial) over objective.params: each searched param suggested in order, a conditional
    one as an if/elif on the option Optuna picks, whose branch suggests only that option's parameters; the sample is
    nested as the params are."""
    lines = ["sample = {}"]
    for path, distribution in e.tune.space.items():
        target = _nested_target(param_name(path))
        if not is_conditional(distribution):
            lines.append(f"{target} = {optuna_suggest(distribution, path)}")
            continue
        options = compiled_options(e, path, distribution)
        labels = [option_label(options, index) for index in range(len(options))]
        lines.append(f"option = trial.suggest_categorical({literal(path)}, {literal(labels)})")
        for index, (label, option) in enumerate(zip(labels, options, strict=True)):
            lines.append(f"{'if' if index == 0 else 'elif'} option == {literal(label)}:")
            lines.append(f"    {target} = {literal(_labelled(option, f'{path}[{label}]', optuna_suggest))}")
    lines.append("return sample")
    return [Code(line) for line in lines]


def _nested_target(name: str) -> str:
    """`sample["lr"]`, or for a nested param `sample.setdefault("model", {})["width"]`."""
    *parents, last = name.split(".")
    target = "sample"
    for part in parents:
        target += f".setdefault({literal(part)}, {{}})"
    return f"{target}[{literal(last)}]"


def hyperopt_params(e) -> dict:
    """Top-level param -> its HyperOpt expression (nested params as a mapping of them); a conditional entry is an
    hp.choice of its options, each option's distributions labelled path[option].field."""
    space: dict = {}
    for path, distribution in e.tune.space.items():
        *parents, last = param_name(path).split(".")
        node = space
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = hyperopt_expression(e, path, distribution)
    return {name: Code(literal(value)) for name, value in space.items()}


def trial_resources(scaling) -> dict:
    """What one trial's process reserves: scaling.resources_per_worker, else 1 CPU; a GPU with use_gpu."""
    resources = dict(scaling.resources_per_worker or {"CPU": 1})
    if scaling.use_gpu:
        resources.setdefault("GPU", 1)
    return resources


def _checkpoint_args(e) -> str:
    """What Tune keeps of the checkpoints the function reports (if it reports any), ranked as the spec says; for a
    Trainable class, also how often Tune saves one (objective.checkpoint_every, checkpoint_at_end)."""
    args = []
    if e.objective.checkpoint_every:
        args.append(f"checkpoint_frequency={literal(e.objective.checkpoint_every)}")
    if e.objective.checkpoint_at_end is not None:
        args.append(f"checkpoint_at_end={literal(e.objective.checkpoint_at_end)}")
    args.append(f"num_to_keep={literal(e.run.checkpoints_to_keep)}")
    score = e.run.checkpoint_score or (None if e.tune.multi_objective else e.tune)
    if score is not None:  # several objectives: no one metric ranks the checkpoints, the latest are kept
        args += [f"checkpoint_score_attribute={literal(score.metric)}", f"checkpoint_score_order={literal(score.mode)}"]
    return ", ".join(args)


def _docstring(plan: Plan, script_name: str) -> str:
    from specc.plan.sampling import trial_count

    e = plan.experiment
    summary = e.description or f"{e.objective.reference} searched with {e.tune.search.type}"
    shape = f"A Ray Tune search of {trial_count(e.tune)} trial(s) of {e.objective.reference}, each in its own process."
    return provenance(plan, script_name, f"{e.name}: {summary}", shape)


def _imports(plan: Plan) -> list[str]:
    modules = {"importlib", "inspect", "json", "math", "os", "sys", "ray", "specc_runtime"}  # the unused are dropped
    tune_modules, froms = tune_imports(plan)
    modules |= tune_modules - {"copy"}
    stdlib = sorted(m for m in modules if m in STDLIB)
    third = sorted((m for m in modules if m not in STDLIB), key=lambda m: m.split(" ")[0])
    ordered_froms = sorted(froms, key=lambda line: line.split(" ")[1])
    return [f"import {m}" for m in stdlib] + [""] + [f"import {m}" for m in third] + ordered_froms
