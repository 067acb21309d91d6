"""Writing files: the one write gate is specc.read.files.write_file (whole or not at all, never through a link or
over what is not a regular file, and with `within`, never outside a directory). Kept under its older name for the
stages that write."""

from __future__ import annotations

from specc.read.files import write_file as write_atomic

__all__ = ["write_atomic"]
