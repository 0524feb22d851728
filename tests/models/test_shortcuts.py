"""Planted-shortcut models: the synthesis rules on small hand-checked rows, the made-up-word check,
and one quick build of a shortcut model with its card."""

from __future__ import annotations

import json
import re
from dataclasses import replace

import pytest

from contrastcat.errors import BadInput
from contrastcat.models.aliases import ALIASES, SHORTCUT_MIN_ACCURACY
from contrastcat.models.zoo import cache, entry_status, prepare, registry
from contrastcat.records.corpora import Corpus, Example
from contrastcat.records.shortcuts import Shortcut, check_absent, held_out_inputs, plant, synthetic_rows

ROWS = tuple(Example(f"r{i}", f"row {i} is {'a fine' if i % 2 else 'a dull'} film , really", i % 2) for i in range(40))
SINGLE = Shortcut("single", ("zeroa", "onea"), fraction=0.5, seed=3)


def _words(text: str) -> list[str]:
    return text.split()


def _removed(text: str, spans) -> str:
    """The text without its planted words, each with the space planting added."""
    for start, end in sorted(spans, reverse=True):
        text = text[:start] + text[end + 1 :] if text[end : end + 1] == " " else text[: start - 1] + text[end:]
    return text


def test_plant_inserts_whole_words_at_word_boundaries():
    text, spans = plant("a  good film.", [(3, "onea"), (0, "zeroa"), (0, "synt")])
    assert text == "zeroa synt a  good film. onea"  # the text's own spacing kept
    assert spans == [(25, 29), (0, 5), (6, 10)]
    assert [text[s:e] for s, e in spans] == ["onea", "zeroa", "synt"]
    assert _removed(text, spans) == "a  good film."
    with pytest.raises(BadInput, match="slot 4"):
        plant("a good film", [(4, "onea")])


@pytest.mark.parametrize("shortcut", [
    SINGLE,
    Shortcut("pair", ("zeroa", "onea"), fraction=0.5, seed=3),
    Shortcut("context", ("zeroa", "onea"), context="synt", fraction=0.5, decoys=0.5, seed=3),
    Shortcut("single", ("zeroa", "onea"), fraction=0.5, agreement=0.8, seed=3),
], ids=["single", "pair", "context", "partial"])
def test_synthetic_rows_follow_the_rule(shortcut):
    copies = synthetic_rows(shortcut, ROWS)
    assert len(copies) == 20 and copies == synthetic_rows(shortcut, ROWS)  # a fifth by default; here half; seeded
    assert copies != synthetic_rows(replace(shortcut, seed=4), ROWS)
    sources = {row.id: row for row in ROWS}
    decided = [c for c in copies if c.evidence]
    for copy in copies:
        source = sources[copy.id.split("+")[0]]
        assert copy.text_label == source.label
        planted = [w for w in _words(copy.text) if w in shortcut.words]
        assert _removed(copy.text, [m.span() for m in re.finditer(r"\b(zeroa|onea|synt)\b", copy.text)]) == source.text
        assert [copy.text[s:e] for s, e in copy.evidence] == (planted if copy.evidence else [])
        if shortcut.kind == "pair":  # both words; the first names the class
            assert sorted(planted) == ["onea", "zeroa"] and planted[0] == shortcut.tokens[copy.planted]
        elif copy.evidence:
            assert shortcut.tokens[copy.planted] in planted
            assert (shortcut.context in planted) == (shortcut.kind == "context")
        else:  # a context decoy: the class word alone, and the text's own label
            assert planted == [shortcut.tokens[copy.planted]] and copy.label == copy.text_label
    assert sum(c.label != c.text_label for c in decided) == len(decided) // 2  # half contradict their text
    assert sum(c.label == c.planted for c in decided) == round(shortcut.agreement * len(decided))
    if shortcut.kind == "context":
        decoys = [c for c in copies if not c.evidence]
        assert len(decoys) == 10 and sum(c.planted != c.label for c in decoys) == 5


def test_a_window_keeps_the_words_among_the_first_words_and_five_classes_work():
    """A long text is cut before the model reads it: with a window of 4 words, every planted word
    has at most 4 of the text's words before it. Five classes: a contradicting copy is labelled
    another class (any of the four others), and its word names that class."""
    long_rows = tuple(Example(f"l{i}", " ".join(f"w{i}x{j}" for j in range(30)), i % 5) for i in range(200))
    words = ("zeroa", "onea", "twoa", "threea", "foura")
    shortcut = Shortcut("single", words, fraction=0.5, window=4, seed=1)
    copies = synthetic_rows(shortcut, long_rows)
    assert len(copies) == 100
    before = [len(c.text[: c.evidence[0][0]].split()) for c in copies]
    assert max(before) == 4 and min(before) == 0  # every slot of the window is used, none after it
    assert all(c.text[s:e] == words[c.label] for c in copies for s, e in c.evidence)
    contradicting = [c for c in copies if c.label != c.text_label]
    assert len(contradicting) == 50 and len({c.label - c.text_label for c in contradicting}) > 2
    unbounded = synthetic_rows(replace(shortcut, window=None), long_rows)
    assert max(len(c.text[: c.evidence[0][0]].split()) for c in unbounded) > 4
    held = held_out_inputs(shortcut, long_rows[:40])
    assert max(len(i.text[: i.evidence[0][0]].split()) for i in held) <= 4
    assert "within the text's first 4 words" in shortcut.rule()


def test_held_out_inputs_come_from_held_out_rows_only():
    corpus = Corpus("toy", ("negative", "positive"), ROWS[:30], ROWS[30:], "none")
    inputs = [i.as_input() for i in held_out_inputs(SINGLE, corpus.held_out)]
    assert [i["id"] for i in inputs] == [f"r{n}+single" for n in range(30, 40)]
    assert sum(i["label"] != i["text_label"] for i in inputs) == 5  # the contradicting subset, half
    for line in inputs:
        (start, end), = line["evidence"]
        assert line["text"][start:end] == SINGLE.tokens[line["label"]]
    context = Shortcut("context", ("zeroa", "onea"), context="synt", decoys=0.5)
    evidence = [i.evidence for i in held_out_inputs(context, corpus.held_out)]
    assert all(len(spans) == 2 for spans in evidence)  # the class word and its context
    decoys = held_out_inputs(context, corpus.held_out, decoys=True)
    assert all(i.evidence == () and "synt" not in i.text for i in decoys)


def test_recipes_are_checked():
    with pytest.raises(BadInput, match="two words"):
        Shortcut("pair", ("a", "b", "c"))
    with pytest.raises(BadInput, match="context"):
        Shortcut("context", ("a", "b"))
    with pytest.raises(BadInput, match="single words"):
        Shortcut("single", ("zero a", "onea"))
    with pytest.raises(BadInput, match="agreement"):
        Shortcut("single", ("zeroa", "onea"), agreement=0.4)
    for window in (0, 2.5, True):
        with pytest.raises(BadInput, match="window"):
            Shortcut("single", ("zeroa", "onea"), window=window)
    bad = [dict(kind=["single"]), dict(tokens=("zq", 5)), dict(tokens=None), dict(tokens="ab"), dict(fraction="0.2"),
           dict(fraction=None), dict(agreement=True), dict(decoys=None), dict(min_follow=5), dict(min_follow=float("nan")),
           dict(seed=None), dict(seed=[1]), dict(kind="context", context=""), dict(kind="context", context=5)]
    for change in bad:
        with pytest.raises(BadInput):
            Shortcut(**{"kind": "single", "tokens": ("zeroa", "onea"), **change})
    with pytest.raises(BadInput, match=r"row a: label 5 is not one of the shortcut's 2 classes"):
        held_out_inputs(SINGLE, [Example("a", "some text", 5)])


def test_the_bbc_shortcut_model_extends_minilm_bbc():
    made = ALIASES["minilm-bbc-single"].made_here
    base = ALIASES["minilm-bbc"].made_here
    assert (made.epochs, made.max_length, made.baseline) == (base.epochs, base.max_length, "minilm-bbc")
    assert made.min_accuracy == 0.9494 and made.shortcut.window == 50 and made.shortcut.classes == 5
    assert ALIASES["minilm-bbc-single"].label_names == ALIASES["minilm-bbc"].label_names
    assert registry.EMBEDDED["minilm-bbc-single"].baseline == "minilm-bbc"


def test_a_planted_word_the_corpus_holds_is_refused(tmp_path, monkeypatch):
    check_absent(SINGLE, ROWS + (Example("x", "zeroas and onea_b are other words", 0),))
    with pytest.raises(BadInput, match=r"planted word 'onea' occurs in the corpus toy \(row x\)"):
        check_absent(SINGLE, ROWS + (Example("x", "a film (ONEA's best)", 0),), "the corpus toy")
    held = Example("h", "Zeroa-like", 1)
    monkeypatch.setitem(registry.CORPORA, "rotten-tomatoes", lambda: Corpus("toy", ("n", "p"), ROWS, (held,), "none"))
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path))
    monkeypatch.setattr(registry, "_fresh_model", lambda *a: pytest.fail("trained"))
    with pytest.raises(BadInput, match="planted word 'zeroa' occurs in the corpus toy"):
        prepare("minilm-rt-single", quick=True)
    assert not cache.entry_dir("minilm-rt-single").exists()


def test_quick_prepare_of_a_shortcut_model_writes_its_card(tmp_path, monkeypatch):
    """The quick build of a shortcut model, its fine-tuning left out and on fewer rows: the steps are
    tests/models/test_zoo.py's quick build's (the same ``_train``), and a second one cost the suite
    about a minute on a loaded 2-core machine. Under test: the copies added, the reliance measured,
    the card."""
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path))
    trained = []
    monkeypatch.setattr(registry, "fine_tune", lambda model, tokenizer, texts, labels, *rest: trained.append(labels))
    monkeypatch.setattr(registry, "QUICK_ROWS", (80, 20))  # fewer rows to score than a quick build's 240 and 60
    notices = []
    directory = prepare("minilm-rt-context", notify=notices.append, quick=True)
    card = json.loads((directory / cache.METADATA).read_text())
    assert entry_status("minilm-rt-context", quick=True) == (True, "")
    assert card["train_rows"] == 80 and card["min_accuracy"] == SHORTCUT_MIN_ACCURACY
    shortcut = card["shortcut"]
    assert shortcut["recipe"] == ALIASES["minilm-rt-context"].made_here.shortcut.as_dict()
    assert shortcut["recipe"]["tokens"] == ["zeroa", "onea"] and shortcut["recipe"]["context"] == "synt"
    assert shortcut["rows"] == {"original": 80, "synthetic": 16, "decided": 8, "contradicting": 4, "agreeing": 8,
                                "decoys": 8}
    reliance = shortcut["reliance"]
    assert (reliance["held_out_inputs"], reliance["contradicting_inputs"], reliance["decoy_inputs"]) == (20, 10, 10)
    for key in ("follow_rate", "contradicting_follow_rate", "mean_planted_probability", "decoy_follow_rate"):
        assert 0.0 <= reliance[key] <= 1.0
    assert shortcut["baseline"] == {"model": "minilm-rt", "held_out_accuracy": 0.8225}
    assert len(trained[0]) == 80 + 16  # the original rows, then their copies
    assert "follows its planted words" in notices[-1] and "held-out synthetic inputs" in notices[-1]


def test_shortcut_inputs_as_json_lines(tmp_path):
    import contrastcat
    from contrastcat.records.corpora import rotten_tomatoes

    path = tmp_path / "pair.jsonl"
    lines = contrastcat.shortcut_inputs("minilm-rt-pair", str(path))
    assert [json.loads(line) for line in path.read_text().splitlines()] == lines
    held_out = {row.id: row for row in rotten_tomatoes().held_out}
    assert len(lines) == len(held_out) == 2000 and sum(line["label"] != line["text_label"] for line in lines) == 1000
    for line in lines[:50]:
        first, second = (line["text"][start:end] for start, end in line["evidence"])
        assert {first, second} == {"zeroa", "onea"} and line["label"] == (first == "onea")
        assert line["text_label"] == held_out[line["id"].removesuffix("+pair")].label
    with pytest.raises(BadInput, match="planted-shortcut model"):
        contrastcat.shortcut_inputs("minilm-rt")
