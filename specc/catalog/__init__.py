"""The catalog (SPEC §13): every optimizer, schedule, loss, activation and augmentation of torch and Keras, and every
searcher and scheduler of Ray Tune, with its keyword arguments, read from committed JSON files.

The files (`schemas/catalog/<framework>.json`, shipped inside the wheel as `specc/schemas/catalog/`) are generated
from the pinned packages by `python -m specc.catalog.generate`; a test fails when they are stale. Reading them needs
json and the standard library only: this module never imports torch, ray, tensorflow or numpy.

    entry = lookup("torch", "optimizers", "adadelta")   # or "Adadelta", or an alias
    entry.path                     # "torch.optim.Adadelta"
    entry.params["rho"].default    # 0.9
    entry.not_drivable             # None, or why the compiled loop cannot drive it (LBFGS: its closure)
    did_you_mean("torch", "optimizers", "adadelt")   # ["adadelta"]

Enters: a framework, a family and a name as a spec writes it. Leaves: the class's `Entry` (its import path, keyword
arguments with their types and defaults, first line of documentation, why the compiled code cannot drive it if it
cannot), or None and did-you-mean spellings. It reads only the committed files (through specc.read's gate), so the
check stage and any later one may ask it.

A name is a class's snake_case name (`cosine_annealing_warm_restarts`), its class name as written
(`CosineAnnealingWarmRestarts`) or an alias (`cosine_warm_restarts`, SPEC's short names); each names one class of
its family. The generator and its rules live beside this module (README.md).
"""

from __future__ import annotations

import difflib
import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from specc.read.files import read_text

FORMAT = 1  # the files' layout; another is refused
PYTHON_DEFAULT = "$python"  # a default JSON cannot hold: {"$python": "AutoAugmentPolicy.IMAGENET"}
FRAMEWORKS = ("torch", "keras", "ray_tune")
LIMIT = 8 * 1024 * 1024  # bytes one catalog file may take (they are well under 1 MB)

PACKAGE = Path(__file__).resolve().parents[1]
DIRECTORY = PACKAGE / "schemas" / "catalog"  # inside the wheel (pyproject.toml's force-include of schemas/)
if not DIRECTORY.is_dir():  # a source checkout: schemas/ beside the package
    DIRECTORY = PACKAGE.parent / "schemas" / "catalog"


@dataclass(frozen=True)
class PythonDefault:
    """A default JSON cannot hold, as Python spells it (`AutoAugmentPolicy.IMAGENET`, `float('inf')`)."""

    text: str


@dataclass(frozen=True)
class Param:
    """One keyword argument. `type` is a tag or tags joined by `|` (`float`, `bool|none`, `float|list`); `float`
    takes ints too. `supplied`: the compiled code passes it (the model's parameters, the optimizer, Tune's metric)."""

    name: str
    type: str
    required: bool
    default: object = None
    kind: str = "positional_or_keyword"
    type_from: str = "annotation"  # annotation | default | name (a table of the generator's) | none
    choices: tuple | None = None
    supplied: bool = False

    @property
    def types(self) -> frozenset[str]:
        return frozenset(self.type.split("|"))


@dataclass(frozen=True)
class Entry:
    """One class (or, for Keras activations, one function) of a family."""

    name: str
    class_name: str
    module: str
    params: Mapping[str, Param] = field(hash=False)
    doc: str = ""
    not_drivable: str | None = None
    aliases: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    var_keyword: bool = False

    @property
    def path(self) -> str:
        """How code names it: `torch.optim.Adadelta`."""
        return f"{self.module}.{self.class_name}"

    @property
    def names(self) -> tuple[str, ...]:
        """Every spelling that finds it: snake_case name, class name, aliases."""
        return tuple(dict.fromkeys((self.name, self.class_name, *self.aliases)))

    @property
    def settable(self) -> tuple[str, ...]:
        """The arguments a spec may give: not supplied by the compiled code, and passable by keyword."""
        return tuple(
            name for name, param in self.params.items() if not param.supplied and param.kind != "positional_only"
        )


def frameworks() -> tuple[str, ...]:
    return FRAMEWORKS


def versions(framework: str) -> Mapping[str, str]:
    """The versions of the packages the framework's file was generated from."""
    return _load(framework).versions


def families(framework: str) -> tuple[str, ...]:
    return tuple(_load(framework).families)


def family(framework: str, name: str) -> Mapping[str, Entry]:
    """A family's entries by snake_case name: `family("torch", "optimizers")["adadelta"]`."""
    return _family(framework, name).entries


def lookup(framework: str, family_name: str, name: str) -> Entry | None:
    """The entry a name finds (snake_case, class name as written, or alias), None when it finds none."""
    return _family(framework, family_name).index.get(name)


def spellings(framework: str, family_name: str) -> tuple[str, ...]:
    """Every name the family answers to, sorted."""
    return tuple(sorted(_family(framework, family_name).index))


def did_you_mean(framework: str, family_name: str, name: str, limit: int = 3) -> list[str]:
    """Close spellings of an unknown name, one per entry, best first (difflib)."""
    loaded = _family(framework, family_name)
    close = difflib.get_close_matches(name, list(loaded.index), n=limit * 4, cutoff=0.6)
    folded = difflib.get_close_matches(name.lower(), [key.lower() for key in loaded.index], n=limit * 4, cutoff=0.6)
    by_fold = {key.lower(): key for key in sorted(loaded.index)}
    picked: dict[str, str] = {}
    for spelling in [*close, *(by_fold[key] for key in folded)]:
        picked.setdefault(loaded.index[spelling].name, spelling)
    return list(picked.values())[:limit]


# -- loading ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Family:
    entries: Mapping[str, Entry]
    index: Mapping[str, Entry]


@dataclass(frozen=True)
class _Catalog:
    versions: Mapping[str, str]
    families: Mapping[str, _Family]


def _family(framework: str, name: str) -> _Family:
    loaded = _load(framework).families
    if name not in loaded:
        raise ValueError(f"no family {name!r} in the {framework} catalog; it has {', '.join(loaded)}")
    return loaded[name]


@functools.lru_cache(maxsize=len(FRAMEWORKS))
def _load(framework: str) -> _Catalog:
    if framework not in FRAMEWORKS:
        raise ValueError(f"no catalog for {framework!r}; there are {', '.join(FRAMEWORKS)}")
    path = DIRECTORY / f"{framework}.json"
    data = json.loads(read_text(path, LIMIT, root=DIRECTORY))
    if data.get("format") != FORMAT:
        raise ValueError(f"{path}: catalog format {data.get('format')!r}, this specc reads {FORMAT}")
    families = {name: _read_family(entries) for name, entries in data["families"].items()}
    return _Catalog(MappingProxyType(dict(data["versions"])), MappingProxyType(families))


def _read_family(raw: dict) -> _Family:
    entries = {name: _entry(name, item) for name, item in raw.items()}
    index = {spelling: entry for entry in entries.values() for spelling in entry.names}
    return _Family(MappingProxyType(entries), MappingProxyType(index))


def _entry(name: str, item: dict) -> Entry:
    params = {param["name"]: _param(param) for param in item["params"]}
    return Entry(
        name=name,
        class_name=item["class_name"],
        module=item["module"],
        params=MappingProxyType(params),
        doc=item["doc"],
        not_drivable=item["not_drivable"],
        aliases=tuple(item["aliases"]),
        tags=tuple(item["tags"]),
        var_keyword=item["var_keyword"],
    )


def _param(raw: dict) -> Param:
    default = raw.get("default")
    if isinstance(default, dict) and set(default) == {PYTHON_DEFAULT}:
        default = PythonDefault(default[PYTHON_DEFAULT])
    choices = raw.get("choices")
    return Param(
        name=raw["name"],
        type=raw["type"],
        required=raw["required"],
        default=default,
        kind=raw["kind"],
        type_from=raw["type_from"],
        choices=tuple(choices) if choices is not None else None,
        supplied=raw.get("supplied", False),
    )
