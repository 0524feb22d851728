"""Integrated gradients' path points run in chunks a gradient pass holds: the chunks, by hand, and
the maps the same whatever the chunks (one row a pass, or every input's steps in one)."""

from __future__ import annotations

import numpy as np
import pytest

from contrastcat.attribution.pipeline import attribute
from contrastcat.capture import passes as passes_module
from contrastcat.capture.passes import ModelPasses
from contrastcat.methods import build_method
from contrastcat.models.tokens import tokenize


def chunks(lengths, rows, batch, row_tokens, monkeypatch, classifier):
    monkeypatch.setattr(passes_module, "GRADIENT_ROW_TOKENS", row_tokens)
    return ModelPasses(classifier, gradient_batch_size=batch).gradient_chunks(lengths, rows)


def test_chunks_by_hand(toy_classifier, monkeypatch):
    # Budget 2 x 10 = 20 tokens: rows x the chunk's longest at most 20, at most `rows` rows.
    assert chunks([5, 5, 5, 5, 5], 50, 2, 10, monkeypatch, toy_classifier) == [[0, 1, 2, 3], [4]]
    assert chunks([5, 5, 5, 5, 5], 3, 2, 10, monkeypatch, toy_classifier) == [[0, 1, 2], [3, 4]]
    # A longer row narrows the chunk it joins: [4, 4, 4] holds 12, a 9 makes 4 x 9 = 36 > 20.
    assert chunks([4, 4, 4, 9, 9, 30], 50, 2, 10, monkeypatch, toy_classifier) == [[0, 1, 2], [3, 4], [5]]
    assert chunks([], 50, 2, 10, monkeypatch, toy_classifier) == []


@pytest.mark.parametrize("row_tokens", [1, 10_000])
def test_integrated_gradients_are_the_same_in_any_chunks(toy_classifier, monkeypatch, row_tokens):
    """One row a pass (a budget of 1 token a row) or all 3 inputs' 12 steps in one pass: the same
    maps, to float32's rounding, as the default chunks."""
    texts = tokenize(toy_classifier.tokenizer, ["good film", "a bad and boring film indeed", "fine"],
                     toy_classifier.max_length)
    method = build_method("integrated-gradients", ig_steps=12)
    default, _, _ = attribute(toy_classifier, texts, [None] * 3, method)
    monkeypatch.setattr(passes_module, "GRADIENT_ROW_TOKENS", row_tokens)
    chunked, _, _ = attribute(toy_classifier, texts, [None] * 3, method)
    for a, b in zip(default, chunked):
        np.testing.assert_allclose(a.raw, b.raw, rtol=1e-5, atol=1e-6)


def test_the_weights_flags_are_put_back_after_a_gradient_pass(toy_classifier, monkeypatch):
    """The weights are constants during integrated gradients' passes; afterwards each has the
    flag it had (one frozen by its owner stays frozen), also when the pass fails."""
    from contrastcat.capture import passes as passes_module

    model = toy_classifier.model
    parameters = list(model.parameters())
    parameters[0].requires_grad_(False)
    try:
        before = [p.requires_grad for p in parameters]
        texts = tokenize(toy_classifier.tokenizer, ["good film"], toy_classifier.max_length)
        seen = []
        real = passes_module.classify

        def watching(*args, **kwargs):
            seen.append(any(p.requires_grad for p in parameters))
            return real(*args, **kwargs)

        monkeypatch.setattr(passes_module, "classify", watching)
        attribute(toy_classifier, texts, [None], build_method("integrated-gradients", ig_steps=4))
        assert seen and not any(seen)  # no weight asked for its gradient during the passes
        assert [p.requires_grad for p in parameters] == before

        def failing(*args, **kwargs):
            raise RuntimeError("a pass failed")

        monkeypatch.setattr(passes_module, "classify", failing)
        with pytest.raises(RuntimeError):
            attribute(toy_classifier, texts, [None], build_method("integrated-gradients", ig_steps=4))
        assert [p.requires_grad for p in parameters] == before
    finally:
        parameters[0].requires_grad_(True)
