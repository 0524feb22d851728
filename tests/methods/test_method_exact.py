"""Contrast-CAT against a straightforward, independent loop (docs/spec.md §3 and §4).

The loop below reads activations from ``output_hidden_states`` (the engine
uses layer hooks), walks layers, positions and hidden units one at a time in
plain Python, and runs every deletion-test input through the model alone.
"""

from __future__ import annotations

import pytest
import torch

from contrastcat.attribution.pipeline import ExplainSettings, attribute
from contrastcat.capture.core import capture
from contrastcat.methods import ContrastCAT
from contrastcat.models.tokens import tokenize

from ..helpers import forward, minmax, probability

TEXTS = [
    "the film was great and the music was lovely too",
    "a boring night in the old house with the dog",
    "we saw the city at night and it was a long road home",
]


def contrast_map_by_loop(model, ids, target, reference_ids):
    layers = model.config.num_hidden_layers
    out = forward(model, ids)
    hidden = out.hidden_states[:layers]
    grads = torch.autograd.grad(out.logits[0, target], hidden)
    with torch.no_grad():
        reference = forward(model, reference_ids).hidden_states[:layers]
    length = len(ids)
    scores = [0.0] * length
    for layer in range(layers):
        A = hidden[layer][0].tolist()
        G = grads[layer][0].tolist()
        R = reference[layer][0].tolist()
        attention = out.attentions[layer][0].tolist()  # [H][query][key]
        heads = len(attention)
        for i in range(length):
            alpha = sum(attention[h][q][i] for h in range(heads) for q in range(length)) / (heads * length)
            total = 0.0
            for j in range(len(A[i])):
                r = R[i][j] if i < len(R) else 0.0
                total += G[i][j] * (A[i][j] - r)
            scores[i] += alpha * total
    return minmax(scores)


def refined_by_loop(model, ids, special, target, maps, steps=None):
    """``steps``: only those of the (deduplicated) grid's counts, 1-based; the first if none fits."""
    base = probability(model, ids, target)
    counts = []
    for s in range(1, 10):
        count = round(s / 9 * len(ids))
        if count not in counts:
            counts.append(count)
    if steps is not None:
        counts = [counts[s - 1] for s in steps if s <= len(counts)] or counts[:1]
    drops = []
    for scores in maps:
        order = sorted((i for i in range(len(ids)) if not special[i]), key=lambda i: (-scores[i], i))
        step_drops = []
        for count in counts:
            removed = set(order[:count])
            kept = [t for i, t in enumerate(ids) if i not in removed]
            step_drops.append(base - probability(model, kept, target))
        drops.append(sum(step_drops) / len(step_drops))
    mean = sum(drops) / len(drops)
    std = (sum((d - mean) ** 2 for d in drops) / len(drops)) ** 0.5
    kept_maps = [m for m, d in zip(maps, drops) if d >= mean + std] or maps
    averaged = [sum(column) / len(kept_maps) for column in zip(*kept_maps)]
    return minmax(averaged), len(kept_maps)


@pytest.mark.parametrize("text", TEXTS)
def test_each_contrastive_map_matches_loop(toy_classifier, toy_library, text):
    model = toy_classifier.model
    (tokens,) = tokenize(toy_classifier.tokenizer, [text], toy_classifier.max_length)
    method = ContrastCAT(refs_used=4)
    captured = capture(toy_classifier, [tokens.ids], [tokens.special], [None], needs=method.needs)
    target = int(captured.targets[0])
    (maps,) = method.candidate_maps(captured, toy_library)
    references = toy_library.entries(target)[:4]
    assert maps.shape == (4, len(tokens))
    for k, reference in enumerate(references):
        expected = contrast_map_by_loop(model, list(tokens.ids), target, list(reference.token_ids))
        assert maps[k].tolist() == pytest.approx(expected, abs=1e-5)


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("target", [None, 2])
def test_refined_map_matches_loop(toy_classifier, toy_library, text, target):
    model = toy_classifier.model
    (tokens,) = tokenize(toy_classifier.tokenizer, [text], toy_classifier.max_length)
    method = ContrastCAT(refs_used=8)
    (refined,), _, (resolved,) = attribute(toy_classifier, [tokens], [target], method, toy_library, ExplainSettings())
    references = toy_library.entries(resolved)[:8]
    maps = [
        contrast_map_by_loop(model, list(tokens.ids), resolved, list(reference.token_ids))
        for reference in references
    ]
    expected, kept = refined_by_loop(model, list(tokens.ids), list(tokens.special), resolved, maps)
    assert refined.scores.tolist() == pytest.approx(expected, abs=1e-5)
    assert int(refined.kept.sum()) == kept


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("steps", ["3", "2,5", "1,9"])
def test_a_test_of_fewer_steps_matches_loop(toy_classifier, toy_library, text, steps):
    """Issue 24's cheap test: the same maps, scored at only the chosen steps of the grid."""
    model = toy_classifier.model
    (tokens,) = tokenize(toy_classifier.tokenizer, [text], toy_classifier.max_length)
    method = ContrastCAT(refs_used=8, test_steps=steps)
    (refined,), _, (resolved,) = attribute(toy_classifier, [tokens], [None], method, toy_library, ExplainSettings())
    maps = [
        contrast_map_by_loop(model, list(tokens.ids), resolved, list(reference.token_ids))
        for reference in toy_library.entries(resolved)[:8]
    ]
    chosen = [int(s) for s in steps.split(",")]
    expected, kept = refined_by_loop(model, list(tokens.ids), list(tokens.special), resolved, maps, chosen)
    assert refined.scores.tolist() == pytest.approx(expected, abs=1e-5)
    assert int(refined.kept.sum()) == kept
    assert method.refinement.steps == tuple(chosen)
