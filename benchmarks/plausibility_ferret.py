"""ferret's plausibility measures against contrastcat's, on the same maps and the same evidence.

``contrastcat.evaluation.plausibility`` and ferret (pip ``ferret-xai``; its
``ferret/evaluators/plausibility_measures.py``) both score a map against a human rationale with
AUPRC, token F1 and token IOU. This script scores each record's ``raw_scores`` both ways and
prints, per measure, the largest |difference| over all maps:

(a) as shipped: ferret's evaluators with their defaults (``parse_evaluator_args``: the first and
    last positions dropped, negative scores clipped to 0, a hard rationale of the top 5 positive
    tokens, the trapezoidal area under ``precision_recall_curve``) against ours, ranked signed
    and by magnitude; then one convention changed at a time, so that each part of the
    difference is put down to one cause;
(b) aligned: ferret's own formulas given our token set, our keys and our rationale, which must
    equal ours to rounding wherever the definition is the same.

Only ferret's evaluators are loaded, never its package ``__init__``: that imports every explainer
(torch, transformers, shap, lime), none of which the plausibility formulas use. Keep ferret out of
the project's venv:

    python -m venv /tmp/ferret-venv
    /tmp/ferret-venv/bin/pip install --no-deps ferret-xai==0.4.2
    /tmp/ferret-venv/bin/pip install "numpy<2" scikit-learn
    .venv/bin/python benchmarks/plausibility_ferret.py inputs /tmp/s57/minilm-rt-report.jsonl --rows 20 \\
        -o /tmp/ferret-cmp/inputs.jsonl
    .venv/bin/contrastcat explain /tmp/ferret-cmp/inputs.jsonl --evidence-field evidence \\
        --method attcat,contrastcat,integrated-gradients,input-x-gradient,gradient-norm,occlusion \\
        -o /tmp/ferret-cmp/records.jsonl
    PYTHONPATH=. /tmp/ferret-venv/bin/python benchmarks/plausibility_ferret.py compare /tmp/ferret-cmp/records.jsonl

A record without an ``evidence`` field gets the spans of :func:`lexicon_spans` on its text.

What it found (ferret-xai 0.4.2, scikit-learn 1.9.1, numpy 1.26.4; minilm-rt on the first 20
held-out Rotten Tomatoes rows, 6 methods, 120 maps): aligned, every measure that is the same
definition agrees to 1e-16. As shipped, AUPRC differs by up to 0.25 (signed) mostly through the
trapezoid, which is never above average precision on untied keys (precision rises at each
evidence token, and the trapezoid averages it with the dip before) and can be above it only across
tied keys, such as ferret's own clipping makes of every non-positive score; token F1 and IOU
differ by up to 0.67 and 0.8 through the rationale (top 5 vs half the largest key). Special tokens
change nothing on single texts (both leave out [CLS] and [SEP]); no top-5 ended inside a tie.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import importlib.util
import json
import math
import re
import sys
import types
import warnings

import numpy as np

from contrastcat.evaluation.plausibility import RANKINGS, SIGNED, THRESHOLD, plausibility
from contrastcat.records.evidence import evidence_tokens

# A small fixed sentiment lexicon: the evidence of a review is where it says what it thinks. It was
# written with the first rows in view, which does not matter: any deterministic rule would do, for
# the comparison is of definitions, not of whose map is right.
LEXICON = frozenset("""
    good great best better fine fun funny enjoyable entertaining charming delightful wonderful
    brilliant beautiful moving touching powerful gripping clever smart witty fresh compelling
    engaging remarkable impressive superb terrific masterpiece love loved lovely awe inspiring
    accomplished bad worst worse dull boring tedious tiresome tiring awful terrible stupid silly
    mess messy lame weak flat bland pointless predictable disappointing fails failure misfires
    whiny stiff glacial shame poor ugly annoying clumsy
""".split())
WORD = re.compile(r"[A-Za-z]+")
EQUAL = 1e-9  # differences below this are rounding


def lexicon_spans(text: str) -> list[list[int]]:
    """Character spans of the text's lexicon words; with none, the span of its first longest word
    (so that every input has evidence and every map a value)."""
    words = [(m.start(), m.end()) for m in WORD.finditer(text)]
    hits = [[start, end] for start, end in words if text[start:end].lower() in LEXICON]
    if hits or not words:
        return hits
    start, end = max(words, key=lambda word: word[1] - word[0])
    return [[start, end]]


def write_inputs(source: str, rows: int, output: str) -> None:
    """The first ``rows`` rows of ``source`` (JSONL with a text field), each with its lexicon spans
    as an ``evidence`` field (explain --evidence-field evidence carries them into the records)."""
    with open(source, encoding="utf-8") as lines, open(output, "w", encoding="utf-8") as out:
        for _, line in zip(range(rows), lines):
            row = json.loads(line)
            out.write(json.dumps({**row, "evidence": lexicon_spans(row["text"])}) + "\n")


class _ModelHolder:
    """Stands in for ferret.model_utils.ModelHelper, a torch wrapper of which the plausibility
    evaluators read only ``.tokenizer`` (its cls_token)."""

    def __init__(self, model, tokenizer):
        self.model, self.tokenizer = model, tokenizer


def load_ferret() -> types.SimpleNamespace:
    """ferret's plausibility evaluators and the helpers they call, imported from ferret's own files
    without its package ``__init__`` (which would need torch, transformers, shap and lime)."""
    spec = importlib.util.find_spec("ferret")
    if spec is None or not spec.submodule_search_locations:
        sys.exit(f"plausibility_ferret: ferret is not installed for {sys.executable}; run this with a separate "
                 "venv's python that has it (pip install --no-deps ferret-xai; pip install 'numpy<2' scikit-learn)")
    package = types.ModuleType("ferret")
    package.__path__ = list(spec.submodule_search_locations)
    holder = types.ModuleType("ferret.model_utils")
    holder.ModelHelper = _ModelHolder
    sys.modules.update({"ferret": package, "ferret.model_utils": holder})
    try:
        measures = importlib.import_module("ferret.evaluators.plausibility_measures")
        discrete = importlib.import_module("ferret.evaluators.utils_from_soft_to_discrete")
    except ImportError as error:
        sys.exit(f"plausibility_ferret: ferret's evaluators cannot be imported ({error}); "
                 "pip install 'numpy<2' scikit-learn")
    return types.SimpleNamespace(
        version=importlib.metadata.version("ferret-xai"), path=measures.__file__,
        auprc=measures.AUPRC_PlausibilityEvaluation(None, None),
        f1=measures.Tokenf1_PlausibilityEvaluation(None, None),
        iou=measures.TokenIOU_PlausibilityEvaluation(None, None),
        explanation=measures.ExplanationWithRationale, curve=measures.precision_recall_curve,
        top_k=discrete.get_discrete_explanation_topK, k=discrete.parse_evaluator_args({})[3],
    )


def ferret_shipped(ferret, record: dict, scores: np.ndarray, gold: np.ndarray) -> dict[str, float]:
    """ferret's three evaluators as a user calls them, defaults untouched (the rationale over all
    tokens, specials included as 0, as ferret's Benchmark adds it)."""
    explanation = ferret.explanation(
        text=record["text"], tokens=record["tokens"], scores=scores, explainer=record["method"],
        target=record["target"], rationale=[int(flag) for flag in gold],
    )
    # The evaluators drop the first score only where tokens[0] is the tokenizer's cls_token.
    tokenizer = types.SimpleNamespace(cls_token=record["tokens"][0] if record["special"][0] else None)
    values = {}
    for measure in ("auprc", "f1", "iou"):
        evaluator = getattr(ferret, measure)
        evaluator.helper.tokenizer = tokenizer
        values[measure] = float(evaluator.compute_evaluation(explanation).score)
    return values


def ferret_hard(ferret, gold: np.ndarray, chosen) -> tuple[float, float]:
    """ferret's token F1 and IOU formulas (Tokenf1_/TokenIOU_PlausibilityEvaluation's helpers) for
    a given hard rationale; no rationale scores 0, as ferret's compute_evaluation scores it."""
    if chosen is None or not np.any(chosen):
        return 0.0, 0.0
    chosen = np.asarray(chosen).astype(bool)
    tp, pos, pred_pos = ferret.f1._instance_tp_pos_pred_pos(gold, chosen)
    _, _, f1 = ferret.f1._precision_recall_fmeasure(tp, pos, pred_pos)
    return float(f1), float(ferret.iou._token_iou(gold, chosen))


def ferret_areas(ferret, gold: np.ndarray, keys: np.ndarray) -> tuple[float, float]:
    """The area under ferret's precision-recall curve two ways: trapezoids, as ferret's
    _compute_auprc_soft_scoring takes it, and steps (each recall gain times its point's
    precision), which is average precision: the one change between the two definitions."""
    trapezoid = float(ferret.auprc._compute_auprc_soft_scoring(gold.astype(int), keys))
    precision, recall, _ = ferret.curve(gold.astype(int), keys)
    return trapezoid, float(-np.sum(np.diff(recall) * precision[:-1]))


def _tied_at(keys: np.ndarray, k: int) -> bool:
    """Whether the k-th highest key is tied with the next one (a top-k that must break the tie)."""
    ordered = np.sort(keys)[::-1]
    return len(ordered) > k and ordered[k - 1] == ordered[k]


def one_map(ferret, record: dict, gold_all: np.ndarray) -> dict[str, float] | None:
    """Every variant's value for one record's map (None: no evidence among its other tokens)."""
    scores = np.asarray(record["raw_scores"] if record.get("raw_scores") is not None else record["scores"], float)
    special = np.asarray(record["special"], bool)
    kept, gold = ~special, gold_all[~special]
    if not gold.any():
        return None
    row = {f"ferret {m}": v for m, v in ferret_shipped(ferret, record, scores, gold_all).items()}
    clipped = np.maximum(scores[kept], 0.0)  # ferret's only_pos, now on our token set
    row["ferret auprc, our tokens"] = ferret_areas(ferret, gold, clipped)[0]
    row["ferret f1, our tokens"], row["ferret iou, our tokens"] = ferret_hard(
        ferret, gold, ferret.top_k(scores[kept], ferret.k, only_pos=True))
    row["top-k tie"] = float(_tied_at(clipped, ferret.k) and np.sort(clipped)[-ferret.k] > 0)
    for ranking in RANKINGS:
        ours = plausibility(scores, gold_all, special, ranking=ranking)
        row |= {f"{ranking} ours {m}": getattr(ours, name) for m, name in
                (("auprc", "auprc"), ("f1", "token_f1"), ("iou", "token_iou"), ("p@k", "precision_at_k"))}
        keys = scores[kept] if ranking == SIGNED else np.abs(scores[kept])
        row |= {f"{ranking} {name}": value for name, value in ferret_aligned(ferret, gold, keys).items()}
    return row


def ferret_aligned(ferret, gold: np.ndarray, keys: np.ndarray) -> dict[str, float]:
    """ferret's formulas on our token set and keys (no clipping), and for F1 and IOU our rationale
    (the module docstring's rule, written out again here so that it is checked too)."""
    values = dict(zip(("trapezoid auprc", "steps auprc"), ferret_areas(ferret, gold, keys)))
    rationale = keys >= THRESHOLD * keys.max() if keys.max() > 0 else np.zeros(len(keys), bool)
    values["ferret-formula f1"], values["ferret-formula iou"] = ferret_hard(ferret, gold, rationale)
    # ferret's top-k F1 at k = |evidence| is precision@k where no tie crosses the k-th place and the
    # k-th key is positive (ferret's only_pos=True; its only_pos=False path raises on numpy >= 1.25).
    k = int(gold.sum())
    untied = np.sort(keys)[-k] > 0 and not _tied_at(keys, k)
    chosen = ferret.top_k(keys, k, only_pos=True) if untied else None
    values["ferret top-|evidence| f1"] = ferret_hard(ferret, gold, chosen)[0] if untied else math.nan
    return values


# Each comparison: (measure, variant a, variant b, what differs between them); the variants are
# one_map's keys. CAUSES walks from ferret's defaults to ours one convention per line, so that the
# lines' differences add up to the as-shipped one and each has one cause.
CLIPPED = "negatives clipped to 0 (one tie at the bottom) vs ranked"
SPECIAL = "special tokens: first and last position vs special flags"
RATIONALE = "rationale: top-k positive (ties by position) vs >= 0.5 x largest"
RANKING = "ranking: signed vs magnitude"
AS_SHIPPED = [
    (name, f"ferret {m}", f"{ranking} ours {m}", f"ferret's defaults vs ours, {ranking}")
    for name, m in (("AUPRC", "auprc"), ("token F1", "f1"), ("token IOU", "iou")) for ranking in RANKINGS
]
CAUSES = [
    ("AUPRC", "ferret auprc", "ferret auprc, our tokens", SPECIAL),
    ("AUPRC", "ferret auprc, our tokens", "signed trapezoid auprc", CLIPPED),
    ("AUPRC", "signed trapezoid auprc", "signed ours auprc", "trapezoidal PR area vs average precision"),
    ("AUPRC", "signed ours auprc", "magnitude ours auprc", RANKING),
] + [
    step for name, m in (("token F1", "f1"), ("token IOU", "iou")) for step in (
        (name, f"ferret {m}", f"ferret {m}, our tokens", SPECIAL),
        (name, f"ferret {m}, our tokens", f"signed ours {m}", RATIONALE),
        (name, f"signed ours {m}", f"magnitude ours {m}", RANKING),
    )
]
ALIGNED = [
    (name, f"{ranking} {a}", f"{ranking} ours {b}", f"{what}, {ranking}")
    for ranking in RANKINGS for name, a, b, what in (
        ("AUPRC", "steps auprc", "auprc", "ferret's PR curve summed by steps"),
        ("token F1", "ferret-formula f1", "f1", "ferret's F1 formula on our rationale"),
        ("token IOU", "ferret-formula iou", "iou", "ferret's IOU formula on our rationale"),
        ("precision@k", "ferret top-|evidence| f1", "p@k", "ferret's top-k F1 at k = |evidence|, untied maps"),
    )
] + [
    ("AUPRC", f"{ranking} trapezoid auprc", f"{ranking} ours auprc",
     f"NOT the same definition: ferret's trapezoid, {ranking}")
    for ranking in RANKINGS
]


def table(title: str, rows: list[dict], pairs: list[tuple[str, str, str, str]]) -> str:
    """One line per comparison: maps compared, maps where a is above b and below it (beyond
    rounding: a difference can go either way), max |a - b|, mean a - b."""
    lines = [title, f"  {'measure':<12} {'maps':>4} {'a>b':>4} {'a<b':>4} {'max |a-b|':>10} {'mean a-b':>9}  a vs b"]
    for name, a, b, what in pairs:
        diffs = np.array([row[a] - row[b] for row in rows if not (math.isnan(row[a]) or math.isnan(row[b]))])
        above, below = int(np.sum(diffs > EQUAL)), int(np.sum(diffs < -EQUAL))
        lines.append(f"  {name:<12} {len(diffs):>4} {above:>4} {below:>4} {np.max(np.abs(diffs)):>10.3g} "
                     f"{np.mean(diffs):>+9.4f}  {what}")
    return "\n".join(lines)


def compare(path: str) -> None:
    """Read the records, score every map both ways, print the three tables."""
    ferret = load_ferret()
    rows, methods, skipped = [], set(), 0
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            spans = record.get("evidence") or lexicon_spans(record["text"])
            spans = [(*span, 0) if len(span) == 2 else tuple(span) for span in spans]
            gold = np.array(evidence_tokens(record["offsets"], record.get("segments"), spans), bool)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # sklearn's and numpy's notes on 0/0 in scores we check
                row = one_map(ferret, record, gold)
            skipped += row is None
            if row is not None:
                rows.append(row)
                methods.add(record["method"])
    print(f"ferret-xai {ferret.version} ({ferret.path}); top-k k = {ferret.k}; {len(rows)} maps, "
          f"{len(methods)} methods ({', '.join(sorted(methods))}); {skipped} without evidence left out")
    print(table("(a) as shipped", rows, AS_SHIPPED))
    print(table("(a') one convention at a time, ferret's toward ours", rows, CAUSES))
    print(f"  maps whose top-{ferret.k} positive tokens end inside a tie (ferret breaks it by argsort position): "
          f"{int(sum(row['top-k tie'] for row in rows))}")
    print(table(f"(b) aligned: same token set, keys and rationale (equal: |diff| <= {EQUAL:g})", rows, ALIGNED))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    inputs = commands.add_parser("inputs", help="rows of a JSONL with lexicon evidence spans")
    inputs.add_argument("source")
    inputs.add_argument("--rows", type=int, default=20)
    inputs.add_argument("-o", "--output", required=True)
    scored = commands.add_parser("compare", help="records scored by ours and ferret's definitions")
    scored.add_argument("records")
    args = parser.parse_args(argv)
    if args.command == "inputs":
        write_inputs(args.source, args.rows, args.output)
    else:
        compare(args.records)


if __name__ == "__main__":
    main()
