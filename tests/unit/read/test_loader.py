"""The loader: positions, YAML edge cases, extends (deep merge, cycles, origins) and --set."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from specc import api
from specc.read.document import MAX_BYTES, MAX_DEPTH, parse_text
from specc.read.files import read_file
from specc.read.loader import key_path, load_raw
from specc.spec.errors import SpecError
from tests.conftest import MINIMAL, located


def test_every_key_and_value_has_a_position():
    data, source = parse_text("a:\n  b: [1, 2]\n  c: {d: x}\n", "f.yaml")
    assert data == {"a": {"b": [1, 2], "c": {"d": "x"}}}
    assert (source.keys[("a", "b")].line, source.keys[("a", "b")].column) == (2, 3)
    assert (source.values[("a", "b", 1)].line, source.values[("a", "b", 1)].column) == (2, 10)
    assert (source.values[("a", "c", "d")].line, source.values[("a", "c", "d")].column) == (3, 10)


def test_scalars_follow_yaml_and_exponent_floats_are_numbers():
    data, _ = parse_text("a: 1e-4\nb: 1.0e-4\nc: '1e-4'\nd: 2024-01-01\ne: ~\nf: yes\n", "f")
    assert data == {"a": 1e-4, "b": 1e-4, "c": "1e-4", "d": "2024-01-01", "e": None, "f": True}


def test_anchors_aliases_and_merge_keys_keep_positions():
    text = "a: &x {p: 1, q: [1, 2]}\nb: *x\nc:\n  <<: [*x, {r: 5}]\n  p: 9\n"
    data, source = parse_text(text, "f")
    assert data["b"] == {"p": 1, "q": [1, 2]}
    assert data["c"] == {"p": 9, "q": [1, 2], "r": 5}
    assert source.values[("c", "r")].line == 4
    assert source.values[("c", "p")].line == 5  # the explicit key wins over the merged one


def test_alias_bomb_is_refused_fast(write_spec):
    lines = ["a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1]"]
    for i in range(1, 9):
        prev, name = chr(96 + i), chr(97 + i)
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 9) + "]")
    path = write_spec("\n".join(lines) + "\n")
    start = time.process_time()
    report = api.check_file(path)
    # expanded, the document holds 9**9 (387 million) items: minutes and gigabytes. Refused, it takes
    # milliseconds. CPU seconds: a loaded CI machine stretches wall time (1 s failed beside three Ray runs).
    assert time.process_time() - start < 10.0
    assert [p.code for p in report.problems] == ["E009"]


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 500, 100_000])  # libyaml itself stops scanning at 1000
def test_deep_nesting_is_refused_without_crashing(write_spec, depth):
    path = write_spec("a: " + "[" * depth + "]" * depth + "\n")
    report = api.check_file(path)
    assert [p.code for p in report.problems] == ["E010"]
    assert f"{MAX_DEPTH} levels" in report.problems[0].message


def test_extends_deep_merges_maps_and_replaces_lists(write_spec):
    write_spec(MINIMAL + "scaling: {num_workers: 2, use_gpu: false}\n", "base/base.yaml")
    child = write_spec(
        """\
        extends: base/base.yaml
        name: child
        model: {hidden_sizes: [8, 4]}
        scaling: {num_workers: 3}
        """,
        "child.yaml",
    )
    experiment = api.load(child)
    assert experiment.name == "child"
    assert experiment.model.hidden_sizes == [8, 4]  # lists are replaced, not appended
    assert experiment.scaling.num_workers == 3
    assert experiment.dataset.type == "digits"  # inherited
    assert experiment.extends is None


def test_extends_list_applies_parents_in_order(write_spec):
    write_spec(MINIMAL, "a.yaml")
    write_spec("training: {epochs: 7}\nmodel: {dropout: 0.5}\n", "b.yaml")
    child = write_spec("extends: [a.yaml, b.yaml]\ntraining: {seed: 3}\n", "c.yaml")
    experiment = api.load(child)
    assert (experiment.training.epochs, experiment.training.seed, experiment.model.dropout) == (7, 3, 0.5)


def test_extends_changing_a_type_replaces_the_section(write_spec):
    write_spec(MINIMAL.replace("{type: mlp, hidden_sizes: [16]}", "{type: mlp, batch_norm: true}"), "base.yaml")
    child = write_spec("extends: base.yaml\nmodel: {type: cnn, channels: [4]}\n", "child.yaml")
    experiment = api.load(child)
    assert experiment.model.type == "cnn"  # batch_norm (mlp only) did not leak into the cnn


def test_extends_replaces_a_search_entry_with_another_distribution(write_spec):
    tune = "tune: {metric: val_accuracy, mode: max, space: {training.optimizer.lr: {uniform: [0.01, 0.1]}}}\n"
    write_spec(MINIMAL + tune, "base.yaml")
    child = write_spec(
        "extends: base.yaml\ntune: {space: {training.optimizer.lr: {loguniform: [1.0e-4, 0.1]}}}\n", "child.yaml"
    )
    assert api.load(child).tune.space["training.optimizer.lr"].kind == "loguniform"


def test_problem_from_a_parent_names_the_parent_and_the_child(write_spec):
    parent = write_spec(MINIMAL.replace("training: {epochs: 2}", "training: {epochs: -2}"), "base.yaml")
    child = write_spec("extends: base.yaml\nname: child\n", "child.yaml")
    report = api.check_file(child)
    assert located(report.problems) == [("E106", 6, 20, "training.epochs")]
    problem = report.problems[0]
    assert problem.file.endswith(parent.name)
    assert problem.origin == f"extended by {report.file}"


def test_extends_cycle_names_the_chain(write_spec, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_spec("extends: b.yaml\n" + MINIMAL, "a.yaml")
    write_spec("extends: a.yaml\n", "b.yaml")
    report = api.check_file(write_spec("extends: a.yaml\n", "start.yaml"))
    assert [p.code for p in report.problems] == ["E021"]
    assert "a.yaml -> b.yaml -> a.yaml" in report.problems[0].message


def test_extends_missing_file_points_at_the_name(write_spec):
    report = api.check_file(write_spec("name: x\nextends: [nope.yaml]\n"))
    assert located(report.problems) == [("E020", 2, 11, "extends.0")]


def test_set_overrides_are_yaml_typed(write_spec):
    path = write_spec(MINIMAL)
    experiment = api.load(
        path,
        [
            "training.epochs=5",
            "model.hidden_sizes=[64, 32]",
            "model.hidden_sizes.1=8",
            "training.optimizer.lr=1e-3",
            "description=from cli",
        ],
    )
    assert experiment.training.epochs == 5
    assert experiment.model.hidden_sizes == [64, 8]
    assert experiment.training.optimizer.lr == 1e-3
    assert experiment.description == "from cli"


def test_set_creates_missing_sections(write_spec):
    experiment = api.load(write_spec(MINIMAL), ["scaling.num_workers=0"])
    assert experiment.scaling.num_workers == 0


def test_problem_from_set_says_so(write_spec):
    report = api.check_file(write_spec(MINIMAL), ["model.dropout=2"])
    assert [(p.code, p.line, p.path) for p in report.problems] == [("E106", None, "model.dropout")]
    assert report.problems[0].origin == "--set model.dropout=2"
    assert "(--set model.dropout=2)" in str(report.problems[0])


@pytest.mark.parametrize("override", ["no-equals", "=3", "a..b=1", "model.hidden_sizes.5=3"])
def test_malformed_set_is_a_problem(write_spec, override):
    with pytest.raises(SpecError) as caught:
        load_raw(write_spec(MINIMAL), [override])
    assert [p.code for p in caught.value.problems] == ["E022"]


def test_bom_is_accepted(tmp_path):
    path = tmp_path / "bom.yaml"
    path.write_bytes(b"\xef\xbb\xbf" + MINIMAL.encode())
    assert api.check_file(path).problems == []


# --- what is read: regular files only, and no more of one than the size bound ---------------------------------


def validate_in_a_child(*args, timeout=60):
    """`specc validate` in a subprocess with a deadline: a regression that blocks on a FIFO fails here, not hangs."""
    return subprocess.run(
        [sys.executable, "-m", "specc", "validate", *map(str, args)], capture_output=True, text=True, timeout=timeout
    )


def test_a_fifo_named_as_a_spec_is_a_problem_not_a_hang(tmp_path):
    os.mkfifo(tmp_path / "spec.yaml")
    done = validate_in_a_child(tmp_path / "spec.yaml")
    assert done.returncode == 1
    assert "error[E001]: cannot read the file: it is a FIFO, not a regular file" in done.stdout


def test_a_fifo_inside_a_validated_directory_is_a_problem_and_the_rest_is_validated(tmp_path):
    os.mkfifo(tmp_path / "pipe.yaml")
    (tmp_path / "good.yaml").write_text(MINIMAL, encoding="utf-8")
    for flags in ([], ["--skip-non-specs"]):
        done = validate_in_a_child(*flags, tmp_path)
        assert done.returncode == 1 and "pipe.yaml: error[E001]" in done.stdout and "good.yaml" not in done.stdout


def test_a_device_that_never_ends_is_refused_before_it_is_read():
    done = validate_in_a_child("/dev/zero", timeout=30)
    assert done.returncode == 1 and "it is a device, not a regular file" in done.stdout


def test_no_more_of_a_file_is_read_than_tells_it_is_too_large(tmp_path):
    big = tmp_path / "big.yaml"
    big.write_bytes(b"specc: 1\n" + b"#" * (8 * MAX_BYTES))
    assert len(read_file(big, MAX_BYTES, root=tmp_path)) == MAX_BYTES + 1
    assert [(p.code, p.line) for p in api.check_file(big).problems] == [("E002", 1)]


def test_an_override_of_extends_is_a_problem_not_silently_ignored(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(MINIMAL, encoding="utf-8")
    (tmp_path / "base.yaml").write_text("training: {epochs: 9}\n", encoding="utf-8")
    problems = api.check_file(spec, ["extends=base.yaml"]).problems
    assert [(p.code, p.path, p.origin) for p in problems] == [("E022", "extends", "--set extends=base.yaml")]


def test_an_override_that_is_not_utf8_is_a_problem_shown_with_its_bytes(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(MINIMAL, encoding="utf-8")
    argv = [sys.executable.encode(), b"-m", b"specc", b"validate", bytes(spec), b"--set", b"model.dropout=\xff"]
    done = subprocess.run(argv, capture_output=True, timeout=60)
    assert done.returncode == 1, done.stderr
    assert b"Traceback" not in done.stderr
    assert b"error[E022]: the override is not valid UTF-8 (--set model.dropout=\\xff)" in done.stdout


# --- --set with bracket paths: the form problems print, read back -----------------------------------------------
SEARCH = (
    MINIMAL
    + """\
tune:
  metric: val_loss
  mode: min
  space:
    training.optimizer.lr: {loguniform: [1.0e-4, 1.0e-1]}
    model.dropout: {uniform: [0.0, 0.5]}
scheduler: {type: asha, grace_period: 1}
"""
)
PBT = (
    MINIMAL.replace("{epochs: 2}", "{epochs: 6, checkpoint_every: 1}")
    + """\
scaling: {num_workers: 1}
tune: {metric: val_loss, mode: min}
scheduler:
  type: pbt
  mutations:
    training.optimizer.lr: {loguniform: [1.0e-4, 1.0e-1]}
"""
)


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("training.epochs", ["training", "epochs"]),
        ("tune.space[training.optimizer.lr]", ["tune", "space", "training.optimizer.lr"]),
        (
            "tune.space[training.optimizer.lr].loguniform.0",
            ["tune", "space", "training.optimizer.lr", "loguniform", "0"],
        ),
        ("scheduler.mutations[model.hidden_sizes.0]", ["scheduler", "mutations", "model.hidden_sizes.0"]),
        ("a[b.c][d.e]", ["a", "b.c", "d.e"]),
        ("[a.b]", ["a.b"]),
    ],
)
def test_key_paths_read_brackets(text, parts):
    assert key_path(text) == parts


@pytest.mark.parametrize(
    "text", ["a..b", "a.", ".a", "a[b", "a[]", "a]b", "a[b]c", "a.[b]", "a[b[c]]", "tune.space[x.y", ""]
)
def test_malformed_key_paths(text):
    assert key_path(text) is None


def test_problem_paths_read_back_as_set_paths(write_spec):
    """Every problem's path, as printed, is a path --set takes to the same place."""
    report = api.check_file(write_spec(SEARCH), ["tune.space[model.dropout]={uniform: [0, 2]}", "model.dropout=-1"])
    assert [p.path for p in report.problems] == ["model.dropout", "tune.space[model.dropout].uniform"]
    assert key_path(report.problems[1].path) == ["tune", "space", "model.dropout", "uniform"]


@pytest.mark.parametrize(
    "override",
    [
        "tune.space[training.optimizer.lr]={loguniform: [1.0e-3, 1.0e-2]}",
        "tune.space[training.optimizer.lr].loguniform=[1.0e-3, 1.0e-2]",
        "tune.space[training.optimizer.lr].loguniform.0=1.0e-3",
    ],
)
def test_set_reaches_a_space_key_that_holds_dots(write_spec, override):
    experiment = api.load(write_spec(SEARCH), [override])
    assert experiment.tune.space["training.optimizer.lr"].args[0] == 1e-3
    assert set(experiment.tune.space) == {"training.optimizer.lr", "model.dropout"}


def test_set_adds_a_space_key_and_a_mutation(write_spec):
    experiment = api.load(write_spec(SEARCH), ["tune.space[training.epochs]={choice: [1, 2]}"])
    assert experiment.tune.space["training.epochs"].args == [1, 2]
    pbt = api.load(write_spec(PBT), ["scheduler.mutations[training.optimizer.lr]={uniform: [0.01, 0.1]}"])
    assert pbt.scheduler.mutations["training.optimizer.lr"].kind == "uniform"


@pytest.mark.parametrize(
    ("override", "spec"),
    [
        ("tune.space.training.optimizer.lr={loguniform: [1.0e-3, 1.0e-2]}", SEARCH),
        ("scheduler.mutations.training.optimizer.lr={uniform: [0.01, 0.1]}", PBT),
    ],
)
def test_a_space_key_written_with_dots_is_a_problem_that_shows_the_brackets(write_spec, override, spec):
    (problem,) = api.check_file(write_spec(spec), [override]).problems
    head = override.split(".training")[0]
    assert (problem.code, problem.path, problem.line, problem.origin) == ("E022", head, None, f"--set {override}")
    assert f"--set '{head}[training.optimizer.lr]=...'" in problem.hint


@pytest.mark.parametrize(
    ("override", "code", "path"),
    [
        ("tune.space[training.optimizer.lr].loguniform.0=1", "E110", "tune.space[training.optimizer.lr].loguniform"),
        ("tune.space[model.dropout].uniform.1=2", "E203", "tune.space[model.dropout].uniform"),
        ("tune.space[model.dropout]={choice: [0.1, 3]}", "E203", "tune.space[model.dropout].choice.1"),
        (
            "tune.space[training.optimizer.momentum]={uniform: [0, 1]}",
            "E202",
            "tune.space[training.optimizer.momentum]",
        ),
        ("model.hidden_sizes.0=0", "E106", "model.hidden_sizes.0"),
        ("stop.all_when=['val_acc >= 1']", "E201", "stop.all_when.0"),
    ],
)
def test_a_problem_in_a_value_from_set_is_located_at_the_set(write_spec, override, code, path):
    """Not at the file's line of the distribution one bound of which the --set replaced: the file did not say it."""
    (problem,) = api.check_file(write_spec(SEARCH), [override]).problems
    assert (problem.code, problem.path, problem.line, problem.column) == (code, path, None, None)
    assert problem.origin == f"--set {override}"
    assert str(problem).startswith(f"{problem.file}: error[{code}]: {path}: ")
    assert str(problem).endswith(f" (--set {override})")


def test_the_file_s_own_problems_stay_at_their_lines_beside_a_set(write_spec):
    spec = SEARCH.replace("hidden_sizes: [16]}", "hidden_sizes: [16], dropout: 2}")
    problems = api.check_file(write_spec(spec), ["tune.space[training.optimizer.lr].loguniform.0=1"]).problems
    assert sorted((p.code, p.line, p.origin) for p in problems) == [
        ("E106", 4, None),
        ("E110", None, "--set tune.space[training.optimizer.lr].loguniform.0=1"),
    ]


def test_a_contradiction_with_a_value_from_set_names_it(write_spec):
    """grace_period is in the file, the epochs it contradicts came from --set: located at the file's line,
    and saying which --set made it a problem."""
    (problem,) = api.check_file(write_spec(SEARCH), ["training.epochs=1"]).problems
    assert (problem.code, problem.path, problem.line) == ("E209", "scheduler.grace_period", 13)
    assert problem.origin == "with --set training.epochs=1"


def test_bracket_set_on_the_command_line(write_spec, capsys):
    from specc.cli import main

    path = write_spec(SEARCH)
    assert main(["validate", str(path), "--set", "tune.space[training.optimizer.lr]={loguniform: [1.0e-3, 0.1]}"]) == 0
    code = main(["validate", str(path), "--set", "tune.space[training.optimizer.lr].loguniform.0=1"])
    out = capsys.readouterr().out
    assert code == 1
    assert (
        "error[E110]: tune.space[training.optimizer.lr].loguniform: lower bound 1.0 must be below upper bound 0.1 "
        "(--set tune.space[training.optimizer.lr].loguniform.0=1)"
    ) in out


def test_a_problem_of_another_field_stays_in_the_file_beside_a_set_in_its_section(write_spec):
    """A --set of model.dropout does not draw the file's missing model.type to it."""
    spec = MINIMAL.replace("model: {type: mlp, hidden_sizes: [16]}", "model: {hidden_sizes: [16]}")
    (problem,) = api.check_file(write_spec(spec), ["model.dropout=0.1"]).problems
    assert (problem.code, problem.line, problem.origin) == ("E102", 4, None)


def test_source_map_locates_a_value_changed_in_part_at_the_set_but_never_a_whole_section():
    from specc.read.document import Mark, SourceMap

    in_file, from_set = Mark("s.yaml", 3, 1), Mark("s.yaml", None, None, "--set model.sizes.0=1")
    source = SourceMap({("model",): in_file, ("model", "sizes"): in_file, ("model", "sizes", 0): in_file})
    source.overrides[("model", "sizes", 0)] = source.values[("model", "sizes", 0)] = from_set
    assert source.locate(("model", "sizes")) is from_set  # the list, changed in part
    assert source.locate(("model", "sizes"), key=True) is in_file  # its key is the file's
    assert source.locate(("model",)) is in_file  # a whole section: not drawn to a --set of one of its fields
    source.drop(("model", "sizes"))
    assert source.overrides == {}
