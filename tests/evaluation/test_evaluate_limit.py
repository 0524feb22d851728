"""``evaluate --limit N``: the first N records only, as if the file held no more (a quick look at
a large file), from a file or from standard input (read twice: checked whole, then evaluated)."""

from __future__ import annotations

import itertools
import json

import pytest

import contrastcat
from contrastcat.errors import BadInput
from contrastcat.spec import OnCommandLine

from ..helpers import assert_one_line_error, invoke


def _report(result) -> dict:
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    document.pop("input")
    return document


def test_the_first_n_records_are_evaluated_as_a_file_of_them_would_be(toy_dir, toy_library, tmp_path):
    records = tmp_path / "attr.jsonl"
    result = invoke("explain", toy_dir / "inputs.jsonl", "--refs", toy_library.path, "--method", "attcat,random",
                    "-o", records, "-q")
    assert result.exit_code == 0, result.output
    lines = records.read_text().splitlines(keepends=True)
    first = tmp_path / "first.jsonl"
    first.write_text("".join(lines[:5]))
    options = ("--bootstrap", "0", "--min-tokens", "3", "--json", "-q")
    expected = _report(invoke("evaluate", first, *options))
    assert expected["records"] == 5
    # The report says the limit (a report of every record reads as before).
    assert "limit" not in expected
    assert _report(invoke("evaluate", records, "--limit", "5", *options)) == {**expected, "limit": 5}
    assert _report(invoke("evaluate", "-", "--limit", "5", *options, stdin=records.read_text())) == {**expected, "limit": 5}
    # A limit past the file's end read every record: the whole file's report (a full baseline gates it).
    past = _report(invoke("evaluate", records, "--limit", str(len(lines) + 9), *options))
    assert past["records"] == len(lines) and "limit" not in past
    assert_one_line_error(invoke("evaluate", records, "--limit", "0"), "--limit must be a whole number of at least 1")
    assert_one_line_error(invoke("evaluate", records, "--limit", str(2**63)), "--limit must be a whole number of at least 1 and at most")
    run = contrastcat.evaluate_file(str(records), limit=5, bootstrap=0, min_tokens=3)
    run.document.pop("input")
    assert run.document == {**expected, "limit": 5}


def test_a_limit_is_never_compared_with_another_or_mistaken_for_the_file(toy_dir, toy_library, tmp_path):
    """A report of the first N records gates only a run of the first N (a 2-input mean once passed
    against a 40-input one, both ways); a method the first N records lack is said to be missing
    there, not from the file; methods left with different numbers of inputs are warned of."""
    records = tmp_path / "attr.jsonl"
    result = invoke("explain", toy_dir / "inputs.jsonl", "--refs", toy_library.path, "--method", "attcat,random",
                    "-o", records, "-q")
    assert result.exit_code == 0, result.output
    options = ("--bootstrap", "0", "--min-tokens", "3", "-q")
    whole, part = tmp_path / "whole.json", tmp_path / "part.json"
    assert invoke("evaluate", records, *options, "--per-input", "-o", whole).exit_code == 0
    assert invoke("evaluate", records, *options, "--per-input", "--limit", "4", "-o", part).exit_code == 0
    assert_one_line_error(
        invoke("evaluate", records, *options, "--limit", "4", "--baseline", whole),
        f"{whole}: the baseline evaluated every record, this run the first 4 record(s) (--limit 4): compare like",
    )
    assert_one_line_error(
        invoke("evaluate", records, *options, "--baseline", part),
        f"{part}: the baseline evaluated the first 4 record(s) (--limit 4), this run every record: compare like",
    )
    assert invoke("evaluate", records, *options, "--limit", "4", "--baseline", part).exit_code == 0
    assert invoke("evaluate", records, *options, "--limit", "1000", "--baseline", whole).exit_code == 0
    assert_one_line_error(
        invoke("evaluate", records, *options, "--limit", "1", "--compare", "attcat,random"),
        f"--compare: no method 'random' in the first 1 record(s) of {records} (--limit 1) (it has: attcat)",
    )
    assert_one_line_error(
        invoke("evaluate", records, *options, "--limit", "1", "--fail-under", "random:morf.aopc=0"),
        f"--fail-under names method 'random', which has no records in the first 1 record(s) of {records} (--limit 1)",
    )
    uneven = invoke("evaluate", records, "--bootstrap", "0", "--min-tokens", "3", "--limit", "3")
    assert uneven.exit_code == 0, uneven.output
    assert "warning: the first 3 record(s) hold different numbers of inputs per method (attcat 2, random 1)" in uneven.stderr
    even = invoke("evaluate", records, "--bootstrap", "0", "--min-tokens", "3", "--limit", "4")
    assert "different numbers of inputs" not in even.stderr


def test_render_limit_reads_no_further_than_its_records(toy_dir, toy_library, tmp_path):
    """render --limit N stops reading after N records, as evaluate does (it read the whole input
    first: an endless standard input was copied to a temporary file until interrupted); a damaged
    line past the first N is never reached. With --compare, reading stops once N records of the
    two methods are paired; without --limit the damaged line is reached and refused."""
    records = tmp_path / "attr.jsonl"
    result = invoke("explain", toy_dir / "inputs.jsonl", "--refs", toy_library.path, "--method", "attcat,random",
                    "-o", records, "-q")
    assert result.exit_code == 0, result.output
    lines = records.read_text().splitlines(keepends=True)
    damaged = "".join(lines[:3]) + "not json\n"
    shown = invoke("render", "-", "--limit", "3", "--color", "never", stdin=damaged)
    assert shown.exit_code == 0, shown.output
    assert shown.stdout == invoke("render", records, "--limit", "3", "--color", "never").stdout
    paired = invoke("render", "-", "--limit", "2", "--compare", "attcat,random", "--color", "never", stdin=damaged)
    assert paired.exit_code == 0, paired.output
    assert [line.split()[1] for line in paired.stdout.splitlines() if "→" in line] == ["attcat", "random"]
    assert_one_line_error(invoke("render", "-", "--compare", "attcat,random", stdin=damaged), "<stdin>:4: ")


def test_render_compare_limit_on_a_stream_shows_what_the_whole_file_shows(toy_dir, toy_library, tmp_path, monkeypatch):
    """From standard input, read once and stopped after the first N paired records: the same
    records as the file read whole, whatever the order (an input's records apart, a method
    ahead of the other, a record repeated). A stream that never pairs them is refused once
    more than MOST_WAITING records wait, never held without bound."""
    from contrastcat.usecases import render_file

    records = tmp_path / "attr.jsonl"
    result = invoke("explain", toy_dir / "inputs.jsonl", "--refs", toy_library.path, "--method", "attcat,random",
                    "-o", records, "-q")
    assert result.exit_code == 0, result.output
    lines = records.read_text().splitlines(keepends=True)
    a, r = lines[0::2], lines[1::2]  # attcat and random of each input, in input order
    orders = {
        "apart": [a[0], a[1], r[3], r[4], r[0], r[1]],
        "ahead": [a[0], a[1], a[2], r[2], r[0]],
        "repeated": [a[0], r[0], a[0], a[1], r[1]],
        "method by method": a + r,
    }
    for name, chosen in orders.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(chosen))
        for limit in ("1", "2", "3", "4"):
            args = ("--compare", "attcat,random", "--limit", limit, "--color", "never", "--top", "1")
            whole = invoke("render", path, *args)
            streamed = invoke("render", "-", *args, stdin=path.read_text())
            assert whole.exit_code == streamed.exit_code == 0, (name, streamed.output)
            assert streamed.stdout == whole.stdout, (name, limit)
    monkeypatch.setattr(render_file, "MOST_WAITING", 3)
    lonely = "".join(a) * 2
    refused = invoke("render", "-", "--compare", "attcat,random", "--limit", "2", stdin="".join(a) + "".join(r))
    assert refused.exit_code == 2 and "more than 3 records (or 300 MB held) came before" in refused.stderr
    # No record of the other method yet: it may be late, or misnamed; what came is named.
    assert "(none of method 'random' yet; the stream has: attcat)" in refused.stderr
    assert invoke("render", "-", "--compare", "attcat,random", "--limit", "2", stdin=lonely).exit_code == 2


def _explained(toy_dir, toy_library, tmp_path) -> tuple[list[str], list[str]]:
    records = tmp_path / "attr.jsonl"
    result = invoke("explain", toy_dir / "inputs.jsonl", "--refs", toy_library.path, "--method", "attcat,random",
                    "-o", records, "-q")
    assert result.exit_code == 0, result.output
    lines = records.read_text().splitlines(keepends=True)
    return lines[0::2], lines[1::2]


def test_render_compare_shows_a_repeated_record_and_bounds_what_waits_by_its_lines(toy_dir, toy_library, tmp_path,
                                                                                  monkeypatch):
    """A record repeated before its pair came is shown too (paired in order, the extra after the
    pairs), from a file and from a stream alike; what waits for its pair is bounded by the bytes
    of its line as well as by its count (a long record's line is hundreds of kB)."""
    from contrastcat.usecases import render_file

    a, r = _explained(toy_dir, toy_library, tmp_path)
    path = tmp_path / "repeated.jsonl"
    path.write_text(a[0] + a[0] + r[0])
    args = ("--compare", "attcat,random", "--color", "never", "--top", "1")
    whole = invoke("render", path, *args)
    streamed = invoke("render", "-", *args, "--limit", "10", stdin=path.read_text())
    assert whole.exit_code == streamed.exit_code == 0, streamed.output
    assert whole.stdout == streamed.stdout
    titles = [line for line in whole.stdout.splitlines() if "attcat" in line or "random" in line]
    assert len(titles) == 3 and sum("attcat" in t for t in titles) == 2, whole.stdout
    longest = max(len(line) for line in a[:5])
    monkeypatch.setattr(render_file, "MOST_WAITING_BYTES", 3 * longest)
    refused = invoke("render", "-", *args, "--limit", "1", stdin="".join(a[:5]) + "".join(r[:5]))
    assert refused.exit_code == 2 and "came before their input's record of the other method" in refused.stderr
    # Two lines wait at a time when each input's records come apart by one: within the bound.
    apart = tmp_path / "apart.jsonl"
    apart.write_text("".join([a[0], a[1], r[0], a[2], r[1], a[3], r[2], r[3]]))
    shown = invoke("render", "-", *args, "--limit", "8", stdin=apart.read_text())
    assert shown.exit_code == 0, shown.output
    assert shown.stdout == invoke("render", apart, *args, "--limit", "8").stdout


def _grown(line: str, shape: str, size: int) -> str:
    """A record's line grown by about ``size`` bytes in a field that, parsed, takes from one to
    several times its bytes: many tokens (each with its id, span, flag and scores), a long token
    string on a special token's empty span."""
    record = json.loads(line)
    if shape == "many tokens":
        count = size // 40  # about 40 bytes of line a token
        record.update(
            text=" ".join(["a"] * count), tokens=["a"] * count, token_ids=[1] * count, special=[False] * count,
            offsets=[[2 * i, 2 * i + 1] for i in range(count)], scores=[0.5] * count, raw_scores=[0.5] * count,
        )
    elif shape == "long special tokens":
        first = record["special"].index(True)
        record["tokens"][first] = "x" * size
    return json.dumps(record) + "\n"


@pytest.mark.parametrize("shape", ["many tokens", "long special tokens"])
def test_records_waiting_for_their_pair_are_held_as_their_lines(toy_dir, toy_library, tmp_path, monkeypatch, shape):
    """A record waits for its pair as its line, parsed again when shown: what a stream holds
    beyond the record being read is the bytes it read, whatever a parsed record of that line
    takes (many tokens parse to several times their bytes); and those bytes, not an estimate
    from the tokens, are what the bound counts, so any field growing a line counts."""
    import tracemalloc

    from contrastcat.records.record import RecordFile
    from contrastcat.records.variants import MethodLabels
    from contrastcat.usecases import render_file

    a, r = _explained(toy_dir, toy_library, tmp_path)
    size = 300_000
    grown = [_grown(line, shape, size) for line in a[:6]]
    # The other method's records of the same inputs: the same texts, so that they pair.
    pairs = [_grown(line, shape, size) if shape == "many tokens" else line for line in r[:6]]
    chosen = render_file.RenderOptions.read({"attributions": "-", "compare": "attcat,random", "limit": 12},
                                            OnCommandLine())

    def peak(lines: list[str]) -> tuple[int, list]:
        path = tmp_path / "stream.jsonl"
        path.write_text("".join(lines))
        shown = []  # what each record shown was, not the record: a record is dropped once shown
        tracemalloc.start()
        try:
            for record in render_file._first_pairs(RecordFile(str(path)), ("attcat", "random"), MethodLabels(),
                                                   chosen):
                shown.append((record.method, record.text))
                del record
            return tracemalloc.get_traced_memory()[1], shown
        finally:
            tracemalloc.stop()

    adjacent, shown_adjacent = peak([line for two in zip(grown, pairs) for line in two])
    waiting, shown_waiting = peak(grown + pairs)  # the six grown records all wait for their pair
    assert shown_waiting == shown_adjacent
    assert [method for method, _ in shown_waiting] == ["attcat", "random"] * 6
    # Held as lines, the six waiting cost about their bytes beyond one record read at a time;
    # held parsed, "many tokens" cost several times that.
    assert waiting - adjacent < 2 * sum(len(line) for line in grown), (shape, waiting, adjacent)
    monkeypatch.setattr(render_file, "MOST_WAITING_BYTES", 3 * size)
    with pytest.raises(BadInput, match="came before their input's record of the other method"):
        peak(grown + pairs)


def test_a_file_written_method_by_method_holds_where_its_waiting_records_are(toy_dir, toy_library, tmp_path,
                                                                             monkeypatch):
    """From a file (or standard input kept by the check), a record waiting for its pair is held
    as where its line is and read again when shown: a file written method by method costs a few
    hundred bytes a waiting record, not its line nor its parsed record. A line changed in between
    is refused, and more waiting records than the bound holds are refused in one line."""
    import tracemalloc

    from contrastcat.records.record import RecordFile
    from contrastcat.records.variants import MethodLabels
    from contrastcat.usecases import render_file

    a, r = _explained(toy_dir, toy_library, tmp_path)
    # Many waiting lines, each small beside the records being read: what they cost shows.
    count = 40

    def renamed(line: str, i: int) -> str:
        record = json.loads(line)
        record["id"] = f"input {i}"
        return json.dumps(record) + "\n"

    grown = [_grown(renamed(a[i % len(a)], i), "many tokens", 40_000) for i in range(count)]
    pairs = [_grown(renamed(r[i % len(r)], i), "many tokens", 40_000) for i in range(count)]
    (tmp_path / "file.jsonl").write_text("")  # named, and read below
    chosen = render_file.RenderOptions.read({"attributions": str(tmp_path / "file.jsonl"), "compare": "attcat,random"},
                                            OnCommandLine())

    def peak(lines: list[str]) -> tuple[int, list]:
        path = tmp_path / "file.jsonl"
        path.write_text("".join(lines))
        shown = []
        tracemalloc.start()
        try:
            for record in render_file._first_pairs(RecordFile(str(path)), ("attcat", "random"), MethodLabels(),
                                                   chosen, placed=True):
                shown.append((record.method, record.line, record.text))
                del record
            return tracemalloc.get_traced_memory()[1], shown
        finally:
            tracemalloc.stop()

    adjacent, shown_adjacent = peak([line for two in zip(grown, pairs) for line in two])
    waiting, shown_waiting = peak(grown + pairs)
    assert [(m, t) for m, _, t in shown_waiting] == [(m, t) for m, _, t in shown_adjacent]
    assert [line for _, line, _ in shown_waiting] == [n for i in range(1, count + 1) for n in (i, i + count)]
    # Held as lines, the waiting ones would cost their bytes more (1.6 MB), parsed several times that.
    assert waiting - adjacent < 0.1 * sum(len(line) for line in grown), (waiting, adjacent)

    # Through the command, from a file with a BOM and from standard input (kept by the check, read
    # again at each waiting line's place in the copy): what the adjacent file shows.
    plain = [a[i] for i in range(6)] + [r[i] for i in range(6)]
    adjacent_file = tmp_path / "adjacent.jsonl"
    adjacent_file.write_text("".join(line for two in zip(a[:6], r[:6]) for line in two))
    options = ("--compare", "attcat,random", "--color", "never")
    expected = invoke("render", adjacent_file, *options)
    assert expected.exit_code == 0, expected.output
    bom = tmp_path / "bom.jsonl"
    bom.write_bytes(b"\xef\xbb\xbf" + "".join(plain).encode())
    assert invoke("render", bom, *options).stdout == expected.stdout
    assert invoke("render", "-", *options, stdin="".join(plain)).stdout == expected.stdout

    # A waiting line changed before it is read again (the same length, another text) is refused.
    path = tmp_path / "changing.jsonl"
    path.write_text("".join(plain))
    records = render_file._first_pairs(RecordFile(str(path)), ("attcat", "random"), MethodLabels(), chosen,
                                       placed=True)
    assert next(records).line == 1
    changed = json.loads(a[1])
    changed["text"] = changed["text"].swapcase()
    assert changed["text"] != json.loads(a[1])["text"]
    lines = list(plain)
    lines[1] = json.dumps(changed) + "\n"
    assert len(lines[1]) == len(plain[1])
    path.write_text("".join(lines))
    assert next(records).line == 7
    with pytest.raises(BadInput, match=r"changing.jsonl:2: changed while it was read"):
        next(records)
    # Moved (a blank line before it): the bytes at its place are part of the line before, and
    # would read as a syntax error at a line that has none.
    path.write_text("".join(plain))
    records = render_file._first_pairs(RecordFile(str(path)), ("attcat", "random"), MethodLabels(), chosen,
                                       placed=True)
    assert next(records).line == 1
    path.write_text("\n" + "".join(plain))
    assert next(records).line == 7
    with pytest.raises(BadInput, match=r"changing.jsonl:2: changed while it was read"):
        next(records)

    monkeypatch.setattr(render_file, "MOST_WAITING_BYTES", 3 * render_file._LINE_OVERHEAD)
    path.write_text("".join(plain))
    assert_one_line_error(invoke("render", path, *options),
                          "more than 3 records in %s come before their input's record of the other method" % path)
    assert invoke("render", adjacent_file, *options).stdout == expected.stdout  # adjacent: none waits


def test_a_records_label_is_a_class_index_or_name(toy_dir, toy_library, tmp_path):
    """As an input's label is read: anything else (a nested list: tens of times its bytes once
    parsed) is refused at its line, as any other field of the wrong type is."""
    a, _ = _explained(toy_dir, toy_library, tmp_path)
    for label, good in (([[]] * 5, False), ({"x": 1}, False), (1.5, False), (True, False), ("positive", True),
                        (1, True), (None, True), ("x" * 1000, True), ("x" * 1001, False)):
        record = json.loads(a[0])
        record["label"] = label
        result = invoke("render", "-", "--color", "never", stdin=json.dumps(record) + "\n")
        if good:
            assert result.exit_code == 0, (label, result.output)
        else:
            assert_one_line_error(result, "<stdin>:1: 'label' must be a class index, a class name (at most 1000 characters) or null")


def test_render_compare_limit_reads_a_stream_as_it_shows_it_and_keeps_few_other_names(toy_dir, toy_library, tmp_path):
    """The first pairs are shown before the rest of the stream is read (a large --limit holds no
    more than no limit does); records of other methods are passed over, a few of their names
    kept for the message when a method of the pair never comes."""
    from contrastcat.records.record import check_record
    from contrastcat.records.variants import MethodLabels
    from contrastcat.usecases.render_file import NAMES_KEPT, RenderOptions, _first_pairs

    a, r = _explained(toy_dir, toy_library, tmp_path)
    first = [check_record(json.loads(line), "stream") for line in (a[0], r[0])]

    class Stream:
        name = "<stdin>"

        def __init__(self, records, then):
            self._records, self._then = records, then

        def lines(self):
            for number, record in enumerate(self._records, 1):
                yield number, record.to_json(), record
            if self._then is not None:
                raise self._then

    chosen = RenderOptions.read({"attributions": "-", "compare": "attcat,random", "limit": 10**9}, OnCommandLine())
    shown = _first_pairs(Stream(first, AssertionError("read past what was shown")), ("attcat", "random"),
                         MethodLabels(), chosen)
    assert [record.method for record in itertools.islice(shown, 2)] == ["attcat", "random"]
    others = []
    for index in range(3 * NAMES_KEPT):
        record = json.loads(a[0])
        record["method"] = f"other{index}"
        others.append(check_record(record, "stream"))
    lonely = _first_pairs(Stream([first[0], *others], None), ("attcat", "random"), MethodLabels(), chosen)
    with pytest.raises(BadInput, match="no records of method 'random'") as refused:
        list(lonely)
    assert str(refused.value).count("other") == NAMES_KEPT and str(refused.value).endswith(", and more)")
    # A name seen again is no "more"; long names are told apart whole and printed cut.
    again = _first_pairs(Stream([first[0], *others[:NAMES_KEPT], others[0]], None), ("attcat", "random"),
                         MethodLabels(), chosen)
    with pytest.raises(BadInput) as refused:
        list(again)
    assert "and more" not in str(refused.value)
    long = []
    for tail in ("ONE", "TWO"):
        record = json.loads(a[0])
        record["method"] = "x" * 100 + tail
        long.append(check_record(record, "stream"))
    cut = _first_pairs(Stream([first[0], *long], None), ("attcat", "random"), MethodLabels(), chosen)
    with pytest.raises(BadInput) as refused:
        list(cut)
    assert str(refused.value).count("x" * 100 + "…") == 2



def test_a_waiting_records_label_is_the_pairs_own_string(toy_dir, toy_library, tmp_path):
    """A variant's label can be far longer than its line (``key=None`` for each setting the first
    record had and this one lacks): records waiting for their pair hold the pair's one string,
    not a label each, so what they hold stays about their lines' bytes. And the settings a
    reader keeps to label variants are bounded as they are read (1,000 of 1,000 characters)."""
    import tracemalloc

    from contrastcat.records.record import RecordFile
    from contrastcat.records.variants import MethodLabels
    from contrastcat.usecases import render_file

    a, r = _explained(toy_dir, toy_library, tmp_path)
    first = json.loads(a[0])
    first["settings"] = {f"K{i:03d}" + "K" * 96: 0 for i in range(1000)}  # the most a record may hold
    variants = []
    for line in a[1:5] * 10:  # 40 records labelled attcat[KKK…=None], each line of a few kB
        record = json.loads(line)
        record["settings"] = {}
        variants.append(json.dumps(record) + "\n")
    label = f"attcat[{','.join(f'{key}=None' for key in sorted(first['settings']))}]"  # 105 kB
    chosen = render_file.RenderOptions.read({"attributions": "-", "compare": f"{label},random", "limit": 2},
                                            OnCommandLine())
    path = tmp_path / "variants.jsonl"
    path.write_text(json.dumps(first) + "\n" + "".join(variants) + "".join(r[1:5]))
    tracemalloc.start()
    try:
        shown = [(record.method, record.line) for record in render_file._first_pairs(
            RecordFile(str(path)), (label, "random"), MethodLabels(), chosen)]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert shown == [("attcat", 2), ("random", 42)]
    assert peak < 2 * path.stat().st_size + 3_000_000, peak  # 40 labels of 105 kB would be 4 MB more
    first["settings"]["K" * 1001] = 0
    path.write_text(json.dumps(first) + "\n")
    with pytest.raises(BadInput, match="'settings' must be an object of at most 1000 plain values"):
        list(render_file._first_pairs(RecordFile(str(path)), (label, "random"), MethodLabels(), chosen))


def test_a_stream_finds_the_variants_of_a_method_whose_name_holds_a_bracket(toy_dir, toy_library, tmp_path):
    """The stream decides which records may be of the pair by their method, as the file does: a
    method named ``x[a=1]`` and its variant ``x[a=1][refs_used=5]``; and a method of the pair that
    never came is an error even where another's name, cut for the message, reads like it."""
    a, r = _explained(toy_dir, toy_library, tmp_path)
    lines = []
    for line in a[:3]:
        record = json.loads(line)
        record["method"] = "x[a=1]"
        lines.append(json.dumps(record) + "\n")
        record["settings"] = {**record["settings"], "refs_used": 5}
        lines.append(json.dumps(record) + "\n")
    path = tmp_path / "bracket.jsonl"
    path.write_text("".join(lines) + "".join(r[:3]))
    args = ("--compare", "x[a=1][refs_used=5],random", "--limit", "2", "--color", "never", "--top", "1")
    whole, streamed = invoke("render", path, *args), invoke("render", "-", *args, stdin=path.read_text())
    assert whole.exit_code == streamed.exit_code == 0, streamed.output
    assert streamed.stdout == whole.stdout and "x[a=1][refs_used=5]" in whole.stdout
    other = json.loads(a[0])
    other["method"] = "X" * 100 + "Z"
    cut = "X" * 100 + "…"
    refused = invoke("render", "-", "--compare", f"{cut},random", "--limit", "2",
                     stdin=json.dumps(other) + "\n" + r[0])
    assert_one_line_error(refused, f"--compare: no records of method '{cut}' in <stdin>")
    # A label numbered apart from another's that reads the same (a method named x[s=1], and the
    # variant s=1 of x): x[s=1]#2 is one of the pair, from a file and from a stream alike, in
    # either order of the two.
    entries = (("x[s=1]", {"s": 0}), ("x", {"s": 0}), ("x", {"s": 1}))
    for order in ((0, 1, 2), (1, 2, 0)):
        made = []
        for method, settings in (entries[i] for i in order):
            for line in a[:2]:
                record = json.loads(line)
                record.update(method=method, settings=settings)
                made.append(json.dumps(record) + "\n")
        path.write_text("".join(made) + "".join(r[:2]))
        labels = [title.split("  ")[1].split(" →")[0] for title in invoke("render", path, "--color", "never").stdout.splitlines()
                  if " → " in title]
        numbered = next(label for label in labels if label.endswith("#2"))
        args = ("--compare", f"{numbered},random", "--color", "never", "--top", "1")
        whole = invoke("render", path, *args)
        streamed = invoke("render", "-", *args, "--limit", "4", stdin=path.read_text())
        assert whole.exit_code == streamed.exit_code == 0, (whole.output, streamed.output)
        assert streamed.stdout == whole.stdout and whole.stdout.count(f"{numbered} →") == 2
