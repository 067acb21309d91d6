"""`specc report RUN_DIR` (one self-contained HTML page) and `specc results RUN_DIR --plot DIR` (PNG files).

The run directories are written here the way a compiled script and Ray Tune leave them: results.csv (lists as
JSON, empty cells for what a trial never reported), best.json, spec.resolved.yaml with the search space, and
Ray's `trial_<id>/result.json` (one JSON object per epoch, with Ray's bookkeeping keys) or `progress.csv`.
The page's figures are read back from the `Plotly.newPlot(id, data, layout, config)` calls in it.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
import subprocess
import sys

import pytest

from specc.cli import Exit, main
from specc.results.history import curves, parallel
from specc.results.plots import write_plots
from specc.results.report import BEST, write_report
from specc.results.run_dir import read_run
from specc.spec.errors import UsageError

pytest.importorskip("plotly")
pytest.importorskip("matplotlib")

SPACE = {
    "training.optimizer.lr": {"loguniform": [1.0e-4, 0.1]},
    "model.activation": {"choice": ["relu", "gelu"]},
    "model.hidden_sizes": {"choice": [[64], [128, 64], [256, 128]]},
    "dataset.batch_size": {"grid": [32, 64]},
}
TRIALS = [  # trial_id, status, lr, activation, hidden_sizes, batch size, val_accuracy per epoch (None: no history)
    ("ab12c_00000", "completed", 0.012, "relu", [128, 64], 32, [0.5, 0.8, 0.9, 0.93]),
    ("ab12c_00001", "stopped", 0.00011, "gelu", [64], 64, [0.2]),
    ("ab12c_00002", "error", 0.05, "relu", [256, 128], 32, None),
    ("ab12c_00003", "completed", 0.002, "gelu", [256, 128], 64, [0.6, 0.85, 0.95, 0.97]),
]
BEST_ID = "ab12c_00003"
RAY_BOOKKEEPING = {"timestamp": 1795448948, "done": False, "hostname": "vm", "node_ip": "192.0.2.2", "pid": 7}


def write_csv(path, header, rows) -> None:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)


def cell(value) -> str:
    if value is None:
        return ""
    return json.dumps(value) if isinstance(value, list) else str(value)


def epoch_metrics(accuracy: float) -> dict:
    return {"train_loss": round(2.5 * (1 - accuracy), 6), "val_loss": round(2.0 * (1 - accuracy), 6),
            "val_accuracy": accuracy}  # fmt: skip


def write_tune_run(
    root, trials=TRIALS, space=SPACE, best_id=BEST_ID, name="digits-asha", progress_csv=(), counted_from=1
):
    """A Tune run directory as a compiled script and Ray leave it; trials in `progress_csv` keep only progress.csv.
    `counted_from` 0: as a specc before issue 48 wrote it, its epochs from 0 (and best.json does not say)."""
    run_dir = root / name
    run_dir.mkdir(parents=True)
    paths = list(space)
    header = ["trial_id", "status", "epochs", *paths, "best_val_accuracy",
              "last_train_loss", "last_val_loss", "last_val_accuracy"]  # fmt: skip
    rows = []
    for trial_id, status, *values, history in trials:
        last = epoch_metrics(history[-1]) if history else {}
        best = max(history) if history else None
        rows.append([trial_id, status, len(history or []), *map(cell, values), cell(best),
                     *(cell(last.get(m)) for m in ("train_loss", "val_loss", "val_accuracy"))])  # fmt: skip
        if history is None:
            continue
        trial_dir = run_dir / f"trial_{trial_id}"
        trial_dir.mkdir()
        config = dict(zip(paths, values, strict=True))
        results = [
            {"epoch": epoch + counted_from, **epoch_metrics(accuracy), **RAY_BOOKKEEPING,
             "training_iteration": epoch + 1, "trial_id": trial_id, "time_total_s": 1.5 * (epoch + 1), "config": config}
            for epoch, accuracy in enumerate(history)
        ]  # fmt: skip
        if trial_id in progress_csv:
            keys = [key for key in results[0] if key != "config"]
            write_csv(trial_dir / "progress.csv", keys, [[r[k] for k in keys] for r in results])
        else:
            lines = "".join(json.dumps(result) + "\n" for result in results)
            (trial_dir / "result.json").write_text(lines, encoding="utf-8")
        (trial_dir / "params.json").write_text(json.dumps(config), encoding="utf-8")
    write_csv(run_dir / "results.csv", header, rows)
    best_row = next(row for row in trials if row[0] == best_id) if best_id else None
    if best_row:
        best = {
            "trial_id": best_id,
            "metric": "val_accuracy",
            "mode": "max",
            "config": dict(zip(paths, best_row[2:-1], strict=True)),
            "metrics": {"epoch": len(best_row[-1]) - 1 + counted_from, **epoch_metrics(best_row[-1][-1])},
            "checkpoint": str(run_dir / f"trial_{best_id}" / "checkpoint_000003"),
            "run_dir": str(run_dir),
            **({"epochs_counted_from": 1} if counted_from == 1 else {}),
        }
        (run_dir / "best.json").write_text(json.dumps(best, indent=2), encoding="utf-8")
        (run_dir / "best.yaml").write_text("specc: 1\nname: best\n", encoding="utf-8")
    spec = {"specc": 1, "name": name, "tune": {"metric": "val_accuracy", "mode": "max", "space": space}}
    (run_dir / "spec.resolved.yaml").write_text(json.dumps(spec), encoding="utf-8")  # JSON is YAML
    return run_dir


def write_train_run(root, name="digits-mlp", checkpoint_score=True, counted_from=1):
    """A training run's directory: epochs 1-4, the third the best (`counted_from` 0: as a specc before issue 48
    wrote it, epochs 0-3)."""
    run_dir = root / name
    run_dir.mkdir(parents=True)
    history = [0.7, 0.9, 0.96, 0.95]
    write_csv(run_dir / "results.csv", ["epoch", "train_loss", "val_loss", "val_accuracy"],
              [[epoch + counted_from, *epoch_metrics(a).values()] for epoch, a in enumerate(history)])  # fmt: skip
    kept = 2 if checkpoint_score else 3  # without run.checkpoint_score the last epoch is kept
    best = {"metrics": {"epoch": kept + counted_from, **epoch_metrics(history[kept])}, "checkpoint": None,
            "run_dir": str(run_dir), **({"epochs_counted_from": 1} if counted_from == 1 else {})}  # fmt: skip
    (run_dir / "best.json").write_text(json.dumps(best), encoding="utf-8")
    run = {
        "name": name,
        **({"checkpoint_score": {"metric": "val_accuracy", "mode": "max"}} if checkpoint_score else {}),
    }
    (run_dir / "spec.resolved.yaml").write_text(json.dumps({"specc": 1, "run": run}), encoding="utf-8")
    return run_dir


@pytest.fixture
def tune_run(tmp_path):
    return write_tune_run(tmp_path / "runs", progress_csv=("ab12c_00001",))


@pytest.fixture
def train_run(tmp_path):
    return write_train_run(tmp_path / "runs")


def report_of(run_dir, tmp_path, name="report.html") -> str:
    out = tmp_path / "out" / name
    assert write_report(run_dir, out) == str(out)
    return out.read_text(encoding="utf-8")


def figures(page: str) -> dict[str, tuple[list, dict]]:
    """div id -> (data, layout) of each Plotly.newPlot call in the page."""
    decoder = json.JSONDecoder()
    found = {}
    for match in re.finditer(r"Plotly\.newPlot\(\s*", page):
        at = match.end()
        div_id, at = decoder.raw_decode(page, at)
        data, at = decoder.raw_decode(page, re.compile(r"\s*,\s*").match(page, at).end())
        layout, _ = decoder.raw_decode(page, re.compile(r"\s*,\s*").match(page, at).end())
        found[div_id] = (data, layout)
    return found


def title(layout: dict) -> str:
    return re.sub(r"<[^>]+>", "", layout["title"]["text"])


def table_rows(page: str) -> list[str]:
    body = page.split('<table class="sortable">', 1)[1].split("</table>", 1)[0]
    return re.findall(r"<tr[^>]*>.*?</tr>", body.split("<tbody>", 1)[1])


# The page


def test_the_page_has_the_headline_and_the_best_trial(tune_run, tmp_path):
    page = report_of(tune_run, tmp_path)
    assert "<h1>digits-asha</h1>" in page
    assert "4 trials" in page
    for chip in ("2 completed", "1 stopped", "1 error"):
        assert chip in page
    assert "best by <b>val_accuracy</b> (max)" in page
    best = page.split('<section class="best">', 1)[1].split("</section>", 1)[0]
    assert BEST_ID in best and "0.97" in best and "at epoch 4" in best
    assert "<dt>lr</dt><dd>0.002</dd>" in best and "<dt>hidden_sizes</dt><dd>[256, 128]</dd>" in best
    assert "specc run " in best and "best.yaml" in best


def test_the_table_lists_every_trial_and_highlights_the_best(tune_run, tmp_path):
    rows = table_rows(report_of(tune_run, tmp_path))
    assert len(rows) == len(TRIALS)
    for row, trial in zip(rows, TRIALS, strict=True):
        assert trial[0] in row and trial[1] in row
    best = [row for row in rows if row.startswith('<tr class="best">')]
    assert len(best) == 1 and f"★ {BEST_ID}" in best[0]
    assert 'class="number missing"' not in rows[2] and 'class="missing"' in rows[2]  # the error never reported
    assert 'data-sort="0.002"' in best[0]


def test_learning_curves_one_figure_per_metric_the_tune_metric_first(tune_run, tmp_path):
    found = figures(report_of(tune_run, tmp_path))
    curve_ids = [key for key in found if key.startswith("curves-")]
    assert [title(found[key][1]) for key in curve_ids] == ["val_accuracy", "train_loss", "val_loss"]
    data, layout = found["curves-0"]
    assert layout["xaxis"]["title"]["text"] == "epoch"
    names = [trace["name"] for trace in data]  # the error trial has no history: no line; the best drawn last
    assert names == ["ab12c_00000", "ab12c_00001 (stopped)", f"{BEST_ID} ★ best"]
    best = data[-1]
    assert best["line"]["color"] == BEST and best["line"]["width"] > 3 * data[0]["line"]["width"] / 2
    assert best["x"] == [1, 2, 3, 4] and best["y"] == [0.6, 0.85, 0.95, 0.97]
    assert all(trace["line"]["color"] != BEST and trace.get("opacity", 1) < 1 for trace in data[:-1])
    assert "lr = 0.002" in best["hovertemplate"] and "hidden_sizes = [256, 128]" in best["hovertemplate"]
    assert data[1]["x"] == [1] and data[1]["y"] == [0.2]  # read from progress.csv


def test_a_trial_that_never_reported_is_named_and_drawn_nowhere(tune_run, tmp_path):
    page = report_of(tune_run, tmp_path)
    assert "No epochs reported by: ab12c_00002." in page
    assert "never reported val_accuracy): ab12c_00002." in page


def test_parallel_coordinates_one_axis_per_sampled_path_then_the_metric(tune_run, tmp_path):
    data, _ = figures(report_of(tune_run, tmp_path))["parallel-coordinates"]
    (trace,) = data
    assert trace["type"] == "parcoords"
    dims = trace["dimensions"]
    assert [d["label"] for d in dims] == ["lr (log)", "activation", "hidden_sizes", "batch_size", "best val_accuracy"]
    kept = [t for t in TRIALS if t[-1]]  # the error trial has no metric: left out
    lr, activation, hidden, batch, metric = dims
    assert lr["values"] == pytest.approx([math.log10(t[2]) for t in kept])
    assert lr["range"] == pytest.approx([-4, -1])  # the space searched, loguniform [1e-4, 0.1]
    assert lr["ticktext"] == ["0.0001", "0.001", "0.01", "0.1"] and lr["tickvals"] == pytest.approx([-4, -3, -2, -1])
    assert activation["ticktext"] == ["relu", "gelu"] and activation["values"] == [0, 1, 1]  # the spec's order
    assert hidden["ticktext"] == ["[64]", "[128, 64]", "[256, 128]"] and hidden["values"] == [1, 0, 2]
    assert batch["values"] == [32, 64, 64] and batch["ticktext"] == ["32", "64"]
    assert metric["values"] == [0.93, 0.2, 0.97]
    assert "★ 0.97" in metric["ticktext"]
    assert trace["line"]["color"] == [0.93, 0.2, 0.97] and trace["line"]["showscale"] is True


def test_a_minimised_metric_reverses_the_colours_so_the_best_is_bright(tmp_path):
    view = parallel(read_run(write_tune_run(tmp_path)))
    assert view.mode == "max" and view.best == 2 and view.trials[view.best] == BEST_ID
    spec = tmp_path / "digits-asha" / "spec.resolved.yaml"
    document = json.loads(spec.read_text())
    document["tune"]["mode"] = "min"
    spec.write_text(json.dumps(document))
    os.remove(tmp_path / "digits-asha" / "best.json")
    page = report_of(tmp_path / "digits-asha", tmp_path)
    (trace,) = figures(page)["parallel-coordinates"][0]
    assert trace["line"]["reversescale"] is True


def test_without_a_spec_a_parameter_spread_over_decades_is_drawn_on_a_log_scale(tmp_path):
    run_dir = write_tune_run(tmp_path)
    os.remove(run_dir / "spec.resolved.yaml")
    axes = {axis.path: axis for axis in parallel(read_run(run_dir)).axes}
    assert axes["training.optimizer.lr"].log and axes["training.optimizer.lr"].label == "lr (log)"
    assert not axes["dataset.batch_size"].log
    assert axes["model.activation"].categories == ("gelu", "relu")  # no spec order: sorted


def test_a_training_run_gets_curves_per_metric_and_no_parallel_coordinates(train_run, tmp_path):
    page = report_of(train_run, tmp_path)
    found = figures(page)
    assert "parallel-coordinates" not in found and "Parcoords" not in page
    assert [title(layout) for _, layout in found.values()] == ["val_accuracy", "train_loss", "val_loss"]
    line, star = found["curves-0"][0]
    assert line["x"] == [1, 2, 3, 4] and line["y"] == [0.7, 0.9, 0.96, 0.95]
    assert star["name"] == "best epoch" and star["x"] == [3] and star["y"] == [0.96]
    assert "Ray Train run · 4 epochs" in page
    rows = table_rows(page)
    assert len(rows) == 4 and rows[2].startswith('<tr class="best">') and "★ 3" in rows[2]


def test_a_training_run_without_checkpoint_score_marks_its_last_epoch(tmp_path):
    page = report_of(write_train_run(tmp_path, checkpoint_score=False), tmp_path)
    assert "The epoch kept" in page and "the last one is kept" in page
    _, star = figures(page)["curves-0"][0]
    assert star["name"] == "last epoch (kept)" and star["x"] == [4]


def test_categorical_values_of_any_kind_and_hostile_text_are_escaped(tmp_path):
    hostile = '</script><script>alert("x")</script>'
    space = {"model.activation": {"choice": ["relu", hostile]}, "training.seed": {"choice": [True, False]}}
    trials = [("t_00000", "completed", "relu", True, [0.5, 0.6]), ("t_00001", "completed", hostile, False, [0.7])]
    page = report_of(write_tune_run(tmp_path, trials, space, best_id="t_00001"), tmp_path)
    assert "<script>alert" not in page
    assert page.count("</script>") == page.count("<script")  # every script the page opens, and no other, closes
    (trace,) = figures(page)["parallel-coordinates"][0]
    assert trace["dimensions"][1]["ticktext"] == ["true", "false"] and trace["dimensions"][1]["values"] == [0, 1]
    assert trace["dimensions"][0]["ticktext"][1] == '&lt;/script&gt;&lt;script&gt;alert("x")&lt;/script&gt;'


def test_a_cut_off_result_line_is_skipped(tune_run):
    path = tune_run / f"trial_{BEST_ID}" / "result.json"
    path.write_text(path.read_text() + '{"epoch": 5, "val_acc', encoding="utf-8")
    (best,) = [line for line in curves(read_run(tune_run)) if line.best]
    assert [epoch["epoch"] for epoch in best.epochs] == [1, 2, 3, 4]


def test_a_trial_that_went_back_is_drawn_along_the_run_that_ended_it(tune_run):
    """The trial's first run reported epochs 1-4; a retry from its checkpoint after epoch 2 reported epochs 3 and 4
    again, and a second retry epoch 3 only: the curve is epochs 1-2 of the first run and epoch 3 of the last."""
    path = tune_run / f"trial_{BEST_ID}" / "result.json"
    first = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    again = [{**first[epoch], "val_accuracy": 0.5 + epoch / 10} for epoch in (2, 3)] + [
        {**first[2], "val_accuracy": 0.1}
    ]
    path.write_text("".join(json.dumps(result) + "\n" for result in first + again), encoding="utf-8")
    (best,) = [line for line in curves(read_run(tune_run)) if line.best]
    assert [(epoch["epoch"], epoch["val_accuracy"]) for epoch in best.epochs] == [(1, 0.6), (2, 0.85), (3, 0.1)]


def test_a_search_with_no_trials_still_reports(tmp_path):
    run_dir = write_tune_run(tmp_path, trials=[], best_id=None)
    page = report_of(run_dir, tmp_path)
    assert "0 trials" in page and "No trial reported an epoch." in page and "No best trial" in page


def test_the_page_fetches_nothing(tune_run, tmp_path):
    page = report_of(tune_run, tmp_path)
    outside_scripts = re.sub(r"<script[^>]*>.*?</script>", "", page, flags=re.DOTALL)
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", outside_scripts, re.IGNORECASE)
    assert not re.search(r"<(link|img|iframe|object|embed)\b", outside_scripts, re.IGNORECASE)
    assert "@import" not in page and "url(http" not in outside_scripts
    assert not re.search(r"<script[^>]*\bsrc=", page)
    import plotly.offline

    assert page.count(plotly.offline.get_plotlyjs()[:300]) == 1  # plotly.js once, inlined


def test_two_reports_of_the_same_run_are_byte_identical(tune_run, tmp_path):
    first = report_of(tune_run, tmp_path, "a.html")
    assert report_of(tune_run, tmp_path, "b.html") == first
    assert str(tune_run) in first  # the run named by its absolute path, wherever the page is opened


def test_a_directory_that_is_not_a_run_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match=r"no results\.csv"):
        write_report(tmp_path, tmp_path / "report.html")
    with pytest.raises(UsageError, match="no such run directory"):
        write_plots(tmp_path / "nope", tmp_path / "plots")


# The commands


def test_specc_report_writes_run_dir_report_html_and_prints_its_path(tune_run, capsys):
    assert main(["report", str(tune_run)]) == Exit.OK
    assert capsys.readouterr().out == f"{tune_run / 'report.html'}\n"
    assert (tune_run / "report.html").stat().st_size > 1_000_000  # plotly.js is in it
    assert [p.name for p in tune_run.iterdir() if p.name.startswith(".report.html")] == []  # no temporary left


def test_specc_report_output_option(tune_run, tmp_path, capsys):
    out = tmp_path / "share" / "asha.html"
    assert main(["report", str(tune_run), "-o", str(out)]) == Exit.OK
    assert capsys.readouterr().out == f"{out}\n" and out.is_file()
    assert main(["report", str(tune_run), "-o", str(tmp_path)]) == Exit.USAGE
    assert "is a directory" in capsys.readouterr().err


def run_cli(*args, prelude: str = ""):
    code = f"import sys\n{prelude}\nfrom specc.cli import main\nsys.exit(main({list(args)!r}))"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)


def test_specc_report_on_a_directory_that_is_not_a_run(tmp_path):
    result = run_cli("report", str(tmp_path))
    assert result.returncode == Exit.USAGE and "Traceback" not in result.stderr
    assert result.stderr == (
        f"specc report: error: {tmp_path}: no results.csv: the run has not finished, or this is not a run directory\n"
    )


@pytest.mark.parametrize(
    ("args", "missing", "message"),
    [
        (["report", "{run}"], "plotly",
         "specc report: error: writing a report needs plotly: pip install 'specc[report]'"),
        (["results", "{run}", "--plot", "{run}/plots"], "matplotlib",
         "specc results: error: plotting needs matplotlib: pip install 'specc[report]'"),
    ],
)  # fmt: skip
def test_a_missing_plotting_library_names_the_extra_to_install(tune_run, args, missing, message):
    args = [arg.format(run=tune_run) for arg in args]
    result = run_cli(*args, prelude=f"sys.modules[{missing!r}] = None  # as if it were not installed")
    assert result.returncode == Exit.USAGE, result.stderr
    assert result.stderr.splitlines() == [message]


def is_png(path) -> bool:
    with open(path, "rb") as handle:
        return handle.read(8) == b"\x89PNG\r\n\x1a\n" and os.path.getsize(path) > 10_000


def test_results_plot_writes_the_curves_and_parallel_coordinates_as_png(tune_run, tmp_path, capsys):
    out = tmp_path / "plots"
    assert main(["results", str(tune_run), "--plot", str(out)]) == Exit.OK
    printed = capsys.readouterr().out.splitlines()
    names = ["curves_val_accuracy.png", "curves_train_loss.png", "curves_val_loss.png", "parallel_coordinates.png"]
    assert printed[-4:] == [str(out / name) for name in names]
    assert printed[0].startswith(f"{tune_run}: 4 trials")  # the table, as without --plot
    assert sorted(os.listdir(out)) == sorted(names)
    assert all(is_png(out / name) for name in names)


def test_results_plot_beside_json_keeps_stdout_one_document(tune_run, tmp_path, capsys):
    assert main(["results", str(tune_run), "--format", "json", "--plot", str(tmp_path / "plots")]) == Exit.OK
    captured = capsys.readouterr()
    assert json.loads(captured.out)["kind"] == "tune"
    assert captured.err.splitlines()[-1] == str(tmp_path / "plots" / "parallel_coordinates.png")


def test_a_training_run_plots_its_curves_only(train_run, tmp_path):
    written = write_plots(train_run, tmp_path / "plots")
    assert [os.path.basename(path) for path in written] == [
        "curves_val_accuracy.png", "curves_train_loss.png", "curves_val_loss.png"
    ]  # fmt: skip
    assert all(is_png(path) for path in written)


def test_many_trials_keep_the_legends_short(tmp_path):
    trials = [(f"m_{i:05d}", "completed", 10 ** (-4 + 3 * i / 29), "relu", [64], 32, [0.3 + i / 100, 0.4 + i / 60])
              for i in range(30)]  # fmt: skip
    run_dir = write_tune_run(tmp_path, trials, best_id="m_00029")
    data, _ = figures(report_of(run_dir, tmp_path))["curves-0"]
    assert [trace["name"] for trace in data if trace["showlegend"]] == ["m_00029 ★ best"]
    assert len(write_plots(run_dir, tmp_path / "plots")) == 4


def test_plot_into_a_file_is_a_usage_error(tune_run, capsys):
    assert main(["results", str(tune_run), "--plot", str(tune_run / "results.csv")]) == Exit.USAGE
    assert "not a directory; --plot takes the directory" in capsys.readouterr().err


def test_reading_the_plots_data_needs_no_pandas(tune_run):
    code = (
        "import sys\nfrom specc.results.history import curves, parallel\nfrom specc.results.run_dir import read_run\n"
        f"run = read_run({str(tune_run)!r}); curves(run); parallel(run)\n"
        "print(sorted(m for m in ('pandas', 'plotly', 'matplotlib', 'ray', 'torch') if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip() == "[]", result.stderr


def test_the_figures_survive_a_round_trip_through_csv(tmp_path):
    """A results.csv the script writes with Python's csv module reads back into the same axes (lists quoted)."""
    run_dir = write_tune_run(tmp_path)
    rows = list(csv.reader(io.StringIO((run_dir / "results.csv").read_text())))
    assert rows[1][5] == "[128, 64]"
    assert parallel(read_run(run_dir)).axes[2].categories == ("[64]", "[128, 64]", "[256, 128]")


@pytest.mark.parametrize(
    ("entry", "values", "log", "span"),
    [
        ({"loguniform": [1.0e-4, 0.1]}, [1.0e-3, 1.0e-2], True, (-4, -1)),
        ({"qloguniform": [1.0e-4, 0.1, 1.0e-4]}, [1.0e-3, 1.0e-2], True, (-4, -1)),
        ({"lograndint": [1, 1000]}, [10, 100], True, (0, 3)),
        ({"uniform": [0.0, 1.0]}, [0.2, 0.3], False, (0.0, 1.0)),
        ({"randint": [1, 100]}, [10, 20], False, (1, 100)),
        ({"randn": [0.5, 0.1]}, [0.2, 0.3], False, None),  # [mean, sd]: not bounds
        ({"choice": [0.1, 0.2]}, [0.1, 0.2], False, None),
    ],
)
def test_each_distribution_of_the_spec_gets_its_scale_and_the_range_searched(entry, values, log, span):
    """Log scale and axis range come from the spec's own distribution classes, for every kind."""
    from specc.results.history import _parameter_axis

    axis = _parameter_axis("training.x", "x", values, entry)
    assert axis.log is log and axis.label == ("x (log)" if log else "x")
    if span is not None:
        assert (axis.low, axis.high) == pytest.approx(span, abs=0.3)


def test_a_parameter_only_some_trials_have_crosses_its_axis_below_the_numbers():
    """A conditional space's momentum: blank in the adam trials' rows (results.csv), on a numeric axis all the same."""
    from specc.results.history import _parameter_axis

    axis = _parameter_axis("training.optimizer.momentum", "momentum", [0.6, None, 0.9], {"uniform": [0.5, 0.99]})
    assert axis.ticks[0][1] == "-" and axis.values[1] == axis.low < 0.5
    assert axis.values[0] == 0.6 and axis.values[2] == 0.9 and not axis.categories
