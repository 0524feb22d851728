"""compare on the toy classifier, whose important tokens are known: every real method is ahead
of random beyond the paired intervals, the column Contrast-CAT selects by is shown but not judged
by, and the numbers are those of evaluating the same records directly."""

from __future__ import annotations

import numpy as np
import pytest

from contrastcat.evaluation.stats import BootstrapSettings, paired_difference
from contrastcat.records.inputs import InputRow
from contrastcat.testing import toy
from contrastcat.usecases.compare import COLUMNS, CompareSettings, compare
from contrastcat.usecases.options.compare import Choice


@pytest.fixture(scope="module")
def compared(toy_classifier, toy_library):
    rows = [InputRow(line=i + 1, id=f"t{i}", text=e.text, label=None) for i, e in enumerate(toy.make_examples(48, seed=9))]
    choices = [Choice("contrastcat", {"refs_used": 6}), Choice("attnlrp"), Choice("attcat"), Choice("random")]
    return compare(toy_classifier, rows, toy_library, choices, CompareSettings(bootstrap=BootstrapSettings(1000, 0.95, 0), sanity=5))


def test_every_real_method_is_ahead_of_random_and_the_fitted_column_is_not_judged(compared):
    found = compared.recommendation
    # A variant given without its method's defaults beside it is named with its options.
    assert compared.labels == ["contrastcat[refs_used=6]", "attnlrp", "attcat", "random"] and compared.inputs == 48
    assert found.not_above_random == ()
    for method in ("contrastcat[refs_used=6]", "attnlrp", "attcat"):
        assert "random" in found.wins[method], (method, found.wins)
    assert found.ranking[-1] == "random"
    # Contrast-CAT chose its maps by deletion MoRF (and partly by comprehensiveness under deletion).
    assert compared.fitted["contrastcat[refs_used=6]"] == {"delete:morf_aopc": "fitted", "delete:morf_lodds": "fitted",
                                              "delete:eraser_comp": "partly"}
    judged = {column.name for column in compared.judged}
    assert "delete:morf_aopc" not in judged and "delete:eraser_comp" not in judged
    assert judged == {c.name for c in COLUMNS} - {"delete:morf_aopc", "delete:eraser_comp"}
    assert all(seconds > 0 for seconds in compared.seconds.values())
    # Each method's seconds are its own, over every input. Which is faster is a benchmark's question
    # (benchmarks/method_cost.py): a stall of the machine in one method's turn (the suite's other
    # worker, a build beside it) made random "slower" than Contrast-CAT here once.
    assert compared.timed == {label: 48 for label in compared.labels}


def test_its_differences_are_the_reports_own(compared):
    """A difference the recommendation rests on equals one computed here from the report's per-input
    values (same keys, same bootstrap)."""
    column = next(c for c in compared.judged if c.name == "mask:morf_aopc")
    a, b = compared.values("attnlrp", column), compared.values("random", column)
    assert len(a) == len(b) == 48
    here = paired_difference(a, b, BootstrapSettings(1000, 0.95, 0))
    direct = compared.reports["mask"].difference("attnlrp", "random")["morf_aopc"]
    assert here.mean == pytest.approx(direct.mean) and here.interval == direct.interval
    assert np.isclose(here.mean, np.mean([a[k] - b[k] for k in a]))


def test_a_method_given_twice_alike_is_refused(toy_classifier, toy_library):
    from contrastcat.errors import BadInput

    rows = [InputRow(line=1, id="a", text="a good film", label=None)]
    with pytest.raises(BadInput, match="given twice"):
        compare(toy_classifier, rows, toy_library, [Choice("attcat"), Choice("attcat")])
    # The same options spelt otherwise (a default given, text or number): refused before any work.
    from contrastcat.usecases import compare as use_case

    def never(*args, **kwargs):
        raise AssertionError("explained before the duplicate was found")

    original, use_case.explain_prepared = use_case.explain_prepared, never
    try:
        with pytest.raises(BadInput, match=r"^compare: method integrated-gradients\[ig_steps=50\] and integrated-gradients: "
                                           "the same method with the same options, given twice"):
            compare(toy_classifier, rows, toy_library,
                    [Choice("integrated-gradients", {"ig_steps": "50"}), Choice("integrated-gradients")])
    finally:
        use_case.explain_prepared = original


def test_the_sanity_subset_is_each_methods_first_inputs(compared, toy_classifier, toy_library):
    """Model randomisation on the first 5 inputs' maps of every method: the ρ a direct check of
    those records gives; random's maps never depend on the model and are not named as failing."""
    import contrastcat

    subset = [r for start in range(0, 4 * 48, 48) for r in compared.records[start:start + 5]]  # method by method
    assert len(subset) == 4 * 5 and compared.sanity.inputs == 5
    direct = contrastcat.sanity(toy_classifier, subset, toy_library, seed=0)
    last = direct.steps[-1]
    # compare re-explains on the fully randomised copy alone: the cascade's last step, unchanged.
    assert compared.sanity.steps == [last] and len(direct.steps) > 1
    for label, key in zip(compared.labels, ["contrastcat", "attnlrp", "attcat", "random"]):  # as sanity names them
        assert compared.sanity.methods[label].rho == {last: direct.methods[key].rho[last]}
    assert compared.sanity.methods["random"].passes(last) is False
    assert "random" not in compared.recommendation.paragraph.split("Fails the model-randomisation check")[-1] \
        or "Fails the model-randomisation" not in compared.recommendation.paragraph


def test_random_is_behind_every_real_method_beyond_the_intervals(compared):
    """On the toy, whose keywords are known, chance is behind every real method: each one is ahead
    of random, its paired interval excluding 0, on most columns the ranking uses, and random is
    ahead of it on none."""
    bootstrap = BootstrapSettings(1000, 0.95, 0)
    for method in ("contrastcat[refs_used=6]", "attnlrp", "attcat"):
        ahead, behind = [], []
        for column in compared.judged:
            found = paired_difference(compared.values(method, column), compared.values("random", column), bootstrap)
            better = found.interval.low > 0 if column.higher_is_better else found.interval.high < 0
            worse = found.interval.high < 0 if column.higher_is_better else found.interval.low > 0
            (ahead if better else behind if worse else []).append(column.name)
        assert not behind and len(ahead) > len(compared.judged) / 2, (method, ahead, behind)


def test_short_inputs_first_neither_stop_the_estimate_nor_the_sanity_check(toy_classifier, toy_library):
    """The median input and the first ones too short to evaluate or to rank: the estimate times the
    longest, the sanity check takes the first inputs with two tokens, and a variant given without
    its method's defaults is named with its options."""
    long = [e.text for e in toy.make_examples(5, seed=3)]
    texts = ["good"] * 7 + long
    rows = [InputRow(line=i + 1, id=f"m{i}", text=t, label=None) for i, t in enumerate(texts)]
    said = []
    found = compare(toy_classifier, rows, toy_library,
                    [Choice("attcat", {"layers": "2"}), Choice("attcat", {"layers": "1"}), Choice("random")],
                    CompareSettings(bootstrap=BootstrapSettings(200, 0.95, 0), sanity=3, notify=said.append))
    # Each variant named as written, not by how it differs from the one before it.
    assert found.labels == ["attcat[layers=2]", "attcat[layers=1]", "random"]
    assert set(found.reports["mask"].methods) == set(found.labels) == set(found.recommendation.ranking)
    assert any(line.startswith("estimate: ") and "the longest input took" in line for line in said)
    assert found.sanity.inputs == 3 and set(found.sanity.methods) == set(found.labels)
    # The longest by tokens, not by characters: a run of spaces is no token.
    from contrastcat.usecases.compare import _estimate, choose_methods, contenders

    spaced = [InputRow(line=20 + i, id=f"s{i}", text="good" + " " * 400 + "film", label=None) for i in range(2)]
    pilots = rows[:7] + spaced + rows[-1:]
    runs = contenders(toy_classifier, pilots, choose_methods([Choice("random"), Choice("attcat")], None, CompareSettings()),
                      CompareSettings())
    said = _estimate(runs[:1], pilots, CompareSettings())
    assert "the longest input took" in said
    from contrastcat.errors import BadInput

    with pytest.raises(BadInput, match="no sampled input is long enough to evaluate"):
        compare(toy_classifier, rows[:7], toy_library, [Choice("attcat"), Choice("random")])


def test_progress_moves_per_batch_in_every_phase(toy_classifier, toy_library):
    """Each method's explaining and each evaluation report after every batch of inputs, not once
    per phase: 12 inputs in batches of 4 move each bar three times."""
    rows = [InputRow(line=i + 1, id=f"p{i}", text=e.text, label=None) for i, e in enumerate(toy.make_examples(12, seed=4))]
    heard: dict[str, list[tuple[int, int]]] = {}
    compare(toy_classifier, rows, toy_library, [Choice("attcat"), Choice("random")], CompareSettings(
        batch_size=4, bootstrap=BootstrapSettings(0),
        progress=lambda phase, done, total: heard.setdefault(phase, []).append((done, total))))
    explaining = [phase for phase in heard if phase.startswith("explaining")]
    evaluating = [phase for phase in heard if phase.startswith("evaluating")]
    assert len(explaining) == 2 and len(evaluating) == 2
    for phase in explaining:
        done = [d for d, _ in heard[phase]]
        assert done[0] == 0 and done[-1] == 12 and len(done) >= 4 and done == sorted(done)
    for phase in evaluating:  # every method's records of a batch of inputs together: 2 × 4 a step
        assert heard[phase] == [(0, 24), (8, 24), (16, 24), (24, 24)]
