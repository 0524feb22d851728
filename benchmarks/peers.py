"""The peers side by side: the same model, inputs, targets, steps and baselines through contrastcat
and through Captum, transformers-interpret and ferret, in one run.

    python -m venv /tmp/peers/.venv && cd /tmp/peers   # apart from the project's own environment
    .venv/bin/pip install torch==2.13.0 "/path/to/contrastcat[peers]"   # captum
    .venv/bin/pip install --no-deps ferret-xai==0.4.2 transformers-interpret==0.10.0 thermostat-datasets==1.1.0
    .venv/bin/pip install seaborn pandas scipy scikit-learn opencv-python-headless lime shap pytreebank \\
        spacy overrides jsonnet matplotlib tqdm
    HF_HUB_OFFLINE=1 PYTHONPATH=/path/to/contrastcat .venv/bin/python benchmarks/peers.py --inputs 20

(ferret pins transformers < 5 and numpy < 2, transformers-interpret ipython < 8: with ``--no-deps``
none of their pins apply, and transformers stays the project's; ferret's ``__init__`` imports every
explainer it has, hence shap, lime, spacy and thermostat. PYTHONPATH: the checkout's code, not
the installed copy's.) Inputs: the second half of
build/compare/rt-heldout.jsonl (minilm-rt held-out reviews, never its examples; the first half is
where settings are chosen), the target each input's predicted class. Each input is explained by
each side in turn, one at a time, so a side's time is its own and the machine's load falls on
both alike. Printed per pair: max |difference| of the token scores, top-1 agreement, and each
side's s/input; the CPU named first.

- integrated gradients, 50 Gauss-Legendre steps: the tool's zero baseline (special tokens keep
  their embeddings) against Captum's ``IntegratedGradients`` on the word embeddings with that
  baseline; the tool's ``ig_baseline="pad"`` against Captum's ``LayerIntegratedGradients`` on the
  word-embedding layer (baseline ids: [PAD] for every non-special token) and ferret's
  ``IntegratedGradientExplainer`` (the same baseline); transformers-interpret's explainer (it
  attributes the softmax probability, L2-normalises, and gives the last [SEP] of a single text
  token type 1: by design not equal; top-1 and time only);
- input x gradient against Captum's ``InputXGradient``;
- ``evaluate`` with ``eraser`` and ``loo`` against ferret's comprehensiveness, sufficiency and
  leave-one-out tau, given ERASER's bins (1, 5, 10, 20, 50 %) and every score (``only_pos`` off) as
  the tool uses them: ferret as shipped (it decodes each perturbed input and tokenizes the text
  again, which is where it differs), and ferret's rules applied to the same ids.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import time
import warnings

import numpy as np
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")
warnings.filterwarnings("ignore")

import contrastcat  # noqa: E402
from contrastcat.models.precision import describe_hardware  # noqa: E402

STEPS = 50
BINS = [0.01, 0.05, 0.1, 0.2, 0.5]  # ERASER's, as evaluate uses them


def report_half(count: int) -> list[str]:
    lines = open("build/compare/rt-heldout.jsonl").read().splitlines()
    return [json.loads(line)["text"] for line in lines[len(lines) // 2:][:count]]


class Clock:
    """Seconds per side, summed over inputs."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def run(self, side: str, action):
        began = time.perf_counter()
        result = action()
        self.seconds[side] = self.seconds.get(side, 0.0) + time.perf_counter() - began
        return result


class Agreement:
    """Max |difference| and top-1 agreement of two sides' maps."""

    def __init__(self) -> None:
        self.largest, self.same_top, self.count = 0.0, 0, 0

    def add(self, ours: np.ndarray, theirs: np.ndarray) -> None:
        self.largest = max(self.largest, float(np.abs(ours - theirs).max()))
        self.same_top += int(np.argmax(ours) == np.argmax(theirs))
        self.count += 1


def tool_map(classifier, text: str, method: str, **options) -> tuple[np.ndarray, int]:
    (record,) = contrastcat.explain(classifier, [text], method=method, **options)
    return np.array(record.raw_scores), record.target


def embeddings_and_mask(model, tokenizer, text):
    encoded = tokenizer(text, return_tensors="pt")
    ids = encoded["input_ids"]
    embeddings = model.get_input_embeddings()(ids).detach()
    special = torch.tensor(tokenizer.get_special_tokens_mask(ids[0].tolist(), already_has_special_tokens=True)).bool()
    return ids, encoded["attention_mask"], embeddings, special


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--inputs", type=int, default=20)
    args = parser.parse_args()
    from captum.attr import InputXGradient, IntegratedGradients, LayerIntegratedGradients
    from ferret import IntegratedGradientExplainer
    from transformers_interpret import SequenceClassificationExplainer

    print(describe_hardware(torch.device("cpu")), "|", ", ".join(
        f"{name} {importlib.metadata.version(name)}"
        for name in ("contrastcat", "torch", "transformers", "captum", "ferret-xai", "transformers-interpret")))
    classifier = contrastcat.load_model("minilm-rt", device="cpu")
    model, tokenizer = classifier.model.eval(), classifier.tokenizer
    texts = report_half(args.inputs)

    def logits_of_embeddings(embeddings, mask):
        return model(inputs_embeds=embeddings, attention_mask=mask).logits

    def logits_of_ids(ids, mask):
        return model(input_ids=ids, attention_mask=mask).logits

    captum_ig, captum_ixg = IntegratedGradients(logits_of_embeddings), InputXGradient(logits_of_embeddings)
    captum_lig = LayerIntegratedGradients(logits_of_ids, model.get_input_embeddings())
    interpret = SequenceClassificationExplainer(model, tokenizer)
    ferret_ig = IntegratedGradientExplainer(model, tokenizer, multiply_by_inputs=True)
    clock = Clock()
    for side in (lambda: tool_map(classifier, texts[0], "integrated-gradients", ig_steps=2),  # warm: lazy imports
                 lambda: interpret(texts[0], n_steps=2), lambda: ferret_ig(texts[0], call_args={"n_steps": 2})):
        side()
    pairs = {name: Agreement() for name in ("ig~captum", "ig-pad~captum-lig", "ig-pad~ferret", "ig~interpret",
                                             "ixg~captum")}
    for text in texts:
        ours, target = clock.run("tool ig", lambda: tool_map(classifier, text, "integrated-gradients", ig_steps=STEPS))
        ids, mask, embeddings, special = embeddings_and_mask(model, tokenizer, text)
        baseline = torch.where(special[None, :, None], embeddings, torch.zeros_like(embeddings))
        theirs = clock.run("captum ig", lambda: captum_ig.attribute(
            embeddings, baselines=baseline, target=target, additional_forward_args=(mask,), n_steps=STEPS))
        pairs["ig~captum"].add(ours, theirs.sum(-1)[0].detach().double().numpy())

        ours_pad, _ = clock.run("tool ig pad", lambda: tool_map(
            classifier, text, "integrated-gradients", ig_steps=STEPS, ig_baseline="pad"))
        baseline_ids = torch.where(special[None], ids, torch.full_like(ids, classifier.pad_id))
        theirs = clock.run("captum lig", lambda: captum_lig.attribute(
            ids, baselines=baseline_ids, target=target, additional_forward_args=(mask,), n_steps=STEPS))
        pairs["ig-pad~captum-lig"].add(ours_pad, theirs.sum(-1)[0].detach().double().numpy())
        explanation = clock.run("ferret ig", lambda: ferret_ig(text, target=target, call_args={"n_steps": STEPS}))
        pairs["ig-pad~ferret"].add(ours_pad, np.asarray(explanation.scores, dtype=np.float64))

        words = clock.run("interpret ig", lambda: interpret(text, index=target, n_steps=STEPS, internal_batch_size=None))
        if len(words) == len(ours):  # its own tokenization of the text (it spaces punctuation first)
            pairs["ig~interpret"].add(ours / np.linalg.norm(ours), np.array([score for _, score in words]))

        ours_ixg, _ = clock.run("tool ixg", lambda: tool_map(classifier, text, "input-x-gradient"))
        theirs = clock.run("captum ixg", lambda: captum_ixg.attribute(
            embeddings.clone().requires_grad_(), target=target, additional_forward_args=(mask,)))
        pairs["ixg~captum"].add(ours_ixg, theirs.sum(-1)[0].detach().double().numpy())
    n = len(texts)
    print(f"{n} inputs, {STEPS} steps, target: the predicted class")
    sides = {"ig~captum": ("tool ig", "captum ig"), "ig-pad~captum-lig": ("tool ig pad", "captum lig"),
             "ig-pad~ferret": ("tool ig pad", "ferret ig"), "ig~interpret": ("tool ig", "interpret ig"),
             "ixg~captum": ("tool ixg", "captum ixg")}
    for name, found in pairs.items():
        ours_side, their_side = sides[name]
        agreement = ("max |diff| of L2-normalised maps (by design not equal) " if name == "ig~interpret"
                     else "max |diff| ") + f"{found.largest:.1e}, top-1 {found.same_top}/{found.count}"
        print(f"{name:19s} {agreement}; s/input: tool {clock.seconds[ours_side] / n:.3f}, "
              f"peer {clock.seconds[their_side] / n:.3f}")
    batched(classifier, texts, captum_ig, captum_ixg)
    evaluations(classifier, texts)


def batched(classifier, texts, captum_ig, captum_ixg, rounds: int = 3) -> None:
    """The tool given every input in one call against Captum one input at a time (its way: an
    input's steps are one batch), in turns, ``rounds`` times: s/input of each, and their ratio
    per round."""
    model, tokenizer = classifier.model, classifier.tokenizer
    targets = [record.target for record in contrastcat.explain(classifier, texts, method="input-x-gradient")]

    def captum(attribution, steps):
        for text, target in zip(texts, targets):
            _, mask, embeddings, special = embeddings_and_mask(model, tokenizer, text)
            if steps:
                baseline = torch.where(special[None, :, None], embeddings, torch.zeros_like(embeddings))
                attribution.attribute(embeddings, baselines=baseline, target=target,
                                      additional_forward_args=(mask,), n_steps=steps)
            else:
                attribution.attribute(embeddings.clone().requires_grad_(), target=target, additional_forward_args=(mask,))

    for name, method, options, peer, steps in (
            ("integrated gradients", "integrated-gradients", {"ig_steps": STEPS}, captum_ig, STEPS),
            ("input x gradient", "input-x-gradient", {}, captum_ixg, 0)):
        found = []
        for _ in range(rounds):
            clock = Clock()
            clock.run("tool", lambda: contrastcat.explain(classifier, texts, method=method, **options))
            clock.run("captum", lambda: captum(peer, steps))
            found.append((clock.seconds["tool"] / len(texts), clock.seconds["captum"] / len(texts)))
        print(f"{name}, the tool given all {len(texts)} inputs in one call, Captum one at a time, {rounds} rounds: "
              + "; ".join(f"{tool:.3f} vs {peer_time:.3f} s/input ({tool / peer_time:.2f}x)" for tool, peer_time in found))


def evaluations(classifier, texts) -> None:
    """evaluate's comprehensiveness, sufficiency and leave-one-out tau against ferret's, on the
    tool's integrated-gradients maps."""
    from ferret.evaluators.faithfulness_measures import (
        AOPC_Comprehensiveness_Evaluation, AOPC_Sufficiency_Evaluation, TauLOO_Evaluation,
    )
    from ferret.explainers.explanation import Explanation
    from contrastcat.models.forward import predictor

    _numpy2_top_k()
    model, tokenizer = classifier.model, classifier.tokenizer
    records = contrastcat.explain(classifier, texts, method="integrated-gradients", ig_steps=STEPS)
    clock = Clock()
    report = clock.run("tool", lambda: contrastcat.evaluate(classifier, records, eraser=True, loo=True, bootstrap=0))
    scalars = report.methods["integrated-gradients"].scalars
    keys = {"comprehensiveness": "eraser_comp", "sufficiency": "eraser_suff", "loo tau": "loo_tau"}
    ours = {name: np.array(scalars[key].values) for name, key in keys.items()}
    evaluators = {"comprehensiveness": AOPC_Comprehensiveness_Evaluation(model, tokenizer),
                  "sufficiency": AOPC_Sufficiency_Evaluation(model, tokenizer),
                  "loo tau": TauLOO_Evaluation(model, tokenizer)}
    predict = predictor(classifier, 64)  # the tool's own pass, for ferret's rules on the same ids
    shipped = {name: [] for name in keys}
    on_ids = {name: [] for name in keys}
    arguments = {"only_pos": False, "removal_args": {"remove_tokens": True, "based_on": "perc", "thresholds": BINS}}
    for record in records:
        explanation = Explanation(record.text, record.tokens, np.array(record.raw_scores), "ig", record.target)
        for name, evaluator in evaluators.items():
            given = {} if name == "loo tau" else arguments
            shipped[name].append(float(clock.run("ferret", lambda: evaluator.compute_evaluation(
                explanation, target=record.target, **given)).score))
        for name, value in _rules_on_ids(predict, record).items():
            on_ids[name].append(value)
    print(f"evaluate --eraser --loo on the tool's integrated-gradients maps ({len(records)} records):")
    for name in keys:
        print(f"  {name:17s} ferret as shipped: max |diff| {np.nanmax(np.abs(ours[name] - np.array(shipped[name]))):.1e}; "
              f"ferret's rules on the same ids: {np.nanmax(np.abs(ours[name] - np.array(on_ids[name]))):.1e}")
    print(f"  s/input: evaluate {clock.seconds['tool'] / len(records):.3f} (curves drawn too), "
          f"ferret's three evaluators {clock.seconds['ferret'] / len(records):.3f}")


def _rules_on_ids(predict, record) -> dict[str, float]:
    """ferret's comprehensiveness, sufficiency and leave-one-out tau as its code computes them, on
    the record's token ids instead of decoded text: [CLS] and [SEP] left out of the ranking, the
    top int(k * n) tokens (ferret's own choice of them) removed, or kept, per bin, a bin of no
    token or of the same tokens as the last one skipped; tau: scipy's (tau-b) between the scores
    and each token's own drop."""
    from ferret.evaluators.utils_from_soft_to_discrete import _get_id_tokens_percentage
    from scipy.stats import kendalltau

    ids, scores = record.token_ids, np.array(record.raw_scores)
    inner, inner_scores = ids[1:-1], scores[1:-1]
    base = float(predict([ids])[0, record.target])
    removed, kept, last = [], [], None
    for fraction in BINS:
        chosen = _get_id_tokens_percentage(inner_scores, fraction, only_pos=False)
        top = None if chosen is None else {int(i) for i in chosen}
        if top is None or top == last:
            continue
        last = top
        removed.append([ids[0], *[t for i, t in enumerate(inner) if i not in top], ids[-1]])
        kept.append([ids[0], *[t for i, t in enumerate(inner) if i in top], ids[-1]])
    alone = [[ids[0], *inner[:i], *inner[i + 1:], ids[-1]] for i in range(len(inner))]
    probs = predict(removed + kept + alone)[:, record.target]
    comp = base - probs[: len(removed)]
    suff = base - probs[len(removed): len(removed) + len(kept)]
    drops = base - probs[len(removed) + len(kept):]
    return {"comprehensiveness": float(np.mean(comp)) if len(comp) else 0.0,
            "sufficiency": float(np.mean(suff)) if len(suff) else 1.0,
            "loo tau": float(kendalltau(inner_scores, drops)[0])}


def _numpy2_top_k() -> None:
    """ferret 0.4.2's top-k rationale compares an array with [] when ``only_pos`` is off, which
    numpy 2 refuses: the same rule, written for numpy 2."""
    import ferret.evaluators.utils_from_soft_to_discrete as discrete

    def top_k(soft_score_explanation, k, only_pos=True):
        scores = np.asarray(soft_score_explanation)
        order = scores.argsort()[-k:][::-1]
        chosen = [int(i) for i in order if not only_pos or scores[i] > 0]
        return chosen or None

    discrete._get_id_tokens_top_k = top_k


if __name__ == "__main__":
    main()
