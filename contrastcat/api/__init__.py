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
(with gates), ``render_file``, ``sanity_file``; ``read_records`` reads records back; ``choices`` holds the values they take from
fixed sets.
"""

from __future__ import annotations

from ..io.files import is_standard_output
from . import choices
from ..spec import REQUIRED, CommandOptions, OnCommandLine, Option
from ..usecases.build_refs import BuildRefsOptions
from ..usecases.compare import CompareOptions
from ..usecases.evaluate_file import EvaluateOptions
from ..usecases.explain_file import ExplainOptions
from ..usecases.merge import MergeOptions, run_merge
from ..usecases.prepare_model import ListModelsOptions, PrepareOptions, run_prepare
from ..usecases.render_file import RenderOptions
from ..usecases.sanity_file import SanityOptions
from .compare import compare_file, run_compare
from .evaluate import evaluate, evaluate_file, run_evaluate
from .explain import explain, explain_file, list_methods, merge, run_explain, torchrun_follower
from .library import build_library, build_refs, cached_library, labelled_data, run_build_refs
from .models import embedded_models, load_model, open_library, prepare_model
from .records import read_records
from .render import render, render_file, report_blocks, run_render
from .sanity import run_sanity, sanity, sanity_blocks, sanity_file

# How the command line names an option in a message: by its flag (``--min-tokens``).
ON_COMMAND_LINE = OnCommandLine()

__all__ = [
    "ON_COMMAND_LINE", "REQUIRED", "BuildRefsOptions", "CommandOptions", "CompareOptions", "EvaluateOptions", "ExplainOptions", "ListModelsOptions", "MergeOptions", "OnCommandLine", "Option", "PrepareOptions",
    "RenderOptions", "SanityOptions", "run_build_refs", "run_compare", "run_evaluate", "run_render", "run_explain", "run_merge", "run_prepare", "run_sanity",
    "build_library", "build_refs", "cached_library", "choices", "compare_file", "embedded_models", "evaluate", "evaluate_file",
    "explain", "explain_file", "is_standard_output", "labelled_data", "list_methods", "load_model", "merge", "open_library",
    "prepare_model", "read_records", "render", "render_file", "report_blocks", "sanity", "sanity_blocks", "sanity_file", "torchrun_follower",
]
