"""build-refs and the files around a model under hostile use.

A full disk (the ``full_disk`` fixture: a real small tmpfs where this machine lets us mount one,
else patched writes that fail the way a full disk does): build-refs must end in one line naming
the file, exit 1, no partial file, and an existing library untouched.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from contrastcat.library import RefLibrary

from ..helpers import assert_one_line_error, invoke


def test_build_refs_on_a_full_disk_is_one_line_and_keeps_what_was_there(toy_dir, full_disk):
    old = full_disk / "refs.h5"
    old.write_bytes(b"the previous library, whatever it was")
    for output in (old, full_disk / "new.h5"):
        result = invoke(
            "build-refs", "--model", toy_dir / "model", "--data", toy_dir / "train.jsonl", "-o", output, "-q"
        )
        assert_one_line_error(result, f"{output}: cannot write (No space left on device)", code=1)
    assert old.read_bytes() == b"the previous library, whatever it was"
    assert sorted(p.name for p in full_disk.iterdir()) == ["refs.h5"]  # no temporary file left


def test_a_library_beside_its_model_can_be_rebuilt(toy_dir, tmp_path):
    """-o MODEL/refs.h5 works the second time too; the model's own files stay refused."""
    model = tmp_path / "model"
    shutil.copytree(toy_dir / "model", model)
    command = ["build-refs", "--model", model, "--data", toy_dir / "train.jsonl", "--max-scan", "400", "-q"]
    for _ in range(2):
        assert invoke(*command, "-o", model / "refs.h5").exit_code == 0
    assert RefLibrary(model / "refs.h5").info.scanned == 400
    for name in ("model.safetensors", "config.json", "tokenizer.json", "tokenizer_config.json"):
        before = (model / name).read_bytes()
        assert_one_line_error(invoke(*command, "-o", model / name), "which this run reads (the model)")
        assert (model / name).read_bytes() == before


def test_data_that_cannot_give_references_is_bad_input_before_the_scan(toy_dir, tmp_path):
    """--min-tokens above every row, and a one-class file, are exit 2 (were exit 1)."""
    data = tmp_path / "one-class.jsonl"
    rows = [line for line in (toy_dir / "train.jsonl").read_text().splitlines() if '"label": 1}' in line]
    data.write_text("\n".join(rows[:50]) + "\n")
    out = tmp_path / "refs.h5"
    base = ["build-refs", "--model", toy_dir / "model", "-o", out, "-q"]
    assert_one_line_error(invoke(*base, "--data", data), "every row is of class 'positive'", "at least two classes")
    assert_one_line_error(
        invoke(*base, "--data", toy_dir / "train.jsonl", "--min-tokens", "1000"), "has 1000 tokens (--min-tokens"
    )
    # A folder of the user's that holds no data set: the input is wrong (exit 2), nothing to fetch.
    (tmp_path / "folder").mkdir()
    assert_one_line_error(invoke(*base, "--data", tmp_path / "folder"),
                          "folder: a folder that holds no data set the datasets library reads", "FILE.jsonl")
    assert not out.exists()


@pytest.mark.parametrize(
    "option, value, fragment",
    [
        ("--keep", "99999999999999999999", "--keep"),
        ("--min-refs", "99999999999999999999", "--min-refs"),
        ("--seed", "99999999999999999999", "--seed"),
        ("--gamma", "1e400", "--gamma"),
    ],
)
def test_huge_numbers_are_bad_input_before_any_work(toy_dir, tmp_path, option, value, fragment):
    """A number past any sensible bound is exit 2 with one line (was ValueError/TypeError, exit 1, some
    of them after the whole scan)."""
    out = tmp_path / "refs.h5"
    result = invoke("build-refs", "--model", toy_dir / "model", "--data", toy_dir / "train.jsonl", "-o", out, option, value)
    assert_one_line_error(result, fragment)
    assert not out.exists()


def test_explain_batch_size_and_method_numbers_are_bounded(toy_dir, tmp_path, monkeypatch, capsys):
    out = tmp_path / "a.jsonl"
    base = ["explain", toy_dir / "inputs.jsonl", "--model", toy_dir / "model", "-o", out, "-q"]
    assert_one_line_error(invoke(*base, "--method", "random", "--seed", "99999999999999999999"), "--seed")
    from contrastcat_cli import launch

    # Typer's range check, or the options' own (evaluate): what the console script says.
    for command in (["explain"], ["build-refs"], ["evaluate", "attr.jsonl"]):
        monkeypatch.setattr("sys.argv", ["contrastcat", *command, "--model", "m", "--batch-size", "99999999999999999999"])
        assert launch._run() == 2
        said = capsys.readouterr().err
        assert said.count("\n") == 1 and said.startswith("error: ") and "--batch-size" in said and "65536" in said
    assert not out.exists()


def test_a_long_output_name_that_fits_is_written(toy_dir, tmp_path):
    """A 231-character name fits the file system; its temporary name must fit too."""
    name = "r" * 225 + ".jsonl"
    result = invoke(
        "explain", toy_dir / "inputs.jsonl", "--model", toy_dir / "model", "--method", "attcat", "-o", tmp_path / name, "-q"
    )
    assert result.exit_code == 0, result.output
    assert len((tmp_path / name).read_text().splitlines()) == 12
    assert os.listdir(tmp_path) == [name]


def test_stale_temporaries_of_a_long_name_are_still_found(tmp_path):
    from contrastcat.io.files import _mkstemp, stale_temporaries

    target = tmp_path / ("x" * 250)
    handle, temp = _mkstemp(target)
    os.close(handle)
    dead = Path(temp).name.replace(f".{os.getpid()}.", ".999999999.")
    os.rename(temp, tmp_path / dead)
    assert len(os.fsencode(dead)) <= 255
    assert stale_temporaries(target) == [tmp_path / dead]
    assert stale_temporaries(tmp_path / ("x" * 249)) == []
