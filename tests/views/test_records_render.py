"""Input and record files, and rendering."""

from __future__ import annotations

import json

import pytest

from contrastcat.errors import BadInput
from contrastcat.records.inputs import read_inputs
from contrastcat.records.labels import resolve_label
from contrastcat.records.record import read_records, write_records
from contrastcat.views.terminal import render_plain, render_rich, spans
from tests.helpers import word_piece_record as make_record


def test_record_round_trip(tmp_path):
    path = tmp_path / "r.jsonl"
    records = [make_record(), make_record(id=2, label="negative")]
    assert write_records(str(path), records) == 2
    assert read_records(str(path)) == records
    assert not [p for p in tmp_path.iterdir() if p.name != "r.jsonl"]  # no temp file left


def test_inputs_jsonl_and_csv(tmp_path):
    jsonl = tmp_path / "a.jsonl"
    jsonl.write_text('{"text": "one"}\n\n{"id": "x", "text": "two", "label": 1}\n')
    rows = read_inputs(str(jsonl))
    assert [(r.line, r.id, r.text, r.label) for r in rows] == [(1, 1, "one", None), (3, "x", "two", 1)]
    csv = tmp_path / "b.csv"
    csv.write_text('id,text,label\n7,"multi\nline",neg\n8,plain,\n')
    rows = read_inputs(str(csv))
    assert [(r.line, r.id, r.text, r.label) for r in rows] == [(2, "7", "multi\nline", "neg"), (4, "8", "plain", None)]


def test_empty_input_file(tmp_path):
    path = tmp_path / "e.jsonl"
    path.write_text("\n")
    with pytest.raises(BadInput, match="no input rows"):
        read_inputs(str(path))


def test_resolve_label():
    names = ("negative", "positive")
    assert resolve_label(1, names, "f:1") == 1
    assert resolve_label("0", names, "f:1") == 0
    assert resolve_label("Positive", names, "f:1") == 1
    with pytest.raises(BadInput, match="f:3: label 2 out of range"):
        resolve_label(2, names, "f:3")


def test_spans_merge_word_pieces():
    record = make_record()
    assert [(s.start, s.end, s.score) for s in spans(record)] == [(0, 2, 0.2), (2, 5, 0.9), (5, 12, 0.1), (13, 17, 1.0)]
    # An unsigned map's word scores as its strongest piece (0.9 against dull's 1.0), min–max scaled
    # over the words: 0 and 1 of two words. Summed, its three pieces would outscore dull (1.2).
    assert [(s.start, s.end, s.raw, s.score) for s in spans(record, words=True)] == [
        (0, 12, 0.9, 0.0), (13, 17, 1.0, 1.0)]
    assert [(s.start, s.end, s.raw, s.score) for s in spans(record, words=True, rule="sum")] == [
        (0, 12, pytest.approx(1.2), 1.0), (13, 17, 1.0, 0.0)]


def test_render_plain_keeps_the_text_and_marks_tokens():
    record = make_record()
    assert render_plain(record, rescale=False) == "[un 0.20][bel 0.90][ievably 0.10] [dull 1.00]"  # as stored
    assert render_plain(record, threshold=0.5, words=True) == "unbelievably [dull 1.00]"
    assert render_plain(record, threshold=0.95) == "unbelievably [dull 1.00]"


def test_rescale_over_shown_tokens():
    record = make_record(scores=[1.0, 0.1, 0.3, 0.2, 0.5, 0.0])  # [CLS] holds the top score
    assert render_plain(record, rescale=False) == "[un 0.10][bel 0.30][ievably 0.20] [dull 0.50]"
    assert render_plain(record) == "[un 0.00][bel 0.50][ievably 0.25] [dull 1.00]"


def test_render_rich_shades_by_score():
    """An unsigned map (Contrast-CAT's) in grey, from white (0) to the page's grey 64 (1); a signed
    method's in red, from white to strong red."""
    text = render_rich(make_record(), rescale=False)
    assert text.plain == "unbelievably dull"
    styles = {text.plain[span.start : span.end]: str(span.style) for span in text.spans}
    assert styles["dull"] == "white on #404040"  # score 1: the darkest grey
    assert styles["bel"] == "white on #535353"  # 0.9: 255 - 191 * 0.9 = 83
    assert styles["un"] == "black on #d9d9d9"  # 0.2: 255 - 191 * 0.2 = 217, dark text on light grey
    text = render_rich(make_record(method="input-x-gradient", raw_scores=[0.3, 0.2, 0.9, 0.1, 1.0, 0.0]), rescale=False)
    styles = {text.plain[span.start : span.end]: str(span.style) for span in text.spans}
    assert styles["dull"] == "white on #ff0000"  # a signed method's score 1: strongest red
    assert styles["bel"] == "white on #ff1919"  # 0.9: green and blue at 255 * (1 - 0.9) = 25


def test_csv_with_byte_order_mark(tmp_path):
    path = tmp_path / "excel.csv"
    path.write_bytes("\ufefftext,label\nfine film,1\n".encode("utf-8"))
    assert [r.text for r in read_inputs(str(path))] == ["fine film"]


def test_records_without_special_flags_use_empty_spans(tmp_path):
    path = tmp_path / "other-tool.jsonl"
    path.write_text(json.dumps({"id": 1, "text": "ok", "tokens": ["[CLS]", "ok", "[SEP]"], "scores": [1, 0.5, 0],
                                "target": 0, "offsets": [[0, 0], [0, 2], [0, 0]]}) + "\n")
    (record,) = read_records(str(path))
    assert record.special == [True, False, True]


def test_words_of_sentencepiece_offsets_stay_apart():
    """Llama-style tokenizers give a piece the space before it; words must not merge across it."""
    from contrastcat.models.tokens import tokenize
    from contrastcat.records.spans import spans
    from contrastcat.testing import tiny

    for family in ("llama", "gpt2", "bert"):
        tokenizer = tiny.make_tokenizer(family)
        (text,) = tokenize(tokenizer, ["the film was great"], 64)

        class Record:
            pass

        record = Record()
        record.text, record.offsets, record.special = "the film was great", text.offsets, text.special
        record.scores = [0.5] * len(text.ids)
        words = [record.text[s.start : s.end] for s in spans(record, words=True)]
        assert words == ["the", "film", "was", "great"], (family, words)


def test_byte_pieces_of_one_character_are_shown_once():
    # What a byte-level tokenizer (GPT-2, RoBERTa) gives a character it has no token for: two
    # byte tokens carrying the same span (here "ф" and "и", then a space and "ok").
    record = make_record(
        text="фи ok", tokens=["<s>", "Ñ", "Ħ", "Ð", "¸", "Ġok", "</s>"], token_ids=[0, 5, 6, 7, 8, 9, 2],
        offsets=[[0, 0], [0, 1], [0, 1], [1, 2], [1, 2], [2, 5], [0, 0]],
        special=[True, False, False, False, False, False, True], scores=[0.0, 0.2, 0.6, 0.1, 0.3, 1.0, 0.0],
    )
    assert [(s.start, s.end, s.score) for s in spans(record)] == [(0, 1, 0.6), (1, 2, 0.3), (3, 5, 1.0)]
    assert render_plain(record).count("ф") == 1 and render_plain(record).count("и") == 1
    # A word of an unsigned map is its strongest piece (0.6 against 1.0); summed, 0.2 + 0.6 + 0.1
    # + 0.3 = 1.2.
    assert [(s.start, s.end, s.raw) for s in spans(record, words=True)] == [(0, 2, 0.6), (3, 5, 1.0)]
    assert [(s.start, s.end, s.raw) for s in spans(record, words=True, rule="sum")] == [
        (0, 2, pytest.approx(1.2)), (3, 5, 1.0)]


def test_an_inputs_waiting_records_are_paired_in_linear_time():
    """One input's records of A all before its records of B (a file written method by method,
    its inputs alike): each B is paired with the first A waiting. Taken from the front of a list,
    each take moved all that wait: eight times the records (25,000 then 200,000 of each) took
    32 to 36 times as long; from a queue, about 6 times. The clock is the process's own CPU time:
    wall time also counts the moments a busy machine (the other test worker) runs something else,
    which once made a linear run look 14 times as long for 4 times the records."""
    import gc
    import time

    from contrastcat.views.blocks import input_major

    def timed(count: int) -> float:
        items = [("A", i) for i in range(count)] + [("B", i) for i in range(count)]
        began = time.process_time()
        paired = list(input_major(items, ("A", "B"), label=lambda item: item[0], input_of=lambda item: 0))
        took = time.process_time() - began
        assert paired[:4] == [("A", 0), ("B", 0), ("A", 1), ("B", 1)] and len(paired) == 2 * count
        assert paired[-2:] == [("A", count - 1), ("B", count - 1)]
        return took

    gc.disable()  # a collection landing in one run and not the other is not what is measured
    try:
        small, large = min(timed(25_000) for _ in range(3)), min(timed(200_000) for _ in range(2))
    finally:
        gc.enable()
    assert large / small < 16, (small, large)
