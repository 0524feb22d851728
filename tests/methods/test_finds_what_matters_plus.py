"""contrastcat-plus (beyond the paper) on the planted-keyword task, against the paper's method.

The same toy classifier and library as test_finds_what_matters.py (whose docstring has the
table of every method), on the first 150 of its 300 held-out sentences, in a module of its own:
contrastcat-plus costs about three times the paper's method per input. Measured on this fixture
(print with ``pytest -s``; on all 300: 0.636 / 0.904 keyword first, the same margins):

    method               keyword first  MoRF AOPC  LeRF AOPC
    contrastcat          0.592          0.277      0.182
    contrastcat-plus     0.893          0.333      0.044

Its mixed pool offers maps that rank the keyword first, and the MoRF − LeRF score keeps the
one that does: it finds the keyword far more often than the paper's method here.
"""

from __future__ import annotations

import pytest

from contrastcat.testing import toy

from ..helpers import planted_keyword_results

NAMES = ("contrastcat", "contrastcat-plus")
N = 150


@pytest.fixture(scope="module")
def results(request, toy_classifier, toy_library):
    printed = request.config.getoption("capture") == "no"
    held_out = toy.make_examples(300, seed=2)[:N]  # the first of test_finds_what_matters.py's sentences
    return planted_keyword_results(toy_classifier, toy_library, held_out, NAMES, NAMES, (), printed)


def test_contrastcat_plus_beats_the_paper_on_the_toy(results):
    """Beyond the paper: more often the keyword first, and better on both deletion orders."""
    plus, paper = results["contrastcat-plus"], results["contrastcat"]
    assert plus[0] > paper[0] + 0.15
    assert plus[1].curves["morf"].aopc_mean > paper[1].curves["morf"].aopc_mean + 0.02
    assert plus[1].curves["lerf"].aopc_mean < paper[1].curves["lerf"].aopc_mean - 0.05
