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
