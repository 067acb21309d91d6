"""Search-space distributions: `{uniform: [lo, hi]}` and ten more, with Ray Tune's semantics.

Each entry is a one-key mapping; the key picks the distribution. Bounds are checked here (lo < hi, log
bounds > 0, q > 0, non-empty choices); whether the values fit the field they are sampled into is checked
in `specc.check.search_space` through that field's own type, using `probes()`: the extreme and representative values
the distribution can produce.
"""

from __future__ import annotations

import math
import sys
from typing import Annotated, Any, ClassVar, Union

from pydantic import Discriminator, Field, Tag, model_validator
from pydantic_core import PydanticCustomError

from specc.spec.base import Section, describe
from specc.spec.scalars import finite

FloatPair = Annotated[list[float], Field(min_length=2, max_length=2)]
FloatTriple = Annotated[list[float], Field(min_length=3, max_length=3)]
IntPair = Annotated[list[int], Field(min_length=2, max_length=2)]
IntTriple = Annotated[list[int], Field(min_length=3, max_length=3)]
SPREAD = 6.0  # randn probes mean +- 6 sd: "every value it can produce", within reason


def _bad(message: str, **context) -> PydanticCustomError:
    return PydanticCustomError("bad_distribution", message, context)


class Distribution(Section):
    kind: ClassVar[str]
    log: ClassVar[bool] = False
    quantized: ClassVar[bool] = False
    ranged: ClassVar[bool] = True  # [lo, hi, (q)] rather than [mean, sd, (q)] or a list of values

    @property
    def args(self) -> list:
        return getattr(self, self.kind)

    @model_validator(mode="after")
    def _check_bounds(self):
        args = self.args
        if self.ranged:
            lo, hi = args[0], args[1]
            if not lo < hi:
                raise _bad("lower bound {lo} must be below upper bound {hi}", lo=lo, hi=hi)
            if self.log and lo <= 0:
                raise _bad("a log scale needs bounds > 0, got lower bound {lo}", lo=lo)
        if self.quantized and args[2] <= 0:
            raise _bad("q must be > 0, got {q}", q=args[2])
        return self

    def probes(self) -> list:
        """Values this distribution can produce that are most likely to break a field's constraints."""
        lo, hi = self.args[0], self.args[1]
        inside = lo + (hi - lo) * 0.371 if finite(hi - lo) else lo / 2 + hi / 2
        return [lo, inside, math.nextafter(hi, lo)]

    def past_ray(self) -> tuple[int, str, str] | None:
        """(which argument, what, what to write) when sampling this distribution as Ray does (with numpy, in floats)
        would overflow: the check stage reports it (E240) before anything computes with it. Integers past int64 are
        the spec-wide check's; these are the float results of the arguments."""
        lo, hi = self.args[0], self.args[1]
        if self.ranged and not self.log and not finite(hi - lo):
            return (
                1,
                f"the range from {lo} to {hi} is wider than a float holds: numpy cannot sample it",
                "closer bounds",
            )
        return None


def _on_grid(bound: float, q: float) -> bool:
    """Whether `bound` is a multiple of q, as Ray's Quantized._grid_index decides it; True when bound / q is past a
    float (the check stage refuses that q, E240)."""
    ratio = bound / q
    return not finite(ratio) or math.isclose(ratio, round(ratio))


def _too_fine(values: list[float], q: float) -> tuple[int, str, str] | None:
    """A q so small that a value / q, which Ray computes to round to a multiple of q, is past a float."""
    for value in values:
        if not finite(value / q):
            least = f"{abs(value) / sys.float_info.max:.3g}"
            message = f"q {q} is too fine for {value}: {value} / q, which Ray computes to round it, is past a float"
            return 2, message, f"a q of at least {least}"
    return None


class QuantizedFloat(Distribution):
    """Ray requires both bounds to be multiples of q; quantizing makes the upper bound reachable."""

    quantized: ClassVar[bool] = True

    @model_validator(mode="after")
    def _bounds_on_grid(self):
        lo, hi, q = self.args
        for name, bound in (("lower", lo), ("upper", hi)):
            if q > 0 and not _on_grid(bound, q):
                raise _bad("the {name} bound {bound} is not a multiple of q {q}", name=name, bound=bound, q=q)
        return self

    def probes(self) -> list:
        lo, hi, q = self.args
        inside = super().probes()[1]
        return [lo, round(inside / q) * q if finite(inside / q) else inside, hi]

    def past_ray(self) -> tuple[int, str, str] | None:
        return super().past_ray() or _too_fine(self.args[:2], self.args[2])


class Uniform(Distribution):
    kind: ClassVar[str] = "uniform"
    uniform: FloatPair = describe("[lo, hi): a float, uniformly (tune.uniform).")


class QUniform(QuantizedFloat):
    kind: ClassVar[str] = "quniform"
    quniform: FloatTriple = describe("[lo, hi, q]: a float rounded to a multiple of q (tune.quniform).")


class LogUniform(Distribution):
    kind: ClassVar[str] = "loguniform"
    log: ClassVar[bool] = True
    loguniform: FloatPair = describe("[lo, hi): a float, uniformly on a log scale (tune.loguniform).")


class QLogUniform(QuantizedFloat):
    kind: ClassVar[str] = "qloguniform"
    log: ClassVar[bool] = True
    qloguniform: FloatTriple = describe("[lo, hi, q]: log scale, rounded to a multiple of q (tune.qloguniform).")


class RandInt(Distribution):
    kind: ClassVar[str] = "randint"
    randint: IntPair = describe("[lo, hi): an integer, upper bound exclusive (tune.randint).")

    def probes(self) -> list:
        return [self.args[0], self.args[1] - 1]


class QRandInt(Distribution):
    """Ray samples the multiples of q from ceil(lo/q)*q to floor(hi/q)*q (upper exclusive when q == 1)."""

    kind: ClassVar[str] = "qrandint"
    quantized: ClassVar[bool] = True
    qrandint: IntTriple = describe("[lo, hi, q]: an integer multiple of q, upper bound inclusive (tune.qrandint).")

    @model_validator(mode="after")
    def _has_values(self):
        lo, hi, q = self.args
        if q > 0 and lo < hi and not self.probes():
            raise _bad("no multiple of q {q} lies between {lo} and {hi}", q=q, lo=lo, hi=hi)
        return self

    def probes(self) -> list:
        lo, hi, q = self.args  # exact integer arithmetic: no float holds a bound of 321 digits
        first, last = -(-lo // q) * q, hi // q * q
        if q == 1:
            last = hi - 1
        return [first, last] if first <= last else []


class LogRandInt(Distribution):
    kind: ClassVar[str] = "lograndint"
    log: ClassVar[bool] = True
    lograndint: IntPair = describe("[lo, hi): an integer on a log scale, upper bound exclusive (tune.lograndint).")

    def probes(self) -> list:
        return [self.args[0], self.args[1] - 1]


class Normal(Distribution):
    ranged: ClassVar[bool] = False

    @model_validator(mode="after")
    def _positive_sd(self):
        if self.args[1] <= 0:
            raise _bad("the standard deviation must be > 0, got {sd}", sd=self.args[1])
        return self

    def probes(self) -> list:
        mean, sd = self.args[0], self.args[1]
        values = [mean - SPREAD * sd, mean + 0.371 * sd, mean + SPREAD * sd]
        if self.quantized:
            q = self.args[2]
            values = [round(value / q) * q if finite(value / q) else value for value in values]
        return values

    def past_ray(self) -> tuple[int, str, str] | None:
        mean, sd = self.args[0], self.args[1]
        widest = abs(mean) + SPREAD * sd
        if not finite(widest):
            message = f"mean {mean} and sd {sd} reach past a float within {SPREAD:g} sd: numpy samples inf"
            return 1, message, "a smaller mean or sd"
        return _too_fine([widest], self.args[2]) if self.quantized else None


class RandN(Normal):
    kind: ClassVar[str] = "randn"
    randn: FloatPair = describe("[mean, sd]: a float from a normal distribution (tune.randn).")


class QRandN(Normal):
    kind: ClassVar[str] = "qrandn"
    quantized: ClassVar[bool] = True
    qrandn: FloatTriple = describe("[mean, sd, q]: a normal float rounded to a multiple of q (tune.qrandn).")


class Values(Distribution):
    ranged: ClassVar[bool] = False

    def probes(self) -> list:
        return list(self.args)

    def past_ray(self) -> None:
        return None  # its values are checked where they stand (ints past int64 spec-wide)


class Choice(Values):
    kind: ClassVar[str] = "choice"
    choice: list[Any] = describe("One of these values, uniformly (tune.choice).", min_length=1)


class Grid(Values):
    kind: ClassVar[str] = "grid"
    grid: list[Any] = describe("Every one of these values, one trial each (tune.grid_search).", min_length=1)


DISTRIBUTIONS: tuple[type[Distribution], ...] = (
    Uniform,
    QUniform,
    LogUniform,
    QLogUniform,
    RandInt,
    QRandInt,
    LogRandInt,
    RandN,
    QRandN,
    Choice,
    Grid,
)
DISTRIBUTION_NAMES = tuple(cls.kind for cls in DISTRIBUTIONS)


def _distribution_key(value: Any) -> str | None:
    """The tag of a search-space entry: its only key (None when it has none or several)."""
    if isinstance(value, dict):
        return next(iter(value)) if len(value) == 1 else None
    return getattr(value, "kind", None)


_distribution_key.__name__ = "distribution"

AnyDistribution = Annotated[
    Union[tuple(Annotated[cls, Tag(cls.kind)] for cls in DISTRIBUTIONS)],  # type: ignore[misc]
    Discriminator(_distribution_key),
]


RAY_INTERPRETED = ("eval", "grid_search")  # a one-key mapping Ray evaluates or expands wherever it finds one


def has_ray_directive(value: Any) -> bool:
    """Whether a value holds a one-key {eval: ...} or {grid_search: ...} mapping, which Ray Tune runs or expands."""
    if isinstance(value, dict):
        special = len(value) == 1 and next(iter(value)) in RAY_INTERPRETED
        return special or any(has_ray_directive(item) for item in value.values())
    if isinstance(value, list):
        return any(has_ray_directive(item) for item in value)
    return False
