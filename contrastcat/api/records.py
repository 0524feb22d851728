"""Records read back: a file ``explain`` wrote (or another tool's minimal lines), as ``explain`` returns them."""

from __future__ import annotations

import os
from collections.abc import Iterable

from .. import arguments as check
from ..errors import BadInput
from ..records.record import Records, RecordFile, parsed_records

LINES = "<lines>"  # how an error names lines given in memory: <lines>:3


def read_records(path_or_lines: str | os.PathLike | Iterable[str]) -> Records:
    """The records of a JSONL file (``-``: standard input), or of JSONL lines already in memory
    (a list of strings, an open text file), each checked as ``evaluate`` and ``render`` check a
    line. Returns :class:`Records`, as :func:`contrastcat.explain` does (a notebook shows them
    coloured; ``.save(path)`` writes them back). A string is always a path: pass text as
    ``text.splitlines()``."""
    if isinstance(path_or_lines, (str, os.PathLike)):
        path = check.path("read_records: path_or_lines", path_or_lines)
        if path.lstrip().startswith("{") and not os.path.exists(path):
            raise BadInput(
                "read_records: path_or_lines is a string, read as a path, and no file is named so: "
                "pass JSONL text as a list of lines (text.splitlines())"
            )
        return Records(RecordFile(path).records())
    if isinstance(path_or_lines, (bytes, bytearray, dict)) or not isinstance(path_or_lines, Iterable):
        raise BadInput(
            f"read_records: path_or_lines must be a path or JSONL lines (strings), got {check.shown(path_or_lines)}"
        )
    return Records(parsed_records(_numbered(path_or_lines), LINES))


def _numbered(lines: Iterable[str]):
    for number, line in enumerate(lines, 1):
        if isinstance(line, (bytes, bytearray)):
            try:
                line = bytes(line).decode("utf-8")
            except UnicodeDecodeError:
                raise BadInput(f"{LINES}:{number}: not UTF-8") from None
        if not isinstance(line, str):
            raise BadInput(f"read_records: path_or_lines: item {number - 1} is {check.shown(line, 40)}, not a line of text")
        if "\n" in line.removesuffix("\n").removesuffix("\r"):
            raise BadInput(f"{LINES}:{number}: holds a line break inside: give one record a line")
        yield number, line
