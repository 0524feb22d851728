"""Faithfulness: evaluate (records in memory), evaluate_file (the command: gates, baseline, plot).

Their keyword arguments are ``contrastcat evaluate``'s options (``EvaluateOptions``: each one's
default, help and check written once); ``help(evaluate_file)`` lists them."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from ..evaluation.reports import EvaluationReport
from ..usecases.evaluate_records import Evaluating, evaluate_records
from ..library import RefLibrary
from ..models import Classifier
from ..records.record import AttributionRecord
from ..spec import InCall
from ..usecases.checks import classifier_arg, library_arg, records_arg
from ..usecases.evaluate_file import EvaluateOptions, EvaluateRun
from ..usecases.evaluate_file import evaluate_file as _evaluate_file
from .signatures import with_signature

# What an evaluation of records in memory takes of the command's options (no files, no gates).
PROTOCOL = (
    "kendall", "eraser", "loo", "orders", "steps", "perturb", "min_tokens", "target", "batch_size", "forward_dtype",
    "bootstrap", "ci", "seed",
)


def evaluate(
    classifier: Classifier,
    records: Sequence[AttributionRecord],
    library: RefLibrary | None = None,
    **options: Any,
) -> EvaluationReport:
    """Faithfulness (docs/spec.md §5): AOPC and log-odds per step, MoRF and LeRF, per method;
    ERASER comprehensiveness and sufficiency with ``eraser``, the leave-one-out τ with ``loo``;
    Kendall-τ with ``kendall`` (records of library methods need their ``library``). ``perturb``:
    delete, mask, pad or unk, for every one of them. Every mean
    has a bootstrap interval over inputs (``bootstrap`` resamples, 0: none);
    ``report.difference("contrastcat", "attcat")`` pairs two methods on their shared inputs."""
    chosen = EvaluateOptions.read(options, InCall("evaluate"), only=PROTOCOL)  # before the model's checks
    classifier = classifier_arg("evaluate", classifier)
    records = records_arg("evaluate", records)
    library = library_arg("evaluate", library)
    return evaluate_records(classifier, records, chosen.settings, Evaluating(
        library, chosen.kendall, chosen.batch_size, chosen.intervals, source="records", named=chosen.names,
    ))


def evaluate_file(
    records: str | os.PathLike,
    model: str | os.PathLike | Classifier | None = None,
    library: str | os.PathLike | None = None,
    **options: Any,
) -> EvaluateRun:
    """``contrastcat evaluate`` from Python: a records file (``-``: stdin) -> the report, written to
    ``output`` as JSON when given, its curves drawn to ``plot`` (.png, .svg, .pdf), and its gates
    judged: ``fail_under`` bounds (``"morf.aopc=0.5,lerf.lodds=0.1"``) and a ``baseline`` report
    with its ``tolerance``. ``run.problems`` lists the gates failed (``run.passed``: none);
    the command exits 3 for them. ``progress(phase, done, total)`` and ``notify(line)`` are
    called as the work goes."""
    values = {"records": records, "model": model, "library": library, **options}
    return _evaluate_file(EvaluateOptions.read(values, InCall("evaluate_file")))


def run_evaluate(options: EvaluateOptions) -> EvaluateRun:
    """``contrastcat evaluate`` on options read already (the command line reads its flags so)."""
    return _evaluate_file(options)


with_signature(evaluate, EvaluateOptions, ("classifier", "records", "library"), only=PROTOCOL)
with_signature(evaluate_file, EvaluateOptions, ("records", "model", "library"))
