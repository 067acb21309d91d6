"""`specc init NAME` (SPEC §9): a commented starter spec for each framework, with and without a search, that
validates as written (tests/e2e/test_init.py trains each one), and never overwrites a file unasked."""

from __future__ import annotations

import pytest

from specc import api
from specc.cli import main

VARIANTS = [("torch", []), ("torch", ["--with-tune"]), ("tensorflow", []), ("tensorflow", ["--with-tune"])]


@pytest.mark.parametrize(("framework", "extra"), VARIANTS)
def test_each_starter_validates_as_written(tmp_path, monkeypatch, capsys, framework, extra):
    monkeypatch.chdir(tmp_path)
    assert main(["init", "my-exp", "--framework", framework, *extra]) == 0
    assert capsys.readouterr().out == "my-exp.yaml\n"
    report = api.check_file("my-exp.yaml")
    assert report.ok and report.problems == []  # not even a warning
    experiment = report.experiment
    assert (experiment.name, experiment.framework) == ("my-exp", framework)
    assert (experiment.tune is not None) == bool(extra)
    if extra:
        assert experiment.scheduler.type == "asha"
    else:
        assert experiment.scheduler is None
    api.compile(experiment)  # and compiles
    text = (tmp_path / "my-exp.yaml").read_text(encoding="utf-8")
    assert text.startswith("# my-exp: a starter spec") and text.endswith("\n")
    assert "specc run my-exp.yaml --smoke" in text  # the comments say what to do next
    assert sum(line.lstrip().startswith("#") or "  # " in line for line in text.splitlines()) >= 15


def test_init_never_overwrites_without_force(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.yaml").write_text("my work\n")
    assert main(["init", "mine"]) == 2
    err = capsys.readouterr().err
    assert "mine.yaml exists" in err and "--force" in err and "Traceback" not in err
    assert (tmp_path / "mine.yaml").read_text() == "my work\n"
    assert main(["init", "mine", "--force"]) == 0
    assert api.check_file(tmp_path / "mine.yaml").ok


def test_init_into_a_directory_or_a_named_file(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "specs").mkdir()
    assert main(["init", "a", "-o", "specs"]) == 0
    assert main(["init", "b", "-o", "specs/other.yaml"]) == 0
    assert capsys.readouterr().out.split() == ["specs/a.yaml", "specs/other.yaml"]
    assert api.load("specs/other.yaml").name == "b"
    assert "specc run specs/other.yaml --smoke" in (tmp_path / "specs" / "other.yaml").read_text()


@pytest.mark.parametrize("name", ["My-Exp", "_x", "a b", "x" * 65, "abc\n"])
def test_a_name_that_is_not_a_spec_name_is_refused(tmp_path, monkeypatch, capsys, name):
    monkeypatch.chdir(tmp_path)
    assert main(["init", name]) == 2
    assert "is not a spec name" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_the_commented_callbacks_line_validates_when_uncommented(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["init", "tracked"]) == 0
    text = (tmp_path / "tracked.yaml").read_text(encoding="utf-8")
    assert "  # callbacks: [tensorboard]" in text
    (tmp_path / "tracked.yaml").write_text(text.replace("  # callbacks: [tensorboard]", "  callbacks: [tensorboard]"))
    report = api.check_file("tracked.yaml")
    assert report.ok and report.experiment.run.callbacks == ["tensorboard"]
