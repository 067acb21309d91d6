"""The terminal: the one-screen summary `specc run` ends with, colour only where it belongs (a terminal, no
NO_COLOR), and shell completion from the CLI's own parser (shtab)."""

from __future__ import annotations

import io
import json
import shlex
import subprocess
import sys

import pytest

from specc import cli
from specc.read import terminal
from specc.results.run_dir import read_run
from specc.results.summary import summary


def write_run(directory, rows: str, best: dict):
    directory.mkdir(parents=True)
    (directory / "results.csv").write_text(rows)
    (directory / "best.json").write_text(json.dumps(best))
    (directory / "script.py").write_text("")
    (directory / "specc_runtime.py").write_text("")  # the runtime the script imports: the run's files list both
    return read_run(directory)


def test_a_training_run_summary(tmp_path):
    run = write_run(
        tmp_path / "digits-mlp",
        "epoch,train_loss,val_loss,val_accuracy\n1,1.0,0.9,0.5\n2,0.5,0.4,0.91234\n",
        {"metrics": {"epoch": 2, "train_loss": 0.5, "val_loss": 0.4, "val_accuracy": 0.91234},
         "checkpoint": str(tmp_path / "digits-mlp" / "checkpoint_1"), "run_dir": str(tmp_path / "digits-mlp"),
         "epochs_counted_from": 1},
    )  # fmt: skip
    text = summary(run, 12.34)
    assert text.splitlines()[0] == "digits-mlp: done in 12.3 s"
    assert "  best epoch  2\n" in text  # no run.checkpoint_score: no "by <metric>"
    assert "  metrics     train_loss 0.5, val_loss 0.4, val_accuracy 0.9123" in text
    assert f"  run dir     {tmp_path / 'digits-mlp'} (results.csv, best.json, script.py, specc_runtime.py)" in text
    assert f"  checkpoint  {tmp_path / 'digits-mlp' / 'checkpoint_1'}" in text
    run_dir = tmp_path / "digits-mlp"
    assert f"  more        specc results {run_dir}; specc report {run_dir}; specc evaluate {run_dir}\n" in text
    assert "\033[" not in text
    assert summary(run, 1.0, color=True).startswith("\033[1mdigits-mlp: done")


def test_a_search_summary_counts_trials_and_names_the_best(tmp_path):
    run = write_run(
        tmp_path / "asha",
        "trial_id,status,epochs,training.optimizer.lr,best_val_accuracy,last_val_accuracy\n"
        "a_00000,completed,4,0.01,0.9,0.9\na_00001,stopped,1,0.0001,0.2,0.2\na_00002,completed,4,0.03,0.95,0.95\n",
        {"trial_id": "a_00002", "metric": "val_accuracy", "mode": "max", "config": {"training.optimizer.lr": 0.03},
         "metrics": {"epoch": 4, "val_accuracy": 0.95}, "checkpoint": None, "epochs_counted_from": 1},
    )  # fmt: skip
    text = summary(run, 60.0)
    assert "  trials      3 (2 completed, 1 stopped)" in text
    assert "  best trial  a_00002 (training.optimizer.lr=0.03)" in text
    assert "  metrics     val_accuracy 0.95" in text and "checkpoint" not in text


def test_a_search_that_stop_all_when_ended_says_so(tmp_path):
    ended = {"condition": "val_accuracy >= 0.8", "trial_id": "a_00001", "training_iteration": 2}
    rows = "trial_id,status,epochs,best_val_accuracy\na_00000,stopped,2,0.5\na_00001,stopped,2,0.81\n"
    best = {"trial_id": "a_00001", "metric": "val_accuracy", "mode": "max", "metrics": {"val_accuracy": 0.81}}
    text = summary(write_run(tmp_path / "ended", rows, {**best, "ended_by": ended}), 9.0)
    assert "  ended by    stop.all_when val_accuracy >= 0.8: trial a_00001 met it at training_iteration 2\n" in text
    hostile = {**ended, "condition": "\033]0;owned\007"}  # a run directory from elsewhere writes no escapes
    text = summary(write_run(tmp_path / "hostile", rows, {**best, "ended_by": hostile}), 9.0)
    assert "\033" not in text and "\007" not in text and "ended by" in text
    for nothing in (None, "a string"):  # a search that ran its course, or a file that says nothing usable
        assert "ended by" not in summary(write_run(tmp_path / str(nothing), rows, {**best, "ended_by": nothing}), 9.0)


class Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.mark.parametrize(
    ("env", "stream", "expected"),
    [({}, Terminal(), True), ({"NO_COLOR": "1"}, Terminal(), False), ({"TERM": "dumb"}, Terminal(), False),
     ({}, io.StringIO(), False)],
)  # fmt: skip
def test_colour_only_on_a_terminal_without_no_color(monkeypatch, env, stream, expected):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setattr(sys, "stdout", stream)
    assert terminal.colour() is expected


def test_bash_completion_completes_commands_and_options(capsys):
    assert cli.main(["completion", "bash"]) == 0
    script = capsys.readouterr().out

    def complete(*words: str) -> list[str]:
        line = " ".join(words)
        program = f'{script}\nCOMP_WORDS=({line}); COMP_CWORD={len(words) - 1}; COMP_LINE="{line}"; ' \
                  f'COMP_POINT=${{#COMP_LINE}}; _shtab_specc; printf "%s\\n" "${{COMPREPLY[@]}}"'  # fmt: skip
        done = subprocess.run(["bash", "-c", program], capture_output=True, text=True, timeout=30)
        assert done.returncode == 0, done.stderr
        return done.stdout.split()

    assert {"validate", "run", "submit", "init"} <= set(complete("specc", ""))
    assert complete("specc", "va") == ["validate"]
    assert "--with-tune" in complete("specc", "init", "x", "--w")


@pytest.mark.parametrize("shell", ["zsh", "tcsh"])
def test_other_shells(capsys, shell):
    assert cli.main(["completion", shell]) == 0
    out = capsys.readouterr().out
    assert "specc" in out and "validate" in out


def test_the_summary_says_how_to_open_what_each_tracker_wrote(tmp_path):
    run_dir = tmp_path / "asha"
    run = write_run(run_dir, "trial_id,status,epochs\nt1,completed,2\n", {"trial_id": "t1", "metrics": {}})
    assert "tensorboard" not in summary(run, 1.0)  # nothing written: nothing to open
    (run_dir / "trial_t1").mkdir()
    (run_dir / "trial_t1" / "events.out.tfevents.1.host").write_bytes(b"")
    (run_dir / "mlflow.db").write_bytes(b"")
    (run_dir / "wandb" / "offline-run-1-x").mkdir(parents=True)
    lines = summary(run, 1.0).splitlines()
    assert lines[-4:-1] == [
        f"  tensorboard tensorboard --logdir {run_dir}",
        f"  mlflow      mlflow ui --backend-store-uri sqlite:///{run_dir}/mlflow.db",
        f"  wandb       wandb sync {run_dir}/wandb/offline-run-*",
    ]


def test_the_commands_on_the_last_screen_can_be_pasted_into_a_shell(tmp_path):
    """A run directory whose path holds spaces, quotes or shell syntax: each command still names it as one word."""
    run_dir = tmp_path / "runs $(touch pwned); it's" / "asha"
    run = write_run(run_dir, "trial_id,status,epochs\nt1,completed,2\n", {"trial_id": "t1", "metrics": {}})
    (run_dir / "events.out.tfevents.1.host").write_bytes(b"")
    (run_dir / "mlflow.db").write_bytes(b"")
    (run_dir / "wandb" / "offline-run-1-x").mkdir(parents=True)
    text = summary(run, 1.0)
    commands = [line.split(None, 1)[1] for line in text.splitlines()[-4:]]
    words = [shlex.split(command) for command in commands[:3]]
    assert words[0] == ["tensorboard", "--logdir", str(run_dir)]
    assert words[1] == ["mlflow", "ui", "--backend-store-uri", f"sqlite:///{run_dir}/mlflow.db"]
    assert words[2] == ["wandb", "sync", f"{run_dir}/wandb/offline-run-*"]  # the * is left for the shell to expand
    assert "'*'" not in commands[2] and not commands[2].endswith("*'")
    # two commands joined by `; `: the separator sticks to the first one's last word when split
    assert shlex.split(commands[3]) == ["specc", "results", f"{run_dir};", "specc", "report", str(run_dir)]
    assert not (tmp_path / "pwned").exists()
