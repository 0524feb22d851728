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


def test_the_four_files_are_replaced_together(tmp_path, toy_dir, toy_library, monkeypatch):
    """A folder holds one comparison's files: Ctrl-C while they are made leaves the old ones, and a
    Ctrl-C while they are put in place is held back until all four are (and says so)."""
    import os
    import signal

    from contrastcat.io import files as io_files
    from contrastcat.usecases import compare as use_case

    out = tmp_path / "cmp"
    contrastcat.compare_file(toy_dir / "inputs.jsonl", toy_library.path, method="attcat,random", sanity=0, limit=6,
                             bootstrap=0, output=out)
    old = {p.name: p.read_bytes() for p in out.iterdir()}

    def interrupted(document):
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(use_case, "frontier_svg", interrupted)  # the page is made after the others' text
        with pytest.raises(KeyboardInterrupt):
            contrastcat.compare_file(toy_dir / "inputs.jsonl", toy_library.path, method="attnlrp,random", sanity=0,
                                     limit=6, bootstrap=0, output=out)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == old
    commit = io_files.PendingFile.commit

    def signalled(self):
        os.kill(os.getpid(), signal.SIGINT)  # held back: arrives once all four are in place
        commit(self)

    with monkeypatch.context() as patch:
        patch.setattr(io_files.PendingFile, "commit", signalled)
        with pytest.raises(Interrupted, match="report.html were written"):
            contrastcat.compare_file(toy_dir / "inputs.jsonl", toy_library.path, method="attnlrp,random", sanity=0,
                                     limit=6, bootstrap=0, output=out)
    assert sorted(p.name for p in out.iterdir()) == sorted(old)
    assert all("attnlrp" in (out / name).read_text() for name in ("report.json", "report.md", "report.html"))
    assert b'"attnlrp"' in (out / "records.jsonl").read_bytes()


def test_an_interrupt_after_the_last_method_says_the_records_are_kept(tmp_path, toy_dir, toy_library, monkeypatch):
    """Ctrl-C while the report is made or the files written (every method's records kept in
    DIR/work) said "no output was written", as if nothing had been kept; --resume continues."""
    import contrastcat.usecases.compare as compare_module

    real = compare_module.report_document

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    out = tmp_path / "late"
    monkeypatch.setattr(compare_module, "report_document", interrupted)
    with pytest.raises(Interrupted, match=r"kept in .*work: run the same command with resume"):
        _run(toy_dir, toy_library, out, resume=True)
    assert sorted(p.name for p in (out / "work").iterdir() if p.name.endswith(".jsonl")) == ["01.jsonl", "02.jsonl"]
    assert not (out / "records.jsonl").exists()
    monkeypatch.setattr(compare_module, "report_document", real)
    said = []
    _run(toy_dir, toy_library, out, resume=True, notify=said.append)
    assert (out / "records.jsonl").exists() and not (out / "work").exists()
    assert any("all 12 inputs kept" in line for line in said if line.startswith("resumed: "))
