"""Find a spec's problems: a RawSpec in, an Experiment or located Problems out.

Enters: a RawSpec from read/. Leaves: a valid `Experiment` (validate.load) or every Problem of the file, each at
its file:line:col — pydantic's errors in plain words with did-you-mean hints (fields.py), rules across fields
(rules.py), search-space rules (search_space.py) and optional packages a spec needs (extras.py). validate.py is
the front door of every command that takes a spec. Nothing here imports ray, torch or tensorflow, or user code.
"""
