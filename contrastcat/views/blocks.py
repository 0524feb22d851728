"""Records as terminal blocks (coloured or plain, or each record's top words), as render shows them."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol, TextIO

from rich.console import Console
from rich.text import Text

from ..records.variants import MethodLabels
from ..records.spans import is_signed
from .terminal import header, legend, render_plain, render_rich, top_words


class Shown(Protocol):
    """How records are shown on a terminal (the render command's options)."""

    threshold: float
    words: bool
    rescale: bool
    top: int | None
    color: bool
    signed: bool


@dataclass(frozen=True)
class Block:
    """One record for the terminal: its title line and its body (Rich ``Text`` when coloured;
    with ``top``, the top words, meant to follow the title on one line); or, coloured, the
    ``legend`` of a scale (its body, no title), before the first record shown on it."""

    title: str
    body: str | Text
    top: bool = False
    legend: bool = False


@dataclass
class RenderRun:
    wrote: str | None  # the file written (the HTML page, or the text with ``output``); None for standard output
    blocks: Iterator[Block]  # terminal blocks, streamed: one pass (list() them to keep); none when a file was written


class _Console(Console):
    def on_broken_pipe(self) -> None:
        # Rich would exit 1 on its own; the caller decides what a closed pipe downstream means.
        self.quiet = True
        raise BrokenPipeError


def write_blocks(blocks: Iterable[Block], stream: TextIO, color: bool) -> None:
    """The blocks as ``contrastcat render`` prints them: a blank line between records, a top-words
    block on one line; with ``color``, Rich's ANSI styles, else the plain ``[word 0.87]`` marks."""
    console = _Console(file=stream, force_terminal=color, no_color=not color, soft_wrap=True, highlight=False)
    if color and console.color_system is None:  # asked for (TERM=dumb says none): the 16 standard colours
        console = _Console(file=stream, force_terminal=True, soft_wrap=True, highlight=False, color_system="standard")
    after_legend = False
    for index, block in enumerate(blocks):
        if block.legend:  # a blank line before it, none between it and its record
            if index:
                stream.write("\n")
            console.print(block.body)
            after_legend = True
            continue
        if block.top:
            stream.write(f"{block.title}: {block.body}\n")
            continue
        if index and not after_legend:
            stream.write("\n")
        after_legend = False
        if color:
            console.print(Text(block.title, style="bold"))  # Text: an id like "a[/]" is not markup
            console.print(block.body)
        else:
            stream.write(f"{block.title}\n{block.body}\n")


def blocks(records, labels: MethodLabels, job: Shown) -> Iterator[Block]:
    """Each record as a terminal block, as ``job`` says to show it; coloured, each scale's legend
    before the first record shaded on it (the colours alone would not say which is which)."""
    legends_given: set[bool] = set()
    for record in records:
        signed = job.signed and is_signed(record)
        if job.color and job.top is None and signed not in legends_given:
            legends_given.add(signed)
            yield Block("", legend(signed), legend=True)
        # A variant shows its label (contrastcat[refs_used=5]) where its method name would be ambiguous.
        # Every string from the record comes out escaped (contrastcat.records.spans.visible): no control or
        # bidi character reaches the terminal as itself.
        title = header(record, labels.label(record))
        if job.top is not None:
            yield Block(title, top_words(record, job.top, job.words, job.rescale, job.signed), top=True)
        elif job.color:
            yield Block(title, render_rich(record, job.threshold, job.words, job.rescale, job.signed))
        else:
            yield Block(title, render_plain(record, job.threshold, job.words, job.rescale, job.signed))


@dataclass(frozen=True)
class Waiting:
    """A bound on what :func:`input_major` holds for its pair (a stream's): more than ``records``
    items, or than ``size`` bytes in all (``size_of`` each), raise ``error()``. An item left
    waiting is held as ``hold(item)`` (what it can be made again from: a record's line)."""

    records: int
    size: int
    error: Callable[[], Exception]
    size_of: Callable[[Any], int]
    hold: Callable[[Any], Any]


def _input_of(record) -> tuple:
    return repr(record.id), record.text, record.pair


def input_major(records, pair, label, bound: Waiting | None = None, input_of: Callable[[Any], Any] = _input_of):
    """Each input's record of A, then of B, in the order the inputs come (records of one input are
    adjacent when explain wrote them; otherwise an input's A waits for its B). An input's records
    of one method are paired in the order they come: a repeated record is shown too, never
    dropped (after the pairs, with the inputs only one of the two explained). ``input_of`` tells
    an item's input; with a ``bound``, items left waiting are held as ``bound.hold`` makes them."""
    waiting: dict = {}
    held = size = 0
    for record in records:
        key = input_of(record)
        found = waiting.setdefault(key, {name: deque() for name in pair})
        mine = found[label(record)]
        mine.append(record)
        if all(found[name] for name in pair):
            # At most one list of an input holds items between two records: this record's was
            # empty, so it is paired at once with the other's first, which was held.
            matched = [found[name].popleft() for name in pair]
            if bound is not None:
                held, size = held - 1, size - sum(bound.size_of(item) for item in matched if item is not record)
            if not any(found.values()):
                del waiting[key]
            yield from matched
        elif bound is not None:
            mine[-1] = bound.hold(record)
            held, size = held + 1, size + bound.size_of(mine[-1])
            if held > bound.records or size > bound.size:
                raise bound.error()
    for found in waiting.values():  # inputs only one of the two explained
        for name in pair:
            yield from found[name]
