"""The committed catalog is what the installed packages give (one test per framework: each imports its packages
once), and `python -m specc.catalog.generate --check` says which file is stale and which versions moved."""

from __future__ import annotations

import json

import pytest

from specc import catalog
from specc.catalog import generate


@pytest.mark.parametrize("framework", catalog.FRAMEWORKS)
def test_the_committed_catalog_is_not_stale(framework):
    absent = generate.missing(framework)
    if absent:
        pytest.skip(f"{', '.join(absent)} not installed: the {framework} catalog cannot be read here")
    problem = generate.stale(framework)
    assert problem is None, problem


def test_check_names_the_stale_file_and_the_versions_that_moved(tmp_path, capsys):
    if generate.missing("ray_tune"):
        pytest.skip("ray not installed")
    assert generate.main(["ray_tune", "--output", str(tmp_path)]) == 0
    assert generate.main(["ray_tune", "--check", "--output", str(tmp_path)]) == 0
    path = tmp_path / "ray_tune.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["versions"]["ray"] = "2.0.0"
    path.write_text(json.dumps(data), encoding="utf-8")
    capsys.readouterr()
    assert generate.main(["ray_tune", "--check", "--output", str(tmp_path)]) == generate.EXIT_STALE
    message = capsys.readouterr().err
    assert str(path) in message and "ray 2.0.0 -> " in message and generate.COMMAND in message


def test_check_says_when_only_the_generator_changed(tmp_path, capsys):
    if generate.missing("ray_tune"):
        pytest.skip("ray not installed")
    generate.main(["ray_tune", "--output", str(tmp_path)])
    path = tmp_path / "ray_tune.json"
    path.write_text(path.read_text(encoding="utf-8").replace("Implements", "Does"), encoding="utf-8")
    capsys.readouterr()
    assert generate.main(["ray_tune", "--check", "--output", str(tmp_path)]) == generate.EXIT_STALE
    assert "same package versions" in capsys.readouterr().err


def test_a_missing_file_is_stale_not_a_traceback(tmp_path, capsys):
    if generate.missing("ray_tune"):
        pytest.skip("ray not installed")
    assert generate.main(["ray_tune", "--check", "--output", str(tmp_path)]) == generate.EXIT_STALE
    assert "ray_tune.json cannot be read" in capsys.readouterr().err


def test_an_unknown_framework_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as stopped:
        generate.main(["pytorch"])
    assert stopped.value.code == 2
    assert "no framework pytorch" in capsys.readouterr().err


def test_the_summary_gives_each_family_size(tmp_path, capsys):
    if generate.missing("ray_tune"):
        pytest.skip("ray not installed")
    assert generate.main(["ray_tune", "--summary", "--output", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "ray_tune (ray " in out
    assert all(f"  {name} " in out for name in catalog.families("ray_tune"))
