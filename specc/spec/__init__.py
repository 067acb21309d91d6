"""The spec format: what every later stage speaks.

Enters: nothing of specc (this package imports no other stage). Leaves: the pydantic models (`Experiment` is
the root, one module per section), the problem vocabulary every stage reports in (`errors`: Problem,
SpecError, UsageError and the stable codes), the JSON Schema generated from the models (`schema`), a resolved
Experiment written back as YAML (`dump`) and specc's own version (`version`).

`Experiment` loads on first use, so that `import specc` and the problem types stay cheap.
"""

__all__ = ["SUPPORTED_VERSIONS", "Experiment"]


def __getattr__(name: str):
    if name in __all__:
        from specc.spec import experiment

        return getattr(experiment, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
