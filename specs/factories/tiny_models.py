"""Model factories for specs/custom_model.yaml: `factory(input_shape, num_outputs, **kwargs)` -> torch.nn.Module.

Only torch is needed; specc imports this module at run time from the spec's directory (never at compile time).
"""

from __future__ import annotations

import math

from torch import nn


def make(input_shape, num_outputs, hidden=32):
    """Two dense layers with a residual connection on the flattened input."""
    return TinyResidual(math.prod(input_shape), num_outputs, hidden)


class TinyResidual(nn.Module):
    def __init__(self, features, num_outputs, hidden):
        super().__init__()
        self.flatten = nn.Flatten()
        self.inp = nn.Linear(features, hidden)
        self.block = nn.Sequential(nn.LayerNorm(hidden), nn.Linear(hidden, hidden), nn.GELU())
        self.out = nn.Linear(hidden, num_outputs)

    def forward(self, x):
        h = self.inp(self.flatten(x))
        return self.out(h + self.block(h))
