"""A conditional search space on the session Ray (SPEC §12): specs/digits_conditional.yaml, sgd with momentum or
adam, searched at random (nested Ray domains), with Optuna (define-by-run) and with HyperOpt (nested hp.choice).

The witness of what each trial's training received is the optimizer it built: torch's own optimizer state in the
trial's checkpoint (an SGD's param group holds momentum, an Adam's betas and no momentum), beside the sample Ray
gave the trial (params.json) and the row results.csv writes for it (blank where its option has no such field).
"""

from __future__ import annotations

import pytest
import yaml

from tests.conftest import ROOT

from .conftest import read_best, run_spec
from .test_tune import ray_params, trial_rows

pytestmark = pytest.mark.slow

SPEC = ROOT / "specs" / "digits_conditional.yaml"
SEARCHES = {
    "random": {"type": "random", "seed": 3},
    "optuna": {"type": "optuna", "sampler": "random", "seed": 1},
    "hyperopt": {"type": "hyperopt", "seed": 2, "n_initial_points": 6},
}


# The random search every time; Optuna's and HyperOpt's in turn (tests/e2e/conftest.py): test_tune runs both searchers
# every time, and tests/unit checks the spaces they are given
@pytest.fixture(
    scope="module",
    params=[pytest.param(name, marks=[] if name == "random" else pytest.mark.in_turn(4)) for name in SEARCHES],
)
def searched(request, tmp_path_factory, local_ray):
    root = tmp_path_factory.mktemp(f"conditional-{request.param}")
    spec = yaml.safe_load(SPEC.read_text())
    spec["tune"]["search"] = SEARCHES[request.param]
    spec["training"]["epochs"] = 2
    path = root / SPEC.name
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    run_spec(path, storage_path=root / "runs", quiet=True, echo=False)
    return root / "runs" / "digits-conditional"


def built_optimizer(run_dir, trial_id) -> dict:
    """The param group of the optimizer the trial's training built, from its last checkpoint."""
    import torch

    checkpoints = sorted((run_dir / f"trial_{trial_id}").glob("checkpoint_*/state.pt"))
    assert checkpoints, f"trial {trial_id} saved no checkpoint"
    state = torch.load(checkpoints[-1], map_location="cpu", weights_only=False)
    return state["optimizer"]["param_groups"][0]


def test_each_trial_trains_only_its_options_parameters(searched):
    run_dir = searched
    rows = trial_rows(run_dir)
    assert len(rows) == 6 and all(row["status"] == "completed" for row in rows), rows
    chosen = []
    for row in rows:
        sample = ray_params(run_dir, row["trial_id"])["training.optimizer"]
        group = built_optimizer(run_dir, row["trial_id"])
        assert group["lr"] == pytest.approx(sample["lr"])
        if sample["type"] == "sgd":
            assert set(sample) == {"type", "lr", "momentum", "weight_decay", "nesterov"}
            assert 1e-3 <= sample["lr"] <= 1e-1 and 0.5 <= sample["momentum"] <= 0.99
            assert group["momentum"] == pytest.approx(sample["momentum"]) and "betas" not in group
            assert row["training.optimizer.momentum"] == pytest.approx(sample["momentum"])
        else:
            assert sample["type"] == "adam" and "momentum" not in sample
            assert 1e-4 <= sample["lr"] <= 1e-2
            assert "momentum" not in group and tuple(group["betas"]) == (0.9, 0.999)  # torch's Adam, as compiled
            assert row["training.optimizer.momentum"] is None  # blank in results.csv
        assert row["training.optimizer.type"] == sample["type"]
        assert row["training.optimizer.lr"] == pytest.approx(sample["lr"])
        chosen.append(sample["type"])
    assert set(chosen) == {"sgd", "adam"}, chosen  # trials of both options trained


def test_best_yaml_holds_the_chosen_option_as_a_valid_section(searched):
    from specc.api import load

    run_dir = searched
    best = read_best(run_dir)
    option = best["config"]["training.optimizer"]
    spec = yaml.safe_load((run_dir / "best.yaml").read_text())
    assert spec["training"]["optimizer"] == option
    experiment = load(run_dir / "best.yaml")  # a valid spec of its own
    assert experiment.training.optimizer.type == option["type"] and experiment.tune is None


def test_specc_results_and_the_report_show_the_blanks(searched):
    from specc.results.report import report_html
    from specc.results.run_dir import format_text, read_run

    results = read_run(searched)
    assert not results.warnings, results.warnings
    text = format_text(results)
    assert "momentum" in text and " - " in text  # an adam trial's momentum: blank
    page = report_html(results)
    assert 'class="missing"' in page and "momentum" in page  # the report's table: the blank cell
