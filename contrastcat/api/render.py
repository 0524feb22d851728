"""Records made visible: render (plain text), render_file (the command: terminal or HTML)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable

from .. import arguments as check
from ..errors import BadInput
from ..usecases.evaluate_file import EvaluateRun
from ..records.record import AttributionRecord
from ..views.render_file import RenderJob, RenderRun
from ..views.render_file import render_file as _render_file
from ..views.tables import report_blocks as _report_blocks
from ..usecases.checks import records_arg


def render(records: Iterable[AttributionRecord], threshold: float = 0.0, words: bool = True) -> str:
    """Records as plain text, ``[word 0.87]`` on words scoring at least ``threshold``."""
    from ..views.terminal import header, render_plain

    records = records_arg("render", records)
    threshold = check.number("render: threshold", threshold)
    words = check.flag("render: words", words)
    return "\n\n".join(f"{header(r)}\n{render_plain(r, threshold, words)}" for r in records)


def render_file(
    attributions: str | os.PathLike,
    *,
    html: str | os.PathLike | None = None,
    threshold: float = 0.0,
    limit: int | None = None,
    words: bool = False,
    rescale: bool = True,
    top: int | None = None,
    compare: str | None = None,
    color: bool = False,
    output: str | os.PathLike | None = None,
) -> RenderRun:
    """``contrastcat render`` from Python: a records file (``-``: stdin) as one HTML page written
    to ``html`` (``-``: stdout), or as terminal blocks (``run.blocks``: each record's title and
    body, streamed as the file is read: iterate once, or ``list()`` them; coloured Rich ``Text`` with ``color``, else ``[word 0.87]`` marks on tokens scoring at
    least ``threshold``; with ``top``, its ``top`` most relevant words). ``compare="A,B"`` keeps
    methods A and B, each input's A then B; ``limit`` the first records; ``rescale`` min–max
    scales over the shown tokens. ``output`` writes the blocks as the command prints them (text;
    ANSI colours with ``color``) to that file (``-``: stdout), whole or not at all, instead of
    returning them. Every line is checked before anything is shown or written."""
    return _render_file(RenderJob(
        attributions=check.path("render_file: attributions", attributions),
        html=None if html is None else check.path("render_file: html", html),
        threshold=check.number("render_file: threshold", threshold, minimum=0.0, maximum=1.0),
        limit=check.optional_count("render_file: limit", limit, maximum=sys.maxsize),
        words=check.flag("render_file: words", words),
        rescale=check.flag("render_file: rescale", rescale),
        top=check.optional_count("render_file: top", top),
        compare=None if compare is None else check.text("render_file: compare", compare),
        color=check.flag("render_file: color", color),
        output=None if output is None else check.path("render_file: output", output),
    ))


def report_blocks(run: EvaluateRun, *, markdown: bool = False, curves: bool = False, plain: bool = False) -> list:
    """An ``evaluate_file`` run as ``contrastcat evaluate`` prints it: strings (plain lines, or with
    ``markdown`` a GitHub table) and Rich tables and texts, in order. ``curves``: each method's
    step table also when several are compared; ``plain``: best and second marked by signs."""
    if not isinstance(run, EvaluateRun):
        raise BadInput(f"report_blocks: run must be what evaluate_file returns, got {check.shown(run)}")
    return _report_blocks(
        run.evaluation, run.document, markdown=check.flag("report_blocks: markdown", markdown),
        curves=check.flag("report_blocks: curves", curves), plain=check.flag("report_blocks: plain", plain),
    )
