"""Contrast-CAT against a straightforward, independent loop (docs/spec.md §3 and §4).

The loop below reads activations from ``output_hidden_states`` (the engine
uses layer hooks), walks layers, positions and hidden units one at a time in
plain Python, and runs every deletion-test input through the model alone.
"""

from __future__ import annotations

import pytest

from contrastcat.attribution.pipeline import ExplainSettings, attribute
from contrastcat.capture.core import capture
from contrastcat.methods import ContrastCAT
from contrastcat.models.tokens import tokenize

from .oracles import TEXTS, contrast_map_by_loop, refined_by_loop


@pytest.mark.parametrize("text", TEXTS)
def test_each_contrastive_map_matches_loop(toy_classifier, toy_library, text):
    model = toy_classifier.model
    (tokens,) = tokenize(toy_classifier.tokenizer, [text], toy_classifier.max_length)
    method = ContrastCAT(refs_used=4)
    captured = capture(toy_classifier, [tokens.ids], [tokens.special], [None], needs=method.needs)
    target = int(captured.targets[0])
    (found,) = method.candidate_maps(captured, toy_library)
    maps = found.scaled
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
    """The cheap deletion test (fewer grid steps): the same maps, scored at only the chosen steps of the grid."""
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


@pytest.mark.parametrize("text", TEXTS)
def test_a_log_odds_test_matches_loop(toy_classifier, toy_library, text):
    """Beyond the paper: the deletion test's drop measured in the target's log-odds (the loop's from the
    logits, the pipeline's from its float64 probabilities)."""
    model = toy_classifier.model
    (tokens,) = tokenize(toy_classifier.tokenizer, [text], toy_classifier.max_length)
    method = ContrastCAT(refs_used=8, test_measure="log-odds")
    (refined,), _, (resolved,) = attribute(toy_classifier, [tokens], [None], method, toy_library, ExplainSettings())
    maps = [
        contrast_map_by_loop(model, list(tokens.ids), resolved, list(reference.token_ids))
        for reference in toy_library.entries(resolved)[:8]
    ]
    expected, kept = refined_by_loop(model, list(tokens.ids), list(tokens.special), resolved, maps, None, "log-odds")
    assert refined.scores.tolist() == pytest.approx(expected, abs=1e-5)
    assert int(refined.kept.sum()) == kept
    # The drops are log-odds, not probabilities: on the toy model they are larger than any probability drop.
    (plain,), _, _ = attribute(toy_classifier, [tokens], [None], ContrastCAT(refs_used=8), toy_library, ExplainSettings())
    assert abs(refined.drop_scores).max() > abs(plain.drop_scores).max()
    assert method.settings()["test_measure"] == "log-odds" and "test_measure" not in ContrastCAT().settings()


def test_naming_every_step_is_the_papers_test():
    every = ContrastCAT(test_steps="9,1,2,3,4,5,6,7,8")
    assert every.settings() == ContrastCAT().settings() and every.refinement.steps is None
    assert ContrastCAT(test_steps="1,2,3,4,5,6,7,8,9", deletion_grid=11).settings()["test_steps"] == "1,2,3,4,5,6,7,8,9"
