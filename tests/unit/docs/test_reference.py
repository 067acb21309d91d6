"""docs/reference/ is what `python -m specc.docs.reference` writes from the models and the catalog, as
schemas/experiment.schema.json is what `specc schema` writes: a test fails while they differ. Every field says what
it is in Ray, torch or Keras terms, with a valid example; every schema field and every problem code is on some page."""

from __future__ import annotations

import functools
import re

import jsonschema
import pytest

from specc import catalog
from specc.docs import reference, terms
from specc.docs.catalog_pages import page_name
from specc.docs.fields import blocks, definitions
from specc.docs.pages import COMMAND, reference_pages
from specc.spec.errors import CODES
from specc.spec.schema import schema
from tests.conftest import ROOT

DOCS = ROOT / "docs"


@functools.cache
def pages() -> dict[str, str]:
    return reference_pages()


def site_text() -> str:
    """Every page of the site, hand-written and generated."""
    return "\n".join(path.read_text(encoding="utf-8") for path in sorted(DOCS.rglob("*.md")))


def test_the_committed_reference_is_not_stale():
    assert reference.stale() == [], f"run `{COMMAND}` and commit docs/reference/"


def test_check_names_each_stale_missing_or_left_over_page(tmp_path, capsys):
    assert reference.main(["--output", str(tmp_path)]) == 0
    assert reference.main(["--check", "--output", str(tmp_path)]) == 0
    (tmp_path / "model.md").write_text("edited by hand\n", encoding="utf-8")
    (tmp_path / "stop.md").unlink()
    (tmp_path / "old.md").write_text("# a section that went away\n", encoding="utf-8")
    capsys.readouterr()
    assert reference.main(["--check", "--output", str(tmp_path)]) == reference.EXIT_STALE
    told = capsys.readouterr().err
    assert f"{tmp_path / 'model.md'} is stale" in told and COMMAND in told
    assert f"{tmp_path / 'stop.md'} cannot be read" in told
    assert f"{tmp_path / 'old.md'} is no longer generated" in told


def test_the_pages_are_the_same_twice():
    assert reference_pages() == pages()


def test_every_field_says_what_it_is_in_ray_torch_or_keras_terms():
    missing = [f"{field.anchor} (or {field.generic_path})" for field in _fields() if not terms.meaning(field)]
    assert missing == [], "add these keys to MEANING in specc/docs/terms.py: " + ", ".join(missing)


def test_every_example_is_valid_for_its_field():
    defs = definitions(schema())
    wrong = []
    for field in _fields():
        value = terms.example(field)
        if value is terms.NO_EXAMPLE:
            continue
        validator = jsonschema.Draft202012Validator({**field.schema, "$defs": defs})
        errors = list(validator.iter_errors(value))
        if errors:
            wrong.append(f"{field.anchor}: {value!r}: {errors[0].message}")
    assert wrong == []


def test_every_field_shows_an_example():
    bare = [field.anchor for field in _fields() if terms.example(field) is terms.NO_EXAMPLE]
    assert bare == [], "give these an example in EXAMPLES of specc/docs/terms.py"


def test_every_field_is_on_its_page_under_its_path():
    for field in _fields():
        page = pages()[f"{field.block.page}.md"]
        assert f"### `{field.path}` {{#" in page or f"## `{field.block.variant}` {{#" in page, field.anchor


def test_every_schema_field_name_is_on_some_page():
    text = site_text()
    names = {name for body in definitions(schema()).values() for name in body.get("properties", {})}
    assert len(names) > 100
    assert sorted(name for name in names if f"`{name}`" not in text and f".{name}`" not in text) == []


def test_every_problem_code_is_on_some_page():
    text = site_text()
    assert sorted(code for code in CODES if not re.search(rf"\b{code}\b", text)) == []


def test_every_catalog_class_is_on_its_framework_page():
    for framework in catalog.FRAMEWORKS:
        page = pages()[page_name(framework)]
        for family in catalog.families(framework):
            for name, entry in catalog.family(framework, family).items():
                assert f"{{#{family}.{name}}}" in page and f"`{entry.path}`" in page, (framework, family, name)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("training.md", "### `training.optimizer.lr` {#training.optimizer.sgd.lr}"),
        ("dataset.md", "### `dataset.batch_size` {#dataset.batch_size}"),
        ("tune.md", "## `loguniform` {#tune.space.loguniform}"),
        ("scaling.md", "- **In Ray, torch, Keras:** `ScalingConfig(num_workers=...)`"),
    ],
)
def test_a_field_reads_as_the_reference_writes_it(name, expected):
    assert expected in pages()[name]


def _fields():
    return [field for block in blocks() for field in block.fields]


def test_no_description_becomes_html_or_emphasis():
    """`val_<name>` outside backticks would be an HTML tag and vanish from the page; `*.pem` could start emphasis."""
    found = []
    for name, text in pages().items():
        body = re.sub(r"```.*?```", "", text, flags=re.S)
        for line in body.splitlines():
            outside = " ".join(line.split("`")[0::2]).replace("**", "")  # bold is the page's own
            if not line.startswith(("<!--", "     then")) and re.search(r"<[A-Za-z_/!]|(?<!\\)\*", outside):
                found.append(f"{name}: {line[:100]}")
    assert found == []
