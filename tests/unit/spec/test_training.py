"""`training` (SPEC §5): defaults, optimizers, LR schedules, task-derived loss and metrics, reported metrics."""

from __future__ import annotations

import pytest

ADAM = {"type": "adam", "lr": 0.001, "betas": [0.9, 0.999], "eps": 1e-8, "weight_decay": 0.0, "amsgrad": False}


def test_defaults(shown):
    assert shown("training: {}")["training"] == {
        "epochs": 10,
        "loss": "cross_entropy",
        "optimizer": ADAM,
        "lr_schedule": {"type": "none"},
        "metrics": ["accuracy"],
        "grad_clip_norm": None,
        "mixed_precision": False,
        "seed": 0,
        "checkpoint_every": 1,
        "steps_per_epoch": None,
        "validation_steps": None,
        "train_metrics": False,
    }


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("sgd", {"type": "sgd", "lr": 0.01, "momentum": 0.0, "weight_decay": 0.0, "nesterov": False}),
        ("adam", ADAM),
        ("adamw", {**ADAM, "type": "adamw", "weight_decay": 0.01}),
        (
            "rmsprop",
            {
                "type": "rmsprop",
                "lr": 0.01,
                "alpha": 0.99,
                "eps": 1e-8,
                "momentum": 0.0,
                "weight_decay": 0.0,
                "centered": False,
            },
        ),
    ],
)
def test_optimizer_defaults(shown, kind, expected):
    assert shown(f"training: {{optimizer: {{type: {kind}}}}}")["training"]["optimizer"] == expected


@pytest.mark.parametrize(
    ("schedule", "expected"),
    [
        ("{type: none}", {"type": "none"}),
        ("{type: step, step_size: 30}", {"type": "step", "step_size": 30, "gamma": 0.1}),
        ("{type: multistep, milestones: [5, 8]}", {"type": "multistep", "milestones": [5, 8], "gamma": 0.1}),
        ("{type: cosine}", {"type": "cosine", "t_max": 10, "eta_min": 0.0}),  # t_max: training.epochs (default 10)
        ("{type: exponential}", {"type": "exponential", "gamma": 0.95}),
    ],
)
def test_lr_schedule_defaults(shown, schedule, expected):
    assert shown(f"training: {{lr_schedule: {schedule}}}")["training"]["lr_schedule"] == expected


def test_show_fills_cosine_t_max_with_the_epochs(shown):
    assert shown("training: {epochs: 7, lr_schedule: {type: cosine}}")["training"]["lr_schedule"]["t_max"] == 7


@pytest.mark.parametrize(
    ("training", "expected"),
    [
        ("{epochs: 0}", [("E106", "training.epochs")]),
        ("{epochs: '5'}", [("E103", "training.epochs")]),
        ("{epochs: 2.0}", [("E103", "training.epochs")]),
        ("{loss: nll}", [("E260", "training.loss")]),  # NLLLoss, which takes log-probabilities
        ("{loss: nl-l}", [("E104", "training.loss")]),
        ("{metrics: [accuracy, f1]}", [("E104", "training.metrics.1")]),
        ("{grad_clip_norm: 0}", [("E106", "training.grad_clip_norm")]),
        ("{mixed_precision: 1}", [("E103", "training.mixed_precision")]),
        ("{seed: -1}", [("E106", "training.seed")]),
        ("{checkpoint_every: -1}", [("E106", "training.checkpoint_every")]),
        ("{checkpoint_every: always}", [("E104", "training.checkpoint_every")]),
        ("{steps_per_epoch: 0}", [("E106", "training.steps_per_epoch")]),
        ("{validation_steps: 1.5}", [("E103", "training.validation_steps")]),
        ("{train_metrics: yes please}", [("E103", "training.train_metrics")]),
        ("{optimizer: {type: sgd, lr: 0}}", [("E106", "training.optimizer.lr")]),
        ("{optimizer: {type: sgd, momentum: 1.0}}", [("E106", "training.optimizer.momentum")]),
        ("{optimizer: {type: sgd, nesterov: true}}", [("E100", "training.optimizer.nesterov")]),
        ("{optimizer: {type: adam, betas: [0.9]}}", [("E109", "training.optimizer.betas")]),
        ("{optimizer: {type: adam, betas: [0.9, 0.99, 0.9]}}", [("E109", "training.optimizer.betas")]),
        ("{optimizer: {type: adam, betas: [0.9, 1.0]}}", [("E106", "training.optimizer.betas.1")]),
        ("{optimizer: {type: adam, eps: 0}}", [("E106", "training.optimizer.eps")]),
        ("{optimizer: {type: adamw, weight_decay: -0.1}}", [("E106", "training.optimizer.weight_decay")]),
        ("{optimizer: {type: rmsprop, alpha: 1}}", [("E106", "training.optimizer.alpha")]),
        ("{optimizer: sgd}", [("E103", "training.optimizer")]),
        ("{lr_schedule: {type: step}}", [("E102", "training.lr_schedule.step_size")]),
        ("{lr_schedule: {type: step, step_size: 3, gamma: 0}}", [("E106", "training.lr_schedule.gamma")]),
        ("{lr_schedule: {type: step, step_size: 3, gamma: 1.5}}", [("E106", "training.lr_schedule.gamma")]),
        ("{lr_schedule: {type: multistep}}", [("E102", "training.lr_schedule.milestones")]),
        ("{lr_schedule: {type: multistep, milestones: []}}", [("E109", "training.lr_schedule.milestones")]),
        ("{lr_schedule: {type: multistep, milestones: [0, 3]}}", [("E106", "training.lr_schedule.milestones.0")]),
        ("{lr_schedule: {type: cosine, t_max: 0}}", [("E106", "training.lr_schedule.t_max")]),
        ("{lr_schedule: {type: cosine, eta_min: -1}}", [("E106", "training.lr_schedule.eta_min")]),
        ("{lr_schedule: {type: exponential, gamma: 0}}", [("E106", "training.lr_schedule.gamma")]),
    ],
)
def test_constraints(problems, training, expected):
    assert problems(f"training: {training}") == expected


@pytest.mark.parametrize(
    "optimizer",
    [
        "{type: sgd, lr: 1, momentum: 0.9, nesterov: true, weight_decay: 0}",
        "{type: adam, lr: 1, betas: [0, 0.5], amsgrad: true}",
        "{type: rmsprop, momentum: 0.5, centered: true}",
    ],
)
def test_ints_and_edge_values_accepted(problems, optimizer):
    assert problems(f"training: {{optimizer: {optimizer}}}") == []


@pytest.mark.parametrize("milestones", ["[5, 5]", "[5, 3]", "[2, 4, 4, 6]"])
def test_multistep_milestones_strictly_increasing(report, milestones):
    (problem,) = report(f"training: {{lr_schedule: {{type: multistep, milestones: {milestones}}}}}").problems
    assert (problem.code, problem.path) == ("E100", "training.lr_schedule.milestones")
    assert problem.message == "milestones must be strictly increasing"


def test_unknown_optimizer_type(report):
    assert report("training: {optimizer: {type: adagrad, lr_decay: 0.01}}").problems == []  # torch.optim.Adagrad
    (problem,) = report("training: {optimizer: {type: adagradd}}").problems
    assert (problem.code, problem.path, problem.hint) == ("E105", "training.optimizer.type", "did you mean 'adagrad'?")
    assert problem.message == "torch.optim has no optimizer 'adagradd'"


def test_unknown_schedule_type_suggests_the_closest(report):
    (problem,) = report("training: {lr_schedule: {type: cosinee}}").problems
    assert (problem.code, problem.path, problem.hint) == ("E105", "training.lr_schedule.type", "did you mean 'cosine'?")


@pytest.mark.parametrize(
    ("training", "path", "section"),
    [
        ("{optimizer: {type: adam, momentum: 0.9}}", "training.optimizer.momentum", "training.optimizer"),
        (
            "{lr_schedule: {type: step, step_size: 2, milestones: [1]}}",
            "training.lr_schedule.milestones",
            "training.lr_schedule",
        ),
    ],
)
def test_field_of_another_type_is_an_unknown_key_of_the_section(report, training, path, section):
    (problem,) = report(f"training: {training}").problems
    assert (problem.code, problem.path) == ("E101", path)
    assert f"in {section}" in problem.message


@pytest.mark.parametrize("section", ["optimizer", "lr_schedule"])
def test_missing_type(problems, section):
    assert problems(f"training: {{{section}: {{gamma: 0.5}}}}") == [("E102", f"training.{section}.type")]


@pytest.mark.parametrize(("key", "moved_to"), [("lr", "training.optimizer.lr"), ("batch_size", "dataset.batch_size")])
def test_keys_that_live_elsewhere_say_where(report, key, moved_to):
    (problem,) = report(f"training: {{{key}: 1}}").problems
    assert (problem.code, problem.path) == ("E101", f"training.{key}")
    assert moved_to in problem.hint


# -- loss and metrics follow the dataset's task ---------------------------------------------------
@pytest.mark.parametrize(
    ("dataset", "training", "loss", "metrics"),
    [
        ("{type: digits}", "{}", "cross_entropy", ["accuracy"]),
        ("{type: synthetic_regression}", "{}", "mse", ["mse"]),
        ("{type: csv, path: a.csv, task: regression}", "{}", "mse", ["mse"]),
        ("{type: csv, path: a.csv}", "{}", "cross_entropy", ["accuracy"]),
        ("{type: csv, path: a.csv}", "{loss: huber}", "huber", ["mse"]),
        ("{type: synthetic_regression}", "{loss: l1, metrics: [mae]}", "l1", ["mae"]),
        ("{type: digits}", "{metrics: [accuracy, top5_accuracy]}", "cross_entropy", ["accuracy", "top5_accuracy"]),
        ("{type: breast_cancer}", "{loss: bce_with_logits}", "bce_with_logits", ["accuracy"]),
    ],
)
def test_task_derived_loss_and_metrics(shown, dataset, training, loss, metrics):
    resolved = shown(f"dataset: {dataset}\ntraining: {training}")["training"]
    assert (resolved["loss"], resolved["metrics"]) == (loss, metrics)


@pytest.mark.parametrize(
    ("dataset", "training", "reported"),
    [
        ("{type: digits}", "{}", ["epoch", "train_loss", "val_loss", "val_accuracy", "num_parameters"]),
        ("{type: synthetic_regression}", "{}", ["epoch", "train_loss", "val_loss", "val_mse", "num_parameters"]),
        (
            "{type: synthetic_regression}",
            "{metrics: [mse, mae]}",
            ["epoch", "train_loss", "val_loss", "val_mse", "val_mae", "num_parameters"],
        ),
        (
            "{type: digits}",
            "{metrics: [top5_accuracy, accuracy]}",
            ["epoch", "train_loss", "val_loss", "val_top5_accuracy", "val_accuracy", "num_parameters"],
        ),
        ("{type: digits}", "{metrics: []}", ["epoch", "train_loss", "val_loss", "num_parameters"]),
    ],
)
def test_reported_metrics(report, dataset, training, reported):
    result = report(f"dataset: {dataset}\ntraining: {training}")
    assert result.problems == []
    assert result.experiment.reported_metrics() == reported


def test_partial_epochs_never_checkpoint_and_train_metrics_are_accepted(shown):
    training = shown(
        "training: {steps_per_epoch: 20, validation_steps: 5, checkpoint_every: never, train_metrics: true}"
    )["training"]
    assert (training["steps_per_epoch"], training["validation_steps"]) == (20, 5)
    assert (training["checkpoint_every"], training["train_metrics"]) == ("never", True)
