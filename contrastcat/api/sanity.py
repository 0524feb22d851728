"""The model-randomisation sanity check: sanity (records in memory), sanity_file (the command)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence

from .. import arguments as check
from ..errors import BadInput
from ..evaluation.sanity import SanityReport, sanity_check
from ..evaluation.stats import BootstrapSettings
from ..io.files import atomic_text_output, check_output_path, interrupted_after, output_name
from ..models import Classifier
from ..models.resolve import load_classifier, model_location
from ..records.record import AttributionRecord, read_records
from ..usecases.checks import classifier_arg, library_arg, records_arg


def sanity(
    classifier: Classifier,
    records: Sequence[AttributionRecord],
    library=None,
    *,
    seed: int = 0,
    bootstrap: int = 1000,
    ci: float = 0.95,
    batch_size: int = 16,
) -> SanityReport:
    """Adebayo et al.'s model randomisation: each record explained again by its method on copies
    of ``classifier`` re-initialised cumulatively from the top (head, last layer ... first layer,
    embeddings; ``seed``), with the Spearman ρ between its map and the new one per step, averaged
    with a bootstrap interval. ``report.verdicts()`` says which methods pass (ρ below 0.5 on the
    fully randomised model). Library methods need their ``library``: its references are captured
    again under each copy."""
    classifier = classifier_arg("sanity", classifier)
    records = records_arg("sanity", records)
    library = library_arg("sanity", library)
    intervals = BootstrapSettings(
        check.count("sanity: bootstrap", bootstrap, minimum=0), check.number("sanity: ci", ci), check.seed("sanity: seed", seed),
    )
    if not records:
        raise BadInput("sanity: records is empty: nothing to check")
    return sanity_check(
        classifier, records, library, intervals.seed, intervals,
        check.batch_size("sanity: batch_size", batch_size), source="records",
    )


def sanity_file(
    records: str | os.PathLike,
    model: str | os.PathLike | None = None,
    library: str | os.PathLike | None = None,
    *,
    output: str | os.PathLike | None = None,
    plot: str | os.PathLike | None = None,
    per_input: bool = False,
    seed: int = 0,
    bootstrap: int = 1000,
    ci: float = 0.95,
    batch_size: int = 16,
    device: str = "auto",
    dtype: str = "auto",
    progress: Callable[[str, int, int | None], None] | None = None,
    notify: Callable[[str], None] | None = None,
) -> tuple[SanityReport, dict]:
    """``contrastcat sanity`` from Python: a records file (``-``: stdin) -> the report and its JSON
    document, written to ``output`` when given, the cascade drawn to ``plot`` (.png, .svg, .pdf)."""
    from ..views.plots import plot_format, plot_sanity, require_matplotlib

    progress = check.callback("sanity_file: progress", progress)
    notify = check.callback("sanity_file: notify", notify)
    path = check.path("sanity_file: records", records)
    out = None if output is None else check.path("sanity_file: output", output)
    picture = None if plot is None else check.path("sanity_file: plot", plot)
    lib_path = None if library is None else check.path("sanity_file: library", library)
    if out is not None and picture is not None and os.path.realpath(out) == os.path.realpath(picture):
        raise BadInput(f"sanity_file: plot and output both name {picture}: the picture would replace the report")
    if picture is not None:
        plot_format("sanity_file: plot", picture)
        require_matplotlib()
    for target in (out, picture):
        if target is not None:
            check_output_path(target, [path, lib_path])
    found = read_records(path)
    name = None if model is None else check.path("sanity_file: model", model)
    name = name or found[0].model
    if not name:
        raise BadInput(f"{path}:{found[0].line}: the record names no model: pass `model`")
    for target in (out, picture):
        if target is not None:
            check_output_path(target, [model_location(name)])
    classifier = load_classifier(name, check.text("sanity_file: device", device), progress=progress, notify=notify,
                                 dtype=check.text("sanity_file: dtype", dtype))
    opened = library_arg("sanity_file", lib_path)
    intervals = BootstrapSettings(
        check.count("sanity_file: bootstrap", bootstrap, minimum=0), check.number("sanity_file: ci", ci),
        check.seed("sanity_file: seed", seed),
    )
    report = sanity_check(
        classifier, found, opened, intervals.seed, intervals, check.batch_size("sanity_file: batch_size", batch_size),
        source=path, progress=progress,
    )
    document = report.to_dict(check.flag("sanity_file: per_input", per_input))
    report_written = None
    if out is not None:
        with atomic_text_output(out, [path, lib_path]) as stream:
            stream.write(json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n")
        report_written = f"the report ({output_name(out)})"
        with interrupted_after(report_written):
            if notify:
                notify(f"wrote the sanity report to {output_name(out)}")
    if picture is not None:
        with interrupted_after(report_written, f"the picture ({picture})"):
            plot_sanity(report, picture, [path, lib_path])
        both = f"{report_written} and the picture ({picture})" if report_written else f"the picture ({picture})"
        with interrupted_after(both, plural=report_written is not None):
            if notify:
                notify(f"wrote the picture to {picture}")
    return report, document


def sanity_blocks(report: SanityReport) -> list:
    """What ``contrastcat sanity`` prints: the table of ρ per step and method, the verdicts."""
    from ..views.tables import sanity_blocks as blocks

    return blocks(report)
