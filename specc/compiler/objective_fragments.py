"""The template context of an objective spec (SPEC §12): the user's own Ray Tune function is the trainable, so the
script is Ray's own searcher example with the Tuner built from the spec: CONFIG is objective.params, the search
space is CONFIG with each searched param replaced by its Tune domain.
"""

from __future__ import annotations

import copy

from specc.compiler.fragments import RESTORE, STDLIB, excludes_beyond, provenance, runtime_env_of
from specc.compiler.render import Code, Multiline, literal
from specc.compiler.resolve import Plan
from specc.compiler.tune_fragments import param_name, space_domain, tune_context, tune_imports
from specc.spec.dump import dump_recorded


def objective_context(plan: Plan, script_name: str) -> dict:
    e = plan.experiment
    runtime_env = runtime_env_of(e)
    return {
        **tune_context(plan),
        "plan": plan,
        "e": e,
        "docstring": Multiline(_docstring(plan, script_name)),
        "resolved_spec": Multiline(dump_recorded(e)),
        "imports": _imports(plan),
        "config": plan.config,
        "param_space": param_space(e),
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


def trial_resources(scaling) -> dict:
    """What one trial's process reserves: scaling.resources_per_worker, else 1 CPU; a GPU with use_gpu."""
    resources = dict(scaling.resources_per_worker or {"CPU": 1})
    if scaling.use_gpu:
        resources.setdefault("GPU", 1)
    return resources


def _checkpoint_args(e) -> str:
    """What Tune keeps of the checkpoints the function reports (if it reports any), ranked as the spec says."""
    score = e.run.checkpoint_score or (None if e.tune.multi_objective else e.tune)
    if score is None:  # several objectives: no one metric ranks the checkpoints, the latest are kept
        return f"num_to_keep={literal(e.run.checkpoints_to_keep)}"
    return (
        f"num_to_keep={literal(e.run.checkpoints_to_keep)}, checkpoint_score_attribute={literal(score.metric)}, "
        f"checkpoint_score_order={literal(score.mode)}"
    )


def _docstring(plan: Plan, script_name: str) -> str:
    from specc.plan.sampling import trial_count

    e = plan.experiment
    summary = e.description or f"{e.objective.function} searched with {e.tune.search.type}"
    shape = f"A Ray Tune search of {trial_count(e.tune)} trial(s) of {e.objective.function}, each in its own process."
    return provenance(plan, script_name, f"{e.name}: {summary}", shape)


def _imports(plan: Plan) -> list[str]:
    modules = {"importlib", "inspect", "json", "math", "os", "sys", "ray", "specc_runtime"}  # the unused are dropped
    tune_modules, froms = tune_imports(plan)
    modules |= tune_modules - {"copy"}
    stdlib = sorted(m for m in modules if m in STDLIB)
    third = sorted((m for m in modules if m not in STDLIB), key=lambda m: m.split(" ")[0])
    ordered_froms = sorted(froms, key=lambda line: line.split(" ")[1])
    return [f"import {m}" for m in stdlib] + [""] + [f"import {m}" for m in third] + ordered_froms
