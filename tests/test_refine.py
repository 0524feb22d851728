"""Deletion-test refinement pieces (docs/spec.md §4), worked by hand."""

from __future__ import annotations

import numpy as np

from contrastcat.refine import RefineItem, RefineSettings, combine, deletion_counts, refine, select_maps


def test_deletion_counts():
    assert deletion_counts(12) == [1, 3, 4, 5, 7, 8, 9, 11, 12]
    assert deletion_counts(4) == [0, 1, 2, 3, 4]  # round(4/9)=0, round(8/9)=1, 1 again dropped, ...
    assert deletion_counts(12, grid=5) == [3, 6, 9, 12]


def test_rho_rules():
    scores = np.array([0.1, 0.2, 0.35, 0.55])  # mean 0.3, population std sqrt(0.02875) = 0.170
    assert select_maps(scores, "mean+std").tolist() == [False, False, False, True]
    assert select_maps(scores, "mean").tolist() == [False, False, True, True]
    assert select_maps(scores, "mean-std").tolist() == [False, True, True, True]


def test_nothing_passes_keeps_all():
    assert select_maps(np.array([0.1, 0.1, 0.1]) + 1e-17).all()


def test_combine_rescales_the_mean_of_kept_maps():
    maps = np.array([[0.0, 1.0, 0.5], [1.0, 0.0, 0.5], [0.0, 0.5, 1.0]])
    assert combine(maps, np.array([True, False, True])).tolist() == [0.0, 0.75 / 0.75, 0.75 / 0.75]
    assert combine(np.array([[0.2, 0.2]]), np.array([True])).tolist() == [0.0, 0.0]


def test_refine_keeps_the_map_whose_deletions_hurt():
    # p(class 1) = 0.9 while token 10 is present, else 0.2: only a map ranking token 10 first drops it early.
    def predict(sequences):
        return np.array([[0.1, 0.9] if 10 in s else [0.8, 0.2] for s in sequences])

    ids = (2, 11, 10, 12, 13, 3)
    special = (True, False, False, False, False, True)
    good = [0.0, 0.1, 1.0, 0.2, 0.3, 0.0]
    bad = [0.0, 1.0, 0.0, 0.9, 0.8, 0.0]
    item = RefineItem(ids, special, 1, np.array([good, bad, bad]))
    (result,) = refine([item], predict, RefineSettings())
    # counts for T=6: 1, 1(dup), 2, 3, 3(dup), 4, 5, 5(dup), 6 -> 1, 2, 3, 4, 5, 6
    # good: token 10 goes at every step -> drop 0.7 each; bad: at steps 4, 5, 6 -> mean 0.35
    assert np.allclose(result.drop_scores, [0.7, 0.35, 0.35])
    assert result.kept.tolist() == [True, False, False]
    assert np.allclose(result.scores, good / np.max(good))
