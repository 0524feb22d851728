"""Trained tiny RoBERTa, GPT-2 and Llama: Contrast-CAT finds the planted keyword.

Each family is trained (``contrastcat.testing.tiny.train_tiny``: 2,000 toy
sentences, 2 epochs, under 2 s each) with two seeds; Contrast-CAT and the
random baseline explain 150 held-out sentences with a 30-reference library
built from 600 others. Measured (keyword ranked first among non-special
tokens, seeds 0/1/2; ``pytest -s tests/models/test_family_keywords*.py`` prints them):

    family   contrastcat            random
    roberta  0.388 0.544 0.437      0.126 0.126 0.126
    gpt2     0.447 0.777 0.612      0.068 0.068 0.068
    llama    0.864 0.864 0.796      0.136 0.136 0.136

The asserted margins sit well under those: at least 0.2 above random for every
seed and 0.25 on the mean over seeds (``helpers.assert_family_finds_the_keyword``).
Seeds 0 and 2 are kept, the lowest rate of every family among them. Their rates' 95 %
(Wilson) intervals over the 150 sentences: roberta [0.31, 0.47] and [0.36, 0.52], gpt2
[0.37, 0.53] and [0.53, 0.69], llama [0.80, 0.91] and [0.72, 0.85], random at most
[0.09, 0.20]: each seed alone clears the 0.2 margin with room. The power kept: a method
only 0.1 better than random passes one seed's assertion with probability under 0.002
(binomial, 150 sentences), both seeds' under 4e-6; a third seed (seed 1, the best rate
of every family) added a training and no sensitivity.
One module per family (this one, test_family_keywords_gpt2.py and
test_family_keywords_llama.py): each trains two models, and under pytest-xdist
the three modules run side by side.
"""

from __future__ import annotations

import pytest

from ..helpers import assert_family_finds_the_keyword


@pytest.mark.parametrize("model_type", ["roberta"])
def test_contrastcat_ranks_the_planted_keyword_first(model_type, tmp_path):
    assert_family_finds_the_keyword(model_type, tmp_path)
