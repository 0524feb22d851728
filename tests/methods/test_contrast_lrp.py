"""contrastcat-lrp (Contrast-CAT's formula with AttnLRP's modified gradients) against a
plain loop.

The modified gradient of layer l's input is read off the explicit float64 relevance propagation
of ``oracles`` (no autograd, no hook): every rule there hands an input x_ij the share
x_ij * c_ij of what it receives, so c_ij = relevance_ij / x_ij is the gradient the rules define.
Activations and alpha-hat come from ``output_hidden_states`` / ``output_attentions``, the
references from their own forward pass, and the deletion test from ``refined_by_loop`` (each
shortened input through the model alone).
"""

from __future__ import annotations

import pytest
import torch

from contrastcat.attribution.pipeline import ExplainSettings, attribute
from contrastcat.capture.core import capture
from contrastcat.methods import ContrastLRP
from contrastcat.models.tokens import tokenize

from ..helpers import forward, minmax
from .oracles import TEXTS, explicit_relevance, refined_by_loop


def lrp_contrast_by_loop(model, ids, target, reference_ids):
    """One map: sum_l alpha-hat^l_i sum_j (rel^l_ij / A^l_ij) (A^l_ij - R^l_ij), then min-max."""
    layers = model.config.num_hidden_layers
    with torch.no_grad():
        out = forward(model, ids)
        reference = forward(model, reference_ids).hidden_states[:layers] if reference_ids else None
    oracle = explicit_relevance(model, list(ids), target)
    length = len(ids)
    scores = [0.0] * length
    for layer, (inputs, relevance) in enumerate(oracle["layers"]):
        # The oracle's own forward is the model's (float64): its layer inputs match hidden_states.
        assert torch.allclose(inputs.float(), out.hidden_states[layer][0], atol=1e-4)
        A, Rel = inputs.tolist(), relevance.tolist()
        R = reference[layer][0].tolist() if reference is not None else []
        attention = out.attentions[layer][0].tolist()
        heads = len(attention)
        for i in range(length):
            alpha = sum(attention[h][q][i] for h in range(heads) for q in range(length)) / (heads * length)
            total = 0.0
            for j in range(len(A[i])):
                gradient = Rel[i][j] / A[i][j]
                r = R[i][j] if i < len(R) else 0.0
                total += gradient * (A[i][j] - r)
            scores[i] += alpha * total
    return minmax(scores)


@pytest.mark.parametrize("text", TEXTS)
def test_each_map_matches_loop(toy_classifier, toy_library, text):
    (tokens,) = tokenize(toy_classifier.tokenizer, [text], toy_classifier.max_length)
    method = ContrastLRP(refs_used=3)
    captured = capture(toy_classifier, [tokens.ids], [tokens.special], [None], needs=method.needs)
    target = int(captured.targets[0])
    (found,) = method.candidate_maps(captured, toy_library)
    maps = found.scaled
    assert maps.shape == (3, len(tokens)) and found.raw is None  # averaged: its raw map is the mean
    for k, reference in enumerate(toy_library.entries(target)[:3]):
        expected = lrp_contrast_by_loop(toy_classifier.model, list(tokens.ids), target, list(reference.token_ids))
        assert maps[k].tolist() == pytest.approx(expected, abs=1e-4)


@pytest.mark.parametrize("text", TEXTS[:2])
# {"refs_used": 4, "test_steps": "5"}: the cheap variant's shape (fewer references, one late step).
@pytest.mark.parametrize(
    "options", [{}, {"test_steps": "3"}, {"refs_used": 4, "test_steps": "5"}, {"test_measure": "log-odds"}]
)
def test_refined_map_matches_loop(toy_classifier, toy_library, text, options):
    (tokens,) = tokenize(toy_classifier.tokenizer, [text], toy_classifier.max_length)
    method = ContrastLRP(**{"refs_used": 6, **options})
    (refined,), _, (resolved,) = attribute(toy_classifier, [tokens], [None], method, toy_library, ExplainSettings())
    maps = [
        lrp_contrast_by_loop(toy_classifier.model, list(tokens.ids), resolved, list(reference.token_ids))
        for reference in toy_library.entries(resolved)[: method.refs_used]
    ]
    steps = [int(s) for s in options["test_steps"].split(",")] if "test_steps" in options else None
    measure = options.get("test_measure", "probability")
    expected, kept = refined_by_loop(
        toy_classifier.model, list(tokens.ids), list(tokens.special), resolved, maps, steps, measure
    )
    assert refined.scores.tolist() == pytest.approx(expected, abs=1e-4)
    assert int(refined.kept.sum()) == kept


def test_without_references_it_is_the_relevance_of_each_layer_weighted(toy_classifier):
    """R = 0: the map is sum_l alpha-hat^l_i * (layer l's relevance of token i), no library read."""
    text = TEXTS[0]
    (tokens,) = tokenize(toy_classifier.tokenizer, [text], toy_classifier.max_length)
    method = ContrastLRP(refs_used=0)
    (found,), _, (resolved,) = attribute(toy_classifier, [tokens], [None], method, None, ExplainSettings())
    expected = lrp_contrast_by_loop(toy_classifier.model, list(tokens.ids), resolved, [])
    assert found.scores.tolist() == pytest.approx(expected, abs=1e-4)


def test_the_modified_gradients_are_not_the_plain_ones(toy_classifier, toy_library):
    """The variant differs from Contrast-CAT on the same references (else it would test nothing)."""
    (tokens,) = tokenize(toy_classifier.tokenizer, [TEXTS[1]], toy_classifier.max_length)
    from contrastcat.methods import ContrastCAT

    plain, lrp = ContrastCAT(refs_used=3, refine=False), ContrastLRP(refs_used=3, refine=False)
    captured = capture(toy_classifier, [tokens.ids], [tokens.special], [None], needs=plain.needs | lrp.needs)
    (a,), (b,) = plain.candidate_maps(captured, toy_library), lrp.candidate_maps(captured, toy_library)
    assert (a.scaled - b.scaled).abs().max() > 0.05
