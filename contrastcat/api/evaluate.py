"""Faithfulness: evaluate (records in memory), evaluate_file (the command: gates, baseline, plot)."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from .. import arguments as check
from ..errors import BadInput
from ..evaluation.curves import EvalSettings
from ..evaluation.evaluate_file import EvaluateJob, EvaluateRun
from ..evaluation.evaluate_file import evaluate_file as _evaluate_file
from ..evaluation.reports import EvaluationReport, evaluate_records
from ..evaluation.stats import BootstrapSettings
from ..io.files import interrupted_after, output_name
from ..library import RefLibrary
from ..models import Classifier
from ..records.record import AttributionRecord
from .checks import classifier_arg, library_arg, model_arg, records_arg


def evaluate(
    classifier: Classifier,
    records: Sequence[AttributionRecord],
    library: RefLibrary | None = None,
    *,
    kendall: bool = False,
    eraser: bool = False,
    loo: bool = False,
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
    ERASER comprehensiveness and sufficiency with ``eraser``, the leave-one-out τ with ``loo``;
    Kendall-τ with ``kendall`` (records of library methods need their ``library``). ``perturb``:
    delete, mask, pad or unk, for every one of them. Every mean
    has a bootstrap interval over inputs (``bootstrap`` resamples, 0: none);
    ``report.difference("contrastcat", "attcat")`` pairs two methods on their shared inputs."""
    classifier = classifier_arg("evaluate", classifier)
    records = records_arg("evaluate", records)
    library = library_arg("evaluate", library)
    settings, intervals = _settings(
        "evaluate", orders, steps, perturb, min_tokens, target, forward_dtype, bootstrap, ci, seed, eraser, loo
    )
    return evaluate_records(
        classifier, records, settings, library, check.flag("evaluate: kendall", kendall),
        check.batch_size("evaluate: batch_size", batch_size), source="records", bootstrap=intervals,
    )


def evaluate_file(
    records: str | os.PathLike,
    model: str | os.PathLike | Classifier | None = None,
    library: str | os.PathLike | None = None,
    *,
    output: str | os.PathLike | None = None,
    kendall: bool = False,
    eraser: bool = False,
    loo: bool = False,
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
    settings, intervals = _settings(
        "evaluate_file", orders, steps, perturb, min_tokens, target, forward_dtype, bootstrap, ci, seed, eraser, loo
    )
    plot = None if plot is None else check.path("evaluate_file: plot", plot)
    same = output is not None and os.path.realpath(check.path("evaluate_file: output", output)) == os.path.realpath(plot or "")
    if plot is not None and same:
        raise BadInput(f"evaluate_file: plot and output both name {plot}: the picture would replace the report")
    if plot is not None:
        from ..views.plots import plot_format, require_matplotlib

        plot_format(plot)
        require_matplotlib()
    job = EvaluateJob(
        records=check.path("evaluate_file: records", records),
        model=None if model is None else model_arg("evaluate_file", model),
        library=None if library is None else check.path("evaluate_file: library", library),
        settings=settings,
        bootstrap=intervals,
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
        from ..views.plots import plot_curves

        written = None if job.output is None else f"the report ({output_name(job.output)})"
        with interrupted_after(written, f"the picture ({plot})"):
            plot_curves(run.evaluation, plot, [job.records, job.library, job.baseline])
        both = f"{written} and the picture ({plot})" if written else f"the picture ({plot})"
        with interrupted_after(both, plural=written is not None):
            if notify:
                notify(f"wrote the curves to {plot}")
    return run


def _settings(
    function: str, orders, steps, perturb, min_tokens, target, forward_dtype, bootstrap, ci, seed, eraser, loo
) -> tuple[EvalSettings, BootstrapSettings]:
    """The protocol and the intervals of an evaluation, each value checked under ``function``'s name
    for it; orders as the command spells them too (``MoRF,LeRF``)."""
    settings = EvalSettings(
        orders=tuple(name.lower() for name in check.names(f"{function}: orders", orders)),
        steps=check.text(f"{function}: steps", steps),
        perturb=check.text(f"{function}: perturb", perturb),
        min_tokens=check.count(f"{function}: min_tokens", min_tokens),
        target=check.text(f"{function}: target", target),
        forward_dtype=check.text(f"{function}: forward_dtype", forward_dtype),
        eraser=check.flag(f"{function}: eraser", eraser),
        loo=check.flag(f"{function}: loo", loo),
    )
    intervals = BootstrapSettings(
        check.count(f"{function}: bootstrap", bootstrap, minimum=0),
        check.number(f"{function}: ci", ci),
        check.seed(f"{function}: seed", seed),
    )
    return settings, intervals
