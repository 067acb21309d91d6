"""Execute a compiled script: its source in, a finished run directory out.

Enters: an Experiment and its compiled source (compiler/). Leaves: a run — in this process on a local Ray or a
joined cluster (run.py), or as a Ray Job through the Jobs API (submit.py) — with what travels to the cluster
measured and refused before anything is sent when Ray would not take it (shipping.py). The only stage that
imports ray.
"""
