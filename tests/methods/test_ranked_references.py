"""The ranked-reference variants of a cheap Contrast-CAT (benchmarks/ranked.py, benchmark code: it lost) against a
plain loop: every reference's map (``contrast_map_by_loop``), its deletion-test S one shortened
input at a time (``drops_by_loop``), S standardised within each calibration input, the mean per reference and class."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
import torch

from contrastcat.models.tokens import tokenize

from .oracles import contrast_map_by_loop, drops_by_loop

RANKED = Path(__file__).resolve().parents[2] / "benchmarks" / "ranked.py"


def load_ranked():
    spec = importlib.util.spec_from_file_location("ranked", RANKED)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_ranking_is_the_mean_standardised_drop_by_loop(toy_classifier, toy_library, toy_examples):
    ranked = load_ranked()
    texts = [e.text for e in toy_examples]
    calibration = 4
    found = ranked.ranking(toy_classifier, toy_library, texts, None, calibration)
    model, classes = toy_classifier.model, range(toy_classifier.num_classes)
    every = min(toy_library.pool_size("contrast", c) for c in classes)
    # The calibration rows, chosen again here: a seeded permutation, references left out.
    references = {e.source_row for c in classes for e in toy_library.entries(c)}
    order = np.random.default_rng(ranked.SEED).permutation(len(texts))
    chosen = [texts[i] for i in order if int(i) not in references][:calibration]
    standardised = {c: [] for c in classes}
    for tokens in tokenize(toy_classifier.tokenizer, chosen, toy_classifier.max_length):
        ids, special = list(tokens.ids), list(tokens.special)
        with torch.no_grad():
            target = int(model(input_ids=torch.tensor([ids])).logits[0].argmax())
        maps = [contrast_map_by_loop(model, ids, target, list(reference.token_ids))
                for reference in toy_library.entries(target)[:every]]
        drops = np.array(drops_by_loop(model, ids, special, target, maps))
        standardised[target].append((drops - drops.mean()) / (drops.std() + 1e-12))
    assert sum(len(v) for v in standardised.values()) == calibration
    for c in classes:
        if not standardised[c]:
            continue
        expected = np.mean(standardised[c], axis=0)
        assert sorted(found[c]) == list(range(every))
        # Best first: each reference's loop mean is at least the next one's (near-ties may swap).
        means = expected[found[c]]
        assert np.all(means[:-1] >= means[1:] - 1e-4)
        assert means[0] == pytest.approx(expected.max(), abs=1e-4)


def same(a, b):
    """Equal references: a library pads to the longest reference it has loaded so far, so compare
    the common positions and require zeros past them."""
    n = min(a.shape[2], b.shape[2])
    return torch.equal(a[:, :, :n], b[:, :, :n]) and not a[:, :, n:].any() and not b[:, :, n:].any()


def test_the_ranked_library_reads_the_best_first(toy_library):
    ranked = load_ranked()
    order = {c: list(range(toy_library.pool_size("contrast", c)))[::-1] for c in range(2)}
    library = ranked.RankedLibrary(toy_library.path, order)
    device = torch.device("cpu")
    got = library.references(0, 2, device)
    assert same(got, toy_library.references(0, 2, device, rows=order[0][:2]))
    assert not same(got, toy_library.references(0, 2, device))  # reversed: not the stored order
    assert same(library.references(0, 2, device, pool="random"), toy_library.references(0, 2, device, pool="random"))
