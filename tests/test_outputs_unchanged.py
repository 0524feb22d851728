"""What the pipeline wrote before the layout redesign (the package regrouped into pipeline stages)
is what today's code writes.

``tests/golden/`` holds a trained toy model (its weights saved, not retrained: training
differs in the last bits between CPUs), its data and inputs, and what the four steps wrote
from them at the commit before the move: ``build-refs`` (the library itself, and
``refs.json``: its attributes and each array's shape and digest), then, reading that
library, ``explain --method all`` (the 18 methods there were then), ``evaluate --json`` and ``render --html``. The folder
the run happened in (records and libraries keep absolute paths) is set aside, and so is
the library's creation time with the digest that covers it.

On the CPU and torch the files were written with (``written-on.json``) everything must be
equal exactly. Elsewhere float32 kernels round differently: an AVX2 run of the same
commit orders two references of nearly equal f_c the other way, and differs by one unit in
the 6th decimal of a few scores. So there the library is compared by what does not depend
on rounding, the later steps read the stored library, numbers must agree to 1e-5 and the
digests of arrays are not compared; everything else still must be equal.

Intended changes since: report.json gained the protocols added later (``eraser``,
``eraser_bins``, ``loo``, ``made_elsewhere``) and each comparison row its ``fitted`` cells (rewritten
from the stored library and records, whose bytes did not change); and its intervals went, since 5
inputs are too few for a 95% interval (``evaluation.stats.fewest_inputs``: 6), nothing else.
Records gained ``raw_scores`` (each map before its last scaling): they are checked against the
record's own ``scores`` (min–max scaled, they are the scores to 1e-5) and set aside, and every
other byte of every record must be what was written then. The page's style gained the colour of
evidence against the class (``--cold`` and the rules that use it: ``view.html`` is the stored
records rendered by the new code, which differs from the old page in those style lines alone);
it is rendered ``--no-signed``, the one-colour view of every map that it showed then. Since an
unsigned map has a scale of its own (grey, no hue), that one colour is grey: the page's style
gained ``--mag`` and its rules, its tokens the class ``mag``, and its legend names the scale; the
scores and every token are as they were.

Regenerate (only for an intended change of output, and say so in the commit):
``python -m tests.test_outputs_unchanged`` from the repository root.
"""

from __future__ import annotations

import json
import math
import os
import platform
import shutil
import sys
from pathlib import Path

import h5py
import torch

GOLDEN = Path(__file__).parent / "golden"
INPUTS = ("model", "train.jsonl", "inputs.jsonl")
WRITTEN = ("attr.jsonl", "report.json", "view.html")
PLACEHOLDER = "<work>"
# float32 forward passes everywhere: "auto" would pick bfloat16 on a CPU that has it.
BUILD = ("build-refs", "--model", "model", "--data", "train.jsonl", "--dtype", "float32", "-o", "refs.h5", "--quiet")
# `--method all` at the move: methods added since (contrastcat-lrp) are checked by their own oracles.
METHODS_THEN = (
    "contrastcat", "contrastcat-plus", "attcat", "cat", "tis", "rawatt", "rollout", "att-grads", "att-x-att-grads", "grad-sam",
    "generic-attention", "full-lrp", "partial-lrp", "transatt", "attnlrp", "integrated-gradients", "input-x-gradient", "random",
)
STEPS = (
    ("explain", "inputs.jsonl", "--model", "model", "--refs", "refs.h5", "--method", ",".join(METHODS_THEN), "--dtype", "float32", "-o",
     "attr.jsonl", "--quiet"),
    ("evaluate", "attr.jsonl", "--model", "model", "--kendall", "--refs", "refs.h5", "--dtype", "float32", "--json", "-o", "report.json", "--quiet"),
    ("render", "attr.jsonl", "--html", "view.html", "--no-signed"),
)
TOLERANCE = 1e-5
# Values that are digests of float arrays: equal only where the floats are.
DIGESTS = ("sha256",)


def machine() -> dict:
    return {
        "cpu": _cpu_name(),
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "torch": torch.__version__,
    }


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def run_steps(invoke) -> None:
    """explain, evaluate, render in the current folder (which holds model/, inputs.jsonl, refs.h5)."""
    for step in STEPS:
        result = invoke(*step)
        assert result.exit_code == 0, (step, result.output)


def describe_library(path: Path) -> dict:
    """Attributes of the file and of every group and array, with each array's shape and dtype."""
    with h5py.File(path, "r") as handle:
        described = {"/": _attributes(handle)}

        def visit(name, item):
            entry = _attributes(item)
            if isinstance(item, h5py.Dataset):
                entry["(shape)"] = list(item.shape)
                entry["(dtype)"] = str(item.dtype)
            described[name] = entry

        handle.visititems(visit)
    described["/"].pop("created")
    return described


def _attributes(item) -> dict:
    return {key: value.item() if hasattr(value, "item") else value for key, value in sorted(item.attrs.items())}


def canonical(name: str, work: Path) -> str:
    """A written file as text, with the folder of the run replaced by a placeholder."""
    if name == "refs.h5":
        text = json.dumps(describe_library(work / name), indent=1, sort_keys=True, default=str)
        text = text.replace(json.dumps(describe_library(work / name)["/"]["fingerprint"]), '"<library>"')
    else:
        text = (work / name).read_text(encoding="utf-8")
    if name.endswith(".jsonl"):
        text = "".join(_without_raw_scores(line) + "\n" for line in text.splitlines())
    return text.replace(str(work.resolve()), PLACEHOLDER).replace(str(work), PLACEHOLDER)


def _without_raw_scores(line: str) -> str:
    """A record's line as it was written before records kept their raw scores: those set aside,
    once they are shown to be the scores before their last scaling."""
    from contrastcat.io import jsonl

    record = json.loads(line)
    raw = record.pop("raw_scores")
    low, high = min(raw), max(raw)
    scaled = [(value - low) / ((high - low) or 1e-6) for value in raw]
    assert all(abs(a - b) <= 1e-5 for a, b in zip(scaled, record["scores"], strict=True)), record["method"]
    return jsonl.dumps(record)


def close(a, b, path: str = "") -> str | None:
    """Where two JSON values differ beyond float tolerance (and digests), or None."""
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return f"{path}: keys {sorted(a.keys() ^ b.keys())}"
        for key in a:
            where = close(a[key], b[key], f"{path}/{key}")
            if where:
                return where
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path}: length {len(a)} != {len(b)}"
        for index, (x, y) in enumerate(zip(a, b)):
            where = close(x, y, f"{path}[{index}]")
            if where:
                return where
        return None
    if isinstance(a, float) or isinstance(b, float):
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and math.isclose(a, b, abs_tol=TOLERANCE):
            return None
        return f"{path}: {a!r} != {b!r}"
    if any(path.endswith(key) for key in DIGESTS):
        return None
    return None if a == b else f"{path}: {a!r} != {b!r}"


def _parse(name: str, text: str):
    if name.endswith(".jsonl"):
        return [json.loads(line) for line in text.splitlines()]
    if name.endswith(".html"):
        # The page embeds its records as JSON; the rest is markup that must not change.
        return text
    return json.loads(text)


def _copy_inputs(work: Path) -> None:
    for name in INPUTS:
        source = GOLDEN / name
        (shutil.copytree if source.is_dir() else shutil.copy)(source, work / name)


def test_build_refs_writes_the_library_it_wrote_before_the_move(tmp_path, monkeypatch):
    from .helpers import invoke

    _copy_inputs(tmp_path)
    monkeypatch.chdir(tmp_path)
    result = invoke(*BUILD)
    assert result.exit_code == 0, result.output
    now, then = canonical("refs.h5", tmp_path), (GOLDEN / "refs.json").read_text(encoding="utf-8")
    if json.loads((GOLDEN / "written-on.json").read_text()) == machine():
        assert now == then
    else:
        # Which rows become references can follow rounding (near-equal f_c); what the file
        # is, and was built from and with, cannot.
        assert json.loads(now)["/"] == json.loads(then)["/"]


def test_explain_evaluate_render_write_what_they_wrote_before_the_move(tmp_path, monkeypatch):
    from .helpers import invoke

    _copy_inputs(tmp_path)
    shutil.copy(GOLDEN / "refs.h5", tmp_path / "refs.h5")
    monkeypatch.chdir(tmp_path)
    run_steps(invoke)
    written_on = json.loads((GOLDEN / "written-on.json").read_text())
    exact = written_on == machine()
    for name in WRITTEN:
        now, then = canonical(name, tmp_path), (GOLDEN / name).read_text(encoding="utf-8")
        if exact:
            assert now == then, f"{name} differs from tests/golden/{name} on the machine that wrote it"
        elif name.endswith(".html"):
            # Scores are printed in the page; compare the numbers it carries, within tolerance.
            assert _html_numbers_close(now, then), f"{name} differs from tests/golden/{name}"
        else:
            where = close(_parse(name, now), _parse(name, then))
            assert where is None, f"{name} differs from tests/golden/{name} ({written_on} vs {machine()}): {where}"


def _html_numbers_close(now: str, then: str) -> bool:
    import re

    number = re.compile(r"-?\d+\.\d+(?:e-?\d+)?")
    if number.sub("#", now) != number.sub("#", then):
        return False
    return all(
        math.isclose(float(x), float(y), abs_tol=TOLERANCE) for x, y in zip(number.findall(now), number.findall(then))
    )


def _write_golden() -> None:
    """Train the toy model once, save it with its data, run the pipeline, keep what it wrote."""
    from contrastcat.models.loading import quiet_transformers
    from contrastcat.testing import toy

    from .helpers import invoke

    shutil.rmtree(GOLDEN, ignore_errors=True)
    GOLDEN.mkdir()
    examples = toy.make_examples(2000, seed=1)
    model, tokenizer = toy.train_toy_classifier(examples, seed=0)
    with quiet_transformers():
        model.save_pretrained(GOLDEN / "model")
    tokenizer.save_pretrained(GOLDEN / "model")
    with open(GOLDEN / "train.jsonl", "w", encoding="utf-8") as stream:
        for index, example in enumerate(examples[:400]):
            stream.write(json.dumps({"id": index, "text": example.text, "label": example.label}) + "\n")
    with open(GOLDEN / "inputs.jsonl", "w", encoding="utf-8") as stream:
        for index, example in enumerate(toy.make_examples(5, seed=5)):
            stream.write(json.dumps({"id": f"in-{index}", "text": example.text, "label": example.label}) + "\n")
    work = GOLDEN.parent / "golden-work"
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(GOLDEN, work)
    os.chdir(work)
    try:
        result = invoke(*BUILD)
        assert result.exit_code == 0, result.output
        shutil.copy(work / "refs.h5", GOLDEN / "refs.h5")
        (GOLDEN / "refs.json").write_text(canonical("refs.h5", work), encoding="utf-8")
        run_steps(invoke)
        for name in WRITTEN:
            (GOLDEN / name).write_text(canonical(name, work), encoding="utf-8")
    finally:
        os.chdir(GOLDEN.parent.parent)
        shutil.rmtree(work)
    (GOLDEN / "written-on.json").write_text(json.dumps(machine(), indent=1) + "\n")


if __name__ == "__main__":
    sys.exit(_write_golden())
