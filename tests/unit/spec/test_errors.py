"""Problems format as users read them, and survive pickling (Ray sends exceptions between processes)."""

from __future__ import annotations

import pickle

from specc.spec.errors import CODES, Problem, SpecError


def test_problem_text_form():
    problem = Problem("E106", "must be >= 1, got 0", "specs/x.yaml", 14, 5, "scheduler.grace_period", "a hint")
    assert str(problem) == "specs/x.yaml:14:5: error[E106]: scheduler.grace_period: must be >= 1, got 0"


def test_problem_without_position_or_path_and_with_origin():
    problem = Problem("E106", "must be < 1, got 2", "x.yaml", path="model.dropout", origin="--set model.dropout=2")
    assert str(problem) == "x.yaml: error[E106]: model.dropout: must be < 1, got 2 (--set model.dropout=2)"


def test_warnings_are_warnings():
    assert Problem("W301", "m").severity == "warning"
    assert Problem("E101", "m").severity == "error"
    assert all(code[0] in "EW" and code[1:].isdigit() for code in CODES)


def test_spec_error_pickles_with_its_problems():
    error = SpecError([Problem("E101", "unknown key 'x'", "a.yaml", 1, 2, "x", "did you mean 'y'?")])
    again = pickle.loads(pickle.dumps(error))
    assert isinstance(again, SpecError)
    assert again.problems == error.problems
    assert str(again) == "a.yaml:1:2: error[E101]: x: unknown key 'x'"
