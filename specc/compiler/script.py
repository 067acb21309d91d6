"""Experiment in, the compiled script's source out: resolve the Plan, build the template context, render."""

from __future__ import annotations

import os

from specc.compiler.fragments import context, script_name
from specc.compiler.render import render
from specc.compiler.resolve import plan as make_plan
from specc.spec import Experiment


def compile_script(
    experiment: Experiment, output: str | None = None, templates: str | os.PathLike | None = None
) -> str:
    """The standalone Ray script for a spec (its source text). `output` only names the script in its usage."""
    script_dir = os.path.dirname(os.path.abspath(output)) if output and output != "-" else None
    plan = make_plan(experiment, script_dir)
    if plan.shape == "objective":
        from specc.compiler.objective_fragments import objective_context

        context_ = objective_context(plan, script_name(output, plan))
        return render("objective/script.py.j2", context_, templates, only_used_imports=True)
    template = f"{experiment.framework}/script.py.j2"
    return render(template, context(plan, script_name(output, plan)), templates, only_used_imports=True)
