"""The model's activation layer: written in, or looked up by name when a search changes it."""

from __future__ import annotations

from specc.compiler.render import Code
from specc.compiler.resolve import is_searched
from specc.spec import Experiment


def layer_of(e: Experiment, layers: dict[str, str], name: str) -> str:
    """The layer of an activation: one of the names specc writes the same on both frameworks (`layers`), or one the
    framework offers (specc.check.named): torch's nn.Mish(), Keras' Activation("mish")."""
    if name in layers:
        return layers[name]
    from specc import catalog
    from specc.check.named import framework_of

    entry = catalog.lookup(framework_of(e), "activations", name)
    if framework_of(e) == "torch":
        return f"nn.{entry.class_name}()"
    return f"keras.layers.Activation({entry.name!r})".replace("'", '"')


def activation_context(e: Experiment, layers: dict[str, str]) -> dict:
    """The activation layer written in, or, when a search changes model.activation, a call of the script's
    `activation` table of the names the search can draw."""
    if not is_searched(e, "model", "activation"):
        layer = layer_of(e, layers, getattr(e.model, "activation", "relu"))
        return {"activation": Code(layer), "searched_activations": []}
    from specc.check.search_space import space_entries

    drawn = {e.model.activation}
    for _kind, _where, entries in space_entries(e):
        distribution = entries.get("model.activation")
        if distribution is None:
            continue
        options = getattr(distribution, "args", distribution)  # a distribution, or a plain list of mutations
        drawn.update(options if isinstance(options, list) else layers)
    table = [
        (name, Code(layer_of(e, layers, name))) for name in [*layers, *sorted(drawn - set(layers))] if name in drawn
    ]
    return {"activation": Code('activation(cfg["activation"])'), "searched_activations": table}
