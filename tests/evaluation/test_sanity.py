"""The model-randomisation sanity check (Adebayo et al., 2018).

Independent values: Spearman's ρ worked out by hand; the cascade checked parameter by parameter
against the original weights; references captured again under the *original* model must be the
library's stored activations (the file is the oracle); and the known answers of the toy model:
Contrast-CAT's and AttCAT's maps on the fully randomised model no longer follow the original ones
(ρ below 0.5), while the random baseline, seeded by the input alone, cannot change at all (ρ = 1)
and fails — the check can fail.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

import contrastcat
from contrastcat.errors import BadInput
from contrastcat.evaluation.sanity import average_ranks, spearman
from contrastcat.library.reader import RefLibrary
from contrastcat.library.recapture import RecapturedLibrary
from contrastcat.models.randomize import cascade_steps, randomised

from ..helpers import assert_one_line_error, invoke


def test_spearman_by_hand():
    assert spearman([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(1 - 6 * 2 / (4 * 15))  # d = 0, 1, 1, 0
    assert spearman([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    assert average_ranks(np.array([10.0, 20.0, 20.0, 30.0])).tolist() == [1, 2.5, 2.5, 4]
    # Ties: Pearson of [1, 2.5, 2.5, 4] and [1, 2, 3, 4] = 4.5 / sqrt(4.5 * 5).
    assert spearman([10, 20, 20, 30], [1, 2, 3, 4]) == pytest.approx(4.5 / math.sqrt(4.5 * 5))
    assert math.isnan(spearman([0.5, 0.5, 0.5], [1, 2, 3]))


def test_the_cascade_randomises_each_parameter_once_from_the_top_and_never_the_original(toy_classifier):
    original = {name: p.detach().clone() for name, p in toy_classifier.model.named_parameters()}
    steps = cascade_steps(toy_classifier)
    assert [s.name for s in steps] == ["head", "layer 2", "layer 1", "embeddings"]
    names = [name for step in steps for name in step.parameters]
    assert sorted(names) == sorted(original) and len(set(names)) == len(names)
    assert all(name.startswith(("classifier", "bert.pooler")) for name in steps[0].parameters)
    assert all(".layer.1." in name for name in steps[1].parameters)
    done = set()
    for step, copy in randomised(toy_classifier, seed=3):
        done |= set(step.parameters)
        for name, parameter in copy.model.named_parameters():
            same = torch.equal(parameter, original[name])
            assert same == (name not in done) or (name in done and parameter.dim() == 1), (step.name, name)
        assert copy.fingerprint != toy_classifier.fingerprint
    for name, parameter in toy_classifier.model.named_parameters():
        assert torch.equal(parameter, original[name])


def test_references_captured_again_under_the_original_model_are_the_stored_ones(toy_classifier, toy_library):
    again = RecapturedLibrary(toy_library, toy_classifier)
    for target in range(toy_classifier.num_classes):
        stored = toy_library.references(target, 5, torch.device("cpu"))
        fresh = again.references(target, 5, torch.device("cpu"))
        assert fresh.shape[:2] == stored.shape[:2]  # the padding follows what was loaded before
        for index, entry in enumerate(toy_library.entries(target)[:5]):
            assert torch.allclose(fresh[index, :, : entry.length], stored[index, :, : entry.length], atol=1e-5)
            assert not fresh[index, :, entry.length :].any()
    (_, last) = list(randomised(toy_classifier, seed=0))[-1]
    other = RecapturedLibrary(toy_library, last).references(0, 5, torch.device("cpu"))
    first = toy_library.entries(0)[0].length
    stored = toy_library.references(0, 5, torch.device("cpu"))
    assert not torch.allclose(other[0, :, :first], stored[0, :, :first], atol=1e-2)


def test_closing_a_recaptured_copy_leaves_the_original_open(toy_classifier, toy_library):
    original = RefLibrary(toy_library.path)  # nothing read yet: its activations come from the held file
    with RecapturedLibrary(original, toy_classifier) as copy:
        copy.references(0, 2, torch.device("cpu"))
    assert original.references(0, 2, torch.device("cpu")).shape[0] == 2
    original.close()


@pytest.fixture(scope="module")
def records(toy_classifier, toy_library, toy_dir):
    texts = [json.loads(line)["text"] for line in (toy_dir / "inputs.jsonl").read_text().splitlines()]
    return contrastcat.explain(toy_classifier, texts, toy_library, method="contrastcat,attcat,random", refs_used=10)


def test_contrastcat_and_attcat_pass_and_the_random_baseline_fails(toy_classifier, toy_library, records):
    report = contrastcat.sanity(toy_classifier, records, toy_library, bootstrap=200)
    last = report.steps[-1]
    curve = {label: [round(found.mean(step), 3) for step in report.steps] for label, found in report.methods.items()}
    print("cascade", report.steps, curve)  # the note reports the whole curve, as measured
    assert report.methods["contrastcat"].mean(last) < 0.5
    assert report.methods["attcat"].mean(last) < 0.5
    assert report.methods["random"].mean(last) == pytest.approx(1.0)
    verdicts = report.verdicts()
    assert verdicts[0].startswith("contrastcat: passes") and verdicts[2].startswith("random: FAILS")
    assert report.to_dict()["methods"]["random"]["passes"] is False


def test_the_command_prints_writes_and_refuses(records, toy_dir, tmp_path):
    path = tmp_path / "attr.jsonl"
    records.save(path)
    model = str(toy_dir / "model")
    result = invoke("sanity", path, "--model", model, "--refs", toy_dir / "refs.h5", "-o", tmp_path / "s.json",
                    "--bootstrap", "0", "--quiet")
    assert result.exit_code == 0, result.output
    assert "randomised up to" in result.stdout and "random: FAILS" in result.stdout
    document = json.loads((tmp_path / "s.json").read_text())
    assert document["schema"] == "contrastcat/sanity-report" and document["cascade"][-1] == "embeddings"
    assert_one_line_error(invoke("sanity", path, "--model", model), "made with a reference library", "--refs")
    foreign = tmp_path / "foreign.jsonl"
    foreign.write_text(json.dumps({"text": "good film", "tokens": ["good", "film"], "scores": [1, 0], "target": 0}) + "\n")
    assert_one_line_error(invoke("sanity", foreign, "--model", model), "foreign.jsonl:1", "made elsewhere")
    with pytest.raises(BadInput, match="sanity: records is empty"):
        contrastcat.sanity(records and contrastcat.load_model(model), [])


def test_records_with_nothing_to_rank_are_refused(toy_classifier, toy_library, records):
    import dataclasses

    empty = [dataclasses.replace(r, token_ids=r.token_ids[:1] + r.token_ids[-1:], tokens=r.tokens[:1] + r.tokens[-1:],
                                 offsets=[[0, 0], [0, 0]], special=[True, True], scores=[0.0, 0.0],
                                 raw_scores=[0.0, 0.0]) for r in records[:3]]
    with pytest.raises(BadInput, match="no record has two or more non-special tokens"):
        contrastcat.sanity(toy_classifier, empty, toy_library, bootstrap=0)


def test_a_bad_line_late_in_a_large_file_is_refused_before_the_file_is_held(records, toy_dir, tmp_path):
    """Every line is checked as it streams, before any record is held: a large file with a bad
    last line took about 5 times its size to be refused."""
    import tracemalloc

    lines = [record.to_json() + "\n" for record in records]
    path = tmp_path / "large.jsonl"
    path.write_text("".join(lines[i % len(lines)] for i in range(3000)) + '{"text": 1}\n')
    size = path.stat().st_size
    tracemalloc.start()
    try:
        with pytest.raises(BadInput, match=r"large.jsonl:3001: "):
            contrastcat.sanity_file(str(path), model=str(toy_dir / "model"))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 0.3 * size, (peak, size)
