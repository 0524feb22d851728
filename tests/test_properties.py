"""Property-based tests of every reader: any input gives good rows or records, or one located error.

Arbitrary Unicode (lone surrogates, U+2028, NUL and all), random JSON values
in every field (NaN and infinities included), random CSV quoting and stray
quotes. A bounded, derandomized number of examples keeps the suite fast and
reproducible.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contrastcat.errors import BadInput
from contrastcat.records.inputs import read_inputs
from contrastcat.records.record import AttributionRecord, read_records

from .helpers import invoke

FAST = settings(max_examples=150, derandomize=True, database=None, deadline=None)
SLOW = settings(
    max_examples=15, derandomize=True, database=None, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

any_char = st.characters(exclude_categories=())  # surrogates too
texts = st.text(any_char, max_size=40) | st.sampled_from(["a good film", "\u2028", "x\x85y", "  ", "[SEP]", "\x00"])
scalars = (
    st.none() | st.booleans() | st.integers(-(10**20), 10**20) | st.floats(allow_nan=True, allow_infinity=True) | texts
)
json_values = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3), max_leaves=5
)


def to_bytes(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")  # a lone surrogate becomes bytes no UTF-8 reader accepts


@st.composite
def jsonl_files(draw, fields=("text", "id", "label")):
    """Lines of JSON objects with random values (and sometimes no value, or not JSON at all)."""
    lines = []
    for _ in range(draw(st.integers(1, 5))):
        kind = draw(st.sampled_from(["object", "object", "object", "garbage"]))
        if kind == "garbage":
            lines.append(draw(texts))
            continue
        obj = {}
        for name in fields:
            if draw(st.booleans()):
                obj[name] = draw(texts if name == "text" and draw(st.booleans()) else json_values)
        lines.append(json.dumps(obj, ensure_ascii=draw(st.booleans())))
    return to_bytes("\n".join(lines) + draw(st.sampled_from(["", "\n", "\r\n"])))


def located(message: str, path: str, content: bytes) -> bool:
    """``path:LINE: problem`` with LINE inside the file, or ``path: problem`` for the file as a whole."""
    match = re.match(rf"{re.escape(path)}(?::(\d+))?: \S", message)
    if match is None:
        return False
    return match.group(1) is None or 1 <= int(match.group(1)) <= content.count(b"\n") + 1


@pytest.fixture(scope="module")
def scratch_root(tmp_path_factory) -> Path:
    """One folder for every example of the module, so pytest removes them with its own."""
    return tmp_path_factory.mktemp("properties")


def scratch(root: Path, content: bytes, suffix: str) -> Path:
    directory = Path(tempfile.mkdtemp(dir=root))
    path = directory / f"in{suffix}"
    path.write_bytes(content)
    return path


@FAST
@given(jsonl_files())
def test_jsonl_inputs_give_rows_or_a_located_error(scratch_root, content):
    path = scratch(scratch_root, content, ".jsonl")
    try:
        rows = read_inputs(str(path))
    except BadInput as error:
        assert located(str(error), str(path), content), str(error)
        return
    for row in rows:
        assert isinstance(row.text, str) and row.text.strip()
        row.text.encode("utf-8")  # valid Unicode: can be written back
        assert isinstance(row.id, (str, int, float)) and not isinstance(row.id, bool)
        assert not (isinstance(row.id, float) and not math.isfinite(row.id))


@st.composite
def csv_files(draw):
    rows = draw(st.lists(st.tuples(texts, texts), min_size=1, max_size=4))
    buffer = io.StringIO(newline="")
    quoting = draw(st.sampled_from([csv.QUOTE_MINIMAL, csv.QUOTE_ALL, csv.QUOTE_NONNUMERIC]))
    writer = csv.writer(buffer, quoting=quoting, lineterminator=draw(st.sampled_from(["\n", "\r\n"])))
    writer.writerow(["id", "text"])
    writer.writerows(rows)
    content = buffer.getvalue()
    damaged = draw(st.booleans())
    if damaged:  # a stray quote somewhere
        where = draw(st.integers(0, len(content)))
        content = content[:where] + '"' + content[where:]
    return to_bytes(content), rows, damaged


@FAST
@given(csv_files())
def test_csv_inputs_round_trip_or_give_a_located_error(scratch_root, case):
    content, rows, damaged = case
    path = scratch(scratch_root, content, ".csv")
    try:
        read = read_inputs(str(path))
    except BadInput as error:
        assert located(str(error), str(path), content), str(error)
        # A well-formed file is refused only for a value it cannot use.
        readable = all(text.strip() and not re.search("[\ud800-\udfff]", ident + text) for ident, text in rows)
        assert damaged or not readable, str(error)
        return
    if not damaged:  # exactly what was written: nothing cut, merged or dropped
        assert [row.text for row in read] == [text for _, text in rows]
        assert [row.id for row in read] == [ident or row.line for (ident, _), row in zip(rows, read)]


@st.composite
def record_files(draw):
    """Records with every field random: valid values, wrong types, NaN, missing fields."""
    lines = []
    for _ in range(draw(st.integers(1, 3))):
        length = draw(st.integers(0, 4))
        good = {
            "id": draw(st.integers(0, 9) | texts),
            "text": "a good film about a dog",
            "tokens": ["[CLS]", "a", "good", "film"][:length],
            "token_ids": [2, 5, 8, 9][:length],
            "offsets": [[0, 0], [0, 1], [2, 6], [7, 11]][:length],
            "special": [True, False, False, False][:length],
            "scores": [0.1, 0.9, 0.5, 0.0][:length],
            "target": draw(st.integers(0, 2)),
            "probs": [0.2, 0.7, 0.1],
            "method": "m",
        }
        names = list(good) + ["predicted", "label", "library", "settings", "truncated", "tokens_dropped"]
        for name in draw(st.lists(st.sampled_from(names), max_size=2, unique=True)):  # a few fields broken
            if draw(st.booleans()):
                good[name] = draw(json_values)
            else:
                good.pop(name, None)
        lines.append(json.dumps(good, ensure_ascii=draw(st.booleans())))
    return to_bytes("\n".join(lines) + "\n")


@FAST
@given(record_files())
def test_records_give_records_or_a_located_error(scratch_root, content):
    path = scratch(scratch_root, content, ".jsonl")
    try:
        records = read_records(str(path))
    except BadInput as error:
        assert located(str(error), str(path), content), str(error)
        return
    for record in records:
        assert len(record.tokens) == len(record.scores) == len(record.offsets) == len(record.special)
        assert all(0 <= start <= end <= len(record.text) for start, end in record.offsets)
        assert isinstance(record.target, int) and record.target >= 0


def one_located_line(result, path: Path, content: bytes) -> None:
    assert result.exit_code in (0, 2), result.output  # never 1 (a crash) on bad input
    if result.exit_code == 2:
        assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: "), result.stderr
        assert located(result.stderr[len("error: ") :], str(path), content), result.stderr


@st.composite
def mostly_valid_jsonl(draw):
    """Inputs explain should mostly accept: any Unicode text, string or integer ids, now and then a bad line."""
    lines = []
    for _ in range(draw(st.integers(1, 4))):
        if draw(st.integers(0, 9)) == 0:
            lines.append(draw(texts))
        else:
            obj = {"id": draw(st.integers(-5, 10**6) | texts), "text": draw(texts.filter(str.strip))}
            lines.append(json.dumps(obj, ensure_ascii=draw(st.booleans())))
    return to_bytes("\n".join(lines) + "\n")


@SLOW
@given(mostly_valid_jsonl())
def test_explain_gives_records_that_map_back_or_one_located_line(toy_dir, scratch_root, content):
    path = scratch(scratch_root, content, ".jsonl")
    out = path.with_name("out.jsonl")
    result = invoke("explain", path, "--model", toy_dir / "model", "--method", "random", "-o", out, "-q")
    one_located_line(result, path, content)
    if result.exit_code != 0:
        assert not out.exists()
        return
    rows = read_inputs(str(path))
    written = out.read_text(encoding="utf-8")
    assert len(written.splitlines()) == len(rows)  # even a line splitter that knows U+2028 sees one per record
    for row, line in zip(rows, written.splitlines()):
        record = json.loads(line, parse_constant=lambda name: 1 / 0)
        assert record["text"] == row.text and record["id"] == row.id
        for (start, end), special in zip(record["offsets"], record["special"]):
            assert 0 <= start <= end <= len(row.text)
            assert special or start < end  # a real token covers characters of the text


@SLOW
@given(record_files())
def test_render_and_evaluate_take_any_records_file(toy_dir, scratch_root, content):
    path = scratch(scratch_root, content, ".jsonl")
    one_located_line(invoke("render", path), path, content)
    one_located_line(invoke("evaluate", path, "--model", toy_dir / "model", "--min-tokens", "1"), path, content)


@FAST
@given(texts, json_values)
def test_written_records_are_one_strict_line(text, ident):
    try:
        (text + json.dumps(ident, allow_nan=False)).encode("utf-8")
    except (UnicodeEncodeError, ValueError):
        return  # not a value the readers let through
    record = AttributionRecord(
        id=ident, text=text, tokens=[], token_ids=[], offsets=[], special=[], scores=[], target=0, target_name="t",
        probs=[], predicted=0, label=None, method="m", model="", model_fingerprint="", library=None,
    )
    line = record.to_json()
    assert len((line + "\n").splitlines()) == 1
    assert json.loads(line, parse_constant=lambda name: 1 / 0)["text"] == text


# --- the fast checks of a line read agree with the plain walks -------------------------

_json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**20), 10**20) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.sampled_from('ab[]{}"\\,:0 \ud800\udc00\ud83d\ude00é'), max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=40,
)


@settings(max_examples=300, derandomize=True, database=None, deadline=None)
@given(value=_json_values, ascii_only=st.booleans())
def test_depth_and_surrogates_told_from_the_text_as_from_the_value(value, ascii_only):
    """What a line's text says of its nesting and lone surrogates (read at C speed) is what a
    walk of the value it reads as says: brackets and quotes inside strings, escapes both ways."""
    from contrastcat.io.jsonl import _depth, _raw_depth, tree_problem

    raw = json.dumps(value, ensure_ascii=ascii_only)
    assert _raw_depth(raw) == _depth(value)
    assert tree_problem(value, raw) == tree_problem(value)
    deep = "[" * 101 + raw + "]" * 101
    assert tree_problem([value], deep) == tree_problem(json.loads(deep)) is not None


_items = st.lists(
    st.integers(-3, 3) | st.booleans() | st.just(10**400) | st.floats(allow_nan=True, allow_infinity=True)
    | st.sampled_from([1e308, -1e308, "a", "", [0, 1], [1], [0, -1], [True, 2], [1, 2, 3], None]),
    max_size=6,
)


@settings(max_examples=400, derandomize=True, database=None, deadline=None)
@given(items=_items)
def test_each_fast_field_check_says_what_the_item_by_item_check_says(items):
    """A record's long lists are checked by their types and sums at C speed; the answer is the
    answer of checking each item (bools are not numbers, an int past a float's range is refused,
    sums that overflow though each number is finite)."""
    from contrastcat.records import record as module

    for name in ("tokens", "scores", "raw_scores", "token_ids", "special", "offsets", "probs"):
        check = module.RECORD_FIELDS[name][0]
        slow = {
            "tokens": lambda v: isinstance(v, str),
            "scores": module._number, "probs": module._number, "raw_scores": module._number,
            "token_ids": module._index, "special": lambda v: isinstance(v, bool),
            "offsets": lambda o: isinstance(o, list) and len(o) == 2 and all(module._index(v) for v in o),
        }[name]
        expected = all(slow(item) for item in items)
        if name == "raw_scores" and expected:
            try:
                expected = math.isfinite(sum(abs(x) for x in items))
            except OverflowError:  # ints past a float's range: refused, never an OverflowError
                expected = False
        assert check(items) is expected, (name, items)
