"""compare --resume: an interrupted comparison continues from the records it kept, and ends with
the files an uninterrupted run writes (the same records, byte for byte; the same numbers)."""

from __future__ import annotations

import json

import pytest

import contrastcat
from contrastcat.errors import BadInput, Interrupted

METHODS = "attcat,random"


def _run(toy_dir, toy_library, out, **options):
    return contrastcat.compare_file(toy_dir / "inputs.jsonl", toy_library.path, method=METHODS, sanity=0,
                                    batch_size=1, bootstrap=200, output=out, **options)


def _numbers(document: dict) -> dict:
    """The report without what a run measures of itself (times, the machine)."""
    document = json.loads(json.dumps(document))
    for entry in document["methods"]:
        entry.pop("seconds_per_input"), entry.pop("inputs_timed")
    for key in ("paragraph", "cheap", "cheap_of", "ranking"):  # the ranking breaks ties by time
        document["recommendation"].pop(key)
    document.pop("hardware")
    return document


def _interrupt_at(phase_start: str, inputs: int):
    def progress(phase, done, total):
        if phase.startswith(phase_start) and done >= inputs:
            raise KeyboardInterrupt

    return progress


def test_an_interrupted_comparison_resumes_into_the_same_records(tmp_path, toy_dir, toy_library):
    plain = _run(toy_dir, toy_library, tmp_path / "plain")
    out = tmp_path / "resumed"
    # Batches of one input, windows of 8: interrupted in random's second window, its first is kept.
    with pytest.raises(Interrupted, match=r"kept in .*work: run the same command with resume"):
        _run(toy_dir, toy_library, out, resume=True, progress=_interrupt_at("explaining with random", 10))
    work = sorted(p.name for p in (out / "work").iterdir())
    assert "01.jsonl" in work and "01.seconds.json" in work and "02.jsonl" not in work
    said = []
    resumed = _run(toy_dir, toy_library, out, resume=True, notify=said.append)
    assert (out / "records.jsonl").read_bytes() == (tmp_path / "plain" / "records.jsonl").read_bytes()
    assert _numbers(resumed.document) == _numbers(plain.document)
    assert not (out / "work").exists()  # cleared once records.jsonl holds every record
    resumed_line = next(line for line in said if line.startswith("resumed: "))
    assert "attcat: all 12 inputs kept" in resumed_line and "random: 8 of 12 inputs kept" in resumed_line
    timed = {entry["method"]: entry["inputs_timed"] for entry in resumed.document["methods"]}
    # attcat's time is the first run's (all 12); random's is measured on the 4 this run explained.
    assert timed == {"attcat": 12, "random": 4}
    assert any(line.startswith("estimate: at most about ") for line in said)


def test_a_resume_with_another_sample_is_refused_not_mixed(tmp_path, toy_dir, toy_library):
    out = tmp_path / "cmp"
    with pytest.raises(KeyboardInterrupt):
        _run(toy_dir, toy_library, out, resume=True, progress=_interrupt_at("explaining with random", 1))
    kept = (out / "work" / "01.jsonl").read_bytes()
    with pytest.raises(BadInput, match=r"01\.jsonl: holds records another comparison made"):
        _run(toy_dir, toy_library, out, resume=True, limit=5)  # another sample of the inputs
    assert (out / "work" / "01.jsonl").read_bytes() == kept  # refused, not rewritten


def test_resume_needs_a_folder_and_leaves_a_foreign_file_alone(tmp_path, toy_dir, toy_library):
    with pytest.raises(BadInput, match="resume.*needs.*output"):
        contrastcat.compare_file(toy_dir / "inputs.jsonl", toy_library.path, method=METHODS, resume=True)
    (tmp_path / "cmp" / "work").mkdir(parents=True)
    (tmp_path / "cmp" / "work" / "notes.txt").write_text("mine")
    with pytest.raises(BadInput, match="notes.txt"):
        _run(toy_dir, toy_library, tmp_path / "cmp", resume=True)
    assert (tmp_path / "cmp" / "work" / "notes.txt").read_text() == "mine"
