"""Reading a file or standard input line by line, once or twice.

Inputs are streamed so memory does not grow with their size. A run that
must not write anything when a later line is bad reads its input twice: once
to check every line, then to do the work. A file is simply opened again;
standard input cannot be, so the checking pass copies it to an anonymous
temporary file (gone when the process ends) that the second pass reads.

A line is read only up to a limit (``LINE_LIMIT_ENV``, in MiB): the tool keeps a
text whole in its record, so memory grows with the longest line, and an
unbounded line (a 100 MB text, a file with no line ends) would take the
machine's memory before any check could refuse it. A longer line is passed on
as :class:`Overlong`, read past in small pieces, never held.
"""

from __future__ import annotations

import os
import re
import stat
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO, TypeVar

from ..errors import BadInput
from .files import STDIO

BOM = b"\xef\xbb\xbf"
LINE_LIMIT_ENV = "CONTRASTCAT_MAX_LINE_MIB"
DEFAULT_LINE_MIB = 16  # an input line; a record line may be RECORD_LINES times longer
# A record carries its text (and pair) JSON-escaped, which can take up to six bytes for one
# (a control character as \u0001), beside its tokens, offsets and scores.
RECORD_LINES = 8
# Names of standard input that a closed one (<&-) leaves pointing nowhere.
_STANDARD_INPUT_NAMES = ("/dev/stdin", "/dev/fd/0", "/proc/self/fd/0")
_DRAIN = 1 << 20  # the piece in which an overlong line is read past
_Line = TypeVar("_Line", str, bytes)


def line_limit(times: int = 1) -> int:
    """The longest line, in bytes, a reader takes: ``$CONTRASTCAT_MAX_LINE_MIB`` (default 16)
    MiB, ``times`` over."""
    given = os.environ.get(LINE_LIMIT_ENV, "")
    if given == "":
        mib = DEFAULT_LINE_MIB
    elif given.isascii() and given.isdigit() and 0 < len(given) < 7 and int(given) > 0:
        mib = int(given)
    else:
        raise BadInput(f"${LINE_LIMIT_ENV} must be a whole number of MiB from 1 to 999999, got {given!r}")
    return mib * times << 20


@dataclass(frozen=True)
class Overlong:
    """A line longer than the reader's limit, read past without being held."""

    limit: int  # bytes

    @property
    def problem(self) -> str:
        base = line_limit()
        times = f" ({self.limit // base} × ${LINE_LIMIT_ENV})" if self.limit > base else ""
        return f"a line longer than {self.limit >> 20} MiB{times}; {self.advice}"

    @property
    def advice(self) -> str:
        return (f"lines are limited because each text is kept whole in its record (set ${LINE_LIMIT_ENV}, "
                f"now {line_limit() >> 20} MiB, higher to read it)")


class LineSource:
    """The lines of ``path`` (``-``: standard input) as (1-based number, text without its end)."""

    def __init__(self, path: str, limit: int | None = None) -> None:
        self.path = path
        self.limit = line_limit() if limit is None else limit
        self.name = "<stdin>" if path == STDIO else path
        self._copy: BinaryIO | None = None  # standard input, kept by a first pass for a second
        self._consumed = False
        self._again: BinaryIO | None = None  # a regular file opened again, for lines read at their place

    def lines(self, keep: bool = False, errors: str = "strict") -> Iterator[tuple[int, str | Overlong]]:
        """(number, text with its end) of every line, a leading BOM dropped (it would hide the
        first CSV column); a line longer than the limit is an :class:`Overlong`. The bytes are
        UTF-8, or (``errors="surrogateescape"``) become lone surrogates where they are not, for
        the caller to refuse with its own location. ``keep``: an input that can be read only
        once (standard input, a pipe, a FIFO, ``<(…)``) is kept so that it can be read again."""
        for number, line, _ in self.sized_lines(keep, errors):
            yield number, line

    def sized_lines(self, keep: bool = False, errors: str = "strict") -> Iterator[tuple[int, str | Overlong, int]]:
        """As :meth:`lines`, each line with its size in bytes, its end included (an
        :class:`Overlong`'s: 0). Where a limit is in bytes, counting the decoded text would
        miscount (an emoji is one character, four bytes), and encoding it again only to count
        would copy the line: the size is the one read."""
        if self._copy is not None:
            self._copy.seek(0)
            yield from self._numbered(self._copy, errors)
            return
        if self.path != STDIO and self._regular():
            handle = self._open_file()
            with handle:
                yield from self._numbered(handle, errors)
            return
        if self._consumed:
            raise RuntimeError(f"{self.name} was read once without keeping it")  # a bug, not bad input
        self._consumed = True
        if self.path == STDIO and sys.stdin is None:  # the shell closed it (<&-)
            raise BadInput(f"{self.name}: standard input is closed: give a file, or pipe the lines in")
        copy = tempfile.TemporaryFile() if keep else None
        handle = sys.stdin.buffer if self.path == STDIO else self._open_file()
        try:
            yield from self._numbered(handle, errors, copy)
        finally:
            if self.path != STDIO:  # standard input stays open (and is None where the shell closed it)
                handle.close()
            if copy is not None:  # also when a pass stops early (a limit): the next reads what it read
                copy.flush()
                self._copy = copy

    def placed_lines(self) -> Iterator[tuple[int, str, int]]:
        """(number, text with its end, byte offset) of every line of an input that can be read
        again (a regular file, or one kept by a first pass with ``keep``): a reader that would hold
        many lines may hold where they are instead, and read each again with :meth:`line_at`."""
        offset = 0
        if self._copy is None:  # the copy holds the lines as read, a BOM dropped; the file does not
            with self._open_file() as handle:
                offset = len(BOM) if handle.read(len(BOM)) == BOM else 0
        for number, line, size in self.sized_lines():
            yield number, within_limit(line, f"{self.name}:{number}"), offset
            offset += size

    def line_at(self, offset: int, number: int) -> bytes:
        """The bytes of line ``number`` (its end included) as they are now at its byte ``offset``
        (:meth:`placed_lines`): read unbuffered, so that a line changed since is seen changed."""
        if self._copy is not None:  # a pass over the copy may be under way: it goes on where it was
            back = self._copy.tell()
            try:
                self._copy.seek(offset)
                raw = read_line(self._copy, self.limit)
            finally:
                self._copy.seek(back)
        else:
            if self._again is None:
                self._again = self._open_file(buffering=0)
            raw = _unbuffered_line(self._again, offset, self.limit)
        return within_limit(raw, f"{self.name}:{number}")

    def _regular(self) -> bool:
        """A regular file can be opened again; anything else is read once, like standard input."""
        try:
            return stat.S_ISREG(os.stat(self.path).st_mode)
        except OSError:
            return True  # opening it says what is wrong, in one line

    def text_lines(self, keep: bool = False) -> Iterator[tuple[int, str]]:
        """(number, text with its end) of every line, which must be UTF-8 and within the limit."""
        for number, line, _ in self.sized_lines(keep):
            yield number, within_limit(line, f"{self.name}:{number}")

    def _open_file(self, buffering: int = -1) -> BinaryIO:
        return open_input(self.path, buffering)

    def _numbered(
        self, handle: BinaryIO, errors: str, copy: BinaryIO | None = None
    ) -> Iterator[tuple[int, str | Overlong, int]]:
        number = 0
        try:
            # A line's bytes live only inside _next_line: a generator holds what it yields
            # until asked for more, and a long line's bytes beside its text would double it.
            while (got := self._next_line(handle, number + 1, errors, copy))[0]:
                number += 1
                yield number, *got
        except IsADirectoryError:
            raise BadInput(f"{self.path}: is a directory, expected a file") from None
        except OSError as error:
            raise BadInput(f"{self.name}: cannot read ({error.strerror})") from None

    def _next_line(
        self, handle: BinaryIO, number: int, errors: str, copy: BinaryIO | None
    ) -> tuple[str | Overlong, int]:
        """Line ``number`` decoded ("" at the end of the input) and its size in bytes, and
        written to ``copy`` if given."""
        raw = read_line(handle, self.limit, BOM if number == 1 else b"")
        if copy is not None:  # an overlong line is kept as one just over the limit
            copy.write(raw if isinstance(raw, bytes) else b" " * (self.limit + 1) + b"\n")
        if isinstance(raw, Overlong):
            return raw, 0
        try:
            return raw.decode("utf-8", errors), len(raw)
        except UnicodeDecodeError as error:
            raise BadInput(f"{self.name}:{number}: not UTF-8 text (byte {error.start} of the line)") from None

    def close(self) -> None:
        for handle in (self._copy, self._again):
            if handle is not None:
                handle.close()
        self._copy = self._again = None


def open_input(path: str, buffering: int = -1) -> BinaryIO:
    """``path`` opened to read bytes, or one line saying why it cannot be."""
    # Closed when the process started, standard input's number may since be another file's (one
    # opened before): its names would open that file.
    if sys.stdin is None and _names_standard_input(path):
        raise BadInput(f"{path}: standard input is closed: give a file, or pipe the lines in")
    try:
        return open(path, "rb", buffering=buffering)
    except FileNotFoundError:
        raise BadInput(f"{path}: no such file") from None
    except IsADirectoryError:
        raise BadInput(f"{path}: is a directory, expected a file") from None
    except OSError as error:
        raise BadInput(f"{path}: cannot read ({error.strerror})") from None


def missing_input(path: str) -> bool:
    """Whether ``path`` names no file at all (not ``-``, nor a name of standard input, closed or
    not: :func:`open_input` says that of those)."""
    return path != STDIO and not os.path.lexists(path) and not _names_standard_input(path)


def _names_standard_input(path: str) -> bool:
    """Whether ``path`` leads to a name of standard input (``//dev/stdin``, ``/dev/./stdin``, a
    link to it), followed link by link but not through standard input's own: closed at start,
    its number may be another file's by now, which resolving it completely would name."""
    own = f"/proc/{os.getpid()}/"
    current = os.path.abspath(path)
    for _ in range(40):  # as many links as the kernel follows
        current = os.path.join(os.path.realpath(os.path.dirname(current)), os.path.basename(current))
        # This process's descriptor 0, or one of its threads' (/proc/thread-self/fd/0).
        thread = re.fullmatch(r"task/(\d+)/fd/0", current[len(own):]) if current.startswith(own) else None
        mine = current == f"{own}fd/0" or (thread is not None and os.path.isdir(f"{own}task/{thread.group(1)}"))
        if current in _STANDARD_INPUT_NAMES or mine:
            return True
        if not os.path.islink(current):
            return False
        current = os.path.join(os.path.dirname(current), os.readlink(current))
    return False


def within_limit(line: _Line | Overlong, where: str) -> _Line:
    """``line`` itself; where it is an :class:`Overlong`, one line saying so at ``where``."""
    if isinstance(line, Overlong):
        raise BadInput(f"{where}: {line.problem}")
    return line


def _unbuffered_line(handle: BinaryIO, offset: int, limit: int) -> bytes | Overlong:
    """The line at ``offset`` of an unbuffered ``handle`` (with its end), in pieces growing from
    4 KiB: a short line costs one read, and nothing is kept from an earlier one."""
    chunks, size, position = [], 4096, offset
    while True:
        handle.seek(position)
        piece = handle.read(size)
        if not piece:
            break
        end = piece.find(b"\n")
        if end >= 0:
            chunks.append(piece[: end + 1])
            break
        chunks.append(piece)
        position += len(piece)
        if position - offset > limit + 2:
            return Overlong(limit)
        size = min(2 * size, _DRAIN)
    return b"".join(chunks)


def read_bounded(handle: BinaryIO, limit: int) -> bytes | Overlong:
    """All that is left of ``handle``, or an :class:`Overlong` where it is longer than ``limit``
    bytes: read in small pieces, since ``read(limit + 1)`` takes the whole limit at once."""
    chunks, size = [], 0
    while size <= limit and (piece := handle.read(_DRAIN)):
        chunks.append(piece)
        size += len(piece)
    return Overlong(limit) if size > limit else b"".join(chunks)


def end_length(line: bytes) -> int:
    """How long ``line``'s end is: 2 for CRLF, 1 for LF, else 0 (the last line may have none)."""
    return 2 if line.endswith(b"\r\n") else 1 if line.endswith(b"\n") else 0


def read_line(handle: BinaryIO, limit: int, prefix: bytes = b"") -> bytes | Overlong:
    """The next line of ``handle`` with its end (b"" at the end of the input), ``prefix`` dropped
    where it starts the line; an :class:`Overlong` where the line without its end (LF or CRLF)
    is longer than ``limit`` bytes, read past in small pieces so that it is never held."""
    # Two bytes past the limit: a line of exactly ``limit`` bytes ending in CRLF is read whole, as
    # the same line ending in LF is (the limit is a line's text, whatever its end).
    raw = handle.readline(limit + len(prefix) + 2)
    if prefix and raw.startswith(prefix):
        raw = raw[len(prefix) :]
    ended = raw.endswith(b"\n")
    if len(raw) - end_length(raw) <= limit:
        return raw
    del raw
    while not ended and (piece := handle.readline(_DRAIN)):
        ended = piece.endswith(b"\n")
    return Overlong(limit)
