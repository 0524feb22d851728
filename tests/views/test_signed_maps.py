"""Signed maps (a record's raw scores, evidence for and against the target), shown in two colours,
and a record's words: hand-worked records, then the toy model end to end."""

from __future__ import annotations

import json

import pytest

from contrastcat.errors import BadInput
from contrastcat.records.markup import SIGNED_LEGEND, notebook_html, shaded_text
from contrastcat.records.record import check_record, read_records
from contrastcat.records.spans import spans
from contrastcat.views.html_page import html_page
from contrastcat.views.terminal import render_plain, render_rich, top_words
from tests.helpers import assert_one_line_error, invoke
from tests.helpers import word_piece_record as make_record


def not_good(**overrides):
    """"not good" for the class: "not" pushes against it (raw -0.8), "good" for it (0.4); [CLS] 0.5."""
    raw = [0.5, -0.8, 0.4, 0.1]
    values = dict(
        id="n", text="not good", tokens=["[CLS]", "not", "good", "[SEP]"], token_ids=[2, 5, 6, 3],
        offsets=[[0, 0], [0, 3], [4, 8], [0, 0]], special=[True, False, False, True],
        scores=[1.0, 0.0, 0.923077, 0.692308], raw_scores=raw, target=1, target_name="positive",
        probs=[0.4, 0.6], predicted=1, method="attnlrp",
    )
    values.update(overrides)
    return make_record(**values)


def test_a_signed_map_is_shown_by_its_largest_magnitude_in_two_colours():
    record = not_good()
    # Shown tokens -0.8 and 0.4, divided by the largest magnitude 0.8; [CLS]'s 0.5 is hidden.
    assert [(s.start, s.end, s.score, s.signed) for s in spans(record, rescale=True, signed=True)] == [
        (0, 3, -1.0, True), (4, 8, 0.5, True)]
    assert render_plain(record) == "[not -1.00] [good +0.50]"
    assert render_plain(record, threshold=0.6) == "[not -1.00] good"  # the threshold is on the magnitude
    styles = {span.start: str(span.style) for span in render_rich(record).spans}
    assert styles == {0: "white on #0000ff", 4: "black on #ff8080"}  # blue against, red for (255 · 0.5 → 128)
    assert top_words(record, 3) == "good +0.50; against: not -1.00"
    # --no-signed: the stored [0, 1] scores, as before raw scores were kept ("not" scores 0).
    assert render_plain(record, rescale=True, signed=False) == "[not 0.00] [good 1.00]"
    assert top_words(record, 3, signed=False) == "good 1.00, not 0.00"


def test_without_rescale_a_signed_map_is_divided_by_its_largest_magnitude_of_all_tokens():
    record = not_good(raw_scores=[2.0, -0.8, 0.4, 0.1])  # [CLS] holds the largest magnitude
    assert render_plain(record, rescale=False) == "[not -0.40] [good +0.20]"
    assert render_plain(record, rescale=True) == "[not -1.00] [good +0.50]"


def test_a_map_that_never_goes_below_zero_is_shown_as_before():
    unsigned = make_record(raw_scores=[0.3, 0.2, 0.9, 0.1, 1.0, 0.0])
    before = make_record()
    assert render_plain(unsigned) == render_plain(before) == "[un 0.11][bel 0.89][ievably 0.00] [dull 1.00]"
    assert shaded_text(unsigned) == shaded_text(before)
    assert SIGNED_LEGEND not in html_page([unsigned], "t") and SIGNED_LEGEND in html_page([not_good()], "t")
    # --no-signed: the stored [0, 1] scores on the unsigned (grey) scale, as another tool's record without raw scores.
    elsewhere = html_page([not_good(raw_scores=None, method="mine")], "t").replace("mine →", "attnlrp →")
    assert html_page([not_good()], "t", signed=False) == elsewhere
    assert 'class="t mag' in elsewhere and "t neg" not in elsewhere and SIGNED_LEGEND not in elsewhere


def test_the_page_marks_evidence_against_in_its_own_colour():
    page = html_page([not_good()], "t")
    assert 'class="t neg hi" style="--s:1.000;unicode-bidi:isolate"' in page
    assert 'data-score="-1.000"' in page and 'data-score="+0.500"' in page
    assert ".contrastcat .t.neg { background: rgba(var(--cold), var(--s)); }" in page
    assert "red for the class, blue against it" in page
    assert SIGNED_LEGEND in notebook_html([not_good()])


def test_words_sum_their_pieces_raw_scores():
    record = make_record(raw_scores=[0.3, 0.2, -0.9, 0.1, 1.0, 0.0], method="attnlrp")
    words = record.word_scores()
    # unbelievably: 0.2 - 0.9 + 0.1 = -0.6; dull: 1.0. Scaled over the two words: 0 and 1.
    assert [(w.text, w.start, w.end, w.raw, w.score) for w in words] == [
        ("unbelievably", 0, 12, -0.6, 0.0), ("dull", 13, 17, 1.0, 1.0)]
    assert render_plain(record, words=True) == "[unbelievably -0.60] [dull +1.00]"
    assert render_plain(record, words=True, signed=False) == "[unbelievably 0.00] [dull 1.00]"
    assert [w.to_dict() for w in words][0] == {"word": "unbelievably", "start": 0, "end": 12, "score": 0.0, "raw": -0.6}


def test_raw_scores_and_words_are_checked_as_they_are_read():
    line = json.loads(not_good().to_json())
    assert list(line)[list(line).index("scores") + 1] == "raw_scores"  # written beside the scores
    assert "raw_scores" not in json.loads(make_record().to_json())  # a record without them, as before
    for field, value, message in (
        ("raw_scores", [0.1, 0.2], "'raw_scores' must be a list with one entry per token"),
        ("raw_scores", [0.1, "x", 0.2, 0.3], "'raw_scores' must be a list of finite numbers"),
        ("words", [{"word": "a", "start": 0, "end": 1, "score": 1.0}], "'words' must be a list of objects"),
        ("words", [{"word": "a", "start": 0, "end": 1, "score": 1.0, "raw": 1, "segment": 0}],
         "'words' must be a list of objects"),
    ):
        with pytest.raises(BadInput, match=message):
            check_record({**line, field: value}, "f:1")


def test_explain_writes_raw_scores_and_on_request_words(toy_dir, toy_library, tmp_path):
    """From the command line and read back: every record keeps its raw scores (min–max scaled,
    its scores); with --words, its words as word_scores() gives them, in shards too; a finished
    output without words is not taken for a --words run's."""
    out = tmp_path / "w.jsonl"
    args = ("explain", toy_dir / "inputs.jsonl", "--refs", toy_library.path, "--method", "attnlrp,contrastcat")
    result = invoke(*args, "--words", "-o", out, "-q")
    assert result.exit_code == 0, result.output
    records = read_records(str(out))
    assert {record.method for record in records} == {"attnlrp", "contrastcat"}
    for record in records:
        low, high = min(record.raw_scores), max(record.raw_scores)
        assert [(r - low) / (high - low) for r in record.raw_scores] == pytest.approx(record.scores, abs=1e-5)
        assert record.words == [word.to_dict() for word in record.word_scores()] and record.words
    assert any(min(r.raw_scores) < 0 for r in records if r.method == "attnlrp")  # AttnLRP's relevance is signed
    parts = [tmp_path / f"part{i}.jsonl" for i in range(2)]
    for index, part in enumerate(parts):
        assert invoke(*args, "--words", "--shard", f"{index}/2", "-o", part, "-q").exit_code == 0
    merged = tmp_path / "merged.jsonl"
    assert invoke("merge", *parts, "-o", merged, "-q").exit_code == 0
    assert merged.read_text() == out.read_text()  # shards keep the words too
    plain = tmp_path / "plain.jsonl"
    assert invoke(*args, "-o", plain, "-q").exit_code == 0
    assert all("words" not in json.loads(line) for line in plain.read_text().splitlines())
    again = invoke(*args, "--words", "--resume", "-o", plain, "-q")  # finished without words: written again
    assert again.exit_code == 0, again.output
    assert all("words" in json.loads(line) for line in plain.read_text().splitlines())


def test_words_from_python(toy_classifier):
    import contrastcat

    (record,) = contrastcat.explain(toy_classifier, ["a good film"], method="attnlrp", words=True)
    assert record.words == [word.to_dict() for word in record.word_scores()]
    assert [word["word"] for word in record.words] == ["a", "good", "film"]
    assert contrastcat.explain(toy_classifier, ["a good film"], method="attnlrp")[0].words is None
    with pytest.raises(BadInput, match="^explain: words must be True or False, got .maybe."):
        contrastcat.explain(toy_classifier, ["a good film"], method="attnlrp", words="maybe")


def test_near_the_largest_float_nothing_overflows_into_nan(tmp_path):
    """Words and signed maps sum in units of the largest magnitude: values near the largest float
    still shade, list and page without a NaN; raw scores whose magnitudes add up past it are
    refused as they are read."""
    line = {"text": "abcd ef", "tokens": ["ab", "cd", "ef"], "scores": [1, 1, 0], "target": 0}
    path = tmp_path / "huge.jsonl"
    path.write_text(json.dumps({**line, "raw_scores": [8e307, 8e307, -1.0]}) + "\n")
    for args in (("--words", "--top", "2"), ("--words", "--color", "never"), ("--color", "never")):
        shown = invoke("render", path, *args)
        assert shown.exit_code == 0 and "nan" not in shown.output.lower() and not shown.stderr, (args, shown.output)
    assert invoke("render", path, "--words", "--top", "2").stdout.endswith(": abcd +1.00\n")  # ef: -6e-309 is no evidence
    page = tmp_path / "huge.html"
    assert invoke("render", path, "--words", "--html", page).exit_code == 0 and "nan" not in page.read_text()
    (record,) = read_records(str(path))
    assert [w.raw for w in record.word_scores()] == [1.6e308, -1.0]
    path.write_text(json.dumps({**line, "raw_scores": [1.7e308, 1.7e308, 0.0]}) + "\n")
    assert_one_line_error(invoke("render", path), f"{path}:1: 'raw_scores' must be a list of finite numbers (their")


def test_a_map_negative_only_on_special_tokens_is_not_signed():
    """Of another tool's method, told by its scores: below 0 on special tokens only, unsigned. Of
    a method of this tool that is signed (AttnLRP), signed whatever its scores."""
    record = not_good(raw_scores=[-0.5, 0.8, 0.4, -0.1], method="mine")
    assert render_plain(record, rescale=False) == "[not 0.00] [good 0.92]"  # the stored scores, unsigned
    assert render_plain(not_good(raw_scores=[-0.5, 0.8, 0.4, -0.1])) == "[not +1.00] [good +0.50]"


def test_words_are_checked_against_the_record(toy_classifier):
    """A record's words are what word_scores() gives for it, exactly: one edited (a score, a span,
    a segment written 1.0) or a record changed under them is refused as it is read."""
    import contrastcat

    (record,) = contrastcat.explain(toy_classifier, ["a good film"], method="attnlrp", words=True)
    line = json.loads(record.to_json())
    assert check_record(line, "f:1").words == line["words"]
    for change in ({"score": 0.5}, {"end": 99}, {"word": "zzz"}, {"segment": 1}, {"raw": 1e9}):
        words = [{**line["words"][0], **change}, *line["words"][1:]]
        with pytest.raises(BadInput, match="^f:1: 'words' are not this record's words"):
            check_record({**line, "words": words}, "f:1")
    with pytest.raises(BadInput, match="'words' are not this record's words"):
        check_record({**line, "raw_scores": [-x for x in line["raw_scores"]]}, "f:1")
    with pytest.raises(BadInput, match="'words' must be"):
        check_record({**line, "words": [{**line["words"][0], "segment": True}]}, "f:1")
