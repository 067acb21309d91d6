"""specc's version: in compiled scripts' provenance, SARIF output and reports; pyproject.toml reads it here."""

__version__ = "0.1.0"
