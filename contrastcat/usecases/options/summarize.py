"""``contrastcat summarize``'s options: what a classifier relies on across a records file."""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from collections.abc import Callable
from typing import Any, ClassVar

from ... import arguments as check
from ...errors import BadInput
from ...spec import CommandOptions, option
from .. import options


RULE_CHOICES = ("auto", "sum", "max")


def _words(named: str, value: Any) -> tuple[str, ...] | None:
    """Comma lists of words: one string, or several (the flag given again adds its words; from
    Python, a list)."""
    if value is None:
        return None
    lists = [value] if isinstance(value, str) else list(check.collection(named, value, "words"))
    items = [item for text in lists for item in check.text(named, text).split(",")]
    words = tuple(item.strip() for item in items)
    if not words or not all(words):
        raise BadInput(f"{named}: an empty word in {check.shown(value)}: give WORD[,WORD...]")
    return words


@dataclass(frozen=True)
class SummarizeOptions(CommandOptions, options.Resampling):
    """``contrastcat summarize``'s options, each written once: its flag, keyword and check."""

    command: ClassVar[str] = "summarize"
    together: ClassVar = (options.check_resamples_resolve,)

    attributions: str = options.records()
    top: int = option(
        10, "Words listed per class, for it and against it; --forbid's hits are among these K.",
        functools.partial(check.count, maximum=10_000), kind=int, metavar="K",
    )
    min_count: int = option(
        10, "Rank and flag only words in at least this many inputs (a word seen twice cannot top a list).",
        functools.partial(check.count, maximum=10**12), kind=int, metavar="N",
    )
    tokens: bool = option(
        False, "Count the tokens as the tokenizer wrote them (##ted, Ġgreat), not words.", check.flag, kind=bool,
        negatable=False,
    )
    keep_case: bool = option(
        False, "Keep the case of words (default: case-folded, The = the).", check.flag, kind=bool, negatable=False,
    )
    symbols: bool = option(
        True, "Count punctuation and other symbols as units of their own; --no-symbols: leave them out.",
        check.flag, kind=bool,
    )
    rule: str = option(
        "auto", "How a word scores from its pieces: sum, max (the piece of largest magnitude), or auto "
        "(sum for a method whose maps are signed, max for one whose maps are not).", check.one_of(RULE_CHOICES),
    )
    forbid: tuple[str, ...] | None = option(
        None, "Exit 3 when one of these words is among a class's top K words or its candidate shortcuts "
        "(given again: more words; a comma itself: in --forbid-file).",
        _words, metavar="WORD,...", annotation="str | list[str] | None", kind=list[str],
    )
    forbid_file: str | None = option(
        None, "More words for --forbid, one a line (# starts a comment).", options.path_or_none, metavar="FILE",
        after=lambda named, path: None if path is None else options.input_exists(named, path),
    )
    bootstrap: int = options.bootstrap("Bootstrap resamples of the inputs for each word's interval: 100 to 100000, or 0 (none).")
    ci: float = options.ci()
    seed: int = options.seed("Seed of the bootstrap resampling.")
    output: str | None = option(None, "Write the JSON summary here (written whole or not at all).", options.path_or_none,
                                flags=("--output", "-o"), metavar="FILE")
    html: str | None = option(
        None, "Write one self-contained HTML page: bars for and against each class, shortcuts with examples.",
        options.path_or_none, metavar="FILE",
    )
    as_json: bool = options.as_json("Print the JSON summary on stdout instead of tables.")
    markdown: bool = option(
        False, "Print the summary as GitHub Markdown tables instead.", check.flag, kind=bool, negatable=False,
        where="command",
    )
    quiet: bool = options.quiet()
    progress: Callable[[str, int, int | None], None] | None = options.progress()

    def check_together(self) -> None:
        if self.as_json and self.markdown:
            raise BadInput(f"{self.named('as_json')} and {self.bare('markdown')} both print on stdout: pick one")
        if self.html == "-" and (self.as_json or self.markdown):
            printing = self.bare("as_json") if self.as_json else self.bare("markdown")
            raise BadInput(f"{self.named('html')} - and {printing} both print on stdout: pick one")
        if self.bootstrap == 0 and (self.forbid is not None or self.forbid_file is not None):
            raise BadInput(
                f"{self.named('bootstrap')} 0 draws no interval, and a candidate shortcut needs its attribution's: "
                f"{self.bare('forbid')} would check the top words alone; keep the resamples"
            )
        if self.forbid_file == "-" and self.attributions == "-":
            raise BadInput(f"{self.named('forbid_file')} - and the records - both read standard input: give one a file")
        if self.output is not None and self.html is not None:
            if self.output == "-" and self.html == "-":
                raise BadInput(f"{self.named('output')} - and {self.bare('html')} -: only one can be standard output")
            if self.output != "-" and os.path.realpath(self.output) == os.path.realpath(self.html):
                raise BadInput(f"{self.named('output')} and {self.bare('html')} both name {self.output}: the page would replace the summary")
