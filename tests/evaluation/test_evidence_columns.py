"""Inputs with evidence: explain carries the spans into the records, evaluate scores each map
against them, compare judges by them. On the toy classifier, whose keywords decide the label,
the keywords are the evidence: the values are recomputed here with plain loops over the records'
tokens, and a real method is ahead of random on them beyond the paired intervals."""

from __future__ import annotations

import dataclasses
import json
import re

import numpy as np
import pytest

import contrastcat
from contrastcat.errors import BadInput
from contrastcat.evaluation.curves import EvalSettings
from contrastcat.evaluation.metrics import PLAUSIBILITY_JUDGED, PLAUSIBILITY_KEYS
from contrastcat.evaluation.stats import BootstrapSettings
from contrastcat.records.inputs import InputFields, InputFile, InputRow, rows_from_objects
from contrastcat.records.record import read_records
from contrastcat.testing import toy
from contrastcat.usecases.compare import CompareSettings, compare
from contrastcat.usecases.evaluate_records import Evaluating, evaluate_records, input_key
from contrastcat.usecases.options.compare import Choice

KEYWORDS = set(toy.POSITIVE + toy.NEGATIVE)


def keyword_spans(text: str) -> list[list[int]]:
    return [[m.start(), m.end()] for m in re.finditer(r"\w+", text) if m.group() in KEYWORDS]


def inputs(count: int, seed: int) -> list[dict]:
    return [{"id": f"t{i}", "text": e.text, "evidence": keyword_spans(e.text)}
            for i, e in enumerate(toy.make_examples(count, seed=seed))]


@pytest.fixture(scope="module")
def explained(toy_classifier):
    return contrastcat.explain(toy_classifier, inputs(40, 5), method=["attnlrp", "attcat", "random"],
                               evidence_field="evidence")


@pytest.fixture(scope="module")
def report(toy_classifier, explained):
    return evaluate_records(toy_classifier, list(explained), EvalSettings(), Evaluating(bootstrap=BootstrapSettings(500)))


def _ranked(values, gold):
    """Precision at k and average precision by plain loops (the maps here have no ties)."""
    order = sorted(range(len(values)), key=lambda i: -values[i])
    k = sum(gold)
    at_k = sum(gold[i] for i in order[:k]) / k
    found, total = 0, 0.0
    for place, i in enumerate(order, start=1):
        if gold[i]:
            found += 1
            total += found / place
    return at_k, total / k


def test_records_carry_the_spans_and_evaluate_scores_them(explained, report):
    assert all(r.evidence == keyword_spans(r.text) for r in explained)
    assert report.settings.plausibility and report.to_dict()["plausibility"] == {"threshold": 0.5, "iou_match": 0.5}
    for label, method in report.methods.items():
        assert set(PLAUSIBILITY_KEYS) <= set(method.scalars)
        found = {key: method.scalars[key].means() for key in PLAUSIBILITY_KEYS}
        mine = [r for r in explained if r.method == label]
        assert len(found["auprc_signed"]) == len(mine) == 40
        for record in mine:
            kept = [i for i, flag in enumerate(record.special) if not flag]
            gold = [record.tokens[i] in KEYWORDS for i in kept]
            raw = [record.raw_scores[i] for i in kept]
            key = input_key(record)
            for ranking, keys in (("signed", raw), ("magnitude", [abs(v) for v in raw])):
                if not any(gold):  # no keyword: no value, left out of the mean
                    assert np.isnan(found[f"precision_at_k_{ranking}"][key])
                    continue
                at_k, ap = _ranked(keys, gold)
                assert found[f"precision_at_k_{ranking}"][key] == pytest.approx(at_k)
                assert found[f"auprc_{ranking}"][key] == pytest.approx(ap)


def test_a_real_method_finds_the_keywords_and_random_does_not(report):
    for key in PLAUSIBILITY_JUDGED:
        assert report.methods["attnlrp"].scalars[key].mean > 0.9 > 0.3 > report.methods["random"].scalars[key].mean
        assert report.difference("attnlrp", "random")[key].interval.low > 0
    # A map that gives some keywords evidence against the class finds them by magnitude only.
    attcat = report.methods["attcat"].scalars
    assert attcat["precision_at_k_magnitude"].mean > attcat["precision_at_k_signed"].mean + 0.2


def test_records_without_evidence_get_no_plausibility_columns(toy_classifier, explained):
    bare = [r for r in contrastcat.explain(toy_classifier, [e.text for e in toy.make_examples(6, seed=5)], method="attcat")]
    assert all(r.evidence is None and "evidence" not in r.to_dict() for r in bare)
    report = evaluate_records(toy_classifier, bare, EvalSettings(), Evaluating(bootstrap=BootstrapSettings(0)))
    assert not report.settings.plausibility and "plausibility" not in report.to_dict()
    assert not set(PLAUSIBILITY_KEYS) & set(report.methods["attcat"].scalars)


def test_a_record_file_with_evidence_reads_back_and_a_bad_span_is_refused(tmp_path, explained):
    path = tmp_path / "records.jsonl"
    explained.save(str(path))
    assert [r.evidence for r in read_records(str(path))] == [r.evidence for r in explained]
    lines = path.read_text().splitlines()
    bad = json.loads(lines[1])
    bad["evidence"] = [[0, len(bad["text"]) + 1]]
    path.write_text("\n".join([lines[0], json.dumps(bad)]) + "\n")
    with pytest.raises(BadInput, match=r"records.jsonl:2: evidence span 0 .* not within its text"):
        read_records(str(path))


def test_input_rows_read_evidence_from_the_named_field_only():
    text = "a good film"
    (row,) = rows_from_objects([{"text": text, "why": [[2, 6]]}], InputFields(evidence="why"))
    assert row.evidence == ((2, 6, 0),)
    assert rows_from_objects([{"text": text, "why": [[2, 6]]}])[0].evidence is None  # not asked for: not read
    assert rows_from_objects([{"text": text, "why": "[[2, 6]]"}], InputFields(evidence="why"))[0].evidence == ((2, 6, 0),)
    with pytest.raises(BadInput, match="no row has the evidence field 'rationale'"):
        rows_from_objects([{"text": text, "why": [[2, 6]]}], InputFields(evidence="rationale"))
    with pytest.raises(BadInput, match=r"item 0: field 'why': evidence span 0 \[2, 60\] is not within"):
        rows_from_objects([{"text": text, "why": [[2, 60]]}], InputFields(evidence="why"))
    with pytest.raises(BadInput, match="is also the text"):
        rows_from_objects([{"text": text}], InputFields(evidence="text"))


def test_compare_judges_by_the_threshold_free_plausibility_columns(toy_classifier, toy_library):
    rows = [InputRow(i + 1, r["id"], r["text"], evidence=tuple((s, e, 0) for s, e in r["evidence"]))
            for i, r in enumerate(inputs(32, 9))]
    choices = [Choice("attcat"), Choice("input-x-gradient"), Choice("random")]
    compared = compare(toy_classifier, rows, toy_library, choices, CompareSettings(bootstrap=BootstrapSettings(500, 0.95, 0)))
    judged = {column.name for column in compared.judged}
    assert set(PLAUSIBILITY_JUDGED) <= judged
    assert not {key for key in PLAUSIBILITY_KEYS if key not in PLAUSIBILITY_JUDGED} & judged
    assert "random" in compared.recommendation.wins["attcat"]
    column = next(c for c in compared.judged if c.key == "precision_at_k_magnitude")
    values = compared.values("attcat", column)
    assert len(values) == 32 and np.nanmean(list(values.values())) > 0.8
    # The neutral inputs have no keyword: no value, left out of the mean and of the pairing.
    assert sum(np.isnan(v) for v in values.values()) == sum(not r.evidence for r in rows)


def test_evidence_as_python_and_csv_users_give_it(tmp_path):
    text = "a good film"
    fields = InputFields(evidence="why")
    assert rows_from_objects([{"text": text, "why": np.array([[2, 6]], dtype=np.int64)}], fields)[0].evidence == ((2, 6, 0),)
    assert rows_from_objects([{"text": text, "why": [(2, 6)]}, {"text": text, "why": "null"}], fields)[1].evidence is None
    path = tmp_path / "in.csv"
    path.write_text('id,text,why\na,a good film,"[[2, 6]]"\nb,a dull film,null\nc,a film,\n')
    assert [row.evidence for row in InputFile(str(path), fields).rows()] == [((2, 6, 0),), None, None]
    # Skipping bad lines does not make a misspelt field a warning: nothing would carry evidence.
    with pytest.raises(BadInput, match="no row has the evidence field 'wy'"):
        list(InputFile(str(path), InputFields(evidence="wy")).rows([]))


def test_a_shard_digest_tells_evidence_apart_and_rows_without_it_digest_as_before():
    import hashlib

    from contrastcat.output.shards import Tally

    plain, given, other = Tally(), Tally(), Tally()
    plain.add(InputRow(1, "a", "a good film", 1))
    given.add(InputRow(1, "a", "a good film", 1, evidence=((2, 6, 0),)))
    other.add(InputRow(1, "a", "a good film", 1, evidence=((0, 1, 0),)))
    before = "sha256:" + hashlib.sha256(json.dumps([1, "a", "a good film", 1]).encode()).hexdigest()[:32]
    assert plain.digest == before and len({plain.digest, given.digest, other.digest}) == 3


def test_records_of_one_input_with_other_evidence_are_refused(toy_classifier, explained):
    first = next(r for r in explained if r.method == "attnlrp" and r.evidence)
    twin = next(r for r in explained if r.method == "random" and r.id == first.id)
    changed = dataclasses.replace(twin, evidence=None)
    with pytest.raises(BadInput, match=rf"record id '{first.id}' \(random\) carries other evidence"):
        evaluate_records(toy_classifier, [first, changed], EvalSettings(min_tokens=1), Evaluating(bootstrap=BootstrapSettings(0)))
