"""The model-randomisation sanity check run on attribution records (its measure and report:
:mod:`contrastcat.evaluation.sanity`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..errors import BadInput
from ..evaluation.sanity import MethodSanity, SanityReport, spearman
from ..evaluation.stats import BootstrapSettings
from ..records.record import AttributionRecord
from ..records.variants import MethodLabels
from .elsewhere import made_elsewhere
from .evaluate_records import check_against_model, check_explained, check_one_kind


def sanity_check(
    classifier,
    records: Sequence[AttributionRecord],
    library=None,
    seed: int = 0,
    bootstrap: BootstrapSettings = BootstrapSettings(),
    batch_size: int = 16,
    source: str = "<records>",
    progress: Callable[[str, int, int], None] | None = None,
) -> SanityReport:
    """Spearman ρ between each record's map and its method's map on each randomised copy."""
    from ..attribution.pipeline import reattribute_records
    from ..library.recapture import RecapturedLibrary
    from ..models.randomize import cascade_steps, randomised

    records = list(records)
    pairs = bool(records) and records[0].pair is not None
    check_one_kind(records, pairs, source)
    elsewhere = next((r for r in records if made_elsewhere(r)), None)
    if elsewhere is not None:
        raise BadInput(f"{source}:{elsewhere.line}: the sanity check runs each record's method again, and a record "
                       "made elsewhere (no token ids) names no method of contrastcat")
    check_explained(records, source)
    check_against_model(records, classifier, source)
    needing = next((r for r in records if r.library), None)
    if library is None and needing is not None:
        where = f"{source}:{needing.line}" if needing.line is not None else source
        raise BadInput(f"{where}: records of {needing.method} were made with a reference library: pass `library`")
    # A map needs two tokens to be ranked: inputs of fewer non-special tokens say nothing here.
    records = [r for r in records if sum(not flag for flag in r.special) >= 2]
    if not records:
        raise BadInput(f"{source}: no record has two or more non-special tokens: no map to correlate")
    labels = MethodLabels()
    grouped = labels.group(records)
    methods = {label: MethodSanity(label, group[0].method) for label, group in grouped.items()}
    steps: list[str] = []
    total = len(cascade_steps(classifier))
    # One copy randomised further at each step: each step is used before the next one is made.
    for done, (step, copy) in enumerate(randomised(classifier, seed)):
        steps.append(step.name)
        copy = copy.paired() if pairs else copy
        references = RecapturedLibrary(library, copy) if library is not None else None
        for label, group in grouped.items():
            scores = reattribute_records(copy, group, [r.target for r in group], references, batch_size, source)
            methods[label].rho[step.name] = [
                spearman(*_non_special(record, new)) for record, new in zip(group, scores)
            ]
        if progress is not None:
            progress("randomising", done + 1, total)
    report = SanityReport(
        model=classifier.name, model_fingerprint=classifier.fingerprint, seed=seed, steps=steps, methods=methods,
        inputs=len({(r.id, tuple(r.token_ids)) for r in records}), bootstrap=bootstrap,
    )
    report.add_intervals()
    return report


def _non_special(record: AttributionRecord, new: Sequence[float]) -> tuple[list[float], list[float]]:
    keep = [i for i, flag in enumerate(record.special) if not flag]
    return [record.scores[i] for i in keep], [new[i] for i in keep]
