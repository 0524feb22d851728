"""``contrastcat render``'s options: a records file as terminal blocks or one HTML page."""

from __future__ import annotations

import functools
import os
import sys
from dataclasses import dataclass
from typing import Any, ClassVar

from ... import arguments as check
from ...errors import BadInput
from ...evaluation.bounds import parse_pair
from ...records.view import VIEW, View
from ...spec import CommandOptions, option
from .. import options


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
    words: bool | None = option(
        VIEW.words, "Show words as a reader sees them (pieces joined, punctuation apart; a word scores as the "
        "sum of its pieces' raw scores in a signed map, its strongest piece in an unsigned one); "
        "--no-words: tokens. Unset: tokens when shading, words with --top.",
        check.optional(check.flag), kind=bool, show_default=False,
    )
    rescale: bool = option(
        VIEW.rescale, "Min-max scale over the shown tokens (special tokens are hidden); --no-rescale: stored scores.",
        check.flag, kind=bool,
    )
    signed: bool = option(
        VIEW.signed, "Shade a signed map (a signed method's; another tool's whose raw scores go below 0) red for "
        "the class, blue against it; --no-signed: its [0, 1] scores on the grey scale of unsigned maps.",
        check.flag, kind=bool,
    )
    color: bool | str = option(
        False, "auto (colour on a terminal without NO_COLOR), always or never.", _color, shown_default="auto",
        annotation="bool | str", completes=COLOR_CHOICES,
    )
    html: str | None = option(
        None, "Write one self-contained HTML page instead (- for stdout).", options.path_or_none, metavar="FILE"
    )
    top: int | None = option(
        None, "Print each record's K most relevant words (tokens with --no-words).", check.optional(check.count),
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
    def shown_words(self) -> bool:
        """Whether words are shown: as asked, or, unasked, with ``top`` (a list of the strongest
        pieces would name "ted" for "tedious") and not when shading (each token shown in place)."""
        return View(self.words, self.rescale, self.signed).shown_words(listed=self.top is not None)

    @property
    def colored(self) -> bool:
        """Whether the text is coloured: ``auto`` colours a terminal (standard output) without NO_COLOR."""
        if self.color == "auto":  # a dumb terminal takes no colour: the plain marks, not a text without scores
            dumb = os.environ.get("TERM", "").lower() in ("dumb", "unknown")
            return self.output in (None, "-") and sys.stdout.isatty() and not os.environ.get("NO_COLOR") and not dumb
        return self.color in (True, "always")


