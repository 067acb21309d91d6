"""Issue 48: a class named under objective.function is a located problem at validate (E251), found by reading the
project's source (never importing it). Ray Tune's function trainable calls what it is given once with the config:
a ray.tune.Trainable subclass would be built and never stepped (the run ended in Ray's 'Trial returned a result which
did not include the specified metric(s)'), a plain class built and never heard from."""

from __future__ import annotations

import pytest

from specc.cli import main
from specc.spec.errors import CODES

SPEC = """\
specc: 1
name: obj
objective:
  function: objectives:Search
  params: {lr: 0.01}
  metrics: [score]
  max_steps: 8
tune:
  metric: score
  mode: max
  num_samples: 2
  space:
    objective.params.lr: {loguniform: [1.0e-3, 1.0]}
"""
WHERE = "spec.yaml:4:13: error[E251]: objective.function: objectives:Search is "
STEP = "    def step(self):\n        return {'score': 1.0}\n"


def validate(tmp_path, capsys, modules: dict[str, str], spec: str = SPEC) -> tuple[int, str]:
    for name, text in modules.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (tmp_path / "spec.yaml").write_text(spec, encoding="utf-8")
    code = main(["validate", str(tmp_path / "spec.yaml")])
    return code, capsys.readouterr().out


@pytest.mark.parametrize(
    "module",
    [
        "from ray import tune\n\n\nclass Search(tune.Trainable):\n" + STEP,
        "import ray\n\n\nclass Search(ray.tune.Trainable):\n" + STEP,
        "import ray.tune\n\n\nclass Search(ray.tune.Trainable):\n" + STEP,
        "from ray.tune import Trainable\n\n\nclass Search(Trainable):\n" + STEP,
        "from ray.tune import Trainable as Base\n\n\nclass Search(Base):\n" + STEP,
        "from ray import tune as rt\n\n\nclass Search(rt.Trainable, metaclass=type):\n" + STEP,
        # through a project class of the same module
        "from ray import tune\n\n\nclass Base(tune.Trainable):\n    pass\n\n\nclass Search(Base):\n" + STEP,
    ],
)
def test_a_trainable_class_is_e251(tmp_path, capsys, module):
    code, out = validate(tmp_path, capsys, {"objectives.py": module})
    assert code == 1
    assert WHERE + "a ray.tune.Trainable class" in out
    assert "trainable: objectives:Search" in out  # the hint: the key a Trainable class goes under


@pytest.mark.parametrize(
    "modules",
    [
        {  # a base class in another module of the project, imported absolutely
            "objectives.py": "from bases import Base\n\n\nclass Search(Base):\n" + STEP,
            "bases.py": "from ray import tune\n\n\nclass Base(tune.Trainable):\n    pass\n",
        },
        {  # two steps away, through a package and a relative import
            "objectives.py": "from lib.base import Middle\n\n\nclass Search(Middle):\n" + STEP,
            "lib/__init__.py": "",
            "lib/base.py": "from .root import Root\n\n\nclass Middle(Root):\n    pass\n",
            "lib/root.py": "import ray.tune\n\n\nclass Root(ray.tune.Trainable):\n    pass\n",
        },
        {  # imported as a module
            "objectives.py": "import bases\n\n\nclass Search(bases.Base):\n" + STEP,
            "bases.py": "from ray.tune import Trainable\n\n\nclass Base(Trainable):\n    pass\n",
        },
    ],
)
def test_a_class_deriving_from_a_project_trainable_is_e251(tmp_path, capsys, modules):
    code, out = validate(tmp_path, capsys, modules)
    assert code == 1
    assert WHERE + "a ray.tune.Trainable class" in out


@pytest.mark.parametrize(
    "module",
    [
        "class Search:\n    def __init__(self, config):\n        self.config = config\n",
        "class Search(dict):\n    pass\n",
        "from mylib import Thing\n\n\nclass Search(Thing):\n    pass\n",  # a base specc cannot read
        "class Search(Search2 := object):\n    pass\n",  # a base that names nothing
        "class A(B):\n    pass\n\n\nclass B(A):\n    pass\n\n\nclass Search(A):\n    pass\n",  # a loop
    ],
)
def test_a_plain_class_is_e251_too(tmp_path, capsys, module):
    """A class that is not a Trainable: Ray Tune would build it and get no reports. It says what to write."""
    code, out = validate(tmp_path, capsys, {"objectives.py": module})
    assert code == 1
    assert WHERE + "a class, not a function" in out
    assert "def(config)" in out


def test_a_function_is_not_e251(tmp_path, capsys):
    module = "from ray import tune\n\n\nclass Search2(tune.Trainable):\n    pass\n\n\ndef Search(config):\n    pass\n"
    code, out = validate(tmp_path, capsys, {"objectives.py": module})
    assert (code, "E251" in out) == (0, False), out


def test_a_base_module_outside_the_project_is_not_read(tmp_path, capsys):
    """The bases are followed only through the project's own files: a module linked in from outside is not read (the
    class is refused all the same, as a plain class)."""
    project, outside = tmp_path / "project", tmp_path / "outside"
    outside.mkdir()
    (outside / "bases.py").write_text("from ray import tune\n\n\nclass Base(tune.Trainable):\n    pass\n")
    project.mkdir()
    (project / "bases.py").symlink_to(outside / "bases.py")
    module = "from bases import Base\n\n\nclass Search(Base):\n" + STEP
    code, out = validate(project, capsys, {"objectives.py": module})
    assert code == 1 and WHERE + "a class, not a function" in out


def test_pbt_over_a_class_says_e251_not_e206(tmp_path, capsys):
    """pbt's check that the function restores checkpoints (E206) does not speak of a class: E251 says what to do."""
    spec = SPEC + "scheduler:\n  type: pbt\n  perturbation_interval: 2\n  mutations:\n"
    spec += "    objective.params.lr: {loguniform: [1.0e-3, 1.0]}\n"
    module = "from ray import tune\n\n\nclass Search(tune.Trainable):\n" + STEP
    code, out = validate(tmp_path, capsys, {"objectives.py": module}, spec)
    assert code == 1 and "E251" in out and "E206" not in out, out


def test_e251_is_a_stable_code():
    assert CODES["E251"][0] == "objective-is-a-class"


# -- objective.trainable (SPEC §13): a ray.tune.Trainable class, stepped by Tune --------------------------------------
TRAINABLE_SPEC = SPEC.replace("  function: objectives:Search\n", "  trainable: objectives:Search\n")
CLASS = "from ray import tune\n\n\nclass Search(tune.Trainable):\n" + STEP
CHECKPOINTS = (
    "    def save_checkpoint(self, checkpoint_dir):\n        pass\n\n"
    "    def load_checkpoint(self, checkpoint_dir):\n        pass\n"
)
PBT = "scheduler:\n  type: pbt\n  perturbation_interval: 2\n  mutations:\n    objective.params.lr: [0.01, 0.1]\n"


@pytest.mark.parametrize(
    "modules",
    [
        {"objectives.py": CLASS},
        {  # through a project base in another module
            "objectives.py": "from bases import Base\n\n\nclass Search(Base):\n    pass\n",
            "bases.py": "from ray import tune\n\n\nclass Base(tune.Trainable):\n" + STEP,
        },
        {"objectives.py": "from mylib import Thing\n\n\nclass Search(Thing):\n    pass\n"},  # a base taken on trust
    ],
)
def test_a_trainable_class_validates(tmp_path, capsys, modules):
    code, out = validate(tmp_path, capsys, modules, TRAINABLE_SPEC)
    assert code == 0, out


def test_a_function_under_trainable_says_to_use_function(tmp_path, capsys):
    module = "from ray import tune\n\n\ndef Search(config):\n    tune.report({'score': 1.0})\n"
    code, out = validate(tmp_path, capsys, {"objectives.py": module}, TRAINABLE_SPEC)
    assert code == 1
    assert "spec.yaml:4:3: error[E252]: objective.trainable: objectives:Search is a function" in out, out
    assert "function: objectives:Search" in out  # the hint names the key it goes under


@pytest.mark.parametrize(
    ("module", "said"),
    [
        ("class Search:\n" + STEP, "is not a ray.tune.Trainable subclass"),
        ("from ray import tune\n\n\nclass Search(tune.Trainable):\n    pass\n", "defines no step()"),
    ],
)
def test_a_class_tune_cannot_step_is_e252(tmp_path, capsys, module, said):
    code, out = validate(tmp_path, capsys, {"objectives.py": module}, TRAINABLE_SPEC)
    assert code == 1 and "error[E252]: objective.trainable: objectives:Search " + said in out, out


def test_function_and_trainable_together_or_neither(tmp_path, capsys):
    both = SPEC.replace("  function: objectives:Search\n", "  function: objectives:Search\n  trainable: x:Search\n")
    code, out = validate(tmp_path, capsys, {"objectives.py": CLASS}, both)
    assert code == 1 and "error[E252]: objective.trainable: objective names both a function and a trainable" in out
    neither = SPEC.replace("  function: objectives:Search\n", "")
    code, out = validate(tmp_path, capsys, {"objectives.py": CLASS}, neither)
    assert code == 1 and "error[E102]: objective: objective names no trainable" in out, out


@pytest.mark.parametrize("setting", ["checkpoint_every: 2", "checkpoint_at_end: true"])
def test_class_checkpoint_settings_beside_a_function_are_e252(tmp_path, capsys, setting):
    spec = SPEC.replace("  max_steps: 8\n", f"  max_steps: 8\n  {setting}\n")
    module = "from ray import tune\n\n\ndef Search(config):\n    tune.report({'score': 1.0})\n"
    code, out = validate(tmp_path, capsys, {"objectives.py": module}, spec)
    name = setting.split(":")[0]
    assert code == 1 and f"error[E252]: objective.{name}: objective.{name} is for a ray.tune.Trainable class" in out


def test_pbt_over_a_class_needs_its_checkpoint_methods(tmp_path, capsys):
    code, out = validate(tmp_path, capsys, {"objectives.py": CLASS}, TRAINABLE_SPEC + PBT)
    assert code == 1 and "error[E206]" in out and "defines no save_checkpoint and no load_checkpoint" in out, out
    code, out = validate(tmp_path, capsys, {"objectives.py": CLASS + "\n" + CHECKPOINTS}, TRAINABLE_SPEC + PBT)
    assert code == 0, out


def test_e252_is_a_stable_code():
    assert CODES["E252"][0] == "function-or-trainable"
