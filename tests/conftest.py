"""Shared fixtures: tiny BERTs built here, never downloaded."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# Progress lines to a stderr that is no terminal come by the clock: a day apart, so a test that reads
# a command's stderr whole reads the same on a fast machine and a loaded slow one.
os.environ["CONTRASTCAT_PROGRESS_EVERY"] = "86400"
# Under pytest-xdist each worker is a process of its own: torch's threads share the cores among
# them rather than each worker taking every core (oversubscribed, all of them run slower). Set
# before torch is imported, and inherited by the CLI processes tests start, so a run in the test
# process and one in a child use the same thread count (the last bits of a backward pass depend on it).
_WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
if _WORKERS > 1:
    os.environ.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // _WORKERS)))

import pytest
import torch

from contrastcat.models import wrap_classifier
from contrastcat.testing import toy

from . import helpers
from .helpers import PAIR_STYLES, build_toy_library


# The files that take longest (a minute or more of one core each, measured on a 2-core Xeon),
# run first: `make test` gives pytest-xdist whole files in collection order
# (--no-loadscope-reorder), so no worker is left with a long file while the other waits. By
# default xdist would send files with the most tests first, and these have few. The second file
# needs no toy model at first: the other worker trains it meanwhile (``toy_dir``, once per run),
# rather than both waiting on one training.
HEAVY_FIRST = (
    "tests/cli/test_processes.py",
    "tests/models/test_long_texts.py",
    "tests/api/test_in_memory_hostile.py",
    "tests/api/test_in_memory.py",
    "tests/output/test_scale_out.py",
    "tests/methods/test_finds_what_matters_plus.py",
    "tests/api/test_api_hostile.py",
    "tests/models/test_family_keywords_gpt2.py",
    "tests/methods/test_finds_what_matters.py",
    "tests/api/test_explain_file_api.py",
)


def pytest_collection_modifyitems(config, items):
    rank = {name: index for index, name in enumerate(HEAVY_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))  # stable: files stay whole

# The planted-keyword task the toy tests and the demo share (see contrastcat.testing.toy).
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


def _build_toy_folder(root: Path) -> None:
    """The toy classifier trained on its task, saved with its training rows, 12 held-out inputs
    and its library (``refs.h5``)."""
    from contrastcat.models.resolve import load_classifier

    examples = toy.make_examples(TOY_TRAIN_SIZE, seed=1)
    toy.save_toy_model(root / "model", examples, seed=TOY_SEED)
    with open(root / "train.jsonl", "w", encoding="utf-8") as stream:
        for index, example in enumerate(examples):
            stream.write(json.dumps({"id": index, "text": example.text, "label": example.label}) + "\n")
    with open(root / "inputs.jsonl", "w", encoding="utf-8") as stream:
        for index, example in enumerate(toy.make_examples(12, seed=5)):
            stream.write(json.dumps({"id": f"in-{index}", "text": example.text, "label": example.label}) + "\n")
    build_toy_library(load_classifier(str(root / "model"), "cpu"), examples, root / "refs.h5")


@pytest.fixture(scope="session")
def toy_dir(tmp_path_factory):
    """A trained planted-keyword classifier saved as a local model directory, with its data and its
    library: trained and built once per run (``shared_folder``: the xdist workers read it, never
    write there; each loads its own classifier)."""
    return shared_folder(tmp_path_factory, f"toy-{TOY_TRAIN_SIZE}s1-seed{TOY_SEED}", _build_toy_folder)


@pytest.fixture(scope="session")
def toy_classifier(toy_dir):
    from contrastcat.models.resolve import load_classifier

    return load_classifier(str(toy_dir / "model"), "cpu")


@pytest.fixture(scope="session")
def toy_library(toy_dir):
    from contrastcat.library import RefLibrary

    return RefLibrary(toy_dir / "refs.h5")


@pytest.fixture(autouse=True)
def _deterministic():
    torch.manual_seed(0)


def _mount_tmpfs(where, size: str) -> bool:
    import shutil
    import subprocess

    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    return subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True).returncode == 0


@pytest.fixture(params=["tmpfs", "patched"])
def full_disk(request, tmp_path, monkeypatch):
    """A directory on a disk with about 300 KB free: a real tmpfs where mounting works (root in a
    container), else writes there patched to fail past that size with ENOSPC, as a full disk's do
    (HDF5's unbuffered file and the text outputs alike)."""
    import errno
    import io
    import subprocess

    from contrastcat.io import files
    from contrastcat.library import writer

    place = tmp_path / "disk"
    place.mkdir()
    if request.param == "tmpfs" and _mount_tmpfs(place, f"{helpers.FULL_DISK_ROOM // 1000}k"):
        request.addfinalizer(lambda: subprocess.run(["umount", "-l", str(place)], check=False))
        return place
    real_open = open

    class FullDiskFile(io.FileIO):
        def write(self, data) -> int:
            if self.tell() + len(memoryview(data).cast("B")) > helpers.FULL_DISK_ROOM:
                raise OSError(errno.ENOSPC, "No space left on device")
            return super().write(data)

    def opening(file, mode="r", buffering=-1, *args, **kwargs):
        if not str(file).startswith(str(place)) or not any(flag in mode for flag in "wa+"):
            return real_open(file, mode, buffering, *args, **kwargs)
        raw = FullDiskFile(file, mode.replace("b", "").replace("t", ""))
        if "b" in mode:
            return raw if buffering == 0 else io.BufferedRandom(raw) if "+" in mode else io.BufferedWriter(raw)
        return io.TextIOWrapper(io.BufferedWriter(raw, 8192), encoding=kwargs.get("encoding"), newline=kwargs.get("newline"))

    monkeypatch.setattr(writer, "open", opening, raising=False)
    monkeypatch.setattr(files, "open", opening, raising=False)
    return place


# --- built once per run, shared by the pytest-xdist workers ---------------------------------

def shared_folder(tmp_path_factory, name: str, build) -> Path:
    """A folder that ``build(folder)`` fills, made once per test run and shared by its pytest-xdist
    workers (pytest-xdist's documented pattern: a file lock in the run's own temporary folder, which
    the workers' folders sit in). ``name`` must say everything the build depends on (seeds, sizes):
    the folder is the build's, and tests only read it. A run without xdist builds it in its own folder."""
    from filelock import FileLock

    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # this run's folder (pytest-N), not one of another run
    folder = base / f"shared-{name}"
    with FileLock(str(folder) + ".lock"):
        if not (folder / ".complete").exists():
            if folder.exists():
                shutil.rmtree(folder)  # a build that failed half-way
            folder.mkdir()
            build(folder)
            (folder / ".complete").touch()
    return folder


# --- sentence pairs: the toy pair task (contrastcat.testing.pairs), one model per tokenizer style

PAIR_TRAIN = (2000, 0)  # (examples, seed) of the pair models' training data; the model's seed is 0 too
PAIR_REFERENCES = (600, 1)
PAIR_HELD_OUT = (120, 5)


def _build_pair_folder(root: Path, style: str) -> None:
    from contrastcat.library import BuildSettings, SelectionSettings, build_library
    from contrastcat.records.data import LabelledData
    from contrastcat.models.resolve import load_classifier
    from contrastcat.testing import pairs

    train = pairs.make_pair_examples(*PAIR_TRAIN)
    references = pairs.make_pair_examples(*PAIR_REFERENCES)
    held_out = pairs.make_pair_examples(*PAIR_HELD_OUT)
    pairs.save_pair_model(root / "model", style, train, seed=0)
    for name, examples in (("train", references), ("inputs", held_out)):
        with open(root / f"{name}.jsonl", "w", encoding="utf-8") as stream:
            for index, e in enumerate(examples):
                row = {"id": f"{name}-{index}", "premise": e.text, "hypothesis": e.pair, "label": e.label}
                stream.write(json.dumps(row) + "\n")
    classifier = load_classifier(str(root / "model"), "cpu")
    build_library(
        classifier, LabelledData([(e.text, e.pair) for e in references], [e.label for e in references], "toy pairs"),
        root / "refs.h5", BuildSettings(selection=SelectionSettings(k=30, keep=30, min_tokens=5)),
    )


@pytest.fixture(scope="session")
def pair_models(tmp_path_factory):
    """Per style (bert: token type ids; roberta: none): a trained pair classifier saved as a model
    directory, with its training data and held-out inputs as JSONL (second text in ``hypothesis``)
    and a 30-reference pair library built from 600 other pairs. Trained and built once per run
    (``shared_folder``: the xdist workers share the folders, read only); each worker loads its own
    classifier from them."""
    from contrastcat.models.resolve import load_classifier
    from contrastcat.testing import pairs

    found = {}
    held_out = pairs.make_pair_examples(*PAIR_HELD_OUT)
    sizes = "-".join(f"{count}s{seed}" for count, seed in (PAIR_TRAIN, PAIR_REFERENCES, PAIR_HELD_OUT))
    for style in PAIR_STYLES:
        root = shared_folder(tmp_path_factory, f"pairs-{style}-{sizes}", lambda folder: _build_pair_folder(folder, style))
        classifier = load_classifier(str(root / "model"), "cpu")
        found[style] = {"root": root, "classifier": classifier, "held_out": held_out}
    return found
