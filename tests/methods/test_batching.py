"""Padding never changes a result: batched explanations equal one-at-a-time ones."""

from __future__ import annotations

import numpy as np
import pytest

from contrastcat.attribution.pipeline import ExplainSettings, explain
from contrastcat.methods import build_method
from contrastcat.records.inputs import InputRow

from ..helpers import CASES, IDS, TEXTS, assert_same_map


@pytest.mark.parametrize("name, options", CASES, ids=IDS)
def test_batched_equals_unbatched(toy_classifier, toy_library, name, options):
    rows = [InputRow(line=i + 1, id=i, text=text) for i, text in enumerate(TEXTS)]
    method = build_method(name, **options)
    library = toy_library if method.uses_library else None
    together = list(explain(toy_classifier, rows, method, library, options=ExplainSettings(batch_size=len(rows))))
    alone = list(explain(toy_classifier, rows, method, library, options=ExplainSettings(batch_size=1)))
    assert [r.id for r in together] == [r.id for r in alone] == list(range(len(TEXTS)))
    for batched, single in zip(together, alone):
        assert batched.tokens == single.tokens
        assert_same_map(batched, single)
        assert np.allclose(batched.probs, single.probs, atol=1e-5)
        assert batched.refs_kept == single.refs_kept


def test_padding_does_not_change_captured_tensors(toy_classifier):
    from contrastcat.capture.core import capture
    from contrastcat.models.tokens import tokenize

    texts = tokenize(toy_classifier.tokenizer, TEXTS[:2], 64)
    both = capture(toy_classifier, [t.ids for t in texts], [t.special for t in texts], [None, None])
    short = capture(toy_classifier, [texts[0].ids], [texts[0].special], [None])
    length = len(texts[0])
    for field in ("activations", "gradients"):
        batched = getattr(both, field)[0, :, :length]
        assert np.allclose(batched.numpy(), getattr(short, field)[0].numpy(), atol=1e-5)
    assert np.allclose(both.attention_received[0, :, :length].numpy(), short.attention_received[0].numpy(), atol=1e-6)


def test_mask_special_changes_attribution_not_prediction(toy_classifier, toy_library):
    rows = [InputRow(line=i + 1, id=i, text=text) for i, text in enumerate(TEXTS)]
    method = build_method("contrastcat", refs_used=10)
    plain = list(explain(toy_classifier, rows, method, toy_library, options=ExplainSettings(batch_size=4)))
    masked = list(explain(toy_classifier, rows, method, toy_library, options=ExplainSettings(batch_size=4, mask_special=True)))
    alone = list(explain(toy_classifier, rows, method, toy_library, options=ExplainSettings(batch_size=1, mask_special=True)))
    for a, b, c in zip(plain, masked, alone):
        assert a.probs == b.probs and a.predicted == b.predicted == b.target  # docs/spec.md §1: prediction uses the plain mask
        assert np.allclose(b.scores, c.scores, atol=1e-5)
        assert b.settings["mask_special"] is True and a.settings["mask_special"] is False
    assert any(not np.allclose(a.scores, b.scores, atol=1e-3) for a, b in zip(plain, masked))


@pytest.mark.parametrize("name, options", CASES, ids=IDS)
def test_every_hook_is_removed_after_an_error(toy_classifier, toy_library, monkeypatch, name, options):
    """A layer that fails mid-run leaves no hook of capture's (or of any extra pass) behind."""

    def hooks():  # transformers keeps hooks of its own on some modules: compare, do not expect none
        return {
            key: (tuple(module._forward_hooks), tuple(module._forward_pre_hooks))
            for key, module in toy_classifier.model.named_modules()
        }

    method = build_method(name, **options)
    library = toy_library if method.uses_library else None
    rows = [InputRow(line=1, id=0, text=TEXTS[1])]
    list(explain(toy_classifier, rows, method, library))  # transformers adds its own hooks on first use
    before = hooks()

    def explode(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(toy_classifier.adapter.layers[-1], "forward", explode)
    with pytest.raises(RuntimeError, match="boom"):
        list(explain(toy_classifier, rows, method, library))
    monkeypatch.undo()
    assert hooks() == before
