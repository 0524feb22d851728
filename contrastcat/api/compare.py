"""Which method to trust for this model: compare_file (the command)."""

from __future__ import annotations

import os
from typing import Any

from ..models import Classifier
from ..spec import InCall
from ..usecases.compare import CompareRun
from ..usecases.options.compare import CompareOptions
from ..usecases.compare import compare_file as _compare_file
from .signatures import with_signature


def compare_file(
    inputs: str | os.PathLike,
    library: str | os.PathLike | None = None,
    model: str | os.PathLike | Classifier | None = None,
    **options: Any,
) -> CompareRun:
    """``contrastcat compare`` from Python: a sample of an inputs file (``limit``, drawn with
    ``seed``) explained by each method alone (timed), every record evaluated with deletion and
    [MASK] (curves, ERASER, leave-one-out τ), the methods ranked on the protocols none of them was
    fitted to, and the recommendation those numbers support (``run.document["recommendation"]``).
    ``output``: a folder for records.jsonl, report.json, report.md and report.html; ``resume``:
    continue an interrupted comparison from ``output``/work."""
    values = {"inputs": inputs, "library": library, "model": model, **options}
    return _compare_file(CompareOptions.read(values, InCall("compare_file")))


def run_compare(options: CompareOptions) -> CompareRun:
    """``contrastcat compare`` on options read already (the command line reads its flags so)."""
    return _compare_file(options)


with_signature(compare_file, CompareOptions, ("inputs", "library", "model"))
