"""The installed command as a process: signals, closed pipes, write failures, kill -9 and --resume.

A signal at any moment is one line and exit 130; a closed pipe downstream ends quietly; a failed
write names the output and leaves it alone; --resume after kill -9 gives the same bytes, and two
runs cannot share one checkpoint; closed standard streams never cost the exit code.
"""

from __future__ import annotations

import fcntl
import json
import os
import resource
import signal
import subprocess
import threading
import time

import pytest

from contrastcat.testing import toy

from ..helpers import EXE, OFFLINE, assert_one_line_error, handles_signal, invoke, lines_in, start, wait_for


@pytest.fixture()
def refs(toy_library):
    return toy_library.path


def write_inputs(path, count: int, seed: int) -> None:
    with open(path, "w") as stream:
        for index, example in enumerate(toy.make_examples(count, seed=seed)):
            stream.write(json.dumps({"id": f"x{index}", "text": example.text}) + "\n")


def leftovers(directory, name: str) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.startswith(f".{name}"))


@pytest.mark.parametrize(
    "signum, delay",
    [(signal.SIGINT, 0.0), (signal.SIGTERM, 0.0), (signal.SIGINT, 0.15), (signal.SIGTERM, 0.4), (signal.SIGINT, 1.5)],
)
def test_interrupt_at_any_moment_is_one_line_and_130(tmp_path, toy_dir, refs, signum, delay):
    """From the moment contrastcat's code runs (its SIGTERM handler shows in /proc), through
    the imports of Typer and torch, loading and explaining: always one line, exit 130."""
    out = tmp_path / "out.jsonl"
    process = start("explain", toy_dir / "inputs.jsonl", "--refs", refs, "-o", out, "--method", "contrastcat")
    wait_for(lambda: handles_signal(process.pid, signal.SIGTERM), process, poll=0.002)
    time.sleep(delay)
    process.send_signal(signum)
    _, stderr = process.communicate(timeout=120)
    if process.returncode == 0:
        pytest.fail(f"the run finished before the signal at {delay} s; lengthen the input")
    assert process.returncode == 130, stderr
    assert stderr.count("\n") == 1 and stderr.startswith("error: interrupted"), stderr
    assert not out.exists() and leftovers(tmp_path, "out.jsonl") == []


def test_closed_pipe_downstream_ends_quietly(tmp_path, refs):
    source = tmp_path / "in.jsonl"
    write_inputs(source, 400, seed=31)  # far more output than a pipe holds
    records = tmp_path / "all.jsonl"
    to_stdout = ["explain", source, "--refs", refs, "--method", "random", "-o", "-"]
    renders = [
        ["render", records],
        ["render", records, "--color", "always"],  # Rich's own broken-pipe handling would exit 1
    ]
    # Each process takes seconds to import torch: explain's starts while the records for the
    # renders are made here, and the two renders start together. Each is then read and closed in turn.
    processes = [start(*to_stdout)]
    try:
        assert invoke("explain", source, "--refs", refs, "--method", "random", "-o", records).exit_code == 0
        processes += [start(*command) for command in renders]
        for process, command in zip(processes, [to_stdout, *renders]):
            assert process.stdout.readline()
            process.stdout.close()  # what `| head -1` does
            stderr = process.stderr.read()
            process.wait(timeout=120)
            assert (process.returncode, stderr) == (141, ""), command
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()


def test_write_failure_names_the_output_and_leaves_it_alone(tmp_path, toy_dir, refs):
    out = tmp_path / "out.jsonl"
    out.write_text("the previous result\n")

    def small_files():
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # write() then fails with EFBIG instead of a kill
        signal.signal(signal.SIGINT, signal.SIG_DFL)

    process = start("explain", toy_dir / "inputs.jsonl", "--refs", refs, "-o", out, "-q", preexec_fn=small_files)
    _, stderr = process.communicate(timeout=300)
    assert process.returncode == 1, stderr
    assert stderr.count("\n") == 1 and stderr.startswith(f"error: {out}: cannot write (File too large)"), stderr
    assert out.read_text() == "the previous result\n"
    assert leftovers(tmp_path, "out.jsonl") == []


def test_resume_after_kill_minus_9_is_byte_identical(tmp_path, refs):
    source = tmp_path / "in.jsonl"
    write_inputs(source, 160, seed=41)
    # Windows of 32 inputs; ten references a map, not thirty: the same run, a third of the time.
    options = ["--refs", refs, "--batch-size", "4", "--refs-used", "10", "-q"]
    reference = tmp_path / "reference.jsonl"
    out = tmp_path / "out.jsonl"

    # A plain run, killed: its temporary file carries its pid, so the next run knows it is stale.
    # It works on a long input, so that it cannot finish (and rename its file) before the kill.
    # It starts (seconds of importing torch, on the core this process leaves idle) while the
    # reference run is made here.
    long_source = tmp_path / "long.jsonl"
    write_inputs(long_source, 5000, seed=43)
    first = start("explain", long_source, *options, "-o", out)
    try:
        assert invoke("explain", source, *options, "-o", reference).exit_code == 0
    except BaseException:
        first.kill()
        first.wait()
        raise
    temporary = lambda: [p for p in tmp_path.iterdir() if p.name.startswith(f".out.jsonl.{first.pid}.")]  # noqa: E731
    wait_for(lambda: any(lines_in(each) > 0 for each in temporary()), first)
    first.kill()
    first.wait()
    (stale,) = temporary()
    assert not out.exists()

    # A --resume run removes it, keeps a checkpoint as it goes, and is killed in turn.
    second = start("explain", source, *options, "-o", out, "--resume")
    partial = tmp_path / ".out.jsonl.contrastcat-partial"  # the records, as the output will hold them
    digests = tmp_path / ".out.jsonl.contrastcat-partial.digests"  # the header, then one digest per record
    wait_for(lambda: lines_in(partial) > 40, second)  # more than a window of records
    second.kill()
    second.wait()
    assert not out.exists() and not stale.exists()
    assert leftovers(tmp_path, "out.jsonl") == [".out.jsonl.contrastcat-partial", ".out.jsonl.contrastcat-partial.digests"]
    saved, sums = partial.read_bytes(), digests.read_bytes()

    # A checkpoint made another way is refused, and left as it was.
    other = invoke("explain", source, *options, "-o", out, "--resume", "--refs-used", "5")
    assert_one_line_error(other, f"{partial}:1: this record was not made by this run (its settings differs")
    batch = invoke("explain", source, *options, "--batch-size", "8", "-o", out, "--resume")
    assert_one_line_error(batch, f"{partial}: was made with batch_size 4, this run has 8")
    assert (partial.read_bytes(), digests.read_bytes()) == (saved, sums)
    inode = partial.stat().st_ino

    # --resume finishes it: the same bytes as one uninterrupted run. A bare environment, with the
    # thread count the runs before had (on a CPU it moves the last bits: another one is refused).
    threads = {key: os.environ[key] for key in ("OMP_NUM_THREADS", "MKL_NUM_THREADS") if key in os.environ}
    third = subprocess.run([EXE, "explain", str(source), *map(str, options), "-o", str(out), "--resume"],
                           capture_output=True, text=True, env={**OFFLINE, **threads}, timeout=300)
    assert third.returncode == 0, third.stderr
    assert out.read_bytes() == reference.read_bytes()
    assert out.stat().st_ino == inode  # published by renaming the checkpoint's record file
    assert leftovers(tmp_path, "out.jsonl") == []

    # Resuming a finished job recomputes nothing and changes nothing.
    before = out.stat()
    again = invoke("explain", source, *options, "-o", out, "--resume")
    assert again.exit_code == 0
    assert (out.stat().st_ino, out.stat().st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_two_runs_on_one_checkpoint(tmp_path, toy_dir, refs):
    out = tmp_path / "out.jsonl"
    digests = tmp_path / ".out.jsonl.contrastcat-partial.digests"  # the file a run holds the lock on
    with open(digests, "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # another run is writing it
        result = invoke("explain", toy_dir / "inputs.jsonl", "--refs", refs, "-o", out, "--resume")
    assert_one_line_error(result, f"{out}: another contrastcat run is writing it")
    assert invoke("explain", toy_dir / "inputs.jsonl", "--refs", refs, "-o", "-", "--resume").exit_code == 2


def _write_all(descriptor: int, data: bytes) -> None:
    try:
        with os.fdopen(descriptor, "wb") as stream:
            stream.write(data)
    except BrokenPipeError:  # a reader cut short by --limit stops reading
        pass


def closed(descriptor: int):
    def setup():
        os.close(descriptor)  # what `>&-` or `2>&-` does
        signal.signal(signal.SIGINT, signal.SIG_DFL)

    return setup


# Fourteen processes start at once below, each importing torch (seconds of CPU each): on a 2-core
# machine running other tests beside it the first took over 120 s.
TOGETHER = 400


def test_closed_standard_streams(tmp_path, toy_dir, refs):
    out, other = tmp_path / "out.jsonl", tmp_path / "other.jsonl"
    explain = ["explain", toy_dir / "inputs.jsonl", "--refs", refs, "--method", "random"]
    full = open("/dev/full", "w")
    # All at once (each takes seconds to import torch); each waited for below.
    # stdout closed: a run that writes to a file does not care; one that must print says so.
    to_file = start(*explain, "-o", out, preexec_fn=closed(1), stdout=None)
    to_stdout = start(*explain, "-o", "-", preexec_fn=closed(1), stdout=None)
    version = start("--version", preexec_fn=closed(1), stdout=None)
    # A command that prints a table, and one asked for tracebacks: the same one line, no traceback
    # (said once as an unforeseen OSError, then as a traceback under CONTRASTCAT_DEBUG).
    listed = start("models", "list", preexec_fn=closed(1), stdout=None)
    debugged = start("--version", preexec_fn=closed(1), stdout=None, env={"CONTRASTCAT_DEBUG": "1"})
    # stdout full (a full disk behind `> file`): said of standard output, whichever command printed,
    # under CONTRASTCAT_DEBUG too (the caller's environment, not a bug).
    completions_full = start("completions", "bash", stdout=full)
    listed_full = start("models", "list", stdout=full, env={"CONTRASTCAT_DEBUG": "1"})
    # stderr closed or full: the messages are lost, never the exit code.
    no_stderr = subprocess.Popen([EXE, *map(str, explain + ["-o", other])], stdout=subprocess.DEVNULL,
                                 preexec_fn=closed(2), env={**os.environ, **OFFLINE})
    full_stderr = subprocess.Popen([EXE, "explain", str(tmp_path / "missing.jsonl"), "-o", str(tmp_path / "never.jsonl")],
                                   stdout=subprocess.DEVNULL, stderr=full, env={**os.environ, **OFFLINE})
    # stdin closed: whether it is named `-` or by its path, it is said to be closed (not "no such file").
    no_stdin = {name: start("render", name, preexec_fn=closed(0), stdout=None) for name in ("-", "/dev/stdin")}
    no_stdin["merge"] = start("merge", "/dev/stdin", "-o", tmp_path / "merged.jsonl", preexec_fn=closed(0), stdout=None)
    # Other spellings of its name, and a link to it: closed too, not "no such file".
    (tmp_path / "stdin-link").symlink_to("/dev/stdin")
    for name in ("//dev/stdin", "/dev/./stdin", "/proc/thread-self/fd/0", tmp_path / "stdin-link"):
        no_stdin[str(name)] = start("render", name, preexec_fn=closed(0), stdout=None)
    assert (to_file.wait(timeout=TOGETHER), to_file.stderr.read()) == (0, f"wrote 12 record(s) to {out}\n")
    # A pipe named by its path is not standard input: read as any file is, stdin closed or not
    # (whole, and cut short by --limit).
    piped = []
    for limit in ((), ("--limit", "1")):
        read, write = os.pipe()
        process = start("render", f"/dev/fd/{read}", "--color", "never", *limit, pass_fds=(read,),
                        preexec_fn=closed(0))
        os.close(read)
        threading.Thread(target=_write_all, args=(write, out.read_bytes()), daemon=True).start()
        piped.append(process)
    closed_said = "error: cannot write to standard output (it was closed by the caller)\n"
    assert (to_stdout.wait(timeout=TOGETHER), to_stdout.stderr.read()) == (1, closed_said)
    assert version.wait(timeout=TOGETHER) == 1 and version.stderr.read().count("\n") == 1
    assert (listed.wait(timeout=TOGETHER), listed.stderr.read()) == (1, closed_said)
    assert (debugged.wait(timeout=TOGETHER), debugged.stderr.read()) == (1, closed_said)
    full_said = "error: cannot write to standard output (No space left on device)\n"
    assert (completions_full.wait(timeout=TOGETHER), completions_full.stderr.read()) == (1, full_said)
    assert (listed_full.wait(timeout=TOGETHER), listed_full.stderr.read()) == (1, full_said)
    assert no_stderr.wait(timeout=TOGETHER) == 0 and other.exists()
    assert full_stderr.wait(timeout=TOGETHER) == 2
    for process, shown in zip(piped, (12, 1)):
        printed, said = process.communicate(timeout=TOGETHER)
        assert (process.returncode, said) == (0, "") and printed.count(" → ") == shown, printed
    for name, process in no_stdin.items():
        shown = {"-": "<stdin>", "merge": "/dev/stdin"}.get(name, name)
        said = f"error: {shown}: standard input is closed: give a file, or pipe the lines in\n"
        assert (process.wait(timeout=TOGETHER), process.stderr.read()) == (2, said)
    full.close()
