"""`specc compile`, `specc diff` and `specc run --dry-run` on the command line: where scripts go, atomic
writes, --check, --set, exit codes and messages (SPEC §9)."""

from __future__ import annotations

import ast
import difflib
import json
import os
import re
import subprocess
import sys

import pytest

from specc import api, runtime
from specc.cli import Exit, main
from specc.spec.version import __version__
from tests.conftest import MINIMAL, ROOT

TUNE = (
    MINIMAL + "tune: {metric: val_accuracy, mode: max, space: {training.optimizer.lr: {loguniform: [1.0e-4, 0.1]}}}\n"
)
TENSORFLOW = MINIMAL.replace("framework: torch", "framework: tensorflow")
BAD = MINIMAL.replace("training: {epochs: 2}", "training: {epochs: 0, optimiser: {type: sgd}}")


def run_cli(*args, cwd):
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "specc", *args], capture_output=True, text=True, cwd=cwd, env=env, check=False
    )


@pytest.fixture
def spec(write_spec, tmp_path, monkeypatch):
    """A valid spec, tiny.yaml, in a temporary working directory."""
    monkeypatch.chdir(tmp_path)
    write_spec(MINIMAL, "tiny.yaml")
    return "tiny.yaml"


def expected(spec: str, output: str, overrides=()) -> str:
    return api.compile(api.load(spec, overrides), output)


# --- where the script goes --------------------------------------------------------------------------------


def test_default_output_is_build_slash_spec_stem(spec, tmp_path, capsys):
    assert main(["compile", spec]) == Exit.OK
    out = tmp_path / "build" / "tiny.py"
    assert capsys.readouterr().out.splitlines() == [
        os.path.join("build", "tiny.py"),
        os.path.join("build", runtime.FILE),
    ]
    assert out.read_text(encoding="utf-8") == expected(spec, "build/tiny.py")
    assert "python tiny.py" in out.read_text(encoding="utf-8")  # the usage names the script
    assert (tmp_path / "build" / "specc_runtime.py").read_text(encoding="utf-8") == runtime.source()  # verbatim


def test_the_experiment_file_imports_the_runtime_written_beside_it(spec, tmp_path):
    """The pair: the experiment imports specc_runtime and asks for this specc's version; the runtime beside it is
    specc's own module, byte for byte, whatever the spec (the same for two different specs)."""
    assert main(["compile", spec, "-o", "out/a.py"]) == Exit.OK
    (tmp_path / "other.yaml").write_text(TUNE.replace("name: tiny", "name: other"), encoding="utf-8")
    assert main(["compile", "other.yaml", "-o", "out/b.py"]) == Exit.OK
    experiment = (tmp_path / "out" / "a.py").read_text(encoding="utf-8")
    assert "\nimport specc_runtime\n" in experiment
    assert runtime.experiment_version(experiment) == runtime.version_of(runtime.source()) == __version__
    assert sorted(os.listdir(tmp_path / "out")) == ["a.py", "b.py", "specc_runtime.py"]
    assert (tmp_path / "out" / "specc_runtime.py").read_bytes() == runtime.source().encode("utf-8")


def test_an_output_named_like_the_runtime_is_a_usage_error(spec, tmp_path, capsys):
    for output in ("specc_runtime.py", "build/specc_runtime.py"):
        assert main(["compile", spec, "-o", output]) == Exit.USAGE
        assert main(["compile", spec, "-o", output, "--single-file"]) == Exit.USAGE
        err = capsys.readouterr().err
        assert err.startswith(f"specc compile: error: -o {output}: specc_runtime.py is the runtime's name"), err
    assert sorted(os.listdir(tmp_path)) == ["tiny.yaml"]


def test_single_file_inlines_the_runtime_and_writes_nothing_beside(spec, tmp_path, capsys):
    assert main(["compile", spec, "-o", "one.py", "--single-file"]) == Exit.OK
    text = (tmp_path / "one.py").read_text(encoding="utf-8")
    assert text == runtime.single_file(expected(spec, "one.py"))
    assert "\nimport specc_runtime\n" not in text and runtime.source() in text
    assert sorted(os.listdir(tmp_path)) == ["one.py", "tiny.yaml"]
    ast.parse(text)
    assert main(["compile", spec, "-o", "-", "--single-file"]) == Exit.OK  # printed: the one file
    capsys.readouterr()
    assert main(["compile", spec, "-o", "-", "--single-file"]) == Exit.OK
    assert capsys.readouterr().out == runtime.single_file(expected(spec, "-"))


def test_output_into_a_directory_that_does_not_exist_yet(spec, tmp_path):
    out = tmp_path / "a" / "b" / "c" / "job.py"
    assert main(["compile", spec, "-o", str(out)]) == Exit.OK
    assert out.read_text(encoding="utf-8") == expected(spec, str(out))
    assert "python job.py" in out.read_text(encoding="utf-8")
    assert sorted(os.listdir(out.parent)) == ["job.py", "specc_runtime.py"]  # no temporary file left behind


def test_an_existing_output_is_replaced_whole_by_a_rename(spec, tmp_path):
    out = tmp_path / "job.py"
    old = "# an old, much longer script\n" * 10_000
    out.write_text(old, encoding="utf-8")
    with open(out, encoding="utf-8") as reader:  # a reader of the old file keeps seeing all of it
        assert main(["compile", spec, "-o", str(out)]) == Exit.OK
        assert reader.read() == old
    assert out.read_text(encoding="utf-8") == expected(spec, str(out))
    assert sorted(os.listdir(tmp_path)) == ["job.py", "specc_runtime.py", "tiny.yaml"]


def test_dash_prints_and_writes_nothing(spec, tmp_path, capsys):
    assert main(["compile", spec, "-o", "-"]) == Exit.OK
    out = capsys.readouterr().out
    assert out == expected(spec, "-")  # the experiment alone
    assert "\nimport specc_runtime\n" in out and runtime.source() not in out
    ast.parse(out)
    assert sorted(os.listdir(tmp_path)) == ["tiny.yaml"]


def test_set_overrides_apply(spec, capsys):
    assert main(["compile", spec, "-o", "-", "--set", "model.hidden_sizes=[48, 24]", "--set", "training.epochs=7"]) == 0
    out = capsys.readouterr().out
    assert '"hidden_sizes": [48, 24]' in out
    assert '"epochs": 7' in out
    assert out == expected(spec, "-", ["model.hidden_sizes=[48, 24]", "training.epochs=7"])


def test_a_bad_override_is_a_located_problem(spec, tmp_path, capsys):
    assert main(["compile", spec, "--set", "model.hidden_sizes=[0]"]) == Exit.PROBLEMS
    assert "model.hidden_sizes" in capsys.readouterr().err
    assert not (tmp_path / "build").exists()


# --- --check ----------------------------------------------------------------------------------------------


def test_check_missing_output_exits_1(spec, tmp_path, capsys):
    assert main(["compile", spec, "--check"]) == Exit.PROBLEMS
    err = capsys.readouterr().err
    assert "build/tiny.py is missing" in err and "specc compile tiny.yaml" in err
    assert not (tmp_path / "build").exists()  # --check never writes


def test_check_in_sync_exits_0_and_stale_exits_1(spec, tmp_path, capsys):
    out = tmp_path / "build" / "tiny.py"
    assert main(["compile", spec]) == Exit.OK
    assert main(["compile", spec, "--check"]) == Exit.OK
    out.write_text(out.read_text(encoding="utf-8") + "# edited by hand\n", encoding="utf-8")
    assert main(["compile", spec, "--check"]) == Exit.PROBLEMS
    assert out.read_text(encoding="utf-8").endswith("# edited by hand\n")  # left as it was
    capsys.readouterr()


def test_check_names_the_runtime_when_it_is_the_file_out_of_date(spec, tmp_path, capsys):
    built = tmp_path / "build"
    assert main(["compile", spec]) == Exit.OK
    (built / "specc_runtime.py").unlink()
    capsys.readouterr()
    assert main(["compile", spec, "--check"]) == Exit.PROBLEMS
    remedy = ": run `specc compile tiny.yaml -o build/tiny.py`\n"
    assert capsys.readouterr().err == "build/specc_runtime.py is missing" + remedy
    (built / "specc_runtime.py").write_text(runtime.source().replace('VERSION = "', 'VERSION = "0.0.9-'))
    assert main(["compile", spec, "--check"]) == Exit.PROBLEMS
    assert capsys.readouterr().err == "build/specc_runtime.py is stale" + remedy
    (built / "tiny.py").write_text("# old\n", encoding="utf-8")
    assert main(["compile", spec, "--check"]) == Exit.PROBLEMS
    assert capsys.readouterr().err == "build/tiny.py is stale and build/specc_runtime.py is stale" + remedy
    assert (built / "tiny.py").read_text(encoding="utf-8") == "# old\n"  # --check never writes
    assert main(["compile", spec]) == Exit.OK
    assert main(["compile", spec, "--check"]) == Exit.OK


def test_check_of_a_single_file_compares_the_one_file(spec, tmp_path, capsys):
    assert main(["compile", spec, "-o", "one.py", "--single-file"]) == Exit.OK
    assert main(["compile", spec, "-o", "one.py", "--single-file", "--check"]) == Exit.OK  # no runtime beside
    assert main(["compile", spec, "-o", "one.py", "--check"]) == Exit.PROBLEMS  # as a pair: both differ
    capsys.readouterr()
    assert main(["compile", spec, "-o", "one.py", "--single-file", "--check", "--set", "training.epochs=3"]) == 1
    assert capsys.readouterr().err == "one.py is stale: run `specc compile tiny.yaml -o one.py --single-file`\n"


def test_check_sees_a_changed_spec(spec, tmp_path, write_spec, capsys):
    out = str(tmp_path / "job.py")
    assert main(["compile", spec, "-o", out]) == Exit.OK
    assert main(["compile", spec, "-o", out, "--check"]) == Exit.OK
    assert main(["compile", spec, "-o", out, "--check", "--set", "training.epochs=3"]) == Exit.PROBLEMS
    write_spec(MINIMAL.replace("[16]", "[17]"), "tiny.yaml")
    assert main(["compile", spec, "-o", out, "--check"]) == Exit.PROBLEMS
    capsys.readouterr()


# --- failures ---------------------------------------------------------------------------------------------


def test_spec_with_problems_exits_1_located_and_writes_nothing(write_spec, tmp_path):
    write_spec(BAD, "bad.yaml")
    (tmp_path / "job.py").write_text("old\n", encoding="utf-8")
    done = run_cli("compile", "bad.yaml", "-o", "job.py", cwd=tmp_path)
    assert done.returncode == Exit.PROBLEMS
    lines = done.stderr.splitlines()
    assert any(line.startswith("bad.yaml:6:") and "training.optimiser" in line for line in lines), done.stderr
    assert any(line.startswith("bad.yaml:6:") and "training.epochs" in line for line in lines), done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""
    assert (tmp_path / "job.py").read_text(encoding="utf-8") == "old\n"
    done = run_cli("compile", "bad.yaml", cwd=tmp_path)
    assert done.returncode == Exit.PROBLEMS
    assert not (tmp_path / "build").exists()


def test_tensorflow_specs_compile_to_keras_scripts(write_spec, tmp_path):
    write_spec(TENSORFLOW, "tf.yaml")
    done = run_cli("compile", "tf.yaml", "-o", "tf.py", cwd=tmp_path)
    assert done.returncode == Exit.OK, done.stderr
    source = (tmp_path / "tf.py").read_text(encoding="utf-8")
    assert "import tf_keras as keras" in source and "ray.train.tensorflow.TensorflowTrainer(" in source
    assert not any("torch" in line for line in source.splitlines() if line.startswith(("import ", "from ")))


def test_a_broken_user_template_exits_2_with_one_line(write_spec, tmp_path):
    write_spec(MINIMAL, "a.yaml")
    (tmp_path / "mine" / "torch").mkdir(parents=True)
    (tmp_path / "mine" / "torch" / "trainer.py.j2").write_text("{% if %}\n", encoding="utf-8")
    done = run_cli("compile", "a.yaml", "--templates", "mine", cwd=tmp_path)
    assert done.returncode == Exit.USAGE
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith("specc compile: error: template error: ") and "trainer.py.j2" in line
    assert not (tmp_path / "build").exists()


def test_missing_spec_file(tmp_path):
    done = run_cli("compile", "nope.yaml", cwd=tmp_path)
    assert done.returncode in (Exit.PROBLEMS, Exit.USAGE)
    assert "nope.yaml" in done.stderr and "Traceback" not in done.stderr


# --- diff -------------------------------------------------------------------------------------------------


def test_diff_shows_the_changed_value(write_spec, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    write_spec(MINIMAL, "a.yaml")
    write_spec(MINIMAL.replace("hidden_sizes: [16]", "hidden_sizes: [32, 16]"), "b.yaml")
    assert main(["diff", "a.yaml", "b.yaml"]) == Exit.OK
    lines = capsys.readouterr().out.splitlines()
    assert lines[:2] == ["--- a.yaml", "+++ b.yaml"]
    removed = [line for line in lines[2:] if line.startswith("-")]
    added = [line for line in lines[2:] if line.startswith("+")]
    assert any('"hidden_sizes": [16]' in line for line in removed), lines
    assert any('"hidden_sizes": [32, 16]' in line for line in added), lines


def test_diff_of_a_spec_with_itself_is_empty(write_spec, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    write_spec(MINIMAL, "a.yaml")
    assert main(["diff", "a.yaml", "a.yaml"]) == Exit.OK
    assert capsys.readouterr().out == ""


def test_diff_of_identical_copies_shows_only_where_they_came_from(write_spec, tmp_path, monkeypatch, capsys):
    """Two files with the same text compile to the same program; only the provenance line names each file."""
    monkeypatch.chdir(tmp_path)
    write_spec(MINIMAL, "a.yaml")
    write_spec(MINIMAL, "b.yaml")
    assert main(["diff", "a.yaml", "b.yaml"]) == Exit.OK
    changed = [line for line in capsys.readouterr().out.splitlines()[2:] if line[:1] in "+-"]
    assert changed == [
        "-Compiled by specc 0.1.0 for Ray 2.60.0 from a.yaml",
        "+Compiled by specc 0.1.0 for Ray 2.60.0 from b.yaml",
    ]


def test_diff_compares_the_experiment_files_alone(write_spec, tmp_path, monkeypatch, capsys):
    """The runtime is the same for every spec: the diff of two specs is that of their experiment files."""
    monkeypatch.chdir(tmp_path)
    write_spec(MINIMAL, "a.yaml")
    write_spec(TUNE, "b.yaml")
    assert main(["diff", "a.yaml", "b.yaml"]) == Exit.OK
    out = capsys.readouterr().out
    old, new = api.compile(api.load("a.yaml"), "build/a.py"), api.compile(api.load("b.yaml"), "build/a.py")
    assert out == "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True), "a.yaml", "b.yaml"))
    assert [line for line in out.splitlines() if line.startswith(("--- ", "+++ "))] == ["--- a.yaml", "+++ b.yaml"]
    assert not (tmp_path / "build").exists()


def test_diff_between_frameworks_shows_the_trainer_change(write_spec, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    write_spec(MINIMAL, "a.yaml")
    write_spec(TENSORFLOW, "b.yaml")
    assert main(["diff", "a.yaml", "b.yaml"]) == Exit.OK
    lines = capsys.readouterr().out.splitlines()
    assert '-        torch_config=ray.train.torch.TorchConfig(backend="gloo"),' in lines
    assert "+    return ray.train.tensorflow.TensorflowTrainer(" in lines


def test_diff_with_a_spec_that_does_not_compile_exits_2(write_spec, tmp_path):
    write_spec(MINIMAL, "a.yaml")
    write_spec(TENSORFLOW, "b.yaml")
    (tmp_path / "mine" / "tensorflow").mkdir(parents=True)
    (tmp_path / "mine" / "tensorflow" / "trainer.py.j2").write_text("{{ nothing_here }}\n", encoding="utf-8")
    done = run_cli("diff", "a.yaml", "b.yaml", "--templates", "mine", cwd=tmp_path)
    assert done.returncode == Exit.USAGE
    assert len(done.stderr.splitlines()) == 1 and "nothing_here" in done.stderr


# --- run --dry-run ----------------------------------------------------------------------------------------

PROBE = """
import sys
from specc.cli import main
code = main(["run", {spec!r}, "--dry-run"])
print("EXIT:", int(code))
print("HEAVY:", ",".join(sorted(m for m in ("ray", "torch", "tensorflow") if m in sys.modules)))
"""


def dry_run(spec_text: str, tmp_path) -> list[str]:
    """`specc run s.yaml --dry-run` in a fresh interpreter: its output lines, which must end saying it exited 0
    with neither ray, torch nor tensorflow imported."""
    (tmp_path / "s.yaml").write_text(spec_text, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(spec="s.yaml")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[-2:] == ["EXIT: 0", "HEAVY: "], done.stdout + done.stderr
    return lines[:-2]


def test_run_dry_run_prints_the_plan_and_starts_no_ray(tmp_path):
    plan = "\n".join(
        dry_run(MINIMAL.replace("training: {epochs: 2}", "training: {epochs: 2}\nscaling: {num_workers: 2}"), tmp_path)
    )
    assert plan.startswith("tiny: one torch training run")
    assert "2 epoch(s)" in plan and "2 Ray Train worker(s)" in plan
    assert "val_accuracy" in plan and os.path.join("runs", "tiny") in plan
    assert sorted(os.listdir(tmp_path)) == ["s.yaml"]  # no run directory, no script


def test_run_dry_run_of_a_tensorflow_spec_imports_no_tensorflow(tmp_path):
    assert dry_run(TENSORFLOW, tmp_path)[0].startswith("tiny: one tensorflow training run")


def test_a_failed_render_leaves_the_existing_output_alone(spec, tmp_path):
    """A user template that renders invalid Python: the old script stays, whole, and nothing else appears."""
    templates = tmp_path / "templates" / "torch" / "model"
    templates.mkdir(parents=True)
    (templates / "mlp.py.j2").write_text("def build_model(:\n    pass\n", encoding="utf-8")
    (tmp_path / "job.py").write_text("old\n", encoding="utf-8")
    done = run_cli("compile", spec, "-o", "job.py", "--templates", "templates", cwd=tmp_path)
    assert done.returncode != 0
    assert "does not parse" in done.stderr
    assert (tmp_path / "job.py").read_text(encoding="utf-8") == "old\n"
    assert sorted(os.listdir(tmp_path)) == ["job.py", "templates", "tiny.yaml"]


def test_a_long_spec_path_keeps_the_script_ruff_clean_and_is_read_back(write_spec, tmp_path):
    """The docstring names the spec as it was given: an absolute path too long for the provenance line goes on a
    line of its own (one word: within ruff's rule at any width), and specc check-compiled still finds it."""
    from specc.compiler.stale import compiled_from

    path = write_spec(MINIMAL, "/".join(["a-project-directory-with-a-long-name"] * 3) + "/tiny.yaml")
    script = tmp_path / "deep.py"
    script.write_text(api.compile(api.load(path), str(script)), encoding="utf-8")
    docstring = ast.get_docstring(ast.parse(script.read_text(encoding="utf-8")), clean=False).split("\n")
    at = docstring.index(str(path))
    assert re.fullmatch(r"Compiled by specc \S+ for Ray \S+ from", docstring[at - 1]), docstring
    assert compiled_from(str(script)) == str(path)
    command = [sys.executable, "-m", "ruff", "check", "--config", str(ROOT / "pyproject.toml"), "--no-cache"]
    done = subprocess.run([*command, str(script)], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stdout


def test_a_long_description_is_wrapped_within_the_line_length(write_spec, tmp_path):
    """The description opens the script's docstring: a long one is broken at spaces, so the script stays
    ruff-clean; its own line breaks and words stay as written."""
    words = " ".join(f"word{index}" for index in range(60))
    description = f"{words}\nA second line of its own."
    path = write_spec(MINIMAL.replace("name: tiny", "name: tiny\ndescription: " + json.dumps(description)))
    script = tmp_path / "long.py"
    script.write_text(api.compile(api.load(path), str(script)), encoding="utf-8")
    docstring = ast.get_docstring(ast.parse(script.read_text(encoding="utf-8")), clean=False)
    summary = docstring.split("\n\n")[0].split("\n")
    assert len(summary) > 3 and all(len(line) <= 117 for line in summary)
    assert " ".join(summary) == f"tiny: {words} A second line of its own."
    assert summary[-1] == "A second line of its own."
    command = [sys.executable, "-m", "ruff", "check", "--config", str(ROOT / "pyproject.toml"), "--no-cache"]
    done = subprocess.run([*command, str(script)], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stdout
