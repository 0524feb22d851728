"""No file of the project cites an issue-tracker number a reader of the repository cannot look up.

Code, tests, benchmarks, examples, the docs, the README and the Makefile say what a change is
and why in words ("the cheap deletion test (fewer grid steps)"), never by the number of the
issue that asked for it. The changelog may keep such history and is not scanned.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ["contrastcat", "cli", "tests", "benchmarks", "examples", "docs", "README.md", "Makefile"]

# Built from pieces so that this file's own text never matches what it looks for.
_WORD = "iss" + "ue"
CITATION = re.compile(r"(?i)\b" + _WORD + r"s?\s+#?\d+\b" + "|" + r"\(" + "#" + r"\d+\)")


def _tracked_files() -> list[Path]:
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--", *SCANNED], cwd=ROOT, capture_output=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: the tracked files cannot be listed")
    return [ROOT / name for name in listed.decode("utf-8", "surrogateescape").split("\0") if name]


def _text(path: Path) -> str | None:
    """The file's text, or None for a binary file (a NUL byte, or not UTF-8) or one gone from disk."""
    try:
        data = path.read_bytes()
    except (FileNotFoundError, IsADirectoryError):
        return None
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def test_the_pattern_finds_what_it_should():
    cited_forms = (_WORD + " 24", _WORD.capitalize() + " 8, items 6, 7", _WORD + "s 21", _WORD + " #3",
                   _WORD + "\n23", "(" + "#12)")
    for cited in cited_forms:
        assert CITATION.search(cited), cited
    for plain in (_WORD + "d because", "the " + _WORD + " of", "item 0: field 'text'", "color: #e8e8e8", "#2"):
        assert not CITATION.search(plain), plain


def test_no_tracked_file_cites_a_tracker_number():
    files = _tracked_files()
    assert files, "git ls-files listed nothing to scan"
    this = Path(__file__).resolve()
    found = []
    for path in files:
        if path.resolve() == this:
            continue
        text = _text(path)
        if text is None:
            continue
        for match in CITATION.finditer(text):  # the whole text: a citation may wrap to the next line
            number = text.count("\n", 0, match.start()) + 1
            found.append(f"{path.relative_to(ROOT)}:{number}: {match.group(0)!r}")
    assert found == [], "say what and why in words, not by the tracker's number:\n" + "\n".join(found)
