"""End-to-end tests: specs compiled and trained for real on a local Ray (no mocks), all marked slow.

Run from the repository root: `.venv/bin/python -m pytest tests/e2e -q` (about 4 minutes on 2 CPUs).
"""
