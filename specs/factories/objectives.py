"""Objective functions for specs with an `objective` section (specs/objective_*.yaml): plain Ray Tune function
trainables, as in Ray Tune's "Key Concepts" page and its searcher examples (optuna_example.py)."""

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
