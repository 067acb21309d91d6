"""Write the site's reference pages: `python -m specc.docs.reference [--check] [--output DIR]`.

One page per section of the spec (every field of the models in specc/spec/, with what terms.py says of it) and one per
framework's catalog (schemas/catalog/), in docs/reference/. The text is deterministic. `--check` writes nothing and
exits 1 naming each page that is stale, missing or left over; tests/unit/docs/test_reference.py runs the same check.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from specc.docs.pages import COMMAND, reference_pages
from specc.read import terminal
from specc.read.files import list_directory, read_text, write_file

REPOSITORY = Path(__file__).resolve().parents[2]
DIRECTORY = REPOSITORY / "docs" / "reference"
LIMIT = 4 * 1024 * 1024  # bytes a page may take (the largest, the torch catalog, is under 100 KB)
EXIT_STALE = 1


def stale(directory: Path = DIRECTORY) -> list[str]:
    """Why the pages in `directory` differ from what the models and the catalog give now: one line each."""
    fresh = reference_pages()
    found = []
    for name, text in fresh.items():
        path = directory / name
        try:
            committed = read_text(path, LIMIT, root=directory)
        except OSError as error:
            found.append(f"{path} cannot be read ({error.strerror or error}); run `{COMMAND}`")
            continue
        if committed != text:
            found.append(f"{path} is stale: the models, the catalog or specc/docs/terms.py changed; run `{COMMAND}`")
    for name in list_directory(directory, root=directory):
        if name.endswith(".md") and name not in fresh:
            found.append(
                f"{directory / name} is no longer generated: delete it (git rm), and take it out of mkdocs.yml"
            )
    return found


def main(argv: list[str] | None = None) -> int:
    options = _parser().parse_args(argv)
    directory = Path(options.output) if options.output else DIRECTORY
    if options.check:
        problems = stale(directory)
        for problem in problems:
            terminal.err(problem)
        if not problems:
            terminal.say(f"{directory} is up to date")
        return EXIT_STALE if problems else 0
    pages = reference_pages()
    for name, text in pages.items():
        write_file(directory / name, text)
    terminal.say(f"wrote {len(pages)} pages in {directory}")
    for problem in stale(directory):  # pages no longer generated
        terminal.err(problem)
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = terminal.Parser(prog=COMMAND, description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when a page is stale")
    parser.add_argument("--output", metavar="DIR", help=f"where the pages go (default: {DIRECTORY})")
    return parser


if __name__ == "__main__":
    sys.exit(main())
