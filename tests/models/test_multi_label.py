"""A multi-label classifier (its config says ``multi_label_classification``) is explained with the
probabilities it gives: a sigmoid per label, everywhere a probability is read (records, the
deletion test, the reference library, evaluate). Checked against computations made here from the
model's logits, on a tiny BERT trained on a task whose labels' keywords are known
(``contrastcat.testing.multilabel``): each label present in an input has one or two keywords."""

from __future__ import annotations

import json
import math
import shutil

import numpy as np
import pytest
import torch

import contrastcat
from contrastcat.attribution.targets import EACH_ACTIVE
from contrastcat.deletion.plan import step_counts
from contrastcat.deletion.refine import log_odds
from contrastcat.errors import BadInput
from contrastcat.testing import multilabel

from ..helpers import assert_one_line_error, invoke


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """The model directory, its training rows (a label each: one of theirs, for build-refs'
    input; the library does not read it) and held-out examples."""
    root = tmp_path_factory.mktemp("multilabel")
    examples = multilabel.make_examples(4000, seed=0)
    multilabel.save_multilabel_model(root / "model", examples, seed=0)
    with open(root / "train.jsonl", "w") as stream:
        for index, example in enumerate(examples[:300]):
            stream.write(json.dumps({"id": index, "text": example.text, "label": (example.labels or (0,))[0]}) + "\n")
    held = [e for e in multilabel.make_examples(40, seed=5) if e.labels]
    return root, held


@pytest.fixture(scope="module")
def classifier(trained):
    return contrastcat.load_model(str(trained[0] / "model"))


@pytest.fixture(scope="module")
def library(trained, classifier):
    path = trained[0] / "refs.h5"
    result = invoke("build-refs", "--data", trained[0] / "train.jsonl", "--model", trained[0] / "model", "-o", path,
                    "--pools", "same", "-q")
    assert result.exit_code == 0, result.output
    return path


def _sigmoids(model, texts) -> np.ndarray:
    """Each label's sigmoid of the model's logits, one text at a time (no batching, no padding)."""
    tokenizer = multilabel.make_tokenizer()
    rows = []
    with torch.no_grad():
        for text in texts:
            encoded = tokenizer(text, return_tensors="pt").to(model.device)  # on a GPU where the model is
            rows.append(torch.sigmoid(model(**encoded).logits[0].double()).cpu().numpy())
    return np.array(rows)


def test_records_give_a_sigmoid_per_label_and_say_they_are_multi_label(trained, classifier):
    root, held = trained
    assert classifier.multi_label
    records = contrastcat.explain(classifier, [e.text for e in held], method="random", seed=0)
    expected = _sigmoids(classifier.model, [e.text for e in held])
    found = np.array([r.probs for r in records])
    np.testing.assert_allclose(found, expected, atol=2e-6)
    assert not np.allclose(found.sum(axis=1), 1.0)  # not one softmax
    # Several labels at once where the input carries them (the toy model is right on every one).
    assert [tuple(np.flatnonzero(p > 0.5)) for p in found] == [e.labels for e in held]
    assert all(r.predicted == int(np.argmax(r.probs)) and r.multi_label for r in records)
    written = json.loads(records[0].to_json())
    assert written["multi_label"] is True
    single = contrastcat.explain(contrastcat.load_model(str(_single_label_copy(root))), [held[0].text], method="random")
    assert "multi_label" not in json.loads(single[0].to_json())


def _single_label_copy(root):
    """The same weights, the config silent on its problem type (read as single-label)."""
    copy = root / "single"
    if not copy.exists():
        shutil.copytree(root / "model", copy)
        config = json.loads((copy / "config.json").read_text())
        config.pop("problem_type")
        (copy / "config.json").write_text(json.dumps(config))
    return copy


def test_the_fingerprint_tells_a_multi_label_reading_of_the_weights_from_a_single_label_one(trained, classifier,
                                                                                            tmp_path):
    """The same weights read with one softmax give other probabilities, references and maps: their
    records and libraries name another model, and evaluate refuses one's records on the other."""
    from contrastcat.models.loading import weights_fingerprint

    root, held = trained
    single = contrastcat.load_model(str(_single_label_copy(root)))
    assert weights_fingerprint(classifier.model) == single.fingerprint != classifier.fingerprint
    out = tmp_path / "r.jsonl"
    inputs = tmp_path / "in.jsonl"
    inputs.write_text("".join(json.dumps({"id": i, "text": e.text}) + "\n" for i, e in enumerate(held[:3])))
    assert invoke("explain", inputs, "--model", root / "model", "--method", "random", "-o", out, "-q").exit_code == 0
    assert_one_line_error(invoke("evaluate", out, "--model", _single_label_copy(root), "-q"),
                          "was explained reading model", "as multi-label (a sigmoid per label)",
                          "is single-label (a softmax over the classes) here")


def test_planted_keywords_come_first_for_each_label_present(trained, classifier, library):
    """For each held-out input and each label it carries, the map explaining that label ranks one
    of the label's own keywords first (not another label's, though they are in the text too)."""
    root, held = trained
    refs = contrastcat.open_library(str(library))
    # The model first: every label of every held-out input right (else the rates below measure
    # a model that did not learn the task, not the methods).
    found = [r.probs for r in contrastcat.explain(classifier, [e.text for e in held], method="random")]
    assert [tuple(np.flatnonzero(np.array(p) > 0.5)) for p in found] == [e.labels for e in held]
    rates = {}
    for method in ("contrastcat", "contrastcat-lrp", "attnlrp", "full-lrp", "integrated-gradients", "attcat", "random"):
        hits = total = 0
        for label in range(len(multilabel.LABELS)):
            carrying = [e for e in held if label in e.labels]
            seeded = {"seed": 0} if method in ("random", "contrastcat", "contrastcat-lrp") else {}
            records = contrastcat.explain(classifier, [e.text for e in carrying], refs, method=method, target=label,
                                          **seeded)
            for example, record in zip(carrying, records):
                assert record.target == label
                words = example.text.split()
                top = max((i for i, flag in enumerate(record.special) if not flag), key=lambda i: record.scores[i])
                start = record.offsets[top][0]
                word = len(example.text[:start].split())  # the word the top token begins or lies in
                hits += word in example.keywords[label] or words[min(word, len(words) - 1)] in multilabel.KEYWORDS[label]
                total += 1
        rates[method] = hits / total
    print("keywords first, per label present:", rates)
    assert total >= 50
    # Measured on this model (2-core AMD EPYC, AVX2): contrastcat and contrastcat-lrp 0.86, attcat
    # 0.93, integrated gradients 0.97, AttnLRP and Full LRP 1.0, random 0.15 (59 input-label pairs).
    for method, rate in rates.items():
        if method != "random":
            assert rate >= 0.75 and rate > rates["random"] + 0.4, rates
    assert rates["random"] < 0.35, rates


def test_aopc_and_lodds_are_those_of_each_labels_own_sigmoid(trained, classifier, library):
    """evaluate's per-input MoRF AOPC and LOdds equal a loop, one sequence at a time, over the
    tokens deleted most relevant first, with the target label's sigmoid."""
    root, held = trained
    refs = contrastcat.open_library(str(library))
    records = contrastcat.explain(classifier, [e.text for e in held], refs, method="contrastcat", target=1)
    report = contrastcat.evaluate(classifier, list(records), bootstrap=0, target="record", min_tokens=3)
    morf = report.methods["contrastcat"].per_input["morf"]
    per_input = {id_: (aopc, lodds) for id_, aopc, lodds in zip(morf.ids, morf.aopc.mean(axis=1), morf.lodds.mean(axis=1))}
    model = classifier.model

    def p(ids):
        with torch.no_grad():
            return torch.sigmoid(model(input_ids=torch.tensor([ids])).logits[0, 1].double()).item()

    compared = 0
    for record in records:
        ids, special = list(record.token_ids), list(record.special)
        positions = [i for i, flag in enumerate(special) if not flag]
        order = sorted(positions, key=lambda i: (-record.scores[i], i))
        base = p(ids)
        drops, lodds = [], []
        for count in step_counts(len(ids), len(positions), "paper"):
            gone = set(order[:count])
            p_k = p([t for i, t in enumerate(ids) if i not in gone])
            drops.append(base - p_k)
            lodds.append(math.log(p_k / base))
        aopc, found_lodds = per_input[record.id]
        assert aopc == pytest.approx(np.mean(drops), abs=1e-5)
        assert found_lodds == pytest.approx(np.mean(lodds), abs=1e-4)
        compared += 1
    assert compared == len(held)


def test_the_library_holds_for_each_label_the_rows_whose_sigmoid_for_it_is_lowest(trained, classifier, library):
    """A multi-label row may carry the label its data names and others: the references for label
    c are the rows the model says lack c (lowest sigmoid for c), whatever their data's label."""
    import h5py

    root, _ = trained
    rows = [json.loads(line) for line in (root / "train.jsonl").read_text().splitlines()]
    sigmoids = _sigmoids(classifier.model, [row["text"] for row in rows])
    with h5py.File(library, "r") as stored:
        for label, name in enumerate(multilabel.LABELS):
            group = stored[f"classes/{label}"]
            f_c, rows_kept = np.asarray(group["f_c"]), np.asarray(group["source_row"])
            assert group.attrs["name"] == name and np.all(np.diff(f_c) >= 0)
            np.testing.assert_allclose(f_c, sigmoids[rows_kept, label], atol=2e-6)
            np.testing.assert_allclose(f_c, np.sort(sigmoids[:, label])[: len(f_c)], atol=2e-6)
            # Rows whose data names this very label are references too, where the model says they lack it.
            assert len(f_c) >= 30
            # The `same` pool: the rows the model says carry the label, most confident first.
            same = stored[f"pools/same/{label}"]
            f_same, rows_same = np.asarray(same["f_c"]), np.asarray(same["source_row"])
            np.testing.assert_allclose(f_same, sigmoids[rows_same, label], atol=2e-6)
            carrying = np.sort(sigmoids[sigmoids[:, label] > 0.5, label])[::-1]
            assert len(f_same) == min(len(carrying), 50) and np.all(f_same > 0.5)
            np.testing.assert_allclose(f_same, carrying[: len(f_same)], atol=2e-6)


def test_log_odds_of_a_label_are_its_own_by_hand():
    probs = np.array([[0.9, 0.8, 0.1]])
    assert log_odds(probs, 0, multi_label=True)[0] == pytest.approx(math.log(0.9 / 0.1))
    assert log_odds(probs, 2, multi_label=True)[0] == pytest.approx(math.log(0.1 / 0.9))
    assert log_odds(probs, 0)[0] == pytest.approx(math.log(0.9 / 0.9))  # softmax: the others' sum


def test_a_pipeline_shows_the_scores_the_config_says(trained):
    from transformers import pipeline

    root, _ = trained
    model = multilabel.make_model(0)
    model.config.problem_type = "multi_label_classification"
    tokenizer = multilabel.make_tokenizer()
    assert contrastcat.load_model(pipeline("text-classification", model=model, tokenizer=tokenizer)).multi_label
    softmax = pipeline("text-classification", model=model, tokenizer=tokenizer, function_to_apply="softmax")
    with pytest.raises(BadInput, match="softmax scores.*not sigmoid probabilities: its config says it is a multi-label"):
        contrastcat.load_model(softmax)


def test_records_of_a_label_that_is_not_the_top_one_are_said_so_and_claims_are_checked(trained, classifier,
                                                                                        tmp_path):
    """A map of a label the model predicts (above 0.5) but not the highest is not "not the
    predicted class"; evaluate's default scores such records by the top label, and says so; a
    record whose multi_label claim is not the model's is refused at its line."""
    root, held = trained
    second = [e for e in held if len(e.labels) >= 2]
    records = contrastcat.explain(classifier, [e.text for e in second], method="random", target=second[0].labels[0],
                                  seed=0)
    records += contrastcat.explain(classifier, [e.text for e in second], method="random",
                                   target=second[0].labels[1], seed=0)
    off_top = [r for r in records if r.target != r.predicted]
    assert off_top and all(r.probs[r.target] > 0.5 or r.probs[r.target] < 0.5 for r in off_top)
    path = tmp_path / "labels.jsonl"
    records.save(str(path))
    page = tmp_path / "page.html"
    assert invoke("render", path, "--html", page).exit_code == 0
    text = page.read_text()
    assert "not the predicted class" not in text
    active = sum(r.probs[r.target] > 0.5 for r in off_top)
    assert text.count("a label the model predicts") == active
    assert text.count("a label the model does not predict") == len(off_top) - active

    model = root / "model"
    result = invoke("evaluate", path, "--model", model, "--min-tokens", "3", "--bootstrap", "0")
    assert result.exit_code == 0, result.output
    assert f"warning: {len(off_top)} record(s) explain another class than the one the model predicts" in result.stderr
    quiet = invoke("evaluate", path, "--model", model, "--min-tokens", "3", "--bootstrap", "0", "--target", "record")
    assert quiet.exit_code == 0 and "warning" not in quiet.stderr, quiet.output

    lines = path.read_text().splitlines(keepends=True)
    flipped = json.loads(lines[1])
    flipped.pop("multi_label")
    path.write_text(lines[0] + json.dumps(flipped) + "\n" + "".join(lines[2:]))
    # Deleted, the key is not said to have been written false: a single-label record says so by its absence.
    for written in ({}, {"multi_label": False}):
        path.write_text(lines[0] + json.dumps({**flipped, **written}) + "\n" + "".join(lines[2:]))
        result = invoke("evaluate", path, "--model", model)
        assert_one_line_error(result, f"{path}:2: record id", "is a single-label record (no multi_label true), but",
                              "is a multi-label classifier")
        assert "says multi_label false" not in result.stderr


def _by_input(records) -> list[list]:
    """Records of one all-active run, one list per input (an input's records share its id)."""
    grouped: list[list] = []
    for record in records:
        if not grouped or grouped[-1][0].id != record.id:
            grouped.append([])
        grouped[-1].append(record)
    return grouped


def _keyword_first(example, record) -> bool:
    """The map's top token begins or lies in one of its label's keywords."""
    words = example.text.split()
    top = max((i for i, flag in enumerate(record.special) if not flag), key=lambda i: record.scores[i])
    word = len(example.text[:record.offsets[top][0]].split())
    return word in example.keywords[record.target] or words[min(word, len(words) - 1)] in multilabel.KEYWORDS[record.target]


def test_all_active_explains_each_label_the_model_predicts_one_record_each(trained, classifier, library):
    """``target="all-active"``: for each input, one record per method for each label whose sigmoid
    (computed here, one text at a time) is above 0.5, in label order; the top label's records are
    a pred run's byte for byte, the others' maps those of a run for that label alone, and each
    active label's map puts one of its own keywords first."""
    root, held = trained
    held = held[:24]
    refs = contrastcat.open_library(str(library))
    texts = [e.text for e in held]
    methods = ["contrastcat", "attcat", "integrated-gradients"]
    records = contrastcat.explain(classifier, texts, refs, method=methods, target="all-active", seed=0, ig_steps=16)
    sigmoids = _sigmoids(classifier.model, texts)
    grouped = _by_input(records)
    assert len(grouped) == len(held)
    several = 0
    for example, probs, found in zip(held, sigmoids, grouped):
        active = sorted(set(np.flatnonzero(probs > 0.5)) | {int(np.argmax(probs))})
        assert active == list(example.labels)  # the toy model is right on every held-out input
        assert [(r.target, r.method) for r in found] == [(label, m) for label in active for m in methods]
        assert all(r.probs == found[0].probs and r.predicted == int(np.argmax(probs)) for r in found)
        several += len(active) > 1
    assert several >= 8  # inputs with two or three labels, not only one
    pred = contrastcat.explain(classifier, texts, refs, method=methods, seed=0, ig_steps=16)
    assert [r.to_json() for r in records if r.target == r.predicted] == [r.to_json() for r in pred]
    for label in range(len(multilabel.LABELS)):
        alone = contrastcat.explain(classifier, [e.text for e in held if label in e.labels], refs,
                                    method=["attcat", "integrated-gradients"], target=label, ig_steps=16)
        mine = [r for r in records if r.target == label and r.method != "contrastcat"]
        assert [(r.id, r.method) for r in alone] != [] and len(alone) == len(mine)
        for a, b in zip(alone, mine):  # batched otherwise: the last digits may differ
            assert (a.method, a.text, a.target) == (b.method, b.text, b.target)
            np.testing.assert_allclose(a.scores, b.scores, atol=1e-4)
    rates = {m: np.mean([_keyword_first(e, r) for e, found in zip(held, grouped) for r in found if r.method == m])
             for m in methods}
    print("keywords first, per active label (all-active):", rates)
    assert all(rate >= 0.75 for rate in rates.values()), rates


def test_all_active_on_a_single_label_model_is_refused(trained):
    root, held = trained
    single = contrastcat.load_model(str(_single_label_copy(root)))
    with pytest.raises(BadInput, match="all-active explains each label of a multi-label model; this model is single-label"):
        contrastcat.explain(single, [held[0].text], method="random", target="all-active")
    inputs = root / "one.jsonl"
    inputs.write_text(json.dumps({"text": held[0].text}) + "\n")
    assert_one_line_error(
        invoke("explain", inputs, "--model", _single_label_copy(root), "--method", "random", "--target", "all-active",
               "-o", root / "never.jsonl"),
        "--target all-active explains each label of a multi-label model", "explain its predicted class with pred",
    )
    assert not (root / "never.jsonl").exists()


@pytest.fixture(scope="module")
def all_active_run(trained, library):
    """An all-active run's inputs (more than two windows of one-input batches) and its bytes."""
    root, _ = trained
    inputs = root / "many.jsonl"
    examples = multilabel.make_examples(30, seed=11)
    inputs.write_text("".join(json.dumps({"id": f"x{i}", "text": e.text}) + "\n" for i, e in enumerate(examples)))
    out = root / "whole.jsonl"
    command = ("explain", inputs, "--refs", library, "--method", "attcat,random", "--seed", "3", "--target",
               "all-active", "--batch-size", "1")
    result = invoke(*command, "-o", out, "-q")
    assert result.exit_code == 0, result.output
    lines = out.read_bytes().splitlines()
    assert len(lines) > 2 * 30  # inputs with several labels
    return command, out.read_bytes()


def test_an_all_active_run_resumed_or_sharded_writes_the_same_bytes(all_active_run, tmp_path, monkeypatch):
    from contrastcat.usecases import explain_file as use_case

    command, whole = all_active_run
    real, out = use_case.explain_prepared, tmp_path / "resumed.jsonl"

    def stopping(*positional, **named):
        for number, records in enumerate(real(*positional, **named)):
            if number == 19:  # past the first window (8 inputs) and into the third
                raise KeyboardInterrupt
            yield records

    with monkeypatch.context() as patch:
        patch.setattr(use_case, "explain_prepared", stopping)
        assert invoke(*command, "-o", out, "--resume", "-q").exit_code == 130
    partial = tmp_path / f".{out.name}.contrastcat-partial"
    assert 0 < partial.read_bytes().count(b"\n") < whole.count(b"\n")
    result = invoke(*command, "-o", out, "--resume")
    assert result.exit_code == 0, result.output
    assert "kept from the checkpoint" in result.output
    assert out.read_bytes() == whole
    parts = [tmp_path / f"part{i}" for i in range(3)]
    for index, part in enumerate(parts):
        assert invoke(*command, "--shard", f"{index}/3", "-o", part, "-q").exit_code == 0
    merged = tmp_path / "merged.jsonl"
    result = invoke("merge", *parts, "-o", merged)
    assert result.exit_code == 0, result.output
    assert merged.read_bytes() == whole


def test_merge_counts_an_all_active_parts_records_from_their_probabilities(all_active_run, tmp_path):
    """A part's records cut or shifted, with its end line made to agree (count and digest), is
    refused: each input's record count follows from its probabilities, not from the end line."""
    import hashlib

    command, whole = all_active_run
    parts = [tmp_path / f"part{i}" for i in range(2)]
    for index, part in enumerate(parts):
        assert invoke(*command, "--shard", f"{index}/2", "-o", part, "-q").exit_code == 0

    def rewritten(lines: list[bytes]) -> None:
        records = lines[1:-1]
        end = json.loads(lines[-1])
        end["records"] = len(records)
        end["records_digest"] = "sha256:" + hashlib.sha256(b"".join(r + b"\n" for r in records)).hexdigest()
        parts[0].write_bytes(b"\n".join([*lines[:-1], json.dumps(end).encode()]) + b"\n")

    original = parts[0].read_bytes().splitlines()
    rewritten(original[:-2] + original[-1:])  # the last input loses its last record
    assert_one_line_error(invoke("merge", *parts, "-o", tmp_path / "m.jsonl"), "part0",
                          "its last input's records end early")
    first = json.loads(original[1])
    size = 2 * len({c for c, p in enumerate(first["probs"]) if p > 0.5} | {first["predicted"]})
    rewritten(original[:1] + original[1 + size:])  # the first input's records gone
    assert_one_line_error(invoke("merge", *parts, "-o", tmp_path / "m.jsonl"), "part0",
                          "holds the records of", "its shard of the run has")
    # One record's probabilities changed (its input's first says how many records the input has:
    # another record saying otherwise could move records across windows).
    second = json.loads(original[2])
    second["probs"] = [round(1 - p, 6) for p in second["probs"]]
    rewritten(original[:2] + [json.dumps(second).encode()] + original[3:])
    assert_one_line_error(invoke("merge", *parts, "-o", tmp_path / "m.jsonl"), "part0:3",
                          "not the record explain writes here (its probs is not that of its input's first record)")
    assert not (tmp_path / "m.jsonl").exists()


def test_a_checkpoint_with_an_inputs_labels_swapped_is_refused_naming_both_targets(all_active_run, trained, classifier):
    """The refusal says which target the line has and which this run would write there (it said
    "None now": the expected fields do not hold the target)."""
    from pathlib import Path

    from contrastcat.attribution.pipeline import ExplainSettings
    from contrastcat.methods import build_methods
    from contrastcat.output.resume import Run, completed_inputs
    from contrastcat.records.inputs import InputFile

    command, whole = all_active_run
    lines = whole.splitlines()
    records = [json.loads(line) for line in lines]
    start = next(i for i in range(0, len(records) - 3, 2)
                 if records[i]["id"] == records[i + 2]["id"] and records[i]["target"] != records[i + 2]["target"])
    first, second = records[start]["target"], records[start + 2]["target"]
    swapped = lines[:start] + lines[start + 2 : start + 4] + lines[start : start + 2] + lines[start + 4 :]
    rows = list(InputFile(str(trained[0] / "many.jsonl")).rows())
    run = Run(rows, build_methods(["attcat", "random"], shared=True, seed=3), classifier, None, EACH_ACTIVE,
              ExplainSettings(batch_size=1), str(trained[0] / "many.jsonl"))
    assert completed_inputs(lines, run, Path("ck")).inputs == len(rows)  # the run's own lines: all kept
    with pytest.raises(BadInput, match=rf"ck:{start + 1}: .*its target differs .*: {second} there, {first} now"):
        completed_inputs(swapped, run, Path("ck"))
    renamed = json.loads(lines[0])
    renamed["target_name"] = renamed["target_name"].upper()
    with pytest.raises(BadInput, match=rf"ck:1: .*its target_name differs .*: '{renamed['target_name']}' there, "
                                       rf"'{renamed['target_name'].lower()}' now"):
        completed_inputs([json.dumps(renamed, ensure_ascii=False).encode(), *lines[1:]], run, Path("ck"))
