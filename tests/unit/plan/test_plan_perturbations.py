"""What `specc plan` says of PBT/PB2's exploit/explore steps, also when an objective has no bound on its steps."""

from __future__ import annotations

import pytest

from specc import api
from tests.conftest import ROOT

TWO_CPUS = {"CPU": 2, "GPU": 0}
PB2 = "scheduler={type: pb2, perturbation_interval: 4, bounds: {objective.params.lr: [0.001, 1.0]}}"


def scheduler_line(*overrides) -> str:
    report = api.plan_report(api.load(ROOT / "specs" / "objective_pbt.yaml", list(overrides)), machine=TWO_CPUS)
    return next(line for line in api.format_plan(report).splitlines() if "exploit/explore" in line).strip()


@pytest.mark.parametrize("scheduler", [PB2, "scheduler.type=pbt"])
def test_an_unbounded_objective_is_perturbed_every_interval(scheduler):
    """objective.max_steps: null leaves no list of steps to show: the line names the perturbation interval (it
    said `exploit/explore at steps none`, as if no trial were ever perturbed)."""
    line = scheduler_line("objective.max_steps=null", scheduler)
    kind = "pb2" if "pb2" in scheduler else "pbt"
    assert line == (
        f"scheduler  {kind}: exploit/explore every 4 steps from step 4 on, for as long as a trial runs "
        "(the bottom 25% copy the top 25%)"
    )
    burnt_in = scheduler_line("objective.max_steps=null", "scheduler.type=pbt", "scheduler.burn_in_period=6")
    assert "pbt: exploit/explore every 4 steps from step 6 on, for as long" in burnt_in


def test_a_bounded_objective_lists_its_perturbation_steps():
    assert scheduler_line(PB2).startswith("scheduler  pb2: exploit/explore at steps 4, 8, 12, 16, 20 (the bottom")
