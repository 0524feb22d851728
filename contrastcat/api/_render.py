"""Records made visible: render (plain text), render_file (the command: terminal or HTML)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .. import arguments as check
from ..errors import BadInput
from ..records.record import AttributionRecord
from ..spec import InCall
from ..usecases.render_file import RenderOptions
from ..usecases.render_file import render_file as _render_file
from ..views.blocks import RenderRun
from ..usecases.checks import records_arg
from .signatures import with_signature

if TYPE_CHECKING:
    from ..usecases.evaluate_file import EvaluateRun


# What render takes of render_file's options: not the file's (attributions, output, html, quiet).
IN_MEMORY = ("threshold", "limit", "words", "rescale", "signed", "color", "top", "compare")


def render(records: Iterable[AttributionRecord], **options: Any) -> str:
    """Records as ``contrastcat render`` prints a file of them, through the same code and with the
    same defaults: each record's title line and its text with ``[token 0.87]`` marks (a signed
    map's ``[token +0.87]``, ``[not -0.41]``), or with ``color=True`` shaded in ANSI colours, an
    unsigned map in grey and a signed one in red and blue; ``top=K`` its K most relevant words.
    The options are the command's (``threshold``, ``words``, ``rescale``, ``signed``, ``limit``,
    ``compare="A,B"``). ``render_file(..., html=...)`` writes the page; a notebook shows records
    as that page does."""
    from ..usecases.render_file import render_records

    chosen = RenderOptions.read(options, InCall("render"), only=IN_MEMORY)
    return render_records(records_arg("render", records), chosen)


def render_file(attributions: str | os.PathLike, **options: Any) -> RenderRun:
    """``contrastcat render`` from Python: a records file (``-``: stdin) as one HTML page written
    to ``html`` (``-``: stdout), or as terminal blocks (``run.blocks``: each record's title and
    body, streamed as the file is read: iterate once, or ``list()`` them; coloured Rich ``Text`` with ``color``, else ``[word 0.87]`` marks on tokens scoring at
    least ``threshold``; with ``top``, its ``top`` most relevant words). ``compare="A,B"`` keeps
    methods A and B, each input's A then B; ``limit`` the first records; ``rescale`` min–max
    scales over the shown tokens. ``output`` writes the blocks as the command prints them (text;
    ANSI colours with ``color``) to that file (``-``: stdout), whole or not at all, instead of
    returning them. ``color`` is True or False, or as the command says it (``"auto"``: colour
    when ``output`` is standard output on a terminal without NO_COLOR). Every line is checked
    before anything is shown or written."""
    return _render_file(RenderOptions.read({"attributions": attributions, **options}, InCall("render_file")))


def run_render(options: RenderOptions) -> RenderRun:
    """``contrastcat render`` on options read already (the command line reads its flags so)."""
    return _render_file(options)


def report_blocks(run: EvaluateRun, *, markdown: bool = False, curves: bool = False, plain: bool = False) -> list:
    """An ``evaluate_file`` run as ``contrastcat evaluate`` prints it: strings (plain lines, or with
    ``markdown`` a GitHub table) and Rich tables and texts, in order. ``curves``: each method's
    step table also when several are compared; ``plain``: best and second marked by signs."""
    # Imported here: the tables need the evaluation's modules (torch among them), which
    # rendering a records file does not.
    from ..usecases.evaluate_file import EvaluateRun
    from ..views.tables import report_blocks as _report_blocks

    if not isinstance(run, EvaluateRun):
        raise BadInput(f"report_blocks: run must be what evaluate_file returns, got {check.shown(run)}")
    return _report_blocks(
        run.evaluation, run.document, markdown=check.flag("report_blocks: markdown", markdown),
        curves=check.flag("report_blocks: curves", curves), plain=check.flag("report_blocks: plain", plain),
    )


with_signature(render_file, RenderOptions, ("attributions",))
with_signature(render, RenderOptions, ("records",), only=IN_MEMORY)
