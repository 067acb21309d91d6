"""A field's schema in words: its type with its bounds, its default, and an example as YAML a spec would hold.

YAML is written here by hand, in the flow style a spec writes short values in (`{size: 2, stride: 2}`), from plain
data only: numbers, strings, booleans, null, lists and mappings.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable

from specc.docs.fields import key_meaning, ref_name
from specc.spec.base import PATTERN_MEANINGS

_PLAIN = re.compile(r"^[A-Za-z_./~][A-Za-z0-9_./~*+-]*$")
_WORDS = {"true", "false", "null", "yes", "no", "on", "off", "y", "n", "~"}

# JSON Schema bound -> how the reference writes it
BOUNDS = (("minimum", "≥"), ("exclusiveMinimum", ">"), ("maximum", "≤"), ("exclusiveMaximum", "<"))


def flow(value) -> str:
    """A value as YAML in flow style: `{size: 32, padding: 4}`, `[1.0e-4, 0.1]`, `null`."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, str):
        return (
            value if _PLAIN.match(value) and value.lower() not in _WORDS and not _number(value) else json.dumps(value)
        )
    if isinstance(value, list | tuple):
        return "[" + ", ".join(flow(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{flow(str(key))}: {flow(item)}" for key, item in value.items()) + "}"
    raise TypeError(f"no YAML for {type(value).__name__}")


def _float(value: float) -> str:
    if not math.isfinite(value):
        return {math.inf: ".inf", -math.inf: "-.inf"}.get(value, ".nan")
    text = repr(value)
    if "e" in text and "." not in text.split("e")[0]:  # 1e-08 -> 1.0e-08, as YAML 1.1 readers want it
        mantissa, exponent = text.split("e")
        text = f"{mantissa}.0e{exponent}"
    return text


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def prose(text: str) -> str:
    """Text from a docstring or a description, safe as Markdown: outside `code`, a `<name>` would be an HTML tag (and
    vanish), a `*` or a `[` could start emphasis or a link."""
    parts = text.split("`")
    for index in range(0, len(parts), 2):  # the even parts lie outside backticks
        parts[index] = re.sub(r"([<*\[\]])", lambda match: ESCAPES[match[1]], parts[index])
    return "`".join(parts)


ESCAPES = {"<": "&lt;", "*": "\\*", "[": "\\[", "]": "\\]"}


def type_text(node: dict, link: Callable[[str], str]) -> str:
    """What a property takes, in words, with its bounds: `integer ≥ 0`, `list; each: number`, `null or [Pool](...)`.
    `link(model)` gives the Markdown link to a model's block."""
    if "$ref" in node:
        return link(ref_name(node))
    if "const" in node:
        return f"`{flow(node['const'])}`"
    if "enum" in node:
        return "one of " + ", ".join(f"`{flow(value)}`" for value in node["enum"])
    for key in ("oneOf", "anyOf"):
        if key in node:
            parts = list(dict.fromkeys(type_text(item, link) for item in node[key] if item.get("type") != "null"))
            nullable = any(item.get("type") == "null" for item in node[key])
            if len(parts) == 1:
                text = parts[0]
            elif any(";" in part or "," in part for part in parts):
                text = "either " + "; or ".join(parts)
            else:
                text = "one of " + ", ".join(parts) if len(parts) > 2 else " or ".join(parts)
            return f"{text}; or null" if nullable else text
    kind = node.get("type")
    if kind in ("integer", "number"):
        return _bounded("integer" if kind == "integer" else "number", node)
    if kind == "string":
        return _string(node)
    if kind == "boolean":
        return "`true` or `false`"
    if kind == "null":
        return "null only"
    if kind == "array":
        return _array(node, link)
    if kind == "object" or "patternProperties" in node or "additionalProperties" in node:
        return _mapping(node, link)
    return "any value"


def _bounded(name: str, node: dict) -> str:
    bounds = [f"{sign} {flow(node[key])}" for key, sign in BOUNDS if key in node]
    return f"{name} {' and '.join(bounds)}" if bounds else name


def _string(node: dict) -> str:
    rules = []
    if "pattern" in node:
        rules.append(PATTERN_MEANINGS.get(node["pattern"], f"matching `{node['pattern']}`"))
    elif node.get("minLength") == 1:
        rules.append("not empty")
    refused = node.get("not", {}).get("enum")
    if refused:
        rules.append("but not " + ", ".join(f"`{flow(value)}`" for value in refused))
    if node.get("examples"):
        rules.append("such as " + ", ".join(f"`{flow(value)}`" for value in node["examples"]))
    return f"string: {', '.join(rules)}" if rules else "string"


def _array(node: dict, link: Callable[[str], str]) -> str:
    low, high = node.get("minItems"), node.get("maxItems")
    if low is not None and low == high:
        count = f" of {low} items"
    elif low and high:
        count = f" of {low} to {high} items"
    elif low:
        count = f" of at least {low} item{'s' if low > 1 else ''}"
    elif high:
        count = f" of at most {high} items"
    else:
        count = ""
    items = node.get("items")
    each = f", each item {type_text(items, link)}" if isinstance(items, dict) and items else ""
    return f"list{count}{each}"


def _mapping(node: dict, link: Callable[[str], str]) -> str:
    patterns = node.get("patternProperties", {})
    least = node.get("minProperties")
    at_least = f", at least {least} entr{'ies' if least > 1 else 'y'}" if least else ""
    if patterns:
        pattern, value = next(iter(patterns.items()))
        target = type_text(value, link) if value else "any value"
        return f"mapping{at_least}: keys are {key_meaning(pattern)}; values are {target}"
    extra = node.get("additionalProperties")
    if isinstance(extra, dict):
        return f"mapping{at_least}: values are {type_text(extra, link)}"
    return f"mapping of any keys and values{at_least}"


def default_text(node: dict, required: bool) -> str:
    """The default as a spec would write it, or what stands in for one."""
    if required:
        return "required"
    if "default" not in node:
        return "none"
    default = node["default"]
    if isinstance(default, dict) and ("$ref" in node or "oneOf" in node or "anyOf" in node) and default:
        if "type" in default:
            return f"`{flow({'type': default['type']})}`, with its fields' defaults"
        return "its fields' defaults"
    return f"`{flow(default)}`"


def example_yaml(steps: list[tuple[str, dict]], value) -> str:
    """`steps`: each key of the path (`[]` for a list item), with the keys written beside it (a variant's `type`).
    The path in block style, the value in flow style: what a spec holds."""
    lines: list[str] = []
    indent = ""
    item = False
    for index, (key, beside) in enumerate(steps):
        if key == "[]":
            item = True
            continue
        last = index == len(steps) - 1
        lead = indent + ("- " if item else "")
        text = f"{lead}{flow(key)}:" + (f" {flow(value)}" if last else "")
        lines.append(text)
        indent = indent + ("    " if item else "  ")
        for name, written in beside.items():
            lines.append(f"{indent}{flow(name)}: {flow(written)}")
        item = False
    return "\n".join(lines)


__all__ = ["PATTERN_MEANINGS", "default_text", "example_yaml", "flow", "prose", "type_text"]
