"""Attributions made by other tools: a minimal record, aligned to the model's tokens.

Each file below is written as a script would write another tool's export: Captum's
``VisualizationDataRecord`` (``raw_input_ids`` with [CLS]/[SEP] and WordPiece ``##`` pieces,
``word_attributions``, ``attr_class``), an inseq attribution (SentencePiece ``▁`` tokens, one
score per source token), ferret's ``Explanation`` (``text``, ``tokens``, ``scores``,
``explainer``, ``target_pos_idx``) and word scores with character offsets. The toy model's
tokenizer has one token per word, so the expected map is worked out by hand: a word's score, or
the sum of its pieces' scores. ``evaluate`` on the export must give exactly what it gives on
explain-style records carrying that map.
"""

from __future__ import annotations

import json

import pytest

import contrastcat
from contrastcat.errors import BadInput
from contrastcat.usecases.elsewhere import spans_of_tokens
from contrastcat.records.record import read_records

from ..helpers import assert_one_line_error, invoke, write_records

KEYWORD = {"good", "great", "awful", "terrible"}


def word_scores(text: str) -> list[float]:
    """The map the exports carry, per word: keywords first, then by position."""
    words = text.split()
    return [1.0 if w in KEYWORD else 0.5 * i / len(words) for i, w in enumerate(words)]


def pieces(word: str) -> list[str]:
    """A WordPiece-like split of long words, as another model's tokenizer might cut them."""
    return [word[:3], "##" + word[3:]] if len(word) > 5 else [word]


def captum(text, index):
    tokens, scores = ["[CLS]"], [0.0]
    for word, score in zip(text.split(), word_scores(text)):
        for piece in pieces(word):
            tokens.append(piece)
            scores.append(score / len(pieces(word)))  # the pieces add up to the word's score
    tokens.append("[SEP]")
    scores.append(0.0)
    return {"id": index, "text": text, "tokens": tokens, "scores": scores, "target": 0, "method": "captum-ig"}


def inseq(text, index):
    words = text.split()
    return {"id": index, "text": text, "tokens": ["▁" + w.capitalize() for w in words], "scores": word_scores(text),
            "target": 0, "method": "inseq-saliency"}


def ferret(text, index):
    return {"text": text, "tokens": ["[CLS]", *text.split(), "[SEP]"], "scores": [0.3, *word_scores(text), 0.2],
            "target": 0, "method": "ferret-shap"}


def offsets(text, index):
    spans, start = [], 0
    for word in text.split():
        start = text.index(word, start)
        spans.append([start, start + len(word)])
        start += len(word)
    return {"id": index, "text": text, "offsets": spans, "scores": word_scores(text), "target": 0, "method": "words"}


EXPORTS = {"captum": captum, "inseq": inseq, "ferret": ferret, "offsets": offsets}


def texts(toy_dir) -> list[str]:
    return [json.loads(line)["text"] for line in (toy_dir / "inputs.jsonl").read_text().splitlines()[:6]]


@pytest.mark.parametrize("tool", EXPORTS)
def test_an_export_evaluates_as_records_carrying_the_same_map(tool, toy_dir, toy_classifier, tmp_path):
    exported = tmp_path / f"{tool}.jsonl"
    exported.write_text("".join(json.dumps(EXPORTS[tool](t, i)) + "\n" for i, t in enumerate(texts(toy_dir))))
    # The same map on the model's tokens, as explain would have written it.
    native = []
    for record in read_records(str(write_records(toy_dir, tmp_path / "native.jsonl", ("keyword",)))):
        words = iter(word_scores(record.text))
        record.scores = [0.0 if special else next(words) for special in record.special]
        record.id = record.id if tool != "ferret" else record.id + 1  # ferret's has no id: its line number
        native.append(record)
    mine = contrastcat.evaluate(toy_classifier, read_records(str(exported)), eraser=True, bootstrap=0)
    theirs = contrastcat.evaluate(toy_classifier, native, eraser=True, bootstrap=0)
    (a,), (b,) = mine.methods.values(), theirs.methods.values()
    assert a.per_input["morf"].aopc.ravel().tolist() == pytest.approx(b.per_input["morf"].aopc.ravel().tolist(), abs=1e-12)
    assert a.scalars["eraser_suff"].values.tolist() == pytest.approx(b.scalars["eraser_suff"].values.tolist(), abs=1e-12)
    assert mine.made_elsewhere == len(texts(toy_dir)) and theirs.made_elsewhere == 0


def test_the_command_takes_an_export_names_it_and_refuses_a_line_that_cannot_align(toy_dir, tmp_path):
    lines = [captum(t, i) for i, t in enumerate(texts(toy_dir))]
    good = tmp_path / "captum.jsonl"
    good.write_text("".join(json.dumps(line) + "\n" for line in lines))
    model = str(toy_dir / "model")
    result = invoke("evaluate", good, "--model", model, "--eraser", "--loo")
    assert result.exit_code == 0, result.output
    assert "captum-ig" in result.stdout and "6 record(s) made elsewhere" in result.stderr
    assert_one_line_error(invoke("evaluate", good), "names no model", "--model")
    rendered = invoke("render", good, "--limit", "1")
    assert rendered.exit_code == 0 and "captum-ig" in rendered.stdout
    # A token that is not in the text, at line 3.
    lines[2]["tokens"][2] = "banana"
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert_one_line_error(invoke("evaluate", bad, "--model", model), "bad.jsonl:3: token 2 'banana'", "cannot align")
    # Offsets that leave one of the model's words unscored, at line 2.
    spans = [offsets(t, i) for i, t in enumerate(texts(toy_dir))]
    spans[1]["offsets"].pop()
    spans[1]["scores"].pop()
    gap = tmp_path / "gap.jsonl"
    gap.write_text("".join(json.dumps(line) + "\n" for line in spans))
    assert_one_line_error(invoke("evaluate", gap, "--model", model), "gap.jsonl:2: the model's token", "overlaps no scored span")


def test_token_strings_are_found_in_order_whatever_their_markers_or_case():
    text = "Café au lait, s'il vous plaît"
    assert spans_of_tokens(text, ["[CLS]", "▁cafe", "▁au", "la", "##it", ",", "Ġs", "'", "il", "</s>"], "x") == [
        [0, 0], [0, 4], [5, 7], [8, 10], [10, 12], [12, 13], [14, 15], [15, 16], [16, 18], [0, 0],
    ]
    with pytest.raises(BadInput, match="token 1 'lait' is not the next text after character 4"):
        spans_of_tokens(text, ["café", "lait"], "x")  # "au" skipped: not aligned by a guess


def test_kendall_is_refused_for_records_made_elsewhere_before_the_model_loads(toy_dir, toy_classifier, tmp_path):
    path = tmp_path / "ferret.jsonl"
    path.write_text("".join(json.dumps(ferret(t, i)) + "\n" for i, t in enumerate(texts(toy_dir))))
    result = invoke("evaluate", path, "--model", "no-such-model-is-loaded", "--kendall")
    assert_one_line_error(result, "ferret.jsonl:1: --kendall explains each record again", "made elsewhere")
    with pytest.raises(BadInput, match="was made elsewhere"):
        contrastcat.evaluate(toy_classifier, read_records(str(path)), kendall=True)


def test_render_shades_an_export_of_token_strings(toy_dir, tmp_path):
    path = tmp_path / "ferret.jsonl"
    path.write_text(json.dumps(ferret(texts(toy_dir)[0], 0)) + "\n")
    result = invoke("render", path, "--limit", "1")
    assert result.exit_code == 0, result.output
    first = texts(toy_dir)[0].split()[0]
    assert f"[{first} 0.00]" in result.stdout and "p=nan" not in result.stdout


def test_spans_that_would_need_a_guess_or_name_other_weights_are_refused(toy_dir, toy_classifier, tmp_path):
    text = texts(toy_dir)[0]
    words = offsets(text, 0)
    first, second = words["offsets"][0], words["offsets"][1]
    cases = {
        "overlap": ({**words, "offsets": [first, first, *words["offsets"][1:]], "scores": [0.5, *words["scores"]]},
                    "two scored spans overlap"),
        "across": ({**words, "offsets": [[first[1] - 1, second[0] + 1], *words["offsets"]], "scores": [1.0, *words["scores"]]},
                   "two scored spans overlap"),
        "partial": ({**words, "offsets": [[first[0], first[0] + 1], *words["offsets"][1:]]}, "only partly covered"),
        "cuts": ({**words, "offsets": [[first[1] - 1, second[0] + 1], *words["offsets"][2:]], "scores": words["scores"][1:]},
                 "cuts across the model's tokens"),
        "weights": ({**words, "model_fingerprint": "sha256:" + "0" * 32}, "names the weights sha256:000"),
        "huge": ({**words, "offsets": [[first[0], first[0] + 1], [first[0] + 1, first[1]], *words["offsets"][1:]],
                  "scores": [1e308, 1e308, *words["scores"][1:]]}, "add up to inf"),
    }
    for name, (line, message) in cases.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_text(json.dumps(line) + "\n")
        assert_one_line_error(invoke("evaluate", path, "--model", str(toy_dir / "model"), "--min-tokens", "1"),
                              f"{name}.jsonl:1", message)
