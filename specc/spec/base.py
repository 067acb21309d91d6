"""What every spec section shares: extra keys forbidden, strict types, and the constrained field types."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints


class Section(BaseModel):
    """A mapping in the spec. Unknown keys are errors; types are strict (a quoted "5" is not a number),
    except that an integer is accepted where a float belongs."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, defer_build=True, allow_inf_nan=False)


NAME_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,63}$"
FACTORY_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*$"
IDENTIFIER_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*$"
RESOURCE_PATTERN = r"^[A-Za-z_][A-Za-z0-9_:./-]*$"
SPACE_PATH_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*(\.([A-Za-z_][A-Za-z0-9_]*|[0-9]+))*$"
PATH_PATTERN = r"^[^\x00]+$"  # no file system takes a NUL in a path; Python's and Arrow's calls fail on one

# Human wording for each pattern, used in problems instead of the regex alone.
PATTERN_MEANINGS = {
    NAME_PATTERN: "1-64 characters: lowercase letters, digits, '_' and '-', starting with a letter or digit",
    FACTORY_PATTERN: "'package.module:function'",
    IDENTIFIER_PATTERN: "a name of letters, digits and '_' that does not start with a digit",
    RESOURCE_PATTERN: "a resource name such as CPU, GPU or memory",
    SPACE_PATH_PATTERN: "a dotted path into the spec such as training.optimizer.lr (list items by index)",
    PATH_PATTERN: "a path: any characters but NUL",
}

Name = Annotated[str, StringConstraints(pattern=NAME_PATTERN)]
Factory = Annotated[str, StringConstraints(pattern=FACTORY_PATTERN)]
Identifier = Annotated[str, StringConstraints(pattern=IDENTIFIER_PATTERN)]
MetricName = Identifier
SpacePath = Annotated[str, StringConstraints(pattern=SPACE_PATH_PATTERN)]
PositiveInt = Annotated[int, Field(gt=0)]
NonNegativeInt = Annotated[int, Field(ge=0)]
# What every consumer of a seed accepts: numpy (< 2**32), torch, TensorFlow, scikit-learn, the searchers, with room
# for the worker rank Train adds to it.
MAX_SEED = 2**31 - 1
Seed = Annotated[int, Field(ge=0, le=MAX_SEED)]
PositiveFloat = Annotated[float, Field(gt=0)]
NonNegativeFloat = Annotated[float, Field(ge=0)]
Fraction = Annotated[float, Field(gt=0, lt=1)]  # strictly between 0 and 1
Probability = Annotated[float, Field(ge=0, le=1)]
NonEmptyStr = Annotated[str, StringConstraints(min_length=1)]
PathStr = Annotated[str, StringConstraints(min_length=1, pattern=PATH_PATTERN)]  # a file, directory, glob or URI


def describe(text: str, default=..., **kwargs):
    """Field(...) with the description first: every field documents itself in the JSON Schema."""
    return Field(default, description=text, **kwargs)
