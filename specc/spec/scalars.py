"""Plain YAML scalars that read as numbers: YAML 1.2's rules, which editors, schema tools and other readers
follow, rather than YAML 1.1's, which PyYAML implements.

Where the two disagree a spec would mean different things to different readers, so specc takes 1.2's side:
`1e-4` is a float (1.1 reads a string); and the forms that are numbers only in 1.1 — sexagesimal `1:30` (90),
`0x1F`, `0b101`, `017` (octal 15) — and 1.2's `0o17` are refused with a hint instead of guessed. The dumper
quotes any string that would read back as something else, so what specc writes reads back as written.
"""

from __future__ import annotations

import re

FLOAT_12 = re.compile(r"^[-+]?(?:\d[\d_]*(?:\.\d*)?|\.\d+)[eE][-+]?\d+$")  # 1e-4, 2E5: floats in 1.2, text in 1.1
# (pattern, how readers differ on it, what to write instead)
AMBIGUOUS = (
    (
        re.compile(r"^[-+]?\d[\d_]*(?::[0-5]?\d)+(?:\.[\d_]*)?$"),
        "YAML 1.1 reads a base-60 number (1:30 is 90), YAML 1.2 text",
        "the number in seconds (or the field's unit)",
    ),
    (
        re.compile(r"^[-+]?0x[\da-fA-F_]+$"),
        "a hexadecimal number, which not every YAML reader accepts",
        "it in decimal",
    ),
    (re.compile(r"^[-+]?0b[01_]+$"), "YAML 1.1 reads a binary number, YAML 1.2 text", "it in decimal"),
    (re.compile(r"^[-+]?0o[0-7_]+$"), "YAML 1.2 reads an octal number, YAML 1.1 text", "it in decimal"),
    (
        re.compile(r"^[-+]?0[0-7_]+$"),
        "YAML 1.1 reads an octal number (017 is 15), YAML 1.2 a decimal one",
        "it without the 0",
    ),
)


def ambiguous(text: str) -> tuple[str, str] | None:
    """(what YAML 1.1 makes of `text`, what to write) when a plain scalar means different things in 1.1 and 1.2."""
    for pattern, reading, instead in AMBIGUOUS:
        if pattern.match(text):
            return reading, instead
    return None


def needs_quotes(text: str) -> bool:
    """Whether the string `text`, written plain, would not read back as that string in a spec."""
    return bool(FLOAT_12.match(text)) or ambiguous(text) is not None


# -- numbers Ray can run -------------------------------------------------------------------------------------------
# Ray Tune samples with numpy and counts trials, epochs and results in int64; Python's own int has no bound. A
# number past these is refused (E240) before any stage computes with it.
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
MAX_RESOURCE = 100e12  # ray_constants.MAX_RESOURCE_QUANTITY: the most of a resource a Ray node can have
RESOURCE_UNIT = 0.0001  # Ray accounts resources in 1/10,000ths and refuses a positive amount below one


def past_int64(value) -> bool:
    """Whether `value` is an integer (not a bool) that int64 cannot hold."""
    return isinstance(value, int) and not isinstance(value, bool) and not INT64_MIN <= value <= INT64_MAX


def finite(value: float) -> bool:
    """Whether a float result is a number (not inf or nan): float arithmetic overflows to inf, it does not raise."""
    return value - value == 0
