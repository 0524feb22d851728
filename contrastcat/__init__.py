"""contrastcat: Contrast-CAT token attributions for transformer text classifiers.

The public API (``contrastcat.api``, loaded on first use so that ``import
contrastcat`` and the CLI's ``--help`` stay fast):

    clf = contrastcat.load_model("minilm-rt")
    lib = contrastcat.build_library(clf, "refs.h5")      # or contrastcat.open_library("refs.h5")
    recs = contrastcat.explain(clf, ["a gripping, funny film"], library=lib)
    report = contrastcat.evaluate(clf, recs)              # report.table(), report.to_dict()
    print(contrastcat.render(recs))

The data flow is the package layout: ``resolve`` (a name -> a classifier,
through ``aliases``, ``zoo`` for the embedded models and ``models`` for any
checkpoint; ``models`` also holds each family's row and every forward pass) ->
``capture`` (one forward and backward) -> ``methods`` (pure functions of the
captured tensors) -> ``refine`` (deletion test) -> ``pipeline`` (batches ->
``records``, JSONL); ``library`` builds and reads the reference activations;
``metrics`` measures faithfulness and ``reports`` runs it over records;
``terminal`` and ``spans`` turn records into coloured text.
"""

__version__ = "0.7.0"

API = ("load_model", "open_library", "build_library", "cached_library", "explain", "evaluate", "render")
__all__ = [*API, "__version__"]


def __getattr__(name: str):
    if name in API:
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'contrastcat' has no attribute {name!r}")
