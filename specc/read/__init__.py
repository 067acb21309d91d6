"""Read a spec: YAML text in, plain data with the position of every key and value out.

Enters: spec files (and the `--set` overrides given with them). Leaves: a `RawSpec` (loader.py) — one merged
mapping (`extends` resolved, overrides applied) and a `SourceMap` from each key path to file:line:col
(document.py) — or a SpecError whose Problems say where the file went wrong (syntax, duplicate keys, tags, alias
bombs, depth, cycles). Nothing here knows what the keys mean beyond their positions.

Also here, as the earliest stage every later one may import: the print gate (terminal.py), through which every line
specc prints is escaped.
"""
