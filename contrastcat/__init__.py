"""contrastcat: Contrast-CAT token attributions for transformer text classifiers.

The public API (``contrastcat.api``, loaded on first use so that ``import
contrastcat`` and the CLI's ``--help`` stay fast):

    clf = contrastcat.load_model("minilm-rt")
    lib = contrastcat.build_library(clf, "refs.h5")      # or contrastcat.open_library("refs.h5")
    recs = contrastcat.explain(clf, ["a gripping, funny film"], library=lib)
    report = contrastcat.evaluate(clf, recs)              # report.table(), report.to_dict()
    print(contrastcat.render(recs))
    recs = contrastcat.read_records("attr.jsonl")         # records a run wrote, read back

The data flow is the package layout (docs/development.md): ``io`` and
``records`` (files, inputs, attribution records) -> ``models`` (a name -> a
classifier) -> ``capture`` (one forward and backward) -> ``deletion`` (the
deletion test) -> ``methods`` -> ``library`` (the references) ->
``attribution`` (explain) -> ``output`` (resume, shards, torchrun) ->
``evaluation`` -> ``views``; ``api`` is the public face of all of it.
"""

from .version import __version__

API = (
    "load_model", "open_library", "build_library", "build_refs", "cached_library", "explain", "explain_file", "merge",
    "evaluate", "evaluate_file", "read_records", "render", "render_file", "report_blocks", "list_methods", "embedded_models",
    "prepare_model", "shortcut_inputs", "torchrun_follower", "sanity", "sanity_file", "compare_file", "summarize",
    "summarize_file",
)
__all__ = [*API, "__version__"]


def __getattr__(name: str):
    if name in API:
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'contrastcat' has no attribute {name!r}")


def __dir__() -> list[str]:
    # The public calls are loaded lazily; a notebook's completion should still offer them.
    return sorted({*globals(), *API})
