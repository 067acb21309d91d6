"""The Pareto front of a multi-objective search (tune.metric a list): the trials no other trial beats.

A compiled script marks the front in results.csv (column `pareto`) and lists it in best.json (`front`), by each
trial's last result: what Ray's OptunaSearch tells Optuna when a trial completes. `specc results` and the report
read the mark, and compute the front from the `last_<metric>` columns where a run holds none; the script carries
the same function (templates/tune/main.py.j2's pareto_front), and tests hold both to the same cases.
"""

from __future__ import annotations

import math


def pareto_front(points, modes) -> list[int]:
    """Indices of the non-dominated points: those no other point matches or beats in every objective and beats in
    one (each in its mode's direction). A point with a missing or NaN value (or None for the whole point) is on no
    front; equal points dominate neither, so ties are on the front together."""
    signs = [1 if mode == "max" else -1 for mode in modes]
    scored = {
        i: [sign * value for sign, value in zip(signs, point, strict=True)]
        for i, point in enumerate(points)
        if point is not None and all(_number(v) and math.isfinite(v) for v in point)
    }

    def dominates(a, b):
        return all(x >= y for x, y in zip(a, b, strict=True)) and any(x > y for x, y in zip(a, b, strict=True))

    return [i for i, a in scored.items() if not any(dominates(b, a) for j, b in scored.items() if j != i)]


def _number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


class FrontView:
    """What the report and `--plot` draw of a multi-objective search: each trial's last values of the first two
    objectives (x and y), which trials are on the front, and the front's points in x order (the staircase)."""

    def __init__(self, results) -> None:
        (self.x_name, self.x_mode), (self.y_name, self.y_mode) = results.objectives[:2]
        self.trials: list[str] = []
        self.x: list[float] = []
        self.y: list[float] = []
        self.on_front: list[bool] = []
        front = set(results.front)
        for index, row in enumerate(results.rows):
            x, y = row.get(f"last_{self.x_name}"), row.get(f"last_{self.y_name}")
            if not (_number(x) and _number(y) and math.isfinite(x) and math.isfinite(y)):
                continue  # never reported (or NaN): nowhere to draw it
            self.trials.append(str(row.get("trial_id")))
            self.x.append(float(x))
            self.y.append(float(y))
            self.on_front.append(index in front)
        order = sorted((x, y, t) for x, y, t, on in zip(self.x, self.y, self.trials, self.on_front, strict=True) if on)
        self.front_x = [x for x, _, _ in order]
        self.front_y = [y for _, y, _ in order]
        self.front_trials = [t for _, _, t in order]
        self.more = len(results.objectives) > 2  # the front is over all objectives; only two are drawn

    def caption(self) -> str:
        more = " (the front is over every objective; the first two are drawn)" if self.more else ""
        return (
            f"Each trial's last {self.x_name} ({self.x_mode}) against its last {self.y_name} ({self.y_mode}); "
            f"the Pareto front ({len(self.front_x)} trials) in red, joined in {self.x_name} order{more}."
        )


def front_view(results) -> FrontView | None:
    """The front to draw, None when the run is not a multi-objective search."""
    if len(results.objectives) < 2 or results.kind != "tune":
        return None
    view = FrontView(results)
    return view if view.trials else None
