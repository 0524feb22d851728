"""Model directories that cannot be what they claim: refused in one line.

Each case is the toy model's directory with one thing broken the way users' directories break:
before, the first loaded with every token [UNK] and explained garbage with exit 0, the others
were loaded as plain BERT with random weights or failed with a message that said nothing.
"""

from __future__ import annotations

import json
import shutil

import pytest
import torch
from transformers import BertModel

from contrastcat.errors import BadInput
from contrastcat.models.resolve import load_classifier

from ..helpers import assert_one_line_error, invoke


@pytest.fixture
def broken(toy_dir, tmp_path):
    """A copy of the toy model's directory to break."""
    model = tmp_path / "model"
    shutil.copytree(toy_dir / "model", model)
    return model


def _edit_json(path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def _explain(model, toy_dir, tmp_path):
    out = tmp_path / "out.jsonl"
    result = invoke("explain", toy_dir / "inputs.jsonl", "--model", model, "--method", "attcat", "-o", out, "-q")
    assert not out.exists()
    return result


def test_a_model_without_its_vocabulary_is_refused(broken, toy_dir, tmp_path):
    (broken / "tokenizer.json").unlink()
    result = _explain(broken, toy_dir, tmp_path)
    assert_one_line_error(result, f"the tokenizer in {broken} has no vocabulary", "tokenizer.json")


def test_a_damaged_tokenizer_file_says_which_part_and_what(broken, toy_dir, tmp_path):
    _edit_json(broken / "tokenizer.json", lambda data: data.pop("added_tokens"))
    assert_one_line_error(_explain(broken, toy_dir, tmp_path), "its tokenizer: a required entry 'added_tokens' is missing")


def test_weights_that_disagree_with_the_config_name_the_weight(broken, toy_dir, tmp_path):
    _edit_json(broken / "config.json", lambda data: data.update(hidden_size=48))
    result = _explain(broken, toy_dir, tmp_path)
    assert_one_line_error(result, "its weights: ", "in the checkpoint but config.json makes it", "[48]")
    assert "above report" not in result.stderr


@pytest.mark.parametrize(
    "change, fragment",
    [
        (lambda data: data.update(auto_map={"AutoModelForSequenceClassification": "modeling.Mine"}), "declares its own code"),
        (lambda data: data.update(architectures=["MineForSequenceClassification"]), "'MineForSequenceClassification'"),
    ],
)
def test_a_model_that_needs_its_own_code_is_refused_not_loaded_as_bert(broken, toy_dir, tmp_path, change, fragment):
    _edit_json(broken / "config.json", change)
    assert_one_line_error(_explain(broken, toy_dir, tmp_path), fragment)


def test_a_checkpoint_without_a_classification_head_is_refused(toy_dir, tmp_path):
    """Loading it would make a random head: every explanation would be of noise."""
    trained = load_classifier(str(toy_dir / "model"), "cpu")
    encoder = BertModel(trained.model.config, add_pooling_layer=True)
    encoder.load_state_dict(trained.model.bert.state_dict())
    headless = tmp_path / "headless"
    encoder.save_pretrained(headless)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(toy_dir / "model" / name, headless / name)
    with pytest.raises(BadInput, match=r"config.json names BertModel, a base model \(no classification head\)"):
        load_classifier(str(headless), "cpu")
    # A config that does not say what it is: the missing weights tell.
    config = json.loads((headless / "config.json").read_text())
    del config["architectures"]
    (headless / "config.json").write_text(json.dumps(config))
    with pytest.raises(BadInput, match=r"lacks the weight classifier\.(bias|weight) and 1 more: it would be random"):
        load_classifier(str(headless), "cpu")


def test_the_intact_model_still_loads_with_the_same_weights(toy_dir, toy_classifier):
    again = load_classifier(str(toy_dir / "model"), torch.device("cpu"))
    assert again.fingerprint == toy_classifier.fingerprint


def test_a_tokenizer_that_needs_its_own_code_is_refused(broken, toy_dir, tmp_path):
    """auto_map in tokenizer_config.json is refused, as in config.json."""
    config = broken / "tokenizer_config.json"
    settings = json.loads(config.read_text()) if config.exists() else {}
    settings["auto_map"] = {"AutoTokenizer": ["tokenization.Mine", None]}
    config.write_text(json.dumps(settings))
    assert_one_line_error(_explain(broken, toy_dir, tmp_path), "tokenizer_config.json declares its own tokenizer code")
