"""Write the catalog from the installed packages: `python -m specc.catalog.generate [--check] [--summary]`.

One file per framework in schemas/catalog/ (torch.json: torch and torchvision; keras.json: tf_keras; ray_tune.json:
Ray Tune), each recording the versions it was read from. The text is deterministic: keys sorted, one layout, no
memory address or path in it. `--check` writes nothing and exits 1 naming each stale file and the package versions
that differ; a test runs the same comparison (tests/unit/catalog/test_stale.py).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import json
import os
import sys
import time
from pathlib import Path

from specc.catalog import DIRECTORY, FORMAT, FRAMEWORKS, LIMIT
from specc.read import terminal
from specc.read.files import read_text, write_file

MODULES = {  # in FRAMEWORKS' order: torch before TensorFlow (tests/conftest.py says why)
    "torch": "specc.catalog.torch_catalog",
    "keras": "specc.catalog.keras_catalog",
    "ray_tune": "specc.catalog.ray_catalog",
}
COMMAND = "python -m specc.catalog.generate"
EXIT_STALE = 1
EXIT_MISSING = 2  # a framework's packages are not installed: nothing to compare with


def catalog(framework: str) -> dict:
    """The framework's catalog as data, read from the installed packages (imports them)."""
    module = importlib.import_module(MODULES[framework])
    families = module.families()
    _check_tables(framework, families, module.NOT_DRIVABLE)
    return {
        "format": FORMAT,
        "framework": framework,
        "generated_by": COMMAND,
        "versions": installed_versions(module.DISTRIBUTIONS),
        "families": families,
    }


def text(framework: str) -> str:
    """The file's text: what `catalog` gives, laid out one way."""
    data = catalog(framework)
    written = json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"
    _check_portable(framework, written)
    return written


def installed_versions(distributions: tuple[str, ...]) -> dict[str, str]:
    """Each distribution's version without its local part (`2.14.1+cu130` -> 2.14.1): a CPU and a CUDA build of
    one torch have the same classes."""
    return {name: importlib.metadata.version(name).split("+")[0] for name in distributions}


def missing(framework: str) -> list[str]:
    """The framework's packages that are not installed (the family modules import them only when called)."""
    absent = []
    for name in importlib.import_module(MODULES[framework]).DISTRIBUTIONS:
        try:
            importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            absent.append(name)
    return absent


def stale(framework: str, directory: Path = DIRECTORY) -> str | None:
    """Why the committed file differs from what the installed packages give, or None when it does not."""
    path = directory / f"{framework}.json"
    fresh = text(framework)
    try:
        committed = read_text(path, LIMIT, root=directory)
    except OSError as error:
        return f"{path} cannot be read ({error.strerror or error}); run `{COMMAND}`"
    if committed == fresh:
        return None
    return f"{path} is stale for the installed packages{_version_note(committed, fresh)}; run `{COMMAND}`"


def _version_note(committed: str, fresh: str) -> str:
    try:
        before = json.loads(committed).get("versions", {})
    except (ValueError, AttributeError):
        return " (it is not a catalog file)"
    now = json.loads(fresh)["versions"]
    changed = [f"{name} {before.get(name, 'absent')} -> {now[name]}" for name in now if before.get(name) != now[name]]
    return f" ({', '.join(changed)})" if changed else " (same package versions: the generator changed)"


def _check_tables(framework: str, families: dict, tables: dict[str, dict[str, str]]) -> None:
    """A class a table decides about must still exist: an upgrade that drops it is a review, not silence."""
    for family_name, reasons in tables.items():
        present = {item["class_name"] for item in families[family_name].values()}
        gone = sorted(set(reasons) - present)
        if gone:
            raise ValueError(f"{framework} {family_name}: NOT_DRIVABLE names classes the package no longer has: {gone}")


def _check_portable(framework: str, written: str) -> None:
    """Nothing that differs between machines: a memory address, where this Python or its packages live, a home."""
    places = {sys.prefix, sys.base_prefix, os.path.expanduser("~")} - {"", "/", "~"}
    found = [place for place in places if place in written]
    if " at 0x" in written or found:
        raise ValueError(f"the {framework} catalog holds text of this machine: {found or 'a memory address'}")


# -- the command ------------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    options = parser.parse_args(argv)
    unknown = sorted(set(options.frameworks) - set(FRAMEWORKS))
    if unknown:
        parser.error(f"no framework {', '.join(unknown)}; choose from {', '.join(FRAMEWORKS)}")
    chosen = [framework for framework in FRAMEWORKS if framework in options.frameworks] or list(FRAMEWORKS)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")  # TensorFlow's start-up lines off the command's output
    directory = Path(options.output) if options.output else DIRECTORY
    code = 0
    for framework in chosen:
        absent = missing(framework)
        if absent:
            terminal.err(f"{framework}.json: cannot read the {framework} catalog, not installed: {', '.join(absent)}")
            code = max(code, EXIT_MISSING)
            continue
        started = time.perf_counter()
        code = max(code, _check(framework, directory) if options.check else _write(framework, directory))
        if options.summary:
            _summary(framework, directory, time.perf_counter() - started)
    return code


def _check(framework: str, directory: Path) -> int:
    problem = stale(framework, directory)
    if problem:
        terminal.err(problem)
        return EXIT_STALE
    terminal.say(f"{directory / (framework + '.json')} is up to date")
    return 0


def _write(framework: str, directory: Path) -> int:
    path = directory / f"{framework}.json"
    write_file(path, text(framework))
    terminal.say(f"wrote {path}")
    return 0


def _summary(framework: str, directory: Path, seconds: float) -> None:
    data = json.loads(read_text(directory / f"{framework}.json", LIMIT, root=directory))
    versions = ", ".join(f"{name} {version}" for name, version in data["versions"].items())
    terminal.say(f"{framework} ({versions}; read in {seconds:.1f} s)")
    for name, entries in data["families"].items():
        blocked = sum(1 for item in entries.values() if item["not_drivable"])
        terminal.say(f"  {name:<22} {len(entries):>3} entries, {blocked:>2} not drivable")


def _parser() -> argparse.ArgumentParser:
    parser = terminal.Parser(prog=COMMAND, description=__doc__.splitlines()[0])
    parser.add_argument("frameworks", nargs="*", metavar="FRAMEWORK", help=f"{', '.join(FRAMEWORKS)} (default: all)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when a file is stale")
    parser.add_argument("--summary", action="store_true", help="print each family's size")
    parser.add_argument("--output", metavar="DIR", help=f"where the files go (default: {DIRECTORY})")
    return parser


if __name__ == "__main__":
    sys.exit(main())
