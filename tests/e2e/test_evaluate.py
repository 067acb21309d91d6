"""`specc evaluate RUN_DIR` on a real training run (issue 20): the best checkpoint, measured on the split the run
validated on, gives the metrics the run reported for that epoch; the after-training script it writes runs on its
own; a run directory that moved still evaluates; what a hostile run directory names is refused.

(tests/e2e/test_tensorflow.py evaluates a Keras run, tests/e2e/test_tune.py a search's best trial and
tests/e2e/test_streaming_data.py a csv with categories streamed through Ray Data, on runs those modules make.)"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from specc.cli import main

from .conftest import python_script, read_best, run_spec

pytestmark = pytest.mark.slow

SPEC = """\
specc: 1
name: digits-eval
framework: torch
model: {type: mlp, hidden_sizes: [32]}
dataset: {type: digits, batch_size: 64, validation_fraction: 0.25}
training:
  epochs: 3
  optimizer: {type: sgd, lr: 0.1, momentum: 0.9}
  metrics: [accuracy, top5_accuracy]
scaling: {num_workers: 1, resources_per_worker: {CPU: 1}}
run: {checkpoint_score: {metric: val_loss, mode: min}, checkpoints_to_keep: 3}
"""


@pytest.fixture(scope="module")
def trained(tmp_path_factory, local_ray):
    root = tmp_path_factory.mktemp("evaluate")
    (root / "specs").mkdir()
    spec = root / "specs" / "digits-eval.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    run_spec(spec, storage_path=root / "runs")
    return root, root / "runs" / "digits-eval"


def evaluated(run_dir, *args, root, capsys) -> tuple[int, str, str]:
    code = main(["evaluate", str(run_dir), "--root", str(root), *map(str, args)])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_the_best_checkpoint_gives_the_metrics_its_epoch_reported(trained, capsys):
    root, run_dir = trained
    best = read_best(run_dir)
    assert "spec_dir" not in best  # the spec reads nothing beside it: the script is the same wherever compiled

    code, out, err = evaluated(run_dir, root=root, capsys=capsys)
    assert code == 0, err
    evaluation = json.loads((run_dir / "evaluation.json").read_text(encoding="utf-8"))
    assert evaluation["split"] == "validation"  # digits has no test split
    assert Path(run_dir, evaluation["checkpoint"]).resolve() == Path(best["checkpoint"]).resolve()
    # The same examples, prepared and batched as training did, through the checkpoint's weights: the epoch's figures
    # (the loss to float32 rounding: training added its batches' sums in another order)
    assert set(evaluation["metrics"]) == {"loss", "accuracy", "top5_accuracy"}
    assert evaluation["metrics"]["accuracy"] == best["metrics"]["val_accuracy"]
    assert evaluation["metrics"]["top5_accuracy"] == best["metrics"]["val_top5_accuracy"]
    assert evaluation["metrics"]["loss"] == pytest.approx(best["metrics"]["val_loss"], rel=1e-5)
    assert out.splitlines()[0].startswith("digits-eval: validation split  loss ")
    assert f"written     {run_dir / 'evaluation.json'}" in out

    # The script it wrote is a standalone program: the same metrics without specc
    script = run_dir / "evaluate.py"
    done = python_script(script, best["checkpoint"], cwd=root, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    alone = json.loads(done.stdout)
    assert alone["val_accuracy"] == best["metrics"]["val_accuracy"]
    assert alone["val_loss"] == pytest.approx(evaluation["metrics"]["loss"], rel=1e-6)


def test_a_data_set_without_a_test_split_says_so(trained, capsys):
    root, run_dir = trained
    code, _, err = evaluated(run_dir, "--split", "test", root=root, capsys=capsys)
    assert code == 2
    assert "a digits data set has no test split; evaluate on --split validation" in err


def test_a_moved_project_still_evaluates(trained, tmp_path, capsys):
    root, run_dir = trained
    moved = tmp_path / "elsewhere"
    shutil.copytree(root, moved, symlinks=True)
    (moved / "runs/digits-eval/evaluation.json").unlink()
    code, _, err = evaluated(moved / "runs/digits-eval", root=moved, capsys=capsys)
    assert code == 0, err
    evaluation = json.loads((moved / "runs/digits-eval/evaluation.json").read_text(encoding="utf-8"))
    assert evaluation["metrics"]["accuracy"] == read_best(run_dir)["metrics"]["val_accuracy"]


def test_what_a_hostile_run_directory_names_is_refused(trained, tmp_path, capsys):
    root, _ = trained
    copy = tmp_path / "project"
    shutil.copytree(root, copy, symlinks=True)
    hostile = copy / "runs/digits-eval"
    best = json.loads((hostile / "best.json").read_text(encoding="utf-8"))

    # a spec directory outside the project: nothing is read or imported from there
    (hostile / "best.json").write_text(json.dumps({**best, "spec_dir": "../../../.."}), encoding="utf-8")
    code, _, err = evaluated(hostile, root=copy, capsys=capsys)
    assert code == 2 and "is outside the project" in err and "--root" in err

    # evaluation.json linked to a file of the user's: not written through
    (hostile / "best.json").write_text(json.dumps(best), encoding="utf-8")
    victim = tmp_path / "victim.txt"
    victim.write_text("mine\n", encoding="utf-8")
    (hostile / "evaluation.json").unlink(missing_ok=True)
    (hostile / "evaluation.json").symlink_to(victim)
    code, _, err = evaluated(hostile, root=copy, capsys=capsys)
    assert code == 2 and "evaluation.json: not a regular file of the run directory; not replaced" in err
    assert victim.read_text(encoding="utf-8") == "mine\n"

    # a recorded spec that is not valid is a located problem, not a traceback
    (hostile / "evaluation.json").unlink()
    text = (hostile / "spec.resolved.yaml").read_text(encoding="utf-8")
    (hostile / "spec.resolved.yaml").write_text(text.replace("epochs: 3", "epochs: many"), encoding="utf-8")
    code, _, err = evaluated(hostile, root=copy, capsys=capsys)
    assert code != 0 and "spec.resolved.yaml:" in err and "training.epochs" in err
    assert not (hostile / "evaluation.json").exists()


def test_predict_refuses_a_run_on_a_built_in_data_set(trained, capsys):
    """specc predict runs a checkpoint over files prepared as its preprocessing.json says: a run on scikit-learn's
    digits has no files to predict like and no such record, and is told so before anything starts."""
    root, run_dir = trained
    code = main(["predict", str(run_dir), str(root), "-o", str(root / "p.parquet"), "--root", str(root)])
    err = capsys.readouterr().err
    assert code == 2 and "the run trained on digits data; specc predict reads csv, parquet or jsonl" in err, err
    assert not (run_dir / "predict.py").exists() and not (root / "p.parquet").exists()


def digits_inputs():
    """scikit-learn's digits as the run's script prepares them (pixels / 16, 1x8x8), all 1797."""
    import numpy as np
    from sklearn.datasets import load_digits

    x, _ = load_digits(return_X_y=True)
    return (x / 16.0).astype(np.float32).reshape(-1, 1, 8, 8)


@pytest.mark.parametrize("fmt", ["torchscript", "onnx"])
def test_specc_export_writes_a_model_that_loads_without_specc_and_agrees(trained, fmt, capsys):
    """specc export (issue 20): the exported file, loaded here by torch.jit or onnxruntime alone, gives the checkpoint's
    model's outputs (built here from state.pt) on every digit; its preprocessing JSON says what the inputs are."""
    import numpy as np
    import torch
    from torch import nn

    root, run_dir = trained
    output = root / ("digits.pt" if fmt == "torchscript" else "digits.onnx")
    code = main(["export", str(run_dir), "--format", fmt, "-o", str(output), "--root", str(root)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert f"digits-eval: exported as {fmt}, loaded back without specc" in out
    assert re.search(r"checked     \d+ inputs, max \|difference\| \S+ \(<= 1e-5\)", out), out
    described = json.loads((root / "digits.preprocessing.json").read_text(encoding="utf-8"))
    assert described["model"] == output.name and described["format"] == fmt
    assert described["inputs"]["shape"] == [None, 1, 8, 8] and described["inputs"]["layout"] == "CHW"
    assert described["outputs"].startswith("logits, one per class")
    assert described["checked"]["max_abs_difference"] <= 1e-5

    best = read_best(run_dir)
    model = nn.Sequential(nn.Flatten(), nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))
    model.load_state_dict(torch.load(Path(best["checkpoint"], "state.pt"), weights_only=True)["model"])
    x = digits_inputs()
    with torch.no_grad():
        expected = model.eval()(torch.from_numpy(x)).numpy()
    if fmt == "torchscript":
        got = torch.jit.load(str(output))(torch.from_numpy(x)).detach().numpy()
    else:
        import onnxruntime

        got = onnxruntime.InferenceSession(str(output)).run(None, {"x": x})[0]
    np.testing.assert_allclose(got, expected, atol=1e-5)
    assert (run_dir / "export.py").is_file()


def test_export_refuses_a_format_of_the_other_framework_and_a_directory_in_the_way(trained, capsys):
    root, run_dir = trained
    code = main(["export", str(run_dir), "--format", "saved_model", "-o", str(root / "m"), "--root", str(root)])
    assert code == 2 and "the run trained a torch model; export it as torchscript or onnx" in capsys.readouterr().err
    (root / "taken.onnx").mkdir()
    code = main(["export", str(run_dir), "--format", "onnx", "-o", str(root / "taken.onnx"), "--root", str(root)])
    assert code == 2 and "taken.onnx: not a regular file; not replaced" in capsys.readouterr().err
