"""Token attributions: explain (in memory), explain_file (the command: resume, shards, torchrun), merge."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any

from .. import arguments as check
from ..errors import BadInput
from ..attribution.pipeline import choose, explain_prepared, prepare
from ..library import RefLibrary
from ..methods import AttributionMethod, build_methods
from ..models import Classifier
from ..records.inputs import rows_from_objects
from ..usecases.options import input_fields
from ..records.record import Records
from ..spec import LOADING, InCall
from ..usecases.checks import classifier_arg, library_arg
from ..usecases.explain_file import ExplainRun, explain_settings
from ..usecases.options.explain import ExplainOptions
from ..usecases.explain_file import explain_file as _explain_file
from ..usecases.merge import MergeOptions, run_merge
from .signatures import with_signature


# What explaining inputs in memory takes of the command's options (no files, no run modes).
IN_MEMORY = (
    "method", "target", "batch_size", "max_length", "mask_special", "words", "forward_dtype", "text_field", "id_field",
    "label_field", "pair_field", "evidence_field",
)


def _read(values: dict[str, Any], function: str, only: tuple[str, ...] = ()) -> ExplainOptions:
    """The command's options among ``values``, read and checked; the rest are the methods' own
    options (``refs_used=10``), which the methods check."""
    loading = sorted(set(values) & set(LOADING)) if only else []  # not a method's option: pointed to load_model
    if loading:
        raise BadInput(InCall(function).unknown(loading[0], ()))
    taken = {spec.name for spec in ExplainOptions.specs("call") if not only or spec.name in only}
    chosen = ExplainOptions.read({k: v for k, v in values.items() if k in taken}, InCall(function), only=only)
    return chosen.with_methods_options({k: v for k, v in values.items() if k not in taken})


def explain(
    classifier: Classifier,
    inputs: Iterable,
    library: RefLibrary | None = None,
    method: str | Sequence[str] = "contrastcat",
    **options: Any,
) -> Records:
    """Token attributions: one record per input and method, in input order (with
    ``target="all-active"``, a multi-label model's, that for each label it predicts).

    ``inputs``: texts, dicts with ``text_field`` (and optional id, label), or a
    ``datasets.Dataset``. Sentence pairs (NLI, paraphrase, rerankers): ``(text, pair)`` tuples,
    or dicts with the second text in ``pair_field``; their library must be built from pairs. ``method``: a name, ``all``, or a list. ``options`` are
    ``contrastcat explain``'s (``target``, ``batch_size``, ``max_length``, ...) and the methods'
    options (``refs_used=10``, ``ig_steps=20``; see ``--list-methods``):
    each method takes the ones it defines, and a name none of them defines is an error.
    ``forward_dtype="bfloat16"`` runs the deletion test's forward passes under autocast
    (faster on CPUs with AMX and on GPUs; elsewhere slower, with a
    :class:`~contrastcat.errors.SlowPrecision` warning); ``"auto"`` picks it only where it
    is native. docs/performance.md has what it changes.
    """
    # The options first: a wrong one is refused before the model's own checks (tens of ms); the
    # classifier before the library, so a model given by name is said to be one.
    chosen = _read({"method": method, **options}, "explain", only=IN_MEMORY)
    methods: list[AttributionMethod] = build_methods(list(chosen.method), **chosen.method_options)
    classifier = classifier_arg("explain", classifier)
    library = library_arg("explain", library)
    items = check.collection("explain: inputs", inputs, "texts or rows")
    rows = rows_from_objects(items, input_fields(chosen), source="inputs")
    # Every check before the first pass, once. Sentence pairs' passes get segment ids.
    paired = classifier.paired() if rows and rows[0].pair is not None else classifier
    prepared = prepare(paired, choose(methods, library, chosen.names), chosen.target, explain_settings(chosen),
                       chosen.names)
    return Records(record for records in explain_prepared(prepared, rows, "inputs") for record in records)


def explain_file(
    inputs: str | os.PathLike,
    output: str | os.PathLike = "-",
    library: str | os.PathLike | None = None,
    model: str | os.PathLike | Classifier | None = None,
    method: str | Sequence[str] = "contrastcat",
    **options: Any,
) -> ExplainRun:
    """``contrastcat explain`` from Python: an inputs file (JSONL/CSV, ``-``: stdin) to a records
    file (``-``: stdout), written atomically, as the command writes it.

    ``resume=True`` keeps a checkpoint beside ``output`` and continues the one an interrupted
    run left (the output is byte for byte an uninterrupted run's); ``shard="I/N"`` writes shard
    I of N as a part file for :func:`merge`; under torchrun each process takes its own shard
    and rank 0 merges. ``library`` and ``model`` both None: ``./refs.h5`` and its model, else
    the default model and its cached library. ``model`` may be a classifier loaded already
    (``contrastcat.load_model(model, tokenizer)``: resume and shards for a model in memory). Returns what the run did (records written and
    kept, texts cut, lines skipped with ``on_error="skip"``). ``pair_field``: each input is a
    sentence pair, its second text in that field. The methods' own options (``refs_used=10``)
    are keyword arguments too.
    """
    values = {"inputs": inputs, "output": output, "library": library, "model": model, "method": method, **options}
    return _explain_file(_read(values, "explain_file"))


def run_explain(options: ExplainOptions) -> ExplainRun:
    """``contrastcat explain`` on options read already (the command line reads its flags so)."""
    return _explain_file(options)


def merge(parts: Sequence[str | os.PathLike], output: str | os.PathLike = "-") -> int:
    """Join the part files of ``explain_file(..., shard="I/N")`` into the run's records, in input
    order: the bytes one process writes. Nothing is written unless every shard is there, complete.
    Returns the number of records written."""
    return run_merge(MergeOptions.read({"parts": parts, "output": output}, InCall("merge")))


def list_methods() -> list[dict]:
    """The methods, in the paper's order: ``name``, ``needs_library`` (contrastcat and its variants),
    ``options`` (the keyword options ``explain`` passes it, ``refs_used=10``) and ``description``."""
    from ..methods import list_methods as registered
    from ..methods import method_options

    return [
        {
            "name": method.name, "needs_library": bool(method.uses_library),
            "options": list(method_options(method.name)), "description": method.summary,
        }
        for method in registered()
    ]


with_signature(explain, ExplainOptions, ("classifier", "inputs", "library", "method"), only=IN_MEMORY)
with_signature(explain_file, ExplainOptions, ("inputs", "output", "library", "model", "method"))
