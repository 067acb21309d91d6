"""A class (or function) of an installed package -> its catalog entry: names, keyword arguments, types, defaults.

Standard library only at import time: the family modules import the packages they read, when they are called.

Types are tags, not Python types: `float`, `int`, `bool`, `str`, `none`, `tuple`, `list`, `dict`, `callable`,
`class`, `tensor`, `enum`, `object` (an instance of some other class) and `any`; a union is its tags joined with
`|` in sorted order (`bool|none`, `float|tensor`). `float` takes ints as Python does. Where a parameter has no
annotation, the tag comes from its default (`type_from: default`), from a small table of names the family module
gives (`name`), or is `any` (`none`).

A default JSON cannot hold (an enum member, a function, an object, an infinity) is `{"$python": TEXT}`, TEXT as
Python would spell it, never a repr carrying a memory address.
"""

from __future__ import annotations

import ast
import collections.abc
import enum
import inspect
import math
import numbers
import re
import sys
import textwrap
import types
import typing
from collections.abc import Mapping
from types import MappingProxyType

from specc.catalog import PYTHON_DEFAULT

_EMPTY = inspect.Parameter.empty
_KINDS = {
    inspect.Parameter.POSITIONAL_ONLY: "positional_only",
    inspect.Parameter.POSITIONAL_OR_KEYWORD: "positional_or_keyword",
    inspect.Parameter.KEYWORD_ONLY: "keyword_only",
}
_SCALARS = {bool: "bool", int: "int", float: "float", str: "str", type(None): "none", complex: "object"}
_ORIGINS = {
    tuple: "tuple",
    list: "list",
    set: "list",
    frozenset: "list",
    dict: "dict",
    type: "class",
    collections.abc.Sequence: "list",
    collections.abc.MutableSequence: "list",
    collections.abc.Iterable: "list",
    collections.abc.Collection: "list",
    collections.abc.Set: "list",
    collections.abc.Mapping: "dict",
    collections.abc.MutableMapping: "dict",
    collections.abc.Callable: "callable",
}
_WORDS = {  # the names a string annotation may use, read without evaluating it
    "bool": "bool",
    "int": "int",
    "float": "float",
    "str": "str",
    "None": "none",
    "NoneType": "none",
    "Any": "any",
    "tuple": "tuple",
    "Tuple": "tuple",
    "list": "list",
    "List": "list",
    "Sequence": "list",
    "Iterable": "list",
    "dict": "dict",
    "Dict": "dict",
    "Mapping": "dict",
    "Callable": "callable",
    "Type": "class",
    "type": "class",
    "Tensor": "tensor",
}

# -- names ------------------------------------------------------------------------------------------------------

_TOKENS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+[a-z]*")
SNAKE_EXCEPTIONS = {"RMSprop": "rmsprop"}  # the rule would read R-M-Sprop as rm_sprop


def snake_case(name: str) -> str:
    """The snake_case name of a class, by one rule: camel-case words split as usual (`ReduceLROnPlateau` ->
    reduce_lr_on_plateau, `BCEWithLogitsLoss` -> bce_with_logits_loss), then joined back where torch spells one
    word: digits stay with what they follow (`ReLU6`, `Softmax2d`, `L1Loss` -> l1_loss), a two-letter word joins
    capitals that end the name or are one letter (`ReLU`, `SiLU`, `IoU`), and a lone capital joins its neighbour
    (`RAdam` -> radam, `NAdam`, `AdamW` -> adamw, `PReLU`). A name already in snake_case is kept."""
    if name in SNAKE_EXCEPTIONS:
        return SNAKE_EXCEPTIONS[name]
    tokens = _TOKENS.findall(name)
    tokens = _join_digits(tokens)
    tokens = _join_short_words(tokens)
    tokens = _join_lone_capitals(tokens)
    return "_".join(token.lower() for token in tokens)


def _join_digits(tokens: list[str]) -> list[str]:
    joined: list[str] = []
    for token in tokens:
        if token[0].isdigit() and joined:
            joined[-1] += token
        else:
            joined.append(token)
    return joined


def _join_short_words(tokens: list[str]) -> list[str]:
    joined: list[str] = []
    for index, token in enumerate(tokens):
        before = joined[-1] if joined else ""
        short_word = len(before) == 2 and before[0].isupper() and before[1].islower()
        last = index == len(tokens) - 1
        if short_word and token.isupper() and (last or len(token) == 1):
            joined[-1] += token
        else:
            joined.append(token)
    return joined


def _join_lone_capitals(tokens: list[str]) -> list[str]:
    joined: list[str] = []
    carry = ""
    for token in tokens:
        if len(token) == 1 and token.isupper():
            carry += token
            continue
        joined.append(carry + token)
        carry = ""
    if carry:
        joined = [*joined[:-1], joined[-1] + carry] if joined else [carry]
    return joined


# -- docs -------------------------------------------------------------------------------------------------------

_ROLE = re.compile(r":[\w:]+:`~?([^`<]*?)(?:\s*<[^>]*>)?`")  # :class:`~torch.nn.Linear` -> torch.nn.Linear
_LITERAL = re.compile(r"``([^`]*)``")
_LINK = re.compile(r"`([^`<]+?)\s*<[^>]*>`_+")  # `"A paper" <https://...>`_ -> "A paper"
_SENTENCE_END = re.compile(r"(?<![A-Z])(?<!e\.g)(?<!i\.e)(?<!etc)\.(\s|$)")
DOC_LIMIT = 240


def first_line(obj: object) -> str:
    """The first sentence of the object's own docstring (not one inherited), markup read as text."""
    text = inspect.cleandoc(getattr(obj, "__doc__", None) or "").strip()
    paragraph = " ".join(text.split("\n\n")[0].split()) if text else ""
    paragraph = _ROLE.sub(lambda match: match.group(1).split(".")[-1], _LINK.sub(r"\1", paragraph))
    paragraph = _LITERAL.sub(r"\1", paragraph)
    end = _SENTENCE_END.search(paragraph)
    sentence = paragraph[: end.start() + 1] if end else paragraph
    return sentence if len(sentence) <= DOC_LIMIT else sentence[: DOC_LIMIT - 1].rstrip() + "…"


# -- parameters -------------------------------------------------------------------------------------------------


def constructor(cls: type, as_written: bool = False) -> tuple[list[inspect.Parameter], bool, dict]:
    """The keyword-capable parameters of `cls(...)`, whether it takes **kwargs, and the namespace its annotations
    are written in. An `__init__` that only passes `*args, **kwargs` on is looked through to the next one in the
    MRO (torch's `Sigmoid` has torch.nn.Module's, which takes none); reaching `object` means no parameters.

    `as_written`: annotations are read from the source text, never evaluated, where what they name depends on
    what else is installed (Ray's NevergradSearch annotates `Optimizer`, which is None without nevergrad)."""
    for klass in cls.__mro__:
        init = vars(klass).get("__init__")
        if init is None or klass is object:
            continue
        params = list(inspect.signature(init).parameters.values())[1:]  # self
        if all(param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD) for param in params):
            continue
        written = source_annotations(init) if as_written else None
        if written is not None:
            params = [param.replace(annotation=written.get(param.name, _EMPTY)) for param in params]
            return _parameters(params, {})
        return _parameters(params, sys.modules[klass.__module__].__dict__)
    return [], False, {}


def source_annotations(function: types.FunctionType) -> dict[str, str] | None:
    """The annotations of a function as its source writes them; None when there is no source (a dataclass's
    generated __init__), where the evaluated annotations are plain types anyway."""
    try:
        source = textwrap.dedent(inspect.getsource(function))
    except (OSError, TypeError):
        return None
    node = ast.parse(source).body[0]
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    args = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
    return {arg.arg: ast.unparse(arg.annotation) for arg in args if arg.annotation is not None}


def function_parameters(function: types.FunctionType) -> tuple[list[inspect.Parameter], bool, dict]:
    """`constructor` for a plain function (Keras activations)."""
    return _parameters(list(inspect.signature(function).parameters.values()), function.__globals__)


def _parameters(params: list[inspect.Parameter], namespace: dict) -> tuple[list[inspect.Parameter], bool, dict]:
    var_keyword = any(param.kind is param.VAR_KEYWORD for param in params)
    return [param for param in params if param.kind in _KINDS], var_keyword, namespace


def parameter(param: inspect.Parameter, namespace: dict, known: Known, supplied: bool) -> dict:
    """One parameter as the catalog records it."""
    tags, choices, source = annotation_tags(param.annotation, namespace), None, "annotation"
    if tags is None:
        tags, source = _unannotated(param, known.types)
        choices = known.choices.get(param.name)
    else:
        choices = literal_choices(param.annotation, namespace)
    if param.default is None and "any" not in tags:
        tags = tags | {"none"}  # `x: Dict = None` takes None, whatever the annotation says
    record = {"name": param.name, "kind": _KINDS[param.kind], "type": "|".join(sorted(tags)), "type_from": source}
    record["required"] = param.default is _EMPTY
    if param.default is not _EMPTY:
        record["default"] = json_default(param.default)
    if choices:
        record["choices"] = choices
    if supplied:
        record["supplied"] = True
    return record


def _unannotated(param: inspect.Parameter, type_names: Mapping[str, str]) -> tuple[set[str], str]:
    if param.default is not _EMPTY and param.default is not None:
        return {value_tag(param.default)}, "default"
    if param.name in type_names:
        tags = set(type_names[param.name].split("|"))
        return (tags | {"none"} if param.default is None else tags), "name"
    return {"any"}, "none"


def value_tag(value: object) -> str:
    if isinstance(value, enum.Enum):
        return "enum"
    for kind, tag in _SCALARS.items():
        if type(value) is kind:
            return tag
    if isinstance(value, (tuple, list, dict)):
        return _ORIGINS[type(value)]
    return "callable" if callable(value) and not isinstance(value, type) else "object"


# -- annotations ------------------------------------------------------------------------------------------------


def annotation_tags(annotation: object, namespace: dict) -> set[str] | None:
    """The tags of an annotation, None when there is none. String annotations are evaluated in the module that
    wrote them, or read as text when they name what only a type checker imports."""
    if annotation is _EMPTY:
        return None
    if isinstance(annotation, (str, typing.ForwardRef)):
        text = annotation if isinstance(annotation, str) else annotation.__forward_arg__
        try:
            annotation = eval(text, dict(namespace))  # the package's own annotation text, never a spec's
        except Exception:
            return _text_tags(ast.parse(text, mode="eval").body)
    return _tags(annotation, namespace)


def _tags(annotation: object, namespace: dict) -> set[str]:
    if isinstance(annotation, (str, typing.ForwardRef)):
        return annotation_tags(annotation, namespace) or {"any"}
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        return set().union(*(_tags(arg, namespace) for arg in args))
    if origin is typing.Literal:
        return {value_tag(arg) for arg in args}
    if origin is not None:
        return {_ORIGINS.get(origin, "object")}
    return _class_tags(annotation)


def _class_tags(annotation: object) -> set[str]:
    if annotation is typing.Any or isinstance(annotation, typing.TypeVar):
        return {"any"}
    if annotation is None:
        return {"none"}
    if annotation in (numbers.Number, numbers.Real):
        return {"float", "int"}
    if annotation is numbers.Integral:
        return {"int"}
    if annotation in _SCALARS or annotation in _ORIGINS:
        return {_SCALARS.get(annotation) or _ORIGINS[annotation]}
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return {"enum"}
    return {"tensor"} if getattr(annotation, "__name__", "") == "Tensor" else {"object"}


def _text_tags(node: ast.expr) -> set[str]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _text_tags(node.left) | _text_tags(node.right)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):  # Optional["ExperimentAnalysis"]
        return _text_tags(ast.parse(node.value, mode="eval").body)
    if isinstance(node, ast.Constant):
        return {"none"} if node.value is None else {"any"}
    if isinstance(node, ast.Subscript):
        name = _text_name(node.value)
        inner = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if name in ("Optional", "Union"):
            return set().union(*(_text_tags(element) for element in inner)) | (
                {"none"} if name == "Optional" else set()
            )
        if name == "Literal":
            return {value_tag(ast.literal_eval(element)) for element in inner}
        return {_WORDS.get(name, "object")}
    return {_WORDS.get(_text_name(node), "object")}


def _text_name(node: ast.expr) -> str:
    return node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")


def literal_choices(annotation: object, namespace: dict) -> list | None:
    """The values of a Literal annotation (None allowed beside them), else None."""
    if isinstance(annotation, str):
        try:
            annotation = eval(annotation, dict(namespace))
        except Exception:
            return _text_choices(ast.parse(annotation, mode="eval").body)
    args = typing.get_args(annotation) if typing.get_origin(annotation) in (typing.Union, types.UnionType) else ()
    literals = [arg for arg in args if arg is not type(None)] if args else [annotation]
    if not all(typing.get_origin(arg) is typing.Literal for arg in literals):
        return None
    return [value for arg in literals for value in typing.get_args(arg)]


def _text_choices(node: ast.expr) -> list | None:
    if not (isinstance(node, ast.Subscript) and _text_name(node.value) == "Literal"):
        return None
    inner = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    return [ast.literal_eval(element) for element in inner]


# -- defaults ---------------------------------------------------------------------------------------------------


def json_default(value: object) -> object:
    """The default as JSON, or `{"$python": TEXT}` when JSON cannot hold it."""
    held = _json_value(value)
    return {PYTHON_DEFAULT: python_text(value)} if held is _UNHELD else held


_UNHELD = object()


def _json_value(value: object) -> object:
    if value is None or type(value) in (bool, int, str):
        return value
    if type(value) is float:
        return value if math.isfinite(value) else _UNHELD
    if type(value) in (tuple, list):
        items = [_json_value(item) for item in value]
        return _UNHELD if any(item is _UNHELD for item in items) else items
    if type(value) is dict and all(isinstance(key, str) for key in value):
        items = {key: _json_value(item) for key, item in value.items()}
        return _UNHELD if any(item is _UNHELD for item in items.values()) else items
    return _UNHELD


def python_text(value: object) -> str:
    """How Python spells a default JSON cannot hold, without a memory address or a path."""
    if isinstance(value, enum.Enum):
        return f"{type(value).__qualname__}.{value.name}"
    if isinstance(value, float):
        return f"float({str(value)!r})"
    if isinstance(value, (type, types.FunctionType, types.BuiltinFunctionType)):
        return f"{value.__module__}.{value.__qualname__}"
    if isinstance(value, (tuple, list)):
        inner = ", ".join(python_text(item) if _json_value(item) is _UNHELD else repr(item) for item in value)
        if isinstance(value, list):
            return f"[{inner}]"
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    shown = repr(value)
    if "0x" in shown or "<" in shown or "/" in shown or len(shown) > 80:
        return f"{type(value).__module__}.{type(value).__qualname__}(...)"
    return shown


# -- entries and families ---------------------------------------------------------------------------------------


class Known(typing.NamedTuple):
    """What the package's documentation says of unannotated arguments, by name: their types and their choices."""

    types: Mapping[str, str] = MappingProxyType({})
    choices: Mapping[str, list] = MappingProxyType({})


def record(
    obj: object,
    module: str,
    *,
    supplied: frozenset[str] = frozenset(),
    known: Known = Known(),
    not_drivable: str | None = None,
    tags: tuple[str, ...] = (),
    exported_as: tuple[str, ...] = (),
    as_written: bool = False,
) -> dict:
    """One class (or function) as the catalog records it. `supplied`: the arguments the compiled code passes
    itself (the model's parameters, the optimizer); `exported_as`: other names the package exports it under;
    `as_written`: annotations read from the source text (`constructor`)."""
    is_function = isinstance(obj, types.FunctionType)
    params, var_keyword, namespace = function_parameters(obj) if is_function else constructor(obj, as_written)
    return {
        "class_name": obj.__name__,
        "module": module,
        "doc": first_line(obj),
        "params": [parameter(param, namespace, known, param.name in supplied) for param in params],
        "var_keyword": var_keyword,
        "not_drivable": not_drivable,
        "tags": sorted(tags),
        "aliases": sorted({alias for name in exported_as for alias in (name, snake_case(name))}),
    }


def family(records: list[dict], aliases: dict[str, str] | None = None, suffix: str | None = None) -> dict[str, dict]:
    """Records keyed by snake_case name. `aliases` (alias -> class name) are the short names SPEC fixes; `suffix`
    (`_loss`) is dropped to give each name that ends in it a second one (`cross_entropy_loss` -> cross_entropy).
    Two classes answering to one name is an error naming both."""
    entries = {snake_case(item["class_name"]): item for item in records}
    for name, item in entries.items():
        extra = {name[: -len(suffix)]} if suffix and name.endswith(suffix) else set()
        item["aliases"] = sorted(set(item["aliases"]) | extra | _given(aliases or {}, item["class_name"]))
    missing = set((aliases or {}).values()) - {item["class_name"] for item in records}
    if missing:
        raise ValueError(f"aliases name classes the package no longer has: {sorted(missing)}")
    check_unique(entries)
    return dict(sorted(entries.items()))


def _given(aliases: dict[str, str], class_name: str) -> set[str]:
    return {alias for alias, target in aliases.items() if target == class_name}


def check_unique(entries: dict[str, dict]) -> None:
    """Every spelling (snake name, class name, alias) names one entry of its family."""
    owner: dict[str, str] = {}
    for name, item in entries.items():
        for spelling in {name, item["class_name"], *item["aliases"]}:
            if owner.setdefault(spelling, name) != name:
                raise ValueError(f"{spelling!r} names both {owner[spelling]} and {name}")
