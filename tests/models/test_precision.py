"""--dtype: the weights' precision on every command that loads a model.

bfloat16 weights are checked against float32 ones on the trained toy model:
what they change is rounding, so Contrast-CAT's maps must stay close, and
libraries and records say which precision made them.
"""

from __future__ import annotations

import json

import numpy as np
import torch

from contrastcat.attribution.pipeline import explain
from contrastcat.methods import build_method
from contrastcat.models import recast
from contrastcat.models.precision import NATIVE_BF16_ENV, resolve_dtype
from contrastcat.models.resolve import load_classifier
from contrastcat.records.inputs import InputRow

from ..helpers import assert_one_line_error, invoke


def test_auto_is_float32_on_a_cpu_and_the_checkpoint_dtype_on_a_gpu():
    assert resolve_dtype("auto", torch.device("cpu")) is torch.float32
    assert resolve_dtype("auto", torch.device("cuda")) == "auto"
    assert resolve_dtype("bfloat16", torch.device("cpu")) is torch.bfloat16


def test_bfloat16_weights_give_close_maps_and_say_so(toy_dir, toy_examples):
    full = load_classifier(str(toy_dir / "model"), "cpu")
    half = load_classifier(str(toy_dir / "model"), "cpu", dtype="bfloat16")
    assert next(half.model.parameters()).dtype is torch.bfloat16 and half.fingerprint != full.fingerprint
    rows = [InputRow(i + 1, i, e.text) for i, e in enumerate(toy_examples[:20])]
    method = build_method("attcat")
    exact = list(explain(full, rows, method))
    rounded = list(explain(half, rows, method))
    assert all(r.model_dtype == "bfloat16" for r in rounded) and exact[0].model_dtype == "float32"
    correlations = [np.corrcoef(a.scores, b.scores)[0, 1] for a, b in zip(exact, rounded)]
    assert np.median(correlations) > 0.95, correlations
    assert np.mean([a.predicted == b.predicted for a, b in zip(exact, rounded)]) >= 0.9


def test_recast_changes_the_fingerprint_and_keeps_auto():
    from contrastcat.models import wrap_classifier
    from contrastcat.testing import toy

    classifier = wrap_classifier(toy.make_model(seed=1), toy.make_tokenizer(), name="t")
    assert recast(classifier, "auto") is classifier
    assert recast(classifier, "float16").fingerprint != classifier.fingerprint


def test_cli_dtype_everywhere_and_library_precision_is_checked(toy_dir, toy_library, tmp_path, monkeypatch):
    monkeypatch.setenv(NATIVE_BF16_ENV, "1")  # as on a CPU with AMX: no warning beside the errors checked here
    model = str(toy_dir / "model")
    out = tmp_path / "half.jsonl"
    result = invoke("explain", toy_dir / "inputs.jsonl", "--model", model, "--method", "attcat",
                    "--dtype", "bfloat16", "-o", out, "--quiet")
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert {r["model_dtype"] for r in records} == {"bfloat16"}
    result = invoke("evaluate", out, "--model", model, "--quiet", "--json", "--min-tokens", "3")
    assert_one_line_error(result, "loaded in float32", "--dtype bfloat16")
    result = invoke("evaluate", out, "--model", model, "--dtype", "bfloat16", "--quiet", "--json", "--min-tokens", "3")
    assert result.exit_code == 0, result.output
    result = invoke("explain", toy_dir / "inputs.jsonl", "--refs", toy_library.path, "--dtype", "bfloat16", "--quiet")
    assert_one_line_error(result, "computed with the weights in float32", "loaded in bfloat16")
    result = invoke("explain", toy_dir / "inputs.jsonl", "--model", model, "--method", "attcat", "--dtype", "float8", "--quiet")
    assert_one_line_error(result, "--dtype must be one of auto, float32, bfloat16, float16")


def test_build_refs_stores_float16_with_store_dtype(toy_dir, tmp_path):
    from contrastcat.library import RefLibrary

    out = tmp_path / "refs16.h5"
    result = invoke("build-refs", "--model", toy_dir / "model", "--data", toy_dir / "train.jsonl",
                    "--store-dtype", "float16", "--keep", "12", "--min-refs", "10", "-o", out, "--quiet")
    assert result.exit_code == 0, result.output
    library = RefLibrary(out)
    assert library.info.dtype == "float16" and library.info.model_dtype == "float32"


def test_build_refs_says_what_dtype_float16_means_now(tmp_path):
    result = invoke("build-refs", "--model", tmp_path / "missing", "--data", tmp_path / "d.jsonl",
                    "--dtype", "float16", "-o", tmp_path / "refs.h5")
    assert result.exit_code == 2
    assert "--dtype float16 loads the model's weights in float16 (since 0.3)" in result.stderr
    assert "--store-dtype float16 halves the file" in result.stderr
