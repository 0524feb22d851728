"""The remembering predictor: each distinct sequence predicted once across calls, within a bound."""

from __future__ import annotations

import numpy as np
import pytest

from contrastcat.deletion.plan import Remembered


class Counting:
    """Probabilities a hand can check: [sum of ids, number of ids] per sequence; what was asked kept."""

    def __init__(self) -> None:
        self.asked: list[list[tuple[int, ...]]] = []

    def __call__(self, sequences):
        self.asked.append([tuple(s) for s in sequences])
        return np.array([[float(sum(s)), float(len(s))] for s in sequences]).reshape(len(sequences), 2)


def test_each_distinct_sequence_is_predicted_once_across_calls():
    fake = Counting()
    remembered = Remembered(fake)
    first = remembered([[1, 2], [3], [1, 2]])  # a repeat within one call is predicted once too
    assert fake.asked == [[(1, 2), (3,)]]
    assert first.tolist() == [[3.0, 2.0], [3.0, 1.0], [3.0, 2.0]]
    second = remembered([(3,), [4, 4], (1, 2)])
    assert fake.asked[1] == [(4, 4)]  # only what no call asked before
    assert second.tolist() == [[3.0, 1.0], [8.0, 2.0], [3.0, 2.0]]
    third = remembered([[3], [1, 2]])
    assert len(fake.asked) == 2 and third.tolist() == [[3.0, 1.0], [3.0, 2.0]]  # nothing to predict: no call


def test_nothing_asked_gives_the_predictors_empty_array():
    fake = Counting()
    assert Remembered(fake)([]).shape == (0, 2)


def test_the_oldest_sequences_are_forgotten_beyond_the_bound():
    fake = Counting()
    remembered = Remembered(fake, values=8)  # a sequence counts its tokens and its 2 probabilities
    remembered([[1, 1], [2, 2]])  # 8: both kept
    remembered([[3, 3]])  # 12: [1, 1] forgotten, the oldest
    remembered([[2, 2], [1, 1]])
    assert fake.asked[-1] == [(1, 1)]  # [2, 2] was still kept: not asked again
    # What a call returns is whole even where the call itself is over the bound.
    big = remembered([[5] * 10, [6] * 10])
    assert big.tolist() == [[50.0, 10.0], [60.0, 10.0]]


def test_a_model_of_many_labels_keeps_fewer_sequences():
    """The bound counts each sequence's probabilities too: 4,000 labels' rows are not 4,000
    times the memory a three-class model's are."""
    wide = lambda sequences: np.zeros((len(sequences), 4000))  # noqa: E731
    remembered = Remembered(wide, values=40_000)
    for start in range(0, 1000, 10):
        remembered([[i, i] for i in range(start, start + 10)])
    kept = remembered._kept
    assert len(kept) == 9 and sum(len(k) + row.size for k, row in kept.items()) <= 40_000


def test_only_float32_passes_are_remembered(toy_classifier):
    """In bfloat16 a sequence's probabilities depend on what shares its batch: remembered, a
    method's numbers would depend on the methods evaluated before it."""
    from contrastcat.evaluation.curves import EvalSettings
    from contrastcat.usecases.evaluate_records import Evaluating, _Evaluation

    plain = _Evaluation(toy_classifier, EvalSettings(), Evaluating(), pairs=False)
    lower = _Evaluation(toy_classifier, EvalSettings(forward_dtype="bfloat16"), Evaluating(), pairs=False)
    assert isinstance(plain.predict, Remembered) and not isinstance(lower.predict, Remembered)


@pytest.mark.parametrize("perturb", ["delete", "mask"])
def test_methods_evaluated_together_predict_their_shared_sequences_once(toy_dir, toy_classifier, tmp_path,
                                                                        monkeypatch, perturb):
    """Two methods' maps of the same inputs: evaluated together, a sequence both perturb (the input
    itself, the tokens both rank first) is predicted once, and each method's numbers are those it
    has evaluated alone (within float32's last bits: the passes are batched otherwise)."""
    import contrastcat.models as models
    from contrastcat.evaluation.curves import EvalSettings
    from contrastcat.evaluation.stats import BootstrapSettings
    from contrastcat.records.record import read_records
    from contrastcat.usecases.evaluate_records import Evaluating, evaluate_records

    from ..helpers import write_records

    made = models.predictor
    predicted: list[tuple[int, ...]] = []

    def counting(*args, **kwargs):
        predict = made(*args, **kwargs)

        def counted(sequences):
            predicted.extend(tuple(s) for s in sequences)
            return predict(sequences)

        return counted

    monkeypatch.setattr(models, "predictor", counting)
    records = list(read_records(write_records(toy_dir, tmp_path / "r.jsonl", ("keyword", "random"))))
    settings, how = EvalSettings(perturb=perturb, eraser=True, loo=True), Evaluating(bootstrap=BootstrapSettings(0))
    together = evaluate_records(toy_classifier, records, settings, how)
    asked_together = list(predicted)
    apart, asked_apart = {}, []
    for name in ("keyword", "random"):
        predicted.clear()
        apart[name] = evaluate_records(toy_classifier, [r for r in records if r.method == name], settings, how)
        asked_apart += predicted
    # Nothing predicted twice, and exactly the sequences the two evaluations apart asked for.
    assert len(asked_together) == len(set(asked_together))
    assert set(asked_together) == set(asked_apart) and len(asked_together) < len(asked_apart)
    for name in ("keyword", "random"):
        mine, alone = together.methods[name], apart[name].methods[name]
        assert mine.evaluated == alone.evaluated > 0
        for order in mine.curves:
            assert mine.curves[order].aopc == pytest.approx(alone.curves[order].aopc, abs=1e-6)
            assert mine.curves[order].lodds == pytest.approx(alone.curves[order].lodds, abs=1e-5)
        for key in mine.scalars:
            assert mine.scalars[key].values == pytest.approx(alone.scalars[key].values, abs=1e-6, nan_ok=True)
