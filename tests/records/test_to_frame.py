"""Records as pandas tables: one row per token, per word or per record, each naming its record."""

from __future__ import annotations

import sys

import pytest

from contrastcat.errors import BadInput
from contrastcat.records.record import AttributionRecord, Records


def _record(id_, method, evidence=None):
    return AttributionRecord(
        id=id_, text="a goodish film", tokens=["[CLS]", "a", "good", "##ish", "film", "[SEP]"],
        token_ids=[101, 1, 2, 3, 4, 102], offsets=[[0, 0], [0, 1], [2, 6], [6, 9], [10, 14], [0, 0]],
        special=[True, False, False, False, False, True], scores=[0.0, 0.1, 1.0, 0.5, 0.0, 0.0],
        target=1, target_name="positive", probs=[0.25, 0.75], predicted=1, label=1, method=method,
        model="m", model_fingerprint="sha256:x", library=None, raw_scores=[0.0, 0.2, 2.0, 1.0, -0.5, 0.0],
        evidence=evidence)


def test_tokens_words_and_records():
    records = Records([_record("r1", "attnlrp", evidence=[[2, 9]]), _record(7, "random")])
    tokens = records.to_frame()
    assert len(tokens) == 12 and list(tokens["record"]) == [0] * 6 + [1] * 6
    first = tokens[tokens["record"] == 0]
    assert list(first["token"]) == ["[CLS]", "a", "good", "##ish", "film", "[SEP]"]
    assert list(first["raw_score"]) == [0.0, 0.2, 2.0, 1.0, -0.5, 0.0] and list(first["score"])[2] == 1.0
    assert list(first["evidence"]) == [False, False, True, True, False, False]  # "goodish" is [2, 9)
    assert tokens["evidence"].isna().sum() == 6  # the second record has no evidence
    assert list(first["special"]) == [True, False, False, False, False, True]
    words = records.to_frame("words")
    goodish = words[(words["record"] == 0) & (words["word"] == "goodish")].iloc[0]
    assert (goodish["start"], goodish["end"], goodish["raw"]) == (2, 9, 3.0)  # signed: pieces summed
    assert list(words[words["record"] == 0]["word"]) == ["a", "goodish", "film"]
    rows = records.to_frame("records")
    assert list(rows["id"]) == ["r1", 7] and list(rows["probability"]) == [0.75, 0.75]
    assert list(rows["method"]) == ["attnlrp", "random"] and list(rows["tokens"]) == [6, 6]
    with pytest.raises(BadInput, match="level must be one of tokens, words, records, got 'word'"):
        records.to_frame("word")


def test_without_pandas_the_error_says_how_to_get_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match=r"to_frame needs pandas \(pip install pandas\)"):
        Records([_record("r1", "random")]).to_frame()


def test_odd_records_and_empty_lists():
    """Another tool's record without probabilities, items that are not records, and no records."""
    from dataclasses import replace

    elsewhere = replace(_record("x", "another-tool"), probs=[], segments=None)
    rows = Records([elsewhere]).to_frame("records")
    assert rows["probability"].isna().all()
    tokens = Records([elsewhere]).to_frame()
    assert list(tokens["segment"]) == [None, 0, 0, 0, 0, None] or list(tokens["segment"].astype(object).where(
        tokens["segment"].notna(), None)) == [None, 0, 0, 0, 0, None]
    assert str(tokens["segment"].dtype) == "Int64"
    for level in ("tokens", "words", "records"):
        empty = Records().to_frame(level)
        assert len(empty) == 0 and {"record", "id", "method"} <= set(empty.columns)
    with pytest.raises(BadInput, match="to_frame: item 1 is not an AttributionRecord, got int"):
        Records([elsewhere, 2]).to_frame()
