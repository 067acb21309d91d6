"""`specc report` of a real search, opened in a real headless Chromium (Debian's, driven by playwright).

A small ASHA search (digits MLP, 2 samples x a 2-value grid = 4 trials of 3 epochs, a log-scaled lr and a
categorical layer size) runs on the session Ray; `specc report` writes its page; Chromium loads it from disk
with every request routed and recorded. The page must load with no console error and no page error, ask for
nothing but file: and data: URLs, and draw its plots: a learning curve per metric with a line per trial, and
the parallel coordinates (WebGL) with an axis per sampled path. The full-page screenshot is kept at
/tmp/specc-report-screenshot.png for a person to look at.
"""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest

from .browser import ARGS, chromium  # noqa: F401  (a fixture)
from .conftest import read_best, run_spec, specc_cli

# In turn (tests/e2e/conftest.py): a browser of its own; tests/unit checks the report's HTML and data every time
pytestmark = [pytest.mark.slow, pytest.mark.in_turn(4)]

SCREENSHOT = Path("/tmp/specc-report-screenshot.png")
SPEC = """\
specc: 1
name: report-asha
framework: torch
model: {type: mlp, hidden_sizes: [32], activation: relu, dropout: 0.0}
dataset: {type: digits, validation_fraction: 0.2, batch_size: 64, shuffle_seed: 0}
training:
  epochs: 3
  optimizer: {type: sgd, lr: 0.05, momentum: 0.9}
  metrics: [accuracy]
  seed: 0
  checkpoint_every: 1
scaling: {num_workers: 1, resources_per_worker: {CPU: 1}}
run: {checkpoints_to_keep: 1, max_failures: 0}
tune:
  metric: val_accuracy
  mode: max
  num_samples: 2
  max_concurrent_trials: 2
  search: {type: random, seed: 3}
  space:
    training.optimizer.lr: {loguniform: [1.0e-3, 0.3]}
    model.hidden_sizes: {choice: [[16], [32, 16]]}
    dataset.batch_size: {grid: [32, 64]}
scheduler: {type: asha, grace_period: 1, reduction_factor: 3}
"""
AXES = ["lr (log)", "hidden_sizes", "batch_size", "best val_accuracy"]
METRICS = ["val_accuracy", "train_loss", "val_loss"]


@pytest.fixture(scope="module")
def report(tmp_path_factory, local_ray):
    """(run_dir, report.html) of a finished 4-trial search, the page written by the `specc report` command."""
    root = tmp_path_factory.mktemp("report")
    spec = root / "report-asha.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    result = run_spec(spec, storage_path=root / "runs")
    out = root / "page" / "report.html"
    done = specc_cli("report", result.run_dir, "-o", out, cwd=root, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{out}\n"
    return Path(result.run_dir), out


@pytest.fixture(scope="module")
def browser(chromium):  # noqa: F811
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium, args=ARGS)
        try:
            yield launched
        finally:
            launched.close()


def test_the_report_loads_offline_with_no_errors_and_draws_its_plots(report, browser, tmp_path):
    run_dir, out = report
    best = read_best(run_dir)["trial_id"]
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    requests, refused, problems = [], [], []

    def route(handler):
        url = handler.request.url
        requests.append(url)
        if url.startswith(("file:", "data:")):
            handler.continue_()
        else:
            refused.append(url)
            handler.abort()

    page.route("**/*", route)  # every request the page makes passes here
    page.on("console", lambda message: problems.append(f"console {message.type}: {message.text}")
            if message.type == "error" else None)  # fmt: skip
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.goto(out.as_uri(), wait_until="load")
    page.wait_for_function(
        "n => document.querySelectorAll('.js-plotly-plot .main-svg').length >= n", arg=len(METRICS) + 1, timeout=30_000
    )
    page.wait_for_timeout(500)  # the parcoords' WebGL lines are drawn a frame after its SVG

    drawn = page.evaluate(
        """() => ({
          plots: [...document.querySelectorAll('.js-plotly-plot')].map(d => d.id),
          titles: [...document.querySelectorAll('[id^=curves-] .gtitle')].map(e => e.textContent),
          lines: [...document.querySelectorAll('[id^=curves-]')]
            .map(d => d.querySelectorAll('.scatterlayer .trace').length),
          legend: [...document.querySelectorAll('#curves-0 .legendtext')].map(e => e.textContent),
          axes: [...document.querySelectorAll('#parallel-coordinates .axis-title')].map(e => e.textContent),
          canvases: document.querySelectorAll('#parallel-coordinates canvas').length,
          rows: document.querySelectorAll('table.sortable tbody tr').length,
          best: [...document.querySelectorAll('tr.best')].map(r => r.cells[0].textContent),
        })"""
    )
    assert drawn["plots"] == ["curves-0", "curves-1", "curves-2", "parallel-coordinates"]
    assert drawn["titles"] == METRICS
    assert drawn["lines"] == [4, 4, 4]  # a line per trial in every curve
    assert drawn["legend"][0] == f"{best} ★ best" and len(drawn["legend"]) == 4
    assert drawn["axes"] == AXES
    assert drawn["canvases"] >= 1
    assert drawn["rows"] == 4 and drawn["best"] == [f"★ {best}"]

    # the table sorts: by best_val_accuracy, twice (highest first), the best trial comes first
    header = page.locator("th", has_text="best_val_accuracy")
    header.click()
    header.click()
    assert page.locator("table.sortable tbody tr").first.get_attribute("class") == "best"

    assert problems == []
    assert requests and refused == [], refused  # the page itself came from disk; nothing else was asked for

    shot = tmp_path / "report.png"
    page.screenshot(path=str(shot), full_page=True)
    shutil.copyfile(shot, SCREENSHOT)
    # Drawn, not only laid out: the best trial's red inside the plot areas. For the parallel coordinates, the
    # region from the first axis to the last (the colour bar, red at its top, lies beyond); for a curve, the
    # traces' own layer (the legend's red sample lies outside it).
    titles = [title.bounding_box() for title in page.locator("#parallel-coordinates .axis-title").all()]
    plot = page.locator("#parallel-coordinates").bounding_box()
    left, right = titles[0]["x"] + titles[0]["width"] / 2, titles[-1]["x"] + titles[-1]["width"] / 2
    top = titles[0]["y"] + titles[0]["height"]
    between = {"x": left, "y": top, "width": right - left, "height": plot["y"] + plot["height"] - top}
    assert red_pixels(page.screenshot(clip=between)) > 20  # the WebGL lines (1 px), the best one red; undrawn: 0
    assert red_pixels(page.locator("#curves-0 .scatterlayer").screenshot()) > 100
    page.close()


def red_pixels(png: bytes) -> int:
    """Pixels close to the best trial's red (#d62728)."""
    import numpy as np
    from PIL import Image

    with Image.open(io.BytesIO(png)) as image:
        r, g, b = np.asarray(image.convert("RGB"), np.int16).reshape(-1, 3).T  # getdata: deprecated in Pillow 12
        return int(((r > 170) & (g < 100) & (b < 100)).sum())
