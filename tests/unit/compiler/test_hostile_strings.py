"""No spec string can become code (SPEC §11): hostile strings pushed through every free-text field of a
compilable spec — and through the spec's directory, file name and output name — leave the compiled
script's syntax tree exactly as a benign spec of the same shape gives it, apart from string constants.

The free-text fields (from specc/spec/*.py; names, factories, identifiers, addresses, metric and resource
names are pattern-checked and not free text): description; run.storage_path; dataset.path, .features, .label
(csv, parquet, jsonl, npz; keras_dataset's path), dataset.root (torchvision); model/dataset custom kwargs keys and
values (nested); scaling.accelerator_type; cluster.runtime_env env_vars values, pip (list, file, {packages,
pip_version}), uv, conda (name or mapping, keys and values), py_modules, image_uri; cluster.excludes.
cluster.working_dir must name a directory that holds the spec (checked at validate time): here it is ".", and the
spec's own (hostile) directory reaches the script as WORKING_DIR.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis import strategies as st

from specc import api
from specc.read.document import DocumentError, parse_text
from specc.spec.dump import dump_yaml

EXAMPLES = int(os.environ.get("SPECC_FUZZ_EXAMPLES", "25"))

PAYLOADS = [
    "'",
    '"',
    "'''",
    '"""',
    "\n",
    "\r\n",
    "\\",
    "\\n",
    "\\'",
    '\\"',
    "{{ 7 * 7 }}",
    "{{ config }}",
    "{% if true %}",
    "{% endif %}",
    "{% raw %}",
    "{# comment #}",
    "__import__('os').system('x')",
    '"); import os; (',
    "'); import os; ('",
    '"""; import os; """',
    "\x00",
    "\x07",
    "\x1b[31m",
    "\x7f",
    "\t",
    "\u2028",
    "\ufeff",
    "\x85",
    "é",
    "😀",
    "€",
    "# comment",
    "\\N{BULLET}",
    "\\x41",
    "%s",
    "{0}",
    "://",
    "..",
]
hostile = (
    st.lists(st.one_of(st.sampled_from(PAYLOADS), st.text(max_size=4)), min_size=1, max_size=5)
    .map("".join)
    .filter(bool)
)


def file_name(text: str) -> str:
    """A hostile name the file system accepts: no '/' or NUL, not '.' or '..', at most 100 bytes."""
    name = text.replace("/", "_").replace("\x00", "_").encode("utf-8")[:100].decode("utf-8", "ignore")
    return name if name.strip(".") else f"x{name}"


# --- spec shapes: s(field) is the string for that field (hostile or benign) ------------------------------


def base(s, model: dict, dataset: dict, runtime_env: dict) -> dict:
    return {
        "specc": 1,
        "name": "hostile",
        "description": s("description"),
        "framework": "torch",
        "model": model,
        "dataset": dataset,
        "training": {"epochs": 1, "loss": "cross_entropy"},
        "scaling": {"num_workers": 1, "accelerator_type": s("scaling.accelerator_type")},
        "run": {"storage_path": s("run.storage_path")},
        "cluster": {
            "runtime_env": runtime_env,
            "working_dir": ".",
            "excludes": [s("cluster.excludes.0"), s("cluster.excludes.1")],
        },
    }


def kwargs(s, where: str) -> dict:
    """Two distinct hostile keys (their first character tells them apart), values nested in a list and a map."""
    return {
        "0" + s(f"{where}.key0"): s(f"{where}.value0"),
        "1" + s(f"{where}.key1"): [s(f"{where}.value1"), {"2" + s(f"{where}.key2"): s(f"{where}.value2")}],
    }


def custom_model_on_csv(s) -> dict:
    return base(
        s,
        {"type": "custom", "factory": "mods.fact:make", "kwargs": kwargs(s, "model.kwargs")},
        {
            "type": "csv",
            "path": s("dataset.path"),
            "features": [s("dataset.features.0"), s("dataset.features.1")],
            "label": s("dataset.label"),
        },
        {
            "env_vars": {"A": s("env_vars.A"), "B": s("env_vars.B")},
            "pip": [s("pip.0"), s("pip.1")],
            "py_modules": [s("py_modules.0")],
        },
    )


def mlp_on_torchvision(s) -> dict:
    return base(
        s,
        {"type": "mlp", "hidden_sizes": [8]},
        {"type": "torchvision", "name": "MNIST", "root": s("dataset.root")},
        {
            "env_vars": {"A": s("env_vars.A")},
            "pip": {"packages": [s("pip.packages.0")], "pip_version": s("pip.pip_version")},
            "image_uri": s("image_uri"),
        },
    )


def custom_model_on_custom_data(s) -> dict:
    return base(
        s,
        {"type": "custom", "factory": "mods.fact:make", "kwargs": kwargs(s, "model.kwargs")},
        {"type": "custom", "factory": "mods.data:load", "kwargs": kwargs(s, "dataset.kwargs")},
        {"conda": {"0" + s("conda.key0"): [s("conda.value")]}, "uv": [s("uv.0")]},
    )


def mlp_on_npz_ray_data(s) -> dict:
    return base(
        s,
        {"type": "mlp", "hidden_sizes": [8]},
        {
            "type": "npz",
            "path": s("dataset.path"),
            "features": [s("dataset.features.0")],
            "label": s("dataset.label"),
            "loader": "ray_data",
        },
        {"conda": s("conda"), "pip": s("pip.file")},
    )


def keras_cnn_on_keras_dataset(s) -> dict:
    spec = base(
        s,
        {"type": "cnn", "channels": [4]},
        {"type": "keras_dataset", "name": "cifar10", "path": s("dataset.path"), "validation_from": "train"},
        {"env_vars": {"A": s("env_vars.A")}},
    )
    return {**spec, "framework": "tensorflow"}


SHAPES = {
    "custom_model_on_csv": custom_model_on_csv,
    "keras_cnn_on_keras_dataset": keras_cnn_on_keras_dataset,
    "mlp_on_torchvision": mlp_on_torchvision,
    "custom_model_on_custom_data": custom_model_on_custom_data,
    "mlp_on_npz_ray_data": mlp_on_npz_ray_data,
}


def compile_in(root: Path, spec: dict, directory: str, name: str) -> str:
    """Write the spec as YAML to root/directory/name.yaml and compile it from root, as `specc compile` does."""
    (root / directory / "mods").mkdir(parents=True)
    for module, function in (("fact", "make"), ("data", "load")):  # the factories the custom shapes name
        (root / directory / "mods" / f"{module}.py").write_text(f"def {function}(*args, **kwargs): ...\n")
    path = root / directory / f"{name}.yaml"
    path.write_text(dump_yaml(spec), encoding="utf-8")  # PyYAML's own writes `1E109` plain: a float in YAML 1.2
    with contextlib.chdir(root):
        experiment = api.load(os.path.join(directory, f"{name}.yaml"))
        return api.compile(experiment, output=os.path.join("build", f"{name}.py"))


@functools.cache
def benign(shape: str) -> str:
    counter = iter(range(1000))
    spec = SHAPES[shape](lambda field: f"benign{next(counter)}")
    with tempfile.TemporaryDirectory() as root:
        return compile_in(Path(root), spec, "specs", "benign")


# --- what must hold --------------------------------------------------------------------------------------


def identifiers(tree: ast.AST) -> set[str]:
    """Every name the program uses or defines."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.arg) or (isinstance(node, ast.keyword) and node.arg):
            names.add(node.arg)
        elif isinstance(node, ast.alias):
            names.update(filter(None, (node.name, node.asname)))
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


class Blank(ast.NodeTransformer):
    """Every string constant made empty: what is left is the program's structure."""

    def visit_Constant(self, node: ast.Constant) -> ast.Constant:
        return ast.Constant("") if isinstance(node.value, str) else node


def structure(source: str) -> str:
    return ast.dump(Blank().visit(ast.parse(source)))


def strings(tree: ast.AST) -> set[str]:
    return {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)}


# Fields whose text reaches the script unchanged as a whole string constant (paths are joined to the spec's
# directory; accelerator_type does not reach the script).
VERBATIM = (
    "run.storage_path",
    "dataset.features.",
    "dataset.label",
    ".value",
    "env_vars.",
    "pip.",
    "py_modules.",
    "uv.",
    "image_uri",
    "conda",
    "excludes.",
)


def flat(text: str) -> str:
    """The text without blanks and line breaks: what survives ruff format and the docstring's wrapping."""
    return "".join(text.split(" ")).replace("\t", "").replace("\n", "")


def yaml_round_trips(text: str) -> bool:
    try:
        return parse_text(dump_yaml({"x": text}), "<round trip>")[0] == {"x": text}
    except DocumentError:
        return False


PATHS = ("run.storage_path", "dataset.path", "dataset.root")
# cluster.runtime_env's local paths (a py_modules entry, a requirements file, a conda environment file): each must lie
# inside the project (E023), which a path holding a NUL cannot (no file system takes one), nor one that climbs above it
RUNTIME_ENV_PATHS = ("py_modules.0", "pip.file", "conda")


def leaves_the_spec_dir(path: str) -> bool:
    """Whether `path`, relative to the spec's directory (the project here), leads out of it."""
    return os.path.isabs(path) or os.path.normpath(path).split(os.sep)[0] == ".."


def assert_only_strings_differ(shape: str, s, directory: str, name: str) -> None:
    """Compile SHAPES[shape] with s(field) as its strings, in directory/name.yaml; check the script."""
    drawn: dict[str, str] = {}

    def record(field: str) -> str:
        text = s(field)
        # Paths are refused when they hold a NUL (E107, E023: no file system takes one); every other byte stays hostile.
        drawn[field] = text.replace("\x00", "\\0") if field in PATHS + RUNTIME_ENV_PATHS else text
        if field in RUNTIME_ENV_PATHS and leaves_the_spec_dir(drawn[field]):
            assume(False)  # refused whatever its bytes (E023): not what this test is about
        return drawn[field]

    spec = SHAPES[shape](record)
    if not all(yaml_round_trips(text) for text in drawn.values()):  # PyYAML's own limits, not specc's
        assume(False)
    directory, name = file_name(directory), file_name(name)
    with tempfile.TemporaryDirectory() as root:
        source = compile_in(Path(root), spec, directory, name)

    tree = ast.parse(source)  # it is a program
    assert identifiers(tree) == identifiers(ast.parse(benign(shape)))
    assert structure(source) == structure(benign(shape))  # and the same program as the benign spec's

    # The values themselves come through unchanged.
    constants = strings(tree)
    for field, text in drawn.items():
        if field.endswith((".key0", ".key1", ".key2")):  # keys, each with a digit in front
            assert any(constant[1:] == text for constant in constants if constant[:1] in "012"), field
        elif any(marker in field for marker in VERBATIM):
            assert text in constants, f"{field}={text!r} is not a string constant of the script"
    # ruff format strips trailing blanks on a docstring's lines (and expands leading tabs), and a long description
    # is broken at spaces: compare without them
    docstring = flat(ast.get_docstring(tree, clean=False))
    assert flat(drawn["description"]) in docstring
    assert flat(f"{directory}/{name}.yaml") in docstring
    assert flat(f"python {name}.py") in docstring
    if "SPEC_DIR" in identifiers(tree):
        (spec_dir,) = [
            node.value.value
            for node in tree.body
            if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "SPEC_DIR"
        ]
        assert spec_dir == os.path.join("..", directory)  # relative to the script, compiled into build/
    (working_dir,) = [
        node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "WORKING_DIR"
    ]
    assert working_dir == os.path.join("..", directory)


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    phases=(Phase.explicit, Phase.reuse, Phase.generate),  # no shrinking: ~0.2 s per example; draws are labelled
)
@given(shape=st.sampled_from(sorted(SHAPES)), data=st.data(), directory=hostile, name=hostile)
def test_hostile_strings_stay_string_constants(shape, data, directory, name):
    assert_only_strings_differ(shape, lambda field: data.draw(hostile, label=field), directory, name)


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_every_payload_in_every_shape(shape):
    """Deterministic: the fields take the payloads in turn, each wrapped in text; the description all of them."""
    chosen = list(PAYLOADS)
    assert all(yaml_round_trips(payload) for payload in chosen)
    payloads = iter(chosen * 3)

    def s(field: str) -> str:
        return f"a{next(payloads)}b" if field != "description" else "".join(chosen)

    assert_only_strings_differ(shape, s, '"""; import os; \n{{ x }}', "x'); import os; ('\\")


def test_the_checks_would_notice_injected_code():
    """Positive control: a spec string pasted unquoted changes the identifiers and the structure."""
    source = benign("custom_model_on_csv")
    storage = next(line for line in source.splitlines() if line.startswith("STORAGE_PATH = "))
    injected = source.replace(storage, storage + '; __import__("os").system("x")')
    assert "system" in identifiers(ast.parse(injected)) - identifiers(ast.parse(source))
    assert structure(injected) != structure(source)
    assert structure(source.replace(storage, 'STORAGE_PATH = "other"')) == structure(source)


def test_every_shape_compiles():
    for shape in SHAPES:
        tree = ast.parse(benign(shape))
        assert ast.get_docstring(tree).startswith("hostile: benign")
        assert "train_func" in identifiers(tree)
