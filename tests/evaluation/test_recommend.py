"""The recommendation a comparison prints, on constructed measures whose answer is known: paired
differences all of one sign (every resample's mean has that sign, so the interval excludes 0),
or of both signs evenly (it does not), and constant offsets whose interval is the offset itself."""

from __future__ import annotations

import numpy as np
import pytest

from contrastcat.evaluation.recommend import Candidate, Protocol, recommend
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
    assert ("contrastcat-lrp (0.1 s/input) is within 10% of attnlrp (0.3 s/input) on every protocol, at the worse "
            "end of its interval (of the way from random to it)") in found.paragraph
    # A stricter margin: the cheap method is no longer close enough (0.02 > 2 % of 0.5).
    strict = recommend([far, near, best, chance], PROTOCOLS, BOOT, margin=0.02)
    assert strict.best == "attnlrp" and strict.cheap is None
    assert "No cheaper method is within 2% of attnlrp" in strict.paragraph


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
    assert "100 bootstrap resamples, too few for a 95% interval on these inputs" in short.paragraph


def test_inputs_are_paired_by_key():
    """Values of other inputs are not compared: b measured on half the inputs is paired on those."""
    base = _measures()
    b_values = {name: {f"in{i}": float(v) for i, v in enumerate(values) if i % 2 == 0} for name, values in base.items()}
    found = recommend([_candidate("a", 0.2, _shifted(base, 0.2)), Candidate("b", 0.1, b_values)], PROTOCOLS, BOOT)
    assert found.best == "a" and found.inputs == N // 2


@pytest.mark.parametrize("bad", [{"margin": 1.0}, {"margin": -0.1}])
def test_bad_arguments_are_refused(bad):
    base = _measures()
    with pytest.raises(ValueError):
        recommend([_candidate("a", 0.1, base), _candidate("b", 0.2, base)], PROTOCOLS, BOOT, **bad)
    with pytest.raises(ValueError):
        recommend([_candidate("a", 0.1, base)], PROTOCOLS, BOOT)


def test_the_margin_of_a_measure_near_zero_is_the_distance_from_chance():
    """Sufficiency sits near 0 (here below it): 10 % of the leader's own value is no scale. The
    cheap method is 0.01 worse where chance is 0.33 worse: within 10 % of the way from chance."""
    rng = np.random.default_rng(7)
    suff = [Protocol("sufficiency", False)]
    leader = -0.03 + rng.normal(0, 0.02, N)
    found = recommend([
        _candidate("full-lrp", 0.03, {"sufficiency": leader}),
        _candidate("attnlrp", 0.02, {"sufficiency": leader + 0.01}),
        _candidate("random", 0.01, {"sufficiency": leader + 0.33}),
    ], suff, BOOT)
    assert found.best == "full-lrp" and (found.cheap, found.cheap_of) == ("attnlrp", "full-lrp")
    # Without chance compared, the leader's own |mean| (0.03) is the scale: 0.01 is beyond 10 % of it.
    alone = recommend([_candidate("full-lrp", 0.03, {"sufficiency": leader}),
                       _candidate("attnlrp", 0.02, {"sufficiency": leader + 0.01})], suff, BOOT)
    assert alone.best == "full-lrp" and alone.cheap is None
    assert alone.paragraph.endswith("No cheaper method is within 10% of full-lrp on every protocol.")
