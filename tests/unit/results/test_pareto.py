"""The Pareto front of a multi-objective search (tune.metric a list): specc's own computation and the compiled
scripts' (specc_runtime.pareto_front), held to the same hand-made cases; and a run directory of such a
search read back by `specc results`, the report and --plot."""

from __future__ import annotations

import json
import math
import os
import random
from pathlib import Path

import pytest

from specc.results.pareto import pareto_front
from specc.results.run_dir import format_json, format_text, read_run


def script_pareto_front():
    """The compiled scripts' pareto_front: specc_runtime's, which every multi-objective search runs."""
    import specc_runtime

    return specc_runtime.pareto_front


FRONTS = [pareto_front, script_pareto_front()]
NAN, INF = math.nan, math.inf

CASES = [
    # (points, modes, front): accuracy up, size down
    ([[0.9, 100], [0.8, 50], [0.7, 200], [0.95, 300]], ["max", "min"], [0, 1, 3]),
    # equal points dominate neither: both are on the front; one equal in one objective and worse in the other is not
    ([[0.9, 100], [0.9, 100], [0.9, 120], [0.5, 10]], ["max", "min"], [0, 1, 3]),
    # NaN, infinity, a missing value and a whole point missing (a diverged trial) are on no front, and dominate none
    ([[NAN, 1], [0.5, 100], [INF, 0], [None, 0], None, [0.4, 200]], ["max", "min"], [1]),
    # every direction: both minimised
    ([[1, 1], [2, 0], [0, 2], [2, 2], [1, 1]], ["min", "min"], [0, 1, 2, 4]),
    # both maximised, three objectives
    ([[1, 1, 1], [1, 1, 2], [2, 0, 0], [0, 0, 0]], ["max", "max", "max"], [1, 2]),
    # nothing to rank
    ([], ["max", "min"], []),
    ([[NAN, NAN]], ["max", "min"], []),
]


@pytest.mark.parametrize("front", FRONTS, ids=["specc", "compiled script"])
@pytest.mark.parametrize(("points", "modes", "expected"), CASES)
def test_the_front_is_every_point_no_other_dominates(front, points, modes, expected):
    assert front(points, modes) == expected


def _dominated(points, modes, i):
    signs = [1 if mode == "max" else -1 for mode in modes]
    a = [s * v for s, v in zip(signs, points[i], strict=True)]
    for j, other in enumerate(points):
        b = [s * v for s, v in zip(signs, other, strict=True)]
        if j != i and all(y >= x for x, y in zip(a, b, strict=True)) and b != a:
            return True
    return False


def test_both_agree_with_the_definition_on_random_points_with_many_ties():
    draw = random.Random(18)
    script = FRONTS[1]
    for _ in range(200):
        modes = [draw.choice(["min", "max"]) for _ in range(draw.choice([2, 3]))]
        points = [[float(draw.randint(0, 4)) for _ in modes] for _ in range(draw.randint(1, 12))]
        expected = [i for i in range(len(points)) if not _dominated(points, modes, i)]
        assert pareto_front(points, modes) == expected == script(points, modes)


# A multi-objective run directory, as the compiled script writes it

MULTI_CSV = """\
trial_id,status,epochs,model.hidden_sizes.0,training.optimizer.lr,pareto,last_train_loss,last_val_loss,last_val_accuracy,last_num_parameters
a0,completed,3,4,0.019,False,1.87,1.88,0.2312,310
a1,completed,3,4,0.023,True,1.83,1.84,0.2535,310
a2,completed,3,13,0.008,True,0.69,0.52,0.9136,985
a3,completed,3,45,0.0058,True,0.44,0.36,0.9304,3385
a4,diverged,2,75,0.3,False,nan,nan,0.1,5635
a5,completed,3,75,0.0025,False,0.84,0.62,0.9081,5635
"""


def multi_best(run_dir: str) -> dict:
    member = lambda trial, size, acc: {  # noqa: E731
        "trial_id": trial, "config": {"model.hidden_sizes.0": size}, "metrics": {"val_accuracy": acc},
        "checkpoint": os.path.join(run_dir, f"trial_{trial}", "checkpoint_000000"),
    }  # fmt: skip
    front = [member("a3", 45, 0.9304), member("a2", 13, 0.9136), member("a1", 4, 0.2535)]
    return {"status": "completed", **front[0], "metric": ["val_accuracy", "num_parameters"], "mode": ["max", "min"],
            "front": front, "diverged": [], "run_dir": run_dir}  # fmt: skip


def write_multi(run_dir: Path, csv_text: str = MULTI_CSV) -> str:
    run_dir.mkdir(parents=True)
    (run_dir / "results.csv").write_text(csv_text, encoding="utf-8")
    (run_dir / "best.json").write_text(json.dumps(multi_best(str(run_dir))), encoding="utf-8")
    (run_dir / "best.yaml").write_text("specc: 1\nname: x\n", encoding="utf-8")
    return str(run_dir)


def test_a_multi_objective_run_reads_its_front_without_warnings(tmp_path):
    results = read_run(write_multi(tmp_path / "run"))
    assert results.warnings == []  # metric and mode lists are what best.json holds: no W308
    assert results.objectives == (("val_accuracy", "max"), ("num_parameters", "min"))
    assert results.metric is None and "pareto" not in results.space
    assert [results.rows[i]["trial_id"] for i in results.front] == ["a3", "a2", "a1"]  # best.json's order
    assert results.rows[results.best_row]["trial_id"] == "a3"
    document = json.loads(format_json(results))
    assert document["objectives"] == [["val_accuracy", "max"], ["num_parameters", "min"]] and document["front"] == [
        3,
        2,
        1,
    ]


def test_the_text_lists_the_front_with_each_member_s_objectives_and_config(tmp_path):
    text = format_text(read_run(write_multi(tmp_path / "run")))
    assert "Pareto front: 3 trials (pareto true), by their last val_accuracy (max) and num_parameters (min)" in text
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Pareto front"))
    assert lines[start + 1 : start + 4] == [
        "* trial a3: val_accuracy 0.9304, num_parameters 3385; hidden_sizes.0 45, lr 0.0058",
        "  trial a2: val_accuracy 0.9136, num_parameters 985; hidden_sizes.0 13, lr 0.008",
        "  trial a1: val_accuracy 0.2535, num_parameters 310; hidden_sizes.0 4, lr 0.023",
    ]
    assert "retrain * (the front's first by val_accuracy): specc run" in text


def test_without_a_pareto_column_the_front_is_computed_from_the_last_values(tmp_path):
    header, *rows = MULTI_CSV.splitlines()
    drop = header.split(",").index("pareto")
    csv_text = "\n".join(",".join(c for i, c in enumerate(line.split(",")) if i != drop) for line in [header, *rows])
    results = read_run(write_multi(tmp_path / "run", csv_text + "\n"))
    assert [results.rows[i]["trial_id"] for i in results.front] == ["a3", "a2", "a1"]


def test_a_pareto_mark_the_last_values_contradict_is_a_w309(tmp_path):
    results = read_run(
        write_multi(
            tmp_path / "run", MULTI_CSV.replace("a5,completed,3,75,0.0025,False", "a5,completed,3,75,0.0025,True")
        )
    )
    assert [problem.code for problem in results.warnings] == ["W309"]
    assert "marks trials a1, a2, a3, a5 as the Pareto front, but their last values put a1, a2, a3 on it" in str(
        results.warnings[0]
    )


def test_the_report_and_the_plots_draw_the_front(tmp_path):
    pytest.importorskip("plotly")
    pytest.importorskip("matplotlib")
    from specc.results.plots import write_plots
    from specc.results.report import write_report

    run_dir = write_multi(tmp_path / "run")
    page = Path(write_report(run_dir, tmp_path / "report.html")).read_text(encoding="utf-8")
    assert 'id="pareto-front"' in page
    assert "Pareto front of <b>val_accuracy</b> (max) and <b>num_parameters</b> (min): 3 trials" in page
    # the front's trace: its members in val_accuracy order; the dominated ones (a0, a5; a4 diverged) apart
    assert '"name":"Pareto front","text":["a1","a2","a3"]' in page
    assert '"name":"dominated","text":["a0","a4","a5"]' in page
    written = write_plots(run_dir, tmp_path / "plots")
    assert os.path.basename(written[-1]) == "pareto_front.png" and os.path.getsize(written[-1]) > 10_000
