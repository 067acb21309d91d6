"""What `specc run --quiet` shows a person (issues 7 and 16): one screen that says what was best and where the
artefacts are, and nothing else: no dashboard line, no epoch lines, nothing of Ray's. And what --verbose adds: Ray's
own lines, live, as well as in ray.log. The screen after the progress lines is checked in tests/e2e/test_console.py,
on the README's main command."""

from __future__ import annotations

import pytest

from .conftest import RAY_FORWARDED, specc_cli

# CI runs this module in turn (share 2, tests/e2e/conftest.py): test_console checks the same screen and ray.log
pytestmark = [pytest.mark.slow, pytest.mark.in_turn(2)]

SPEC = """\
specc: 1
name: shown
framework: torch
model: {type: mlp, hidden_sizes: [16]}
dataset: {type: iris, batch_size: 16}
training: {epochs: 2, metrics: [accuracy], checkpoint_every: 1}
scaling: {num_workers: 1}
run: {checkpoint_score: {metric: val_accuracy, mode: max}}
"""


def test_a_quiet_run_shows_the_summary_screen_alone_and_a_verbose_one_rays_lines(tmp_path, spec_file):
    spec = spec_file(SPEC)
    storage = tmp_path / "runs"

    done = specc_cli("run", spec, "--storage-path", storage, "--quiet", cwd=tmp_path, timeout=240)

    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout.strip().splitlines()
    assert len(out) == 7, done.stdout
    assert out[-7].startswith("shown: done in ") and out[-6] == ""
    assert out[-5].startswith("  best epoch  ") and out[-5].endswith(" by val_accuracy")
    assert out[-4].startswith("  metrics     train_loss ")
    files = "results.csv, best.json, script.py, specc_runtime.py, spec.resolved.yaml, ray.log"
    assert out[-3] == f"  run dir     {storage / 'shown'} ({files})"
    assert out[-2].startswith(f"  checkpoint  {storage / 'shown'}/checkpoint_")
    shown = storage / "shown"
    assert out[-1] == f"  more        specc results {shown}; specc report {shown}; specc evaluate {shown}"
    assert "\033[" not in done.stdout  # not a terminal: no colour
    assert "Reporting training result" not in done.stdout + done.stderr  # Ray's own lines are in ray.log (issue 16)
    assert done.stderr == "", done.stderr

    # Resumed with --verbose: Ray's lines on the console as they come (its processes' and the driver's records), and
    # ray.log appended to, not replaced
    log = shown / "ray.log"
    first = log.read_text(encoding="utf-8")
    assert "(TrainController pid=" in first
    again = specc_cli("run", spec, "--storage-path", storage, "--resume", "--verbose", cwd=tmp_path, timeout=240)
    assert again.returncode == 0, again.stderr[-3000:]
    forwarded = [line for line in (again.stdout + again.stderr).splitlines() if RAY_FORWARDED.match(line)]
    assert any("TrainController pid=" in line or "RayTrainWorker pid=" in line for line in forwarded), again.stderr
    assert "Started a local Ray instance" in again.stderr
    grown = log.read_text(encoding="utf-8")
    assert grown.startswith(first) and len(grown) > len(first)
