"""Optional packages a spec needs beyond specc's core, and the pip extras that install them: a searcher
(`tune.search.type` optuna, hyperopt, bayesopt, bohb, nevergrad, zoopt, ax) or a tracker (`run.callbacks` tensorboard,
mlflow, wandb).

One missing where the spec is checked is a warning (W302: the run may happen on another machine); one missing
where the run starts is an error (E401) before Ray starts. Either is located at the value that needs it.
Nothing is imported to find out (importlib.util.find_spec).
"""

from __future__ import annotations

import importlib.util

# search type -> (module the script imports, extra that installs it)
SEARCHERS = {
    "optuna": ("optuna", "optuna"),
    "hyperopt": ("hyperopt", "hyperopt"),
    "bayesopt": ("bayes_opt", "bayesopt"),
    "bohb": ("hpbandster", "bohb"),
    "nevergrad": ("nevergrad", "nevergrad"),
    "zoopt": ("zoopt", "zoopt"),
    "ax": ("ax", "ax"),
}
# run.callbacks entry -> (module, extra); csv and json need nothing beyond Ray, tensorboardX comes with ray[tune]
TRACKERS = {"tensorboard": ("tensorboardX", "run"), "mlflow": ("mlflow", "mlflow"), "wandb": ("wandb", "wandb")}


def needed(experiment) -> list[tuple[tuple, str, str, str]]:
    """(spec path, what needs it, module, extra) for each optional package the spec uses."""
    found = []
    search = experiment.tune.search.type if experiment.tune else None
    if search in SEARCHERS:
        found.append((("tune", "search", "type"), f"search type {search}", *SEARCHERS[search]))
    for index, callback in enumerate(experiment.run.callbacks):
        if callback in TRACKERS:
            found.append((("run", "callbacks", index), f"callback {callback}", *TRACKERS[callback]))
    return found


def not_installed(experiment, at, code: str) -> list:
    """A problem (`code`, located through the Locator `at`) for each package the spec needs that is missing here."""
    problems = []
    for path, what, module, extra in needed(experiment):
        if importlib.util.find_spec(module) is None:
            message = f"{what} needs the {module} package, which is not installed here"
            problems.append(at(code, message, path, f"pip install 'specc[{extra}]'"))
    return problems
