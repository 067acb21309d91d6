"""The configs a seeded search will try, computed without Ray: Tune's BasicVariantGenerator, reproduced.

The compiled scripts give Ray Tune a flat `param_space` keyed by the spec's dotted paths (in `tune.space`
order) and `BasicVariantGenerator(points_to_evaluate, random_state=search.seed)`. Ray 2.60 then, per sample:
- takes the next point of `points_to_evaluate` (each one uses up one of `num_samples`; all of them run even
  when there are more points than samples), else a fresh sample while samples are left;
- walks the grid combinations of the `grid` entries the point does not set, the entries sorted by path and
  the first one varying fastest;
- for each combination, samples every other entry the point does not set, in `tune.space` order, one numpy
  `default_rng(seed)` call each (`uniform`, `integers`, `normal` or `choice` with size=1).
This module makes the same calls in the same order on the same generator, so the values are equal (==, and
of the same type) to the trials' configs. Only numpy is imported, and only when something is sampled.
"""

from __future__ import annotations

import copy
import itertools
import math
from collections.abc import Iterator
from typing import Any

from specc.spec.search import Tune
from specc.spec.space import Distribution, has_ray_directive

BASIC_VARIANT = ("random", "grid")  # the search types the compiled scripts run on BasicVariantGenerator


class NotReproducible(Exception):
    """The configs cannot be known before the run; str() says why, in a sentence."""


def trial_count(tune: Tune) -> int:
    """Trials the search creates: num_samples x the grid's combinations, points_to_evaluate counted as Ray does
    (each point is one sample; a point that sets a grid entry runs once for it instead of once per value)."""
    if tune.search.type not in BASIC_VARIANT:
        return tune.num_samples  # a Searcher is asked num_samples times; the points are its first suggestions
    points = tune.search.points_to_evaluate
    fresh = max(tune.num_samples - len(points), 0)
    return sum(_combinations(tune, point) for point in points) + fresh * _combinations(tune, {})


def grid_sizes(tune: Tune) -> dict[str, int]:
    """Path -> number of values, for each `grid` entry (in tune.space order)."""
    return {path: len(entry.args) for path, entry in tune.space.items() if entry.kind == "grid"}


def _combinations(tune: Tune, point: dict) -> int:
    return math.prod(size for path, size in grid_sizes(tune).items() if path not in point)


def sample_configs(tune: Tune, n: int, options: dict[str, list] | None = None) -> list[dict[str, Any]]:
    """The first `n` trial configs ({dotted path: value}, tune.space order) in the order Ray creates the trials.

    `options`: for a conditional choice or grid, its options as the script holds them (specc.check.conditional.
    compiled_options: Distribution objects inside), sampled only in the trials that choose them.
    Raises NotReproducible when they are not known before the run: no seed (for entries that need sampling),
    a search algorithm other than random/grid, or a value Ray would treat specially."""
    _refuse_unreproducible(tune)
    if options:
        space = {}
        for path, entry in tune.space.items():
            space[path] = entry.model_copy(update={entry.kind: options[path]}) if path in options else entry
        tune = tune.model_copy(update={"space": space})
    rng = _Generator(tune.search.seed)
    return list(itertools.islice(_trial_configs(tune, rng), max(n, 0)))


def _refuse_unreproducible(tune: Tune) -> None:
    search = tune.search
    if search.type not in BASIC_VARIANT:
        raise NotReproducible(f"chosen by {search.type} at run time")
    for index, point in enumerate(search.points_to_evaluate):
        for path, value in point.items():
            if isinstance(value, list | dict):
                raise NotReproducible(
                    f"points_to_evaluate[{index}].{path} is a list or mapping, which Ray's BasicVariantGenerator "
                    "cannot preset (a non-empty one fails when the run starts, an empty one is ignored)"
                )
    for path, entry in tune.space.items():
        if entry.kind in ("choice", "grid") and any(has_ray_directive(value) for value in entry.args):
            raise NotReproducible(
                f"a value of tune.space.{path} is a mapping with the single key 'eval' or 'grid_search', "
                "which Ray evaluates or expands instead of passing it on"
            )


def _trial_configs(tune: Tune, rng: _Generator) -> Iterator[dict[str, Any]]:
    """_TrialIterator.__next__: the points first (each uses up a sample), then the samples left."""
    points = tune.search.points_to_evaluate
    for point in points:
        yield from _variants(tune, point, rng)
    for _ in range(tune.num_samples - len(points)):
        yield from _variants(tune, {}, rng)


def _variants(tune: Tune, point: dict, rng: _Generator) -> Iterator[dict[str, Any]]:
    """_generate_variants_internal for one sample: grid combinations, the other entries sampled per combination."""
    grids = sorted((path, e.args) for path, e in tune.space.items() if e.kind == "grid" and path not in point)
    sampled = [(path, e) for path, e in tune.space.items() if e.kind != "grid" and path not in point]
    reversed_values = [values for _, values in reversed(grids)]  # product() varies its last factor fastest
    for combination in itertools.product(*reversed_values):
        values = dict(zip([path for path, _ in reversed(grids)], combination, strict=True))
        values.update((path, rng.sample(entry)) for path, entry in sampled)
        values.update(point)
        config = {path: copy.deepcopy(values[path]) for path in tune.space}
        yield _resolve_nested(config, rng)


def _resolve_nested(config: dict, rng: _Generator) -> dict:
    """The distributions inside the chosen options of a conditional entry. Ray's _generate_variants_internal
    resolves the config again after each pass: every domain the last pass put in is sampled in the order it meets
    them (the config's paths in order, each option's fields in order), until none is left."""
    while found := list(_distributions(config, ())):
        for at, distribution in found:
            config = _assign(config, at, rng.sample(distribution))
    return config


def _distributions(value: Any, at: tuple) -> Iterator[tuple[tuple, Distribution]]:
    if isinstance(value, Distribution):
        yield at, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _distributions(item, (*at, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _distributions(item, (*at, index))


def _assign(node: Any, at: tuple, value: Any) -> Any:
    if not at:
        return value
    node[at[0]] = _assign(node[at[0]], at[1:], value)
    return node


class _Generator:
    """numpy's default_rng(seed), called exactly as ray.tune.search.sample's samplers call it (size=1)."""

    def __init__(self, seed: int | None):
        self._seed = seed
        self._rng = None

    def sample(self, entry: Distribution) -> Any:
        if self._seed is None:
            raise NotReproducible("search.seed is not set: Ray samples different values on every run")
        if self._rng is None:
            import numpy

            self._rng = numpy.random.default_rng(self._seed)
        return SAMPLERS[entry.kind](self._rng, *entry.args)


def _np():
    import numpy

    return numpy


def _uniform(rng, lo, hi):
    return float(rng.uniform(lo, hi, size=1)[0])


def _loguniform(rng, lo, hi):
    np = _np()
    return float(np.exp(rng.uniform(np.log(lo), np.log(hi), size=1))[0])


def _grid_index(bound: float, q: float, round_fn) -> float:
    """Quantized._grid_index: the bound's index on the multiples of q, rounded inwards when it is off the grid."""
    np = _np()
    if not np.isfinite(bound):
        return bound
    scaled = bound / q
    nearest = round(scaled)
    return nearest if math.isclose(scaled, nearest) else round_fn(scaled)


def _quantized_float(sampler):
    """Quantized.sample over a float domain: sample between the snapped bounds, then round to a multiple of q."""

    def sample(rng, lo, hi, q):
        np = _np()
        value = sampler(rng, _grid_index(lo, q, np.ceil) * q, _grid_index(hi, q, np.floor) * q)
        return float(np.round(np.divide(value, q)) * q)

    return sample


def _randint(rng, lo, hi):
    return int(rng.integers(lo, hi, size=1)[0])


def _qrandint(rng, lo, hi, q):
    """Quantized.sample over an integer domain: a uniform grid index (upper exclusive only when q == 1), times q."""
    np = _np()
    first, last = int(_grid_index(lo, q, np.ceil)), int(_grid_index(hi, q, np.floor))
    index = _randint(rng, first, last + (0 if q == 1 else 1))
    return int(np.multiply(index, q))


def _lograndint(rng, lo, hi):
    np = _np()
    return int(np.floor(np.exp(rng.uniform(np.log(lo), np.log(hi), size=1))).astype(int)[0])


def _randn(rng, mean, sd):
    return float(rng.normal(mean, sd, size=1)[0])


def _qrandn(rng, mean, sd, q):
    np = _np()
    return float(np.round(np.divide(_randn(rng, mean, sd), q)) * q)


def _choice(rng, *categories):
    index = rng.choice(_np().arange(0, len(categories)), size=1)[0]
    return categories[index]


SAMPLERS = {
    "uniform": _uniform,
    "quniform": _quantized_float(_uniform),
    "loguniform": _loguniform,
    "qloguniform": _quantized_float(_loguniform),
    "randint": _randint,
    "qrandint": _qrandint,
    "lograndint": _lograndint,
    "randn": _randn,
    "qrandn": _qrandn,
    "choice": _choice,
}
