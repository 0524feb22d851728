"""Reference library: selection (docs/spec.md §2), the HDF5 file, and model checks."""

from __future__ import annotations

import json

import h5py
import numpy as np
import pytest
import torch

from contrastcat.errors import BadInput, LibraryMismatch, RunFailed
from contrastcat.library import BuildSettings, RefLibrary, SelectionSettings, build_library
from contrastcat.records.data import LabelledData

from ..helpers import LABELS, NAMES, stub_classifier, stub_texts


# Stub classifier: row i of the data starts with token "r<i>"; the model's
# probabilities for that row are PROBS[i], whatever the rest of the text.
def build(tmp_path, **selection):
    classifier = stub_classifier()
    path = tmp_path / "stub.h5"
    report = build_library(
        classifier, LabelledData(stub_texts(), LABELS, "stub"), path,
        BuildSettings(selection=SelectionSettings(**selection), batch_size=4),
    )
    return classifier, RefLibrary(path), report


def test_selection_picks_rows_by_hand(tmp_path):
    _, library, report = build(tmp_path, gamma=0.01, k=2, keep=3)
    # Worked out by hand from PROBS: correct, long enough, other class, f_c < gamma, ascending.
    assert [e.source_row for e in library.entries(0)] == [3, 6, 5]
    assert [e.source_row for e in library.entries(1)] == [6, 8, 1]
    assert [e.source_row for e in library.entries(2)] == [8, 3, 0]  # r0 and r5 tie at 0.001: row order
    assert [e.f_c for e in library.entries(0)] == pytest.approx([0.0005, 0.003, 0.009], rel=1e-4)
    assert all(e.below_gamma for c in range(3) for e in library.entries(c))
    assert [e.label for e in library.entries(2)] == [0, 1, 0]
    assert report.selection.warnings == []


def test_too_few_below_gamma_fills_up_and_warns(tmp_path):
    _, library, report = build(tmp_path, gamma=0.001, k=2, keep=3)
    entries = library.entries(0)
    assert [e.source_row for e in entries] == [3, 6]
    assert [e.below_gamma for e in entries] == [True, False]
    assert any("'neg': only 1 reference(s) pass" in w and "0.003" in w for w in report.selection.warnings)


def test_strict_gamma_refuses(tmp_path):
    with pytest.raises(RunFailed, match="`strict_gamma`"):
        classifier = stub_classifier()
        build_library(
            classifier, LabelledData(stub_texts(), LABELS, ""), tmp_path / "x.h5",
            BuildSettings(selection=SelectionSettings(gamma=0.001, k=2, keep=3), strict_gamma=True),
        )
    assert list(tmp_path.iterdir()) == []


def test_round_trip_with_plain_h5py(tmp_path):
    classifier, library, _ = build(tmp_path, gamma=0.01, k=2, keep=3)
    with h5py.File(tmp_path / "stub.h5", "r") as file:
        assert file.attrs["format"] == "contrastcat-reference-library"
        assert file.attrs["schema_version"] == 2
        assert json.loads(file.attrs["label_names"]) == list(NAMES)
        assert file.attrs["model_fingerprint"] == classifier.fingerprint
        assert file.attrs["num_layers"] == 2 and file.attrs["hidden_size"] == 16
        group = file["classes/1"]
        assert group.attrs["name"] == "pos"
        assert list(group["source_row"][()]) == [6, 8, 1]
        assert group["text"][0].decode() == stub_texts()[6]
        stored = group["activations/0"][()]
    # Activations are the hidden states entering each layer, at the reference's own length.
    ids = torch.tensor([list(library.entries(1)[0].token_ids)])
    with torch.no_grad():
        hidden = classifier.model(input_ids=ids, output_hidden_states=True).hidden_states
    assert stored.shape == (2, 12, 16)  # [L, T_r, n]: 10 words + [CLS] + [SEP]
    assert np.allclose(stored, torch.stack(hidden[:2])[:, 0].numpy(), atol=1e-6)
    padded = library.references(1, 3, torch.device("cpu"))
    assert padded.shape == (3, 2, 12, 16)
    assert np.allclose(padded[0].numpy(), stored)


def test_library_for_another_model_is_refused(tmp_path, random_bert):
    _, library, _ = build(tmp_path, gamma=0.01, k=2, keep=3)
    with pytest.raises(LibraryMismatch, match="built for model 'stub'"):
        library.check_model(random_bert)


@pytest.mark.parametrize("content", [b"", b"not an hdf5 file at all\n" * 10])
def test_not_a_library(tmp_path, content):
    path = tmp_path / "bad.h5"
    path.write_bytes(content)
    with pytest.raises(BadInput, match="bad.h5: not a"):
        RefLibrary(path)


def test_truncated_library(tmp_path):
    build(tmp_path, gamma=0.01, k=2, keep=3)
    data = (tmp_path / "stub.h5").read_bytes()
    (tmp_path / "cut.h5").write_bytes(data[: len(data) // 2])
    with pytest.raises(BadInput, match="cut.h5"):
        library = RefLibrary(tmp_path / "cut.h5")
        library.references(0, 3, torch.device("cpu"))


def test_hdf5_without_marker(tmp_path):
    with h5py.File(tmp_path / "other.h5", "w") as file:
        file["x"] = [1, 2, 3]
    with pytest.raises(BadInput, match="not a contrastcat reference library"):
        RefLibrary(tmp_path / "other.h5")
