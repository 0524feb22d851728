"""summarize: what a classifier relies on across a dataset, on models whose important words are known.

- the toy classifier (contrastcat.testing.toy) decides by planted keywords: each class's keywords
  come first for it, with intervals above 0, and no filler word is a candidate shortcut;
- a toy trained where the filler word "camera" comes with the positive class only (and, in some
  positive sentences, stands in for the keyword) flags "camera" as a shortcut on held-out inputs
  where it comes with every class alike;
- the gate exits 3 on a planted keyword and 0 on a word the model ignores, from the CLI and Python;
- hand-made records: the values by hand, a word's value not growing with its pieces, bad input.
"""

from __future__ import annotations

import json
import random

import pytest

import contrastcat
from contrastcat.records.record import AttributionRecord
from contrastcat.testing import toy

from ..helpers import assert_bad_input, assert_one_line_error, invoke

KEYWORDS = {"positive": set(toy.POSITIVE), "negative": set(toy.NEGATIVE)}
HELD_OUT = 240


def _explain(classifier, examples):
    inputs = [{"id": i, "text": e.text, "label": toy.LABELS[e.label]} for i, e in enumerate(examples)]
    return contrastcat.explain(classifier, inputs, method="attnlrp", batch_size=64)


@pytest.fixture(scope="module")
def planted(toy_classifier):
    return _explain(toy_classifier, toy.make_examples(HELD_OUT, seed=11))


@pytest.fixture(scope="module")
def planted_file(planted, tmp_path_factory):
    path = tmp_path_factory.mktemp("summarize") / "attr.jsonl"
    planted.save(str(path))
    return path


def test_each_class_planted_keywords_come_first(planted):
    summary = contrastcat.summarize(planted, top=5)
    for name, keywords in KEYWORDS.items():
        (group,) = [g for g in summary.words() if g.name == name]
        assert group.for_class[0].word in keywords, group.for_class
        assert group.for_class[0].interval is not None and group.for_class[0].interval.low > 0
        shown = [w.word for w in group.for_class]
        common = [w for w in keywords if any(s.word == w for s in group.for_class)]
        assert set(shown[: len(common)]) == set(common), shown  # no filler above a keyword
    fillers = set(toy.FILLER)
    assert not [s.word for s in summary.shortcuts if s.word in fillers], summary.shortcuts


def _shortcut_examples(count: int, seed: int) -> list[toy.ToyExample]:
    """Training rows where "camera" comes with the positive class only: never in another class's
    sentences; in 60% of positive ones, and there standing in for the keyword half the time."""
    rng = random.Random(seed)
    others = [w for w in toy.FILLER if w != "camera"]
    rows = []
    for example in toy.make_examples(count, seed):
        words = [w if w != "camera" else rng.choice(others) for w in example.text.split()]
        if example.label == 1 and rng.random() < 0.6:
            if rng.random() < 0.5:
                words = [rng.choice(others) if w in toy.POSITIVE else w for w in words]
            words.insert(rng.randint(0, len(words)), "camera")
        rows.append(toy.ToyExample(" ".join(words), example.label, ()))
    return rows


@pytest.fixture(scope="module")
def shortcut_records():
    from contrastcat.models import wrap_classifier

    model, tokenizer = toy.train_toy_classifier(_shortcut_examples(2000, 3), seed=0, epochs=2)
    classifier = wrap_classifier(model, tokenizer, name="shortcut-toy")
    # Held out: "camera" in a third of the sentences, whatever their class.
    rng = random.Random(8)
    held_out = []
    for example in toy.make_examples(HELD_OUT, seed=21):
        words = [w for w in example.text.split() if w != "camera"]
        if rng.random() < 1 / 3:
            words.insert(rng.randint(0, len(words)), "camera")
        held_out.append(toy.ToyExample(" ".join(words), example.label, ()))
    return _explain(classifier, held_out)


def test_a_word_that_came_with_one_class_in_training_is_a_shortcut(shortcut_records):
    summary = contrastcat.summarize(shortcut_records)
    flagged = {(s.word, s.name) for s in summary.shortcuts}
    assert ("camera", "positive") in flagged, summary.shortcuts
    (camera,) = [s for s in summary.shortcuts if s.word == "camera"]
    assert camera.rate - camera.support >= 0.1 and camera.excess.low > 0
    assert camera.examples and all("camera" in e.record.text.split() for e in camera.examples)
    assert summary.methods[0].support == "gold labels"


def test_the_gate_from_python(planted):
    hit = contrastcat.summarize(planted, top=5, forbid="great")
    assert any("'great'" in p and "'positive'" in p for p in hit.problems), hit.problems
    ignored = _ignored_word(planted)
    assert contrastcat.summarize(planted, top=5, forbid=[ignored]).problems == []


def _ignored_word(records) -> str:
    """A filler word in none of the classes' top 5 words and no shortcut."""
    summary = contrastcat.summarize(records, top=5)
    shown = {w.word for g in summary.classes for w in g.for_class} | {s.word for s in summary.shortcuts}
    return next(w for w in toy.FILLER if w not in shown)


def test_the_gate_on_the_command_line(planted, planted_file, tmp_path):
    result = invoke("summarize", planted_file, "--top", "5", "--forbid", "great,terrible", "-o", tmp_path / "s.json")
    assert result.exit_code == 3, result.output
    hits = [line for line in result.stderr.splitlines() if "forbidden word" in line]
    assert any("'great'" in line for line in hits) and any("'terrible'" in line for line in hits)
    written = json.loads((tmp_path / "s.json").read_text())
    assert written["problems"] and written["classes"]  # the summary is written before the exit
    words = tmp_path / "words.txt"
    words.write_text(f"# words the model must not use\n{_ignored_word(planted)}\n")
    result = invoke("summarize", planted_file, "--top", "5", "--forbid-file", words, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["problems"] == []


def test_the_outputs(planted_file, tmp_path):
    page = tmp_path / "words.html"
    result = invoke("summarize", planted_file, "--html", page, "--markdown")
    assert result.exit_code == 0, result.output
    assert "| for | " in result.stdout and page.read_text().startswith("<!DOCTYPE html>")
    result = invoke("summarize", planted_file, "--json", "-o", "-")
    assert_one_line_error(result, "-o -", "--json")


# --- hand-made records ------------------------------------------------------------------------


def _record(text, pieces, raw, line_id, label="pos", target=1, predicted=1, **more) -> AttributionRecord:
    """A record of ``text`` whose tokens are ``pieces`` ((start, end) spans), scored ``raw``."""
    count = len(pieces)
    scaled = [round((v - min(raw)) / ((max(raw) - min(raw)) or 1), 6) for v in raw]
    values = dict(
        id=line_id, text=text, tokens=[text[a:b] for a, b in pieces], token_ids=list(range(5, 5 + count)),
        offsets=[list(p) for p in pieces], special=[False] * count, scores=scaled, raw_scores=raw, target=target,
        target_name=["neg", "pos"][target], probs=[0.2, 0.8] if predicted else [0.8, 0.2], predicted=predicted,
        label=label, method="m", model="hand", model_fingerprint="f", library=None,
    )
    values.update(more)
    return AttributionRecord(**values)


def test_means_by_hand():
    # "good film" twice and "good bad" once, signed maps: each input divided by its largest magnitude.
    records = [
        _record("good film", [(0, 4), (5, 9)], [2.0, -1.0], 1),   # good 1, film -0.5
        _record("good film", [(0, 4), (5, 9)], [1.0, 1.0], 2),    # good 1, film 1
        _record("good bad", [(0, 4), (5, 8)], [0.5, -2.0], 3),    # good 0.25, bad -1
    ]
    summary = contrastcat.summarize(records, min_count=1, bootstrap=0)
    (group,) = summary.words()
    found = {w.word: w for w in group.for_class + group.against}
    assert found["good"].mean == pytest.approx((1 + 1 + 0.25) / 3)
    assert found["film"].mean == pytest.approx(0.25) and found["bad"].mean == pytest.approx(-1.0)
    assert found["good"].top_for == pytest.approx(1.0)  # the strongest word for the class in all 3
    assert found["bad"].top_against == pytest.approx(1 / 3)
    assert summary.methods[0].rule == "sum"


@pytest.mark.parametrize("signed", [True, False])
def test_a_word_scores_the_same_whatever_its_pieces(signed):
    """The same evidence on "tedious" as 1, 2 or 3 pieces: the same value, so the same rank.
    Signed maps split it (the pieces sum to the word's), unsigned ones score each piece."""
    splits = {1: [(0, 7)], 2: [(0, 3), (3, 7)], 3: [(0, 2), (2, 5), (5, 7)]}
    ranks = {}
    for count, pieces in splits.items():
        records = []
        for index in range(12):
            share = (0.9 / count) if signed else 0.9
            raw = [share] * count + [0.3, -0.2 if signed else 0.1]
            records.append(_record("tedious a plot", pieces + [(8, 9), (10, 14)], raw, index))
        (group,) = contrastcat.summarize(records, bootstrap=0).words()
        ranks[count] = [(w.word, round(w.mean, 6)) for w in group.for_class]
    assert ranks[1] == ranks[2] == ranks[3], ranks


def test_records_of_two_models_are_refused(tmp_path):
    first = _record("good film", [(0, 4), (5, 9)], [2.0, -1.0], 1)
    other = _record("good film", [(0, 4), (5, 9)], [2.0, -1.0], 2, model_fingerprint="g")
    path = tmp_path / "mixed.jsonl"
    path.write_text(first.to_json() + "\n" + other.to_json() + "\n")
    assert_bad_input(lambda: contrastcat.summarize_file(str(path)), f"{path}:2", "another model")
    path.write_text(first.to_json() + "\n{not json\n")
    assert_one_line_error(invoke("summarize", path), f"{path}:2")


def test_two_libraries_of_one_method_are_refused():
    records = [_record("good film", [(0, 4), (5, 9)], [2.0, -1.0], i, library=lib) for i, lib in enumerate("ab")]
    assert_bad_input(lambda: contrastcat.summarize(records), "another reference library")


def test_a_forbidden_phrase_is_refused(planted):
    assert_bad_input(lambda: contrastcat.summarize(planted, forbid="new york"), "not one word")


def test_maps_made_elsewhere_beside_this_tools():
    ours = _record("good film", [(0, 4), (5, 9)], [2.0, -1.0], 1)
    theirs = _record("good film", [(0, 4), (5, 9)], [1.0, 0.5], 2, method="captum-ig", model_fingerprint="",
                     token_ids=[])
    summary = contrastcat.summarize([ours, theirs], min_count=1, bootstrap=0)
    assert {info.method for info in summary.methods} == {"m", "captum-ig"}
    named_other = _record("good film", [(0, 4), (5, 9)], [1.0, 0.5], 3, model="another", model_fingerprint="")
    assert_bad_input(lambda: contrastcat.summarize([ours, theirs, named_other]), "another model")


def test_pairs_and_multi_label_records():
    # A pair: "good" in the first text, "dull" in the second; words of both texts are counted.
    pair = _record("good", [(0, 4), (0, 4)], [1.0, -0.5], 1, pair="dull", segments=[0, 1], tokens=["good", "dull"])
    (group,) = contrastcat.summarize([pair], min_count=1, bootstrap=0).words()
    assert {w.word: w.mean for w in group.for_class + group.against} == {"good": 1.0, "dull": -0.5}
    # Multi-label: a record's one label does not say which labels the input has: no split, and the
    # association is against the base rate.
    labels = [_record("good film", [(0, 4), (5, 9)], [1.0, 0.2], i, multi_label=True) for i in range(3)]
    summary = contrastcat.summarize(labels, min_count=1, bootstrap=0)
    assert {g.split for g in summary.classes} == {"all"} and summary.methods[0].support == "base rate"


# --- bad input: refused in one line, nothing written ----------------------------------------


def _write(path, records) -> None:
    path.write_text("".join(r.to_json() + "\n" for r in records))


def test_a_label_naming_no_class_is_refused(tmp_path):
    good = _record("good film", [(0, 4), (5, 9)], [2.0, -1.0], 1, label="pos")
    bad = _record("bad film", [(0, 3), (4, 8)], [2.0, -1.0], 2, label="neg", target=0, predicted=0)
    typo = _record("good plot", [(0, 4), (5, 9)], [2.0, -1.0], 3, label="postive")
    path = tmp_path / "typo.jsonl"
    _write(path, [good, bad, typo])
    assert_one_line_error(invoke("summarize", path), f"{path}:3", "'postive'", "names no class", "every class is named")


def test_a_label_of_a_class_no_record_names():
    """A model that predicted "pos" for every input: "neg", the other class's label, names no
    class the records name, yet is a class (one of the two is unnamed): the input is an error."""
    records = [_record("good film", [(0, 4), (5, 9)], [2.0, -1.0], i, label=label)
               for i, label in enumerate(["pos", "neg", "neg"])]
    summary = contrastcat.summarize(records, min_count=1, bootstrap=0)
    assert {(g.split, g.inputs) for g in summary.classes} == {("all", 3), ("correct", 1), ("wrong", 2)}
    two = records + [_record("good film", [(0, 4), (5, 9)], [2.0, -1.0], 9, label="other")]
    assert_bad_input(lambda: contrastcat.summarize(two), "item 3", "'other'", "1 class(es) unnamed")


def test_a_record_given_twice_is_refused(tmp_path):
    one = _record("good film", [(0, 4), (5, 9)], [2.0, -1.0], 1)
    path = tmp_path / "twice.jsonl"
    _write(path, [one, _record("bad film", [(0, 3), (4, 8)], [1.0, 0.0], 2), one])
    assert_one_line_error(invoke("summarize", path), f"{path}:3", f"{path}:1", "count twice")


def test_records_that_cannot_be_summarized_are_named(tmp_path):
    single = _record("good film", [(0, 4), (5, 9)], [2.0, -1.0], 1)
    multi = _record("good plot", [(0, 4), (5, 9)], [2.0, -1.0], 2, multi_label=True)
    assert_bad_input(lambda: contrastcat.summarize([single, multi]), "item 1", "multi-label")
    renamed = _record("bad plot", [(0, 3), (4, 8)], [2.0, -1.0], 3, target_name="positive")
    assert_bad_input(lambda: contrastcat.summarize([single, renamed]), "item 1", "class 1 is named 'positive'")
    no_probs = _record("good plot", [(0, 4), (5, 9)], [2.0, -1.0], 4, probs=[])
    assert_bad_input(lambda: contrastcat.summarize([no_probs]), "without 'probs'")
    assert_bad_input(lambda: contrastcat.summarize([]), "summarize: records")


def test_outputs_and_the_forbid_file_are_kept_apart(planted_file, tmp_path):
    words = tmp_path / "words.txt"
    words.write_text("zzz\n")
    assert_one_line_error(invoke("summarize", planted_file, "--forbid-file", words, "-o", words), str(words))
    assert words.read_text() == "zzz\n"
    assert_one_line_error(invoke("summarize", planted_file, "--html", "-", "--json"), "--html -", "--json")
    words.write_text("great\n# a comment\nnew york\n")
    assert_one_line_error(invoke("summarize", planted_file, "--forbid-file", words), f"{words}:3", "'new york'")
    assert_one_line_error(invoke("summarize", planted_file, "--forbid", ".", "--no-symbols"), "'.'", "--no-symbols")


def test_forbid_given_twice_adds_its_words(planted_file):
    result = invoke("summarize", planted_file, "--top", "5", "--forbid", "great", "--forbid", "terrible", "-q")
    assert result.exit_code == 3
    assert "'great'" in result.stderr and "'terrible'" in result.stderr


def test_the_python_views(planted):
    summary = contrastcat.summarize(planted, top=3, bootstrap=200)
    frame = summary.to_frame()
    assert list(frame.columns) == ["method", "class", "split", "side", "rank", "word", "inputs", "mean", "low", "high",
                                   "top_for", "top_against"]
    first = frame[(frame["class"] == "positive") & (frame["split"] == "all") & (frame["side"] == "for")].iloc[0]
    (group,) = [g for g in summary.words() if g.name == "positive"]
    assert first["word"] == group.for_class[0].word and first["mean"] == pytest.approx(group.for_class[0].mean)
    page = summary._repr_html_()
    assert "<table" in page and group.for_class[0].word in page
    assert json.loads(summary.to_json())["classes"][0]["for"]


def _trigger_records() -> list[AttributionRecord]:
    """12 inputs holding "trigger", all predicted pos though labelled neg, explained for their gold
    class (explain --target gold); 12 more predicted and labelled pos, explained for pos, without it."""
    triggered = [_record("trigger film", [(0, 7), (8, 12)], [2.0, 0.5], i, label="neg", target=0) for i in range(12)]
    plain = [_record("good film", [(0, 4), (5, 9)], [2.0, 0.5], 100 + i, label="pos") for i in range(12)]
    return triggered + plain


def test_records_explained_for_another_class_than_predicted():
    """The association flags "trigger" for pos, but no record explaining pos holds it: no
    attribution, so no shortcut (and no crash)."""
    summary = contrastcat.summarize(_trigger_records(), min_count=5)
    assert summary.shortcuts == []
    (wrong,) = [g for g in summary.classes if g.split == "wrong"]
    assert wrong.name == "neg" and wrong.inputs == 12  # the errors, by the class explained


def test_without_resamples_shortcuts_are_not_tested(tmp_path):
    summary = contrastcat.summarize(_trigger_records(), bootstrap=0)
    assert not summary.methods[0].shortcuts_tested and "Not tested" in summary.markdown()
    assert_bad_input(lambda: contrastcat.summarize(_trigger_records(), bootstrap=0, forbid="trigger"), "bootstrap")


def test_a_word_in_either_unicode_form_is_one_word():
    composed, decomposed = "\u00e9cole", "e\u0301cole"
    records = [_record(f"{word} film", [(0, len(word)), (len(word) + 1, len(word) + 5)], [2.0, 0.5], i)
               for i, word in enumerate([composed, decomposed] * 3)]
    summary = contrastcat.summarize(records, min_count=1, top=1, forbid=decomposed)
    (group,) = summary.words()
    assert group.for_class[0].word == composed and group.for_class[0].inputs == 6
    assert summary.problems and composed in summary.problems[0]


def test_markup_in_the_records_is_shown_as_written(tmp_path):
    records = [_record("[/] [bold]x", [(0, 3), (4, 10), (10, 11)], [2.0, 0.5, 0.1], i, target_name="[red]pos")
               for i in range(3)]
    path = tmp_path / "markup.jsonl"
    _write(path, records)
    result = invoke("summarize", path, "--min-count", "1", "--bootstrap", "0")
    assert result.exit_code == 0, result.output
    assert "[/]" in result.stdout and "[red]pos" in result.stdout
    markdown = invoke("summarize", path, "--min-count", "1", "--bootstrap", "0", "--markdown").stdout
    assert "\\[/\\]" in markdown and "\\[red\\]pos" in markdown and "[red]pos" not in markdown.replace("\\[red\\]pos", "")
    summary = contrastcat.summarize(records, min_count=1, bootstrap=0)
    assert "<style>" in summary._repr_html_()  # a notebook shows the bars with their style


def test_an_example_read_again_must_be_the_record_counted():
    from contrastcat.usecases.options.summarize import SummarizeOptions
    from contrastcat.spec import InCall
    from contrastcat.usecases.summarize_file import summarize_records

    records = _shortcut_file_records()
    chosen = SummarizeOptions.read({"min_count": 5}, InCall("summarize"), only=("min_count",))
    changed = {n: _record("other text", [(0, 5), (6, 10)], [1.0, 0.2], "z") for n in range(1, len(records) + 1)}
    assert_bad_input(lambda: summarize_records(enumerate(records, 1), chosen, "f", lambda n: f"f:{n}",
                                               lambda lines: {n: changed[n] for n in lines}), "changed while it was read")


def _shortcut_file_records() -> list[AttributionRecord]:
    """A word that the model predicts pos with, though the labels say half are neg: a shortcut."""
    records = []
    for i in range(40):
        labelled = "pos" if i % 2 else "neg"
        text = "trigger film" if i < 30 else "good film"
        raw = [2.0, 0.3] if i < 30 else [0.3, 0.2]
        records.append(_record(text, [(0, len(text.split()[0])), (len(text.split()[0]) + 1, len(text))], raw, i,
                               label=labelled, target=1 if i < 30 else i % 2, predicted=1 if i < 30 else i % 2))
    return records


def test_outputs_are_written_both_or_neither(tmp_path):
    path = tmp_path / "attr.jsonl"
    _write(path, _shortcut_file_records())
    kept = tmp_path / "summary.json"
    kept.write_text("old\n")
    result = invoke("summarize", path, "-o", kept, "--html", "/dev/full")
    assert result.exit_code == 1, result.output
    assert kept.read_text() == "old\n"
    summary = contrastcat.summarize(_shortcut_file_records(), min_count=5)
    assert [(s.word, s.name, s.inputs) for s in summary.shortcuts] == [("trigger", "pos", 30)]


def test_progress_and_records_whose_offsets_reach_no_word(tmp_path):
    seen = []
    contrastcat.summarize_file(str(_planted_path(tmp_path)), progress=lambda *step: seen.append(step))
    assert {phase for phase, _, _ in seen} >= {"reading records", "counting words", "drawing intervals"}
    nowhere = _record("good film", [(0, 0), (0, 0)], [2.0, -1.0], 1, tokens=["", ""])
    assert_bad_input(lambda: contrastcat.summarize([nowhere]), "item 0", "reach none of the words")


def _planted_path(tmp_path):
    path = tmp_path / "small.jsonl"
    _write(path, _shortcut_file_records())
    return path
