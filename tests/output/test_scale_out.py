"""One explain run split over processes, joined back byte for byte.

``explain --shard I/N`` + ``contrastcat merge``, and ``torchrun`` with two CPU
processes, against a single process; refusals of parts that are not one whole
run; and an interrupted torchrun run that must leave no output behind.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest
import torch

from contrastcat.output.distributed import World, torchrun_world
from contrastcat.output.shards import Shard
from contrastcat.testing import toy

from ..helpers import OFFLINE, assert_one_line_error, invoke, wait_for

OPTIONS = ["--batch-size", "2", "-q"]  # windows of 16 inputs: 45 inputs make 3 windows, the last one short


@pytest.fixture()
def refs(toy_library):
    return toy_library.path


def write_source(path):
    with open(path, "w") as stream:
        for index, example in enumerate(toy.make_examples(45, seed=61)):
            stream.write(json.dumps({"id": f"x{index}", "text": example.text}) + "\n")
    return path


@pytest.fixture()
def source(tmp_path):
    return write_source(tmp_path / "in.jsonl")


def explain_part(source, refs, folder, index: int, count: int, *extra):
    part = folder / f"part{index}.jsonl"
    result = invoke("explain", source, "--refs", refs, *OPTIONS, *extra, "--shard", f"{index}/{count}", "-o", part)
    assert result.exit_code == 0, result.output
    return part


def explain_parts(source, refs, folder, count: int, *extra) -> list:
    return [explain_part(source, refs, folder, index, count, *extra) for index in range(count)]


@pytest.fixture(scope="module")
def two_parts(tmp_path_factory, toy_library):
    """The inputs of ``source`` in a folder of their own, and their two parts (``--shard 0/2``
    and ``1/2``): made once for the module, read (never changed) by the tests that take them."""
    folder = tmp_path_factory.mktemp("two-parts")
    given = write_source(folder / "in.jsonl")
    return given, explain_parts(given, toy_library.path, folder, 2)


def test_shards_merged_equal_one_run_byte_for_byte(tmp_path, two_parts, refs):
    source, two = two_parts
    single = tmp_path / "single.jsonl"
    assert invoke("explain", source, "--refs", refs, *OPTIONS, "-o", single).exit_code == 0
    for count in (2, 5):  # 5 shards of 3 windows: two parts hold no input at all
        folder = tmp_path / f"n{count}"
        folder.mkdir()
        parts = two if count == 2 else explain_parts(source, refs, folder, count)
        merged = folder / "merged.jsonl"
        result = invoke("merge", *reversed(parts), "-o", merged)  # any order
        assert result.exit_code == 0, result.output
        assert merged.read_bytes() == single.read_bytes(), count
    records = [json.loads(line) for line in single.read_text().splitlines()]
    assert [r["id"] for r in records] == [f"x{i}" for i in range(45)]


def test_shards_of_several_methods_keep_input_major_order(tmp_path, source, refs):
    single = tmp_path / "single.jsonl"
    methods = ["--method", "contrastcat,attcat"]
    assert invoke("explain", source, "--refs", refs, *OPTIONS, *methods, "-o", single).exit_code == 0
    parts = explain_parts(source, refs, tmp_path, 2, *methods)
    merged = invoke("merge", *parts)
    assert merged.exit_code == 0
    assert merged.stdout == single.read_text()


def test_merge_refuses_parts_that_are_not_one_whole_run(tmp_path, two_parts, refs):
    source, parts = two_parts
    out = tmp_path / "out.jsonl"

    assert_one_line_error(invoke("merge", parts[0], "-o", out), "shard 1/2 is missing")
    assert_one_line_error(invoke("merge", parts[0], parts[0], "-o", out), "shard 0/2 is given twice")

    other = tmp_path / "other"
    other.mkdir()
    foreign = explain_part(source, refs, other, 1, 2, "--refs-used", "5")  # shard 1/2 of another run
    assert_one_line_error(invoke("merge", parts[0], foreign, "-o", out), "from another run", "run differs")

    lines = source.read_text().splitlines(keepends=True)
    changed = tmp_path / "changed.jsonl"
    changed.write_text("".join(lines[:-1]) + json.dumps({"id": "x44", "text": "another text entirely"}) + "\n")
    folder = tmp_path / "changed"
    folder.mkdir()
    changed_part = explain_part(changed, refs, folder, 1, 2)  # shard 1/2: it digests every input line, x44's too
    assert_one_line_error(invoke("merge", parts[0], changed_part, "-o", out), "explained other inputs")

    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(b"".join(parts[1].read_bytes().splitlines(keepends=True)[:-2]))
    assert_one_line_error(invoke("merge", parts[0], cut, "-o", out), "no end line", "incomplete")
    assert_one_line_error(invoke("merge", parts[0], source, "-o", out), "not a contrastcat part file")
    assert not out.exists()

    # A damaged line deep inside a part: nothing reaches standard output either.
    lines = parts[1].read_bytes().splitlines(keepends=True)
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_bytes(b"".join(lines[:5] + [b'{"broken\n'] + lines[6:]))
    result = invoke("merge", parts[0], damaged)
    assert_one_line_error(result, f"{damaged}:6:")
    assert result.stdout == ""
    edited = tmp_path / "edited.jsonl"
    record = json.loads(lines[3])
    record["id"] = "renamed, still a valid record"
    edited.write_bytes(b"".join(lines[:3] + [json.dumps(record).encode() + b"\n"] + lines[4:]))
    assert_one_line_error(invoke("merge", parts[0], edited), "its records were changed since explain wrote them")
    swapped = tmp_path / "swapped.jsonl"
    swapped.write_bytes(b"".join(lines[:2] + [lines[3], lines[2]] + lines[4:]))
    assert_one_line_error(invoke("merge", parts[0], swapped), "changed since")
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_bytes(b"".join(lines[:4] + [b'{"method": "attcat", "scores": "x"}\n'] + lines[5:]))
    assert_one_line_error(invoke("merge", parts[0], garbage), f"{garbage}:5:")
    header = json.loads(lines[0])
    header["window"] = "16"
    odd = tmp_path / "odd.jsonl"
    odd.write_bytes(json.dumps(header).encode() + b"\n" + b"".join(lines[1:]))
    assert_one_line_error(invoke("merge", parts[0], odd), "window must be an integer")


def test_a_part_changed_after_merge_checked_it_fails_before_the_output_is_kept(tmp_path, two_parts, monkeypatch):
    """merge checks every line, then copies: a part written over in between (cut short, or a
    record changed in place) wrote a damaged output and said it had written it all. What is
    copied is hashed again, so it fails, naming the part, and nothing is kept. A line after the
    end line is named as that, not as a misplaced end line."""
    from contrastcat.output import shards

    _, parts = two_parts
    scan = shards._scan
    original = parts[0].read_bytes()
    lines = original.splitlines(keepends=True)
    for change in ("cut", "edited", "not utf-8"):
        copy = tmp_path / f"{change}.jsonl"
        copy.write_bytes(original)

        def scanned_then_changed(part, *sizes, copy=copy, change=change):
            scan(part, *sizes)
            if part.path == str(copy):
                if change == "cut":
                    with open(copy, "r+b") as stream:
                        stream.truncate(len(lines[0]) + len(lines[1]) + 100)
                else:
                    # The last record (past what a read ahead may hold), its id changed in place.
                    record = lines[-2].replace(b'"x', b'"X' if change == "edited" else b'"\xff', 1)
                    assert record != lines[-2] and len(record) == len(lines[-2])
                    copy.write_bytes(b"".join(lines[:-2] + [record] + lines[-1:]))

        monkeypatch.setattr(shards, "_scan", scanned_then_changed)
        out = tmp_path / f"out-{change}.jsonl"
        assert_one_line_error(invoke("merge", copy, parts[1], "-o", out), f"{copy}: changed while it was read")
        assert not out.exists()
        if change == "edited":
            # Standard output cannot be taken back: it gets whole windows as they were scanned,
            # never the changed record (each window is hashed before any of it is written).
            copy.write_bytes(original)
            result = invoke("merge", copy, parts[1], "-o", "-")
            assert result.exit_code == 2 and f"{copy}: changed while it was read" in result.stderr
            printed = result.stdout_bytes.splitlines(keepends=True)
            assert b'"X' not in result.stdout_bytes and printed
            assert set(printed) <= set(lines) | set(parts[1].read_bytes().splitlines(keepends=True))
    monkeypatch.setattr(shards, "_scan", scan)
    trailing = tmp_path / "trailing.jsonl"
    trailing.write_bytes(original + b"\n")
    assert_one_line_error(invoke("merge", trailing, parts[1], "-o", tmp_path / "t.jsonl"),
                          f"{trailing}:{len(lines) + 1}: a line after the end line")
    # A line appended after the end line is that, not a part "with no end line"; an empty part is empty.
    for appended in (b'{"x": 1}\n', b"   \n", b'{"x": 1}'):
        trailing.write_bytes(original + appended)
        assert_one_line_error(invoke("merge", trailing, parts[1], "-o", tmp_path / "t.jsonl"),
                              f"{trailing}:{len(lines) + 1}: a line after the end line")
    trailing.write_bytes(b"")
    assert_one_line_error(invoke("merge", trailing, parts[1], "-o", tmp_path / "t.jsonl"),
                          f"{trailing}: empty: not a contrastcat part file")
    trailing.write_bytes(b"".join(lines[:-1]))  # cut before its end: incomplete, as before
    assert_one_line_error(invoke("merge", trailing, parts[1], "-o", tmp_path / "t.jsonl"),
                          f"{trailing}: the part has no end line: it is incomplete")
    assert not (tmp_path / "t.jsonl").exists()


def test_shard_option_is_checked():
    assert Shard.parse("1/3") == Shard(1, 3)
    for bad in ("3/3", "1", "a/b", "-1/2", "0/0", "²/3", "0/99999999999"):
        with pytest.raises(Exception, match="`shard`"):
            Shard.parse(bad)
    result = invoke("explain", "x.jsonl", "--model", "m", "--shard", "2/2")
    assert_one_line_error(result, "--shard 2/2")


def test_torchrun_world_from_the_environment():
    assert torchrun_world({}) is None
    assert torchrun_world({"RANK": "0", "WORLD_SIZE": "1"}) is None  # a world of one is a plain run
    assert torchrun_world({"RANK": "1", "WORLD_SIZE": "2", "LOCAL_RANK": "1"}) == World(1, 2, 1)


def torchrun(*args, env=None, **options):
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
               "-m", "contrastcat_cli", *map(str, args)]
    environment = {**os.environ, **OFFLINE, "OMP_NUM_THREADS": "1", **(env or {})}
    return command, environment


def test_torchrun_two_processes_equal_one_process_byte_for_byte(tmp_path, source, refs):
    # Both torchrun runs start first: their launchers and processes spend seconds importing torch,
    # while the single process runs here. The bad run works in a folder of its own, so that the
    # good run's folder is checked for leftovers as before.
    out = tmp_path / "out.jsonl"
    command, env = torchrun("explain", source, "--refs", refs, "--batch-size", "2", "-o", out)
    good = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    # A bad line: every process refuses it; one line, exit 2, nothing written.
    elsewhere = tmp_path / "bad"
    elsewhere.mkdir()
    bad = elsewhere / "bad.jsonl"
    bad.write_text(source.read_text() + '{"id": "y"}\n')
    command, env = torchrun("explain", bad, "--refs", refs, "-o", elsewhere / "never.jsonl")
    refused = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    try:
        # torchrun gives each process one thread; on a CPU the last bits of a backward pass
        # depend on the thread count, so the single process gets one too (docs/performance.md).
        single = tmp_path / "single.jsonl"
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            assert invoke("explain", source, "--refs", refs, *OPTIONS, "-o", single).exit_code == 0
        finally:
            torch.set_num_threads(threads)
        _, stderr = good.communicate(timeout=300)
        assert good.returncode == 0, stderr
        assert out.read_bytes() == single.read_bytes()
        assert "wrote 45 record(s)" in stderr
        assert sorted(p.name for p in tmp_path.iterdir()) == ["bad", "in.jsonl", "out.jsonl", "single.jsonl"]  # no parts left

        _, stderr = refused.communicate(timeout=300)
        assert refused.returncode != 0
        said = [line for line in stderr.splitlines() if line.startswith("error: ")]  # torchrun adds its report
        # The refusal once; a process torchrun stopped before it read the line itself (torch 2.11's
        # launcher sends SIGTERM sooner than 2.13's) says it was interrupted, and nothing else.
        refusals = [line for line in said if line != "error: interrupted"]
        assert len(refusals) == 1 and "bad.jsonl:46: missing text field" in refusals[0], stderr
        assert len(said) <= 2, stderr
        assert not (elsewhere / "never.jsonl").exists()
    finally:
        for process in (good, refused):
            if process.poll() is None:  # a failed check: stop the launcher and its processes
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def test_interrupted_torchrun_leaves_no_output(tmp_path, refs):
    source = tmp_path / "many.jsonl"
    with open(source, "w") as stream:
        for index, example in enumerate(toy.make_examples(400, seed=62)):
            stream.write(json.dumps({"id": index, "text": example.text}) + "\n")
    out = tmp_path / "out.jsonl"
    command, env = torchrun("explain", source, "--refs", refs, "--batch-size", "2", "-o", out)
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    parts = lambda: [p for p in tmp_path.iterdir() if p.name.startswith(".out.jsonl.parts-")]  # noqa: E731
    # Wait until both processes are writing their parts, then stop the whole run as a scheduler would.
    wait_for(lambda: parts() and len([p for p in parts()[0].iterdir()]) >= 2, process, timeout=240)
    os.killpg(process.pid, signal.SIGTERM)
    process.communicate(timeout=120)
    assert not out.exists()
    assert parts() == []


def test_a_part_whose_header_was_edited_is_refused(tmp_path, two_parts):
    """Which shard a part is and how inputs are dealt (its window) decide where its records go:
    the same edit in both parts merged their records out of order, exit 0. The end line holds a
    digest of the header; a part of the format before it says so."""
    _, parts = two_parts
    edits = {
        "window": lambda header: header.update(window=header["window"] - 1),
        "swapped": lambda header: header.update(shard=1 - header["shard"]),
    }
    for name, edit in edits.items():
        edited = []
        for index, part in enumerate(parts):
            lines = part.read_bytes().splitlines(keepends=True)
            header = json.loads(lines[0])
            edit(header)
            copy = tmp_path / f"{name}{index}.jsonl"
            copy.write_bytes(json.dumps(header).encode() + b"\n" + b"".join(lines[1:]))
            edited.append(copy)
        out = tmp_path / f"{name}.jsonl"
        assert_one_line_error(invoke("merge", *edited, "-o", out), "the header was changed since explain wrote it")
        assert not out.exists()
    lines = parts[0].read_bytes().splitlines(keepends=True)
    header, end = json.loads(lines[0]), json.loads(lines[-1])
    header["version"], end = 1, {k: v for k, v in end.items() if k != "header_digest"}
    old = tmp_path / "old.jsonl"
    old.write_bytes(json.dumps(header).encode() + b"\n" + b"".join(lines[1:-1]) + json.dumps(end).encode() + b"\n")
    assert_one_line_error(invoke("merge", old, parts[1], "-o", tmp_path / "o.jsonl"), "part format version 1 is not 2")


def _rewritten(part, path, header=None, records=None, end=None):
    """``part`` written again with its header, records or end line changed by the given functions,
    and its digests made to agree (what a careful edit would do)."""
    import hashlib

    lines = part.read_bytes().splitlines()
    head, body, last = json.loads(lines[0]), lines[1:-1], json.loads(lines[-1])
    if header:
        header(head)
    if records:
        body = records(body)
    if end:
        end(last)
    head_line = json.dumps(head).encode()
    last |= {"records": len(body), "records_digest": "sha256:" + hashlib.sha256(b"".join(r + b"\n" for r in body)).hexdigest(),
             "header_digest": "sha256:" + hashlib.sha256(head_line).hexdigest()}
    if end:
        end(last)
    path.write_bytes(b"\n".join([head_line, *body, json.dumps(last).encode()]) + b"\n")
    return path


def test_records_are_checked_to_be_where_explain_writes_them(tmp_path, source, refs):
    """Digests are plain sha256 (they find accidents, not a part rewritten with its digests): what
    a part holds is checked too. Two methods' records of an input swapped, an input's records
    moved into the next's, an end line counting a huge number of inputs (merge counted windows
    up to it: it hung), a header key dropped: each refused in one line."""
    parts = explain_parts(source, refs, tmp_path, 2, "--method", "attcat,random")

    def swap(body):
        return [body[1], body[0], *body[2:]]

    def move(body):
        return [body[0], body[2], body[1], *body[3:]]

    for name, edit, said in (
        ("swapped", {"records": swap}, "not the record explain writes here (not the method explain writes at this place)"),
        ("moved", {"records": move}, "not the record explain writes here"),
        ("huge", {"end": lambda last: last.update(inputs=10**15)}, "inputs, but the parts' records hold at most"),
        # Both counts inflated (neither is under a digest): the file cannot hold that many records.
        ("inflated", {"end": lambda last: last.update(inputs=10**11, records=10**11)}, "records cannot fit in its"),
    ):
        edited = _rewritten(parts[0], tmp_path / f"{name}.jsonl", **edit)
        others = [_rewritten(parts[1], tmp_path / f"{name}-1.jsonl", **edit)] if name in ("huge", "inflated") else [parts[1]]
        out = tmp_path / f"{name}-out.jsonl"
        assert_one_line_error(invoke("merge", edited, *others, "-o", out), said)
        assert not out.exists()
    dropped = _rewritten(parts[0], tmp_path / "dropped.jsonl", header=lambda head: head["run"].pop("max_length"))
    assert_one_line_error(invoke("merge", dropped, parts[1], "-o", tmp_path / "d.jsonl"),
                          "from another run than", "its run differs in max_length: None here, absent there")
