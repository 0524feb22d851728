"""A record whose tokens and offsets disagree is refused (file, line, which token), never
evaluated by one and shown by the other. Before, nothing compared them: evaluate aligned the
scores by the offsets, render printed the tokens, and an edited pair text passed too."""

from __future__ import annotations

import json

import pytest

import contrastcat
from contrastcat.errors import BadInput
from contrastcat.models.tokens import tokenize
from contrastcat.records.record import check_record
from contrastcat.testing import tiny

from ..helpers import assert_one_line_error, invoke


def _elsewhere(**change):
    record = {"id": "r1", "text": "a good film", "tokens": ["a", "good", "film"],
              "offsets": [[0, 1], [2, 6], [7, 11]], "scores": [0.1, 0.9, 0.2], "target": 1}
    record.update(change)
    return record


def test_tokens_that_are_not_the_text_at_their_offsets_are_refused(tmp_path):
    path = tmp_path / "elsewhere.jsonl"
    lines = [_elsewhere(), _elsewhere(id="r2", tokens=["a", "bad", "film"])]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    for command in (["render", path], ["render", path, "--html", tmp_path / "page.html"]):
        result = invoke(*command)
        assert_one_line_error(result, f"{path}:2: token 1 'bad' is not the text at its offsets [2, 6) ('good')",
                              "'tokens' and 'offsets' disagree")
    assert not (tmp_path / "page.html").exists()
    with pytest.raises(BadInput, match=r"<lines>:1: token 1 'bad' is not the text"):
        contrastcat.read_records([json.dumps(lines[1])])


def test_an_edited_record_of_the_tool_is_refused(toy_dir, tmp_path):
    out = tmp_path / "attr.jsonl"
    assert invoke("explain", toy_dir / "inputs.jsonl", "--model", toy_dir / "model", "--method", "rawatt",
                  "-o", out, "-q").exit_code == 0
    first = json.loads(out.read_text().splitlines()[0])
    word = next(i for i, t in enumerate(first["tokens"]) if t.isalpha() and not first["special"][i])
    edited = dict(first, text=first["text"].replace(first["tokens"][word], "x" * len(first["tokens"][word]), 1))
    path = tmp_path / "edited.jsonl"
    path.write_text(json.dumps(edited) + "\n")
    assert_one_line_error(invoke("evaluate", path, "-q"), f"{path}:1: token {word} ", "'tokens' and 'offsets' disagree")


@pytest.mark.parametrize("kind", ["bert", "roberta", "gpt2", "llama", "albert", "deberta-v2"])
def test_every_family_tokenizer_gives_records_that_agree(kind):
    """No false refusal: what each family's tokenizer gives for text with case, accents,
    punctuation, an emoji and odd spaces, single and paired, is accepted as it is."""
    tokenizer = tiny.make_tokenizer(kind)
    texts = ["The Film was GREAT, naïve café!", "it's   3.14 🙂\tdull\nworse", "Ünïcödé  wörds; (brackets) [x]",
             "фильм был ужасный, 映画は良い 🎬"]
    for pairs in (None, list(reversed(texts))):
        for number, tokens in enumerate(tokenize(tokenizer, texts, 64, pairs=pairs)):
            record = {"id": number, "text": texts[number], "tokens": list(tokens.tokens), "offsets": [list(o) for o in tokens.offsets],
                      "token_ids": list(tokens.ids), "scores": [0.0] * len(tokens), "target": 0}
            if pairs is not None:
                record.update(pair=pairs[number], segments=list(tokens.segments))
            check_record(record, f"{kind}:{number}")


def test_a_pair_whose_second_text_was_edited_is_refused():
    tokenizer = tiny.make_tokenizer("bert")
    (tokens,) = tokenize(tokenizer, ["a good film"], 64, pairs=["a dull plot"])
    record = {"id": 0, "text": "a good film", "pair": "a fine plot", "tokens": list(tokens.tokens),
              "offsets": [list(o) for o in tokens.offsets], "token_ids": list(tokens.ids),
              "segments": list(tokens.segments), "scores": [0.0] * len(tokens), "target": 0}
    with pytest.raises(BadInput, match=r"token \d+ 'dull' is not the text at its offsets \[2, 6\) \('fine'\)"):
        check_record(record, "edited")


def test_tokens_of_nfkc_normalising_tokenizers_agree_with_their_spans():
    """XLM-R, ALBERT, T5 and DeBERTa normalise with NFKC: a ligature, full-width letters or a
    superscript digit become plain ones in the token, not in the text."""
    for text, token in [("a ﬁlm", "▁film"), ("ｇｏｏｄ", "▁good"), ("x²", "2")]:
        start = text.index(text.split()[-1]) if " " in text else (1 if token == "2" else 0)
        record = {"id": 0, "text": text, "tokens": [token], "offsets": [[start, len(text)]], "scores": [1.0], "target": 0}
        check_record(record, "nfkc")


@pytest.mark.parametrize("kind", ["roberta", "gpt2"])
def test_byte_level_tokens_of_any_script_are_checked(kind):
    """Byte-level tokens of non-Latin text (two tokens per Cyrillic letter, the same span) are
    compared as the bytes they stand for: an edited word or reversed offsets are refused."""
    text = "фильм был ужасный, но музыка прекрасная"
    (tokens,) = tokenize(tiny.make_tokenizer(kind), [text], 128)
    record = {"id": 0, "text": text, "tokens": list(tokens.tokens), "offsets": [list(o) for o in tokens.offsets],
              "token_ids": list(tokens.ids), "scores": [0.0] * len(tokens), "target": 0}
    check_record(record, kind)
    with pytest.raises(BadInput, match="'tokens' and 'offsets' disagree"):
        check_record(dict(record, text=text.replace("ужасный", "хороший")), kind)
    with pytest.raises(BadInput, match="'tokens' and 'offsets' disagree"):
        check_record(dict(record, offsets=record["offsets"][::-1]), kind)
