"""How far Ray's PopulationBasedTrainingReplay gets, for each way a trial can hold its state (issue 51's note).

One PBT policy in Ray's own format (pbt_policy_<trial>.txt: [target tag, donor tag, target step, donor step,
donor config, new config] a line) changes lr at step 4 and at step 8; each case replays it for 12 steps in a Tuner
of its own, as Ray's docstring example does (no param_space, the replay scheduler, a training_iteration stop):

(a) a ray.tune.Trainable class, no checkpoint_frequency     Tune saves it only when the replay asks
(b) the same class with checkpoint_frequency 2               Tune also saves it every 2 steps
(c) a function reporting a checkpoint every step             specc's model specs with training.checkpoint_every 1
(d) a function reporting a checkpoint every 3 steps          none at step 4, where the policy changes lr

Plain Ray, no specc: what it prints is Ray 2.60's behaviour. Seen here (ray 2.60.0, 2 CPUs, 75 s):
(a) reaches step 12 with lr 0.2 -> 0.1 after step 4 -> 0.05 after step 8; (b) ends TERMINATED, without an error,
at step 6 and (c) at step 5: the first checkpoint after the first change. PopulationBasedTrainingReplay asks the
trial to save and then pauses it while that save is pending, so Tune caches a STOP "after save resolved"
(tune_controller.py, _schedule_trial_stop); the pause drops the save's callback, and the STOP runs at the trial's
next save, after it has resumed with the new config. (d) errors: a function's save() is its last report, which holds
no checkpoint at step 4, and restoring from None fails in Trainable.restore ("'NoneType' object has no attribute
'filesystem'").

Run:  .venv/bin/python bench/pbt_replay.py
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

STEPS = 12
POLICY = [  # read backwards by Ray: each line's target tag is the next line's donor tag ("b"), one chain
    ["b", "c", 4, 4, {"lr": 0.2}, {"lr": 0.1}],
    ["a", "b", 8, 8, {"lr": 0.1}, {"lr": 0.05}],
]


def trainables():
    from ray import tune

    class Counter(tune.Trainable):
        """Adds lr to a running total each step; its state is the total and the step."""

        def setup(self, config):
            self.lr, self.total = config["lr"], 0.0

        def step(self):
            self.total += self.lr
            return {"lr": self.lr, "total": self.total}

        def save_checkpoint(self, checkpoint_dir):
            Path(checkpoint_dir, "state.json").write_text(json.dumps({"total": self.total}))

        def load_checkpoint(self, checkpoint_dir):
            self.total = json.loads(Path(checkpoint_dir, "state.json").read_text())["total"]

    def counter(config, every):
        """The same as a function: a checkpoint every `every` steps, and it goes on from the one Tune hands it."""
        step, total = 1, 0.0
        start = tune.get_checkpoint()
        if start:
            with start.as_directory() as directory:
                state = json.loads(Path(directory, "state.json").read_text())
            step, total = state["step"] + 1, state["total"]
        while step <= STEPS:
            total += config["lr"]
            metrics = {"lr": config["lr"], "total": total}
            if step % every:
                tune.report(metrics)
            else:
                with tempfile.TemporaryDirectory() as directory:
                    Path(directory, "state.json").write_text(json.dumps({"step": step, "total": total}))
                    tune.report(metrics, checkpoint=tune.Checkpoint.from_directory(directory))
            step += 1

    return {
        "(a) class": (Counter, 0),
        "(b) class, checkpoint_frequency 2": (Counter, 2),
        "(c) function, checkpoint every step": (tune.with_parameters(counter, every=1), 0),
        "(d) function, checkpoint every 3 steps": (tune.with_parameters(counter, every=3), 0),
    }


def replay(name, trainable, frequency, policy_file, storage):
    from ray import tune
    from ray.tune.schedulers import PopulationBasedTrainingReplay

    tuner = tune.Tuner(
        trainable,
        tune_config=tune.TuneConfig(scheduler=PopulationBasedTrainingReplay(policy_file)),
        run_config=tune.RunConfig(
            name=name,
            storage_path=storage,
            stop={"training_iteration": STEPS},
            checkpoint_config=tune.CheckpointConfig(checkpoint_frequency=frequency),
            verbose=0,
        ),
    )
    result = tuner.fit()[0]
    lines = Path(result.path, "result.json").read_text().splitlines()
    reports = [json.loads(line) for line in lines]
    changes = [
        now["training_iteration"]
        for now, before in zip(reports[1:], reports[:-1], strict=True)
        if now["lr"] != before["lr"]
    ]
    error = str(result.error).splitlines()[-1][:100] if result.error else "none"
    last = reports[-1]["training_iteration"] if reports else 0
    return f"last step {last:2d} of {STEPS}, lr changed before steps {changes}, error: {error}"


def main():
    import ray

    with tempfile.TemporaryDirectory() as scratch:
        policy_file = os.path.join(scratch, "pbt_policy_replayed.txt")
        Path(policy_file).write_text("".join(json.dumps(line) + "\n" for line in POLICY))
        ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
        try:
            for index, (case, (trainable, frequency)) in enumerate(trainables().items()):
                print(f"{case:40s} {replay(f'case{index}', trainable, frequency, policy_file, scratch)}", flush=True)
        finally:
            ray.shutdown()


if __name__ == "__main__":
    main()
