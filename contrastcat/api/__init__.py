"""The public API: everything the CLI does, one call each, no file needed.

    import contrastcat
    clf = contrastcat.load_model("minilm-rt")
    lib = contrastcat.build_library(clf, "refs.h5")            # the model's own training data
    recs = contrastcat.explain(clf, ["a gripping, funny film"], library=lib)
    report = contrastcat.evaluate(clf, recs)
    print(report.table()); print(contrastcat.render(recs))

Records are plain dataclasses (``.to_dict()``), a notebook shows records and
reports coloured (``_repr_html_``), and every error a user can cause is a
:class:`contrastcat.errors.BadInput` with a one-line message naming the
parameter as the call spells it (``explain: batch_size must ...``).

Each command of the CLI is one call here on files: ``build_refs``,
``explain_file`` (with resume, shards, torchrun), ``merge``, ``evaluate_file``
(with gates), ``render_file``, ``sanity_file``, ``summarize_file`` (what a model relies on across a dataset); ``read_records`` reads records back; ``choices`` holds the values they take from
fixed sets.

The fixed choices are a light module, imported here; each call and each command's options are
imported from their module on first use (``contrastcat.lazy``), so the command line reads its options
without torch.
"""


from __future__ import annotations

from ..io.files import is_standard_output
from ..lazy import lazy_names
from ..spec import PATH, REQUIRED, CommandOptions, OnCommandLine, Option
from . import choices

# How the command line names an option in a message: by its flag (``--min-tokens``).
ON_COMMAND_LINE = OnCommandLine()

# A call's module is never named as a call (``_explain`` defines ``explain``): importing a package's
# module binds its name in the package, and would hide the call of that name.
LAZY = {
    "compare_file": "compare", "run_compare": "compare",
    "evaluate": "_evaluate", "evaluate_file": "_evaluate", "run_evaluate": "_evaluate",
    "explain": "_explain", "explain_file": "_explain", "list_methods": "_explain", "merge": "_explain",
    "run_explain": "_explain", "torchrun_follower": "processes",
    "build_library": "library", "build_refs": "library", "cached_library": "library", "labelled_data": "library",
    "run_build_refs": "library",
    "embedded_models": "zoo", "shortcut_inputs": "zoo",
    "load_model": "models", "open_library": "models", "prepare_model": "models",
    "read_records": "records",
    "render": "_render", "render_file": "_render", "report_blocks": "_render", "run_render": "_render",
    "summarize": "_summarize", "summarize_file": "_summarize", "run_summarize": "_summarize",
    "run_sanity": "_sanity", "sanity": "_sanity", "sanity_blocks": "_sanity", "sanity_file": "_sanity",
    "run_merge": "..usecases.merge", "run_prepare": "..usecases.prepare_model",
    # The options too: a command's process reads its own alone.
    "BuildRefsOptions": "..usecases.options.build_refs", "CompareOptions": "..usecases.options.compare",
    "EvaluateOptions": "..usecases.options.evaluate", "ExplainOptions": "..usecases.options.explain",
    "MergeOptions": "..usecases.options.merge", "ListModelsOptions": "..usecases.options.models",
    "PrepareOptions": "..usecases.options.models", "RenderOptions": "..usecases.options.render",
    "SanityOptions": "..usecases.options.sanity", "SummarizeOptions": "..usecases.options.summarize",
}
__getattr__, __dir__ = lazy_names(__name__, LAZY)

__all__ = [
    "ON_COMMAND_LINE", "PATH", "REQUIRED", "BuildRefsOptions", "CommandOptions", "CompareOptions", "EvaluateOptions",
    "ExplainOptions", "ListModelsOptions", "MergeOptions", "OnCommandLine", "Option", "PrepareOptions",
    "RenderOptions", "SanityOptions", "SummarizeOptions", "choices", "is_standard_output", *LAZY,
]
