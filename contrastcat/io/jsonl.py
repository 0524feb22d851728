"""Strict JSON Lines: what every reader and writer of the package shares.

Reading: lines end at ``\\n`` only (``str.splitlines`` would also split at
U+2028, U+0085 and friends, which are legal inside JSON strings); NaN,
Infinity and numbers that overflow a double are refused, as are numbers and
nestings too large to read; so are a key given twice in one object (JSON
leaves open which one counts) and text that is not valid Unicode (an escaped
lone surrogate). Writing: strict JSON (``allow_nan=False``), UTF-8, with the
three characters that line-splitting readers mistake for line ends escaped.
"""

from __future__ import annotations

import json
import json.scanner
import math
import re
from collections.abc import Iterable, Iterator
from typing import Any

# Legal in JSON strings, but str.splitlines() and some editors end a line there.
LINE_BREAKING = {0x85: "\\u0085", 0x2028: "\\u2028", 0x2029: "\\u2029"}
_LINE_BREAKING = re.compile("[\u0085\u2028\u2029]")
# A lone surrogate is the one thing a Python string can hold that UTF-8 cannot; searched for
# rather than encoded, which would copy a long text once more only to throw the copy away.
_SURROGATE = re.compile("[\ud800-\udfff]")
# A blank line as a line reader hands it over: spaces and tabs, then a line end (CR LF, LF or CR).
_BLANK = re.compile("[ \t]*\r?\n?")


class NotStrictJSON(ValueError):
    """A line that is not strict JSON; the message says why, without a location."""


def _refuse_constant(name: str) -> Any:
    raise NotStrictJSON(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise NotStrictJSON(f"number {text[:20]}{'…' if len(text) > 20 else ''} is too large for a double")
    return value


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict:
    value = dict(pairs)
    if len(value) != len(pairs):
        seen: set[str] = set()
        repeated = next(key for key, _ in pairs if key in seen or seen.add(key))
        raise NotStrictJSON(f"key {repeated!r} appears more than once in one object (which one counts?)")
    return value


# Objects, arrays and strings are what a JSON tree costs most for in Python: 56 to 80 bytes each,
# so a line of ``{},{},...`` or ``["ab","ab",...]`` took 12 to 24 times its size once read (128 MiB:
# up to 3.5 GB). No record or report of the package holds more of them than this, or one per 64
# characters past it (a record has a few per token, a report a few per input and method). A text
# that may hold more (counted by its brackets and quotes, which text inside strings also has) is
# read by a scanner that counts each one as it is made and stops past the bound: memory stays
# within the bound's worth, and the time within a scan of the text, whatever its shape.
MAX_VALUES = 2_000_000


def _allowed(raw: str) -> int:
    return MAX_VALUES + len(raw) // 64


def _surely_within(raw: str, allowed: int) -> bool:
    """At most ``allowed`` objects, arrays and strings, by counting what opens them (brackets and
    quotes inside strings counted too: an upper bound)."""
    return raw.count("{") + raw.count("[") + raw.count('"') // 2 <= allowed


class _Counted(json.JSONDecoder):
    """The strict reader, scanning in Python with a count of the objects, arrays and strings made."""

    def __init__(self, allowed: int) -> None:
        super().__init__(parse_constant=_refuse_constant, parse_float=_finite_float, object_pairs_hook=_unique_keys)
        self.left, self.allowed = allowed, allowed
        self.parse_object = self._spending(self.parse_object)
        self.parse_array = self._spending(self.parse_array)
        self.parse_string = self._spending(self.parse_string)
        self.scan_once = json.scanner.py_make_scanner(self)

    def _spending(self, parse):
        def counted(*args, **kwargs):
            self.left -= 1
            if self.left < 0:
                raise NotStrictJSON(
                    f"more than {self.allowed:,} objects, arrays and strings: more than any record or report holds "
                    "(not read further; read whole, each would take about 70 bytes)"
                )
            return parse(*args, **kwargs)

        return counted


def loads(raw: str) -> Any:
    """``json.loads`` with the strict hooks (NaN, overflowing numbers and repeated keys refused),
    its memory bounded whatever the text's shape; raises what ``json.loads`` raises, or
    :class:`NotStrictJSON` with the reason."""
    allowed = _allowed(raw)
    if _surely_within(raw, allowed):  # fast: C counts, C scanner
        return json.loads(raw, parse_constant=_refuse_constant, parse_float=_finite_float, object_pairs_hook=_unique_keys)
    if raw.startswith("\ufeff"):  # as json.loads says it (JSONDecoder.decode does not look)
        raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", raw, 0)
    return _Counted(allowed).decode(raw)


def parse(raw: str) -> Any:
    """One JSON value, strictly; raises :class:`NotStrictJSON` with the reason."""
    try:
        value = loads(raw)
    except NotStrictJSON:
        raise
    except json.JSONDecodeError as error:
        raise NotStrictJSON(f"malformed JSON ({error.msg}, column {error.colno})") from None
    except RecursionError:
        raise NotStrictJSON("malformed JSON (nested too deeply to read)") from None
    except ValueError as error:  # an integer with more digits than Python converts
        raise NotStrictJSON(f"malformed JSON (a number too long to read: {str(error).split(';')[0]})") from None
    bad = first_invalid_string(value)
    if bad is not None:
        raise NotStrictJSON(f"not valid Unicode: {bad} holds an unpaired surrogate")
    return value


def first_invalid_string(value: Any, where: str = "a string") -> str | None:
    """Where ``value`` holds a string that cannot be written as UTF-8 (a lone surrogate), or None."""
    if isinstance(value, str):
        return where if _SURROGATE.search(value) else None
    if isinstance(value, dict):
        for key, item in value.items():
            found = first_invalid_string(key, "a key") or first_invalid_string(item, f"field {key!r}")
            if found:
                return found
    elif isinstance(value, list):
        for item in value:
            found = first_invalid_string(item, where)
            if found:
                return found
    return None


def lines(numbered: Iterable[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    """Of (number, line with its end) pairs, the non-blank lines. Their ends are kept (JSON reads
    them as white space): stripping them would copy every line, and a long one costs its size again."""
    for number, raw in numbered:
        if not _BLANK.fullmatch(raw):  # JSON's own whitespace only: other blanks are content
            yield number, raw


def dumps(value: Any) -> str:
    """One line of strict JSON that any JSON Lines reader accepts."""
    line = json.dumps(value, ensure_ascii=False, allow_nan=False)
    return line.translate(LINE_BREAKING) if _LINE_BREAKING.search(line) else line
