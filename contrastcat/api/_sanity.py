"""The model-randomisation sanity check: sanity (records in memory), sanity_file (the command)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from ..errors import BadInput
from ..evaluation.sanity import SanityReport
from ..models import Classifier
from ..records.record import AttributionRecord
from ..spec import InCall
from ..usecases.checks import classifier_arg, library_arg, records_arg
from ..usecases.sanity_file import SanityOptions, sanity_check
from ..usecases.sanity_file import sanity_file as _sanity_file
from .signatures import with_signature


# What a check of records in memory takes of the command's options (no files).
IN_MEMORY = ("seed", "bootstrap", "ci", "batch_size")


def sanity(classifier: Classifier, records: Sequence[AttributionRecord], library=None, **options: Any) -> SanityReport:
    """Adebayo et al.'s model randomisation: each record explained again by its method on copies
    of ``classifier`` re-initialised cumulatively from the top (head, last layer ... first layer,
    embeddings; ``seed``), with the Spearman ρ between its map and the new one per step, averaged
    with a bootstrap interval. ``report.verdicts()`` says which methods pass (ρ below 0.5 on the
    fully randomised model). Library methods need their ``library``: its references are captured
    again under each copy."""
    chosen = SanityOptions.read(options, InCall("sanity"), only=IN_MEMORY)  # before the model's checks
    classifier = classifier_arg("sanity", classifier)
    records = records_arg("sanity", records)
    library = library_arg("sanity", library)
    if not records:
        raise BadInput("sanity: records is empty: nothing to check")
    return sanity_check(classifier, records, library, chosen, source="records")


def sanity_file(
    records: str | os.PathLike,
    model: str | os.PathLike | None = None,
    library: str | os.PathLike | None = None,
    **options: Any,
) -> tuple[SanityReport, dict]:
    """``contrastcat sanity`` from Python: a records file (``-``: stdin) -> the report and its JSON
    document, written to ``output`` when given, the cascade drawn to ``plot`` (.png, .svg, .pdf)."""
    values = {"records": records, "model": model, "library": library, **options}
    return _sanity_file(SanityOptions.read(values, InCall("sanity_file")))


def run_sanity(chosen: SanityOptions) -> tuple[SanityReport, dict]:
    """``contrastcat sanity`` on options read already (the command line reads its flags so)."""
    return _sanity_file(chosen)


with_signature(sanity, SanityOptions, ("classifier", "records", "library"), only=IN_MEMORY)
with_signature(sanity_file, SanityOptions, ("records", "model", "library"))


def sanity_blocks(report: SanityReport) -> list:
    """What ``contrastcat sanity`` prints: the table of ρ per step and method, the verdicts."""
    from ..views.tables import sanity_blocks as blocks

    return blocks(report)
