"""Output files: never the input, never a device replaced, never half-written, modes kept.

Covered: an output naming an input (directly, through a link, or a file of the model), /dev/null
and FIFOs written in place, symlinks followed and kept, a full disk and an unwritable path (one
line, before any work), the umask and replaced files' modes, and stale temporary files of killed
runs; the closed pipe and kill -9 cases are in test_processes.py.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import threading

import pytest

from ..helpers import assert_one_line_error, invoke


@pytest.fixture()
def refs(toy_library):
    return toy_library.path


@pytest.fixture()
def source(tmp_path, toy_dir):
    path = tmp_path / "in.jsonl"
    path.write_bytes((toy_dir / "inputs.jsonl").read_bytes())
    return path


def explain(source, out, refs, *extra):
    return invoke("explain", source, "--refs", refs, "-o", out, "--quiet", "--method", "random", *extra)


def test_output_naming_the_input_is_refused(tmp_path, source, refs):
    original = source.read_bytes()
    link = tmp_path / "link.jsonl"
    link.symlink_to(source)
    hard = tmp_path / "hard.jsonl"
    os.link(source, hard)
    for output in (source, tmp_path / "." / "in.jsonl", link, hard):
        result = explain(source, output, refs)
        assert_one_line_error(result, f"{output}: is the input file {source}")
    # The input read through a symlink, written to its target: the same file too.
    assert_one_line_error(explain(link, source, refs), f"{source}: is the input file {link}")
    assert source.read_bytes() == original
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hard.jsonl", "in.jsonl", "link.jsonl"]


def test_output_naming_the_library_or_the_records_is_refused(tmp_path, source, refs, toy_library):
    before = open(refs, "rb").read()
    assert_one_line_error(explain(source, refs, refs), f"{refs}: is the input file {refs}")
    assert open(refs, "rb").read() == before
    records = tmp_path / "attr.jsonl"
    assert explain(source, records, refs).exit_code == 0
    saved = records.read_bytes()
    result = invoke("evaluate", records, "-o", records)
    assert_one_line_error(result, f"{records}: is the input file {records}")
    assert records.read_bytes() == saved


def test_dev_null_stays_a_device(source, refs):
    assert explain(source, "/dev/null", refs).exit_code == 0
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_fifo_is_written_in_place(tmp_path, source, refs):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(open(fifo, "rb").read()))
    reader.start()
    result = explain(source, fifo, refs)
    reader.join(timeout=60)
    assert result.exit_code == 0, result.output
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert len(received[0].decode().splitlines()) == 12
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl", "pipe"]


def test_symlink_is_followed_and_kept(tmp_path, source, refs):
    target = tmp_path / "real.jsonl"
    target.write_text("old\n")
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    dangling = tmp_path / "dangling.jsonl"
    dangling.symlink_to(tmp_path / "new.jsonl")
    assert explain(source, link, refs).exit_code == 0
    assert explain(source, dangling, refs).exit_code == 0
    assert link.is_symlink() and dangling.is_symlink()
    assert len(target.read_text().splitlines()) == 12
    assert (tmp_path / "new.jsonl").read_text() == target.read_text()


def test_full_disk_is_one_line_naming_the_output(source, refs):
    result = explain(source, "/dev/full", refs)
    assert_one_line_error(result, "/dev/full: cannot write (No space left on device)", code=1)


def _unwritable_directory() -> str:
    """A directory even root cannot create files in (a pseudo file system)."""
    import tempfile

    for candidate in ("/sys", "/proc"):
        try:
            handle, name = tempfile.mkstemp(dir=candidate)
        except OSError:
            return candidate
        os.close(handle)
        os.unlink(name)
    pytest.fail("no unwritable directory on this machine")


def test_unwritable_output_fails_before_any_work(source, refs):
    place = _unwritable_directory()
    result = explain(source, f"{place}/out.jsonl", refs)
    assert_one_line_error(result, f"{place}/out.jsonl: cannot write there")


def test_new_files_follow_the_umask_and_replaced_files_keep_their_mode(tmp_path, source, refs, toy_dir):
    previous = os.umask(0o027)
    try:
        fresh = tmp_path / "fresh.jsonl"
        assert explain(source, fresh, refs).exit_code == 0
        assert stat.S_IMODE(os.stat(fresh).st_mode) == 0o640
        kept = tmp_path / "kept.jsonl"
        kept.write_text("old\n")
        os.chmod(kept, 0o604)
        assert explain(source, kept, refs).exit_code == 0
        assert stat.S_IMODE(os.stat(kept).st_mode) == 0o604
        library = tmp_path / "lib.h5"
        built = invoke("build-refs", "--model", toy_dir / "model", "--data", toy_dir / "train.jsonl", "-o", library,
                       "-q", "--max-scan", "200", "--min-refs", "2", "--keep", "2")
        assert built.exit_code == 0, built.output
        assert stat.S_IMODE(os.stat(library).st_mode) == 0o640
    finally:
        os.umask(previous)


def _dead_pid() -> int:
    pid = 4_000_000  # above Linux's pid_max ceiling (2**22): never a live process
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return pid
        pid += 1


def test_stale_temporary_files_of_killed_runs_are_removed(tmp_path, source, refs):
    out = tmp_path / "out.jsonl"
    stale = tmp_path / f".out.jsonl.{_dead_pid()}.x1y2.contrastcat-tmp"
    stale.write_text('{"half": ')
    live = tmp_path / f".out.jsonl.{os.getpid()}.a9b8.contrastcat-tmp"  # a running writer's: left alone
    live.write_text("")
    unrelated = tmp_path / ".out.jsonl.notes"
    unrelated.write_text("mine")
    assert explain(source, out, refs).exit_code == 0
    assert not stale.exists() and live.exists() and unrelated.exists()
    assert len(out.read_text().splitlines()) == 12
    assert json.loads(out.read_text().splitlines()[0])["method"] == "random"


def test_files_of_the_model_are_never_outputs(tmp_path, toy_dir, source, refs):
    model = tmp_path / "model"
    model.mkdir()
    for item in (toy_dir / "model").iterdir():
        (model / item.name).write_bytes(item.read_bytes())
    weights = sorted(p.name for p in model.iterdir())
    records = tmp_path / "attr.jsonl"
    assert invoke("explain", source, "--model", model, "--method", "random", "-o", records, "-q").exit_code == 0
    for command in (
        ["explain", source, "--model", model, "--method", "attcat", "-o", model / "model.safetensors"],
        ["build-refs", "--model", model, "--data", toy_dir / "train.jsonl", "-o", model / "config.json"],
        ["evaluate", records, "--model", model, "-o", model / "tokenizer.json"],
    ):
        assert_one_line_error(invoke(*command, "-q"), f"is a file of {model}, which this run reads (the model)")
    assert sorted(p.name for p in model.iterdir()) == weights
    assert all((model / name).read_bytes() == (toy_dir / "model" / name).read_bytes() for name in weights)
    # A new file beside the model's own is harmless, and allowed.
    assert invoke("explain", source, "--model", model, "--method", "random", "-o", model / "new.jsonl", "-q").exit_code == 0


def test_a_regular_file_reached_through_proc_is_still_replaced_atomically(tmp_path, source, refs):
    out = tmp_path / "out.jsonl"
    out.write_text("old\n")
    before = os.stat(out).st_ino
    through_proc = f"/proc/self/root{out}"  # a pseudo file system path to an ordinary file
    assert explain(source, through_proc, refs).exit_code == 0
    assert os.stat(out).st_ino != before  # renamed into place, not truncated and rewritten
    assert len(out.read_text().splitlines()) == 12


@pytest.mark.parametrize("name", ["special_tokens_map.json", "added_tokens.json", "tokenizer_config.json", "vocab.txt"])
def test_a_file_the_loader_would_read_is_never_created_in_the_model_folder(toy_dir, tmp_path, name):
    """Refused whether or not the file exists yet (it would break the next load)."""
    model = tmp_path / "model"
    shutil.copytree(toy_dir / "model", model)
    (model / name).unlink(missing_ok=True)
    result = invoke("explain", toy_dir / "inputs.jsonl", "--model", model, "--method", "random", "-o", model / name)
    assert_one_line_error(result, f"{model / name}: is a file of {model}, which this run reads (the model)")
    assert not (model / name).exists()


def test_a_name_too_long_for_the_file_system_is_bad_input(toy_dir, tmp_path):
    long = tmp_path / ("c" * 300)
    result = invoke("explain", toy_dir / "inputs.jsonl", "--model", toy_dir / "model", "--method", "random", "-o", long)
    assert_one_line_error(result, "cannot write there (File name too long)")


def test_an_input_or_model_name_too_long_to_look_up_is_one_line(toy_dir, tmp_path):
    """Python 3.11's ``Path.is_file``/``is_dir`` raise for a name longer than the system allows
    (rather than answering no): a data file and a bare model name each end in one line."""
    data = tmp_path / ("d" * 256 + ".jsonl")
    result = invoke("build-refs", "--model", toy_dir / "model", "--data", data, "-o", tmp_path / "r.h5", "-q")
    assert_one_line_error(result, "cannot read (File name too long)")
    result = invoke("explain", toy_dir / "inputs.jsonl", "--model", "m" * 300, "--method", "random", "-o", tmp_path / "o.jsonl")
    assert result.exit_code in (1, 2) and "Traceback" not in result.output and "OSError" not in result.output, result.output
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
