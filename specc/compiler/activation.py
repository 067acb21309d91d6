"""The model's activation layer: written in, or looked up by name when a search changes it."""

from __future__ import annotations

from specc.compiler.render import Code
from specc.compiler.resolve import is_searched
from specc.spec import Experiment


def activation_context(e: Experiment, layers: dict[str, str]) -> dict:
    """The activation layer written in, or, when a search changes model.activation, a call of the script's
    `activation` table of the names the search can draw."""
    if not is_searched(e, "model", "activation"):
        return {"activation": Code(layers[getattr(e.model, "activation", "relu")]), "searched_activations": []}
    from specc.check.search_space import space_entries

    drawn = {e.model.activation}
    for _kind, _where, entries in space_entries(e):
        distribution = entries.get("model.activation")
        if distribution is None:
            continue
        options = getattr(distribution, "args", distribution)  # a distribution, or a plain list of mutations
        drawn.update(options if isinstance(options, list) else layers)
    table = [(name, Code(layer)) for name, layer in layers.items() if name in drawn]
    return {"activation": Code('activation(cfg["activation"])'), "searched_activations": table}
