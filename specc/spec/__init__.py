"""The spec format as pydantic models, one module per section; `Experiment` is the root."""

from specc.spec.experiment import SUPPORTED_VERSIONS, Experiment

__all__ = ["SUPPORTED_VERSIONS", "Experiment"]
