"""The card's two commands work exactly as written, in a fresh directory.

    contrastcat build-refs --model minilm-rt
    contrastcat explain examples/minilm-rt/inputs.jsonl -o attr.jsonl

Run here on the toy model, registered under an alias with its training data
as the alias's default data set (what minilm-rt has), so both command lines
are the card's with only the model's name changed.
"""

from __future__ import annotations

import json
import os
import shutil

import pytest

import contrastcat
from contrastcat.errors import BadInput
from contrastcat.library import RefLibrary, defaults
from contrastcat.models import aliases, resolve
from contrastcat.models.loading import quiet_transformers
from contrastcat.models.zoo import cache
from contrastcat.records.data import DataSource
from contrastcat.testing import toy

from ..helpers import assert_one_line_error, invoke


@pytest.fixture()
def card(tmp_path, toy_dir, monkeypatch):
    """A fresh, empty working directory; alias ``toy`` = the toy model and its training data."""
    alias = aliases.ModelAlias("toy", str(toy_dir / "model"), DataSource(str(toy_dir / "train.jsonl")))
    monkeypatch.setitem(aliases.ALIASES, "toy", alias)
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path / "cache"))
    work = tmp_path / "work"
    work.mkdir()
    shutil.copy(toy_dir / "inputs.jsonl", work / "inputs.jsonl")
    monkeypatch.chdir(work)
    return work


def records(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_the_two_commands_as_written(card):
    built = invoke("build-refs", "--model", "toy")
    assert built.exit_code == 0, built.output
    library = RefLibrary(card / "refs.h5")
    assert library.info.model == "toy"

    explained = invoke("explain", "inputs.jsonl", "-o", "attr.jsonl")
    assert explained.exit_code == 0, explained.output
    assert explained.stderr.splitlines()[0] == "no --refs or --model given: using ./refs.h5 and its model toy"
    implicit = records(card / "attr.jsonl")
    assert len(implicit) == 12 and {r["method"] for r in implicit} == {"contrastcat"}
    assert {r["library"] for r in implicit} == {library.fingerprint}

    named = invoke("explain", "inputs.jsonl", "--refs", "refs.h5", "--model", "toy", "-o", "named.jsonl")
    assert named.exit_code == 0, named.output
    assert (card / "named.jsonl").read_bytes() == (card / "attr.jsonl").read_bytes()


def test_with_no_library_here_the_default_model_and_its_cached_library(card, monkeypatch):
    monkeypatch.setattr(defaults, "DEFAULT_MODEL", "toy")
    first = invoke("explain", "inputs.jsonl", "-o", "attr.jsonl")
    assert first.exit_code == 0, first.output
    cached = defaults.cached_library_path("toy")
    assert first.stderr.splitlines()[:2] == [  # said before the scan, and what was used
        f"building the default library of toy from its training data (once; cached in {cached})",
        f"no --refs, --model or ./refs.h5: using the default model toy and its library {cached} (built now and cached)",
    ]
    assert not (card / "refs.h5").exists()  # the cache's library, not one in the user's directory
    assert {r["library"] for r in records(card / "attr.jsonl")} == {RefLibrary(cached).fingerprint}

    stamp = cached.stat().st_mtime_ns
    again = invoke("explain", "inputs.jsonl", "-o", "again.jsonl")
    assert again.exit_code == 0, again.output
    assert again.stderr.splitlines()[0].endswith(f"its library {cached} (cached)")
    assert cached.stat().st_mtime_ns == stamp
    assert (card / "again.jsonl").read_bytes() == (card / "attr.jsonl").read_bytes()

    cached.write_bytes(b"not a library")  # the cache's own file: rebuilt, not an error
    mended = invoke("explain", "inputs.jsonl", "-o", "mended.jsonl", "--quiet")
    assert mended.exit_code == 0, mended.output
    assert mended.stderr == ""  # --quiet: not even the line on the choice
    RefLibrary(cached)

    attcat = invoke("explain", "inputs.jsonl", "--method", "attcat", "-o", "attcat.jsonl")
    assert attcat.exit_code == 0, attcat.output
    assert attcat.stderr.splitlines()[0] == "no --refs, --model or ./refs.h5: using the default model toy"


def test_build_refs_replaces_only_a_library_of_the_same_model(card, tmp_path):
    assert invoke("build-refs", "--model", "toy", "--quiet").exit_code == 0
    first = RefLibrary(card / "refs.h5").fingerprint
    same = invoke("build-refs", "--model", "toy", "--quiet", "--seed", "1")  # same model: rebuilt
    assert same.exit_code == 0, same.output
    assert RefLibrary(card / "refs.h5").fingerprint != first

    other = tmp_path / "other-model"  # another model: an untrained toy with the same tokenizer
    with quiet_transformers():
        toy.make_model(seed=5).save_pretrained(other)
    toy.make_tokenizer().save_pretrained(other)
    before = (card / "refs.h5").read_bytes()
    refused = invoke("build-refs", "--model", other, "--data", "inputs.jsonl")
    assert_one_line_error(refused, "refs.h5: holds a library built for model 'toy'", "-o refs.h5 replaces it")
    assert (card / "refs.h5").read_bytes() == before

    (card / "refs.h5").write_bytes(b"my notes, not a library")
    refused = invoke("build-refs", "--model", "toy")
    assert_one_line_error(refused, "refs.h5: exists and is not a usable reference library", "pass -o")
    assert (card / "refs.h5").read_bytes() == b"my notes, not a library"

    named = invoke("build-refs", "--model", "toy", "-o", "refs.h5", "--quiet")  # asked for: replaced
    assert named.exit_code == 0, named.output
    RefLibrary(card / "refs.h5")


def test_an_unusable_refs_h5_here_is_one_line_that_says_why_it_was_read(card):
    (card / "refs.h5").write_text("hello\n")
    result = invoke("explain", "inputs.jsonl", "-o", "attr.jsonl")
    assert_one_line_error(result, "refs.h5: not a readable reference library",
                          "explain reads ./refs.h5 when neither --refs nor --model is given")
    assert not (card / "attr.jsonl").exists()


def test_the_python_api_has_the_same_defaults(card):
    classifier = contrastcat.load_model("toy")
    library = contrastcat.build_library(classifier)  # no path: ./refs.h5
    assert library.path == "refs.h5" and library.info.model == "toy"
    (card / "refs.h5").write_bytes(b"x")
    with pytest.raises(BadInput, match="exists and is not a usable reference library"):
        contrastcat.build_library(classifier)
    assert (card / "refs.h5").read_bytes() == b"x"
    cached, built = contrastcat.cached_library(classifier)
    assert built and contrastcat.cached_library(classifier)[1] is False
    assert cached.info.model_fingerprint == classifier.fingerprint
    with pytest.raises(BadInput, match="not built yet"):
        cache_file = defaults.cached_library_path("toy")
        cache_file.unlink()
        contrastcat.cached_library(classifier, build=False)


def test_a_library_whose_model_directory_is_gone_says_so(card, toy_dir, tmp_path):
    moved = tmp_path / "moved-model"
    shutil.copytree(toy_dir / "model", moved)
    classifier = contrastcat.load_model(str(moved))
    contrastcat.build_library(classifier, "refs.h5", data=str(toy_dir / "train.jsonl"))
    shutil.rmtree(moved)
    result = invoke("explain", "inputs.jsonl", "-o", "attr.jsonl")
    assert_one_line_error(result, f"refs.h5: built for model {str(moved)!r} loaded from {moved}",
                          "not a directory any more: name the model's directory now with --refs refs.h5 --model DIR")


def test_a_refs_h5_that_is_no_regular_file(card):
    os.mkfifo(card / "refs.h5")
    assert_one_line_error(invoke("explain", "inputs.jsonl", "-o", "attr.jsonl"), "refs.h5: not a regular file")
    assert_one_line_error(invoke("build-refs", "--model", "toy"),
                          "refs.h5: exists and is not a usable reference library (not a regular file)")
    assert (card / "refs.h5").is_fifo()


def test_the_same_relative_name_in_two_directories_is_two_models(card, toy_dir, tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    shutil.copytree(toy_dir / "model", first / "model")
    with quiet_transformers():
        toy.make_model(seed=5).save_pretrained(second / "model")
    toy.make_tokenizer().save_pretrained(second / "model")
    data = str(toy_dir / "train.jsonl")
    os.chdir(first)  # the fixture's monkeypatch.chdir puts the directory back
    assert invoke("build-refs", "--model", "./model", "--data", data, "--quiet").exit_code == 0
    shutil.copy(first / "refs.h5", second / "refs.h5")
    os.chdir(second)
    before = (second / "refs.h5").read_bytes()
    refused = invoke("build-refs", "--model", "./model", "--data", data)
    assert_one_line_error(refused, "refs.h5: holds a library built for model './model'")
    assert (second / "refs.h5").read_bytes() == before


def test_a_file_that_is_no_library_is_refused_before_the_model_loads(card, monkeypatch):
    (card / "refs.h5").write_text("notes\n")
    monkeypatch.setattr(resolve, "load_classifier", lambda *a, **k: pytest.fail("loaded the model"))
    assert_one_line_error(invoke("build-refs", "--model", "toy"), "refs.h5: exists and is not a usable reference library")


def test_one_cached_library_per_precision_and_clear_refusals(card, monkeypatch):
    from contrastcat.models import recast

    classifier = contrastcat.load_model("toy")
    full, _ = contrastcat.cached_library(classifier)
    stamp = defaults.cached_library_path("toy").stat().st_mtime_ns
    # recast casts the model in place: a second copy, so that `classifier` keeps float32 weights.
    half, built = contrastcat.cached_library(recast(contrastcat.load_model("toy"), "bfloat16"))
    assert built and half.path == str(defaults.cached_library_path("toy", "bfloat16")) != full.path
    assert half.info.model_dtype == "bfloat16"
    assert contrastcat.cached_library(classifier)[1] is False  # the float32 one was not rebuilt
    assert defaults.cached_library_path("toy").stat().st_mtime_ns == stamp

    defaults.cached_library_path("toy").write_bytes(b"damaged")
    with pytest.raises(BadInput, match="the default library of toy is needed, but it cannot be used"):
        contrastcat.cached_library(classifier, build=False)


def test_shards_need_the_default_library_built_first(card, monkeypatch):
    monkeypatch.setattr(defaults, "DEFAULT_MODEL", "toy")
    refused = invoke("explain", "inputs.jsonl", "--shard", "0/2", "-o", "part0.jsonl")
    assert_one_line_error(refused, "the default library of toy is needed, but it is not built yet",
                          "no torchrun, no --shard")
    assert not defaults.cached_library_path("toy").exists()
    assert invoke("explain", "inputs.jsonl", "-o", "whole.jsonl", "--quiet").exit_code == 0
    for index in (0, 1):
        part = invoke("explain", "inputs.jsonl", "--shard", f"{index}/2", "-o", f"part{index}.jsonl", "--quiet")
        assert part.exit_code == 0, part.output
    merged = invoke("merge", "part0.jsonl", "part1.jsonl", "-o", "merged.jsonl")
    assert merged.exit_code == 0, merged.output
    assert (card / "merged.jsonl").read_bytes() == (card / "whole.jsonl").read_bytes()


def test_the_default_library_refuses_a_pool_it_lacks_before_building(card, monkeypatch):
    monkeypatch.setattr(defaults, "DEFAULT_MODEL", "toy")
    refused = invoke("explain", "inputs.jsonl", "--reference-select", "same", "-o", "attr.jsonl")
    assert_one_line_error(refused, "reads the 'same' reference pool, which the default library does not store",
                          "build-refs --pools same,random")
    assert not defaults.cached_library_path("toy").exists()


def test_a_cache_that_cannot_hold_the_library_is_one_line(card, monkeypatch, tmp_path):
    monkeypatch.setattr(defaults, "DEFAULT_MODEL", "toy")
    (tmp_path / "cache").mkdir(exist_ok=True)
    (tmp_path / "cache" / "libraries").write_text("a file, not a folder\n")
    assert_one_line_error(invoke("explain", "inputs.jsonl", "-o", "attr.jsonl"), "cannot hold the cached library")
