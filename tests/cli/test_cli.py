"""Each subcommand through the Typer app in this process (Typer's CliRunner); the entry point
itself, a real pipe and --version go through the installed console script (smoke tests)."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from dataclasses import dataclass

import h5py
import pytest

from ..helpers import EXE, OFFLINE, runner


@dataclass
class Ran:
    returncode: int
    stdout: str
    stderr: str


def run(*args, stdin=None, env=None, cwd=None) -> Ran:
    """The app in process, with the offline environment and ``cwd`` of a real run."""
    from contrastcat_cli.app import app

    with contextlib.chdir(cwd) if cwd is not None else contextlib.nullcontext():
        result = runner.invoke(app, [str(a) for a in args], input=stdin, env={**OFFLINE, **(env or {})})
    return Ran(result.exit_code, result.stdout, result.stderr)


def smoke(*args, env=None) -> subprocess.CompletedProcess:
    """The installed console script in a child process."""
    environment = {**os.environ, **OFFLINE, **(env or {})}
    return subprocess.run([EXE, *map(str, args)], capture_output=True, text=True, env=environment, timeout=300)


@pytest.fixture(scope="module")
def pipeline(toy_dir, tmp_path_factory):
    """build-refs -> explain through the CLI, once for the module."""
    work = tmp_path_factory.mktemp("cli")
    refs = work / "refs.h5"
    built = run("build-refs", "--model", toy_dir / "model", "--data", toy_dir / "train.jsonl", "-o", refs, "--json", "--device", "cpu")
    assert built.returncode == 0, built.stderr
    attr = work / "attr.jsonl"
    explained = run("explain", toy_dir / "inputs.jsonl", "--refs", refs, "-o", attr, "--quiet")
    assert explained.returncode == 0, explained.stderr
    return work, refs, attr, json.loads(built.stdout)


def test_version_and_help():
    result = smoke("--version")  # the console script itself
    assert result.returncode == 0 and result.stdout.startswith("contrastcat ")
    for command in ("build-refs", "explain", "evaluate", "render"):
        helped = run(command, "-h")
        assert helped.returncode == 0
        assert "Examples:" in helped.stdout and f"contrastcat {command}" in helped.stdout


def test_build_refs_summary_and_file(pipeline, toy_dir):
    _, refs, _, summary = pipeline
    assert [c["name"] for c in summary["classes"]] == ["negative", "positive", "neutral"]
    assert all(c["stored"] >= 30 for c in summary["classes"])
    with h5py.File(refs, "r") as file:
        assert file.attrs["format"] == "contrastcat-reference-library"
        assert file.attrs["model_source"] == str((toy_dir / "model").resolve())
        assert summary["fingerprint"] == file.attrs["fingerprint"]


def test_explain_records(pipeline, toy_dir):
    _, refs, attr, summary = pipeline
    lines = attr.read_text().splitlines()
    inputs = [json.loads(line) for line in (toy_dir / "inputs.jsonl").read_text().splitlines()]
    assert len(lines) == len(inputs)
    for line, source in zip(lines, inputs):
        record = json.loads(line)
        assert record["id"] == source["id"] and record["text"] == source["text"]
        assert len(record["tokens"]) == len(record["scores"]) == len(record["offsets"]) == len(record["special"])
        assert min(record["scores"]) == 0.0 and max(record["scores"]) == 1.0
        assert record["method"] == "contrastcat" and record["library"] == summary["fingerprint"]
        assert record["target"] == record["predicted"] and record["target_name"] in ("negative", "positive", "neutral")
        assert 1 <= record["refs_kept"] <= record["refs_total"] == 30
        for token, (start, end), special in zip(record["tokens"], record["offsets"], record["special"]):
            if not special:
                assert record["text"][start:end].lower() == token.removeprefix("##")


def test_explain_csv_with_gold_target(pipeline, tmp_path):
    _, refs, _, _ = pipeline
    source = tmp_path / "in.csv"
    source.write_text('review,y\n"the film was awful, really",negative\nsome lovely music,1\n')
    result = run("explain", source, "--text-field", "review", "--label-field", "y", "--target", "gold", "--refs", refs, "-o", "-")
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["target"] for r in records] == [0, 1]
    assert [r["id"] for r in records] == [2, 3]  # CSV rows are identified by their line number


def test_pipeline_explain_to_render(pipeline, toy_dir):
    _, refs, _, _ = pipeline
    command = f'"{EXE}" explain "{toy_dir / "inputs.jsonl"}" --refs "{refs}" -o - | "{EXE}" render - --limit 2'
    result = subprocess.run(command, shell=True, capture_output=True, text=True, timeout=300,
                            env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert result.returncode == 0, result.stderr
    blocks = result.stdout.strip().split("\n\n")
    assert len(blocks) == 2
    assert blocks[0].startswith("in-0  contrastcat → ")
    assert "\x1b[" not in result.stdout  # not a terminal: plain text
    assert "1.00]" in blocks[0]


def test_evaluate_table_json_and_report(pipeline):
    work, refs, attr, _ = pipeline
    table = run("evaluate", attr)
    assert table.returncode == 0, table.stderr
    assert "MoRF AOPC ↑" in table.stdout and "LeRF LOdds ↑" in table.stdout and "mean" in table.stdout
    report_path = work / "report.json"
    result = run("evaluate", attr, "--json", "--kendall", "--refs", refs, "-o", report_path, "--steps", "reference")
    assert result.returncode == 0, result.stderr
    printed = json.loads(result.stdout)
    assert printed == json.loads(report_path.read_text())
    method = printed["methods"]["contrastcat"]
    assert len(method["morf"]["aopc"]) == 9 and len(method["lerf"]["lodds"]) == 9
    assert -1 <= method["kendall"]["tau_index"] <= 1 and method["kendall"]["inputs"] == method["evaluated"]
    assert printed["step_labels"][-1] == "100%"


def test_evaluate_kendall_without_library_is_usage_error(pipeline):
    _, _, attr, _ = pipeline
    result = run("evaluate", attr, "--kendall")
    assert result.returncode == 2
    assert "--refs" in result.stderr and "Traceback" not in result.stderr


def test_render_colours_on_request_and_respects_no_color(pipeline):
    _, _, attr, _ = pipeline
    coloured = run("render", attr, "--color", "always", "--limit", "1")
    assert coloured.returncode == 0 and "\x1b[" in coloured.stdout
    plain = run("render", attr, "--limit", "1", env={"NO_COLOR": "1"})
    assert "\x1b[" not in plain.stdout


def test_other_methods_need_no_library(toy_dir, tmp_path):
    result = run("explain", toy_dir / "inputs.jsonl", "--model", toy_dir / "model", "--method", "attcat", "-o", tmp_path / "a.jsonl")
    assert result.returncode == 0, result.stderr
    record = json.loads((tmp_path / "a.jsonl").read_text().splitlines()[0])
    assert record["method"] == "attcat" and record["library"] is None and record["refs_kept"] is None


def test_list_methods():
    result = run("explain", "--list-methods")
    assert result.returncode == 0
    for name in ("contrastcat", "attcat", "cat", "random"):
        assert name in result.stdout


def test_hub_model_offline_is_one_line(tmp_path):
    result = run("explain", "-", "--model", "bert-sst2", "--method", "attcat", "-o", tmp_path / "o.jsonl", stdin='{"text": "fine"}\n')
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and "textattack/bert-base-uncased-SST-2" in result.stderr
    assert "network" in result.stderr and "local model directory" in result.stderr
    assert not (tmp_path / "o.jsonl").exists()


def test_hub_data_offline_is_one_line(toy_dir, tmp_path):
    result = run("build-refs", "--model", toy_dir / "model", "--data", "nyu-mll/glue:sst2", "-o", tmp_path / "r.h5")
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and "nyu-mll/glue:sst2" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_explain_reads_stdin(pipeline):
    _, refs, _, _ = pipeline
    result = run("explain", "-", "--refs", refs, "--method", "cat", stdin='{"id": "s", "text": "a superb film"}\n')
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)
    assert record["id"] == "s" and record["tokens"] == ["[CLS]", "a", "superb", "film", "[SEP]"]


def test_kendall_refuses_a_different_library(pipeline, toy_dir, tmp_path):
    work, refs, attr, _ = pipeline
    other = tmp_path / "other.h5"
    built = run("build-refs", "--model", toy_dir / "model", "--data", toy_dir / "train.jsonl", "--gamma", "0.5", "-o", other, "-q")
    assert built.returncode == 0, built.stderr
    result = run("evaluate", attr, "--kendall", "--refs", other)
    assert result.returncode == 2 and "explained with another library" in result.stderr
