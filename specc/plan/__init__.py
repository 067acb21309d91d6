"""Plan what runs before anything starts: an Experiment in, its shape and a search's trials out.

Enters: a valid Experiment. Leaves: the run's shape (shape.py: one Trainer run, a Tune function per trial, or a
Trainer per trial), a seeded search's configs reproduced as Ray samples them (sampling.py), and `specc plan`'s
report — trial count, per-trial resources and fit, scheduler rungs, budget (trials.py) — as data or text
(text.py). Imports numpy to sample; never ray. (The compiler's `Plan` — every fact a script is rendered
from — is compiler/resolve.py's; this stage is what `specc plan` shows.)
"""
