"""The site's reference pages, generated: every spec field from the models, every catalog class from the catalog.

Enters: the spec's models as their JSON Schema (`specc.spec.schema`), the catalog (`specc.catalog`) and, beside this
module, what each field means in Ray, torch and Keras terms with an example (`terms.py`). Leaves: the Markdown pages
of docs/reference/, written by `python -m specc.docs.reference`, and the check that the committed pages are what the
models and the catalog give now (`--check`; tests/unit/docs/test_reference.py runs it).

    fields.blocks()          # every mapping of the format, in reading order, with its fields
    pages.reference_pages()  # {"model.md": "...", ...}: the reference's text, page by page
"""
