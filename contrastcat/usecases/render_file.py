"""The render use case: a records file as terminal blocks (coloured or plain, or each record's top
words) or as one HTML page. Every line is checked before anything is shown or written."""

from __future__ import annotations

import functools
import hashlib
import itertools
import os
import sys
from dataclasses import dataclass
from typing import Any, ClassVar

from .. import arguments as check
from ..errors import BadInput
from ..evaluation.gates import parse_pair
from ..io.files import atomic_text_output, is_standard_output
from ..records.record import RecordFile
from ..records.variants import MethodLabels
from ..spec import CommandOptions, option
from ..views.blocks import RenderRun, blocks, input_major, write_blocks
from ..views.html_page import html_page
from . import options

COLOR_CHOICES = ("auto", "always", "never")


def _color(named: str, value: Any) -> bool | str:
    """True or False, or as the command line says it: auto (a terminal without NO_COLOR), always, never."""
    if isinstance(value, str):
        return check.one_of(COLOR_CHOICES)(named, value)
    return check.flag(named, value)


def _compare(named: str, value: Any) -> tuple[str, str] | None:
    return None if value is None else parse_pair(named, value)


@dataclass(frozen=True)
class RenderOptions(CommandOptions):
    """``contrastcat render``'s options, each written once: its flag, keyword and check."""

    command: ClassVar[str] = "render"

    attributions: str = options.records()
    threshold: float = option(
        0.0, "Colour (or, in plain text, mark) only tokens scoring at least this.",
        functools.partial(check.number, minimum=0.0, maximum=1.0), kind=float,
    )
    limit: int | None = option(
        None, "Show only the first N records.", check.optional(functools.partial(check.count, maximum=sys.maxsize)),
        kind=int,
    )
    words: bool = option(False, "Merge word pieces into words (a word scores as its strongest piece).", check.flag, kind=bool)
    rescale: bool = option(
        True, "Min-max scale over the shown tokens (special tokens are hidden); --no-rescale: stored scores.",
        check.flag, kind=bool,
    )
    color: bool | str = option(
        False, "auto (colour on a terminal without NO_COLOR), always or never.", _color, shown_default="auto",
        annotation="bool | str",
    )
    html: str | None = option(
        None, "Write one self-contained HTML page instead (- for stdout).", options.path_or_none, metavar="FILE"
    )
    top: int | None = option(
        None, "Print each record's K most relevant words (tokens without --words).", check.optional(check.count),
        kind=int, metavar="K",
    )
    compare: tuple[str, str] | None = option(
        None, "Only methods A and B, each input's shadings one above the other.", _compare, metavar="A,B",
        annotation="str | None",
    )
    output: str | None = option(
        None, "Write the text here instead of stdout (written whole or not at all).", options.path_or_none,
        flags=("--output", "-o"), metavar="FILE",
    )
    quiet: bool = options.quiet()

    def check_together(self) -> None:
        if self.html is not None and (self.top is not None or self.threshold > 0.0):
            raise BadInput(
                f"{self.named('html')} shades every token and shows each score on hover: {self.bare('top')} and "
                f"{self.bare('threshold')} are for the terminal"
            )
        if self.html is not None and self.output is not None:
            raise BadInput(
                f"{self.named('html')} and {self.bare('output')}: give {self.bare('html')} (the page) or "
                f"{self.bare('output')} (the text), not both"
            )

    @property
    def colored(self) -> bool:
        """Whether the text is coloured: ``auto`` colours a terminal (standard output) without NO_COLOR."""
        if self.color == "auto":
            return self.output in (None, "-") and sys.stdout.isatty() and not os.environ.get("NO_COLOR")
        return self.color in (True, "always")


def render_file(chosen: RenderOptions) -> RenderRun:
    """The records file as one page (``html``), as text written to ``output``, or as blocks."""
    # The first records are all that is read (an endless standard input stops there): without
    # compare the first `limit`; with it, until `limit` records of the two methods are paired.
    source = RecordFile(chosen.attributions, chosen.limit if chosen.compare is None else None)
    methods: set[str] = set()
    labels = MethodLabels()  # variants of a method (an ablation run) by what differs: contrastcat[refs_used=5]
    pairing = _Pairing(chosen.compare, labels.label) if chosen.compare and chosen.limit else None

    def each(record) -> None:
        methods.add(labels.label(record))
        if pairing is not None:
            pairing.add(record)

    # A bad line fails before anything is shown; then the records stream.
    source.check(each, None if pairing is None else lambda: pairing.paired >= chosen.limit)
    pair = chosen.compare
    missing = [name for name in pair or () if name not in methods]
    if missing:
        raise BadInput(
            f"{chosen.named('compare')}: no records of method {missing[0]!r} in {source.name} "
            f"(it has: {', '.join(sorted(methods))})"
        )
    records = source.records()
    if pair is not None:
        records = input_major((r for r in records if labels.label(r) in pair), pair, labels.label)
    records = itertools.islice(records, chosen.limit)
    if chosen.html is not None:
        with atomic_text_output(chosen.html, [chosen.attributions]) as stream:
            stream.write(html_page(records, f"contrastcat: {source.name}", chosen.words, chosen.rescale, labels.label))
        return RenderRun(None if is_standard_output(chosen.html) else chosen.html, iter(()))
    shown = _Shown(chosen.threshold, chosen.words, chosen.rescale, chosen.top, chosen.colored)
    if chosen.output is not None:
        with atomic_text_output(chosen.output, [chosen.attributions]) as stream:
            write_blocks(blocks(records, labels, shown), stream, shown.color)
        return RenderRun(None if is_standard_output(chosen.output) else chosen.output, iter(()))
    return RenderRun(None, blocks(records, labels, shown))


class _Pairing:
    """How many records ``input_major`` has paired so far (its key, its two methods): what ends
    the first pass of ``compare`` with ``limit`` once that many are there to show."""

    def __init__(self, pair: tuple[str, str], label) -> None:
        self.pair, self.label = pair, label
        self.waiting: dict[bytes, set[str]] = {}  # digests of inputs one method has reached
        self.paired = 0

    def add(self, record) -> None:
        name = self.label(record)
        if name not in self.pair:
            return
        key = hashlib.blake2b(repr((repr(record.id), record.text, record.pair)).encode(), digest_size=16).digest()
        found = self.waiting.setdefault(key, set())
        found.add(name)
        if len(found) == 2:
            del self.waiting[key]
            self.paired += 2


@dataclass(frozen=True)
class _Shown:
    threshold: float
    words: bool
    rescale: bool
    top: int | None
    color: bool
