"""The shape of a run (SPEC §6): one Trainer run, a Tune function per trial, or a Tune trial per Trainer run."""

from __future__ import annotations

from specc.spec import Experiment

# The CPU share a Tune trial's own process reserves when it drives a Ray Train worker group (Ray rejects 0).
TRIAL_DRIVER_CPU = 0.1


def shape_of(experiment: Experiment) -> str:
    """The leanest correct shape (SPEC §6): no tune -> one Trainer run; tune with at most one worker per trial ->
    a plain Tune function trainable (no worker group, which costs ~20 s to start); more -> a Trainer per trial; an
    objective spec: the user's function is the trainable."""
    if experiment.objective is not None:
        return "objective"  # the user's own function trainable, one process per trial
    if experiment.tune is None:
        return "train"
    return "tune" if experiment.scaling.num_workers <= 1 else "tune_train"
