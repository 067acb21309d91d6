"""Issue 53, classes 5 and 6 for numbers: work bounded by the spec's size, not its numbers.

Before: `quniform`/`qloguniform`/`qrandn` with q 1e-300 and a 321-digit `qrandint` bound were OverflowErrors at
validate; `randint`/`lograndint` past int64 and a hyperband over 10^40 epochs were tracebacks at plan; ASHA with
reduction_factor 1.0000001 took 46 million rungs (1.9 GB and 43 s here, 15.8 GB reported) at compile and never
finished plan; a hyperband plan over a billion samples listed 35 million brackets (2.6 GB at the 60 s timeout, 12.7 GB
reported); a PBT plan over 10^12 epochs looped over every epoch into a MemoryError. After: one gate
(specc.check.numbers.numbers_ray_runs) refuses the numbers past what Ray can run, E240/E241 located where they are
written, and plan and compile count in closed form, listing at most 20 of anything.
"""

from __future__ import annotations

import contextlib
import io
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from specc.cli import main
from specc.plan.trials import (
    LISTED,
    _bracket_epochs,
    _within,
    hyperband_brackets,
    hyperband_epochs,
    perturbation_count,
    perturbation_epochs,
)
from specc.spec.scalars import INT64_MAX, INT64_MIN
from specc.spec.scheduler import RUNGS_AT_MOST, Asha, HyperBand
from tests.conftest import ROOT

SECONDS = 10  # the most one command may take, in-process
PEAK_BYTES = 300 * 2**20  # the most Python memory one command may allocate (tracemalloc's peak)
HEAD = "specc: 1\nname: tiny\nframework: torch\nmodel: {type: mlp, hidden_sizes: [16]}\ndataset: {type: digits}\n"
TUNE = "tune: {metric: val_loss, mode: min, search: {type: random, seed: 1}, space: {%s}}\n"


class TookTooLong(BaseException):
    """Raised by the timer; a BaseException, so that no `except Exception` in specc swallows it."""


def _alarm(signum, frame):
    raise TookTooLong(f"a command took longer than {SECONDS} s")


def run(*argv: str) -> tuple[int, str, float, int]:
    """specc's CLI in this process: (exit code, stdout + stderr, seconds, tracemalloc's peak bytes). Raises whatever
    escapes main (a traceback is a failure), TookTooLong past SECONDS."""
    out = io.StringIO()
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, SECONDS)
    tracemalloc.start()
    start = time.perf_counter()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            code = main(list(argv))
    finally:
        seconds = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    return code, out.getvalue(), seconds, peak


def every_command(spec: Path) -> dict[str, tuple[int, str]]:
    """validate, plan and compile on `spec`, each bounded in time and memory; exit codes 0/1/2 only."""
    found = {}
    for command in (["validate"], ["plan"], ["compile", "-o", str(spec.with_suffix(".py"))]):
        code, text, seconds, peak = run(command[0], str(spec), *command[1:])
        assert code in (0, 1, 2), (command, code, text)
        assert seconds < SECONDS and peak < PEAK_BYTES, (command, seconds, peak)
        found[command[0]] = (code, text)
    return found


# -- the named cases: each a located problem at validate, and the same at plan and compile ----------------------
BIG = 10**320 + 7  # 321 digits
NAMED = {
    "quniform-q-1e-300": (TUNE % "training.optimizer.lr: {quniform: [0.1, 1.0e10, 1.0e-300]}", "E240", 2),
    "qloguniform-q-1e-300": (TUNE % "training.optimizer.lr: {qloguniform: [0.1, 1.0e10, 1.0e-300]}", "E240", 2),
    "qrandn-q-1e-300": (TUNE % "training.optimizer.lr: {qrandn: [1.0e10, 1.0, 1.0e-300]}", "E240", 2),
    "qrandint-321-digits": (TUNE % f"training.epochs: {{qrandint: [1, {BIG}, 3]}}", "E240", 1),
    "randint-past-int64": (TUNE % f"training.epochs: {{randint: [1, {INT64_MAX + 1}]}}", "E240", 1),
    "lograndint-past-int64": (TUNE % f"training.epochs: {{lograndint: [1, {10**20}]}}", "E240", 1),
    "randint-below-int64": (TUNE % f"model.hidden_sizes.0: {{randint: [{INT64_MIN - 1}, 4]}}", "E240", 0),
    "uniform-wider-than-a-float": (TUNE % "training.optimizer.lr: {uniform: [-1.7e308, 1.7e308]}", "E240", 1),
    "randn-sd-1e308": (TUNE % "training.optimizer.lr: {randn: [1.0, 1.0e308]}", "E240", 1),
    "conditional-option-q": (
        TUNE % "training.optimizer: {choice: [{type: sgd, lr: {quniform: [0.0, 1.0e10, 1.0e-300]}}, {type: adam}]}",
        "E240",
        2,
    ),
}
WHERE = {  # the key path each named problem is located at
    "qrandint-321-digits": "tune.space[training.epochs].qrandint.1",
    "randint-past-int64": "tune.space[training.epochs].randint.1",
    "conditional-option-q": "tune.space[training.optimizer].choice.0.lr.quniform.2",
}
SECTIONS = {
    "hyperband-epochs-10^40": (
        f"training: {{epochs: {10**40}}}\ntune: {{metric: val_loss, mode: min}}\nscheduler: {{type: hyperband}}\n",
        "E240",
        "training.epochs",
    ),
    "asha-max_t-10^40": (
        f"tune: {{metric: val_loss, mode: min}}\nscheduler: {{type: asha, max_t: {10**40}}}\n",
        "E240",
        "scheduler.max_t",
    ),
    "asha-reduction-factor-1.0000001": (
        "tune: {metric: val_loss, mode: min}\nscheduler: {type: asha, max_t: 100, reduction_factor: 1.0000001}\n",
        "E241",
        "scheduler.reduction_factor",
    ),
    "asha-a-trillion-brackets": (
        "tune: {metric: val_loss, mode: min}\nscheduler: {type: asha, brackets: 1000000000000}\n",
        "E241",
        "scheduler.brackets",
    ),
    "hyperband-reduction-factor-1.045": (
        "tune: {metric: val_loss, mode: min}\n"
        f"scheduler: {{type: hyperband, max_t: {INT64_MAX}, reduction_factor: 1.045}}\n",
        "E241",
        "scheduler.reduction_factor",
    ),
    "resources-1e305": (
        "scaling: {resources_per_worker: {CPU: 1.0e305}}\n",
        "E240",
        "scaling.resources_per_worker.CPU",
    ),
    "trials-past-int64": (
        TUNE.replace("space:", f"num_samples: {INT64_MAX // 2}, space:") % "model.hidden_sizes.0: {grid: [8, 16, 32]}",
        "E240",
        "tune.num_samples",
    ),
    "pbt-factor-1e308": (
        "tune: {metric: val_loss, mode: min}\nscheduler: {type: pbt, perturbation_factors: [1.0e308, 0.5], "
        "mutations: {training.optimizer.lr: {uniform: [0.001, 10]}}}\n",
        "E240",
        "scheduler.perturbation_factors",
    ),
}


@pytest.mark.parametrize("name", list(NAMED))
def test_distributions_past_what_ray_samples_are_located_problems(write_spec, name):
    section, code, argument = NAMED[name]
    spec = write_spec(HEAD + "training: {epochs: 4}\n" + section)
    for command, (status, text) in every_command(spec).items():
        assert status == 1 and "Traceback" not in text, (command, text)
        line = next(line for line in text.splitlines() if f"error[{code}]" in line)
        assert line.startswith(f"{spec}:") and f".{argument}: " in line and WHERE.get(name, "") in line


@pytest.mark.parametrize("name", list(SECTIONS))
def test_counts_and_budgets_past_what_ray_runs_are_located_problems(write_spec, name):
    section, code, path = SECTIONS[name]
    spec = write_spec(HEAD + ("" if section.startswith("training") else "training: {epochs: 4}\n") + section)
    for status, text in every_command(spec).values():
        assert status == 1 and f"error[{code}]: {path}:" in text, text
        assert f"{spec}:" in text  # located: file:line:col


def test_the_hint_names_a_reduction_factor_that_passes(write_spec):
    _code, text, _s, _p = run(
        "validate", str(write_spec(HEAD + "training: {epochs: 4}\n" + SECTIONS["asha-reduction-factor-1.0000001"][0]))
    )
    least = text.split("hint: a reduction_factor of ")[1].split()[0]
    assert Asha(type="asha", max_t=100, reduction_factor=float(least)).too_fine() is None
    assert HyperBand(type="hyperband", max_t=100, reduction_factor=1.115).too_fine() is None
    assert HyperBand(type="hyperband", max_t=100, reduction_factor=1.1).too_fine() is not None


# -- what validates is planned and compiled in closed form -------------------------------------------------------
def test_a_hyperband_plan_over_a_billion_samples_lists_20_brackets_and_counts_the_rest(write_spec):
    spec = write_spec(
        HEAD + "training: {epochs: 100}\ntune: {metric: val_loss, mode: min, num_samples: 1000000000}\n"
        "scheduler: {type: hyperband}\n"
    )
    results = every_command(spec)
    assert [code for code, _ in results.values()] == [0, 0, 0]
    text = results["plan"][1]
    assert text.count(" bracket ") == LISTED and "... and 34965015 more brackets" in text  # 1e9 / 143 a band x 5
    assert "hyperband: 14125874139 with these brackets" in text


def test_pbt_over_a_trillion_epochs_lists_20_perturbations(write_spec):
    pbt = "scheduler: {type: pbt, mutations: {training.optimizer.lr: {loguniform: [0.001, 0.1]}}}\n"
    spec = write_spec(HEAD + "training: {epochs: 1000000000000}\ntune: {metric: val_loss, mode: min}\n" + pbt)
    results = every_command(spec)
    assert [code for code, _ in results.values()] == [0, 0, 0]
    assert "38, 40 and 499999999980 more" in results["plan"][1]


@pytest.mark.parametrize(
    ("max_t", "eta", "stop_last"), [(81, 3, True), (100, 3, False), (9, 2.5, True), (7, 1.5, False)]
)
@pytest.mark.parametrize("trials", [1, 5, 143, 144, 1000, 2021])
def test_hyperband_budget_in_closed_form_is_the_sum_over_every_bracket(max_t, eta, stop_last, trials):
    hb = HyperBand(type="hyperband", max_t=max_t, reduction_factor=eta, stop_last_trials=stop_last)
    epochs, last = max_t - 1, None if stop_last else max_t - 1
    every = hyperband_brackets(hb, trials, limit=None)
    assert sum(b["trials"] for b in every) == trials
    expected = sum(_bracket_epochs(_within(b["rungs"], epochs), last) for b in every)
    assert hyperband_epochs(hb, trials, epochs, last) == expected


@given(st.integers(1, 30), st.integers(0, 60), st.integers(0, 200))
def test_perturbation_epochs_in_closed_form_are_the_loops(interval, burn_in, epochs):
    last, found = 0, []
    for epoch in range(1, epochs + 1):  # the loop plan ran before, one step an epoch
        if epoch >= burn_in and epoch - last >= interval:
            found.append(epoch)
            last = epoch
    assert perturbation_epochs(interval, burn_in, epochs) == found
    assert perturbation_count(interval, burn_in, epochs) == len(found)
    assert perturbation_epochs(interval, burn_in, epochs, 3) == found[:3]


@given(st.integers(1, 10**6), st.integers(1, 50), st.floats(1.05, 10), st.integers(1, 6))
@settings(max_examples=60, deadline=None)
def test_asha_rung_count_is_ray_asha_schedulers(max_t, grace, rf, brackets):
    """The closed form against Ray's ASHAScheduler, which builds its rungs: equal but where numpy's log and math's
    differ in the last bit at a whole number of rungs (one rung a bracket at most)."""
    from ray.tune.schedulers import ASHAScheduler

    grace = min(grace, max_t)
    asha = Asha(type="asha", max_t=max_t, grace_period=grace, reduction_factor=rf, brackets=brackets)
    ray = ASHAScheduler(max_t=max_t, grace_period=grace, reduction_factor=rf, brackets=brackets)
    assert abs(asha.rung_count() - sum(len(b._rungs) for b in ray._brackets)) <= brackets


@given(st.integers(1, INT64_MAX), st.floats(1.01, 100))
@settings(max_examples=60, deadline=None)
def test_hyperband_brackets_a_band_are_ray_hyperband_schedulers(max_t, eta):
    from ray.tune.schedulers import HyperBandScheduler

    ray = HyperBandScheduler(max_t=max_t, reduction_factor=eta)
    assert abs(HyperBand(type="hyperband", max_t=max_t, reduction_factor=eta).brackets_per_band() - ray._s_max_1) <= 1


# -- generated: extreme numbers in every numeric field that reaches arithmetic ---------------------------------
INTS = st.one_of(
    st.sampled_from([0, 1, 2, 3, -1, 2**31, 2**53 + 1, 2**62, INT64_MAX, INT64_MAX + 1, INT64_MIN, INT64_MIN - 1]),
    st.sampled_from([10**19, 10**40, BIG, -BIG]),
    st.integers(1, 200),
)
FLOATS = st.one_of(
    st.sampled_from([1e-300, 5e-324, 1e308, 1.7976931348623157e308, -1e308, 0.0, 1.0, 2.5e15, 1e14, 1e15]),
    st.floats(allow_nan=False, allow_infinity=False),
)
NEAR_ONE = st.one_of(st.sampled_from([1.0000001, 1 + 2**-52, 1.001, 1.01, 1.1, 2.0]), st.floats(1.0, 1.2))
POSITIVE = st.one_of(INTS, st.integers(1, 10**6))


def distributions(number):
    """A tune.space entry of any kind with extreme arguments, its bounds in order (so that many validate)."""
    pair = st.lists(number, min_size=2, max_size=2, unique=True).map(sorted)
    ranged = st.sampled_from(["uniform", "loguniform", "randint", "lograndint", "randn"])
    quantized = st.sampled_from(["quniform", "qloguniform", "qrandint", "qrandn"])
    return st.one_of(
        st.builds(lambda kind, bounds: {kind: bounds}, ranged, pair),
        st.builds(lambda kind, bounds, q: {kind: [*bounds, q]}, quantized, pair, number),
        st.builds(lambda values: {"grid": values}, st.lists(number, min_size=1, max_size=3)),
    )


SCHEDULERS = {  # a valid scheduler of each kind, and the strategies of its numeric fields
    "asha": ({"type": "asha", "max_t": 8, "grace_period": 1, "reduction_factor": 2},
             {"max_t": POSITIVE, "grace_period": POSITIVE, "reduction_factor": NEAR_ONE, "brackets": POSITIVE}),
    "hyperband": ({"type": "hyperband", "max_t": 8, "reduction_factor": 3},
                  {"max_t": POSITIVE, "reduction_factor": NEAR_ONE, "stop_last_trials": st.booleans()}),
    "pbt": ({"type": "pbt", "perturbation_interval": 2, "mutations": {"training.optimizer.lr": [0.01, 0.1]}},
            {"perturbation_interval": POSITIVE, "burn_in_period": POSITIVE,
             "perturbation_factors": st.lists(FLOATS, min_size=2, max_size=2),
             "mutations": distributions(FLOATS).map(lambda d: {"training.optimizer.lr": d})}),
}  # fmt: skip
SPACE_PATHS = {"training.optimizer.lr": FLOATS, "training.epochs": INTS, "model.hidden_sizes.0": INTS}
FIELDS = {  # (section, key) -> the extreme values it is given
    ("training", "epochs"): POSITIVE,
    ("tune", "num_samples"): POSITIVE,
    ("tune", "max_concurrent_trials"): POSITIVE,
    ("scaling", "num_workers"): st.sampled_from([0, 1, 2, 2**62, INT64_MAX]),
    ("scaling", "resources_per_worker"): FLOATS.map(lambda cpu: {"CPU": cpu}),
    ("stop", "when"): POSITIVE.map(lambda n: [f"training_iteration >= {n}"]),
    ("stop", "time_budget_s"): FLOATS,
}


@st.composite
def extreme_specs(draw) -> dict:
    """A valid spec with a search, a scheduler and stop rules, then one to four of its numbers made extreme: a field
    of FIELDS, a tune.space entry, or one of the scheduler's fields."""
    spec = yaml.safe_load(HEAD)
    spec["training"] = {"epochs": 8, "checkpoint_every": 1}
    spec["tune"] = {"metric": "val_loss", "mode": "min", "num_samples": 3, "search": {"type": "random", "seed": 1},
                    "space": {"training.optimizer.lr": {"loguniform": [0.001, 0.1]}}}  # fmt: skip
    kind = draw(st.sampled_from(sorted(SCHEDULERS)))
    scheduler, fields = SCHEDULERS[kind]
    spec["scheduler"], spec["stop"] = dict(scheduler), {"when": ["training_iteration >= 4"]}
    for _ in range(draw(st.integers(1, 4))):
        where = draw(st.sampled_from(["field", "space", "scheduler"]))
        if where == "field":
            (section, key), values = draw(st.sampled_from(list(FIELDS.items())))
            spec.setdefault(section, {})[key] = draw(values)
        elif where == "space":
            path = draw(st.sampled_from(sorted(SPACE_PATHS)))
            spec["tune"]["space"] = {path: draw(distributions(SPACE_PATHS[path]))}
        else:
            key = draw(st.sampled_from(sorted(fields)))
            spec["scheduler"][key] = draw(fields[key])
    return spec


GENERATED = settings(
    max_examples=int(os.environ.get("SPECC_FUZZ_EXAMPLES", "40")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@GENERATED
@given(extreme_specs())
def test_extreme_numbers_end_in_an_exit_code_within_bounds(spec):
    """validate, plan and compile on a spec whose numbers are extreme: exit 0/1/2, no traceback, each command within
    SECONDS and PEAK_BYTES; a spec that validates also plans and compiles."""
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "spec.yaml"
        path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
        results = every_command(path)
    if results["validate"][0] == 0:
        assert results["plan"][0] == 0 and results["compile"][0] == 0, results


# -- the memory cases, in a process of their own with an address-space limit -------------------------------------
def _limited():
    resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, 3 * 2**30))


@pytest.mark.parametrize(
    ("command", "section"),
    [
        ("compile", "scheduler: {type: asha, max_t: 100, reduction_factor: 1.0000001}\n"),
        ("plan", "scheduler: {type: hyperband}\n"),
    ],
)
def test_the_memory_cases_end_in_3_gib_and_60_s(write_spec, command, section):
    spec = write_spec(
        HEAD + "training: {epochs: 100}\ntune: {metric: val_loss, mode: min, num_samples: 1000000000}\n" + section
    )
    argv = [sys.executable, "-m", "specc", command, str(spec)] + (["-o", "-"] if command == "compile" else [])
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, preexec_fn=_limited, cwd=ROOT)
    assert done.returncode in (0, 1) and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert ("E241" in done.stdout + done.stderr) if "asha" in section else "more brackets" in done.stdout


def test_the_bounds_are_the_documented_ones():
    assert RUNGS_AT_MOST == 1_000 and LISTED == 20
    docs = (ROOT / "docs" / "problems.md").read_text(encoding="utf-8")
    assert "at most 1,000 rungs" in docs and "lists at most 20" in docs
