"""The target type: read from its words, checked on the model, and the one reading of how many
records an input has (what explain writes by and what resume and shards cut files by)."""

from types import SimpleNamespace

import pytest

from contrastcat.attribution.targets import ALL_ACTIVE, CLASS, EACH_ACTIVE, GOLD, PRED, PREDICTED, Target
from contrastcat.errors import BadInput

NAMES = ("neg", "neu", "pos")


@pytest.mark.parametrize("given, rule, index", [
    ("pred", PRED, None), ("gold", GOLD, None), ("all-active", ALL_ACTIVE, None), ("2", CLASS, 2), (0, CLASS, 0),
])
def test_read_takes_each_spelling(given, rule, index):
    target = Target.read("--target", given)
    assert (target.rule, target.index) == (rule, index)
    assert target.written == given if not isinstance(given, str) or not given.isdigit() else int(given)
    assert Target.read("--target", target) is target


@pytest.mark.parametrize("given", [True, 1.0, "Pred", "-1", "", None, "١"])
def test_read_refuses_other_words(given):
    with pytest.raises(BadInput, match=r"^--target must be pred, gold, all-active or a class index"):
        Target.read("--target", given)


def test_a_number_no_model_has_is_refused_before_any_model_without_converting_it():
    with pytest.raises(BadInput, match=r"^--target 9{20}\.\.\.: no model has that many classes$"):
        Target.read("--target", "9" * 5000)


def test_on_model_checks_the_class_and_the_kind_of_model():
    assert Target.read("t", 2).on_model(3, False, "--target") == Target(CLASS, 2)
    with pytest.raises(BadInput, match=r"^--target 3: the model has 3 classes \(0\.\.2\)$"):
        Target.read("t", 3).on_model(3, False, "--target")
    with pytest.raises(BadInput, match="this model is single-label"):
        EACH_ACTIVE.on_model(3, False, "--target")
    assert EACH_ACTIVE.on_model(3, True) is EACH_ACTIVE


def test_fixed_is_the_class_known_before_the_pass():
    row = SimpleNamespace(label="pos", line=4)
    assert Target(CLASS, 1).fixed(row, NAMES, "f:4") == 1
    assert Target(GOLD).fixed(row, NAMES, "f:4") == 2
    assert PREDICTED.fixed(row, NAMES, "f:4") is None and EACH_ACTIVE.fixed(row, NAMES, "f:4") is None
    with pytest.raises(BadInput, match=r"^f:4: the gold target needs a label on every input$"):
        Target(GOLD).fixed(SimpleNamespace(label=None, line=4), NAMES, "f:4")


def test_labels_per_input_from_the_written_pass():
    # Hand-worked: 0.51 and 0.9 are above 0.5; 0.5 itself is not; the top label is always among them.
    assert EACH_ACTIVE.labels([0.51, 0.5, 0.9], 2) == [0, 2]
    assert EACH_ACTIVE.labels([0.1, 0.2, 0.3], 2) == [2]
    assert PREDICTED.labels([0.51, 0.5, 0.9], 2) == [2]  # one run, one target: one record per method
    assert EACH_ACTIVE.written_labels({"probs": [0.51, 0.5, 0.9], "predicted": 2}) == [0, 2]
    assert EACH_ACTIVE.written_labels({"probs": [0.51, 0.5, 0.9], "predicted": 2}, labels=2) is None  # not this model's
    assert EACH_ACTIVE.written_labels({"probs": [0.5, True], "predicted": 0}) is None
    assert EACH_ACTIVE.written_labels({"probs": [0.5, 0.5], "predicted": 2}) is None


def test_explains_names_the_record_of_this_target():
    record = {"target": 2, "target_name": "pos", "predicted": 2, "probs": [0.1, 0.2, 0.7]}
    row = SimpleNamespace(label="neg", line=1)
    assert PREDICTED.explains(record, row, NAMES, "f:1")
    assert not Target(GOLD).explains(record, row, NAMES, "f:1")
    assert Target(CLASS, 2).explains(record, row, NAMES, "f:1")
    assert not Target(CLASS, 2).explains({**record, "target_name": "neg"}, row, NAMES, "f:1")
    assert not PREDICTED.explains({**record, "target": True}, row, NAMES, "f:1")


def test_usable_leaves_out_rows_without_a_gold_label_and_says_why():
    rows = [SimpleNamespace(label="pos", line=1), SimpleNamespace(label=None, line=2)]
    skipped: list[str] = []
    assert list(Target(GOLD).usable(rows, NAMES, "in.jsonl", skipped)) == rows[:1]
    assert skipped == ["in.jsonl:2: the gold target needs a label on every input"]
    with pytest.raises(BadInput, match=r"^in.jsonl: no input row has a usable label"):
        list(Target(GOLD).usable(rows[1:], NAMES, "in.jsonl", []))
    assert list(PREDICTED.usable(rows, NAMES, "in.jsonl", skipped)) == rows
