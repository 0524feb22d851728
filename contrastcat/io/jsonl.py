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

import itertools
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


# Objects, arrays and strings (keys included) are what a JSON tree costs most for in Python: 56 to
# 80 bytes each, so a line of ``{},{},...`` or ``["ab","ab",...]`` took 12 to 24 times its size once
# read (128 MiB: up to 3.5 GB). No record or report of the package holds more of them than this, or
# one per 64 characters past it (a record has a few per token, a report a few per input and method).
# A number costs 24 to 36 bytes: ``[1e1,1e1,...]`` took 8 to 14 times its size; records and reports
# hold no more values of any kind than one per 8 characters past the bound (a token with its score,
# id and offsets is about 45 characters and 6 values). A text that
# may hold more (counted by what opens its containers, its quotes and its commas, which text inside
# strings also has: an upper bound) is read by a scanner that counts each value as it is made and
# stops past the bound: memory stays within the bound's worth, the time within a scan of the text.
MAX_VALUES = 2_000_000
# Deeper than any record or report nests (they nest 4 deep): one limit for both ways of reading, below
# where Python's own recursion would stop either.
MAX_DEPTH = 100


def _allowed(raw: str) -> tuple[int, int]:
    """How many (objects, arrays and strings; values of any kind) a text of this length may hold."""
    return MAX_VALUES + len(raw) // 64, MAX_VALUES + len(raw) // 8


def _surely_within(raw: str, allowed: tuple[int, int]) -> bool:
    """Within ``allowed``, by counting what opens objects, arrays and strings and, for all values,
    the commas between them (each value but the first of its container follows one)."""
    opened = raw.count("{") + raw.count("[")
    return opened + raw.count('"') // 2 <= allowed[0] and opened + raw.count(",") + 1 <= allowed[1]


class _Counted(json.JSONDecoder):
    """The strict reader, scanning in Python with a count of the values made (objects, arrays,
    strings and keys; and every value) and of the depth, stopping past either bound. It reads the
    language the C reader reads: ASCII digits only in numbers (Python's own scanner takes any
    Unicode digit)."""

    def __init__(self, allowed: tuple[int, int]) -> None:
        super().__init__(
            parse_constant=_refuse_constant, parse_float=self._float, parse_int=self._int,
            object_pairs_hook=_unique_keys,
        )
        (self.heavy, self.values), self.allowed, self.depth = allowed, allowed, 0
        self.memo = _CountedKeys(self)
        object_parse = self.parse_object
        self.parse_object = self._nested(lambda s_and_end, strict, scan_once, hook, pairs_hook, memo: object_parse(
            s_and_end, strict, scan_once, hook, pairs_hook, self.memo))
        self.parse_array = self._nested(self.parse_array)
        string_parse = self.parse_string
        self.parse_string = lambda *args: (self.spend(heavy=True), string_parse(*args))[1]
        self.scan_once = json.scanner.py_make_scanner(self)

    def spend(self, heavy: bool) -> None:
        self.values -= 1
        self.heavy -= heavy
        if self.heavy < 0 or self.values < 0:
            raise NotStrictJSON(
                f"more than {self.allowed[0]:,} objects, arrays and strings or {self.allowed[1]:,} values: more than "
                "any record or report holds (not read further; read whole, each would take 30 to 80 bytes)"
            )

    def _nested(self, parse):
        def counted(*args):
            self.spend(heavy=True)
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise RecursionError
            try:
                return parse(*args)
            finally:
                self.depth -= 1

        return counted

    def _number(self, text: str) -> str:
        self.spend(heavy=False)
        if not text.isascii():
            raise NotStrictJSON(f"malformed JSON (a number with a digit that is not ASCII: {text[:20]!r})")
        return text

    def _int(self, text: str) -> int:
        return int(self._number(text))

    def _float(self, text: str) -> float:
        return _finite_float(self._number(text))


class _CountedKeys(dict):
    """The scanner's memo of keys, which it consults once per key read: each one is counted."""

    def __init__(self, decoder: _Counted) -> None:
        super().__init__()
        self.decoder = decoder

    def setdefault(self, key, default=None):
        self.decoder.spend(heavy=True)
        return super().setdefault(key, default)


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
        raise NotStrictJSON(_TOO_DEEP) from None
    except ValueError as error:  # an integer with more digits than Python converts
        raise NotStrictJSON(f"malformed JSON (a number too long to read: {str(error).split(';')[0]})") from None
    problem = tree_problem(value, raw)
    if problem is not None:
        raise NotStrictJSON(problem)
    return value


_TOO_DEEP = f"malformed JSON (nested too deeply to read: more than {MAX_DEPTH} levels)"


def tree_problem(value: Any, raw: str | None = None) -> str | None:
    """What a value read makes it no strict JSON of ours: nested deeper than :data:`MAX_DEPTH`
    (however it was read), or a string UTF-8 cannot hold; None if nothing. ``raw``: the text
    the value was read from, where it was: both are then told from the text at C speed (a
    record's thousands of numbers are not visited one by one), the value walked only where the
    text holds a surrogate, to say where."""
    if raw is not None:
        if _raw_depth(raw) > MAX_DEPTH:
            return _TOO_DEEP
        if not _SURROGATE.search(raw) and not _SURROGATE_ESCAPE.search(raw):
            return None
    elif _depth(value) > MAX_DEPTH:
        return _TOO_DEEP
    bad = first_invalid_string(value)
    return None if bad is None else f"not valid Unicode: {bad} holds an unpaired surrogate"


# A JSON string (what lies between its quotes cannot hold a bracket that nests); what else a JSON
# text holds but brackets (numbers, separators, white space, true, false and null); and the step
# each bracket takes: the depth of a text JSON read is the highest running sum of the steps.
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKET = {ord(c): None for c in "0123456789+-.eE,: \t\n\rtruefalsn"}
_STEPS = {"[": 1, "{": 1, "]": -1, "}": -1}
# An escaped surrogate (\ud800 to \udfff) in a JSON text: the only way a string JSON reads from
# valid Unicode text gets one (a pair of them reads as one character, but is walked to be sure).
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")


def _raw_depth(raw: str) -> int:
    """How deep objects and arrays nest in the JSON text ``raw`` (read without error already)."""
    brackets = _STRING.sub("", raw).translate(_NOT_BRACKET)
    return max(itertools.accumulate(map(_STEPS.get, brackets, itertools.repeat(0))), default=0)


def _depth(value: Any) -> int:
    """How deep objects and arrays nest in ``value``, without recursion (it may be deep) and with
    memory for one path down, not for every container at once."""
    if not isinstance(value, (dict, list)):
        return 0
    deepest, path = 1, [iter(value.values() if isinstance(value, dict) else value)]
    while path:
        child = next(path[-1], _END)
        if child is _END:
            path.pop()
        elif isinstance(child, (dict, list)):
            path.append(iter(child.values() if isinstance(child, dict) else child))
            deepest = max(deepest, len(path))
            if deepest > MAX_DEPTH:
                return deepest
    return deepest


_END = object()


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
