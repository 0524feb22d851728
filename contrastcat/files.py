"""Atomic output: a file appears complete or not at all; ``-`` is standard output."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from .errors import BadInput

STDIO = "-"


@contextlib.contextmanager
def atomic_text_output(path: str) -> Iterator[TextIO]:
    """Yield a handle; on success the temp file is renamed to ``path``, on any error
    (KeyboardInterrupt included) it is removed and ``path`` is left untouched."""
    if path == STDIO:
        yield sys.stdout
        sys.stdout.flush()
        return
    check_output_path(path)
    target = Path(path)
    handle, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            yield stream
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def check_output_path(path: str) -> None:
    """Fail before any work when an output file cannot be written where asked."""
    if path == STDIO:
        return
    target = Path(path)
    if target.is_dir():
        raise BadInput(f"{path}: is a directory, expected an output file")
    if not target.parent.exists():
        raise BadInput(f"{path}: directory {target.parent} does not exist")


def read_text(path: str) -> str:
    """The whole input, from a file or standard input, with a one-line error if unreadable."""
    if path == STDIO:
        return sys.stdin.read()
    try:
        return Path(path).read_text(encoding="utf-8-sig")  # a BOM would hide the first CSV column
    except FileNotFoundError:
        raise BadInput(f"{path}: no such file") from None
    except IsADirectoryError:
        raise BadInput(f"{path}: is a directory, expected a file") from None
    except UnicodeDecodeError as error:
        raise BadInput(f"{path}: not UTF-8 text (byte {error.start})") from None
    except OSError as error:
        raise BadInput(f"{path}: cannot read ({error.strerror})") from None
