"""Compile: an Experiment in, the standalone Ray script's source out (script.compile_script).

Enters: a valid Experiment and its shape (plan/). Leaves: Python source. resolve.py decides every fact once (the
`Plan`: shape, data source, paths, what travels to a cluster — travels.py); fragments.py, tune_fragments.py,
keras_fragments.py and tracking.py turn it into the template context (quoted values and code from tables keyed
by validated choices); render.py is the one Jinja environment and the checks on what comes out. Also here: the
staleness check of committed scripts (stale.py), the starter spec of `specc init` (starter.py), and whole-or-
nothing file writes (files.py), which later stages use too.
"""
