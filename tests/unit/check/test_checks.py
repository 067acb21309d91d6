"""Rules across fields (SPEC §5, §7): each rule fires where it should and stays quiet where it should not."""

from __future__ import annotations

import subprocess
import sys

import pytest

from specc import api
from specc.check.rules import KERAS_APPLICATIONS
from specc.spec import Experiment
from tests.conftest import MINIMAL

TUNE = "tune:\n  metric: val_accuracy\n  mode: max\n  space:\n"


def codes(write_spec, text: str, overrides=()) -> list[tuple[str, str]]:
    report = api.check_file(write_spec(text), overrides)
    return [(p.code, p.path) for p in report.problems]


def with_space(*entries: str, extra: str = "") -> str:
    return MINIMAL + TUNE + "".join(f"    {entry}\n" for entry in entries) + extra


def test_reported_metrics_follow_training_metrics():
    experiment = Experiment.model_validate(
        {
            "specc": 1,
            "name": "x",
            "framework": "torch",
            "model": {"type": "mlp"},
            "dataset": {"type": "digits"},
            "training": {"metrics": ["accuracy", "top5_accuracy"]},
        }
    )
    assert experiment.reported_metrics() == [
        "epoch",
        "train_loss",
        "val_loss",
        "val_accuracy",
        "val_top5_accuracy",
        "num_parameters",  # every model run's (SPEC §12)
    ]


def test_train_metrics_report_each_metric_on_the_training_batches():
    experiment = Experiment.model_validate(
        {
            "specc": 1,
            "name": "x",
            "framework": "torch",
            "model": {"type": "mlp"},
            "dataset": {"type": "digits"},
            "training": {"metrics": ["accuracy", "top5_accuracy"], "train_metrics": True},
        }
    )
    assert experiment.reported_metrics() == [
        "epoch",
        "train_loss",
        "train_accuracy",
        "train_top5_accuracy",
        "val_loss",
        "val_accuracy",
        "val_top5_accuracy",
        "num_parameters",
    ]


@pytest.mark.parametrize(
    ("training", "metric", "hint"),
    [
        ("{epochs: 2}", "train_accuracy", "report metrics on the training batches too: training.train_metrics: true"),
        (
            "{epochs: 2, train_metrics: true}",
            "train_top5_accuracy",
            "add top5_accuracy to training.metrics and set training.train_metrics: true",
        ),
        (
            "{epochs: 2}",
            "train_top5_accuracy",
            "add top5_accuracy to training.metrics and set training.train_metrics: true",
        ),
    ],
)
def test_train_metric_needs_train_metrics(write_spec, training, metric, hint):
    spec = MINIMAL.replace("training: {epochs: 2}", f"training: {training}")
    report = api.check_file(write_spec(spec + f"tune: {{metric: {metric}, mode: max}}\n"))
    assert [(p.code, p.path, p.hint) for p in report.problems] == [("E201", "tune.metric", hint)]


def test_train_metric_may_drive_the_search_and_stop_it(write_spec):
    spec = MINIMAL.replace("training: {epochs: 2}", "training: {epochs: 2, train_metrics: true}")
    spec += "tune: {metric: train_accuracy, mode: max}\nstop: {when: ['train_accuracy >= 0.99']}\n"
    assert codes(write_spec, spec) == []


def test_unknown_metric_lists_reported_names(write_spec):
    report = api.check_file(write_spec(MINIMAL + "tune: {metric: val_acc, mode: max}\n"))
    (problem,) = report.problems
    assert (problem.code, problem.path) == ("E201", "tune.metric")
    assert "epoch, train_loss, val_loss, val_accuracy" in problem.message
    assert problem.hint == "did you mean 'val_accuracy'?"


def test_metric_not_in_training_metrics_hints_to_add_it(write_spec):
    report = api.check_file(write_spec(MINIMAL + "tune: {metric: val_top5_accuracy, mode: max}\n"))
    assert report.problems[0].hint == "add top5_accuracy to training.metrics"


def test_stop_and_plateau_and_checkpoint_metrics_are_checked(write_spec):
    spec = MINIMAL + (
        "tune: {metric: val_loss, mode: min}\n"
        "stop: {when: ['val_los <= 0.1', 'val_accuracy >= 0.9'], plateau: {metric: train_los}}\n"
        "run: {checkpoint_score: {metric: nope, mode: min}}\n"
    )
    assert codes(write_spec, spec) == [
        ("E201", "stop.when.0"),
        ("E201", "stop.plateau.metric"),
        ("E201", "run.checkpoint_score.metric"),
    ]


@pytest.mark.parametrize("section", ["scheduler: {type: asha}", "stop: {max_trial_time_s: 60}"])
def test_scheduler_or_stop_without_tune(write_spec, section):
    name = section.split(":")[0]
    assert codes(write_spec, MINIMAL + section + "\n") == [("E205", name)]


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ("training.optimizer.lr: {loguniform: [1.0e-4, 0.1]}", []),
        ("model.hidden_sizes: {choice: [[8], [16, 8]]}", []),
        ("model.hidden_sizes.0: {qrandint: [8, 64, 8]}", []),
        ("model.dropout: {uniform: [0.0, 1.0]}", []),  # 1.0 is excluded, as in Ray
        ("dataset.batch_size: {lograndint: [8, 256]}", []),
        ("model.activation: {grid: [relu, gelu]}", []),
        (
            "dataset.batch_size: {choice: [a, 8, b]}",
            [("E203", "tune.space[dataset.batch_size].choice.0"), ("E203", "tune.space[dataset.batch_size].choice.2")],
        ),
        ("dataset.batch_size: {uniform: [8, 64]}", [("E203", "tune.space[dataset.batch_size].uniform")]),
        ("dataset.batch_size: {randint: [0, 64]}", [("E203", "tune.space[dataset.batch_size].randint")]),
        ("model.dropout: {quniform: [0.0, 1.0, 0.5]}", [("E203", "tune.space[model.dropout].quniform")]),
        ("training.optimizer.lr: {randn: [0.01, 0.01]}", [("E203", "tune.space[training.optimizer.lr].randn")]),
        ("model.activation: {choice: [relu, relux]}", [("E203", "tune.space[model.activation].choice.1")]),
        ("model.nope: {choice: [1]}", [("E202", "tune.space[model.nope]")]),
        ("model.hidden_sizes.3: {choice: [1]}", [("E202", "tune.space[model.hidden_sizes.3]")]),
        ("run.storage_path: {choice: [a]}", [("E202", "tune.space[run.storage_path]")]),
        ("model.dropout.x: {choice: [1]}", [("E202", "tune.space[model.dropout.x]")]),
    ],
)
def test_space_paths_and_values(write_spec, entry, expected):
    assert codes(write_spec, with_space(entry)) == expected


def test_overlapping_space_paths(write_spec):
    spec = with_space("model.hidden_sizes: {choice: [[8]]}", "model.hidden_sizes.0: {choice: [4]}")
    assert codes(write_spec, spec) == [("E202", "tune.space[model.hidden_sizes]")]


def test_space_path_into_the_optimizer_defaults(write_spec):
    # momentum is not written in the spec but the resolved sgd optimizer has it
    spec = MINIMAL.replace("training: {epochs: 2}", "training: {epochs: 2, optimizer: {type: sgd}}")
    spec += TUNE + "    training.optimizer.momentum: {uniform: [0.5, 0.99]}\n"
    assert codes(write_spec, spec) == []


def test_space_value_problem_points_at_the_offending_item(write_spec):
    report = api.check_file(write_spec(with_space("dataset.batch_size: {choice: [8, 16, -4]}")))
    (problem,) = report.problems
    assert (problem.line, problem.column) == (11, 42)
    assert "-4" in problem.message


@pytest.mark.parametrize(
    ("search", "entry", "expected"),
    [
        ("optuna", "training.optimizer.lr: {loguniform: [1.0e-4, 0.1]}", []),
        ("optuna", "training.optimizer.lr: {randn: [0.5, 0.01]}", ["E204"]),
        ("optuna", "model.activation: {grid: [relu]}", ["E204"]),
        ("bayesopt", "model.activation: {choice: [relu]}", ["E204"]),
        ("bayesopt", "model.dropout: {uniform: [0.0, 0.5]}", []),
        ("hyperopt", "model.dropout: {qrandn: [0.3, 0.01, 0.01]}", []),
        ("grid", "model.activation: {choice: [relu, tanh]}", ["E204"]),
        ("grid", "model.activation: {grid: [relu, tanh]}", []),
    ],
)
def test_search_type_and_distribution(write_spec, search, entry, expected):
    spec = with_space(entry).replace("  space:\n", f"  search: {{type: {search}}}\n  space:\n")
    assert [code for code, _ in codes(write_spec, spec)] == expected


def test_points_to_evaluate_must_fit_the_space(write_spec):
    spec = with_space("training.optimizer.lr: {loguniform: [1.0e-4, 0.1]}").replace(
        "  space:\n",
        "  search: {type: random, points_to_evaluate: [{training.optimizer.lr: -1}, {model.dropout: 0.1}]}\n  space:\n",
    )
    assert codes(write_spec, spec) == [
        ("E212", "tune.search.points_to_evaluate.0[training.optimizer.lr]"),
        ("E212", "tune.search.points_to_evaluate.1[model.dropout]"),
    ]


PBT = (
    "scheduler:\n  type: pbt\n  perturbation_interval: {interval}\n"
    "  mutations: {{training.optimizer.lr: {{loguniform: [1.0e-4, 0.1]}}}}\n"
)


def test_pbt_needs_checkpoints(write_spec):
    spec = with_space("model.dropout: {uniform: [0.0, 0.5]}") + PBT.format(interval=1)
    spec = spec.replace("training: {epochs: 2}", "training: {epochs: 10, checkpoint_every: 0}")
    assert codes(write_spec, spec) == [("E206", "training.checkpoint_every")]
    spec = spec.replace("checkpoint_every: 0", "checkpoint_every: 2").replace(
        "perturbation_interval: 1", "perturbation_interval: 3"
    )
    assert codes(write_spec, spec) == [("E206", "scheduler.perturbation_interval")]


def test_pbt_and_retries_need_checkpoints_that_never_come(write_spec):
    spec = with_space("model.dropout: {uniform: [0.0, 0.5]}") + PBT.format(interval=1)
    spec = spec.replace("training: {epochs: 2}", "training: {epochs: 10, checkpoint_every: never}")
    assert codes(write_spec, spec) == [("E206", "training.checkpoint_every")]
    never = MINIMAL.replace("training: {epochs: 2}", "training: {epochs: 2, checkpoint_every: never}")
    assert codes(write_spec, never) == []
    assert codes(write_spec, never + "run: {max_failures: -1}\n") == [("E206", "run.max_failures")]
    assert codes(write_spec, never + "run: {max_failures: 0}\n") == []


def test_pbt_mutations_are_checked_like_the_space(write_spec):
    spec = with_space("model.dropout: {uniform: [0.0, 0.5]}").replace("training: {epochs: 2}", "training: {epochs: 10}")
    spec += PBT.format(interval=2).replace("training.optimizer.lr", "training.optimizer.rate")
    assert codes(write_spec, spec) == [("E202", "scheduler.mutations[training.optimizer.rate]")]


def test_pbt_perturbations_that_clipping_does_not_cover_are_problems(write_spec, monkeypatch):
    """Every value PBT's explore step can produce (x each perturbation factor) is checked against the field after
    keep_in_bounds; with no clip for dropout (< 1), x1.2 of 0.9 is 1.08, which it refuses."""
    from specc.check import search_space

    spec = with_space("model.dropout: {uniform: [0.0, 0.5]}").replace("training: {epochs: 2}", "training: {epochs: 10}")
    spec += PBT.format(interval=2).replace(
        "training.optimizer.lr: {loguniform: [1.0e-4, 0.1]}", "model.dropout: {uniform: [0.0, 0.9]}"
    )
    assert codes(write_spec, spec) == []  # keep_in_bounds stops dropout at 0.9
    monkeypatch.setattr(search_space, "pbt_clips", lambda e: [])
    assert codes(write_spec, spec) == [("E203", "scheduler.mutations[model.dropout].uniform")]


def test_pb2_bounds_must_be_numeric_fields(write_spec):
    spec = with_space("model.dropout: {uniform: [0.0, 0.5]}").replace("training: {epochs: 2}", "training: {epochs: 10}")
    spec += "scheduler: {type: pb2, bounds: {model.activation: [0, 1], model.dropout: [0.0, 0.5]}}\n"
    assert codes(write_spec, spec) == [
        ("E203", "scheduler.bounds[model.activation].0"),
        ("E203", "scheduler.bounds[model.activation].1"),
    ]


@pytest.mark.parametrize(
    ("spec_change", "expected"),
    [
        (("framework: torch", "framework: tensorflow"), []),
        (("{type: mlp, hidden_sizes: [16]}", "{type: torchvision, name: resnet18}"), []),
        (("{type: digits}", "{type: torchvision, name: MNIST}"), []),
        (
            ("{type: mlp, hidden_sizes: [16]}", "{type: keras_application, name: ResNet50}"),
            [("E207", "model.type"), ("E210", "model.name")],
        ),
        (("{type: mlp, hidden_sizes: [16]}", "{type: cnn, channels: [8, 8, 8]}"), []),
        (("{type: mlp, hidden_sizes: [16]}", "{type: cnn, channels: [8, 8, 8, 8]}"), [("E210", "model.channels")]),
        (("{type: digits}", "{type: iris}"), []),
        (("training: {epochs: 2}", "training: {epochs: 2, loss: mse}"), [("E208", "training.loss")]),
        (("training: {epochs: 2}", "training: {epochs: 2, metrics: [mae]}"), [("E208", "training.metrics.0")]),
        (("training: {epochs: 2}", "training: {epochs: 2, loss: bce_with_logits}"), [("E208", "training.loss")]),
    ],
)
def test_framework_task_and_shape_rules(write_spec, spec_change, expected):
    assert codes(write_spec, MINIMAL.replace(*spec_change)) == expected


def test_tensorflow_rules(write_spec):
    spec = MINIMAL.replace("framework: torch", "framework: tensorflow")
    assert codes(write_spec, spec.replace("{type: digits}", "{type: torchvision, name: MNIST}")) == [
        ("E207", "dataset.type")
    ]
    assert codes(write_spec, spec + "scaling: {backend: gloo}\n") == [("E207", "scaling.backend")]
    assert codes(write_spec, spec.replace("{type: mlp, hidden_sizes: [16]}", "{type: torchvision, name: x}")) == [
        ("E207", "model.type")
    ]


def test_keras_applications_need_images_of_their_minimum_size(write_spec):
    spec = MINIMAL.replace("framework: torch", "framework: tensorflow")
    spec = spec.replace("{type: mlp, hidden_sizes: [16]}", "{type: keras_application, name: ResNet50}")
    assert codes(write_spec, spec) == [("E210", "model.name")]


def test_rows_for_a_cnn_and_small_class_counts(write_spec):
    spec = MINIMAL.replace("{type: digits}", "{type: iris}")
    assert codes(write_spec, spec.replace("{type: mlp, hidden_sizes: [16]}", "{type: cnn}")) == [("E210", "model.type")]
    spec = spec.replace("training: {epochs: 2}", "training: {epochs: 2, metrics: [accuracy, top5_accuracy]}")
    assert codes(write_spec, spec) == [("E208", "training.metrics.1")]


def test_regression_defaults_and_rules(write_spec):
    spec = MINIMAL.replace("{type: digits}", "{type: synthetic_regression}")
    experiment = api.load(write_spec(spec))
    assert (experiment.training.loss, experiment.training.metrics) == ("mse", ["mse"])
    assert experiment.reported_metrics()[-2:] == ["val_mse", "num_parameters"]
    csv = MINIMAL.replace("{type: digits}", "{type: csv, path: rows.csv, label: y}")
    assert api.load(write_spec(csv.replace("{epochs: 2}", "{epochs: 2, loss: huber}"))).task() == "regression"


def test_scaling_rules(write_spec):
    assert codes(write_spec, MINIMAL + "scaling: {backend: nccl}\n") == [("E211", "scaling.backend")]
    assert codes(write_spec, MINIMAL + "scaling: {backend: nccl, use_gpu: true}\n") == []
    assert codes(write_spec, MINIMAL + "scaling: {resources_per_worker: {CPU: 1, GPU: 1}}\n") == [
        ("E211", "scaling.resources_per_worker.GPU")
    ]


def test_scheduler_budgets(write_spec):
    base = MINIMAL.replace("{epochs: 2}", "{epochs: 10}") + "tune: {metric: val_loss, mode: min}\n"
    assert codes(write_spec, base + "scheduler: {type: asha, grace_period: 10}\n") == [
        ("E209", "scheduler.grace_period")
    ]
    assert codes(write_spec, base + "scheduler: {type: asha, grace_period: 12, max_t: 12}\n") == [
        ("E209", "scheduler.grace_period"),
        ("W330", "scheduler.max_t"),
    ]
    assert codes(write_spec, base + "scheduler: {type: asha, grace_period: 2, max_t: 8}\n") == []


@pytest.mark.parametrize(
    ("scheduler", "expected"),
    [
        ("{type: asha, max_t: 20}", [("W330", "scheduler.max_t")]),
        ("{type: hyperband, max_t: 30}", [("W330", "scheduler.max_t")]),
        (
            "{type: asha, max_t: 20, grace_period: 10}",
            [("W330", "scheduler.max_t"), ("W330", "scheduler.grace_period")],
        ),
        ("{type: asha, max_t: 10}", []),
    ],
)
def test_budgets_beyond_the_epochs_are_warnings_ray_accepts(write_spec, scheduler, expected):
    """Ray takes a max_t beyond the epochs (the trials end at the last epoch, before the later rungs): a warning,
    and the spec stays valid."""
    base = MINIMAL.replace("{epochs: 2}", "{epochs: 10}") + "tune: {metric: val_loss, mode: min}\n"
    report = api.check_file(write_spec(base + f"scheduler: {scheduler}\n"))
    assert [(p.code, p.path) for p in report.problems] == expected
    assert report.ok


@pytest.mark.parametrize(
    ("epochs", "scheduler", "expected"),
    [
        ("{choice: [4, 16]}", "{type: asha, grace_period: 12}", []),  # the 16-epoch trials have rungs
        ("{choice: [4, 16]}", "{type: asha, max_t: 20}", [("W330", "scheduler.max_t")]),
        ("{randint: [2, 13]}", "{type: asha, grace_period: 12}", [("E209", "scheduler.grace_period")]),  # at most 12
        (
            "{grid: [4, 8]}",
            "{type: pbt, perturbation_interval: 6, mutations: {training.optimizer.lr: [0.1, 0.01]}}",
            [],
        ),
    ],
)
def test_a_searched_epochs_gives_the_budget_of_the_longest_trial(write_spec, epochs, scheduler, expected):
    """With training.epochs in the space, the scheduler's budget (and max_t's default) is the longest trial's: a
    grace period beyond the spec's own 10 epochs is fine when some trials train 16."""
    base = MINIMAL.replace("{epochs: 2}", "{epochs: 10}")
    base += f"tune: {{metric: val_loss, mode: min, space: {{training.epochs: {epochs}}}}}\n"
    report = api.check_file(write_spec(base + f"scheduler: {scheduler}\n"))
    assert [(p.code, p.path) for p in report.problems] == expected
    if not expected and "asha" in scheduler:
        assert api.load(write_spec(base + f"scheduler: {scheduler}\n")).scheduler.max_t == 16  # not 10: no trial cut


def test_mode_direction_warning(write_spec):
    report = api.check_file(write_spec(MINIMAL + "tune: {metric: val_accuracy, mode: min}\n"))
    assert [(p.code, p.severity) for p in report.problems] == [("W301", "warning")]
    assert report.ok


def test_keras_applications_list_is_the_installed_tf_keras_one():
    """KERAS_APPLICATIONS (checked at validate time, without importing TensorFlow) is what tf_keras offers."""
    probe = "import tf_keras; print(' '.join(n for n in dir(tf_keras.applications) if n[0].isupper()))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert set(KERAS_APPLICATIONS) == set(done.stdout.split())


def test_only_adamw_weight_decay_means_the_same_in_keras(write_spec):
    spec = MINIMAL.replace("framework: torch", "framework: tensorflow")
    for optimizer in ("sgd", "adam", "rmsprop"):
        decayed = spec.replace(
            "training: {epochs: 2}", f"training: {{epochs: 2, optimizer: {{type: {optimizer}, weight_decay: 0.01}}}}"
        )
        assert codes(write_spec, decayed) == [("E207", "training.optimizer.weight_decay")], optimizer
        plain = spec.replace("training: {epochs: 2}", f"training: {{epochs: 2, optimizer: {{type: {optimizer}}}}}")
        assert codes(write_spec, plain) == [], optimizer
    adamw = spec.replace("training: {epochs: 2}", "training: {epochs: 2, optimizer: {type: adamw, weight_decay: 0.01}}")
    assert codes(write_spec, adamw) == []
    torch_sgd = MINIMAL.replace(
        "training: {epochs: 2}", "training: {epochs: 2, optimizer: {type: sgd, weight_decay: 0.01}}"
    )
    assert codes(write_spec, torch_sgd) == []


def test_partial_epochs_with_keras_on_ray_data_are_accepted(write_spec):
    spec = MINIMAL.replace("framework: torch", "framework: tensorflow").replace(
        "training: {epochs: 2}", "training: {epochs: 2, steps_per_epoch: 4, validation_steps: 2}"
    )
    assert codes(write_spec, spec) == []
    ray_data = spec.replace("dataset: {type: digits}", "dataset: {type: digits, loader: ray_data}")
    assert codes(write_spec, ray_data) == []


def test_keras_partial_epochs_on_several_workers_are_a_multiple_of_them(write_spec):
    spec = MINIMAL.replace("framework: torch", "framework: tensorflow").replace(
        "training: {epochs: 2}", "training: {epochs: 2, steps_per_epoch: 3, validation_steps: 4}"
    )
    assert codes(write_spec, spec) == []  # one worker
    two = spec + "scaling: {num_workers: 2}\n"
    report = api.check_file(write_spec(two))
    assert [(p.code, p.path, p.hint) for p in report.problems] == [
        ("E207", "training.steps_per_epoch", "e.g. steps_per_epoch: 2 or steps_per_epoch: 4")
    ]
    assert codes(write_spec, two.replace("framework: tensorflow", "framework: torch")) == []


@pytest.mark.parametrize(
    ("entry", "uneven"),
    [
        ("{choice: [2, 4, null]}", None),
        ("{grid: [4, 7]}", 7),
        ("{qrandint: [4, 40, 4]}", None),
        ("{qrandint: [3, 40, 3]}", 3),
        ("{randint: [4, 5]}", None),  # only 4
        ("{randint: [4, 9]}", 5),
        ("{lograndint: [8, 64]}", 9),
    ],
)
def test_keras_searched_steps_are_checked_for_every_value_the_search_can_take(write_spec, entry, uneven):
    spec = with_space(f"training.steps_per_epoch: {entry}", extra="scaling: {num_workers: 2}\n")
    spec = spec.replace("framework: torch", "framework: tensorflow")
    report = api.check_file(write_spec(spec))
    found = [(p.code, p.path, p.message) for p in report.problems]
    if uneven is None:
        assert found == []
    else:
        assert [(code, path) for code, path, _ in found] == [("E207", "tune.space[training.steps_per_epoch]")]
        assert f"steps_per_epoch {uneven}, a value the search can take" in found[0][2]
    torch = spec.replace("framework: tensorflow", "framework: torch")
    assert codes(write_spec, torch) == []  # torch workers each take their own steps


def test_a_searched_checkpoint_every_cannot_switch_checkpoints_off_or_on(write_spec):
    never = "training.checkpoint_every: {choice: [1, never]}"
    assert codes(write_spec, with_space(never)) == [("E203", "tune.space[training.checkpoint_every]")]
    retries = with_space(never, extra="run: {max_failures: 1}\n")
    assert codes(write_spec, retries) == [("E206", "tune.space[training.checkpoint_every]")]
    assert codes(write_spec, with_space("training.checkpoint_every: {choice: [1, 2]}")) == []
    fixed_never = with_space("training.checkpoint_every: {choice: [1, 2]}").replace(
        "training: {epochs: 2}", "training: {epochs: 2, checkpoint_every: never}"
    )
    assert codes(write_spec, fixed_never) == [("E203", "tune.space[training.checkpoint_every]")]


def test_checkpoint_settings_without_checkpoints_are_warned_where_they_do_nothing(write_spec):
    never = MINIMAL.replace("training: {epochs: 2}", "training: {epochs: 2, checkpoint_every: never}")
    score = "run: {checkpoint_score: {metric: val_loss, mode: min}}\n"
    assert codes(write_spec, never + score) == []  # a training run: it picks best.json's epoch
    search = with_space("model.dropout: {uniform: [0.0, 0.5]}", extra=score).replace(
        "training: {epochs: 2}", "training: {epochs: 2, checkpoint_every: never}"
    )
    assert codes(write_spec, search) == [("W321", "run.checkpoint_score")]
    assert codes(write_spec, never + "run: {checkpoints_to_keep: 1}\n") == [("W321", "run.checkpoints_to_keep")]


def test_num_parameters_is_a_metric_to_minimise(write_spec):
    spec = with_space("model.hidden_sizes: {choice: [[8], [32]]}").replace("val_accuracy", "num_parameters")
    spec = spec.replace("mode: max", "mode: min") + 'stop: {when: ["num_parameters < 1000"]}\n'
    assert codes(write_spec, spec) == []
    assert codes(write_spec, spec.replace("mode: min", "mode: max")) == [("W301", "tune.mode")]
    assert codes(write_spec, spec + "run: {checkpoint_score: {metric: num_parameters, mode: min}}\n") == []


CNN = "{type: mlp, hidden_sizes: [16]}"


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        # digits are 8x8: 3 default blocks (same padding, 2x2 pools) leave 1x1, a 4th has nothing to pool
        ("{type: cnn, channels: [8, 8, 8], padding: same}", []),
        ("{type: cnn, channels: [8, 8, 8, 8], pool: null}", []),
        # valid 3x3 convs: 8 -> 6 -> pool 3 -> 1 -> the third conv has less than its kernel
        ("{type: cnn, channels: [8, 8], padding: valid}", [("E210", "model.channels")]),
        ("{type: cnn, channels: [8], padding: valid}", []),
        ("{type: cnn, channels: [8, 8, 8, 8], padding: valid, pool: null}", [("E210", "model.padding")]),
        ("{type: cnn, channels: [8, 8, 8], padding: valid, pool: null}", []),
        ("{type: cnn, channels: [8, 8], padding: valid, pool: null}", []),
        ("{type: cnn, channels: [8, 8], pool: {size: 3, stride: 3}}", [("E210", "model.channels")]),
        ("{type: cnn, channels: [8, 8], pool: {size: 3, stride: 1}}", []),
        ("{type: cnn, channels: [8], kernel_size: 9, padding: valid}", [("E210", "model.padding")]),
        ("{type: cnn, channels: [8], batch_norm: true}", []),
    ],
)
def test_cnn_padding_and_pooling_must_leave_pixels(write_spec, model, expected):
    assert codes(write_spec, MINIMAL.replace(CNN, model)) == expected


def test_cnn_problems_say_where_the_image_runs_out(write_spec):
    spec = MINIMAL.replace(CNN, "{type: cnn, channels: [8, 8, 8, 8], padding: valid, pool: null}")
    (problem,) = api.check_file(write_spec(spec)).problems
    assert "conv block 4 gets 2x2 pixels, less than its kernel" in problem.message
    assert problem.line == MINIMAL.splitlines().index(next(x for x in MINIMAL.splitlines() if CNN in x)) + 1
    spec = MINIMAL.replace(CNN, "{type: cnn, channels: [8, 8], pool: {size: 3, stride: 3}}")
    (problem,) = api.check_file(write_spec(spec)).problems
    assert "block 2 has 2x2 pixels, less than its pool size 3" in problem.message


@pytest.mark.parametrize(
    ("dataset", "scaling", "expected"),
    [
        ("{type: digits, global_batch_size: 64}", "scaling: {num_workers: 2}\n", []),
        ("{type: digits, global_batch_size: 63}", "scaling: {num_workers: 1}\n", []),
        ("{type: digits, global_batch_size: 63}", "scaling: {num_workers: 0}\n", []),
        (
            "{type: digits, global_batch_size: 63}",
            "scaling: {num_workers: 2}\n",
            [("E211", "dataset.global_batch_size")],
        ),
        ("{type: digits, batch_size: 32, global_batch_size: 64}", "", [("E220", "dataset.global_batch_size")]),
        ("{type: digits, batch_size: null}", "", [("E220", "dataset.batch_size")]),
        ("{type: digits, batch_size: null, global_batch_size: 64}", "scaling: {num_workers: 2}\n", []),
    ],
)
def test_global_batch_size_replaces_batch_size_and_splits_evenly(write_spec, dataset, scaling, expected):
    assert codes(write_spec, MINIMAL.replace("{type: digits}", dataset) + scaling) == expected


def test_searched_global_batch_sizes_must_each_split_evenly(write_spec):
    spec = with_space("dataset.global_batch_size: {choice: [32, 48, 50]}", extra="scaling: {num_workers: 4}\n")
    spec = spec.replace("{type: digits}", "{type: digits, global_batch_size: 64}")
    assert codes(write_spec, spec) == [("E211", "tune.space[dataset.global_batch_size]")]
    assert codes(write_spec, spec.replace("50]", "64]")) == []


def test_global_batch_size_resolves_without_batch_size(write_spec):
    from specc.spec.dump import dump_spec

    report = api.check_file(write_spec(MINIMAL.replace("{type: digits}", "{type: digits, global_batch_size: 64}")))
    assert report.problems == []
    dataset = report.experiment.dataset
    assert (dataset.batch_size, dataset.global_batch_size, dataset.shuffle, dataset.standardize) == (
        None,
        64,
        True,
        True,
    )
    again = api.check_file(write_spec(dump_spec(report.experiment)))
    assert again.problems == [] and dump_spec(again.experiment) == dump_spec(report.experiment)


def test_a_search_sets_the_batch_size_the_spec_gives(write_spec):
    spec = with_space("dataset.global_batch_size: {choice: [32, 64]}")
    assert codes(write_spec, spec) == [("E220", "tune.space[dataset.global_batch_size]")]
    spec = with_space("dataset.batch_size: {choice: [32, 64]}").replace(
        "{type: digits}", "{type: digits, global_batch_size: 64}"
    )
    assert codes(write_spec, spec) == [("E220", "tune.space[dataset.batch_size]")]


@pytest.mark.parametrize(
    ("dataset", "expected"),
    [
        ("{type: digits, subset: {train: 1438, validation: 359}}", []),  # 1797 examples: 359 validate
        ("{type: digits, subset: {train: 1439, validation: 359}}", [("E100", "dataset.subset.train")]),
        ("{type: iris, subset: {train: 10, validation: 31}}", [("E100", "dataset.subset.validation")]),
        ("{type: synthetic_classification, n_samples: 100, subset: {train: 80, validation: 20}}", []),
        ("{type: csv, path: x.csv, subset: {train: 100000, validation: 100000}}", []),  # size known at run time
    ],
)
def test_a_subset_fits_its_split(write_spec, dataset, expected):
    spec = MINIMAL.replace("{type: digits}", dataset)
    if "iris" in dataset or "synthetic" in dataset or "csv" in dataset:
        spec = spec.replace("{type: mlp, hidden_sizes: [16]}", "{type: mlp}")
    assert codes(write_spec, spec) == expected


def test_standardize_false_on_images_is_a_warning(write_spec):
    assert codes(write_spec, MINIMAL.replace("{type: digits}", "{type: digits, standardize: false}")) == [
        ("W320", "dataset.standardize")
    ]
    assert codes(write_spec, MINIMAL.replace("{type: digits}", "{type: iris, standardize: false}")) == []


def test_global_batch_size_over_an_extended_batch_size(write_spec):
    write_spec(MINIMAL.replace("{type: digits}", "{type: digits, batch_size: 64}"), "base.yaml")
    child = "extends: base.yaml\ndataset: {type: digits, global_batch_size: 128}\n"
    report = api.check_file(write_spec(child))
    assert [(p.code, p.path) for p in report.problems] == [("E220", "dataset.global_batch_size")]
    assert "batch_size: null" in report.problems[0].hint
    report = api.check_file(
        write_spec(child.replace("global_batch_size: 128", "global_batch_size: 128, batch_size: null"))
    )
    assert report.problems == [] and report.experiment.dataset.global_batch_size == 128


@pytest.mark.parametrize(
    "entry",
    [
        "training.train_metrics: {choice: [true, false]}",
        "training.mixed_precision: {choice: [true, false]}",
        "training.loss: {choice: [cross_entropy, bce_with_logits]}",
    ],
)
def test_a_search_cannot_change_what_the_script_is_compiled_with(write_spec, entry):
    """Every trial runs the same script: these fields decide its code, so searching them trained the spec's
    own value in every trial (silently, before E213 named them)."""
    spec = MINIMAL + f"tune:\n  metric: val_loss\n  mode: min\n  space:\n    {entry}\n"
    report = api.check_file(write_spec(spec))
    key = entry.split(":")[0]
    assert [(p.code, p.path) for p in report.problems] == [("E213", f"tune.space[{key}]")]
