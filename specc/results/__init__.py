"""Read a finished run back: a run directory in, tables, the best trial, a report and plots out.

Enters: a run directory a compiled script wrote (results.csv, best.json, each trial's result.json). Leaves: the
trials or epochs and the best one (run_dir.py), each trial's per-epoch history and the sampled values against
the metric (history.py), the one screen `specc run` ends with (summary.py), the HTML report (report.py) and PNG
plots (plots.py). Never imports ray.
"""
