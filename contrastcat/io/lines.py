"""Reading a file or standard input line by line, once or twice.

Inputs are streamed so memory does not grow with their size. A run that
must not write anything when a later line is bad reads its input twice: once
to check every line, then to do the work. A file is simply opened again;
standard input cannot be, so the checking pass copies it to an anonymous
temporary file (gone when the process ends) that the second pass reads.
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from collections.abc import Iterator
from typing import BinaryIO

from ..errors import BadInput
from .files import STDIO

BOM = b"\xef\xbb\xbf"


class LineSource:
    """The lines of ``path`` (``-``: standard input) as (1-based number, text without its end)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.name = "<stdin>" if path == STDIO else path
        self._copy: BinaryIO | None = None  # standard input, kept by a first pass for a second
        self._consumed = False

    def raw_lines(self, keep: bool = False) -> Iterator[tuple[int, bytes]]:
        """(number, bytes with the line end) of every line, a leading BOM dropped (it would
        hide the first CSV column). ``keep``: an input that can be
        read only once (standard input, a pipe, a FIFO, ``<(…)``) is kept so that it can be
        read again."""
        if self._copy is not None:
            self._copy.seek(0)
            yield from self._numbered(self._copy)
            return
        if self.path != STDIO and self._regular():
            handle = self._open_file()
            with handle:
                yield from self._numbered(handle)
            return
        if self._consumed:
            raise RuntimeError(f"{self.name} was read once without keeping it")  # a bug, not bad input
        self._consumed = True
        copy = tempfile.TemporaryFile() if keep else None
        handle = sys.stdin.buffer if self.path == STDIO else self._open_file()
        try:
            for number, raw in self._numbered(handle):
                if copy is not None:
                    copy.write(raw)
                yield number, raw
        finally:
            if handle is not sys.stdin.buffer:
                handle.close()
        if copy is not None:
            copy.flush()
            self._copy = copy

    def _regular(self) -> bool:
        """A regular file can be opened again; anything else is read once, like standard input."""
        try:
            return stat.S_ISREG(os.stat(self.path).st_mode)
        except OSError:
            return True  # opening it says what is wrong, in one line

    def text_lines(self, keep: bool = False) -> Iterator[tuple[int, str]]:
        """(number, text with its end) of every line, which must be UTF-8."""
        for number, raw in self.raw_lines(keep):
            try:
                yield number, raw.decode("utf-8")
            except UnicodeDecodeError as error:
                raise BadInput(f"{self.name}:{number}: not UTF-8 text (byte {error.start} of the line)") from None

    def _open_file(self) -> BinaryIO:
        try:
            return open(self.path, "rb")
        except FileNotFoundError:
            raise BadInput(f"{self.path}: no such file") from None
        except IsADirectoryError:
            raise BadInput(f"{self.path}: is a directory, expected a file") from None
        except OSError as error:
            raise BadInput(f"{self.path}: cannot read ({error.strerror})") from None

    def _numbered(self, handle: BinaryIO) -> Iterator[tuple[int, bytes]]:
        try:
            for number, raw in enumerate(handle, start=1):
                yield number, raw[len(BOM) :] if number == 1 and raw.startswith(BOM) else raw
        except IsADirectoryError:
            raise BadInput(f"{self.path}: is a directory, expected a file") from None
        except OSError as error:
            raise BadInput(f"{self.name}: cannot read ({error.strerror})") from None

    def close(self) -> None:
        if self._copy is not None:
            self._copy.close()
            self._copy = None
