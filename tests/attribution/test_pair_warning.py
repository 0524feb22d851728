"""Sentence pairs given to a model known to read single texts run (the user may mean it), with one
warning: an alias fine-tuned on a corpus of single texts, or a config whose finetuning_task is one."""

from __future__ import annotations

import warnings

import pytest
from transformers import AutoModelForSequenceClassification, AutoTokenizer

import contrastcat
from contrastcat.errors import ContrastCatWarning
from contrastcat.models.aliases import single_texts_only


def test_which_models_are_known_to_read_single_texts():
    assert single_texts_only("minilm-rt") == "was fine-tuned on single texts (corpus:rotten-tomatoes)"
    assert single_texts_only("bert-sst2", None).startswith("was fine-tuned on single texts (nyu-mll/glue")
    assert single_texts_only("./my-model", "SST-2") == (
        "was fine-tuned on single texts (its config's finetuning_task is 'SST-2')")
    assert single_texts_only("./my-model", "mnli") is None and single_texts_only("./my-model") is None


@pytest.mark.parametrize("task", [None, "sst2"])
def test_pairs_on_a_single_text_model_warn_once(toy_dir, task):
    model = AutoModelForSequenceClassification.from_pretrained(toy_dir / "model", attn_implementation="eager")
    model.config.finetuning_task = task
    classifier = contrastcat.load_model(model.eval(), AutoTokenizer.from_pretrained(toy_dir / "model"), name="mine")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        records = contrastcat.explain(classifier, [("a good film", "it was fine"), ("dull", "boring")], method="random")
        assert len(records) == 2 and records[0].pair is not None
        contrastcat.explain(classifier, ["a good film"], method="random")  # single texts: nothing to say
    said = [str(w.message) for w in caught if issubclass(w.category, ContrastCatWarning)]
    if task is None:
        assert said == []
    else:
        assert said == ["mine was fine-tuned on single texts (its config's finetuning_task is 'sst2'): its maps of "
                        "sentence pairs explain inputs of a kind it never saw, and may mean little"]


def test_the_warning_comes_from_pairing_the_model_whatever_asks(toy_dir, tmp_path):
    """build-refs, evaluate and compare pair the model as explain does (Classifier.paired): each warns."""
    model = AutoModelForSequenceClassification.from_pretrained(toy_dir / "model", attn_implementation="eager")
    model.config.finetuning_task = "cola"
    classifier = contrastcat.load_model(model.eval(), AutoTokenizer.from_pretrained(toy_dir / "model"), name="mine")
    with pytest.warns(ContrastCatWarning, match=r"^mine was fine-tuned on single texts .*'cola'"):
        paired = classifier.paired()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert paired.paired() is paired  # paired already: said once
    data = [(f"a good film {i}", "it was fine") for i in range(6)] + [(f"a dull film {i}", "so bad") for i in range(6)]
    with pytest.warns(ContrastCatWarning, match="fine-tuned on single texts"):
        try:
            contrastcat.build_library(classifier, str(tmp_path / "pairs.h5"), data=data, labels=[1] * 6 + [0] * 6)
        except contrastcat.errors.BadInput:
            pass  # too few references for a library of the toy: the warning came before
