"""Trained tiny GPT-2: Contrast-CAT finds the planted keyword (two seeds).

The task, the measure and the margins are test_family_keywords.py's (which has the table);
one module per family, so that under pytest-xdist the three families train side by side.
"""

from __future__ import annotations

import pytest

from ..helpers import assert_family_finds_the_keyword


@pytest.mark.parametrize("model_type", ["gpt2"])
def test_contrastcat_ranks_the_planted_keyword_first(model_type, tmp_path):
    assert_family_finds_the_keyword(model_type, tmp_path)
