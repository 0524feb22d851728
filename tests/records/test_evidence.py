"""Evidence spans to tokens, on a real tokenizer's offsets, checked against the characters."""

from __future__ import annotations

import pytest

from contrastcat.errors import BadInput
from contrastcat.models.tokens import tokenize
from contrastcat.records.evidence import evidence_tokens, read_spans
from contrastcat.testing import toy


def test_a_span_marks_every_token_it_touches_and_no_special_token():
    tokenizer = toy.make_tokenizer()
    text = "the film was great"
    (tokens,) = tokenize(tokenizer, [text], 64)
    offsets = [list(pair) for pair in tokens.offsets]
    start = text.index("great")
    marked = evidence_tokens(offsets, None, read_spans([[start, start + 3]], [text], "in"))  # "gre": part of a word
    assert [text[a:b] for (a, b), flag in zip(offsets, marked) if flag] == ["great"]
    assert not marked[0] and not marked[-1]  # [CLS], [SEP]: no characters, never evidence
    # A span over the whole text marks every token but the special ones.
    everything = evidence_tokens(offsets, None, read_spans([[0, len(text)]], [text], "in"))
    assert everything == [not flag for flag in tokens.special]
    assert evidence_tokens(offsets, None, ()) == [False] * len(offsets)


def test_hand_worked_offsets_and_pairs():
    offsets = [[0, 0], [0, 3], [4, 8], [9, 12], [0, 0], [0, 2], [3, 7], [0, 0]]
    segments = [None, 0, 0, 0, None, 1, 1, None]
    # [4, 9) touches "film" (4-8) only; [8, 9) touches nothing (a space); segment 1's [0, 1) its first word.
    spans = read_spans([[4, 9], [8, 9], [0, 1, 1]], ["the film was", "an ok one"], "in")
    assert evidence_tokens(offsets, segments, spans) == [False, False, True, False, False, True, False, False]
    # The same characters in segment 0 mark the first text's word, not the second's.
    assert evidence_tokens(offsets, segments, ((0, 1, 0),)) == [False, True, False, False, False, False, False, False]


@pytest.mark.parametrize(("value", "texts", "said"), [
    ("0-3", ["abc"], "must be a list"),
    ([[0]], ["abc"], "must be [start, end]"),
    ([[0, 1.5]], ["abc"], "whole numbers"),
    ([[True, 2]], ["abc"], "whole numbers"),
    ([[2, 2]], ["abc"], "start before end"),
    ([[0, 4]], ["abc"], "within its text of 3 characters"),
    ([[-1, 2]], ["abc"], "within its text"),
    ([[0, 1, 1]], ["abc"], "a single text has segment 0 only"),
    ([[0, 1, 2]], ["abc", "de"], "a pair has segments 0 and 1"),
    ([[0, 3, 1]], ["abc", "de"], "within its text of 2 characters"),
])
def test_bad_spans_are_one_line_naming_the_span(value, texts, said):
    with pytest.raises(BadInput, match="^in.jsonl:3: evidence") as raised:
        read_spans(value, texts, "in.jsonl:3")
    assert said in str(raised.value) and "\n" not in str(raised.value)
