"""Prints the README's set-up command of a kind (`main` or `test`): the code block after its marker."""

import re
import sys
from pathlib import Path

readme = Path(__file__).resolve().parents[1] / "README.md"
kind = sys.argv[1]
match = re.search(rf"<!-- {kind}-command -->\s*```sh\n(.+?)\n```", readme.read_text(encoding="utf-8"), re.S)
if not match:
    raise SystemExit(f"README.md has no <!-- {kind}-command --> block")
print(match.group(1).strip())
