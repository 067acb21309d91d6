"""Issue 15, class 9: the smaller slips, each with the input that showed it.

(The end screen's shell quoting, non-UTF-8 and `extends` overrides and malformed addresses have their tests beside
the code they fixed: tests/unit/results, tests/unit/read/test_loader.py, tests/unit/test_cli.py.)
"""

from __future__ import annotations

from specc import api
from specc.cli import main
from specc.read.document import MAX_NODES
from tests.conftest import MINIMAL


def test_a_section_set_creates_is_located_at_the_override(write_spec):
    path = write_spec(MINIMAL)
    problems = api.check_file(path, ["nothing.x=1"]).problems
    assert [(p.code, p.path, p.line, p.origin) for p in problems] == [("E101", "nothing", None, "--set nothing.x=1")]


def test_too_many_values_blames_aliases_only_when_there_are_some(write_spec):
    plain = write_spec(MINIMAL + "x:\n" + "".join(f"  k{i}: {i}\n" for i in range(MAX_NODES // 2 + 10)))
    (problem,) = api.check_file(plain).problems
    assert problem.code == "E009" and "alias" not in problem.message + problem.hint
    aliased = write_spec(MINIMAL + "a: &a [" + ", ".join(["1"] * 1000) + "]\nb: [" + ", ".join(["*a"] * 200) + "]\n")
    (problem,) = api.check_file(aliased).problems
    assert problem.code == "E009" and "through aliases" in problem.message


def test_a_problem_in_an_extended_file_names_that_file_and_the_child(write_spec, capsys):
    write_spec(MINIMAL.replace("epochs: 2", "epochs: zero"), "base.yaml")
    child = write_spec("extends: base.yaml\nname: child\n", "child.yaml")
    (problem,) = api.check_file(child).problems
    assert problem.file.endswith("base.yaml") and problem.line == 6 and "child.yaml" in problem.origin
    main(["validate", str(child)])
    assert "base.yaml:6:" in capsys.readouterr().out


def test_an_init_name_cannot_inject_yaml(tmp_path, capsys):
    assert main(["init", "x\nmodel: {type: custom, factory: 'os:system'}", "-o", str(tmp_path)]) == 2
    assert list(tmp_path.iterdir()) == []
    assert "\\n" in capsys.readouterr().err  # the name is shown escaped, on one line
