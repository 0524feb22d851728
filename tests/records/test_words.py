"""Words as a reader calls them (contrastcat.records.words): punctuation is a unit of its own,
never summed into the word beside it, and every family's pieces join into whole words. The
expected words and scores are worked out here by hand, or by spreading each token's score over
its characters (a plain loop, not the module's)."""

from __future__ import annotations

import pytest

from contrastcat.records.record import AttributionRecord
from contrastcat.records.words import Piece, scored_units, units
from contrastcat.testing import tiny


# What a record holds besides its text, tokens and scores (none of it read for words).
OTHER = {"target_name": "pos", "probs": [0.1, 0.9], "predicted": 1, "label": None, "model": "m",
         "model_fingerprint": "", "library": None}


def _texts(text: str) -> list[str]:
    return [text[u.start:u.end] for u in units(text)]


@pytest.mark.parametrize("text, expected", [
    ("Dull, tedious.", ["Dull", ",", "tedious", "."]),
    ("isn't it's that’s well-made", ["isn't", "it's", "that’s", "well-made"]),
    ("3.5 stars, 1,000 times...", ["3.5", "stars", ",", "1,000", "times", "..."]),
    ("(great)!? 'quoted'", ["(", "great", ")!?", "'", "quoted", "'"]),
    ("电影很好 film电影", ["电", "影", "很", "好", "film", "电", "影"]),
    ("cafe\u0301 हिन्दी naïve", ["cafe\u0301", "हिन्दी", "naïve"]),
    ("nul\x00here \u202ereversed", ["nul", "here", "reversed"]),  # controls part words, are none
    ("snake_case __x", ["snake", "_", "case", "__", "x"]),
])
def test_a_text_is_cut_into_the_words_a_reader_sees(text, expected):
    assert _texts(text) == expected


def test_dull_comma_keeps_dull_on_the_side_attcat_put_it():
    """AttCAT's "Dull" +0.84 and its comma -1.00 (WordPiece: "dull", ","): two units, not
    "Dull," at -0.16."""
    record = AttributionRecord(
        id=1, text="Dull, tedious.", tokens=["[CLS]", "dull", ",", "ted", "##ious", ".", "[SEP]"],
        scores=[0.5, 0.92, 0.0, 0.3, 0.4, 0.1, 0.5], raw_scores=[0.0, 0.84, -1.0, 0.2, 0.3, -0.1, 0.0],
        offsets=[[0, 0], [0, 4], [4, 5], [6, 9], [9, 13], [13, 14], [0, 0]],
        special=[True, False, False, False, False, False, True], target=1, method="attcat",
        token_ids=[2, 10, 11, 12, 13, 14, 3], **OTHER,
    )
    words = {w.text: w.raw for w in record.word_scores()}
    assert words == {"Dull": 0.84, ",": -1.0, "tedious": 0.5, ".": -0.1}


def test_each_rule_on_hand_worked_pieces():
    text = "tedious film"
    pieces = [Piece(0, 3, 0.2), Piece(3, 7, -0.6), Piece(8, 12, 0.5)]
    got = {rule: [round(u.score, 9) for u in scored_units([text], pieces, rule)] for rule in ("sum", "mean", "max")}
    assert got == {"sum": [-0.4, 0.5], "mean": [-0.2, 0.5], "max": [-0.6, 0.5]}
    assert [u.pieces for u in scored_units([text], pieces)] == [2, 1]
    # A token over two words gives each a share by the characters it covers there.
    assert [u.score for u in scored_units(["ab, cd"], [Piece(0, 3, 0.9), Piece(4, 6, 0.1)])] == [0.6, 0.3, 0.1]
    with pytest.raises(ValueError, match="rule must be one of auto, sum, mean, max"):
        scored_units([text], pieces, "median")


@pytest.mark.parametrize("count", [1, 2, 3])
def test_a_words_score_does_not_grow_with_its_pieces(count):
    """The same evidence split over one, two or three pieces (a conserved relevance: sum) gives
    the same word score; the same score on each piece (a map that scores pieces alike: mean or
    max) does too."""
    text = "tedious"
    cuts = [round(i * len(text) / count) for i in range(count + 1)]
    split = [Piece(a, b, 0.6 / count) for a, b in zip(cuts, cuts[1:])]
    alike = [Piece(a, b, 0.6) for a, b in zip(cuts, cuts[1:])]
    assert scored_units([text], split, "sum")[0].score == pytest.approx(0.6, abs=1e-12)
    assert scored_units([text], alike, "mean")[0].score == pytest.approx(0.6, abs=1e-12)
    assert scored_units([text], alike, "max")[0].score == 0.6


TEXT = "Dull, tedious film; isn't it great?!"
PAIR = "A warm (and funny) story."


def _record_of(kind: str, text: str, pair: str | None) -> AttributionRecord:
    """The family's tokenizer's own tokens and offsets for the text (and its pair); each token
    scores +0.25, one made of symbols only -1.0."""
    tokenizer = tiny.make_tokenizer(kind)
    encoded = tokenizer(text, pair, return_offsets_mapping=True, return_special_tokens_mask=True)
    ids, offsets, special = encoded["input_ids"], encoded["offset_mapping"], encoded["special_tokens_mask"]
    segments = encoded.sequence_ids() if pair is not None else None
    texts = [text, pair]
    raw = []
    for (start, end), is_special, segment in zip(offsets, special, segments or [0] * len(ids)):
        shown = texts[segment or 0][start:end].strip() if not is_special else ""
        raw.append(0.0 if is_special else (-1.0 if shown and not any(c.isalnum() for c in shown) else 0.25))
    return AttributionRecord(
        id=kind, text=text, pair=pair, tokens=tokenizer.convert_ids_to_tokens(ids), token_ids=ids,
        offsets=[list(o) for o in offsets], special=[bool(s) for s in special], scores=[abs(v) for v in raw],
        raw_scores=raw, target=0, method="hand", segments=segments, **OTHER,
    )


def _spread(record: AttributionRecord, segment: int, text: str) -> list[float]:
    """Each token's raw score spread evenly over its characters (leading white space left out)."""
    per_character = [0.0] * len(text)
    for (start, end), score, special, seg in zip(record.offsets, record.raw_scores, record.special,
                                                 record.segments or [0] * len(record.offsets)):
        if special or (seg or 0) != segment:
            continue
        while start < end and text[start].isspace():
            start += 1
        for position in range(start, end):
            per_character[position] += score / (end - start)
    return per_character


@pytest.mark.parametrize("kind", sorted(tiny.TINY))
def test_every_familys_pieces_join_into_whole_words_and_punctuation_stays_apart(kind):
    pair = PAIR if kind in ("bert", "roberta", "llama") else None
    record = _record_of(kind, TEXT, pair)
    words = record.word_scores()
    expected = _texts(TEXT) + (_texts(PAIR) if pair else [])
    assert [w.text for w in words] == expected
    for word in words:
        text = TEXT if word.segment == 0 else PAIR
        per_character = _spread(record, word.segment, text)
        assert word.raw == pytest.approx(sum(per_character[word.start:word.end]), abs=1e-6), (kind, word)
    by_text = {(w.text, w.segment): w.raw for w in words}
    assert by_text[("Dull", 0)] > 0 and by_text[(",", 0)] < 0 and by_text[("?!", 0)] < 0
    if pair:
        assert by_text[("(", 1)] < 0 and by_text[("funny", 1)] > 0 and by_text[(")", 1)] < 0


def test_auto_sums_a_signed_map_and_takes_an_unsigned_ones_strongest_piece():
    """A signed map (some piece below 0) is a relevance that adds up: its words sum their pieces.
    An unsigned one scores each piece on its own scale: a word is its strongest piece, so three
    pieces of 0.6 are not 1.8 beside a one-piece word's 0.9."""
    text = "videotapes good"
    unsigned = [Piece(0, 5, 0.6), Piece(5, 7, 0.6), Piece(7, 10, 0.6), Piece(11, 15, 0.9)]
    assert [u.score for u in scored_units([text], unsigned)] == [0.6, 0.9]
    signed = [Piece(0, 5, 0.6), Piece(5, 7, -0.2), Piece(7, 10, 0.1), Piece(11, 15, 0.3)]
    assert [round(u.score, 9) for u in scored_units([text], signed)] == [0.5, 0.3]


def test_top_lists_words_unless_told_tokens(tmp_path):
    """``render --top`` names "tedious", not its piece "ted" (``--no-words``: the pieces)."""
    import json

    from ..helpers import invoke

    record = AttributionRecord(
        id=1, text="Dull, tedious.", tokens=["[CLS]", "dull", ",", "ted", "##ious", ".", "[SEP]"],
        scores=[0.0, 0.3, 0.1, 1.0, 0.9, 0.2, 0.0], offsets=[[0, 0], [0, 4], [4, 5], [6, 9], [9, 13], [13, 14], [0, 0]],
        special=[True, False, False, False, False, False, True], target=1, method="another-tool",  # unsigned
        token_ids=[2, 10, 11, 12, 13, 14, 3], **OTHER,
    )
    path = tmp_path / "records.jsonl"
    path.write_text(json.dumps(record.to_dict()) + "\n")
    words = invoke("render", path, "--top", "2", "--color", "never")
    assert words.exit_code == 0 and words.stdout.endswith(": tedious 1.00, Dull 0.22\n"), words.stdout
    tokens = invoke("render", path, "--top", "2", "--color", "never", "--no-words")
    assert tokens.exit_code == 0 and tokens.stdout.endswith(": ted 1.00, ious 0.89\n"), tokens.stdout
