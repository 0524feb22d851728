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

from .defaults import DEFAULT_LIBRARY, cached_library_path, check_same_model, replaceable
from .errors import BadInput
from .metrics import EvalSettings
from .pipeline import ExplainOptions, check_library, parse_target
from .pipeline import explain as _explain
from .library import BuildOptions, RefLibrary, SelectionSettings
from .library import build_library as _build_library
from .methods import METHODS, AttributionMethod, build_methods
from .models import Classifier
from .records import AttributionRecord, Records, rows_from_objects
from .stats import BootstrapSettings
from .library.build import Progress
from .reports import EvaluationReport, evaluate_records


def load_model(name: str, device: str = "auto", dtype: str = "auto") -> Classifier:
    """An alias (``minilm-rt``, ``roberta-sst2``, ...), a hub id or a local directory, loaded with
    eager attention; embedded models are trained on first use and cached."""
    from .resolve import load_classifier

    return load_classifier(name, device, dtype=dtype)


def open_library(path: str | os.PathLike) -> RefLibrary:
    """A reference library written by ``build_library`` or ``contrastcat build-refs``, verified."""
    return RefLibrary(path)


def build_library(
    classifier: Classifier,
    path: str | os.PathLike | None = None,
    data=None,
    labels: Sequence[int | str] | None = None,
    *,
    split: str | None = None,
    text_field: str = "text",
    label_field: str = "label",
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
    progress: Progress | None = None,
) -> RefLibrary:
    """Pick references per class (docs/spec.md §2) and store their activations at ``path``.

    ``path`` None: ``refs.h5`` in the current directory, as ``build-refs`` without ``-o``
    (a file already there is replaced only if it is a library of the same model).

    ``data``: a ``--data`` spelling (a JSONL/CSV file, ``hub_name[:config]``,
    ``corpus:NAME``), a list of texts with ``labels``, or rows (dicts or a
    ``datasets.Dataset``) with ``text_field`` and ``label_field``. None: the
    alias's own data set (``minilm-rt``: its Rotten Tomatoes training split).
    """
    if path is None:
        path = DEFAULT_LIBRARY
        check_same_model(path, replaceable(path), classifier)
    texts, label_ids, description, split_used = labelled_data(
        classifier, data, labels, split, text_field, label_field, max_scan
    )
    options = BuildOptions(
        selection=SelectionSettings(gamma=gamma, k=k, keep=keep, min_tokens=min_tokens),
        batch_size=batch_size,
        dtype=store_dtype,
        strict_gamma=strict_gamma,
        pools=tuple(pools),
        seed=seed,
        forward_dtype=forward_dtype,
    )
    _build_library(classifier, texts, label_ids, path, options, data=description, split=split_used, progress=progress)
    return RefLibrary(path)


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
    from .aliases import lookup_alias
    from .errors import ContrastCatError
    from .files import check_output_path
    from .models.precision import dtype_name

    if lookup_alias(classifier.name) is None:
        raise BadInput(f"model {classifier.name!r} is not an alias, so it has no default library: use build_library")
    path = cached_library_path(classifier.name, dtype_name(classifier.dtype))
    why = "it is not built yet"
    if os.path.lexists(path):
        try:
            library = RefLibrary(path)
            library.check_model(classifier)
            return library, False
        except ContrastCatError as error:  # the cache's own file: an older format, another training, damage
            why = f"it cannot be used ({error})"
    if not build:
        raise BadInput(
            f"the default library of {classifier.name} is needed, but {why}: build it with one plain explain "
            "run first (no torchrun, no --shard), or pass --refs"
        )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise BadInput(f"{path.parent}: cannot hold the cached library ({error.strerror})") from None
    check_output_path(str(path))  # before the scan: a place that cannot be written fails now
    if notify:
        notify(f"building the default library of {classifier.name} from its training data (once; cached in {path})")
    return build_library(classifier, path, progress=progress), True


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
    from .aliases import lookup_alias
    from .data import load_labelled
    from .records import resolve_label

    if data is None or isinstance(data, (str, os.PathLike)):
        alias = lookup_alias(classifier.name)
        source = alias.data if alias is not None and data is None else None
        if data is None and source is None:
            raise BadInput(f"data (--data) is required: model {classifier.name!r} has no default data set")
        labelled = load_labelled(
            str(data) if data is not None else source.spec,
            classifier.label_names,
            split=split or (source.split if source else "train"),
            text_field=text_field or (source.text_field if source else "text"),
            label_field=label_field or (source.label_field if source else "label"),
            max_scan=max_scan,
        )
        return labelled.texts, labelled.labels, labelled.description, split or (source.split if source else "")
    text_field, label_field = text_field or "text", label_field or "label"
    items = list(data)
    if labels is not None:
        if len(labels) != len(items):
            raise BadInput(f"{len(items)} texts but {len(labels)} labels")
        items = [{text_field: text, label_field: label} for text, label in zip(items, labels)]
    rows = rows_from_objects(items, text_field, "id", label_field, source="data")
    if any(row.label is None for row in rows):
        missing = next(i for i, row in enumerate(rows) if row.label is None)
        raise BadInput(f"data: item {missing}: no label ({label_field!r})")
    resolved = [resolve_label(row.label, classifier.label_names, f"data: item {row.line - 1}") for row in rows]
    texts = [row.text for row in rows][:max_scan]
    return texts, resolved[: len(texts)], "python objects", split or ""


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
    names = list(METHODS) if method == "all" else [method] if isinstance(method, str) else list(method)
    methods: list[AttributionMethod] = build_methods(names, **options)
    check_library(methods, library)
    rows = rows_from_objects(inputs, text_field, id_field, label_field, source="inputs")
    chosen = parse_target(target, classifier.num_classes)
    settings = ExplainOptions(
        batch_size=batch_size, mask_special=mask_special, max_length=max_length, forward_dtype=forward_dtype
    )
    used = library if any(m.uses_library for m in methods) else None
    return Records(_explain(classifier, rows, methods, used, target=chosen, options=settings, source="inputs"))


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
    settings = EvalSettings(
        orders=tuple(orders), steps=steps, perturb=perturb, min_tokens=min_tokens, target=target,
        forward_dtype=forward_dtype,
    )
    return evaluate_records(
        classifier, list(records), settings, library, kendall, batch_size, source="records",
        bootstrap=BootstrapSettings(bootstrap, ci, seed),
    )


def render(records: Iterable[AttributionRecord], threshold: float = 0.0, words: bool = True) -> str:
    """Records as plain text, ``[word 0.87]`` on words scoring at least ``threshold``."""
    from .terminal import header, render_plain

    return "\n\n".join(f"{header(r)}\n{render_plain(r, threshold, words)}" for r in records)
