"""One explain run split over processes, and its parts joined again.

Shard ``I/N`` explains the windows of inputs (``ExplainSettings.window_inputs``
each, in input order) whose number w has ``w % N == I``. A window is batched
the same way whichever process explains it, so the joined parts are the
records a single process writes, byte for byte (on the same kind of device,
with the same number of threads per process: on a CPU the last bits of a
backward pass depend on the thread count).

A part file is JSON Lines: a header line (which shard, of which run), the
records, and an end line (how many inputs the whole run had, and a digest
of the input). :func:`merge_parts` checks that the parts are every shard of
one run, complete, before it writes anything. An input's records are one per
method, or under ``--target all-active`` that for each label its records'
probabilities name: merge counts them from the records themselves, which the
part's digest vouches for.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import BinaryIO

from ..attribution.targets import ALL_ACTIVE, EACH_ACTIVE
from ..errors import BadInput, RunFailed
from ..io import jsonl
from ..io.files import STDIO, atomic_text_output
from ..io.lines import RECORD_LINES, Overlong, line_limit, open_input, read_line, within_limit
from ..records.inputs import InputRow
from ..records.record import AttributionRecord, check_record

PART = "contrastcat-part"
PART_END = "contrastcat-part-end"
PART_VERSION = 2  # 2: the end line holds a digest of the header
MAX_SHARDS = 100_000  # more parts than any cluster runs; a bigger N is a typo
SHORTEST_RECORD = 64  # bytes: fewer than any record line explain writes (its fields' names alone are more)
MAX_SHARD_DIGITS = 12  # digits of I or N, leading zeros included: more is not a shard number


@dataclass(frozen=True)
class Shard:
    index: int
    count: int

    @classmethod
    def parse(cls, spec: str, named: str = "`shard`") -> Shard:
        """``I/N``: shard I (from 0) of N; ``named``: the option as the caller spells it."""
        index, slash, count = spec.partition("/")
        if not slash or not all(part.isascii() and part.isdigit() for part in (index, count)):
            raise BadInput(f"{named} must be I/N (shard I of N, I from 0, ASCII digits), got {_short(spec)}")
        if any(len(part) > MAX_SHARD_DIGITS for part in (index, count)):  # before int(), which has a digit limit
            raise BadInput(f"{named} {_short(spec)}: N must be 1 to {MAX_SHARDS} and I 0 to N-1")
        shard = cls(int(index), int(count))
        if not 1 <= shard.count <= MAX_SHARDS or shard.index >= shard.count:
            raise BadInput(f"{named} {spec}: N must be 1 to {MAX_SHARDS} and I 0 to N-1")
        return shard

    def owns(self, position: int, window: int) -> bool:
        return (position // window) % self.count == self.index


def _short(text: str) -> str:
    return repr(text) if len(text) <= 40 else repr(text[:37] + "...")


class Tally:
    """Counts the rows of the whole run and digests them, as a shard reads past the others' rows."""

    def __init__(self) -> None:
        self.rows = 0
        self._digest = hashlib.sha256()

    def add(self, row: InputRow) -> None:
        self.rows += 1
        # The pair and the evidence only where given: a digest of rows without them is as before.
        optional = [*([row.pair] if row.pair is not None else []),
                    *([["evidence", row.evidence]] if row.evidence is not None else [])]
        self._digest.update(json.dumps([row.line, row.id, row.text, row.label, *optional], ensure_ascii=False).encode())

    @property
    def digest(self) -> str:
        return "sha256:" + self._digest.hexdigest()[:32]


def shard_rows(rows: Iterable[InputRow], shard: Shard, window: int, tally: Tally) -> Iterator[InputRow]:
    """The rows of ``shard``'s windows; every row is counted in ``tally``."""
    for position, row in enumerate(rows):
        tally.add(row)
        if shard.owns(position, window):
            yield row


@dataclass(frozen=True)
class PartHeader:
    """What a part file says of itself: its shard, the run (``run_identity``), the records per
    input and the window of inputs the shards are dealt by."""

    shard: Shard
    run: dict
    per_input: int
    window: int

    def as_dict(self) -> dict:
        return {"format": PART, "version": PART_VERSION, "shard": self.shard.index, "shards": self.shard.count,
                "window": self.window, "per_input": self.per_input, "run": self.run}


def write_part(
    path: str, part: PartHeader, inputs_records: Iterable[list[AttributionRecord]], tally: Tally,
    inputs: Sequence[str | None] = (),
) -> int:
    """Write one shard's part file (atomically) from each of its inputs' records; returns the
    records written."""
    header = part.as_dict()
    count = 0
    digest = hashlib.sha256()  # of the record lines: merge refuses a part edited or reordered since
    header_line = jsonl.dumps(header) + "\n"
    with atomic_text_output(path, inputs) as stream:
        stream.write(header_line)
        for records in inputs_records:
            for record in records:
                line = record.to_json() + "\n"
                digest.update(line.encode("utf-8"))
                stream.write(line)
                count += 1
        # The header too: which shard a part is and how its inputs are dealt decide where its
        # records go, and an edited header would interleave them wrongly without a digest of it.
        stream.write(jsonl.dumps({"format": PART_END, "inputs": tally.rows, "input_digest": tally.digest,
                                  "records": count, "records_digest": "sha256:" + digest.hexdigest(),
                                  "header_digest": _header_digest(header_line.encode("utf-8"))}) + "\n")
    return count


@dataclass
class _Part:
    path: str
    handle: BinaryIO
    header: dict
    end: dict
    line: int = 1  # lines read so far (the header)
    windows: list[int] | None = None  # records per window of its inputs, once scanned
    window_digests: list[bytes] | None = None  # of each window's record lines, once scanned
    line_inputs: int = 0  # inputs its records are of, once scanned (all-active)

    @property
    def all_active(self) -> bool:
        """Its inputs' records are one per method and label the input's probabilities name."""
        return isinstance(self.header.get("run"), dict) and self.header["run"].get("target") == ALL_ACTIVE

    def window_inputs(self, shards: int, total: int) -> list[int]:
        """How many inputs each window this part explains has, in order."""
        window, index = self.header["window"], self.header["shard"]
        return [min(window, total - start) for number, start in enumerate(range(0, total, window)) if number % shards == index]


def merge_parts(paths: Sequence[str], output: str) -> int:
    """Join the part files of one sharded run into ``output`` in input order; returns the records
    written. Nothing is written unless the parts are all the shards of one run, each complete."""
    if not paths:
        raise BadInput("merge: no part files given")
    if STDIO in paths:
        raise BadInput("merge: parts: a part cannot come from standard input (-): name the part files")
    parts: list[_Part] = []
    try:
        for path in paths:
            parts.append(_open_part(path))
        ordered = _check_parts(parts)
        total = ordered[0].end["inputs"]
        for part in ordered:
            _scan(part)  # every line read once before any is written
            _check_windows(part, len(ordered), total)
        window = ordered[0].header["window"]
        counts = {id(part): zip(part.windows, part.window_digests) for part in ordered}
        written = 0
        limit = line_limit(RECORD_LINES)
        with atomic_text_output(output, list(paths)) as stream:
            # The scan has checked every line, and each part holds exactly its windows' records
            # (_check_parts): copying needs no second parse. Each window is read whole and hashed
            # before any of it is written: a part changed since the scan (written over by another
            # run) fails before its changed records reach the output, standard output included
            # (which cannot be taken back: what it got before is whole windows, each as scanned).
            for number, start in enumerate(range(0, total, window)):
                part = ordered[number % len(ordered)]
                count, expected = next(counts[id(part)])
                lines = []
                digest = hashlib.sha256()
                for _ in range(count):
                    raw = read_line(part.handle, limit)
                    if isinstance(raw, Overlong) or not raw.endswith(b"\n"):
                        raise BadInput(f"{part.path}: changed while it was read (a record line is cut or grown)")
                    digest.update(raw)
                    lines.append(raw)
                if digest.digest() != expected:
                    raise BadInput(f"{part.path}: changed while it was read (a window of its records differs now)")
                stream.write(b"".join(lines).decode("utf-8"))  # the bytes the scan parsed
                written += count
        return written
    finally:
        for part in parts:
            part.handle.close()


def _open_part(path: str) -> _Part:
    handle = open_input(path)
    try:
        if not handle.seekable():  # a pipe, bash's <(...): read once, into a file that can be read again
            handle = _spooled(path, handle)
        first = within_limit(read_line(handle, line_limit(RECORD_LINES)), f"{path}:1")
        if not first:
            raise BadInput(f"{path}: empty: not a contrastcat part file (explain writes them when run in shards)")
        header = _parse(path, 1, first)
        if header.get("format") != PART:
            raise BadInput(f"{path}:1: not a contrastcat part file (explain writes them when run in shards)")
        if header.get("version") != PART_VERSION:
            raise BadInput(f"{path}:1: part format version {header.get('version')!r} is not {PART_VERSION}")
        for key, least in (("shard", 0), ("shards", 1), ("window", 1), ("per_input", 1)):
            value = header.get(key)
            if not isinstance(value, int) or isinstance(value, bool) or value < least:
                raise BadInput(f"{path}:1: the header's {key} must be an integer of at least {least}, got {value!r}")
        if header["shards"] > MAX_SHARDS:
            raise BadInput(f"{path}:1: {header['shards']} shards: at most {MAX_SHARDS}")
        if header["shard"] >= header["shards"]:
            raise BadInput(f"{path}:1: shard {header['shard']} of {header['shards']} does not exist")
        handle.seek(0, 2)
        size = handle.tell()
        handle.seek(max(0, size - 65536))
        tail = handle.read().rstrip(b"\n").rsplit(b"\n", 1)[-1]
        try:
            end = _parse(path, None, tail)
        except BadInput:
            end = {}
        if end.get("format") != PART_END:
            _lines_after_the_end(path, handle)  # the usual cause; else it has none
            raise BadInput(f"{path}: the part has no end line: it is incomplete (its explain run did not finish)")
        for key in ("inputs", "records"):
            value = end.get(key)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise BadInput(f"{path}: last line: {key} must be a count, got {value!r}")
        if end.get("header_digest") != _header_digest(first):
            raise BadInput(f"{path}:1: the header was changed since explain wrote it (its digest differs)")
        run = header.get("run")
        if not isinstance(run, dict) or header["window"] != _product(run.get("batch_size"), run.get("window")):
            raise BadInput(f"{path}:1: the header's window is not its run's batch size times its window")
        # Its counts are read before its records are: a record line is far longer than this, so a
        # count the file cannot hold is refused before anything is counted up to it.
        if end["records"] > size // SHORTEST_RECORD:
            raise BadInput(f"{path}: last line: {end['records']} records cannot fit in its {size} bytes")
        handle.seek(0)
        handle.readline()
    except BaseException:
        handle.close()
        raise
    return _Part(path, handle, header, end)


def _lines_after_the_end(path: str, handle: BinaryIO) -> None:
    """Where a part's last line is not its end line, whether it has one with lines after it
    (something was appended): said at the first such line."""
    handle.seek(0)
    limit, number = line_limit(RECORD_LINES), 0
    while raw := read_line(handle, limit):
        number += 1
        if isinstance(raw, Overlong) or not raw.startswith(b'{"format": "' + PART_END.encode() + b'"'):
            continue
        if handle.read(1):
            raise BadInput(f"{path}:{number + 1}: a line after the end line (a part ends there)")


def _product(a, b) -> int | None:
    whole = all(isinstance(v, int) and not isinstance(v, bool) for v in (a, b))
    return a * b if whole else None


def _header_digest(raw: bytes) -> str:
    return "sha256:" + hashlib.sha256(raw.rstrip(b"\n")).hexdigest()


def _spooled(path: str, stream: BinaryIO) -> BinaryIO:
    """What ``stream`` holds, copied into an anonymous temporary file; ``stream`` is closed."""
    spool = tempfile.TemporaryFile()
    try:
        with stream:
            shutil.copyfileobj(stream, spool)
        spool.seek(0)
    except OSError as error:
        spool.close()
        raise RunFailed(f"{path}: cannot read it into a temporary file ({error.strerror or error})") from None
    except BaseException:
        spool.close()
        raise
    return spool


def _parse(path: str, line: int | None, raw: bytes) -> dict:
    where = f"{path}:{line}" if line is not None else f"{path}: last line"
    try:
        value = jsonl.parse(raw.decode("utf-8").removesuffix("\n"))
    except (UnicodeDecodeError, jsonl.NotStrictJSON) as error:
        raise BadInput(f"{where}: not a part file line ({error})") from None
    if not isinstance(value, dict):
        raise BadInput(f"{where}: not a part file line (expected a JSON object)")
    return value


def _check_parts(parts: Sequence[_Part]) -> list[_Part]:
    """The parts in shard order, after checking they are one whole run."""
    first = parts[0]
    count = first.header.get("shards")
    for part in parts:
        for key in ("shards", "window", "per_input", "run"):
            if part.header.get(key) != first.header.get(key):
                raise BadInput(f"{part.path}: from another run than {first.path} ({_difference(key, part, first)})")
        for key in ("inputs", "input_digest"):
            if part.end.get(key) != first.end.get(key):
                raise BadInput(f"{part.path}: explained other inputs than {first.path} (its {key} differs)")
    by_index = {}
    for part in parts:
        index = part.header.get("shard")
        if index in by_index:
            raise BadInput(f"{part.path}: shard {index}/{count} is given twice (also {by_index[index].path})")
        by_index[index] = part
    missing = next((i for i in range(count) if i not in by_index), None)
    if missing is not None:
        raise BadInput(f"merge: shard {missing}/{count} is missing ({len(parts)} of {count} parts given)")
    ordered = [by_index[i] for i in range(count)]
    total = first.end["inputs"]
    # Each input has a record per method at least: an end line counting more inputs than the
    # parts' records can hold is refused before anything is counted by it.
    held = sum(part.end["records"] for part in ordered) // first.header["per_input"]
    if total > held:
        raise BadInput(f"{first.path}: last line: {total} inputs, but the parts' records hold at most {held}")
    for part in ordered:
        if part.all_active:
            continue  # how many records its inputs have is counted as it is scanned
        expected = sum(part.window_inputs(count, total)) * part.header["per_input"]
        if part.end.get("records") != expected:
            raise BadInput(f"{part.path}: holds {part.end.get('records')} records, its shard of the run has {expected}")
    return ordered


def _check_windows(part: _Part, shards: int, total: int) -> None:
    """After its scan: the part holds the records of as many inputs as its shard of the run has
    (its windows are those inputs taken a window at a time, so they match too)."""
    inputs = part.window_inputs(shards, total)
    if part.line_inputs != sum(inputs):
        raise BadInput(
            f"{part.path}: holds the records of {part.line_inputs} input(s), its shard of the run has {sum(inputs)}"
        )


class _Absent:
    """A run key one part has and the other does not: said so, not as a null."""

    def __repr__(self) -> str:
        return "absent"


def _difference(key: str, part: _Part, first: _Part) -> str:
    """Which of the header's values differ, and how, where that is short to say."""
    mine, theirs = part.header.get(key), first.header.get(key)
    if key == "run" and isinstance(mine, dict) and isinstance(theirs, dict):
        inner = next(
            name for name in sorted({*mine, *theirs})
            if name not in mine or name not in theirs or mine[name] != theirs[name]
        )
        absent = _Absent()
        key, mine, theirs = f"its run differs in {inner}", mine.get(inner, absent), theirs.get(inner, absent)
    else:
        key = f"its {key} differs"
    shown = [repr(value) for value in (mine, theirs)]
    if any(isinstance(value, (list, dict)) for value in (mine, theirs)) or max(map(len, shown)) > 80:
        return key
    return f"{key}: {shown[0]} here, {shown[1]} there"


def _scan(part: _Part) -> None:
    """Every line of a part is a JSON object, records then exactly one end line; rewinds after.
    Cuts its records into its inputs (one record per method, under all-active per method and
    label its probabilities name), each record checked to be the one explain writes at its place
    (its input's, its method, its label), and the inputs into windows, each window digested."""
    records = 0
    digest = hashlib.sha256()
    limit = line_limit(RECORD_LINES)
    number = 1
    window, per_input = part.header["window"], part.header["per_input"]
    methods = part.header["run"].get("methods")
    windows: list[int] = []
    digests: list = []
    inputs = offset = size = 0  # inputs begun; where the current one's records are, and how many
    first: dict = {}
    labels: list[int] = []
    while raw := within_limit(read_line(part.handle, limit), f"{part.path}:{number + 1}"):
        number += 1
        part.line = number
        value = _read_line(part, raw)
        if value.get("format") == PART_END:
            if records != part.end["records"]:
                raise BadInput(f"{part.path}:{number}: the end line is not where its record count puts it")
            if part.handle.read(1):
                raise BadInput(f"{part.path}:{number + 1}: a line after the end line (a part ends there)")
            break
        where = f"{part.path}:{number}"
        check_record(value, where)
        digest.update(raw)
        records += 1
        if offset == size:  # an input's first record
            first, offset = value, 0
            labels = _labels(value, where) if part.all_active else []
            size = per_input * (len(labels) if part.all_active else 1)
            if inputs % window == 0:
                windows.append(0)
                digests.append(hashlib.sha256())
            inputs += 1
        _check_place(value, _Place(first, offset, labels, methods, per_input, part.all_active), where)
        offset += 1
        windows[-1] += 1
        digests[-1].update(raw)
    if part.end.get("records_digest") != "sha256:" + digest.hexdigest():
        raise BadInput(f"{part.path}: its records were changed since explain wrote them (their digest differs)")
    if offset != size:
        raise BadInput(f"{part.path}: its last input's records end early ({size - offset} of them missing)")
    part.windows, part.window_digests, part.line_inputs = windows, [d.digest() for d in digests], inputs
    part.handle.seek(0)
    part.handle.readline()
    part.line = 1


@dataclass(frozen=True)
class _Place:
    """Where explain writes a record among its input's: ``offset`` records in, after ``first``;
    each input holds ``per_input`` records per label (``methods``, in order), and under
    all-active one such run per label of ``labels``."""

    first: dict
    offset: int
    labels: list[int]
    methods: object
    per_input: int
    all_active: bool


def _check_place(record: dict, place: _Place, where: str) -> None:
    """``record`` is the one explain writes at ``place``: the same input as its first record (and
    under all-active the same probabilities), the method in the run's order, and under all-active
    the label in label order."""
    first, offset, labels, methods = place.first, place.offset, place.labels, place.methods
    per_input, all_active = place.per_input, place.all_active
    same = ("id", "text", "pair", "token_ids") + (("probs", "predicted") if all_active else ())
    differs = next((key for key in same if jsonl.dumps(record.get(key)) != jsonl.dumps(first.get(key))), None)
    if differs is None and isinstance(methods, list) and len(methods) == per_input:
        if record.get("method") != methods[offset % per_input]:
            differs = "method"
    if differs is None and all_active and record.get("target") != labels[offset // per_input]:
        differs = "target"
    if differs is not None:
        shown = (
            f"its {differs} is not that of its input's first record" if differs not in ("method", "target")
            else f"not the {'method' if differs == 'method' else 'label'} explain writes at this place"
        )
        raise BadInput(f"{where}: not the record explain writes here ({shown})")


def _labels(record: dict, where: str) -> list[int]:
    """The labels an all-active run explained for the input whose first record this is."""
    labels = EACH_ACTIVE.written_labels(record)
    if labels is None:
        raise BadInput(f"{where}: not the first record of an input of an all-active run (no probabilities per label)")
    return labels


def _read_line(part: _Part, raw: bytes) -> dict:
    if not raw.endswith(b"\n"):
        raise BadInput(f"{part.path}:{part.line}: the part ends early")
    return _parse(part.path, part.line, raw)
