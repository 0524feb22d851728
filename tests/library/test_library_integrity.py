"""A damaged, incomplete or mismatched reference library is refused with one line, never used.

Covered: flipped bytes, non-finite activations, missing or edited attributes, a class count
that does not match the model, a class without references, old libraries without checksums,
re-signed nonsense, --refs-used beyond the library, and a model whose logits are not finite.
Damage is done to copies of a real library
the way it happens to files: bytes flipped on disk under HDF5, attributes
lost or edited; NaN is planted with valid checksums, as a buggy writer would.
"""

from __future__ import annotations

import json
import re
import shutil

import h5py
import numpy as np
import pytest
import torch

from contrastcat.library.schema import CHECKSUM, array_checksum, content_fingerprint

from ..helpers import assert_one_line_error, invoke


@pytest.fixture()
def copy(toy_library, tmp_path):
    """A fresh copy of the toy library, to damage."""
    path = tmp_path / "refs.h5"
    shutil.copyfile(toy_library.path, path)
    return path


def explain(tmp_path, refs, toy_dir, *extra):
    out = tmp_path / "out.jsonl"
    result = invoke("explain", toy_dir / "inputs.jsonl", "--refs", refs, "-o", out, "--quiet", *extra)
    return result, out


def flip_bytes(path, dataset: str, count: int = 8) -> None:
    """Invert bytes in the middle of a dataset's data, on disk, behind HDF5's back."""
    with h5py.File(path, "r") as file:
        node = file[dataset]
        offset, size = node.id.get_offset(), node.id.get_storage_size()
    with open(path, "r+b") as stream:
        stream.seek(offset + size // 2)
        data = stream.read(count)
        stream.seek(offset + size // 2)
        stream.write(bytes(b ^ 0xFF for b in data))


def reseal(file: h5py.File) -> None:
    """What a writer would store after the edit: the root fingerprint made to match again."""
    file.attrs["fingerprint"] = content_fingerprint(file)


def test_flipped_activation_bytes_are_caught(tmp_path, copy, toy_dir):
    for target in range(3):  # whichever class an input is explained for
        flip_bytes(copy, f"classes/{target}/activations/0")
    result, out = explain(tmp_path, copy, toy_dir)
    assert_one_line_error(result, f"{copy}: the library is damaged", "activations/0 does not match its checksum")
    assert not out.exists()


def test_flipped_metadata_bytes_are_caught(tmp_path, copy, toy_dir):
    flip_bytes(copy, "classes/1/f_c")  # which references are used, and in what order
    result, out = explain(tmp_path, copy, toy_dir)
    assert_one_line_error(result, f"{copy}: the library is damaged", "does not match its fingerprint")
    assert not out.exists()


@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_non_finite_activations_are_refused(tmp_path, copy, toy_dir, value):
    with h5py.File(copy, "r+") as file:
        for target in range(3):
            dataset = file[f"classes/{target}/activations/0"]
            values = dataset[()]
            values[0, 1, 0] = value
            dataset[...] = values
            dataset.attrs[CHECKSUM] = array_checksum(values)
        reseal(file)
    result, out = explain(tmp_path, copy, toy_dir)
    assert_one_line_error(result, f"{copy}: /classes/", "holds NaN or infinite values")
    assert not out.exists()


@pytest.mark.parametrize(
    "attribute, message",
    [("fingerprint", "library has no fingerprint, so it cannot be verified"),
     ("model_fingerprint", "not a complete reference library (no root attribute 'model_fingerprint')"),
     ("label_names", "not a complete reference library (no root attribute 'label_names')")],
)
def test_missing_root_attributes_are_named(tmp_path, copy, toy_dir, attribute, message):
    with h5py.File(copy, "r+") as file:
        del file.attrs[attribute]
    result, out = explain(tmp_path, copy, toy_dir)
    assert_one_line_error(result, f"{copy}: {message}")
    assert "__init__" not in result.stderr and not out.exists()


def test_edited_attribute_breaks_the_fingerprint(tmp_path, copy, toy_dir):
    with h5py.File(copy, "r+") as file:
        file.attrs["gamma"] = 0.5
    result, _ = explain(tmp_path, copy, toy_dir)
    assert_one_line_error(result, "the library is damaged (its content does not match its fingerprint")


def test_class_count_must_match_the_model(tmp_path, copy, toy_dir):
    with h5py.File(copy, "r+") as file:  # a consistent two-class library, for a three-class model
        file.attrs["label_names"] = json.dumps(["negative", "positive"])
        del file["classes/2"]
        for pool in file.get("pools", {}).values():  # its references' labels within the two classes too
            pool["label"][...] = pool["label"][()].clip(max=1)
        reseal(file)
    result, out = explain(tmp_path, copy, toy_dir)
    assert_one_line_error(result, f"{copy}: the library has 2 classes but the model", "has 3")
    assert not out.exists()


def test_class_without_references_is_damage(tmp_path, copy, toy_dir):
    with h5py.File(copy, "r+") as file:
        file.attrs["label_names"] = json.dumps(["negative", "positive", "neutral", "mixed"])
        reseal(file)
    result, _ = explain(tmp_path, copy, toy_dir)
    assert_one_line_error(result, f"{copy}: the library is damaged (it names 4 classes but holds no references for class 3)")


def test_schema_1_libraries_without_checksums_are_refused(tmp_path, copy, toy_dir):
    with h5py.File(copy, "r+") as file:
        file.attrs["schema_version"] = 1
    result, _ = explain(tmp_path, copy, toy_dir)
    assert_one_line_error(result, "schema version 1 (contrastcat 0.1) has no checksums", "rebuild it with build-refs")


def test_refs_used_beyond_the_library_is_refused(tmp_path, toy_library, toy_dir):
    stored = min(toy_library.pool_size("contrast", c) for c in range(3))
    result, out = explain(tmp_path, toy_library.path, toy_dir, "--refs-used", "1000")
    assert_one_line_error(
        result, "--refs-used 1000 reads 1000 references from the 'contrast' pool for class",
        f"{toy_library.path} holds only {stored}:", "--keep 1000 --min-refs 1000",
    )
    assert not out.exists()
    result, out = explain(tmp_path, toy_library.path, toy_dir, "--refs-used", str(stored), "--method", "contrastcat")
    assert result.exit_code == 0, result.output
    assert all(json.loads(line)["refs_total"] == stored for line in out.read_text().splitlines())


def test_model_with_non_finite_logits_fails_naming_the_input(tmp_path, toy_dir, toy_classifier):
    from transformers import AutoModelForSequenceClassification

    broken = AutoModelForSequenceClassification.from_pretrained(toy_dir / "model")
    with torch.no_grad():
        broken.classifier.bias[1] = float("nan")
    broken.save_pretrained(tmp_path / "nan-model")
    toy_classifier.tokenizer.save_pretrained(tmp_path / "nan-model")
    out = tmp_path / "out.jsonl"
    result = invoke("explain", toy_dir / "inputs.jsonl", "--model", tmp_path / "nan-model", "--method", "attcat",
                    "-o", out, "--quiet")
    assert_one_line_error(result, "the model's logits are not finite", code=1)
    assert re.match(rf"error: {re.escape(str(toy_dir / 'inputs.jsonl'))}:\d+: ", result.stderr)
    assert not out.exists()


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda f: f.attrs.__setitem__("hidden_size", 64.0), "root attribute 'hidden_size' must be a positive count"),
        (lambda f: f.attrs.__setitem__("label_names", json.dumps({"0": "a"})), "'label_names' must be a JSON list"),
        (lambda f: f.attrs.__setitem__("label_names", json.dumps(["a", "a", "b"])), "'label_names' must be a JSON list"),
        (lambda f: f.attrs.__setitem__("pools", json.dumps("same")), "'pools' must be a JSON list"),
        (lambda f: (f["classes/0/activations"].__delitem__("0"),
                    f["classes/0/activations"].create_dataset("0", data="not numbers")), "not floating-point"),
    ],
)
def test_signed_nonsense_is_refused(tmp_path, copy, toy_dir, edit, message):
    """Edits re-signed with a matching fingerprint: integrity holds, but the content must still make sense."""
    with h5py.File(copy, "r+") as file:
        edit(file)
        reseal(file)
    result, out = explain(tmp_path, copy, toy_dir)
    assert_one_line_error(result, str(copy), message)
    assert not out.exists()


def test_a_damaged_model_directory_is_one_line(tmp_path, toy_dir):
    model = tmp_path / "model"
    shutil.copytree(toy_dir / "model", model)
    weights = model / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:1000])
    result = invoke("explain", toy_dir / "inputs.jsonl", "--model", model, "--method", "attcat", "-o", "-")
    assert_one_line_error(result, f"model '{model}': cannot load {model}")


def test_references_longer_than_the_model_reads_are_refused(tmp_path, copy, toy_dir, toy_classifier):
    """A library whose max_length and one reference go past the model's positions, signed again:
    it opens (nothing in it contradicts itself), but is no library for this model. Before,
    explain used it, and sanity fed the reference's ids to the model and died inside it."""
    from contrastcat.errors import LibraryMismatch
    from contrastcat.library import RefLibrary
    from contrastcat.library.recapture import RecapturedLibrary

    limit = toy_classifier.position_limit
    length = limit + 36
    with h5py.File(copy, "r+") as file:
        group = file["classes/0"]
        file.attrs["max_length"] = np.int64(length * 2)
        lengths = group["length"][()]
        lengths[1] = length
        group["length"][...] = lengths
        ids = list(group["token_ids"][()])
        middle = np.resize(ids[1][1:-1], length - 2)
        ids[1] = np.concatenate([ids[1][:1], middle, ids[1][-1:]]).astype(np.int32)
        del group["token_ids"]
        group.create_dataset("token_ids", data=np.array(ids, dtype=object), dtype=h5py.vlen_dtype(np.int32))
        layers, _, hidden = group["activations/1"].shape
        values = np.random.default_rng(0).standard_normal((layers, length, hidden)).astype(np.float32)
        del group["activations/1"]
        group.create_dataset("activations/1", data=values).attrs[CHECKSUM] = array_checksum(values)
        reseal(file)
    fragments = (f"{copy}: reference 1 of classes/0 has {length} tokens", f"takes at most {limit}",
                 "damaged or built for another model")
    with RefLibrary(copy) as library:
        # The library as read, and its references recaptured on a randomised copy (sanity).
        for checked in (library, RecapturedLibrary(library, toy_classifier)):
            with pytest.raises(LibraryMismatch) as raised:
                checked.check_model(toy_classifier)
            assert all(fragment in str(raised.value) for fragment in fragments), str(raised.value)
    result, out = explain(tmp_path, copy, toy_dir, "--method", "contrastcat")
    assert_one_line_error(result, *fragments)
    assert not out.exists()


def test_an_invalid_root_attribute_is_shown_shortened(tmp_path, copy, toy_dir):
    """A bad root attribute is echoed cut short: the message stays one short line however
    large the value the file holds (a few megabytes of label names, say)."""
    huge = '["a"' + ',"b"' * 500_000 + "]"  # a JSON list, but not of distinct names
    with h5py.File(copy, "r+") as file:
        file.attrs["label_names"] = huge
        reseal(file)
    result, out = explain(tmp_path, copy, toy_dir)
    assert_one_line_error(result, f"{copy}: root attribute 'label_names' must be a JSON list", "got '[\"a\",\"b\"")
    assert len(result.stderr) < 400, len(result.stderr)
    assert not out.exists()


@pytest.mark.parametrize("key", ["model", "model_source"])
def test_a_model_name_or_source_of_megabytes_is_damage(tmp_path, copy, toy_dir, key):
    """A model's name or directory is never longer than a path can be: one of megabytes was
    echoed whole in the mismatch error, or looked up as a path (exit 1, File name too long)."""
    with h5py.File(copy, "r+") as file:
        file.attrs[key] = "/nonexistent/" + "d" * 1_000_000
        reseal(file)
    result, out = explain(tmp_path, copy, toy_dir)
    assert_one_line_error(result, f"{copy}: the library is damaged (root attribute {key!r} is 1000013 characters long)")
    assert not out.exists()


def test_a_library_path_longer_than_the_system_allows_is_one_line(tmp_path, toy_dir):
    name = tmp_path / ("d" * 300 + ".h5")
    result, out = explain(tmp_path, name, toy_dir)
    assert_one_line_error(result, "cannot be opened (File name too long)")
    assert not out.exists()
