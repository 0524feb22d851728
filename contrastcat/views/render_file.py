"""The render use case: a records file as terminal blocks (coloured or plain, or each record's top
words) or as one HTML page. Every line is checked before anything is shown or written."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TextIO

from rich.console import Console
from rich.text import Text

from ..errors import BadInput
from ..evaluation.gates import parse_pair
from ..io.files import atomic_text_output, is_standard_output
from ..records.record import RecordFile
from ..records.variants import MethodLabels
from .html_page import html_page
from .terminal import header, render_plain, render_rich, top_words


@dataclass(frozen=True)
class RenderJob:
    attributions: str  # records (JSONL); "-": standard input
    html: str | None = None  # write one page here ("-": standard output) instead of terminal blocks
    threshold: float = 0.0
    limit: int | None = None
    words: bool = False
    rescale: bool = True
    top: int | None = None
    compare: str | None = None  # "A,B"
    color: bool = False
    output: str | None = None  # write the terminal blocks here as text ("-": standard output) instead of returning them


@dataclass(frozen=True)
class Block:
    """One record for the terminal: its title line and its body (Rich ``Text`` when coloured;
    with ``top``, the top words, meant to follow the title on one line)."""

    title: str
    body: str | Text
    top: bool = False


@dataclass
class RenderRun:
    wrote: str | None  # the file written (the HTML page, or the text with ``output``); None for standard output
    blocks: Iterator[Block]  # terminal blocks, streamed: one pass (list() them to keep); none when a file was written


def render_file(job: RenderJob) -> RenderRun:
    pair = parse_pair("render_file: compare", job.compare)
    if job.html is not None and (job.top is not None or job.threshold > 0.0):
        raise BadInput(
            "render_file: html shades every token and shows each score on hover: `top` and `threshold` are for the terminal"
        )
    if job.html is not None and job.output is not None:
        raise BadInput("render_file: html and output: give `html` (the page) or `output` (the text), not both")
    source = RecordFile(job.attributions)
    methods: set[str] = set()
    labels = MethodLabels()  # variants of a method (an ablation run) by what differs: contrastcat[refs_used=5]
    # A bad line fails before anything is shown; then the records stream.
    source.check(lambda record: methods.add(labels.label(record)))
    missing = [name for name in pair or () if name not in methods]
    if missing:
        raise BadInput(
            f"render_file: compare: no records of method {missing[0]!r} in {source.name} "
            f"(it has: {', '.join(sorted(methods))})"
        )
    records = source.records()
    if pair is not None:
        records = _input_major((r for r in records if labels.label(r) in pair), pair, labels.label)
    records = itertools.islice(records, job.limit)
    if job.html is not None:
        with atomic_text_output(job.html, [job.attributions]) as stream:
            stream.write(html_page(records, f"contrastcat: {source.name}", job.words, job.rescale, labels.label))
        return RenderRun(None if is_standard_output(job.html) else job.html, iter(()))
    if job.output is not None:
        with atomic_text_output(job.output, [job.attributions]) as stream:
            write_blocks(_blocks(records, labels, job), stream, job.color)
        return RenderRun(None if is_standard_output(job.output) else job.output, iter(()))
    return RenderRun(None, _blocks(records, labels, job))


class _Console(Console):
    def on_broken_pipe(self) -> None:
        # Rich would exit 1 on its own; the caller decides what a closed pipe downstream means.
        self.quiet = True
        raise BrokenPipeError


def write_blocks(blocks: Iterable[Block], stream: TextIO, color: bool) -> None:
    """The blocks as ``contrastcat render`` prints them: a blank line between records, a top-words
    block on one line; with ``color``, Rich's ANSI styles, else the plain ``[word 0.87]`` marks."""
    console = _Console(file=stream, force_terminal=color, no_color=not color, soft_wrap=True, highlight=False)
    for index, block in enumerate(blocks):
        if block.top:
            stream.write(f"{block.title}: {block.body}\n")
            continue
        if index:
            stream.write("\n")
        if color:
            console.print(Text(block.title, style="bold"))  # Text: an id like "a[/]" is not markup
            console.print(block.body)
        else:
            stream.write(f"{block.title}\n{block.body}\n")


def _blocks(records, labels: MethodLabels, job: RenderJob) -> Iterator[Block]:
    for record in records:
        # A variant shows its label (contrastcat[refs_used=5]) where its method name would be ambiguous.
        # Every string from the record comes out escaped (contrastcat.records.spans.visible): no control or
        # bidi character reaches the terminal as itself.
        title = header(record, labels.label(record))
        if job.top is not None:
            yield Block(title, top_words(record, job.top, job.words, job.rescale), top=True)
        elif job.color:
            yield Block(title, render_rich(record, job.threshold, job.words, job.rescale))
        else:
            yield Block(title, render_plain(record, job.threshold, job.words, job.rescale))


def _input_major(records, pair, label):
    """Each input's record of A, then of B, in the order the inputs come (records of one input are adjacent
    when explain wrote them; otherwise an input's A waits for its B)."""
    waiting: dict = {}
    for record in records:
        key = (repr(record.id), record.text, record.pair)
        found = waiting.setdefault(key, {})
        found[label(record)] = record
        if len(found) == 2:
            del waiting[key]
            yield from (found[name] for name in pair)
    for found in waiting.values():  # inputs only one of the two explained
        yield from found.values()
