"""The Pareto front of a multi-objective search (tune.metric a list): the trials no other trial beats.

A compiled script marks the front in results.csv (column `pareto`) and lists it in best.json (`front`), by each
trial's last result: what Ray's OptunaSearch tells Optuna when a trial completes. `specc results` and the report
read the mark, and compute the front from the `last_<metric>` columns where a run holds none; the script carries
the same function (templates/tune/main.py.j2's pareto_front), and tests hold both to the same cases.
"""

from __future__ import annotations

import bisect
import math


def pareto_front(points, modes) -> list[int]:
    """Indices of the non-dominated points: those no other point matches or beats in every objective and beats in
    one (each in its mode's direction). A point with a missing or NaN value (or None for the whole point) is on no
    front; equal points dominate neither, so ties are on the front together.

    Work grows with the rows, not their square, where a run directory from a stranger can make it large: equal points
    are judged once, and two or three objectives are swept in sorted order (n log n). Four or more compare each point
    with the front found so far only (n log n + n x front size)."""
    signs = [1 if mode == "max" else -1 for mode in modes]
    alike: dict[tuple, list[int]] = {}  # each distinct point (scored: greater is better) -> the rows that hold it
    for i, point in enumerate(points):
        if point is not None and all(_number(v) and math.isfinite(v) for v in point):
            alike.setdefault(tuple(sign * value for sign, value in zip(signs, point, strict=True)), []).append(i)
    best_first = sorted(alike, reverse=True)  # whatever dominates a point comes before it
    unbeaten = {2: _staircase, 3: _sweep}.get(len(signs), _unbeaten)(best_first)
    return sorted(i for point in unbeaten for i in alike[point])


def _staircase(best_first: list[tuple]) -> list[tuple]:
    """The non-dominated ones of distinct (x, y) points sorted best first: a point is beaten by one of its own x
    above it, or by one of a greater x whose y is as great."""
    kept: list[tuple] = []
    highest = -math.inf  # the greatest y of the points with a greater x than the current one's
    previous = None
    for x, y in best_first:
        if previous is not None and x == previous[0]:
            continue  # the first point of this x has a greater y
        if previous is not None:
            highest = max(highest, previous[1])
        previous = (x, y)
        if y > highest:
            kept.append((x, y))
    return kept


def _sweep(best_first: list[tuple]) -> list[tuple]:
    """The non-dominated ones of distinct (x, y, z) points sorted best first: every point before one has an x as
    great, so it is beaten when one of them has a y and a z as great. Those are asked of the staircase of the (y, z)
    seen so far that no other beats in both: y ascending, z descending, so the first with a y as great has the
    greatest z of them."""
    kept: list[tuple] = []
    ys: list = []
    zs: list = []
    for point in best_first:
        _, y, z = point
        at = bisect.bisect_left(ys, y)
        if at < len(ys) and zs[at] >= z:
            continue
        kept.append(point)
        start, end = at, at + (at < len(ys) and ys[at] == y)  # the steps this one covers, replaced by it
        while start > 0 and zs[start - 1] <= z:
            start -= 1
        ys[start:end], zs[start:end] = [y], [z]
    return kept


def _unbeaten(best_first: list[tuple]) -> list[tuple]:
    """The non-dominated ones of distinct points sorted best first: only a point of the front found so far can beat
    the next (one that beats it is on the front, or beaten by a point of the front that then beats it too)."""
    front: list[tuple] = []
    for point in best_first:
        if not any(all(x >= y for x, y in zip(other, point, strict=True)) for other in front):
            front.append(point)
    return front


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
