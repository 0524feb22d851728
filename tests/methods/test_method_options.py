"""Method options through the CLI and the library: bad values, several methods, devices, records."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from contrastcat.attribution.pipeline import explain
from contrastcat.errors import BadInput
from contrastcat.methods import METHODS, build_method, build_methods, check_options, parse_method_list
from contrastcat.records.inputs import InputRow
from contrastcat.records.record import AttributionRecord, read_records
from contrastcat.records.variants import group_by_method

from ..helpers import CASES, assert_one_line_error, assert_same_map, invoke

TEXTS = ["the film was great and the music was lovely too", "a boring night in the old house with the dog"]


@pytest.mark.parametrize(
    "option, value",
    [("--rho", "median"), ("--layers", "bogus"), ("--ig-baseline", "none"), ("--reference-select", "other")],
)
def test_bad_value_is_refused_even_for_a_method_without_that_option(tmp_path, toy_dir, option, value):
    out = tmp_path / "out.jsonl"
    result = invoke("explain", toy_dir / "inputs.jsonl", "--model", toy_dir / "model", "--method", "rollout",
                    option, value, "-o", out)
    assert_one_line_error(result, option)
    assert not out.exists()


def test_method_lists():
    assert parse_method_list("attcat, rollout,attcat") == ["attcat", "rollout"]
    assert parse_method_list("all") == list(METHODS)
    with pytest.raises(BadInput, match="unknown method 'nope'"):
        parse_method_list("attcat,nope")
    with pytest.raises(BadInput, match="at least one"):
        parse_method_list(" , ")
    check_options(rho="mean", layers="2", ig_baseline="pad", reference_select="same")


@pytest.mark.parametrize("typed, meant", [
    ("contrastcta", "contrastcat"), ("atcat", "attcat"),  # a typo: the closest name
    ("integrated_gradients", "integrated-gradients"), ("IntegratedGradients", "integrated-gradients"),  # inseq, Captum
    ("InputXGradient", "input-x-gradient"), ("Saliency", "gradient-norm"), ("ContrastCAT", "contrastcat"),
    ("transformer_attribution", "transatt"), ("shap", None), ("deeplift", None),
])
def test_an_unknown_method_is_pointed_to_the_one_meant(typed, meant):
    with pytest.raises(BadInput) as raised:
        parse_method_list(f"attcat,{typed}")
    message = str(raised.value)
    assert message.startswith(f"unknown method {typed!r}") and "(available: contrastcat," in message
    assert (f"did you mean {meant!r}" in message) if meant else "did you mean" not in message


def test_several_methods_equal_single_runs_input_major(toy_classifier, toy_library):
    rows = [InputRow(line=i + 1, id=i, text=t) for i, t in enumerate(TEXTS)]
    names = ["contrastcat", "rollout", "integrated-gradients", "tis"]
    together = list(explain(toy_classifier, rows, build_methods(names, shared=True, ig_steps=8), toy_library))
    assert [(r.id, r.method) for r in together] == [(i, n) for i in range(len(TEXTS)) for n in names]
    for name in names:
        alone = list(explain(toy_classifier, rows, build_methods([name], shared=True, ig_steps=8), toy_library))
        mine = [r for r in together if r.method == name]
        assert [r.scores for r in mine] == [r.scores for r in alone]
        assert [r.library for r in mine] == [r.library for r in alone]
    assert all((r.library is None) == (r.method != "contrastcat") for r in together)


def test_random_draws_once_per_input_and_target(toy_classifier):
    rows = [InputRow(line=1, id=0, text=TEXTS[0])]
    method = build_method("random", seed=3)
    (first,) = explain(toy_classifier, rows, method, target=0)
    (again,) = explain(toy_classifier, rows, method, target=0)
    (other,) = explain(toy_classifier, rows, method, target=1)
    assert first.scores == again.scores
    assert not np.allclose(first.scores, other.scores)


def test_records_with_unusable_settings_are_refused(tmp_path):
    path = tmp_path / "bad.jsonl"
    record = {"id": 1, "text": "a", "tokens": ["a"], "scores": [1.0], "target": 0, "settings": "oops"}
    path.write_text(json.dumps(record) + "\n")
    with pytest.raises(BadInput, match=r"bad.jsonl:1: 'settings'"):
        read_records(str(path))


def test_evaluate_keeps_runs_with_different_libraries_apart(toy_classifier, toy_library):
    rows = [InputRow(line=1, id=0, text=TEXTS[0])]
    (record,) = explain(toy_classifier, rows, build_method("contrastcat", refs_used=2), toy_library)
    other = json.loads(record.to_json())
    other["library"] = "sha256:0123456789abcdef"
    groups = group_by_method([record, AttributionRecord(**other)])
    assert list(groups) == ["contrastcat", "contrastcat[library=sha256:01234567]"]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_every_method_runs_on_cuda_as_on_cpu(toy_dir, toy_library):
    from contrastcat.models.resolve import load_classifier

    rows = [InputRow(line=i + 1, id=i, text=t) for i, t in enumerate(TEXTS)]
    cpu = load_classifier(str(toy_dir / "model"), "cpu")
    cuda = load_classifier(str(toy_dir / "model"), "cuda")
    methods = [build_method(name, **options) for name, options in CASES]
    for a, b in zip(explain(cpu, rows, methods, toy_library), explain(cuda, rows, methods, toy_library)):
        assert a.method == b.method
        assert_same_map(a, b, atol=1e-4, raw_atol=1e-5)
