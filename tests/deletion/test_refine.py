"""Deletion-test refinement pieces (docs/spec.md §4), worked by hand."""

from __future__ import annotations

import numpy as np
import pytest

from contrastcat.deletion.refine import RefineItem, RefineSettings, combine, deletion_counts, refine, select_maps
from contrastcat.errors import BadInput


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


def test_combine_rescales_the_mean_of_kept_maps_and_keeps_the_mean():
    maps = np.array([[0.0, 1.0, 0.5], [1.0, 0.0, 0.5], [0.0, 0.5, 1.0]])
    nothing = np.full(3, np.nan)
    combined = combine(maps, np.array([True, False, True]), nothing)
    assert combined.scores.tolist() == [0.0, 0.75 / 0.75, 0.75 / 0.75]
    assert combined.raw.tolist() == [0.0, 0.75, 0.75]  # the mean, before the last scaling
    assert combine(np.array([[0.2, 0.2]]), np.array([True]), nothing[:1]).scores.tolist() == [0.0, 0.0]


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


def test_keep_the_best_maps_ties_included():
    scores = np.array([0.1, 0.3, 0.3, 0.2])
    assert select_maps(scores, keep=1).tolist() == [False, True, True, False]  # tied with the best: both
    assert select_maps(scores, keep=2).tolist() == [False, True, True, False]
    assert select_maps(scores, keep=3).tolist() == [False, True, True, True]
    assert select_maps(scores, keep=10).all()


def test_refine_settings_refuse_unknown_rules_as_bad_input():
    for bad in ({"score": "lerf"}, {"keep": 0}, {"rho": "median"}):
        with pytest.raises(BadInput, match=f"^`{next(iter(bad))}` must be"):
            RefineSettings(**bad)


def test_morf_minus_lerf_score_by_hand():
    # As above: p(class 1) = 0.9 while token 10 (position 2) is present, else 0.2; steps delete 1 … 6 tokens.
    def predict(sequences):
        return np.array([[0.1, 0.9] if 10 in s else [0.8, 0.2] for s in sequences])

    ids = (2, 11, 10, 12, 13, 3)
    special = (True, False, False, False, False, True)
    good = [0.0, 0.1, 1.0, 0.2, 0.3, 0.0]  # MoRF: 10 goes at every step (0.7); LeRF: at steps 4, 5, 6 (0.35)
    bad = [0.0, 1.0, 0.0, 0.9, 0.8, 0.0]  # MoRF: steps 4, 5, 6 (0.35); LeRF: every step (0.7)
    mid = [0.0, 0.5, 0.4, 1.0, 0.0, 0.0]  # MoRF: steps 3 … 6 (4/6 of 0.7); LeRF: steps 2 … 6 (5/6 of 0.7)
    item = RefineItem(ids, special, 1, np.array([bad, mid, good]))
    (result,) = refine([item], predict, RefineSettings(score="morf-lerf", keep=2))
    assert np.allclose(result.drop_scores, [0.35 - 0.7, 0.7 * (4 - 5) / 6, 0.7 - 0.35])
    assert result.kept.tolist() == [False, True, True]
    expected = (np.array(mid) + np.array(good)) / 2
    assert np.allclose(result.scores, (expected - expected.min()) / (expected.max() - expected.min()))
    (morf_only,) = refine([item], predict, RefineSettings(keep=1))
    assert np.allclose(morf_only.drop_scores, [0.35, 0.7 * 4 / 6, 0.7])


def test_a_test_of_chosen_steps_by_hand():
    """The cheap deletion test: only the chosen steps of the grid are deleted, scored and predicted."""
    from contrastcat.deletion.refine import drop_scores, tested_counts

    assert tested_counts(12, 10, (2, 5)) == [3, 7]
    assert tested_counts(12, 10, None) == deletion_counts(12)
    assert tested_counts(4, 10, (7, 9)) == [0]  # a 5-step grid has neither: its first step
    assert tested_counts(4, 10, (2, 9)) == [1]
    seen = []

    def predict(sequences):
        seen.extend(sequences)
        return np.array([[0.1, 0.9] if 10 in s else [0.8, 0.2] for s in sequences])

    ids = (2, 11, 10, 12, 13, 14, 15, 16, 17, 18, 19, 3)  # 12 tokens, the ends special
    special = (True,) + (False,) * 10 + (True,)
    maps = np.array([[0, 0.5, 1.0, 0.4, 0.3, 0.2, 0.1, 0, 0, 0, 0, 0], [0, 1.0, 0.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0]])
    (scores,) = drop_scores([RefineItem(ids, special, 1, maps)], predict,
                            RefineSettings(grid=10, score="morf", steps=(2,)))
    # step 2 deletes 3 tokens: map 0 takes 10 with them (0.9 -> 0.2), map 1 does not (0.9 -> 0.9)
    assert scores.tolist() == pytest.approx([0.7, 0.0])
    assert len(seen) == 3  # the input and one sequence per map, nothing else
    with pytest.raises(BadInput, match="test_steps"):
        RefineSettings(steps=(0,))
    with pytest.raises(BadInput, match="test_steps"):
        RefineSettings(steps=(10,))
