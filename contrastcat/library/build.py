"""Build a reference library (docs/spec.md §2): scan a labelled pool, select, store activations."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone

import numpy as np

from ..capture.core import ACTIVATIONS, capture
from ..errors import BadInput, RunFailed
from ..spec import Names, Progress, backticked
from ..models import Classifier
from ..models.forward import predictor
from ..models.loading import check_max_length
from ..models.precision import dtype_name, on_classifier, resolve_forward_dtype
from ..models.segments import check_types
from ..records.data import LabelledData
from ..models.tokens import TokenizedText, length_batches, tokenize
from ..version import __version__
from .schema import LibraryInfo, ReferenceEntry, group_path
from .select import (
    ClassSelection,
    Selection,
    SelectionSettings,
    select_random,
    select_references,
    select_same_class,
)
from .names import ABLATION_POOLS
from .writer import LibraryWriter

@dataclass(frozen=True)
class BuildSettings:
    """How a library is built. Values come checked (``usecases.build_refs.BuildRefsOptions``, where
    the public calls read them, naming each as the caller does)."""

    selection: SelectionSettings = SelectionSettings()
    batch_size: int = 32
    dtype: str = "float32"
    strict_gamma: bool = False
    # Pools stored beside the contrasting references: "random" by default (contrastcat-plus
    # reads it, as does --reference-select random), "same" for the paper's Table 3 ablation.
    pools: tuple[str, ...] = ("random",)
    seed: int = 0  # draws the random pool
    forward_dtype: str = "same"  # autocast of the f_c scan (--forward-dtype); same: the weights'
    max_length: int | None = None  # tokens per row, special ones included; None: the tokenizer's limit
    # How the caller spells an option, for the messages of the build (not a setting: never stored).
    named: Names = dataclasses.field(default=backticked, compare=False, repr=False)


@dataclass(frozen=True)
class BuildReport:
    fingerprint: str
    selection: Selection
    scanned: int
    truncated: int = 0  # scanned rows longer than the length limit (cut to it)
    max_length: int = 0  # the length limit the rows were cut to
    position_limit: int = 0  # the model's, the most max_length could be
    label_names: tuple[str, ...] = ()
    path: str = ""




def build_library(
    classifier: Classifier,
    rows: LabelledData,
    output: str | os.PathLike,
    options: BuildSettings = BuildSettings(),
    split: str = "",
    progress: Progress | None = None,
) -> BuildReport:
    """Scan the labelled ``rows``, pick references per class, write the library to ``output``
    (its ``data`` attribute: the rows' description, and ``split``). Texts that are ``(text,
    pair)`` tuples are sentence pairs, for a pair classifier (a pair library); each row's
    ``where`` (``FILE:LINE``), if known, names it in messages about one row."""
    labels, data, where = rows.labels, rows.description, rows.where
    limit = check_max_length(classifier, options.max_length)
    texts, pairs = split_pairs(rows.texts, data or "data")
    if pairs is not None:
        classifier = classifier.paired()
    tokenized = tokenize(classifier.tokenizer, texts, limit, classifier.empty_input, pairs)
    if classifier.pair_types is not None:
        for row, text in enumerate(tokenized):
            check_types(classifier.pair_types, text.ids, text.types, where[row] if where else f"{data or 'data'}: item {row}")
    lengths = np.array([len(t.ids) for t in tokenized])
    labels_array = np.asarray(labels)
    _check_candidates(labels_array, lengths, classifier, options, data)
    options = on_classifier(options, classifier, options.named)
    probs = _scan(classifier, [t.ids for t in tokenized], options, progress)
    selection = select_references(probs, labels_array, lengths, options.selection, classifier.label_names,
                                  classifier.multi_label)
    _check_selection(selection, classifier, options, data)
    groups = [(group_path("contrast", c.target), classifier.label_names[c.target], c) for c in selection.classes]
    groups += _ablation_pools(probs, labels_array, lengths, classifier, options)
    info = _library_info(classifier, options, limit, data, split, len(tokenized))
    writer = LibraryWriter(output, dataclasses.replace(info, inputs="pairs" if pairs is not None else "texts"))
    try:
        _store(classifier, writer, groups, _Rows(texts, pairs, labels, tokenized), options, progress)
        if "random" in options.pools:
            writer.set_attribute(group_path("random", 0), "seed", options.seed)
        fingerprint = writer.commit()
    except BaseException:
        writer.discard()
        raise
    return BuildReport(
        fingerprint=fingerprint,
        selection=selection,
        scanned=len(tokenized),
        truncated=sum(t.truncated for t in tokenized),
        max_length=limit,
        position_limit=classifier.position_limit,
        label_names=tuple(classifier.label_names),
        path=os.fspath(output),
    )


def split_pairs(texts, where: str) -> tuple[list[str], list[str] | None]:
    """(first texts, second texts or None) of texts that are all strings or all (text, pair) tuples."""
    kinds = {isinstance(text, tuple) for text in texts}
    if kinds != {True}:
        if True in kinds:
            raise BadInput(f"{where}: sentence pairs and single texts mixed: a library holds one kind")
        return list(texts), None
    return [text for text, _ in texts], [pair for _, pair in texts]


def _scan(classifier: Classifier, sequences, options: BuildSettings, progress: Progress | None) -> np.ndarray:
    """f(x) of every row [rows, classes], in batches of similar length."""
    predict = predictor(classifier, options.batch_size, resolve_forward_dtype(options.forward_dtype))
    probs = np.zeros((len(sequences), classifier.num_classes))
    done = 0
    for batch in length_batches([len(s) for s in sequences], options.batch_size * 8):
        probs[batch] = predict([sequences[i] for i in batch])
        done += len(batch)
        if progress:
            progress("scan", done, len(sequences))
    return probs


def _check_selection(selection: Selection, classifier: Classifier, options: BuildSettings, data: str) -> None:
    for chosen in selection.classes:
        name = classifier.label_names[chosen.target]
        if len(chosen.rows) == 0:  # the data's fault (for this model): bad input, as before the scan
            raise BadInput(
                f"{data or 'data'}: class {name!r}: no correctly classified example of another class with at "
                f"least {options.selection.min_tokens} tokens in the scanned data; cannot build references"
            )
        if options.strict_gamma and chosen.passing < options.selection.k:
            raise RunFailed(
                f"class {name!r}: only {chosen.passing} reference(s) pass f_c < {options.selection.gamma:g} "
                f"(need {options.selection.k}); {options.named('strict_gamma')} refuses to fill up"
            )


def _ablation_pools(probs, labels: np.ndarray, lengths: np.ndarray, classifier: Classifier, options: BuildSettings) -> list:
    """(group, name, selection) of the pools stored beside the contrasting references."""
    groups = []
    if "same" in options.pools:
        for chosen in select_same_class(probs, labels, lengths, options.selection, classifier.multi_label):
            groups.append((group_path("same", chosen.target), classifier.label_names[chosen.target], chosen))
    if "random" in options.pools:
        chosen = select_random(probs, labels, lengths, options.selection, options.seed)
        groups.append((group_path("random", 0), "random", chosen))
    return groups


def _library_info(classifier: Classifier, options: BuildSettings, limit: int, data: str, split: str, scanned: int) -> LibraryInfo:
    return LibraryInfo(
        model=classifier.name,
        model_source=classifier.source,
        model_fingerprint=classifier.fingerprint,
        tokenizer=str(getattr(classifier.tokenizer, "name_or_path", "")),
        num_layers=classifier.num_layers,
        hidden_size=classifier.hidden_size,
        label_names=classifier.label_names,
        gamma=options.selection.gamma,
        k=options.selection.k,
        keep=options.selection.keep,
        min_tokens=options.selection.min_tokens,
        max_length=limit,
        dtype=options.dtype,
        data=data,
        split=split,
        scanned=scanned,
        tool_version=__version__,
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        pools=tuple(pool for pool in ABLATION_POOLS if pool in options.pools),
        pad_token_id=classifier.pad_id,
        model_dtype=dtype_name(classifier.dtype),
        scan_dtype=options.forward_dtype,
    )


def _check_candidates(labels: np.ndarray, lengths: np.ndarray, classifier: Classifier, options: BuildSettings, data: str):
    """Before the scan: every class needs rows of another class, long enough to be references (a
    multi-label classifier's references are any rows the model says lack the label: rows long
    enough)."""
    where = data or "data"
    if len(labels) == 0:
        raise BadInput(f"{where}: no rows to scan")
    long_enough = lengths >= options.selection.min_tokens
    if classifier.multi_label:
        if not long_enough.any():
            raise BadInput(f"{where}: no row has {options.selection.min_tokens} tokens "
                           f"({options.named('min_tokens')}; the longest has {int(lengths.max())})")
        return
    for target, name in enumerate(classifier.label_names):
        if not (labels != target).any():
            raise BadInput(
                f"{where}: every row is of class {name!r}; references for it are rows of other classes, "
                "so the data needs at least two classes"
            )
    for target, name in enumerate(classifier.label_names):
        others = labels != target
        if not (others & long_enough).any():
            longest = int(lengths[others].max())
            raise BadInput(
                f"{where}: no row of a class other than {name!r} has {options.selection.min_tokens} tokens "
                f"({options.named('min_tokens')}; the longest has {longest})"
            )


@dataclass(frozen=True)
class _Rows:
    """The rows scanned: texts (and second texts of pairs), labels and their tokens."""

    texts: Sequence[str]
    pairs: Sequence[str] | None
    labels: Sequence[int]
    tokenized: Sequence[TokenizedText]

    def entry(self, row: int, f_c: float, below_gamma: bool) -> ReferenceEntry:
        return ReferenceEntry(
            f_c=float(f_c),
            below_gamma=bool(below_gamma),
            label=int(self.labels[row]),
            source_row=int(row),
            length=len(self.tokenized[row]),
            text=self.texts[row],
            token_ids=self.tokenized[row].ids,
            pair=None if self.pairs is None else self.pairs[row],
        )


def _store(
    classifier, writer: LibraryWriter, groups: list[tuple[str, str, ClassSelection]], scanned: _Rows,
    options: BuildSettings, progress,
) -> None:
    tokenized = scanned.tokenized
    total = sum(len(chosen.rows) for _, _, chosen in groups)
    done = 0
    for path, name, chosen in groups:
        entries = [scanned.entry(row, f, b) for row, f, b in zip(chosen.rows, chosen.f_c, chosen.below_gamma)]
        writer.add_group(path, name, entries, chosen.candidates)
        rows = [int(r) for r in chosen.rows]
        for batch in length_batches([len(tokenized[r]) for r in rows], options.batch_size):
            members = [tokenized[rows[i]] for i in batch]
            captured = capture(
                classifier,
                [m.ids for m in members],
                [m.special for m in members],
                [None] * len(members),
                needs=frozenset({ACTIVATIONS}),
            )
            for position, index in enumerate(batch):
                length = len(members[position])
                writer.add_activations(path, index, captured.activations[position, :, :length].cpu().numpy())
            done += len(batch)
            if progress:
                progress("store", done, total)
