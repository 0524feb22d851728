"""A reference library is one self-contained file, read as it was verified.

Crafted files are copies of a real library edited with h5py and sealed again (the root
fingerprint recomputed, as a writer would): before, external links and virtual datasets were
followed out of the file (the maps became another file's data), links to a system file and to
a missing path failed differently (a probe of the file system), declared shapes were read
whole before any check (gigabytes for a megabyte file), and activations were read by opening
the path again, so a library written over it mid-run was mixed into the run.
"""

from __future__ import annotations

import os
import shutil
import time

import h5py
import numpy as np
import pytest
import torch

from contrastcat.errors import BadInput
from contrastcat.library import RefLibrary
from contrastcat.library.schema import CHECKSUM, array_checksum, content_fingerprint

from ..helpers import assert_one_line_error, invoke

ACTIVATIONS = "classes/0/activations/0"


@pytest.fixture()
def copy(toy_library, tmp_path):
    path = tmp_path / "refs.h5"
    shutil.copyfile(toy_library.path, path)
    return path


def _edit(path, change) -> None:
    with h5py.File(path, "r+") as file:
        change(file)
        file.attrs["fingerprint"] = content_fingerprint(file)


def _elsewhere(tmp_path, shape, dtype="float32"):
    """Another HDF5 file holding data a crafted library may point at."""
    other = tmp_path / "other.h5"
    with h5py.File(other, "w") as file:
        file.create_dataset("data", data=np.full(shape, 7.0, dtype=dtype))
    return other


def _refused(tmp_path, path, toy_dir, *fragments):
    with pytest.raises(BadInput) as raised:
        RefLibrary(path)
    for fragment in fragments:
        assert fragment in str(raised.value), str(raised.value)
    out = tmp_path / "out.jsonl"
    result = invoke("explain", toy_dir / "inputs.jsonl", "--refs", path, "--method", "contrastcat", "-o", out, "-q")
    assert_one_line_error(result, "the library is damaged", *fragments)
    assert not out.exists()
    return str(raised.value)


def _activation_shape(path):
    with h5py.File(path, "r") as file:
        return file[ACTIVATIONS].shape


def test_an_external_link_is_refused_and_says_nothing_of_its_target(tmp_path, copy, toy_dir):
    other = _elsewhere(tmp_path, _activation_shape(copy))
    messages = []
    for target in (str(other), "/etc/hostname", str(tmp_path / "missing.h5")):
        crafted = tmp_path / f"crafted{len(messages)}.h5"
        shutil.copyfile(copy, crafted)

        def link(file, target=target):
            checksum = file[ACTIVATIONS].attrs[CHECKSUM]
            del file[ACTIVATIONS]
            file[ACTIVATIONS] = h5py.ExternalLink(target, "/data")
            if target == str(other):  # made to pass every later check: the data's own checksum
                file[ACTIVATIONS].attrs[CHECKSUM] = array_checksum(file[ACTIVATIONS][()])
            del checksum

        if target == str(other):
            _edit(crafted, link)
        else:
            with h5py.File(crafted, "r+") as file:
                link(file)
        messages.append(_refused(tmp_path, crafted, toy_dir, "/classes/0/activations/0 is a link to another file")
                        .replace(str(crafted), "LIB"))
    assert len(set(messages)) == 1  # a system file, a missing one and a library: one and the same answer


def test_a_soft_link_is_refused(tmp_path, copy, toy_dir):
    def link(file):
        del file[ACTIVATIONS]
        file[ACTIVATIONS] = h5py.SoftLink("/classes/1/activations/0")

    with h5py.File(copy, "r+") as file:
        link(file)
    _refused(tmp_path, copy, toy_dir, "/classes/0/activations/0 is a soft link")


def test_a_virtual_dataset_is_refused(tmp_path, copy, toy_dir):
    shape = _activation_shape(copy)
    other = _elsewhere(tmp_path, shape)

    def virtual(file):
        del file[ACTIVATIONS]
        layout = h5py.VirtualLayout(shape=shape, dtype="float32")
        layout[...] = h5py.VirtualSource(str(other), "data", shape=shape)
        file.create_virtual_dataset(ACTIVATIONS, layout)
        file[ACTIVATIONS].attrs[CHECKSUM] = array_checksum(file[ACTIVATIONS][()])

    _edit(copy, virtual)
    _refused(tmp_path, copy, toy_dir, "/classes/0/activations/0 is a virtual dataset")


@pytest.mark.parametrize(
    ("name", "shape", "dtype"),
    [(ACTIVATIONS, (2, 4_000_000, 64), "float32"), ("classes/0/f_c", (268_435_456,), "float64")],
)
def test_a_declared_shape_the_file_does_not_hold_is_refused_before_it_is_read(tmp_path, copy, toy_dir, name, shape, dtype):
    """2 GB declared in a file of a megabyte (HDF5 returns fill values for what is not
    stored): refused from the metadata, in well under a second's reading."""

    def declare(file):
        del file[name]
        file.create_dataset(name, shape=shape, dtype=dtype)  # storage never written: nothing on disk

    with h5py.File(copy, "r+") as file:  # sealing would read the 2 GB; the check must come first anyway
        declare(file)
    assert os.path.getsize(copy) < 2_000_000
    start = time.perf_counter()
    _refused(tmp_path, copy, toy_dir, f"/{name} declares {shape}", "the file stores 0")
    assert time.perf_counter() - start < 60  # the command included; reading 2 GB twice took minutes


def test_a_length_beyond_the_library_limit_is_damaged_not_a_memory_error(tmp_path, copy, toy_dir):
    def lengthen(file):
        lengths = file["classes/0/length"][()]
        lengths[0] = 10**9
        file["classes/0/length"][...] = lengths

    _edit(copy, lengthen)
    _refused(tmp_path, copy, toy_dir, "classes/0 reference 0 has length 1000000000")


def _doubled(source, target):
    """A library like ``source`` whose activations are all doubled and sealed again."""
    shutil.copyfile(source, target)

    def double(file):
        names = []
        file.visit(names.append)
        for name in names:
            if "/activations/" in name:
                values = file[name][()] * 2
                file[name][...] = values
                file[name].attrs[CHECKSUM] = array_checksum(values)

    _edit(target, double)


def test_a_library_replaced_during_a_run_is_not_mixed_in(tmp_path, copy):
    original = RefLibrary(copy)
    with h5py.File(copy, "r") as file:
        want = file[ACTIVATIONS][()]
    _doubled(copy, tmp_path / "new.h5")
    os.replace(tmp_path / "new.h5", copy)  # as build-refs -o puts a new library in place
    assert RefLibrary(copy).fingerprint != original.fingerprint
    got = original.references(0, 1, torch.device("cpu"))[0, :, : want.shape[1]]
    assert torch.equal(got, torch.from_numpy(want))


def test_a_library_overwritten_in_place_is_refused_not_mixed_in(tmp_path, copy):
    original = RefLibrary(copy)
    _doubled(copy, tmp_path / "new.h5")
    shutil.copyfile(tmp_path / "new.h5", copy)  # the same file, its bytes replaced
    with pytest.raises(BadInput, match="does not match its checksum|unreadable"):
        original.references(0, 1, torch.device("cpu"))


def test_a_closed_library_says_so(copy):
    with RefLibrary(copy) as library:
        pass
    with pytest.raises(BadInput, match="the library was closed"):
        library.references(0, 1, torch.device("cpu"))


def test_an_empty_dataspace_is_named(tmp_path, copy, toy_dir):
    with h5py.File(copy, "r+") as file:
        file.create_dataset("classes/0/extra", data=h5py.Empty("f4"))
    _refused(tmp_path, copy, toy_dir, "/classes/0/extra is an empty dataspace")


def _one_heap_object_for_all(path, name, big) -> int:
    """``name`` rewritten so that its first element is ``big`` bytes and every element's heap
    reference (4-byte length, heap address, index: 16 bytes each) is the first one's: a
    file of a few megabytes whose rows, read, take ``big`` bytes each."""
    with h5py.File(path, "r+") as file:
        count, dtype = len(file[name]), file[name].dtype
        del file[name]
        dataset = file.create_dataset(name, (count,), dtype=dtype)
        if h5py.check_string_dtype(dtype) is not None:
            dataset[0] = "A" * big
        else:
            dataset[0] = np.ones(big // 4, dtype=np.int32)
        for i in range(1, count):
            dataset[i] = "x" if h5py.check_string_dtype(dtype) is not None else np.ones(1, dtype=np.int32)
        offset, stored = dataset.id.get_offset(), dataset.id.get_storage_size()
    with open(path, "r+b") as handle:
        handle.seek(offset)
        first = handle.read(16)
        handle.seek(offset)
        handle.write(first * (stored // 16))
    _edit(path, lambda file: None)  # sealed as a writer would: the fingerprint matches
    return count


@pytest.mark.parametrize("name", ["classes/0/text", "classes/0/token_ids"])
def test_variable_length_rows_naming_one_large_object_are_refused_before_any_data_is_read(
    tmp_path, copy, toy_dir, monkeypatch, name
):
    """Before: every row of a 3 MB file named one 2 MB string; the fingerprint read them all
    (3.28 GB for a 21 MB file). The lengths the references declare are summed from the raw
    storage first: more than the file holds is refused before anything is read."""
    count = _one_heap_object_for_all(copy, name, 2_000_000)
    with h5py.File(copy, "r") as file:
        assert len(file[name][count - 1]) >= 500_000  # as crafted: the last row reads the large object
    assert os.path.getsize(copy) < 5_000_000
    read = []
    monkeypatch.setattr("contrastcat.library.reader.content_fingerprint", lambda file: read.append(file) or "")
    _refused(tmp_path, copy, toy_dir, f"/{name} refers to variable-length data of", "more than the whole file")
    assert not read  # refused before the content (all of it read) is fingerprinted


def test_an_object_linked_twice_is_refused_and_each_object_is_walked_once(tmp_path, copy, toy_dir):
    """Before: 25 links to a group holding 25 links to a group holding 25 links to one
    dataset were 15,625 paths to check, and accepted (the fingerprint counts objects);
    at 100 links per level, four levels took days."""
    fan = 25

    def fan_out(file):
        first = file.create_group("classes/0/B0")
        second = first.create_group("C0")
        second.create_dataset("d", data=[1])
        for i in range(1, fan):
            file["classes/0"][f"B{i}"] = first
            first[f"C{i}"] = second
            second[f"d{i}"] = second["d"]

    _edit(copy, fan_out)
    start = time.perf_counter()
    with pytest.raises(BadInput, match="is a second link to /classes/0/B0"):
        RefLibrary(copy)
    assert time.perf_counter() - start < 5
    _refused(tmp_path, copy, toy_dir, "is a second link to /classes/0/B0", "links each object once")


@pytest.mark.parametrize(
    ("edit", "fragment"),
    [
        (lambda f: f.create_group("x"), "/x is not part of a library's layout"),
        (lambda f: f.copy(f["classes/0"], "classes/00"), "/classes/00 is not named by an index"),
        (lambda f: f.move("classes/2", "classes/+2"), "/classes/+2 is not named by an index"),
        (lambda f: f["classes/0/f_c"].__setitem__(..., np.nan), "/classes/0/f_c holds nan, not a probability from 0 to 1"),
        (lambda f: f["classes/0/f_c"].__setitem__(0, 1.5), "/classes/0/f_c holds 1.5, not a probability from 0 to 1"),
        (lambda f: _replace(f, "classes/0/f_c", 0.5 + 2j), "/classes/0/f_c holds complex128"),
        (lambda f: _replace(f, "classes/0/label", 1.7), "/classes/0/label holds float64, not integers"),
        (lambda f: f["classes/0/label"].__setitem__(0, -7), "/classes/0/label holds -7, not a class index from 0 to 2"),
        (lambda f: f["classes/1/label"].__setitem__(0, 3), "/classes/1/label holds 3, not a class index from 0 to 2"),
        (lambda f: _replace(f, "classes/0/below_gamma", 7), "/classes/0/below_gamma holds int64, not booleans"),
        (lambda f: _replace(f, "classes/0/token_ids", np.array([1.5, 2.5]), h5py.vlen_dtype(np.float64)),
         "/classes/0/token_ids holds variable-length rows of float64"),
        (lambda f: _replace(f, "classes/0/text", b"x", "S1"), "/classes/0/text holds 1-byte ascii strings"),
        (lambda f: f.attrs.__setitem__("max_length", 2**62), "'max_length' is 4611686018427387904"),
        (lambda f: f["classes/0"].attrs.__setitem__("passing", np.arange(3)), "/classes/0 attribute 'passing' holds (3,)"),
    ],
)
def test_signed_values_the_writer_never_writes_are_damaged(tmp_path, copy, toy_dir, edit, fragment):
    """Before, each was read silently: f_c NaN, out of [0, 1] or complex (its imaginary part
    dropped), a label 1.7 read as 1, a flag 7 as true, a class group 00 read as class 0,
    max_length 2**62."""
    _edit(copy, edit)
    _refused(tmp_path, copy, toy_dir, fragment)


def _replace(file, name, value, dtype=None):
    """``name`` made again as as many ``value``s as it held, of ``dtype`` (default: the value's)."""
    count = len(file[name])
    del file[name]
    dataset = file.create_dataset(name, (count,), dtype=dtype or np.asarray(value).dtype)
    for i in range(count):
        dataset[i] = value


@pytest.mark.parametrize("kept", [3, "more"])
def test_token_ids_that_disagree_with_the_length_are_damaged(tmp_path, copy, toy_dir, kept):
    """A reference's ids are fed to the model again (the sanity check's randomised copies),
    its activations are read at its length: the two must agree. Before, a reference
    keeping 3 of its ids, or holding more than its length, was read and used silently."""
    def cut(file):
        ids = list(file["classes/0/token_ids"][()])
        ids[1] = ids[1][:kept] if kept != "more" else np.concatenate([ids[1], ids[1][1:-1]])
        _replace_rows(file, "classes/0/token_ids", ids)

    with h5py.File(copy, "r") as file:
        length = int(file["classes/0/length"][1])
    _edit(copy, cut)
    count = 3 if kept != "more" else 2 * length - 2
    _refused(tmp_path, copy, toy_dir, f"{copy}: the library is damaged",
             f"/classes/0 reference 1 has length {length} but {count} token ids")


def _replace_rows(file, name, rows):
    """``name`` made again as variable-length rows of int32, as the writer stores token ids."""
    del file[name]
    file.create_dataset(name, data=np.array([np.asarray(r, np.int32) for r in rows], dtype=object),
                        dtype=h5py.vlen_dtype(np.int32))
