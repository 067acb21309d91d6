"""specc/compiler/render.py: the one `py` literal function, Multiline docstrings, identifiers, the Jinja
environment and `--templates DIR` (a user's templates ahead of the built-in ones)."""

from __future__ import annotations

import ast
import math
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specc import api
from specc.cli import Exit, main
from specc.compiler.render import Code, Multiline, environment, formatted, identifier, literal, ruff_format
from specc.spec.errors import SpecError, UsageError
from tests.conftest import MINIMAL, ROOT


def same(a, b) -> bool:
    """Equal, with the same types throughout (True is not 1, a tuple is not a list, -0.0 is not 0.0)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return a == b


def evaluate(source: str):
    """Evaluate a literal that may spell out float("nan") / float("inf"), with nothing else in scope."""
    return eval(compile(source, "<literal>", "eval"), {"__builtins__": {}, "float": float})


# --- literal ----------------------------------------------------------------------------------------------

texts = st.text(max_size=30)
hostile_texts = st.text(alphabet=st.sampled_from("'\"\\\n\r\t\x00\x07{}%#é€😀\u2028\ufeff a"), max_size=12)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    texts,
    hostile_texts,
)
values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.lists(children, max_size=3).map(tuple),
        st.dictionaries(st.one_of(texts, st.integers()), children, max_size=4),
    ),
    max_leaves=25,
)


@settings(max_examples=400, deadline=None)
@given(values)
def test_literal_round_trips_through_literal_eval(value):
    source = literal(value)
    assert "\n" not in source  # one line
    assert same(ast.literal_eval(source), value), source


@settings(max_examples=200, deadline=None)
@given(st.recursive(st.floats(), lambda children: st.lists(children, max_size=3), max_leaves=10))
def test_nan_and_infinities_are_spelled_out(value):
    source = literal(value)
    assert "nan" not in source.replace('float("nan")', "")
    assert "inf" not in source.replace('float("inf")', "")
    assert same(evaluate(source), value), source


@pytest.mark.parametrize(
    ("value", "source"),
    [
        (float("nan"), 'float("nan")'),
        (float("inf"), 'float("inf")'),
        (float("-inf"), '-float("inf")'),
        ([1.5, float("-inf"), {"x": float("nan")}], '[1.5, -float("inf"), {"x": float("nan")}]'),
        (-3, "-3"),
        (-0.0, "-0.0"),
        (-1e-08, "-1e-08"),
        (10**30, str(10**30)),
        (True, "True"),
        (None, "None"),
        ((), "()"),
        ((1,), "(1,)"),
        ((1, 2), "(1, 2)"),
        ({}, "{}"),
        ("plain", '"plain"'),
        ("it's", '"it\'s"'),
        ('say "hi"', "'say \"hi\"'"),
        ("both ' and \"", "'both \\' and \"'"),
        ("back\\slash", '"back\\\\slash"'),
        ("line\nbreak\ttab\x00nul", '"line\\nbreak\\ttab\\x00nul"'),
        ("ünïcødé €😀", '"ünïcødé €😀"'),
        ("{{ x }} {% if %} {# c #}", '"{{ x }} {% if %} {# c #}"'),
    ],
)
def test_literal_spelling(value, source):
    assert literal(value) == source
    assert same(evaluate(source), value)


def test_negative_numbers_inside_collections():
    value = {"a": [-1, -2.5, -(10**20)], "b": (-0.0, -float("inf"))}
    assert same(evaluate(literal(value)), value)


def test_dict_keys_keep_their_order():
    assert literal({"b": 1, "a": 2}) == '{"b": 1, "a": 2}'


def test_code_passes_unquoted_and_only_code():
    assert literal(Code("nn.ReLU()")) == "nn.ReLU()"
    assert literal([Code("x"), "x"]) == '[x, "x"]'
    assert literal("nn.ReLU()") == '"nn.ReLU()"'  # a plain str is always quoted


@pytest.mark.parametrize("value", [{1, 2}, b"bytes", object(), 1j, range(3)])
def test_no_literal_for_other_types(value):
    with pytest.raises(TypeError):
        literal(value)


@pytest.mark.parametrize("text", ["\\'", "C:\\'quoted'", "a\\\\'b"])
def test_backslash_before_quote_round_trips(text):
    assert ast.literal_eval(literal(text)) == text


@settings(max_examples=150, deadline=None)
@given(values)
def test_formatted_is_the_same_value_on_many_lines(value):
    source = formatted(value, 4, "x = ")
    assert source.startswith("x = ")
    tree = ast.parse(source)  # indentation inside brackets does not matter
    assert same(evaluate(ast.unparse(tree.body[0].value)), value)


# --- Multiline docstrings --------------------------------------------------------------------------------


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.text(), st.text(alphabet=st.sampled_from('"\'\\\n\r\t\x00\x0b\x0c\u2028 ab"""'), max_size=20)))
def test_multiline_round_trips_as_a_docstring(text):
    source = literal(Multiline(text))
    assert source.startswith('"""') and source.endswith('"""')
    assert ast.literal_eval(source) == text
    module = ast.parse(source + "\n\nx = 1\n")
    assert isinstance(module.body[0].value, ast.Constant) and module.body[0].value.value == text
    assert len(module.body) == 2  # the text stayed inside the string


@pytest.mark.parametrize(
    "text",
    ['ends with a quote"', '"""', '""""""', "back\\", "\\n is not a newline", "a\r\nb", "nul\x00", "x\u2028y", ""],
)
def test_multiline_edge_cases(text):
    assert ast.literal_eval(literal(Multiline(text))) == text


def test_multiline_keeps_real_newlines():
    assert literal(Multiline("first\nsecond\n")) == '"""first\nsecond\n"""'


# --- identifiers ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["x", "_private", "build_model", "read_csv", "Résumé", "match", "case"])
def test_identifier_accepts_names(name):
    assert identifier(name) == name


@pytest.mark.parametrize(
    "name",
    ["class", "None", "True", "lambda", "import", "", "1x", "a-b", "a b", "x.y", "a;b", "__import__('os')", "x\n"],
)
def test_identifier_refuses_keywords_and_non_identifiers(name):
    with pytest.raises(SpecError) as caught:
        identifier(name)
    (problem,) = caught.value.problems
    assert problem.code == "E107"
    assert repr(name) in problem.message


# --- the Jinja environment --------------------------------------------------------------------------------


def test_environment_is_configured_once_as_documented():
    import jinja2

    env = environment()
    assert env.undefined is jinja2.StrictUndefined
    assert env.autoescape is False
    assert env.keep_trailing_newline and env.trim_blocks and env.lstrip_blocks
    assert env.filters["py"]([1, "a"]) == literal([1, "a"]) and env.filters["identifier"]("x") == identifier("x")
    template = env.from_string("    {% if x %}\nx = {{ x | py }}\n    {% endif %}\ny = {{ '<&>' }}\n")
    assert template.render(x="a'b") == 'x = "a\'b"\ny = <&>\n'  # block lines vanish; nothing is escaped
    with pytest.raises(jinja2.UndefinedError):
        env.from_string("{{ missing }}").render()


def test_py_filter_quotes_jinja_syntax_in_values():
    out = environment().from_string("x = {{ v | py }}\n").render(v="{{ 7 * 7 }}{% raw %}")
    assert out == 'x = "{{ 7 * 7 }}{% raw %}"\n'


def test_ruff_format_is_stable():
    source = "x = {  'a' :1,\n'b':[1,2]}\ndef f( a ):\n  return a\n"
    once = ruff_format(source)
    assert ruff_format(once) == once
    assert 'x = {"a": 1, "b": [' in once


# --- --templates DIR --------------------------------------------------------------------------------------

USER_MLP = '''\
def build_model(cfg, input_shape, num_outputs):
    """USER TEMPLATE: one linear layer, whatever the spec's hidden sizes ({{ e.model.hidden_sizes | py }})."""
    return nn.Sequential(nn.Flatten(), nn.Linear(int(np.prod(input_shape)), num_outputs))
'''


def user_templates(tmp_path, text: str, name: str = "torch/model/mlp.py.j2"):
    directory = tmp_path / "my_templates"
    (directory / name).parent.mkdir(parents=True, exist_ok=True)
    (directory / name).write_text(text, encoding="utf-8")
    return directory


def test_user_template_comes_before_the_built_in_one(tmp_path, write_spec, capsys):
    spec = write_spec(MINIMAL)
    directory = user_templates(tmp_path, USER_MLP)
    built_in = api.compile(api.load(spec))
    assert "USER TEMPLATE" not in built_in
    source = api.compile(api.load(spec), templates=directory)
    assert "USER TEMPLATE: one linear layer, whatever the spec's hidden sizes ([16])." in source
    assert source.count("def build_model(") == 1
    assert "def train_func(config):" in source  # everything else still comes from the built-in templates
    ast.parse(source)

    assert main(["compile", str(spec), "--templates", str(directory), "-o", "-"]) == Exit.OK
    assert capsys.readouterr().out == source


def test_user_templates_do_not_leak_into_other_compiles(tmp_path, write_spec):
    spec = write_spec(MINIMAL)
    api.compile(api.load(spec), templates=user_templates(tmp_path, USER_MLP))
    assert "USER TEMPLATE" not in api.compile(api.load(spec))


def test_built_in_templates_are_compiled_once_a_process_and_user_templates_are_read_as_they_are_now(
    tmp_path, write_spec
):
    """Compiling the templates took most of each compile; an edit to a user template, or one added, between two
    compiles in one process (a notebook, a long-lived tool) must still show."""
    import os

    assert environment() is environment()
    spec = write_spec(MINIMAL)
    directory = user_templates(tmp_path, "{% include 'torch/model/mlp.py.j2' %}", name="torch/model/cnn.py.j2")
    assert "USER TEMPLATE" not in api.compile(api.load(spec), templates=directory)  # the built-in mlp.py.j2
    added = directory / "torch/model/mlp.py.j2"
    added.write_text(USER_MLP, encoding="utf-8")
    assert "USER TEMPLATE: one linear layer" in api.compile(api.load(spec), templates=directory)
    added.write_text(USER_MLP.replace("one linear layer", "EDITED, one linear layer"), encoding="utf-8")
    later = added.stat().st_mtime + 2  # as an edit a moment later: the file system's clock may not have ticked
    os.utime(added, (later, later))
    assert "USER TEMPLATE: EDITED, one linear layer" in api.compile(api.load(spec), templates=directory)


def test_a_user_template_that_would_do_nothing_is_refused_with_the_name_it_likely_means(tmp_path, write_spec):
    """A template named as the built-in ones were before they moved (or misspelt) would silently change nothing."""
    spec = write_spec(MINIMAL)
    directory = user_templates(tmp_path, USER_MLP, "torch/model_mlp.py.j2")
    with pytest.raises(
        UsageError, match=r"torch/model_mlp\.py\.j2 replaces no built-in template .* torch/model/mlp\.py\.j2"
    ):
        api.compile(api.load(spec), templates=directory)
    done = run_cli("compile", str(spec), "--templates", str(directory), "-o", "-")
    assert done.returncode == Exit.USAGE and "Traceback" not in done.stderr and done.stdout == ""


def test_a_user_template_of_its_own_is_fine_when_another_of_yours_includes_it(tmp_path, write_spec):
    spec = write_spec(MINIMAL)
    directory = user_templates(tmp_path, USER_MLP, "mine/layers.py.j2")
    user_templates(tmp_path, '{% include "mine/layers.py.j2" %}\n')
    assert "USER TEMPLATE" in api.compile(api.load(spec), templates=directory)


BROKEN = {
    "invalid_python": "def build_model(cfg, input_shape, num_outputs:\n    return None\n",
    "jinja_syntax": "def build_model(cfg, input_shape, num_outputs):\n    return {% if %}\n",
    "undefined_name": "def build_model(cfg, input_shape, num_outputs):\n    return {{ no_such_value | py }}\n",
}


def test_user_template_rendering_invalid_python_is_a_clear_error(tmp_path, write_spec):
    spec = write_spec(MINIMAL)
    directory = user_templates(tmp_path, BROKEN["invalid_python"])
    with pytest.raises(Exception, match="does not parse") as caught:
        api.compile(api.load(spec), templates=directory)
    message = str(caught.value)
    assert "def build_model(cfg, input_shape, num_outputs:" in message  # the offending line
    assert "line" in message


def run_cli(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "specc", *args], capture_output=True, text=True, cwd=cwd)


def test_cli_reports_a_user_template_that_renders_invalid_python(tmp_path, write_spec):
    spec = write_spec(MINIMAL)
    out = tmp_path / "out.py"
    done = run_cli(
        "compile", str(spec), "--templates", str(user_templates(tmp_path, BROKEN["invalid_python"])), "-o", str(out)
    )
    assert done.returncode != 0
    assert "does not parse" in done.stderr
    assert "def build_model(cfg, input_shape, num_outputs:" in done.stderr
    assert not out.exists()


@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_cli_reports_a_broken_user_template_without_a_traceback(tmp_path, write_spec, kind):
    spec = write_spec(MINIMAL)
    done = run_cli("compile", str(spec), "--templates", str(user_templates(tmp_path, BROKEN[kind])), "-o", "-")
    assert done.returncode in (Exit.PROBLEMS, Exit.USAGE)
    assert "Traceback" not in done.stderr, done.stderr
    assert "model/mlp.py.j2" in done.stderr  # names the template at fault
