"""Shared fixtures: tiny BERTs built here, never downloaded."""

from __future__ import annotations

import json
import os

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import pytest
import torch

from contrastcat import toy
from contrastcat.library import BuildOptions, RefLibrary, SelectionSettings, build_library
from contrastcat.models import wrap_classifier

# The planted-keyword task the toy tests and the demo share (see contrastcat.toy).
TOY_TRAIN_SIZE = 2000
TOY_SEED = 0


@pytest.fixture(scope="session")
def random_bert():
    """An untrained tiny BERT (2 layers, hidden 32): fast, for exact-value tests."""
    model = toy.make_model(seed=3, hidden=32, layers=2, heads=4)
    return wrap_classifier(model, toy.make_tokenizer(), name="random-bert")


@pytest.fixture(scope="session")
def toy_examples():
    return toy.make_examples(TOY_TRAIN_SIZE, seed=1)


@pytest.fixture(scope="session")
def toy_dir(tmp_path_factory, toy_examples):
    """A trained planted-keyword classifier saved as a local model directory, with its data."""
    root = tmp_path_factory.mktemp("toy")
    toy.save_toy_model(root / "model", toy_examples, seed=TOY_SEED)
    with open(root / "train.jsonl", "w", encoding="utf-8") as stream:
        for index, example in enumerate(toy_examples):
            stream.write(json.dumps({"id": index, "text": example.text, "label": example.label}) + "\n")
    with open(root / "inputs.jsonl", "w", encoding="utf-8") as stream:
        for index, example in enumerate(toy.make_examples(12, seed=5)):
            stream.write(json.dumps({"id": f"in-{index}", "text": example.text, "label": example.label}) + "\n")
    return root


@pytest.fixture(scope="session")
def toy_classifier(toy_dir):
    from contrastcat.resolve import load_classifier

    return load_classifier(str(toy_dir / "model"), "cpu")


def build_toy_library(classifier, examples, path, **options) -> RefLibrary:
    """A library over the toy training data; ``options`` go to BuildOptions."""
    build_library(
        classifier,
        [e.text for e in examples],
        [e.label for e in examples],
        path,
        BuildOptions(selection=SelectionSettings(), **options),
        data="toy",
    )
    return RefLibrary(path)


@pytest.fixture(scope="session")
def toy_library(toy_dir, toy_classifier, toy_examples):
    return build_toy_library(toy_classifier, toy_examples, toy_dir / "refs.h5")


@pytest.fixture(autouse=True)
def _deterministic():
    torch.manual_seed(0)
