"""Objective functions for specs with an `objective` section (specs/objective_*.yaml): plain Ray Tune function
trainables, as in Ray Tune's "Key Concepts" page and its examples (optuna_example.py, pbt_function.py)."""

import json
import math
import os
import tempfile
import time

from ray import tune


def evaluation_fn(step, width, height):
    """A made-up loss: smallest for a large width and height -100 (Ray's easy_objective)."""
    return (0.1 + width * step / 100) ** (-1) + height * 0.1


def easy_objective(config):
    """One trial: `steps` reports of mean_loss for the config's width and height."""
    width, height = config["width"], config["height"]
    for step in range(config["steps"]):
        intermediate_score = evaluation_fn(step, width, height)
        tune.report({"iterations": step, "mean_loss": intermediate_score})
        time.sleep(config["sleep"])


def pbt_function(config):
    """A trial PBT can pause and continue elsewhere (Ray's pbt_function in brief): it starts from the checkpoint
    Tune hands it, if any, and reports one every `checkpoint_interval` steps, PBT's perturbation_interval (Ray's
    advice: a checkpoint each step, with run.checkpoints_to_keep 4, was deleted before a trial copying it could
    start from it). Accuracy grows fastest when lr is near the optimal lr, which drops tenfold half-way: a fixed lr
    cannot stay best, a population that copies and perturbs can."""
    step, accuracy = 1, 0.0
    checkpoint = tune.get_checkpoint()
    if checkpoint:
        with checkpoint.as_directory() as directory, open(os.path.join(directory, "state.json")) as file:
            state = json.load(file)
        step, accuracy = state["step"] + 1, state["accuracy"]
    while step <= config["steps"]:
        optimal_lr = 0.1 if step <= config["steps"] // 2 else 0.01
        accuracy += (1 - accuracy) * 0.2 / (1 + abs(math.log10(config["lr"] / optimal_lr)))
        metrics = {"mean_accuracy": accuracy, "lr": config["lr"]}
        if step % config["checkpoint_interval"]:
            tune.report(metrics)
        else:  # at PBT's perturbation steps: the checkpoint a trial that copies this one starts from
            with tempfile.TemporaryDirectory() as directory:
                with open(os.path.join(directory, "state.json"), "w") as file:
                    json.dump({"step": step, "accuracy": accuracy}, file)
                tune.report(metrics, checkpoint=tune.Checkpoint.from_directory(directory))
        step += 1


class PBTBenchmark(tune.Trainable):
    """Ray's pbt_example.py as a ray.tune.Trainable class: accuracy grows fastest when lr is near an optimal lr that
    drops tenfold half-way, so a population that copies and perturbs beats any fixed lr. Tune calls step() for each
    report and save_checkpoint/load_checkpoint when it checkpoints (objective.checkpoint_every) or PBT exploits."""

    def setup(self, config):
        self.lr, self.steps, self.accuracy = config["lr"], config["steps"], 0.0

    def step(self):
        optimal_lr = 0.1 if self.iteration < self.steps // 2 else 0.01
        self.accuracy += (1 - self.accuracy) * 0.2 / (1 + abs(math.log10(self.lr / optimal_lr)))
        return {"mean_accuracy": self.accuracy, "lr": self.lr}

    def save_checkpoint(self, checkpoint_dir):
        with open(os.path.join(checkpoint_dir, "state.json"), "w") as file:
            json.dump({"accuracy": self.accuracy}, file)

    def load_checkpoint(self, checkpoint_dir):
        with open(os.path.join(checkpoint_dir, "state.json")) as file:
            self.accuracy = json.load(file)["accuracy"]

    def reset_config(self, new_config):
        """A new trial in this process, or PBT's new lr for this one: set up afresh (after an exploit, Tune then loads
        the donor's checkpoint). Defining it lets Tune reuse the process instead of starting one."""
        self.setup(new_config)
        return True
