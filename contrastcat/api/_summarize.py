"""What a classifier relies on across a dataset: summarize (records in memory), summarize_file
(the command: a records file, its JSON and HTML outputs, the gate)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from ..views.word_summary import Summary
from ..records.record import AttributionRecord
from ..spec import InCall
from ..usecases.checks import records_arg
from ..usecases.options.summarize import SummarizeOptions
from ..usecases.summarize_file import run_summarize as _run_summarize
from ..usecases.summarize_file import summarize_in_memory
from .signatures import with_signature

# What a summary of records in memory takes of the command's options (no files, nothing printed).
ANALYSIS = ("top", "min_count", "tokens", "keep_case", "symbols", "rule", "forbid", "forbid_file", "bootstrap", "ci", "seed")


def summarize(records: Iterable[AttributionRecord], **options: Any) -> Summary:
    """Which words drive each class across ``records`` (explain's, or read with read_records):
    per method, class and split (all inputs; right and wrong predictions where records carry gold
    labels) each word's input count, mean value with a bootstrap interval, and how often it is an
    input's strongest word; the candidate shortcuts; ``summary.problems`` lists the ``forbid``
    words found (the command exits 3 for them). ``summary.to_frame()`` (pandas), ``.to_dict()``,
    ``.markdown()``, ``.html()``; a notebook shows it."""
    records = records_arg("summarize", records)
    chosen = SummarizeOptions.read(options, InCall("summarize"), only=ANALYSIS)
    return summarize_in_memory(records, chosen)


def summarize_file(attributions: str | os.PathLike, **options: Any) -> Summary:
    """``contrastcat summarize`` from Python: a records file (``-``: stdin) -> its summary, written to
    ``output`` as JSON and to ``html`` as a page when given (each whole or not at all)."""
    return _run_summarize(SummarizeOptions.read({"attributions": attributions, **options}, InCall("summarize_file")))


def run_summarize(options: SummarizeOptions) -> Summary:
    """``contrastcat summarize`` on options read already (the command line reads its flags so)."""
    return _run_summarize(options)


with_signature(summarize, SummarizeOptions, ("records",), only=ANALYSIS)
with_signature(summarize_file, SummarizeOptions, ("attributions",))
