"""Golden tests: every example spec that compiles has its expected script in tests/golden/<spec stem>.py.

    SPECC_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/unit/compiler/test_golden.py    # rewrite them

Specs are compiled as `specc compile specs/<stem>.yaml` does from the repo root (relative spec path,
default output build/<stem>.py), so a golden does not depend on where the checkout lives. Besides equality:
every golden parses, is ruff-clean with the project's config and `ruff format`-stable; output is
byte-identical under different hash seeds; only the code paths a spec uses are emitted; and compiling
imports neither ray, torch nor tensorflow (nor the spec's own factory modules).
"""

from __future__ import annotations

import ast
import contextlib
import functools
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from specc import api
from specc import runtime as RUNTIME
from specc.compiler import travels
from specc.compiler.fragments import runtime_env_of
from specc.spec.errors import UsageError
from tests.conftest import ROOT

GOLDEN = ROOT / "tests" / "golden"

UPDATE = os.environ.get("SPECC_UPDATE_GOLDEN") == "1"
SPECS = [Path(path).relative_to(ROOT).as_posix() for path in api.spec_files([ROOT / "specs"])]


def _train_only_torch(spec: str) -> bool:
    experiment = api.load(ROOT / spec)
    return experiment.framework == "torch" and experiment.tune is None


TRAIN_ONLY_TORCH = [spec for spec in SPECS if _train_only_torch(spec)]  # what this specc compiles
GOLDEN_NAMES = [Path(spec).stem for spec in SPECS]


def compile_spec(spec: str) -> str:
    """The script `specc compile SPEC -o tests/golden/<stem>.py` writes, compiled from the repo root: each golden
    is a compiled script committed for review, which `specc check-compiled` (and its pre-commit hook) checks."""
    with contextlib.chdir(ROOT):
        return api.compile(api.load(spec), output=f"tests/golden/{Path(spec).stem}.py")


@functools.cache
def compiled(spec: str) -> str | UsageError:
    """The script, or the UsageError of a spec this specc does not compile yet (tune, tensorflow)."""
    try:
        return compile_spec(spec)
    except UsageError as error:
        return error


def golden_path(spec: str) -> Path:
    return GOLDEN / f"{Path(spec).stem}.py"


def compilable() -> list[str]:
    return [spec for spec in SPECS if isinstance(compiled(spec), str)]


def not_compilable() -> list[str]:
    return [spec for spec in SPECS if not isinstance(compiled(spec), str)]


def goldens() -> list[Path]:
    """The compiled experiment files (the runtime beside them is no spec's)."""
    return sorted(path for path in GOLDEN.glob("*.py") if path.name != RUNTIME.FILE)


# --- the goldens themselves -------------------------------------------------------------------------------


@pytest.mark.parametrize("spec", SPECS)
def test_compiled_script_matches_golden(spec):
    source = compiled(spec)
    golden = golden_path(spec)
    if isinstance(source, UsageError):
        if UPDATE:
            golden.unlink(missing_ok=True)
        assert not golden.exists(), f"{spec} no longer compiles ({source}) but {golden.name} exists"
        pytest.skip(f"not compiled by this specc (tune or tensorflow): {spec}: {source}")
    if UPDATE:
        golden.parent.mkdir(parents=True, exist_ok=True)
        if not golden.exists() or golden.read_text(encoding="utf-8") != source:
            golden.write_text(source, encoding="utf-8", newline="\n")
    assert golden.exists(), f"no golden for {spec}: run SPECC_UPDATE_GOLDEN=1 pytest {Path(__file__).name}"
    expected = golden.read_text(encoding="utf-8")
    assert source == expected, f"{spec} compiles differently from {golden.name}: rerun with SPECC_UPDATE_GOLDEN=1"


def test_the_runtime_beside_the_goldens_is_the_one_compile_writes():
    """tests/golden holds what `specc compile` writes there: the experiment files and one specc_runtime.py."""
    golden = GOLDEN / RUNTIME.FILE
    if UPDATE and (not golden.exists() or golden.read_text(encoding="utf-8") != RUNTIME.source()):
        golden.write_text(RUNTIME.source(), encoding="utf-8", newline="\n")
    assert golden.read_text(encoding="utf-8") == RUNTIME.source(), "rerun with SPECC_UPDATE_GOLDEN=1"


def test_every_example_spec_compiles():
    assert not_compilable() == [], [compiled(spec) for spec in not_compilable()]


def test_each_framework_script_uses_only_its_own_library():
    for spec in SPECS:
        source, framework = compiled(spec), api.load(ROOT / spec).framework
        imports = [line for line in source.splitlines() if line.startswith(("import ", "from "))]
        if framework == "tensorflow":
            assert "import tf_keras as keras" in imports and not any("torch" in line for line in imports), spec
        else:
            assert not any("tensorflow" in line or "keras" in line for line in imports), spec


def test_every_golden_belongs_to_a_compilable_spec():
    stems = {Path(spec).stem for spec in compilable()}
    orphans = [path for path in goldens() if path.stem not in stems]
    if UPDATE:
        for path in orphans:
            path.unlink()
        orphans = []
    assert not orphans, f"goldens without a compilable spec (delete them): {[path.name for path in orphans]}"


def test_golden_set_covers_the_new_examples():
    expected = {
        "digits_mlp",
        "base_digits",
        "digits_cnn",
        "iris_local",
        "digits_ray_data",
        "breast_cancer_bce",
        "synthetic_regression_mae",
        "custom_model",
        "digits_gpu",
    }
    assert expected <= {path.stem for path in goldens()}


def test_goldens_parse():
    assert goldens()
    for path in goldens():
        ast.parse(path.read_text(encoding="utf-8"), filename=path.name)


def ruff(*args: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "ruff", *args, "--config", "pyproject.toml", "--no-cache", str(GOLDEN)]
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=False)


def test_goldens_are_ruff_clean():
    assert goldens()
    done = ruff("check")
    assert done.returncode == 0, done.stdout + done.stderr


def test_goldens_are_ruff_format_stable():
    assert goldens()
    done = ruff("format", "--check")
    assert done.returncode == 0, done.stdout + done.stderr


# --- determinism ------------------------------------------------------------------------------------------

COMPILE_ALL = """
import contextlib, json, sys
from pathlib import Path
from specc import api
from specc.spec.errors import UsageError
out = {}
for spec in json.loads(sys.argv[1]):
    try:
        out[spec] = api.compile(api.load(spec), output=f"tests/golden/{Path(spec).stem}.py")
    except UsageError as error:
        out[spec] = f"UsageError: {error}"
sys.stdout.write(json.dumps(out))
"""


def test_output_does_not_depend_on_the_hash_seed():
    """Two interpreters with different PYTHONHASHSEED compile every example spec to the same bytes."""
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", COMPILE_ALL, json.dumps(SPECS)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONHASHSEED": seed},
        )
        for seed in ("1", "4242")
    ]
    outputs = []
    for process in runs:
        stdout, stderr = process.communicate(timeout=300)
        assert process.returncode == 0, stderr.decode()
        outputs.append(stdout)
    assert outputs[0] == outputs[1]
    first = json.loads(outputs[0])
    assert set(first) == set(SPECS)
    for spec in compilable():  # and the same bytes as this process (hash seed random or whatever pytest set)
        assert first[spec] == compiled(spec), spec


# --- only the code paths a spec uses ----------------------------------------------------------------------


def golden_text(stem: str) -> str:
    path = GOLDEN / f"{stem}.py"
    if not path.exists():
        pytest.skip(f"no golden {path.name}")
    return path.read_text(encoding="utf-8")


GPU_PATHS = (
    'TorchConfig(backend="nccl" if scaling["use_gpu"] else "gloo")',
    "pin_memory=torch.cuda.is_available()",  # not pinned where --smoke runs on a CPU machine
    "torch.autocast(",
    "GradScaler(",
)


def test_gpu_golden_has_the_gpu_code_paths():
    source = golden_text("digits_gpu")
    for needle in GPU_PATHS:
        assert needle in source, needle
    assert '"num_workers": 2, "use_gpu": True,' in source
    assert "scaler.unscale_(optimizer)" in source  # clipping under a GradScaler unscales first


def test_cpu_golden_has_none_of_them():
    source = golden_text("digits_mlp")
    for needle in ("nccl", "pin_memory", "autocast", "GradScaler", "scaler.step", "cuda"):
        assert needle not in source, needle
    assert 'TorchConfig(backend="gloo")' in source


def test_mixed_precision_on_cpu_keeps_the_scaler_but_no_gpu_transport():
    source = golden_text("digits_cnn")
    assert "GradScaler(" in source and "torch.autocast(" in source
    assert "nccl" not in source and "pin_memory" not in source


def test_no_lr_schedule_means_no_lr_schedule_in_the_code():
    source = golden_text("digits_mlp")
    assert "make_lr_schedule" not in source
    assert "lr_schedule = " not in source and "lr_schedule." not in source and "lr_schedule," not in source


@pytest.mark.parametrize("name", GOLDEN_NAMES)
def test_no_script_carries_an_object_its_spec_does_not_use(name):
    """SPEC §11: what the spec leaves out is not in the script as a None passed from function to function."""
    source = golden_text(name)
    for unused in re.findall(r"^\s+(\w+) = None$", source, re.MULTILINE):
        assert unused not in ("lr_schedule", "scaler", "datasets"), f"{name}: {unused} = None"
    assert " is not None else None" not in source, name
    assert "datasets=None" not in source and "callbacks=()" not in source, name


def used_paths(spec: str) -> dict[str, bool]:
    """What a spec's compiled script must contain (True) or leave out (False), from the spec alone."""
    e = api.load(ROOT / spec)
    mlp = e.model.type == "mlp"
    return {
        "def make_lr_schedule(": e.training.lr_schedule.type != "none",
        "GradScaler(": e.training.mixed_precision,
        "clip_grad_norm_(": e.training.grad_clip_norm is not None,
        "pin_memory=torch.cuda.is_available()": e.scaling.use_gpu and e.dataset.loader != "ray_data",
        '"nccl"': e.scaling.backend == "nccl",
        "specc_runtime.load_factory(": "custom" in (e.model.type, e.dataset.type),  # the runtime imports it
        "def load_factory(": False,
        "import importlib": False,
        "get_dataset_shard(": e.dataset.loader == "ray_data",
        "prepare_data_loader(": e.dataset.loader != "ray_data",
        "import ray.data": e.dataset.loader == "ray_data" or e.dataset.type in ("csv", "parquet", "jsonl", "npz"),
        "nn.Conv2d(": e.model.type in ("cnn", "torchvision"),
        "nn.BatchNorm1d(": mlp and e.model.batch_norm,
        "nn.Dropout(": e.model.type in ("mlp", "cnn") and e.model.dropout > 0,
        "torchvision": e.model.type == "torchvision" or e.dataset.type == "torchvision" or bool(e.dataset.augment),
        "from torchvision.transforms import v2": bool(e.dataset.augment),
        "persistent_workers=True": e.dataset.loader_workers > 0,
        "def standardize(": e.dataset.type in ("iris", "wine", "breast_cancer", "synthetic_classification")
        or e.dataset.type == "synthetic_regression"
        or (e.dataset.type in ("csv", "parquet", "jsonl", "npz") and e.dataset.loader != "ray_data"),
        "torch.optim.SGD(": e.training.optimizer.type == "sgd",
        "torch.optim.Adam(": e.training.optimizer.type == "adam",
        "torch.optim.AdamW(": e.training.optimizer.type == "adamw",
        "torch.optim.RMSprop(": e.training.optimizer.type == "rmsprop",
        '"score": (': e.run.checkpoint_score is not None,  # specc_runtime.Run ranks the epochs by it
        "lr_schedule.step()": e.training.lr_schedule.type != "none",
        "scaler.": e.training.mixed_precision,  # not "scaler": RayOutput names Ray's autoscaler
        "datasets=datasets": e.dataset.loader == "ray_data",
        '"ray_data": True,': e.dataset.loader == "ray_data",  # Run keeps Ray Data's own records off the console
        "failure_config=": e.run.max_failures > 0,
        "callbacks=": bool(e.run.callbacks) or e.scaling.num_workers > 0,  # trackers, and the progress's ShowEpochs
        "run.callbacks)": e.scaling.num_workers > 0,  # the Trainer's: epochs reach the driver from Train's controller
        "class TrialProgress(": False,  # a search's
        "RUNTIME_ENV = ": bool(runtime_env_of(e)),
        '"runtime_env": RUNTIME_ENV,': bool(runtime_env_of(e)),  # specc_runtime.job_runtime_env sends it
        '"working_dir": WORKING_DIR,': travels.needs_working_dir(e),
        "def job_runtime_env(": False,  # the runtime's
        "def claim(": False,  # the run plumbing is specc_runtime's
    }


@pytest.mark.parametrize("spec", TRAIN_ONLY_TORCH)
def test_only_used_code_paths_are_emitted(spec):
    source = compiled(spec)
    assert isinstance(source, str), source
    wrong = {needle: wanted for needle, wanted in used_paths(spec).items() if (needle in source) != wanted}
    assert not wrong, f"{spec}: expected present (True) / absent (False): {wrong}"


def test_the_new_examples_exercise_their_code_paths():
    assert "torch.optim.lr_scheduler.StepLR(" in golden_text("digits_cnn")
    assert "torch.optim.lr_scheduler.ExponentialLR(" in golden_text("iris_local")
    assert "torch.optim.lr_scheduler.CosineAnnealingLR(" in golden_text("digits_ray_data")
    assert "torch.optim.lr_scheduler.MultiStepLR(" in golden_text("breast_cancer_bce")
    assert "nn.BCEWithLogitsLoss()" in golden_text("breast_cancer_bce")
    assert "((outputs > 0).float() == yb).sum().float()" in golden_text("breast_cancer_bce")
    regression = golden_text("synthetic_regression_mae")
    assert "nn.L1Loss()" in regression and '"val_mse"' in regression and '"val_mae"' in regression
    custom = golden_text("custom_model")
    assert 'SPEC_DIR = "../../specs"' in custom  # relative to the script, compiled into tests/golden/
    assert '"factory": "factories.tiny_models:make"' in custom
    assert "datasets=datasets" in golden_text("digits_ray_data")
    assert '"num_workers": 0, "use_gpu": False,' in golden_text("iris_local")


def test_accelerator_type_reaches_the_scaling_config(tmp_path):
    spec = tmp_path / "gpu.yaml"
    text = (ROOT / "specs" / "digits_gpu.yaml").read_text(encoding="utf-8")
    spec.write_text(text.replace("  backend: nccl\n", "  backend: nccl\n  accelerator_type: A100\n"), encoding="utf-8")
    experiment = api.load(spec)
    assert experiment.scaling.accelerator_type == "A100"
    assert '"accelerator_type": "A100"' in api.compile(experiment)


def test_smoke_mode_drops_gpu_resources(tmp_path, monkeypatch):
    """--smoke runs on CPU: the script's run drops use_gpu and the GPUs each worker reserves before its Trainer."""
    import specc_runtime

    from tests.unit.compiler.test_lean_scripts import trainer_of

    spec = tmp_path / "gpu.yaml"
    text = (ROOT / "specs" / "digits_gpu.yaml").read_text(encoding="utf-8")
    spec.write_text(text.replace("resources_per_worker: {CPU: 1}", "resources_per_worker: {CPU: 1, GPU: 1}"))
    source = api.compile(api.load(spec))
    scaling = trainer_of(source, tmp_path / "full", monkeypatch, CPU=8.0, GPU=8.0)["scaling"]
    assert scaling["use_gpu"] and specc_runtime.worker_resources(scaling) == {"CPU": 1.0, "GPU": 1.0}
    scaling = trainer_of(source, tmp_path / "smoke", monkeypatch, "--smoke", CPU=8.0)["scaling"]
    assert not scaling["use_gpu"] and specc_runtime.worker_resources(scaling) == {"CPU": 1.0}


def test_accelerator_type_is_reserved_and_dropped_under_smoke(tmp_path, monkeypatch):
    import specc_runtime

    from tests.unit.compiler.test_lean_scripts import trainer_of

    spec = tmp_path / "gpu.yaml"
    text = (ROOT / "specs" / "digits_gpu.yaml").read_text(encoding="utf-8")
    spec.write_text(text.replace("  backend: nccl\n", "  backend: nccl\n  accelerator_type: A100\n"), encoding="utf-8")
    source = api.compile(api.load(spec))
    cluster = {"CPU": 8.0, "GPU": 8.0, "accelerator_type:A100": 1.0}
    scaling = trainer_of(source, tmp_path / "full", monkeypatch, **cluster)["scaling"]
    assert specc_runtime.worker_resources(scaling) == {"CPU": 1.0, "GPU": 1, "accelerator_type:A100": 0.001}
    scaling = trainer_of(source, tmp_path / "smoke", monkeypatch, "--smoke", **cluster)["scaling"]
    assert "accelerator_type" not in scaling and specc_runtime.worker_resources(scaling) == {"CPU": 1.0}


# --- compile stays light ----------------------------------------------------------------------------------

HEAVY = ("ray", "torch", "tensorflow", "keras", "jax", "sklearn", "torchvision", "factories")
PROBE = """
import sys
from specc.cli import main
codes = [int(main(["compile", spec, "-o", "-"])) for spec in {specs!r}]
heavy = sorted(name for name in sys.modules if name.split(".")[0] in {heavy!r})
print("CODES:", codes)
print("HEAVY:", ",".join(heavy))
"""


def test_compile_imports_neither_ray_torch_tensorflow_nor_user_code():
    specs = [
        "specs/digits_gpu.yaml",
        "specs/custom_model.yaml",
        "specs/digits_ray_data.yaml",
        "specs/digits_tf_cnn.yaml",
    ]
    probe = PROBE.format(specs=specs, heavy=HEAVY)
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[-2] == "CODES: [0, 0, 0, 0]", done.stderr
    assert lines[-1] == "HEAVY: ", lines[-1]
