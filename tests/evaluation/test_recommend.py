"""The recommendation a comparison prints, on constructed measures whose answer is known: paired
differences all of one sign (every resample's mean has that sign, so the interval excludes 0),
or of both signs evenly (it does not), and constant offsets whose interval is the offset itself."""

from __future__ import annotations

import numpy as np
import pytest

from contrastcat.evaluation.recommend import Candidate, Protocol, recommend, same_maps
from contrastcat.evaluation.stats import BootstrapSettings

PROTOCOLS = (Protocol("MoRF AOPC, [MASK]", True), Protocol("LeRF AOPC, [MASK]", False), Protocol("LOO τ", True))
BOOT = BootstrapSettings(resamples=1000, seed=0)
N = 40


def _base(seed: int) -> np.ndarray:
    return 0.5 + np.random.default_rng(seed).normal(0, 0.1, N)


def _candidate(method: str, cost: float, values: dict[str, np.ndarray]) -> Candidate:
    return Candidate(method, cost, {name: {f"in{i}": float(v) for i, v in enumerate(found)} for name, found in values.items()})


def _shifted(base: dict[str, np.ndarray], by: float) -> dict[str, np.ndarray]:
    """Better by ``by`` on each protocol (lower where lower is better)."""
    return {p.name: base[p.name] + (by if p.higher_is_better else -by) for p in PROTOCOLS}


def _measures():
    return {p.name: _base(k) for k, p in enumerate(PROTOCOLS)}


def test_a_clear_winner_and_a_cheap_method_within_the_margin():
    base = _measures()
    best = _candidate("attnlrp", 0.30, _shifted(base, 0.2))
    near = _candidate("contrastcat-lrp", 0.10, _shifted(base, 0.18))  # 0.02 behind: within 10 % of 0.5 (from chance)
    far = _candidate("attcat", 0.05, base)  # 0.2 behind: not within
    chance = _candidate("random", 0.001, _shifted(base, -0.3))
    found = recommend([far, near, best, chance], PROTOCOLS, BOOT)
    assert found.best == "attnlrp" and found.leaders == ("attnlrp",)
    assert (found.cheap, found.cheap_of) == ("contrastcat-lrp", "attnlrp")
    assert found.ranking == ("attnlrp", "contrastcat-lrp", "attcat", "random")
    assert found.not_above_random == () and found.inputs == N
    assert found.wins["attnlrp"] == ("contrastcat-lrp", "attcat", "random") and found.wins["random"] == ()
    assert "attnlrp is the most faithful" in found.paragraph
    assert ("contrastcat-lrp (0.1 s/input), at most half the cost of attnlrp (0.3 s/input), is within 10% of it on "
            "every protocol, at the worse end of its interval (of the way from random to it)") in found.paragraph
    # A stricter margin: the cheap method is no longer close enough (0.02 > 2 % of 0.5).
    strict = recommend([far, near, best, chance], PROTOCOLS, BOOT, margin=0.02)
    assert strict.best == "attnlrp" and strict.cheap is None
    assert "No method at most half the cost of attnlrp is within 2% of it" in strict.paragraph


def test_no_clear_winner_where_the_leaders_intervals_overlap():
    """Two methods whose paired differences are +d and −d on alternate inputs: neither is ahead,
    and no pick is made though one has the better mean."""
    base = _measures()
    swing = np.where(np.arange(N) % 2 == 0, 0.05, -0.05)
    swing[0] += 0.01  # a slightly better mean, not a separable one
    one = _candidate("attnlrp", 0.30, _shifted(base, 0.2))
    other = _candidate("full-lrp", 0.20, {name: values + swing for name, values in _shifted(base, 0.2).items()})
    behind = _candidate("attcat", 0.05, base)
    found = recommend([one, other, behind], PROTOCOLS, BOOT)
    assert found.best is None
    assert set(found.leaders) == {"attnlrp", "full-lrp"} and "attcat" not in found.leaders
    assert "no clear winner" in found.paragraph and "the numbers do not pick one" in found.paragraph
    assert "most faithful" not in found.paragraph


def test_mixed_protocols_are_counted_and_lower_is_better_is_honoured():
    """a is ahead on two protocols (one where lower is better), b on one: a wins the contest."""
    base = _measures()
    a = {name: values.copy() for name, values in base.items()}
    b = {name: values.copy() for name, values in base.items()}
    a["MoRF AOPC, [MASK]"] += 0.1
    a["LeRF AOPC, [MASK]"] -= 0.1  # lower: better
    b["LOO τ"] += 0.1
    found = recommend([_candidate("b", 0.1, b), _candidate("a", 0.2, a)], PROTOCOLS, BOOT)
    assert found.best == "a" and found.cheap is None  # b is 0.1 behind on two protocols: not within 10 %
    flipped = recommend([_candidate("b", 0.1, b), _candidate("a", 0.2, a)],
                        [Protocol(p.name, not p.higher_is_better) for p in PROTOCOLS], BOOT)
    assert flipped.best == "b"


def test_methods_not_ahead_of_random_are_named():
    base = _measures()
    found = recommend(
        [_candidate("random", 0.001, base), _candidate("tis", 0.5, base), _candidate("attnlrp", 0.3, _shifted(base, 0.2))],
        PROTOCOLS, BOOT,
    )
    assert found.best == "attnlrp" and found.not_above_random == ("tis",)
    assert "Not ahead of random (a map of chance): tis." in found.paragraph
    warned = recommend(
        [_candidate("random", 0.001, base), _candidate("tis", 0.5, base), _candidate("attnlrp", 0.3, _shifted(base, 0.2))],
        PROTOCOLS, BOOT, fails_sanity=["attnlrp", "elsewhere", "random"],
    )
    assert warned.paragraph.endswith("Fails the model-randomisation check (its maps barely change when the model's "
                                     "weights are destroyed, so they describe the input more than the model): attnlrp.")


def test_without_intervals_nothing_is_claimed():
    base = _measures()
    found = recommend([_candidate("a", 0.2, _shifted(base, 0.2)), _candidate("b", 0.1, base)], PROTOCOLS,
                      BootstrapSettings(resamples=0))
    assert found.best is None and found.cheap is None and found.ranking == ("a", "b")
    # Not "no clear winner", nor "not ahead of random": nothing can be shown ahead without intervals.
    chance = recommend([_candidate("a", 0.2, _shifted(base, 0.2)), _candidate("random", 0.1, base)], PROTOCOLS,
                       BootstrapSettings(resamples=0))
    assert chance.not_above_random == () and chance.best is None
    assert "without intervals" in chance.paragraph and "no method is recommended" in chance.paragraph
    assert "random" not in chance.paragraph and "no clear winner" not in chance.paragraph
    # Resamples asked for but too few for an interval on 8 inputs: the same, and said why.
    few = {name: values[:8] for name, values in base.items()}
    short = recommend([_candidate("a", 0.2, _shifted(few, 0.5)), _candidate("random", 0.1, few)], PROTOCOLS,
                      BootstrapSettings(resamples=100))
    assert short.not_above_random == () and short.best is None
    assert "without intervals (8 inputs need at least 175 resamples for a 95% interval, not 100)" in short.paragraph
    assert short.no_intervals == "8 inputs need at least 175 resamples for a 95% interval, not 100"


def test_inputs_are_paired_by_key():
    """Values of other inputs are not compared: b measured on half the inputs is paired on those."""
    base = _measures()
    b_values = {name: {f"in{i}": float(v) for i, v in enumerate(values) if i % 2 == 0} for name, values in base.items()}
    found = recommend([_candidate("a", 0.2, _shifted(base, 0.2)), Candidate("b", 0.1, b_values)], PROTOCOLS, BOOT)
    assert found.best == "a" and found.inputs == N // 2


def test_one_method_is_no_comparison():
    with pytest.raises(ValueError):
        recommend([_candidate("a", 0.1, _measures())], PROTOCOLS, BOOT)


@pytest.mark.parametrize("margin", [0.51, 1.0, -0.1])
def test_a_margin_is_checked_once_where_it_is_read_in_the_range_recommend_assumes(margin):
    """The margin is read and checked by compare's options (from the shell and from Python), in
    MARGIN_RANGE; recommend takes it as checked, and never checks it again."""
    from contrastcat.errors import BadInput
    from contrastcat.evaluation.margins import MARGIN_RANGE
    from contrastcat.spec import InCall
    from contrastcat.usecases.options.compare import CompareOptions

    assert MARGIN_RANGE == (0.0, 0.5)
    with pytest.raises(BadInput, match="margin"):
        CompareOptions.read({"inputs": __file__, "margin": margin}, InCall("compare_file"))
    assert CompareOptions.read({"inputs": __file__, "margin": 0.5}, InCall("compare_file")).margin == 0.5


def test_the_margin_of_a_measure_near_zero_is_the_distance_from_chance():
    """Sufficiency sits near 0 (here below it): 10 % of the leader's own value is no scale. The
    cheap method is 0.01 worse where chance is 0.33 worse: within 10 % of the way from chance."""
    rng = np.random.default_rng(7)
    suff = [Protocol("sufficiency", False)]
    leader = -0.03 + rng.normal(0, 0.02, N)
    found = recommend([
        _candidate("full-lrp", 0.03, {"sufficiency": leader}),
        _candidate("attnlrp", 0.015, {"sufficiency": leader + 0.01}),
        _candidate("random", 0.005, {"sufficiency": leader + 0.33}),
    ], suff, BOOT)
    assert found.best == "full-lrp" and (found.cheap, found.cheap_of) == ("attnlrp", "full-lrp")
    # Without chance compared, the leader's own |mean| (0.03) is the scale: 0.01 is beyond 10 % of it.
    alone = recommend([_candidate("full-lrp", 0.03, {"sufficiency": leader}),
                       _candidate("attnlrp", 0.015, {"sufficiency": leader + 0.01})], suff, BOOT)
    assert alone.best == "full-lrp" and alone.cheap is None
    assert alone.paragraph.endswith("No method at most half the cost of full-lrp is within 10% of it on every protocol.")


def test_the_reason_and_the_level_of_missing_intervals_are_the_true_ones():
    """One input gets no interval whatever the resamples (the reason is the inputs); a 99.9 % level
    is said as 99.9 %, never rounded to 100 %, with the resamples it would need."""
    base = _measures()
    one = {name: values[:1] for name, values in base.items()}
    found = recommend([_candidate("a", 0.2, _shifted(one, 0.5)), _candidate("random", 0.1, one)], PROTOCOLS,
                      BootstrapSettings(resamples=200))
    assert found.no_intervals == "1 input, fewer than the 6 a 95% interval needs"
    assert "resamples" not in found.paragraph and f"({found.no_intervals})" in found.paragraph
    twenty = {name: values[:20] for name, values in base.items()}
    strict = recommend([_candidate("a", 0.2, _shifted(twenty, 0.5)), _candidate("random", 0.1, twenty)], PROTOCOLS,
                       BootstrapSettings(resamples=5000, level=0.999))
    assert strict.no_intervals == "20 inputs need at least 29550 resamples for a 99.9% interval, not 5000"
    assert "100%" not in strict.paragraph
    none = recommend([_candidate("a", 0.2, base), _candidate("b", 0.1, base)], PROTOCOLS, BootstrapSettings(0))
    assert none.no_intervals == "no bootstrap resamples"
    # Where intervals are drawn, the level is said as given: 99.9 %.
    sure = recommend([_candidate("a", 0.2, _shifted(base, 0.2)), _candidate("b", 0.1, base)], PROTOCOLS,
                     BootstrapSettings(resamples=7000, level=0.999))
    assert sure.no_intervals is None and "paired 99.9% interval" in sure.paragraph


def test_a_cheaper_method_is_one_at_most_half_the_cost():
    """Timing noise decides nothing: a method 0.2 % cheaper than the leader, as faithful as it, is
    not its cheap choice; one at half its cost is. Among methods within a factor of two of the
    cheapest, the best ranked is named, whichever of them measured cheaper."""
    base = _measures()
    leader = _candidate("contrastcat", 0.0575, _shifted(base, 0.2))
    chance = _candidate("random", 0.0001, _shifted(base, -0.3))
    close = _candidate("attcat", 0.0574, _shifted(base, 0.2))
    found = recommend([leader, close, chance], PROTOCOLS, BOOT)
    assert found.cheap is None and "No method at most half the cost of contrastcat" in found.paragraph
    half = _candidate("attcat", 0.02875, _shifted(base, 0.2))
    assert recommend([leader, half, chance], PROTOCOLS, BOOT).cheap == "attcat"
    # Two cheap methods 1.5 % apart in cost: the one ranked first is named, both ways round.
    better = _shifted(base, 0.195)
    worse = _shifted(base, 0.19)
    for costs in ((0.0129, 0.0131), (0.0131, 0.0129)):
        found = recommend([leader, _candidate("full-lrp", costs[0], better), _candidate("attnlrp", costs[1], worse),
                           chance], PROTOCOLS, BOOT)
        assert found.cheap == "full-lrp" and found.ranking.index("full-lrp") < found.ranking.index("attnlrp")
    # A method clearly cheaper than the rest (over twice) is named though it ranks below them.
    found = recommend([leader, _candidate("full-lrp", 0.0129, better), _candidate("attnlrp", 0.006, worse), chance],
                      PROTOCOLS, BOOT)
    assert found.cheap == "attnlrp"


def test_methods_that_made_the_same_maps_are_one_method():
    """Two names of one method (every value the same): neither ahead of the other, the one given
    first named most faithful where both are ahead of the rest, never each other's cheap choice,
    and the paragraph says they are one method."""
    base = _measures()
    one = _candidate("attcat[layers=all]", 0.1, _shifted(base, 0.2))
    same = _candidate("attcat[layers=2]", 0.04, _shifted(base, 0.2))
    chance = _candidate("random", 0.001, _shifted(base, -0.3))
    apart = recommend([one, same, chance], PROTOCOLS, BOOT)
    assert apart.best is None and apart.cheap == "attcat[layers=2]"  # not told they are one: two leaders
    found = recommend([one, same, chance], PROTOCOLS, BOOT, same_maps=[("attcat[layers=all]", "attcat[layers=2]")])
    assert found.best == "attcat[layers=all]" and found.cheap is None
    assert found.same_maps == (("attcat[layers=all]", "attcat[layers=2]"),)
    assert ("attcat[layers=all] and attcat[layers=2] made the same maps on every input: one method under 2 names"
            in found.paragraph)
    # Another cheap method is still named.
    cheaper = _candidate("attnlrp", 0.01, _shifted(base, 0.19))
    found = recommend([one, same, cheaper, chance], PROTOCOLS, BOOT, same_maps=[("attcat[layers=2]", "attcat[layers=all]")])
    assert found.cheap == "attnlrp"


@pytest.mark.parametrize("groups", [[("a", "nosuch")], [("a", "a")], [("a", "b"), ("b", "random")], ["ab"]])
def test_same_maps_groups_name_measured_methods_once(groups):
    base = _measures()
    with pytest.raises(ValueError, match="same_maps"):
        recommend([_candidate("a", 0.1, base), _candidate("b", 0.2, base), _candidate("random", 0.3, base)],
                  PROTOCOLS, BOOT, same_maps=groups)


def test_same_maps_finds_methods_whose_every_map_agrees():
    maps = {
        "a": [[1.0, 0.5, 0.0], [0.2, 1.0]],
        "b": [[1.0, 0.5000015, 0.0], [0.2, 1.0]],  # within the tolerance: rounding, not another map
        "c": [[1.0, 0.5, 0.0], [0.2, 0.9]],  # one score of one input differs
        "d": [[1.0, 0.5, 0.0]],  # fewer inputs
        "e": [[0.2, 1.0], [1.0, 0.5, 0.0]],  # the same maps of other inputs
        "f": [[1.0, 0.5, 0.0], [0.2, 0.9]],
    }
    assert same_maps(maps) == (("a", "b"), ("c", "f"))
    assert same_maps({"a": maps["a"], "b": maps["b"]}, tolerance=1e-6) == ()


def test_no_method_is_most_faithful_among_names_of_one_method_alone():
    base = _measures()
    twins = [_candidate("attcat", 0.1, base), _candidate("attcat[layers=2]", 0.05, base)]
    found = recommend(twins, PROTOCOLS, BOOT, same_maps=[("attcat", "attcat[layers=2]")])
    assert found.best is None and found.cheap is None and "most faithful" not in found.paragraph
    # Beside a third method, the most faithful is ahead of every method but its twin, and says so.
    chance = _candidate("random", 0.001, _shifted(base, -0.3))
    found = recommend([*twins, chance], PROTOCOLS, BOOT, same_maps=[("attcat", "attcat[layers=2]")])
    assert found.best == "attcat"
    assert "against every other method but attcat[layers=2] (its maps) it is ahead" in found.paragraph


@pytest.mark.parametrize("cost", [-0.1, float("nan"), float("inf")])
def test_costs_are_finite_and_not_negative(cost):
    base = _measures()
    with pytest.raises(ValueError, match="seconds_per_input must be finite and at least 0"):
        recommend([_candidate("a", 0.1, base), _candidate("b", cost, base)], PROTOCOLS, BOOT)


def test_nothing_is_cheaper_than_a_leader_timed_at_nothing():
    base = _measures()
    found = recommend([_candidate("a", 0.0, _shifted(base, 0.2)), _candidate("b", 0.0, _shifted(base, 0.19)),
                       _candidate("random", 0.0, _shifted(base, -0.3))], PROTOCOLS, BOOT)
    assert found.best == "a" and found.cheap is None


def test_one_input_is_said_in_the_singular():
    base = _measures()
    one = {name: values[:1] for name, values in base.items()}
    found = recommend([_candidate("a", 0.2, one), _candidate("b", 0.1, one)], PROTOCOLS, BOOT)
    assert found.paragraph.startswith("On this 1 input and the 3 protocol(s)")
