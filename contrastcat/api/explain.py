"""Token attributions: explain (in memory), explain_file (the command: resume, shards, torchrun), merge."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence

from .. import arguments as check
from ..attribution.pipeline import ExplainSettings, check_library, parse_target
from ..attribution.pipeline import explain as _explain
from ..errors import BadInput
from ..io.files import check_output_path
from ..library import RefLibrary
from ..methods import AttributionMethod, build_methods, parse_method_list
from ..models import Classifier
from ..output.distributed import torchrun_follower as _torchrun_follower
from ..output.explain_run import ExplainJob, ExplainRun
from ..output.explain_run import explain_file as _explain_file
from ..output.shards import merge_parts
from ..records.inputs import rows_from_objects
from ..records.record import Records
from ..usecases.checks import classifier_arg, library_arg, model_arg


def explain(
    classifier: Classifier,
    inputs: Iterable,
    library: RefLibrary | None = None,
    method: str | Sequence[str] = "contrastcat",
    *,
    target: str | int = "pred",
    batch_size: int = 16,
    max_length: int | None = None,
    mask_special: bool = False,
    forward_dtype: str = "same",
    text_field: str = "text",
    id_field: str = "id",
    label_field: str = "label",
    pair_field: str | None = None,
    **options,
) -> Records:
    """Token attributions: one record per input and method, in input order.

    ``inputs``: texts, dicts with ``text_field`` (and optional id, label), or a
    ``datasets.Dataset``. Sentence pairs (NLI, paraphrase, rerankers): ``(text, pair)`` tuples,
    or dicts with the second text in ``pair_field``; their library must be built from pairs. ``method``: a name, ``all``, or a list. ``options`` are the
    methods' options (``refs_used=10``, ``ig_steps=20``; see ``--list-methods``):
    each method takes the ones it defines, and a name none of them defines is an error.
    ``forward_dtype="bfloat16"`` runs the deletion test's forward passes under autocast
    (faster on CPUs with AMX and on GPUs; elsewhere slower, with a
    :class:`~contrastcat.errors.SlowPrecision` warning); ``"auto"`` picks it only where it
    is native. docs/performance.md has what it changes.
    """
    classifier = classifier_arg("explain", classifier)
    names = parse_method_list(check.names("explain: method", method))
    methods: list[AttributionMethod] = build_methods(names, **options)
    library = library_arg("explain", library)
    check_library(methods, library)
    for name, value in (("text_field", text_field), ("id_field", id_field), ("label_field", label_field)):
        check.text(f"explain: {name}", value)
    pair_field = check.optional_text("explain: pair_field", pair_field)
    settings = ExplainSettings(
        batch_size=batch_size, mask_special=mask_special, max_length=max_length,
        forward_dtype=check.text("explain: forward_dtype", forward_dtype),
    )
    chosen = parse_target(target, classifier.num_classes)
    items = check.collection("explain: inputs", inputs, "texts or rows")
    rows = rows_from_objects(items, text_field, id_field, label_field, source="inputs", pair_field=pair_field)
    used = library if any(m.uses_library for m in methods) else None
    return Records(_explain(classifier, rows, methods, used, target=chosen, options=settings, source="inputs"))


def explain_file(
    inputs: str | os.PathLike,
    output: str | os.PathLike = "-",
    library: str | os.PathLike | None = None,
    model: str | os.PathLike | Classifier | None = None,
    method: str | Sequence[str] = "contrastcat",
    *,
    resume: bool = False,
    shard: str | None = None,
    on_error: str = "stop",
    target: str | int = "pred",
    batch_size: int = 16,
    max_length: int | None = None,
    mask_special: bool = False,
    device: str = "auto",
    dtype: str = "auto",
    forward_dtype: str = "same",
    text_field: str = "text",
    id_field: str = "id",
    label_field: str = "label",
    pair_field: str | None = None,
    progress: Callable[[str, int, int | None], None] | None = None,
    notify: Callable[[str], None] | None = None,
    **options,
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
    sentence pair, its second text in that field.
    """
    job = ExplainJob(
        inputs=check.path("explain_file: inputs", inputs),
        output=check.path("explain_file: output", output),
        library=None if library is None else check.path("explain_file: library", library),
        model=None if model is None else model_arg("explain_file", model),
        methods=check.names("explain_file: method", method),
        method_options=options,
        target=target,
        text_field=check.text("explain_file: text_field", text_field),
        id_field=check.text("explain_file: id_field", id_field),
        label_field=check.text("explain_file: label_field", label_field),
        pair_field=check.optional_text("explain_file: pair_field", pair_field),
        mask_special=check.flag("explain_file: mask_special", mask_special),
        max_length=check.optional_count("explain_file: max_length", max_length),
        on_error=check.text("explain_file: on_error", on_error),
        resume=check.flag("explain_file: resume", resume),
        shard=None if shard is None else check.text("explain_file: shard", shard),
        batch_size=check.batch_size("explain_file: batch_size", batch_size),
        device=check.text("explain_file: device", device),
        dtype=check.text("explain_file: dtype", dtype),
        forward_dtype=check.text("explain_file: forward_dtype", forward_dtype),
    )
    return _explain_file(
        job,
        progress=check.callback("explain_file: progress", progress),
        notify=check.callback("explain_file: notify", notify),
    )


def torchrun_follower() -> bool:
    """Whether this process is one torchrun started other than rank 0: it leaves speaking
    (progress, notices, the summary, errors) to rank 0."""
    return _torchrun_follower()


def merge(parts: Sequence[str | os.PathLike], output: str | os.PathLike = "-") -> int:
    """Join the part files of ``explain_file(..., shard="I/N")`` into the run's records, in input
    order: the bytes one process writes. Nothing is written unless every shard is there, complete.
    Returns the number of records written."""
    paths = [check.path("merge: parts", part) for part in check.collection("merge: parts", parts, "part files")]
    if not paths:
        raise BadInput("merge: parts: no part file given")
    output = check.path("merge: output", output)
    check_output_path(output, paths)
    return merge_parts(paths, output)


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
