"""On the planted-keyword task, Contrast-CAT finds the keywords better than AttCAT and chance.

The toy classifier (contrastcat.toy) decides its 3 classes by planted keyword
tokens among random filler, so the tokens that matter are known. Measured on
this fixture (300 held-out sentences, 198 with keywords): keyword first among
non-special tokens 0.64 (Contrast-CAT), 0.54 (AttCAT), 0.13 (random);
MoRF AOPC 0.29, 0.26, 0.21.
"""

from __future__ import annotations

import numpy as np
import pytest

from contrastcat import toy
from contrastcat.evaluate import EvalSettings, perturbation_curves
from contrastcat.explain import explain
from contrastcat.methods import build_method
from contrastcat.records import InputRow
from contrastcat.tokens import make_predictor, pad_id_of

KEYWORDS = set(toy.POSITIVE + toy.NEGATIVE)


@pytest.fixture(scope="module")
def held_out():
    return toy.make_examples(300, seed=2)


@pytest.fixture(scope="module")
def results(toy_classifier, toy_library, held_out):
    rows = [InputRow(line=i + 1, id=i, text=e.text, label=e.label) for i, e in enumerate(held_out)]
    predict = make_predictor(toy_classifier.model, pad_id_of(toy_classifier.tokenizer), toy_classifier.device, 64)
    found = {}
    for name in ("contrastcat", "attcat", "random"):
        records = list(explain(toy_classifier, rows, build_method(name), toy_library))
        found[name] = (
            keyword_first(records, held_out),
            perturbation_curves(records, predict, EvalSettings(), toy_classifier.label_names),
        )
    return found


def keyword_first(records, examples) -> float:
    """Share of inputs with keywords whose top non-special token is a keyword."""
    hits = total = 0
    for record, example in zip(records, examples):
        if not example.keywords:
            continue
        scores = np.where(record.special, -np.inf, record.scores)
        hits += record.tokens[int(np.argmax(scores))] in KEYWORDS
        total += 1
    return hits / total


def test_the_toy_model_learned_the_task(toy_classifier, held_out):
    rows = [InputRow(line=i + 1, id=i, text=e.text) for i, e in enumerate(held_out)]
    records = list(explain(toy_classifier, rows, build_method("random")))
    accuracy = np.mean([r.predicted == e.label for r, e in zip(records, held_out)])
    assert accuracy > 0.95


def test_planted_token_precision(results):
    contrast, attcat, chance = (results[name][0] for name in ("contrastcat", "attcat", "random"))
    assert contrast > attcat + 0.05
    assert contrast > chance + 0.3


def test_morf_aopc(results):
    contrast, attcat, chance = (results[name][1].curves["morf"].aopc_mean for name in ("contrastcat", "attcat", "random"))
    assert contrast > attcat > chance
