"""The runtime's part of objective.trainable (SPEC §13): which modules travel to the trials by value (the project's,
never the script or its runtime), and when Tune may reuse a trial's process (the class defines reset_config)."""

from __future__ import annotations

import importlib
import sys

import specc_runtime
from ray import tune


class Plain(tune.Trainable):
    def step(self):
        return {"score": 1.0}


class Resets(Plain):
    def reset_config(self, new_config):
        self.setup(new_config)
        return True


class ResetsBelow(Resets):
    pass


def test_reuse_only_for_a_class_that_can_take_a_new_config():
    assert not specc_runtime.resets_config(Plain)
    assert specc_runtime.resets_config(Resets) and specc_runtime.resets_config(ResetsBelow)
    assert specc_runtime.resets_config(tune.with_resources(Resets, {"CPU": 1}))  # as the script passes it


def test_the_projects_modules_travel_but_not_the_script_or_its_runtime(tmp_path, monkeypatch):
    spec_dir, code = tmp_path / "specs", tmp_path / "code"
    (spec_dir / "lib").mkdir(parents=True)
    code.mkdir()
    (spec_dir / "lib" / "__init__.py").write_text("")
    (spec_dir / "lib" / "classes_for_travel.py").write_text("X = 1\n")
    (code / "helpers_for_travel.py").write_text("Y = 2\n")
    (spec_dir / "script_for_travel.py").write_text("")
    venv = spec_dir / ".venv" / "lib" / "python3.11" / "site-packages"  # a virtualenv inside the project
    venv.mkdir(parents=True)
    (venv / "installed_for_travel.py").write_text("Z = 3\n")
    monkeypatch.setattr(sys, "path", [str(spec_dir), str(code), str(venv), *sys.path])
    try:
        for name in ("lib.classes_for_travel", "helpers_for_travel", "script_for_travel", "installed_for_travel"):
            importlib.import_module(name)
        script = spec_dir / "script_for_travel.py"
        found = {m.__name__ for m in specc_runtime.project_modules(str(spec_dir), (".", "../code"), keep=(script,))}
        assert found == {"lib", "lib.classes_for_travel", "helpers_for_travel"}  # not the virtualenv's package
        found = {m.__name__ for m in specc_runtime.project_modules(str(spec_dir), keep=(script,))}
        assert found == {"lib", "lib.classes_for_travel"}  # ../code is not an import dir of this spec
    finally:
        for name in ("lib", "lib.classes_for_travel", "helpers_for_travel", "script_for_travel"):
            sys.modules.pop(name, None)
        sys.modules.pop("installed_for_travel", None)
