"""The render use case: a records file as terminal blocks (coloured or plain, or each record's top
words) or as one HTML page. Every line is checked before anything is shown or written, except on
a stream shown with ``--compare`` and ``--limit``: it is read as it is shown, and only as far as
the records shown need (a bad line after them is never read)."""

from __future__ import annotations

import dataclasses
import io
import itertools
import os
import sys
from dataclasses import dataclass

from ..errors import BadInput
from ..io.files import atomic_text_output, is_standard_output
from ..records.record import AttributionRecord, RecordFile, bytes_digest, input_digest, record_of_line, text_digest
from ..records.variants import MethodLabels
from ..views.blocks import RenderRun, Waiting, blocks, input_major, write_blocks
from ..views.html_page import html_page
from .options.render import RenderOptions

def render_file(chosen: RenderOptions) -> RenderRun:
    """The records file as one page (``html``), as text written to ``output``, or as blocks."""
    pair = chosen.compare
    source = RecordFile(chosen.attributions, chosen.limit if pair is None else None)
    labels = MethodLabels(source.name)  # variants of a method (an ablation run) by what differs: contrastcat[refs_used=5]
    methods: set[str] = set()
    streamed = chosen.attributions == "-" or not os.path.isfile(chosen.attributions)
    if pair is not None and chosen.limit is not None and streamed:
        # A stream is read once, as the pages are shown, and only until `limit` records are
        # paired: an endless one stops there, and nothing is kept on disk; the records waiting
        # for their pair are bounded, and so are the other methods' names kept for a message.
        records = _first_pairs(source, pair, labels, chosen, placed=False)
    else:
        # A bad line fails before anything is shown; then the records stream (without compare,
        # the first `limit` only are read: an endless standard input stops there).
        # The labels seen only serve --compare's check: without it, none is kept (a file may hold
        # records of any number of methods).
        source.check(None if pair is None else lambda record: methods.add(labels.label(record)))
        _check_pair_found(pair, methods, chosen, source.name)
        if pair is None:
            records = itertools.islice(source.records(), chosen.limit)
        else:
            # Read again (a stream was kept by the check), a record waiting for its pair is held as
            # where its line is: a file written method by method waits whole.
            records = itertools.islice(_first_pairs(source, pair, labels, chosen, placed=True), chosen.limit)
    return _shown(records, labels, chosen, source.name)


def _shown(records, labels: MethodLabels, chosen: RenderOptions, name: str) -> RenderRun:
    """The records as the page (``html``), as text written to ``output``, or as blocks."""
    if chosen.html is not None:
        with atomic_text_output(chosen.html, [chosen.attributions]) as stream:
            stream.write(html_page(records, f"contrastcat: {name}", chosen.shown_words, chosen.rescale, labels.label,
                                   chosen.signed))
        return RenderRun(None if is_standard_output(chosen.html) else chosen.html, iter(()))
    shown = _Shown.of(chosen)
    if chosen.output is not None:
        with atomic_text_output(chosen.output, [chosen.attributions]) as stream:
            write_blocks(blocks(records, labels, shown), stream, shown.color)
        return RenderRun(None if is_standard_output(chosen.output) else chosen.output, iter(()))
    return RenderRun(None, blocks(records, labels, shown))


def render_records(records: list[AttributionRecord], chosen: RenderOptions) -> str:
    """Records in memory as ``render`` prints a file of them (the same options, the same view;
    ``chosen.colored``: with ANSI colours)."""
    labels = MethodLabels("records")
    pair = chosen.compare
    if pair is not None:
        _check_pair_found(pair, {labels.label(record) for record in records}, chosen, "the records")
        labels = MethodLabels("records")  # labelled again as they are shown, in the same order
        records = list(input_major((r for r in records if labels.label(r) in pair), pair, labels.label))
    stream = io.StringIO()
    shown = _Shown.of(chosen)
    write_blocks(blocks(itertools.islice(records, chosen.limit), labels, shown), stream, shown.color)
    return stream.getvalue()


def _check_pair_found(pair, methods, chosen: RenderOptions, name: str, more: bool = False, shown=None) -> None:
    """Both methods of ``pair`` came (``methods``: those seen; ``more``: others not kept; ``shown``:
    the names to list, where not ``methods``)."""
    missing = [method for method in pair or () if method not in methods]
    if missing:
        listed = sorted(methods if shown is None else shown)
        raise BadInput(
            f"{chosen.named('compare')}: no records of method {missing[0]!r} in {name} "
            f"(it has: {', '.join(listed) or 'none'}{', and more' if more else ''})"
        )


# What a stream may hold waiting for the other method's record of an input: so many records, and
# so many bytes of their lines (a record waits as its line, parsed again when paired: parsed, a
# record takes from a few to tens of times its line, depending on what the line holds). A file
# (or a stream kept by a first pass) holds where a waiting line is, not the line: the same bytes
# hold many more of them.
MOST_WAITING = 10_000
MOST_WAITING_BYTES = 300_000_000
# Names of the other methods a stream holds, kept for the message that names what it has.
NAMES_KEPT = 20
# What a waiting line holds besides its text: its number, offset, digests and name, its input's
# entry among those waiting (about 610 bytes on CPython 3.11; counted above that).
_LINE_OVERHEAD = 800


@dataclass(frozen=True, slots=True)
class _Line:
    """A record of the pair as read: its input (a digest of id, text and pair), its method's
    label, its line (number, byte offset where it can be read again, text); and the record
    itself, until it waits for its pair (held then as its text, or only where it is)."""

    input: bytes
    name: str
    number: int
    offset: int | None
    raw: str | None
    record: AttributionRecord | None
    line: bytes | None = None  # where held by its offset: a digest of the line's bytes, to tell it unchanged

    @property
    def size(self) -> int:
        return (0 if self.raw is None else sys.getsizeof(self.raw)) + _LINE_OVERHEAD


def _first_pairs(source: RecordFile, pair: tuple[str, str], labels, chosen: RenderOptions, placed: bool = False):
    """The records ``input_major`` shows, read as they are shown (``chosen.limit`` of them from a
    stream, which stops there). Records of other methods are passed over: their names (a few, for
    the message when a method of the pair never comes) are all that is kept of them. A record
    waiting for its pair is held as its line, or (``placed``: a file, or a stream kept by a first
    pass) as where its line is; more of them than :data:`MOST_WAITING_BYTES` holds (and, as lines,
    than :data:`MOST_WAITING`) is refused: such records, written method by method, are shown only
    whole, or from a file."""
    seen: set[str] = set()
    others: dict[bytes, str] = {}  # a digest of each name kept (a name may be long) -> how it prints
    more = [False]  # another name came once NAMES_KEPT were kept

    def of_the_pair():
        read = source.placed() if placed else ((number, None, raw, record) for number, raw, record in source.lines())
        for number, offset, raw, record in read:
            # A variant's label begins with its method's name and a bracket (contrastcat[refs_used=5]);
            # a method's own name may hold a bracket too.
            method = record.method
            # A label numbered apart from another's reads like it, then #2: x[s=1]#2.
            ours = any(name == method or name.startswith((method + "[", method + "#")) for name in pair)
            name = labels.label(record) if ours else method
            if name in pair:
                name = pair[0] if name == pair[0] else pair[1]  # held: the pair's string, not one per record
                seen.add(name)
                line = None if offset is None else text_digest(raw)
                yield _Line(input_digest(record), name, number, offset, raw, record, line)
            else:
                digest = text_digest(name)
                if digest in others:
                    continue
                if len(others) < NAMES_KEPT:
                    # Cut, it says so: a cut name never reads as a whole one (a pair's name, say).
                    others[digest] = name if len(name) <= 100 else f"{name[:100]}… ({len(name)} characters)"
                else:
                    more[0] = True
        # Before the records left unpaired are shown: a method that never came is an error.
        _check_pair_found(pair, seen, chosen, source.name, more[0], [*seen, *others.values()])

    def too_many() -> BadInput:
        if placed:
            return BadInput(
                f"{chosen.named('compare')}: more than {MOST_WAITING_BYTES // _LINE_OVERHEAD} records in {source.name} "
                "come before their input's record of the other method; write each input's records together "
                f"(explain writes them so), or render them without {chosen.bare('compare')}"
            )
        # A method of the pair not seen at all may be late (a stream written method by method) or
        # misnamed: say what came instead.
        missing = [name for name in pair if name not in seen]
        listed = ", ".join(sorted([*seen, *others.values()])) + (", and more" if more[0] else "")
        none_yet = f" (none of method {missing[0]!r} yet; the stream has: {listed})" if missing else ""
        return BadInput(
            f"{chosen.named('compare')} with {chosen.bare('limit')}: more than {MOST_WAITING} records (or "
            f"{MOST_WAITING_BYTES // 10**6} MB held) came before their input's record of the other method{none_yet}; "
            f"a stream written method by method is shown whole: drop {chosen.bare('limit')}, or write the records to "
            "a file first"
        )

    def held(line: _Line) -> _Line:
        return dataclasses.replace(line, record=None, raw=None if placed else line.raw)

    def again(line: _Line) -> AttributionRecord:
        if not placed:
            return record_of_line(line.number, line.raw, source.name)
        now = source.line_at(line.number, line.offset)
        if bytes_digest(now) != line.line:  # edited, moved, cut short: other bytes than those read
            raise BadInput(f"{source.name}:{line.number}: changed while it was read (the file is not as it was)")
        return record_of_line(line.number, now.decode("utf-8"), source.name)

    most = MOST_WAITING_BYTES // _LINE_OVERHEAD if placed else MOST_WAITING
    bound = Waiting(most, MOST_WAITING_BYTES, too_many, lambda line: line.size, held)
    shown = input_major(of_the_pair(), pair, lambda line: line.name, bound, lambda line: line.input)
    if not placed:
        shown = itertools.islice(shown, chosen.limit)
    for line in shown:
        yield line.record if line.record is not None else again(line)


@dataclass(frozen=True)
class _Shown:
    threshold: float
    words: bool
    rescale: bool
    top: int | None
    color: bool
    signed: bool

    @classmethod
    def of(cls, chosen: RenderOptions) -> _Shown:
        return cls(chosen.threshold, chosen.shown_words, chosen.rescale, chosen.top, chosen.colored, chosen.signed)
