"""--forward-dtype, the forward-only passes under autocast.

The captured forward and backward stay float32, so Contrast-CAT's candidate
maps are unchanged; only the deletion test's probabilities (and evaluate's)
move, by bfloat16's rounding. Tolerances are the ones docs/performance.md states.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from contrastcat.attribution.pipeline import ExplainSettings, explain
from contrastcat.capture.core import capture
from contrastcat.deletion.names import MORF
from contrastcat.deletion.perturb import perturb, ranked_positions
from contrastcat.deletion.refine import deletion_counts
from contrastcat.evaluation.curves import EvalSettings
from contrastcat.usecases.evaluate_records import Evaluating, evaluate_records
from contrastcat.library import RefLibrary
from contrastcat.methods import build_method
from contrastcat.models import predictor
from contrastcat.models.precision import NATIVE_BF16_ENV
from contrastcat.models.tokens import tokenize
from contrastcat.records.inputs import InputRow
from contrastcat.testing import toy

from ..helpers import assert_one_line_error, build_toy_library, invoke, kept_choices

ROWS = [InputRow(i + 1, i, e.text) for i, e in enumerate(toy.make_examples(60, seed=81))]


def test_bfloat16_passes_are_bfloat16_and_close(toy_classifier):
    ids = [t.ids for t in tokenize(toy_classifier.tokenizer, [r.text for r in ROWS], 128)]
    full = predictor(toy_classifier, 16)(ids)
    half = predictor(toy_classifier, 16, torch.bfloat16)(ids)
    assert not np.array_equal(full, half)  # it did run in another precision
    assert np.abs(full - half).max() < 0.03  # bfloat16 keeps 8 bits of mantissa
    assert (full.argmax(axis=1) == half.argmax(axis=1)).mean() >= 0.95


def test_explain_with_bfloat16_forward_passes(toy_classifier, toy_library):
    method = build_method("contrastcat")
    full = list(explain(toy_classifier, ROWS, method, toy_library, options=ExplainSettings(batch_size=8)))
    half = list(explain(toy_classifier, ROWS, method, toy_library,
                        options=ExplainSettings(batch_size=8, forward_dtype="bfloat16")))
    assert all(r.settings["forward_dtype"] == "bfloat16" for r in half)
    assert all("forward_dtype" not in r.settings for r in full)
    # Same capture: the predictions and the candidate maps are float32 in both runs.
    assert [r.probs for r in half] == [r.probs for r in full]
    # Where the deletion test keeps the same maps the scores are the float32 ones; on this
    # toy it keeps another subset for 30 % of inputs (nearly tied maps), and the top token
    # stays (docs/performance.md has minilm-rt's numbers).
    same = [np.abs(np.subtract(a.scores, b.scores)).max() <= 1e-6 for a, b in zip(full, half)]
    assert np.mean(same) >= 0.6, np.mean(same)
    top1 = [int(np.argmax(a.scores)) == int(np.argmax(b.scores)) for a, b in zip(full, half)]
    assert np.mean(top1) >= 0.95, np.mean(top1)


def test_bfloat16_changes_only_the_deletion_tests_probabilities(toy_classifier, toy_library):
    """A plain loop: float32 capture and maps, the deletion test scored in bfloat16 one
    sequence at a time, mean + std, mean of the kept maps: the bfloat16 records' scores."""
    method = build_method("contrastcat")
    given = ROWS[:10]
    half = list(explain(toy_classifier, given, method, toy_library,
                        options=ExplainSettings(batch_size=4, forward_dtype="bfloat16")))
    one = predictor(toy_classifier, 1, torch.bfloat16)
    for row, record in zip(given, half):
        (text,) = tokenize(toy_classifier.tokenizer, [row.text], toy_classifier.max_length)
        captured = capture(toy_classifier, [text.ids], [text.special], [None], needs=method.needs)
        maps = [m.double().numpy() for m in method.candidate_maps(captured, toy_library)[0].scaled]
        target = int(captured.targets[0])
        base = one([text.ids])[0, target]
        drops = []
        for scores in maps:
            ranking = ranked_positions(scores, text.special, MORF)
            steps = [one([perturb(text.ids, ranking[:count])])[0, target] for count in deletion_counts(len(text))]
            drops.append(np.mean([base - p for p in steps]))
        # The record's deletion inputs were scored in batches of 4, these one at a time: a map whose
        # S lies within the batch tolerance of mean + std may be kept in one and not the other (on
        # another CPU), and the record must then be the loop's mean of the maps it did keep.
        found = []
        for kept in kept_choices(drops):
            mean = np.mean([m for m, keep in zip(maps, kept) if keep], axis=0)
            expected = (mean - mean.min()) / (mean.max() - mean.min())
            found.append(float(np.abs(np.subtract(record.scores, expected)).max()))
            if record.refs_kept == int(kept.sum()) and found[-1] <= 1e-5:  # batched vs alone; 6 decimals
                break
        else:
            pytest.fail(f"{row.id}: {record.refs_kept} maps kept; the loop's choices differ by {found}")


def test_evaluate_with_bfloat16_forward_passes(toy_classifier, toy_library):
    records = list(explain(toy_classifier, ROWS, build_method("attcat"), options=ExplainSettings(batch_size=8)))
    full = evaluate_records(toy_classifier, records, EvalSettings(min_tokens=5)).to_dict()
    half = evaluate_records(toy_classifier, records, EvalSettings(min_tokens=5, forward_dtype="bfloat16")).to_dict()
    assert half["forward_dtype"] == "bfloat16" and full["forward_dtype"] == "same"
    for order in ("morf", "lerf"):
        assert half["methods"]["attcat"][order]["aopc_mean"] == pytest.approx(
            full["methods"]["attcat"][order]["aopc_mean"], abs=0.01
        )


def test_library_records_its_scan_precision(tmp_path, toy_classifier, toy_examples):
    scanned = build_toy_library(toy_classifier, toy_examples[:400], tmp_path / "half.h5", forward_dtype="bfloat16")
    plain = build_toy_library(toy_classifier, toy_examples[:400], tmp_path / "plain.h5")
    assert scanned.info.scan_dtype == "bfloat16"
    assert plain.info.scan_dtype == "same"  # no attribute written: the weights' precision
    assert RefLibrary(tmp_path / "half.h5").fingerprint == scanned.fingerprint


def test_records_made_with_bfloat16_passes_are_explained_again_the_same_way(toy_classifier, toy_library):
    records = list(explain(toy_classifier, ROWS[:12], build_method("contrastcat"), toy_library,
                           options=ExplainSettings(batch_size=4, forward_dtype="bfloat16")))
    report = evaluate_records(toy_classifier, records, EvalSettings(min_tokens=5), Evaluating(toy_library, kendall=True))
    assert report.methods["contrastcat"].kendall.inputs > 0


def test_a_wrong_forward_dtype_is_one_line(tmp_path, toy_dir):
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"text": "a fine film"}) + "\n")
    result = invoke("explain", source, "--model", toy_dir / "model", "--method", "attcat", "--forward-dtype", "fp8")
    assert_one_line_error(result, "--forward-dtype must be one of same, auto, float32, bfloat16, float16")


def test_the_weights_own_precision_is_same_and_raising_it_is_refused(tmp_path, toy_dir, toy_classifier, monkeypatch):
    monkeypatch.setenv(NATIVE_BF16_ENV, "1")  # as with AMX: the refusal alone, no warning on the speed
    records = list(explain(toy_classifier, ROWS[:3], build_method("attcat"),
                           options=ExplainSettings(forward_dtype="float32")))
    assert all("forward_dtype" not in r.settings for r in records)  # float32 weights: the same run
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"text": "a fine film"}) + "\n")
    result = invoke("explain", source, "--model", toy_dir / "model", "--method", "attcat", "--dtype", "bfloat16",
                    "--forward-dtype", "float32")
    assert_one_line_error(result, "--forward-dtype float32: the weights are bfloat16")
