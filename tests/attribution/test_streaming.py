"""explain, evaluate and render stream their input and output.

Records keep input order and come before the last input is read; a bad line
still fails before anything is written (unless --on-error skip); evaluating
in chunks gives the report of one pass over all records.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import time

import numpy as np
import pytest

from contrastcat.attribution.pipeline import ExplainSettings, explain
from contrastcat.evaluation.curves import EvalSettings
from contrastcat.usecases.evaluate_records import Evaluating, evaluate_records
from contrastcat.methods import build_method
from contrastcat.records.inputs import InputRow
from contrastcat.records.record import read_records
from contrastcat.testing import toy

from ..helpers import BATCH_TOLERANCE, EXE, OFFLINE, assert_one_line_error, invoke

OPTIONS = ExplainSettings(batch_size=2)  # windows of 16 inputs


def rows(count: int, seed: int = 71) -> list[InputRow]:
    return [InputRow(i + 1, f"r{i}", e.text) for i, e in enumerate(toy.make_examples(count, seed=seed))]


def write_jsonl(path, items) -> None:
    path.write_text("".join(json.dumps(item) + "\n" for item in items))


def test_records_come_before_the_last_row_is_read_and_keep_input_order(toy_classifier, toy_library):
    given = rows(45)
    read = []

    def stream():
        for row in given:
            read.append(row.line)
            yield row

    method = build_method("contrastcat")
    produced = explain(toy_classifier, stream(), method, toy_library, options=OPTIONS)
    first = next(produced)
    assert first.id == "r0"
    assert len(read) <= OPTIONS.window_inputs < len(given)  # one window read, not the whole stream
    streamed = [first, *produced]
    whole = list(explain(toy_classifier, given, method, toy_library, options=OPTIONS))
    assert [r.id for r in streamed] == [r.id for r in given]
    assert [r.to_json() for r in streamed] == [r.to_json() for r in whole]


@pytest.mark.parametrize("output", ["file", "stdout"])
def test_a_bad_last_line_fails_before_anything_is_written(tmp_path, toy_dir, output):
    source = tmp_path / "in.jsonl"
    write_jsonl(source, [{"text": row.text} for row in rows(40)] + [{"text": ""}])
    out = tmp_path / "out.jsonl"
    target = out if output == "file" else "-"
    result = invoke("explain", source, "--model", toy_dir / "model", "--method", "attcat", "-o", target)
    assert_one_line_error(result, f"{source}:41: field 'text' is empty")
    assert result.stdout == ""
    assert not out.exists()


def test_on_error_skip_streams_and_reports_the_skipped_lines_at_the_end(tmp_path, toy_dir):
    source = tmp_path / "in.jsonl"
    good = [{"id": f"g{i}", "text": row.text} for i, row in enumerate(rows(20))]
    write_jsonl(source, good[:5] + [{"text": 3}] + good[5:] + [{"id": "no text"}])
    result = invoke("explain", source, "--model", toy_dir / "model", "--method", "attcat", "--on-error", "skip")
    assert result.exit_code == 0, result.output
    assert [json.loads(line)["id"] for line in result.stdout.splitlines()] == [g["id"] for g in good]
    assert "skipped 2 bad input line(s)" in result.stderr
    assert f"{source}:6: field 'text' is not a string" in result.stderr
    assert f"{source}:22: missing text field 'text'" in result.stderr


def test_a_pipe_gets_records_while_its_input_is_still_open(toy_dir):
    # A real pipe on both sides: the first records must come out before the input ends.
    process = subprocess.Popen(
        [EXE, "explain", "-", "--model", str(toy_dir / "model"), "--method", "attcat", "--batch-size", "2",
         "--on-error", "skip", "-q"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, **OFFLINE},
    )
    try:
        lines = [json.dumps({"id": row.id, "text": row.text}) + "\n" for row in rows(40)]
        process.stdin.write("".join(lines[:20]).encode())  # more than one window of 16
        process.stdin.flush()
        ready, _, _ = select.select([process.stdout], [], [], 120)
        assert ready, "no record came out while the input was open"
        first = json.loads(process.stdout.readline())
        assert first["id"] == "r0"
        process.stdin.write("".join(lines[20:]).encode())
        process.stdin.close()
        rest = process.stdout.read().decode().splitlines()
        assert process.wait(timeout=120) == 0
        assert [first["id"], *(json.loads(line)["id"] for line in rest)] == [f"r{i}" for i in range(40)]
    finally:
        if process.poll() is None:
            process.kill()


def test_stdin_is_checked_whole_before_records_are_written(toy_dir):
    lines = [json.dumps({"text": row.text}) for row in rows(20)] + ["{not json"]
    result = invoke("explain", "-", "--model", toy_dir / "model", "--method", "attcat", stdin="\n".join(lines) + "\n")
    assert_one_line_error(result, "<stdin>:21:")
    assert result.stdout == ""
    again = invoke("explain", "-", "--model", toy_dir / "model", "--method", "attcat", stdin="\n".join(lines[:-1]))
    assert again.exit_code == 0
    assert len(again.stdout.splitlines()) == 20


def test_evaluate_in_chunks_equals_one_pass(toy_classifier, toy_library, tmp_path):
    given = rows(30, seed=72)
    records = list(explain(toy_classifier, given, [build_method("contrastcat"), build_method("attcat")],
                           toy_library, options=OPTIONS))
    records = records + records[4:6]  # duplicates, in a later chunk than their first copy
    settings = EvalSettings(min_tokens=5)
    # Kendall-τ explains the records again in batches of batch_size // 4: with 4, one record at a
    # time in both runs, so each τ is the same bits however the records are chunked. (In batches
    # that the chunks cut differently, two nearly tied scores could round apart and swap, and a τ
    # move by a pair's weight.)
    whole = evaluate_records(toy_classifier, records, settings, Evaluating(toy_library, kendall=True, batch_size=4)).to_dict()
    chunked = evaluate_records(toy_classifier, iter(records), settings,
                               Evaluating(toy_library, kendall=True, batch_size=4, chunk=7)).to_dict()
    for name, method in whole["methods"].items():
        other = chunked["methods"][name]
        assert other["skipped_duplicates"] == method["skipped_duplicates"] == 1
        assert (other["evaluated"], other["skipped_short"]) == (method["evaluated"], method["skipped_short"])
        for order in ("morf", "lerf"):
            # Other chunks hold other deletion inputs, batched (and padded) otherwise: float32 logits
            # move in their last bits, within the batch tolerance.
            np.testing.assert_allclose(other[order]["aopc"], method[order]["aopc"], rtol=0, atol=BATCH_TOLERANCE)
            np.testing.assert_allclose(other[order]["lodds"], method[order]["lodds"], rtol=0, atol=BATCH_TOLERANCE)
        assert other["kendall"]["inputs"] == method["kendall"]["inputs"]
        assert other["kendall"]["tau_index"] == method["kendall"]["tau_index"]
    assert chunked["records"] == whole["records"] == len(records)


def test_render_and_evaluate_fail_on_a_bad_last_record_before_printing(tmp_path, toy_classifier, toy_dir):
    records = list(explain(toy_classifier, rows(5), build_method("attcat"), options=OPTIONS))
    path = tmp_path / "attr.jsonl"
    path.write_text("".join(r.to_json() + "\n" for r in records) + '{"id": 1}\n')
    for command in (("render", path), ("evaluate", path, "--json")):
        result = invoke(*command)
        assert_one_line_error(result, f"{path}:6:")
        assert result.stdout == ""
    path.write_text("".join(r.to_json() + "\n" for r in records))
    shown = invoke("render", path, "--limit", "2", "--color", "never")
    assert shown.exit_code == 0
    assert shown.stdout.count("r0") == 1 and "r2" not in shown.stdout
    assert len(read_records(str(path))) == 5


def test_records_reach_the_output_file_as_windows_finish(tmp_path, toy_dir, toy_library):
    # The records go to a temporary file beside the output as each window finishes; the
    # output itself appears only when the run has succeeded.
    source = tmp_path / "in.jsonl"
    write_jsonl(source, [{"text": row.text} for row in rows(200, seed=73)])
    process = subprocess.Popen(
        [EXE, "explain", str(source), "--model", str(toy_dir / "model"), "--method", "contrastcat",
         "--refs", str(toy_library.path), "--batch-size", "2", "-q", "-o", str(tmp_path / "out.jsonl")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, **OFFLINE},
    )
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and process.poll() is None:
            temporary = [p for p in tmp_path.iterdir() if p.name.startswith(".out.jsonl.")]
            if temporary and temporary[0].stat().st_size > 0:
                break
            time.sleep(0.05)
        assert process.poll() is None, "the run ended before any record was written"
        assert not (tmp_path / "out.jsonl").exists()
    finally:
        process.kill()
        process.wait()


def test_a_fifo_is_read_once_and_kept_for_the_second_pass(tmp_path, toy_dir):
    # A pipe given by name (a FIFO, /dev/stdin, bash's <(…)) cannot be opened twice.
    fifo = tmp_path / "in.jsonl"
    os.mkfifo(fifo)
    lines = "".join(json.dumps({"text": row.text}) + "\n" for row in rows(12))
    writer = subprocess.Popen(["sh", "-c", f"cat > '{fifo}'"], stdin=subprocess.PIPE)
    writer.stdin.write(lines.encode())
    writer.stdin.close()
    result = invoke("explain", fifo, "--model", toy_dir / "model", "--method", "attcat")
    writer.wait(timeout=60)
    assert result.exit_code == 0, result.output
    assert len(result.stdout.splitlines()) == 12


def test_csv_with_old_mac_line_ends_reads_as_with_newlines(tmp_path, toy_dir):
    texts = [row.text for row in rows(6)]
    plain = tmp_path / "plain.csv"
    plain.write_text("id,text\n" + "".join(f"{i},{t}\n" for i, t in enumerate(texts)))
    mac = tmp_path / "mac.csv"
    mac.write_bytes(plain.read_bytes().replace(b"\n", b"\r"))
    options = ["--model", toy_dir / "model", "--method", "attcat"]
    first, second = invoke("explain", plain, *options), invoke("explain", mac, *options)
    assert first.exit_code == second.exit_code == 0, second.output
    assert first.stdout == second.stdout


def test_bytes_that_are_not_utf8_refuse_their_whole_csv_row(tmp_path, toy_dir):
    path = tmp_path / "bad.csv"
    path.write_bytes(b'id,text\na,"first line\nsecond caf\xe9 line\nthird",\nb,plain text here\n'.replace(b",\n", b"\n"))
    options = ["--model", toy_dir / "model", "--method", "attcat"]
    skipped = invoke("explain", path, *options, "--on-error", "skip")
    assert skipped.exit_code == 0, skipped.output
    assert [json.loads(line)["id"] for line in skipped.stdout.splitlines()] == ["b"]  # a is left out whole
    assert f"{path}:2: not UTF-8 text" in skipped.stderr
    header = tmp_path / "header.csv"
    header.write_bytes(b"id,te\xe9xt\n1,one text\n2,another text\n")
    assert_one_line_error(invoke("explain", header, *options, "--on-error", "skip"), f"{header}:1: the CSV header is not UTF-8")
