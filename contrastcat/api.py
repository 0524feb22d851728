"""The public API: everything the CLI does, one call each, no file needed.

    import contrastcat
    clf = contrastcat.load_model("minilm-rt")
    lib = contrastcat.build_library(clf, "refs.h5")            # the model's own training data
    recs = contrastcat.explain(clf, ["a gripping, funny film"], library=lib)
    report = contrastcat.evaluate(clf, recs)
    print(report.table()); print(contrastcat.render(recs))

Records are plain dataclasses (``.to_dict()``), a notebook shows records and
reports coloured (``_repr_html_``), and every error a user can cause is a
:class:`contrastcat.errors.BadInput` with a one-line message.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence

from . import arguments as check
from .attribution.pipeline import ExplainOptions, check_library, parse_target
from .attribution.pipeline import explain as _explain
from .errors import BadInput
from .evaluation.evaluate_file import EvaluateJob, EvaluateRun
from .evaluation.evaluate_file import evaluate_file as _evaluate_file
from .evaluation.metrics import EvalSettings
from .evaluation.reports import EvaluationReport, evaluate_records
from .evaluation.stats import BootstrapSettings
from .io.files import check_output_path
from .library import BuildOptions, RefLibrary, SelectionSettings
from .library import build_library as _build_library
from .library.build import BuildReport, Progress, parse_pools
from .library.build_refs import build_refs as _build_refs
from .library.defaults import DEFAULT_LIBRARY, check_same_model, replaceable
from .library.defaults import cached_library as _cached_library
from .library.defaults import labelled_data as _labelled_data
from .methods import AttributionMethod, build_methods, parse_method_list
from .models import Classifier
from .output.distributed import torchrun_follower as _torchrun_follower
from .output.explain_run import ExplainJob, ExplainRun
from .output.explain_run import explain_file as _explain_file
from .output.shards import merge_parts
from .records.record import AttributionRecord, Records, rows_from_objects


def load_model(name: str, device: str = "auto", dtype: str = "auto") -> Classifier:
    """An alias (``minilm-rt``, ``roberta-sst2``, ...), a hub id or a local directory, loaded with
    eager attention; embedded models are trained on first use and cached."""
    import torch

    from .models.resolve import load_classifier

    if isinstance(name, os.PathLike):
        name = os.fspath(name)
    if not isinstance(name, str) or not name.strip() or "\0" in name:
        raise BadInput(f"load_model: name must be an alias, a hub id or a model directory, got {check.shown(name)}")
    if not isinstance(device, (str, torch.device)):
        raise BadInput(f"load_model: device must be a string (auto, cpu, cuda:0) or a torch.device, got {check.shown(device)}")
    if not isinstance(dtype, (str, torch.dtype)):
        raise BadInput(f"load_model: dtype must be a string (auto, float32, ...) or a torch.dtype, got {check.shown(dtype)}")
    return load_classifier(name, device, dtype=dtype)


def open_library(path: str | os.PathLike) -> RefLibrary:
    """A reference library written by ``build_library`` or ``contrastcat build-refs``, verified."""
    return RefLibrary(check.path("open_library: path", path))


def _classifier(function: str, value) -> Classifier:
    if isinstance(value, (str, os.PathLike)):
        raise BadInput(
            f"{function}: classifier is the name {check.shown(os.fspath(value))}; load it first: "
            f"contrastcat.load_model({check.shown(os.fspath(value))})"
        )
    return check.instance(f"{function}: classifier", value, Classifier, " (from contrastcat.load_model)")


def _library(function: str, value) -> RefLibrary | None:
    """A library, or a path to one (opened and verified here), or None."""
    if value is None or isinstance(value, RefLibrary):
        return value
    if isinstance(value, (str, os.PathLike)):
        return RefLibrary(check.path(f"{function}: library", value))
    raise BadInput(
        f"{function}: library must be a RefLibrary (contrastcat.open_library) or a path to one, got {check.shown(value)}"
    )


def _records(function: str, value) -> list[AttributionRecord]:
    items = list(check.collection(f"{function}: records", value, "records"))
    for index, item in enumerate(items):
        if not isinstance(item, AttributionRecord):
            raise BadInput(
                f"{function}: records: item {index} is {check.shown(item, 40)}, not an AttributionRecord "
                "(contrastcat.explain returns them; contrastcat.records.record.read_records reads a file of them)"
            )
    return items


def _model_directory(classifier: Classifier) -> str | None:
    return classifier.source if os.path.isdir(classifier.source) else None


def _build_options(
    function: str, *, k, keep, gamma, min_tokens, max_length, pools, seed, store_dtype, strict_gamma, batch_size,
    forward_dtype,
) -> BuildOptions:
    """The one BuildOptions of a call, each value checked under the name ``function`` takes it by."""
    return BuildOptions(
        selection=SelectionSettings(
            gamma=check.number(f"{function}: gamma", gamma, minimum=0.0),
            k=check.count(f"{function}: k", k),
            keep=check.count(f"{function}: keep", keep),
            min_tokens=check.count(f"{function}: min_tokens", min_tokens),
        ),
        batch_size=check.batch_size(f"{function}: batch_size", batch_size),
        dtype=check.text(f"{function}: store_dtype", store_dtype),
        strict_gamma=check.flag(f"{function}: strict_gamma", strict_gamma),
        pools=parse_pools(pools) if isinstance(pools, str) else tuple(check.names(f"{function}: pools", pools)),
        seed=check.seed(f"{function}: seed", seed),
        forward_dtype=check.text(f"{function}: forward_dtype", forward_dtype),
        max_length=check.optional_count(f"{function}: max_length", max_length, minimum=2),
    )


def build_library(
    classifier: Classifier,
    path: str | os.PathLike | None = None,
    data=None,
    labels: Sequence[int | str] | None = None,
    *,
    split: str | None = None,
    text_field: str | None = None,
    label_field: str | None = None,
    k: int = 30,
    keep: int = 50,
    gamma: float = 1e-3,
    min_tokens: int = 10,
    max_scan: int | None = None,
    pools: Sequence[str] = ("random",),
    seed: int = 0,
    store_dtype: str = "float32",
    strict_gamma: bool = False,
    batch_size: int = 32,
    forward_dtype: str = "same",
    max_length: int | None = None,
    progress: Progress | None = None,
) -> RefLibrary:
    """Pick references per class (docs/spec.md §2) and store their activations at ``path``.

    ``path`` None: ``refs.h5`` in the current directory, as ``build-refs`` without ``-o``
    (a file already there is replaced only if it is a library of the same model).

    ``data``: a ``--data`` spelling (a JSONL/CSV file, ``hub_name[:config]``,
    ``corpus:NAME``), a list of texts with ``labels``, or rows (dicts or a
    ``datasets.Dataset``) with ``text_field`` and ``label_field`` (None: ``text`` and
    ``label``, or the fields of the alias's data set). ``data`` None: the alias's own
    data set (``minilm-rt``: its Rotten Tomatoes training split).
    """
    classifier = _classifier("build_library", classifier)
    options = _build_options(
        "build_library", k=k, keep=keep, gamma=gamma, min_tokens=min_tokens, max_length=max_length, pools=pools,
        seed=seed, store_dtype=store_dtype, strict_gamma=strict_gamma, batch_size=batch_size,
        forward_dtype=forward_dtype,
    )
    max_scan = check.optional_count("build_library: max_scan", max_scan)
    progress = check.callback("build_library: progress", progress)
    if isinstance(data, (str, os.PathLike)):
        data = check.path("build_library: data", data)
    elif data is not None:
        check.collection("build_library: data", data, "texts or rows")
    # The same refusals as build-refs: the data, the model's files and a non-library are never replaced.
    if path is None:
        path = DEFAULT_LIBRARY
        check_output_path(path, [data if isinstance(data, str) else None, _model_directory(classifier)])
        check_same_model(path, replaceable(path), classifier)
    else:
        path = check.path("build_library: path", path)
        check_output_path(path, [data if isinstance(data, str) else None, _model_directory(classifier)])
    texts, label_ids, description, split_used = labelled_data(
        classifier, data, labels, split, text_field, label_field, max_scan
    )
    _build_library(classifier, texts, label_ids, path, options, data=description, split=split_used, progress=progress)
    return RefLibrary(path)


def build_refs(
    model: str | os.PathLike,
    output: str | os.PathLike | None = None,
    data: str | os.PathLike | None = None,
    *,
    split: str | None = None,
    text_field: str | None = None,
    label_field: str | None = None,
    k: int = 30,
    keep: int = 50,
    gamma: float = 1e-3,
    min_tokens: int = 10,
    max_scan: int | None = None,
    max_length: int | None = None,
    pools: str | Sequence[str] = ("random",),
    seed: int = 0,
    store_dtype: str = "float32",
    strict_gamma: bool = False,
    batch_size: int = 32,
    device: str = "auto",
    dtype: str = "auto",
    forward_dtype: str = "same",
    progress: Progress | None = None,
    notify: Callable[[str], None] | None = None,
) -> BuildReport:
    """``contrastcat build-refs`` from Python: load the model named ``model``, scan ``data`` (a file,
    ``hub_name[:config]``, ``corpus:NAME``; None: the alias's own) and write the library to ``output``
    (None: ``./refs.h5``, replaced only when it holds a library of the same model). Returns what
    was selected (``report.selection``: per class, the rows stored and how many passed gamma)."""
    options = _build_options(
        "build_refs", k=k, keep=keep, gamma=gamma, min_tokens=min_tokens, max_length=max_length, pools=pools,
        seed=seed, store_dtype=store_dtype, strict_gamma=strict_gamma, batch_size=batch_size,
        forward_dtype=forward_dtype,
    )
    return _build_refs(
        check.path("build_refs: model", model),
        None if output is None else check.path("build_refs: output", output),
        options,
        data=None if data is None else check.path("build_refs: data", data),
        split=check.optional_text("build_refs: split", split),
        text_field=check.optional_text("build_refs: text_field", text_field),
        label_field=check.optional_text("build_refs: label_field", label_field),
        max_scan=check.optional_count("build_refs: max_scan", max_scan),
        device=check.text("build_refs: device", device),
        dtype=check.text("build_refs: dtype", dtype),
        progress=check.callback("build_refs: progress", progress),
        notify=check.callback("build_refs: notify", notify),
    )


def cached_library(
    classifier: Classifier,
    progress: Progress | None = None,
    build: bool = True,
    notify: Callable[[str], None] | None = None,
) -> tuple[RefLibrary, bool]:
    """(library, built now) of a model known by its alias (``minilm-rt``, ``bert-sst2``, ...): what
    ``explain`` uses with no library named. The cached one (one per weights' precision) if it is
    readable and made for these weights; else built now with ``build_library``'s defaults from
    the alias's own training data and cached (``defaults.cached_library_path``; ``notify`` hears
    of it first). With ``build=False`` (several processes at once, each of which would build its
    own, different library) a missing or unusable one is an error."""
    return _cached_library(
        _classifier("cached_library", classifier),
        progress=check.callback("cached_library: progress", progress),
        build=check.flag("cached_library: build", build),
        notify=check.callback("cached_library: notify", notify),
    )


def labelled_data(
    classifier: Classifier,
    data=None,
    labels: Sequence[int | str] | None = None,
    split: str | None = None,
    text_field: str | None = None,
    label_field: str | None = None,
    max_scan: int | None = None,
) -> tuple[list[str], list[int], str, str]:
    """(texts, class ids, description, split) for a library: ``data`` as ``build_library`` takes it;
    None: the alias's own data set, whose split and fields are the defaults."""
    return _labelled_data(
        _classifier("labelled_data", classifier),
        data,
        labels,
        split=check.optional_text("split", split),
        text_field=check.optional_text("text_field", text_field),
        label_field=check.optional_text("label_field", label_field),
        max_scan=check.optional_count("max_scan", max_scan),
    )


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
    **options,
) -> Records:
    """Token attributions: one record per input and method, in input order.

    ``inputs``: texts, dicts with ``text_field`` (and optional id, label), or a
    ``datasets.Dataset``. ``method``: a name, ``all``, or a list. ``options`` are the
    methods' options (``refs_used=10``, ``ig_steps=20``; see ``--list-methods``):
    each method takes the ones it defines, and a name none of them defines is an error.
    ``forward_dtype="bfloat16"`` runs the deletion test's forward passes under autocast
    (faster on CPUs with AMX and on GPUs; elsewhere slower, with a
    :class:`~contrastcat.errors.SlowPrecision` warning); ``"auto"`` picks it only where it
    is native. docs/performance.md has what it changes.
    """
    classifier = _classifier("explain", classifier)
    names = parse_method_list(check.names("explain: method", method))
    methods: list[AttributionMethod] = build_methods(names, **options)
    library = _library("explain", library)
    check_library(methods, library)
    for name, value in (("text_field", text_field), ("id_field", id_field), ("label_field", label_field)):
        check.text(f"explain: {name}", value)
    settings = ExplainOptions(
        batch_size=batch_size, mask_special=mask_special, max_length=max_length,
        forward_dtype=check.text("explain: forward_dtype", forward_dtype),
    )
    chosen = parse_target(target, classifier.num_classes)
    items = check.collection("explain: inputs", inputs, "texts or rows")
    rows = rows_from_objects(items, text_field, id_field, label_field, source="inputs")
    used = library if any(m.uses_library for m in methods) else None
    return Records(_explain(classifier, rows, methods, used, target=chosen, options=settings, source="inputs"))


def explain_file(
    inputs: str | os.PathLike,
    output: str | os.PathLike = "-",
    library: str | os.PathLike | None = None,
    model: str | os.PathLike | None = None,
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
    the default model and its cached library. Returns what the run did (records written and
    kept, texts cut, lines skipped with ``on_error="skip"``).
    """
    job = ExplainJob(
        inputs=check.path("explain_file: inputs", inputs),
        output=check.path("explain_file: output", output),
        library=None if library is None else check.path("explain_file: library", library),
        model=None if model is None else check.path("explain_file: model", model),
        methods=check.names("explain_file: method", method),
        method_options=options,
        target=target,
        text_field=check.text("explain_file: text_field", text_field),
        id_field=check.text("explain_file: id_field", id_field),
        label_field=check.text("explain_file: label_field", label_field),
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


def evaluate(
    classifier: Classifier,
    records: Sequence[AttributionRecord],
    library: RefLibrary | None = None,
    *,
    kendall: bool = False,
    orders: Sequence[str] = ("morf", "lerf"),
    steps: str = "paper",
    perturb: str = "delete",
    min_tokens: int = 10,
    target: str = "pred",
    batch_size: int = 64,
    forward_dtype: str = "same",
    bootstrap: int = 1000,
    ci: float = 0.95,
    seed: int = 0,
) -> EvaluationReport:
    """Faithfulness (docs/spec.md §5): AOPC and log-odds per step, MoRF and LeRF, per method;
    Kendall-τ with ``kendall`` (records of library methods need their ``library``). Every mean
    has a bootstrap interval over inputs (``bootstrap`` resamples, 0: none);
    ``report.difference("contrastcat", "attcat")`` pairs two methods on their shared inputs."""
    classifier = _classifier("evaluate", classifier)
    records = _records("evaluate", records)
    library = _library("evaluate", library)
    settings = EvalSettings(
        orders=tuple(check.names("evaluate: orders", orders)),
        steps=check.text("evaluate: steps", steps),
        perturb=check.text("evaluate: perturb", perturb),
        min_tokens=check.count("evaluate: min_tokens", min_tokens),
        target=check.text("evaluate: target", target),
        forward_dtype=check.text("evaluate: forward_dtype", forward_dtype),
    )
    intervals = BootstrapSettings(
        check.count("evaluate: bootstrap", bootstrap, minimum=0),
        check.number("evaluate: ci", ci),
        check.seed("evaluate: seed", seed),
    )
    return evaluate_records(
        classifier, records, settings, library, check.flag("evaluate: kendall", kendall),
        check.batch_size("evaluate: batch_size", batch_size), source="records", bootstrap=intervals,
    )


def evaluate_file(
    records: str | os.PathLike,
    model: str | os.PathLike | None = None,
    library: str | os.PathLike | None = None,
    *,
    output: str | os.PathLike | None = None,
    kendall: bool = False,
    orders: str | Sequence[str] = ("morf", "lerf"),
    steps: str = "paper",
    perturb: str = "delete",
    min_tokens: int = 10,
    target: str = "pred",
    bootstrap: int = 1000,
    ci: float = 0.95,
    seed: int = 0,
    compare: str | None = None,
    per_input: bool = False,
    fail_under: str | None = None,
    baseline: str | os.PathLike | None = None,
    tolerance: str | float = "0.01",
    plot: str | os.PathLike | None = None,
    batch_size: int = 64,
    device: str = "auto",
    dtype: str = "auto",
    forward_dtype: str = "same",
    progress: Callable[[str, int, int | None], None] | None = None,
    notify: Callable[[str], None] | None = None,
) -> EvaluateRun:
    """``contrastcat evaluate`` from Python: a records file (``-``: stdin) -> the report, written to
    ``output`` as JSON when given, its curves drawn to ``plot`` (.png, .svg, .pdf), and its gates
    judged: ``fail_under`` bounds (``"morf.aopc=0.5,lerf.lodds=0.1"``) and a ``baseline`` report
    with its ``tolerance``. ``run.problems`` lists the gates failed (``run.passed``: none);
    the command exits 3 for them."""
    settings = EvalSettings(
        orders=tuple(name.lower() for name in check.names("evaluate_file: orders", orders)),
        steps=check.text("evaluate_file: steps", steps),
        perturb=check.text("evaluate_file: perturb", perturb),
        min_tokens=check.count("evaluate_file: min_tokens", min_tokens),
        target=check.text("evaluate_file: target", target),
        forward_dtype=check.text("evaluate_file: forward_dtype", forward_dtype),
    )
    plot = None if plot is None else check.path("evaluate_file: plot", plot)
    if plot is not None:
        from .views.plots import plot_format, require_matplotlib

        plot_format(plot)
        require_matplotlib()
    job = EvaluateJob(
        records=check.path("evaluate_file: records", records),
        model=None if model is None else check.path("evaluate_file: model", model),
        library=None if library is None else check.path("evaluate_file: library", library),
        settings=settings,
        bootstrap=BootstrapSettings(
            check.count("evaluate_file: bootstrap", bootstrap, minimum=0),
            check.number("evaluate_file: ci", ci),
            check.seed("evaluate_file: seed", seed),
        ),
        kendall=check.flag("evaluate_file: kendall", kendall),
        batch_size=check.batch_size("evaluate_file: batch_size", batch_size),
        device=check.text("evaluate_file: device", device),
        dtype=check.text("evaluate_file: dtype", dtype),
        output=None if output is None else check.path("evaluate_file: output", output),
        compare=None if compare is None else check.text("evaluate_file: compare", compare),
        per_input=check.flag("evaluate_file: per_input", per_input),
        fail_under=None if fail_under is None else check.text("evaluate_file: fail_under", fail_under),
        baseline=None if baseline is None else check.path("evaluate_file: baseline", baseline),
        tolerance=tolerance if isinstance(tolerance, str) else repr(check.number("evaluate_file: tolerance", tolerance)),
        other_outputs=() if plot is None else (plot,),
    )
    notify = check.callback("evaluate_file: notify", notify)
    run = _evaluate_file(job, progress=check.callback("evaluate_file: progress", progress), notify=notify)
    if plot is not None:
        from .views.plots import plot_curves

        plot_curves(run.evaluation, plot, [job.records, job.library, job.baseline])
        if notify:
            notify(f"wrote the curves to {plot}")
    return run


def render(records: Iterable[AttributionRecord], threshold: float = 0.0, words: bool = True) -> str:
    """Records as plain text, ``[word 0.87]`` on words scoring at least ``threshold``."""
    from .views.terminal import header, render_plain

    records = _records("render", records)
    threshold = check.number("render: threshold", threshold)
    words = check.flag("render: words", words)
    return "\n\n".join(f"{header(r)}\n{render_plain(r, threshold, words)}" for r in records)
