"""Objective functions the objective_*.yaml cases name (never run: specc reads their source)."""

from ray import tune


def no_checkpoint(config):
    for step in range(10):
        tune.report({"loss": config["x"] ** 2 / (step + 1)})


def with_checkpoint(config):
    checkpoint = tune.get_checkpoint()
    start = 0 if checkpoint is None else 1
    for step in range(start, 10):
        tune.report({"loss": config["x"] ** 2 / (step + 1)})


class Stepper(tune.Trainable):
    """A Trainable class with no save_checkpoint/load_checkpoint: nothing pbt can copy."""

    def step(self):
        return {"loss": self.config["x"] ** 2}
