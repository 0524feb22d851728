"""The one min–max scaling: hand-worked values, numpy and torch alike, constant rows to zeros."""

import numpy as np
import torch

from contrastcat.scaling import minmax


def test_minmax_by_hand_on_arrays_and_tensors():
    rows = [[2.0, 4.0, 3.0], [5.0, 5.0, 5.0]]
    expected = [[0.0, 1.0, 0.5], [0.0, 0.0, 0.0]]
    assert minmax(np.array(rows)).tolist() == expected
    assert minmax(torch.tensor(rows)).tolist() == expected
    assert minmax(np.array([-1.0, 1.0])).tolist() == [0.0, 1.0]


def test_minmax_leaves_its_input_alone():
    values = torch.tensor([1.0, 1.0])
    minmax(values)
    assert values.tolist() == [1.0, 1.0]
