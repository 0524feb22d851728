"""explain --resume, --shard and merge under hostile use.

Every check holds the result against what is known independently: the bytes of one fresh,
uninterrupted run. A checkpoint is made the way a user gets one: a run interrupted after some
records (the pipeline patched to stop there, as Ctrl-C would).
"""

from __future__ import annotations

import contextlib
import errno
import io
import json
import os
import shutil
import stat
import subprocess
import threading

import pytest
import torch

import contrastcat.output.checkpoint as checkpoint_module
from contrastcat.attribution.targets import PREDICTED
from contrastcat.errors import BadInput
from contrastcat.io import jsonl
from contrastcat.usecases import explain_file as explain_run
from contrastcat.output.shards import Shard

from ..helpers import assert_one_line_error, invoke

# Windows of 8 inputs (batch 1 x 8 batches): the 12 toy inputs make a whole window and a short one.
# rawatt: one forward pass per batch, the cheapest method that is still a model's output.
FAST = ["--method", "rawatt", "--batch-size", "1", "-q"]
INPUTS = 12


@pytest.fixture()
def source(tmp_path, toy_dir):
    path = tmp_path / "in.jsonl"
    shutil.copyfile(toy_dir / "inputs.jsonl", path)
    return path


@pytest.fixture()
def model(toy_dir):
    return str(toy_dir / "model")


@pytest.fixture(scope="module")
def reference(tmp_path_factory, toy_dir):
    """The bytes of one uninterrupted run over the toy inputs, without --resume."""
    path = tmp_path_factory.mktemp("reference") / "reference.jsonl"
    result = invoke("explain", toy_dir / "inputs.jsonl", "--model", toy_dir / "model", *FAST, "-o", path)
    assert result.exit_code == 0, result.output
    return path.read_bytes()


def partial_of(out):
    """The checkpoint's record file: the output's bytes so far."""
    return out.parent / f".{out.name}.contrastcat-partial"


def digests_of(out):
    """The checkpoint's digests: its header line, then one digest per record line."""
    return out.parent / f".{out.name}.contrastcat-partial.digests"


def leftovers(out) -> list[str]:
    return sorted(p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}"))


def interrupted(monkeypatch, *args, after: int = 10):
    """Run explain with ``args`` and stop it (as Ctrl-C does) once ``after`` records are out."""
    real = explain_run.explain_prepared

    def stopping(*positional, **named):
        count = 0
        for records in real(*positional, **named):  # each input's records
            if count >= after:
                raise KeyboardInterrupt
            count += len(records)
            yield records

    with monkeypatch.context() as patch:
        patch.setattr(explain_run, "explain_prepared", stopping)
        result = invoke(*args)
    assert result.exit_code == 130, result.output
    return result


def edited_line(raw: bytes, change) -> bytes:
    """A record line with its record changed by ``change`` and written back as contrastcat
    writes records; whatever follows the record on the line (nothing, in a record file) is left as it was."""
    body, tab, rest = raw.partition(b"\t")  # a record line holds no raw tab: JSON escapes it
    record = json.loads(body)
    change(record)
    return jsonl.dumps(record).encode() + tab + rest


def with_line(data: bytes, number: int, change) -> bytes:
    lines = data.split(b"\n")
    lines[number - 1] = edited_line(lines[number - 1], change)
    return b"\n".join(lines)


def _other_score(record):
    record["scores"][1] = 0.123456 if record["scores"][1] != 0.123456 else 0.654321


def _other_probs(record):
    record["probs"] = list(reversed(record["probs"]))


def _no_scores(record):
    del record["scores"]


# --- kept lines are checked like fresh ones, and carry a digest -------------------------------


def test_an_edited_or_damaged_checkpoint_line_is_refused_naming_it(tmp_path, monkeypatch, source, model, reference):
    out = tmp_path / "out.jsonl"
    partial, digests = partial_of(out), digests_of(out)
    command = ("explain", source, "--model", model, *FAST, "-o", out, "--resume")
    interrupted(monkeypatch, *command)
    saved, sums = partial.read_bytes(), digests.read_bytes()
    assert saved.count(b"\n") == 10 and sums.count(b"\n") == 1 + 10  # the records; the header, then their digests

    for change in (_other_score, _other_probs, _no_scores):
        damaged = with_line(saved, 2, change)  # the second record
        partial.write_bytes(damaged)
        result = invoke(*command)
        assert_one_line_error(result, f"{partial}:2:")
        assert partial.read_bytes() == damaged, change.__name__  # left for the user to inspect
        assert digests.read_bytes() == sums, change.__name__
        assert not out.exists(), change.__name__

    partial.write_bytes(saved)  # the checkpoint as the run left it continues into the fresh run's bytes
    result = invoke(*command)
    assert result.exit_code == 0, result.output
    assert out.read_bytes() == reference
    assert leftovers(out) == []


def test_a_kept_record_must_pass_the_record_check(tmp_path, source, toy_classifier, reference):
    """Whatever vouches for the lines, a line that is not a valid record is never kept."""
    from contrastcat.attribution.pipeline import ExplainSettings
    from contrastcat.methods import build_methods
    from contrastcat.output.resume import Run, completed_inputs
    from contrastcat.records.inputs import InputFile

    rows = list(InputFile(str(source)).rows())
    run = Run(rows, build_methods(["rawatt"], shared=True), toy_classifier, None, PREDICTED,
              ExplainSettings(batch_size=1), str(source))
    lines = reference.split(b"\n")[:-1]
    assert completed_inputs(lines, run, tmp_path / "ckpt").inputs == INPUTS  # the fresh run's lines are kept
    for change, problem in ((_no_scores, "scores"), (lambda r: r.update(scores=r["scores"][:-1]), "scores"),
                            (lambda r: r.update(probs="high"), "probs")):
        damaged = list(lines)
        damaged[4] = edited_line(damaged[4], change)
        with pytest.raises(BadInput, match=f"ckpt:5: .*{problem}"):
            completed_inputs(damaged, run, tmp_path / "ckpt")
    spaced = list(lines)
    spaced[2] = json.dumps(json.loads(spaced[2]), indent=1).replace("\n", " ").encode()  # same values, other bytes
    with pytest.raises(BadInput, match="ckpt:3: "):
        completed_inputs(spaced, run, tmp_path / "ckpt")


def _xattrs_work(where) -> bool:
    probe = where / "xattr-probe"
    probe.write_bytes(b"")
    try:
        os.setxattr(probe, "user.contrastcat-probe", b"1")
        return True
    except OSError:
        return False
    finally:
        probe.unlink()


def test_a_finished_output_is_kept_only_when_it_is_what_the_run_wrote(tmp_path, monkeypatch, source, model, reference):
    out = tmp_path / "out.jsonl"
    command = ("explain", source, "--model", model, *FAST, "-o", out, "--resume")
    assert invoke(*command).exit_code == 0
    assert out.read_bytes() == reference

    if _xattrs_work(tmp_path):  # where the file system keeps the output's digest, nothing is recomputed
        def never(*args, **kwargs):
            raise AssertionError("a finished output was recomputed")

        before = out.stat()
        with monkeypatch.context() as patch:
            patch.setattr(explain_run, "explain_prepared", never)
            result = invoke(*command)
        assert result.exit_code == 0, result.output
        assert (out.stat().st_ino, out.stat().st_mtime_ns) == (before.st_ino, before.st_mtime_ns)

    out.write_bytes(with_line(reference, 2, _other_score))  # valid records, one score edited
    result = invoke(*command)
    assert result.exit_code == 0, result.output
    assert out.read_bytes() == reference  # the run's own records, not the edited ones
    assert not partial_of(out).exists()


# --- the result is one fresh run's, or refused ----------------------------------------------


def test_resume_refuses_a_checkpoint_whose_input_label_changed(tmp_path, monkeypatch, source, model):
    out = tmp_path / "out.jsonl"
    command = ("explain", source, "--model", model, *FAST, "-o", out, "--resume")
    interrupted(monkeypatch, *command)
    saved = partial_of(out).read_bytes()
    rows = [json.loads(line) for line in source.read_text().splitlines()]
    rows[0]["label"] = "changed" if rows[0]["label"] != "changed" else "again"
    source.write_text("".join(json.dumps(row) + "\n" for row in rows))
    result = invoke(*command)
    assert_one_line_error(result, f"{partial_of(out)}:1:", "label")
    assert partial_of(out).read_bytes() == saved and not out.exists()


def test_resume_refuses_another_spelling_of_the_model(tmp_path, monkeypatch, source, toy_dir):
    out = tmp_path / "out.jsonl"
    monkeypatch.chdir(toy_dir)
    interrupted(monkeypatch, "explain", source, "--model", "./model", *FAST, "-o", out, "--resume")
    saved = partial_of(out).read_bytes()
    result = invoke("explain", source, "--model", toy_dir / "model", *FAST, "-o", out, "--resume")
    assert_one_line_error(result, f"{partial_of(out)}:1:", "model", "./model")
    assert partial_of(out).read_bytes() == saved and not out.exists()


def _part(source, model, index: int, out, *extra):
    # On the CPU: the threads are part of a CPU run's identity only (a GPU's results do not depend on them).
    result = invoke("explain", source, "--model", model, "--device", "cpu", *FAST, *extra, "--shard", f"{index}/2",
                    "-o", out)
    assert result.exit_code == 0, result.output
    return out


@contextlib.contextmanager
def _threads(count: int):
    before = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def test_merge_refuses_parts_of_another_model_spelling_or_thread_count(tmp_path, monkeypatch, source, toy_dir):
    monkeypatch.chdir(toy_dir)
    absolute = str(toy_dir / "model")
    with _threads(1):
        first = _part(source, absolute, 0, tmp_path / "p0.jsonl")
        spelled = _part(source, "./model", 1, tmp_path / "p1-relative.jsonl")
    with _threads(2):
        threaded = _part(source, absolute, 1, tmp_path / "p1-threads.jsonl")
    out = tmp_path / "out.jsonl"
    assert_one_line_error(invoke("merge", first, spelled, "-o", out), "from another run", "model")
    assert_one_line_error(invoke("merge", first, threaded, "-o", out), "from another run", "threads")
    assert not out.exists()


# --- the checkpoint's own file system -----------------------------------------------------------


def test_a_checkpoint_path_that_is_a_directory_is_one_line(tmp_path, source, model):
    out = tmp_path / "out.jsonl"
    partial_of(out).mkdir()
    result = invoke("explain", source, "--model", model, *FAST, "-o", out, "--resume")
    assert_one_line_error(result, str(partial_of(out)), "directory")
    assert partial_of(out).is_dir() and not out.exists()


def _mount_tmpfs(where, size: int) -> bool:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
                          capture_output=True, check=False)
    return done.returncode == 0


class _Disk:
    """A patched stand-in for a small disk: files under ``place`` share ``room`` bytes."""

    def __init__(self, place, room: int) -> None:
        self.place, self.room = str(place), room

    def used(self) -> int:
        return sum(entry.stat().st_size for entry in os.scandir(self.place) if entry.is_file())

    def file(self, *args, **kwargs):
        disk = self

        class Full(io.FileIO):
            def write(self, data) -> int:
                size = len(memoryview(data).cast("B"))
                grows = max(0, self.tell() + size - os.fstat(self.fileno()).st_size)
                if disk.used() + grows > disk.room:
                    raise OSError(errno.ENOSPC, "No space left on device")
                return super().write(data)

        return Full(*args, **kwargs)


def _on_disk(path: str, place: str) -> bool:
    return os.path.realpath(path).startswith(place + os.sep)


@contextlib.contextmanager
def small_disk(kind: str, place, room: int, monkeypatch):
    """``place`` as a disk with ``room`` bytes: a real tmpfs, or patched writes that fail as one does."""
    place.mkdir()
    if kind == "tmpfs":
        if not _mount_tmpfs(place, room):
            pytest.skip("cannot mount a tmpfs here (the patched disk stands in)")
        try:
            yield
        finally:
            subprocess.run(["umount", "-l", str(place)], check=False)
        return
    disk = _Disk(place, room)
    real_fdopen, real_open = os.fdopen, open

    def fdopen(fd, mode="r", buffering=-1, *args, **kwargs):
        if isinstance(fd, int) and "b" in mode and _on_disk(os.readlink(f"/proc/self/fd/{fd}"), disk.place):
            raw = disk.file(fd, mode.replace("b", ""), closefd=True)
            if buffering == 0:
                return raw
            return io.BufferedRandom(raw) if "+" in mode else io.BufferedReader(raw) if mode == "rb" else io.BufferedWriter(raw)
        return real_fdopen(fd, mode, buffering, *args, **kwargs)

    def opening(file, mode="r", buffering=-1, *args, **kwargs):
        if "b" in mode and "w" in mode and isinstance(file, (str, os.PathLike)) and _on_disk(os.fspath(file), disk.place):
            return io.BufferedWriter(disk.file(file, mode.replace("b", "")))
        return real_open(file, mode, buffering, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(os, "fdopen", fdopen)
        patch.setattr(checkpoint_module, "open", opening, raising=False)
        yield


@pytest.mark.parametrize("kind", ["tmpfs", "patched"])
def test_resume_on_a_full_disk_names_the_output_and_keeps_the_checkpoint(tmp_path, monkeypatch, source, model,
                                                                          reference, kind):
    page = 4096
    # Room for the records once, their digests and a page to spare; not for a second copy of the records.
    whole = (-(-len(reference) // page) + 2) * page
    assert whole < 2 * len(reference), "the records are too small for this test: give it more inputs"

    # Room for a few records: the checkpoint fills the disk.
    tiny = tmp_path / "tiny"
    kept = tmp_path / "elsewhere"
    kept.mkdir()
    with small_disk(kind, tiny, page, monkeypatch):
        out = tiny / "out.jsonl"
        result = invoke("explain", source, "--model", model, *FAST, "-o", out, "--resume")
        assert_one_line_error(result, f"{out}: cannot write (No space left on device)", code=1)
        assert not out.exists()
        if partial_of(out).exists():  # what it holds is kept, and said so
            assert "kept" in result.stderr and str(partial_of(out)) in result.stderr
            for part in (partial_of, digests_of):
                if part(out).exists():
                    shutil.copyfile(part(out), part(kept / "out.jsonl"))

    # Room for the records once: publishing renames the checkpoint's record file, it needs no second copy.
    roomy = tmp_path / "roomy"
    with small_disk(kind, roomy, whole, monkeypatch):
        out = roomy / "out.jsonl"
        result = invoke("explain", source, "--model", model, *FAST, "-o", out, "--resume")
        assert result.exit_code == 0, result.output
        assert out.read_bytes() == reference
        assert leftovers(out) == []

    # The checkpoint the full disk left is whole: resumed where there is room, it is the fresh run's output.
    result = invoke("explain", source, "--model", model, *FAST, "-o", kept / "out.jsonl", "--resume")
    assert result.exit_code == 0, result.output
    assert (kept / "out.jsonl").read_bytes() == reference
    assert leftovers(kept / "out.jsonl") == []


def test_publishing_renames_the_checkpoint_over_the_output(tmp_path, monkeypatch, source, model, reference):
    """The checkpoint's record file holds the output's bytes and becomes the output: the same
    inode, no second copy. A replaced file keeps its mode, a new one gets the umask's; a symlink
    is followed and kept, the checkpoint beside its target (one file system: a rename)."""
    out = tmp_path / "out.jsonl"
    out.write_bytes(b"the previous result\n")
    out.chmod(0o640)
    command = ("explain", source, "--model", model, *FAST, "-o", out, "--resume")
    interrupted(monkeypatch, *command)
    lines = reference.split(b"\n")
    assert partial_of(out).read_bytes() == b"\n".join(lines[:10]) + b"\n"  # as a fresh run writes them
    inode = partial_of(out).stat().st_ino
    result = invoke(*command)
    assert result.exit_code == 0, result.output
    assert out.read_bytes() == reference
    assert out.stat().st_ino == inode
    assert stat.S_IMODE(out.stat().st_mode) == 0o640
    assert leftovers(out) == []

    real = tmp_path / "real" / "out.jsonl"
    real.parent.mkdir()
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    command = ("explain", source, "--model", model, *FAST, "-o", link, "--resume")
    interrupted(monkeypatch, *command)
    assert leftovers(link) == [] and leftovers(real) == [partial_of(real).name, digests_of(real).name]
    inode = partial_of(real).stat().st_ino
    result = invoke(*command)
    assert result.exit_code == 0, result.output
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_bytes() == reference and real.stat().st_ino == inode
    umask = os.umask(0o022)
    os.umask(umask)
    assert stat.S_IMODE(real.stat().st_mode) == 0o666 & ~umask
    assert leftovers(real) == []


def computed(monkeypatch, *args) -> int:
    """Run explain with ``args`` to the end; how many records it computed."""
    real, count = explain_run.explain_prepared, 0

    def counting(*positional, **named):
        nonlocal count
        for records in real(*positional, **named):  # each input's records
            count += len(records)
            yield records

    with monkeypatch.context() as patch:
        patch.setattr(explain_run, "explain_prepared", counting)
        result = invoke(*args)
    assert result.exit_code == 0, result.output
    return count


def without_last_line(data: bytes) -> bytes:
    return data[: data.rstrip(b"\n").rfind(b"\n") + 1]


def test_a_record_line_without_its_digest_is_computed_again(tmp_path, monkeypatch, source, model, reference):
    """A kill between a record line and its digest: nothing vouches for the line, so it is computed
    again (a whole window of vouched lines is kept); so is a last line a kill cut short."""
    out = tmp_path / "out.jsonl"
    command = ("explain", source, "--model", model, *FAST, "-o", out, "--resume")
    interrupted(monkeypatch, *command, after=8)  # one whole window: kept whole when every line has its digest
    partial, digests = partial_of(out), digests_of(out)
    assert partial.read_bytes().count(b"\n") == 8 and digests.read_bytes().count(b"\n") == 1 + 8
    partial.write_bytes(with_line(partial.read_bytes(), 8, _other_score))  # not what the run wrote, unvouched
    digests.write_bytes(without_last_line(digests.read_bytes()))
    assert computed(monkeypatch, *command) == INPUTS  # 7 vouched lines are less than a window: all computed again
    assert out.read_bytes() == reference
    assert leftovers(out) == []

    out = tmp_path / "again.jsonl"
    command = ("explain", source, "--model", model, *FAST, "-o", out, "--resume")
    interrupted(monkeypatch, *command, after=8)
    partial, digests = partial_of(out), digests_of(out)
    assert computed(monkeypatch, *command) == INPUTS - 8  # the control: every line vouched for, the window kept
    assert out.read_bytes() == reference

    out = tmp_path / "cut.jsonl"
    command = ("explain", source, "--model", model, *FAST, "-o", out, "--resume")
    interrupted(monkeypatch, *command, after=10)
    partial, digests = partial_of(out), digests_of(out)
    partial.write_bytes(partial.read_bytes()[:-40])  # the last line cut short, its digest not written yet
    digests.write_bytes(without_last_line(digests.read_bytes()))
    assert computed(monkeypatch, *command) == INPUTS - 8
    assert out.read_bytes() == reference
    assert leftovers(out) == []


def test_a_digest_without_its_record_line_or_a_moved_line_is_refused(tmp_path, monkeypatch, source, model, reference):
    out = tmp_path / "out.jsonl"
    command = ("explain", source, "--model", model, *FAST, "-o", out, "--resume")
    interrupted(monkeypatch, *command)
    partial, digests = partial_of(out), digests_of(out)
    records, sums = partial.read_bytes(), digests.read_bytes()
    lines = records.split(b"\n")
    for damaged, where in (
        (without_last_line(records), ":10:"),  # the last record line dropped, its digest kept
        (b"\n".join([lines[0], lines[2], lines[1], *lines[3:]]), ":2:"),  # two lines swapped
        (b"\n".join(lines[1:]), ":1:"),  # the first line dropped
        (b"", ":1:"),
    ):
        partial.write_bytes(damaged)
        result = invoke(*command)
        assert_one_line_error(result, f"{partial}{where}")
        assert partial.read_bytes() == damaged and digests.read_bytes() == sums, where  # left as it was
        assert not out.exists()

    partial.write_bytes(records)
    digests.write_bytes(sums[:-10] + b"0" * 9 + b"\n")  # a digest damaged
    result = invoke(*command)
    assert_one_line_error(result, f"{partial}:10:")
    assert partial.read_bytes() == records and not out.exists()

    digests.write_bytes(sums)
    result = invoke(*command)
    assert result.exit_code == 0, result.output
    assert out.read_bytes() == reference


def test_digests_alone_are_started_over_and_records_alone_are_refused(tmp_path, monkeypatch, source, model, reference):
    """Digests without their record file are what a kill between the publishing rename and the
    digests' removal leaves, or deleting the record file to start over: started over. Records
    without their digests cannot be vouched for: refused, left as they are."""
    out = tmp_path / "out.jsonl"
    command = ("explain", source, "--model", model, *FAST, "-o", out, "--resume")
    interrupted(monkeypatch, *command)
    records = partial_of(out).read_bytes()
    partial_of(out).unlink()
    assert computed(monkeypatch, *command) == INPUTS
    assert out.read_bytes() == reference and leftovers(out) == []

    out = tmp_path / "again.jsonl"
    partial_of(out).write_bytes(records)
    result = invoke("explain", source, "--model", model, *FAST, "-o", out, "--resume")
    assert_one_line_error(result, str(partial_of(out)), digests_of(out).name, "delete it")
    assert partial_of(out).read_bytes() == records and leftovers(out) == [partial_of(out).name]


def test_a_checkpoint_of_an_older_format_is_refused(tmp_path, source, model, reference):
    out = tmp_path / "out.jsonl"
    partial = partial_of(out)
    records = reference.split(b"\n")[:3]
    for version, lines in ((2, [line + b"\t" + b"0" * 32 for line in records]), (1, records)):
        old = json.dumps({"contrastcat-checkpoint": version, "batch_size": 1}).encode() + b"\n"
        old += b"".join(line + b"\n" for line in lines)
        partial.write_bytes(old)
        result = invoke("explain", source, "--model", model, *FAST, "-o", out, "--resume")
        assert_one_line_error(result, str(partial), f"format {version}", "delete it")
        assert partial.read_bytes() == old and leftovers(out) == [partial.name] and not out.exists()


# --- merge's parts that cannot seek, and standard input ------------------------------------------


def test_merge_reads_parts_that_cannot_seek_and_refuses_standard_input(tmp_path, source, model, reference):
    parts = [_part(source, model, index, tmp_path / f"p{index}.jsonl") for index in (0, 1)]
    fifo = tmp_path / "p0.fifo"  # what bash's <(cat p0.jsonl) is
    os.mkfifo(fifo)

    def feed():
        with open(fifo, "wb") as stream:
            stream.write(parts[0].read_bytes())

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    out = tmp_path / "out.jsonl"
    try:
        result = invoke("merge", fifo, parts[1], "-o", out)
    finally:
        if feeder.is_alive():  # merge never read it: let the writer go
            with contextlib.suppress(OSError):
                os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
        feeder.join(timeout=10)
    assert result.exit_code == 0, result.output
    assert out.read_bytes() == reference

    out.unlink()
    result = invoke("merge", "-", parts[1], "-o", out, stdin=parts[0].read_text())
    assert_one_line_error(result, "standard input")
    assert not out.exists()


# --- shard numbers ------------------------------------------------------------------------------


def test_shard_numbers_are_bounded():
    huge = "9" * 5000  # more digits than Python's int() reads
    for spec in (f"0/{huge}", f"{huge}/2", f"1/{'0' * 5000}3"):
        with pytest.raises(BadInput, match="`shard`"):
            Shard.parse(spec)
    result = invoke("explain", "x.jsonl", "--model", "m", "--shard", f"0/{huge}")
    assert_one_line_error(result, "--shard")


# --- an interrupt before the checkpoint is opened ------------------------------------------------


def test_an_interrupt_while_the_model_loads_says_the_checkpoint_was_kept(tmp_path, monkeypatch, source, model):
    out = tmp_path / "out.jsonl"
    command = ("explain", source, "--model", model, *FAST, "-o", out, "--resume")
    interrupted(monkeypatch, *command)
    saved = partial_of(out).read_bytes()

    def interrupted_load(*args, **kwargs):
        raise KeyboardInterrupt  # SIGTERM becomes this while torch loads the weights

    with monkeypatch.context() as patch:
        patch.setattr(explain_run, "classifier_for", interrupted_load)
        result = invoke(*command)
    assert result.exit_code == 130
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: interrupted"), result.stderr
    assert "no output was written" not in result.stderr
    assert str(partial_of(out)) in result.stderr and "10 record(s)" in result.stderr, result.stderr
    assert partial_of(out).read_bytes() == saved


def test_a_long_output_name_resumes_as_it_runs(monkeypatch, source, model, reference, tmp_path):
    """Every name the file system takes works with --resume too (its checkpoint's names are
    shortened, the output's never)."""
    out = tmp_path / ("a" * 225 + ".jsonl")  # 231 bytes: the checkpoint's full names would not fit
    interrupted(monkeypatch, "explain", source, "--model", model, *FAST, "-o", out, "--resume")
    assert not out.exists() and len([p for p in tmp_path.iterdir() if "contrastcat-partial" in p.name]) == 2
    finished = invoke("explain", source, "--model", model, *FAST, "-o", out, "--resume")
    assert finished.exit_code == 0, finished.output
    assert out.read_bytes() == reference
