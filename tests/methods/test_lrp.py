"""The LRP methods (attnlrp, full-lrp, partial-lrp, transatt).

- An explicit relevance propagation, written here layer by layer in float64 from
  the rules' formulas (LRP-0 sums z_ij / z_j, the uniform split of each product
  term, AttnLRP's softmax rule, LayerNorm as the linear map it is with its
  standard deviation held), on a random two-layer BERT: no gradient, no hook,
  nothing from contrastcat but the final maps and the captured relevances.
- Conservation in every family: with the biases, position and token-type
  embeddings and the query and key weights zeroed, every score is 0, the softmax
  input carries no relevance, and what the softmax absorbs is exactly the
  attention maps' relevance; so word relevance + attention relevance = the
  target logit.
- The rules leave nothing behind: parameters still require grad, no hook, no
  torch function mode, and a method run beside an LRP method gets exactly what
  it gets alone.
"""

from __future__ import annotations

import contextlib
import copy
import json

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from contrastcat.attribution.pipeline import attribute, attribute_all
from contrastcat.capture.core import (
    ATTENTION_RELEVANCE,
    EMBEDDING_GRADIENTS,
    LAYER_RELEVANCE,
    WORD_RELEVANCE,
    capture,
)
from contrastcat.capture.lrp_rules import lrp_rules
from contrastcat.errors import BadInput
from contrastcat.methods import build_method
from contrastcat.models import FAMILIES, wrap_classifier
from contrastcat.models.tokens import tokenize
from contrastcat.testing import tiny

from ..helpers import TEXTS
from .oracles import explicit_relevance

LRP_METHODS = ["full-lrp", "partial-lrp", "transatt", "attnlrp"]


@pytest.fixture(scope="module")
def bert():
    """A random two-layer BERT with weights large enough for every non-linearity to bend."""
    model, tokenizer = tiny.build("bert", seed=4, init_range=0.3)
    return wrap_classifier(model, tokenizer, name="lrp-bert")


# ------------------------------------------------------------------ against the oracle


def _close(mine, theirs, rtol=2e-4):
    mine, theirs = np.asarray(mine, dtype=np.float64), np.asarray(theirs, dtype=np.float64)
    assert mine.shape == theirs.shape
    scale = np.abs(theirs).max()
    assert np.abs(mine - theirs).max() <= rtol * scale, (np.abs(mine - theirs).max(), scale)


def _minmax(values):
    values = np.asarray(values, dtype=np.float64)
    span = values.max() - values.min()
    return (values - values.min()) / span if span else np.zeros_like(values)


@pytest.mark.parametrize("text", TEXTS[1:4], ids=["long", "short", "medium"])
@pytest.mark.parametrize("kind", ["pred", "other"])
def test_relevances_and_maps_match_the_explicit_propagation(bert, text, kind):
    (tokens,) = tokenize(bert.tokenizer, [text], bert.max_length)
    with torch.no_grad():
        logits = bert.model(input_ids=torch.tensor([tokens.ids])).logits[0]
    target = int(logits.argmax()) if kind == "pred" else (int(logits.argmax()) + 1) % logits.numel()
    oracle = explicit_relevance(bert.model, list(tokens.ids), target)
    captured = capture(
        bert, [tokens.ids], [tokens.special], [target],
        needs=frozenset({WORD_RELEVANCE, LAYER_RELEVANCE, ATTENTION_RELEVANCE}),
    )
    _close(captured.word_relevance[0], oracle["word"])
    _close(captured.layer_relevance[0], oracle["first"])
    _close(captured.attention_relevance[0], oracle["attention"])

    # The final maps: each method's read-out, here from the oracle's relevances.
    maps = {name: attribute(bert, [tokens], [target], build_method(name))[0][0].scores for name in LRP_METHODS}
    _close(maps["attnlrp"], _minmax(oracle["word"]), rtol=1e-4)
    # The paper's baselines start from a relevance of 1 (Chefer's one-hot), not the logit.
    unit = float(oracle["logit"])
    _close(maps["full-lrp"], _minmax(oracle["first"] / unit), rtol=1e-4)
    last = (oracle["attention"][-1] / unit).clamp(min=0).mean(dim=0)[0].clone()
    last[0] = 0.0
    _close(maps["partial-lrp"], _minmax(last), rtol=1e-4)

    # TransAtt also reads the plain gradient of the logit w.r.t. each attention map.
    ids = torch.tensor([tokens.ids])
    outputs = bert.model(input_ids=ids, output_attentions=True)
    gradients = torch.autograd.grad(outputs.logits[0, target], outputs.attentions)
    T = len(tokens.ids)
    rollout = np.eye(T)
    for relevance, gradient in zip((oracle["attention"] / unit).numpy(), gradients):
        cam = np.clip(gradient[0].double().numpy() * relevance, 0, None).mean(axis=0) + np.eye(T)
        rollout = (cam / cam.sum(axis=1, keepdims=True)) @ rollout
    row = rollout[0].copy()
    row[0] = row.min()
    _close(maps["transatt"], _minmax(row), rtol=1e-4)


def test_the_oracle_is_conservative_where_it_must_be(bert):
    """The oracle's own check: relevance + every absorbed share = the logit, worked out here."""
    (tokens,) = tokenize(bert.tokenizer, [TEXTS[1]], bert.max_length)
    model = copy.deepcopy(bert.model)
    _zero_shares(model, "bert")
    oracle = explicit_relevance(model, list(tokens.ids), 0)
    total = oracle["word"].sum() + oracle["attention"].sum()
    assert abs(float(total - oracle["logit"])) < 1e-10 * max(1.0, abs(float(oracle["logit"])))


# ------------------------------------------------------------------ conservation, every family

# The query and key projections, by family: weight name suffix, and which output rows
# (fused Q|K|V projections: the first two thirds) are queries and keys.
QUERY_KEY = {
    "bert": ("query.weight", "key.weight"),
    "roberta": ("query.weight", "key.weight"),
    "xlm-roberta": ("query.weight", "key.weight"),
    "albert": ("query.weight", "key.weight"),
    "electra": ("query.weight", "key.weight"),
    "distilbert": ("q_lin.weight", "k_lin.weight"),
    "deberta-v2": ("query_proj.weight", "key_proj.weight"),
    "llama": ("q_proj.weight", "k_proj.weight"),
    "mistral": ("q_proj.weight", "k_proj.weight"),
    "qwen2": ("q_proj.weight", "k_proj.weight"),
    "gpt2": ("c_attn.weight",),  # Conv1D [in, 3 n]: columns
    "modernbert": ("Wqkv.weight",),  # Linear [3 n, in]: rows
}
ABSORBING = ("bias", "position_embeddings", "token_type_embeddings", "wpe.weight")


@torch.no_grad()
def _zero_shares(model, model_type: str) -> None:
    """Zero what absorbs relevance besides the softmax, and the scores (softmax input x = 0)."""
    for name, parameter in model.named_parameters():
        if any(part in name for part in ABSORBING):
            parameter.zero_()
        elif name.endswith("c_attn.weight"):
            parameter[:, : 2 * parameter.shape[1] // 3] = 0
        elif name.endswith("Wqkv.weight"):
            parameter[: 2 * parameter.shape[0] // 3] = 0
        elif name.endswith(QUERY_KEY[model_type]):
            parameter.zero_()


def test_every_family_has_its_query_and_key_names():
    assert sorted(QUERY_KEY) == sorted(FAMILIES)


@pytest.mark.parametrize("model_type", sorted(FAMILIES))
def test_conservation_in_every_family(model_type):
    """Sum of word relevances + the attention maps' relevance = the target logit.

    With nothing else absorbing (zeroed above) this holds only if every rule is in
    place: a plain GELU/SiLU/tanh gradient, a LayerNorm or RMSNorm whose normaliser
    is differentiated, or a product not halved each break it (the checks below).
    """
    model, tokenizer = tiny.build(model_type, seed=1, init_range=0.3)
    _zero_shares(model, model_type)
    classifier = wrap_classifier(model, tokenizer, name=f"zeroed-{model_type}")
    texts = tokenize(tokenizer, TEXTS[:4], classifier.max_length)
    captured = capture(
        classifier, [t.ids for t in texts], [t.special for t in texts], [None, 0, 1, 2],
        needs=frozenset({WORD_RELEVANCE, ATTENTION_RELEVANCE}),
    )
    attention = captured.attention_relevance.double().sum(dim=(1, 2, 3, 4))
    for b, length in enumerate(captured.lengths):
        logit = captured.logits[b, captured.targets[b]].double()
        total = captured.word_relevance[b, :length].sum() + attention[b]
        scale = max(float(captured.word_relevance[b, :length].abs().sum()), abs(float(logit)))
        assert abs(float(total - logit)) <= 1e-4 * scale, (model_type, b, float(total), float(logit))
        assert scale > 1e-3  # relevance that is all zeros would conserve trivially


def _falcon():
    import transformers

    tokenizer = tiny.make_tokenizer("gpt2")
    config = transformers.FalconConfig(
        vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=4, num_labels=3,
        bos_token_id=tokenizer.eos_token_id, eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.eos_token_id,
    )
    torch.manual_seed(0)
    model = transformers.AutoModelForSequenceClassification.from_config(config, attn_implementation="eager")
    return model.eval(), tokenizer


@pytest.mark.parametrize("kind", ["gpt_neox", "bloom", "falcon"])
def test_conservation_in_families_with_no_row(kind):
    """Families the fallback runs: fused per-head Q|K|V, rotary (GPT-NeoX); ALiBi through
    baddbmm and a GELU of BLOOM's own (BLOOM); multi-query Q|K|V and scores divided in
    place (Falcon). With Q = K = 0 the scores are the ALiBi bias alone, and whatever the
    softmax input carries is absorbed by that constant: the attention maps' relevance is
    still all that is absorbed."""
    from ..helpers import fallback_model as _fallback_model

    model, tokenizer = _falcon() if kind == "falcon" else _fallback_model(kind)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if "bias" in name:
                parameter.zero_()
            elif name.endswith("query_key_value.weight") and kind == "falcon":  # rows: [q (n) | k (d) | v (d)]
                parameter[: parameter.shape[1] + parameter.shape[1] // model.config.num_attention_heads] = 0
            elif name.endswith("query_key_value.weight"):  # rows per head: [q | k | v]
                heads = model.config.num_attention_heads
                parameter.view(heads, 3, -1, parameter.shape[-1])[:, :2] = 0
    classifier = wrap_classifier(model, tokenizer, name=f"zeroed-{kind}")
    texts = tokenize(tokenizer, TEXTS[:3], 64, classifier.empty_input)
    captured = capture(
        classifier, [t.ids for t in texts], [t.special for t in texts], [None, 0, 1],
        needs=frozenset({WORD_RELEVANCE, ATTENTION_RELEVANCE}),
    )
    attention = captured.attention_relevance.double().sum(dim=(1, 2, 3, 4))
    for b, length in enumerate(captured.lengths):
        logit = float(captured.logits[b, captured.targets[b]])
        total = float(captured.word_relevance[b, :length].sum() + attention[b])
        scale = max(float(captured.word_relevance[b, :length].abs().sum()), abs(logit))
        assert abs(total - logit) <= 1e-4 * scale and scale > 1e-3, (kind, b, total, logit)


def test_conservation_breaks_without_the_rules(bert):
    """The same check on the plain gradient (input x gradient) fails: the check can fail."""
    model = copy.deepcopy(bert.model)
    _zero_shares(model, "bert")
    classifier = wrap_classifier(model, bert.tokenizer, name="zeroed-bert")
    (tokens,) = tokenize(bert.tokenizer, [TEXTS[1]], classifier.max_length)
    plain = capture(classifier, [tokens.ids], [tokens.special], [0], needs=frozenset({"embeddings", EMBEDDING_GRADIENTS}))
    lrp = capture(classifier, [tokens.ids], [tokens.special], [0], needs=frozenset({WORD_RELEVANCE, ATTENTION_RELEVANCE}))
    logit = float(plain.logits[0, 0])
    plain_total = float((plain.embeddings[0].double() * plain.embedding_gradients[0].double()).sum())
    lrp_total = float(lrp.word_relevance[0].sum() + lrp.attention_relevance[0].double().sum())
    assert abs(lrp_total - logit) < 1e-4 * abs(logit)
    assert abs(plain_total - logit) > 0.05 * abs(logit)


# ------------------------------------------------------------------ nothing left behind


def test_the_rules_leave_no_trace(bert):
    model = bert.model
    grads_before = [p.requires_grad for p in model.parameters()]
    texts = tokenize(bert.tokenizer, TEXTS, bert.max_length)
    targets = [None] * len(texts)
    others = [build_method(name) for name in ("input-x-gradient", "att-x-att-grads", "generic-attention")]
    alone = attribute_all(bert, texts, targets, others)[0]
    # After the plain methods ran: transformers adds its own hooks to record attentions the first
    # time they are asked for, and keeps them (this test alone, in a fresh process, saw them).
    hooks_before = {name: (tuple(m._forward_hooks), tuple(m._forward_pre_hooks)) for name, m in model.named_modules()}
    together = attribute_all(bert, texts, targets, [build_method("attnlrp"), *others, build_method("transatt")])[0]
    for mine, theirs in zip(together[1:-1], alone):
        for a, b in zip(mine, theirs):
            assert np.array_equal(a.scores, b.scores)
    assert [p.requires_grad for p in model.parameters()] == grads_before
    assert {name: (tuple(m._forward_hooks), tuple(m._forward_pre_hooks)) for name, m in model.named_modules()} == hooks_before
    assert not torch._C._is_torch_function_mode_enabled()
    assert not torch.nn.modules.module._global_forward_hooks
    # and a plain backward after them is the plain gradient again
    ids = torch.tensor([texts[1].ids])
    embedded = model.get_input_embeddings()(ids).detach().requires_grad_()
    (gradient,) = torch.autograd.grad(model(inputs_embeds=embedded).logits[0, 0], embedded)
    with torch.no_grad():
        step = 1e-3 * torch.randn_like(embedded)
        difference = model(inputs_embeds=embedded + step).logits[0, 0] - model(inputs_embeds=embedded - step).logits[0, 0]
    assert abs(float(difference) - 2 * float((gradient * step).sum())) < 1e-3 * abs(float(difference)) + 1e-7


def test_rules_are_removed_after_an_error(bert, monkeypatch):
    grads_before = [p.requires_grad for p in bert.model.parameters()]

    def explode(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(bert.adapter.layers[-1], "forward", explode)
    (tokens,) = tokenize(bert.tokenizer, [TEXTS[1]], bert.max_length)
    with pytest.raises(RuntimeError, match="boom"):
        capture(bert, [tokens.ids], [tokens.special], [None], needs=frozenset({WORD_RELEVANCE}))
    monkeypatch.undo()
    assert [p.requires_grad for p in bert.model.parameters()] == grads_before
    assert not torch._C._is_torch_function_mode_enabled()


def test_a_fused_attention_kernel_is_refused_not_explained_wrongly(bert):
    """SDPA's products and softmax cannot take the rules: one line, and the rules are gone after."""
    model = copy.deepcopy(bert.model)
    classifier = wrap_classifier(model, bert.tokenizer, name="sdpa-bert")
    model.config._attn_implementation = "sdpa"  # as if a user switched it after loading
    (tokens,) = tokenize(bert.tokenizer, [TEXTS[1]], classifier.max_length)
    with pytest.raises(BadInput, match="the LRP methods need eager attention"):
        capture(classifier, [tokens.ids], [tokens.special], [None], needs=frozenset({WORD_RELEVANCE}))
    assert not torch._C._is_torch_function_mode_enabled()
    assert all(p.requires_grad for p in model.parameters())


# ------------------------------------------------------------------ the rules one by one


def _grads(fn, *tensors, rules: bool):
    """Values and gradients of sum(fn(*tensors) * weights) with or without the rules."""
    leaves = [t.detach().clone().requires_grad_() for t in tensors]
    holder = torch.nn.Linear(1, 1)  # lrp_rules needs a model; its parameters are frozen for the pass
    context = lrp_rules(holder) if rules else contextlib.nullcontext()
    with context:
        out = fn(*leaves)
        weights = torch.linspace(-1, 2, out.numel()).view_as(out)
        grads = torch.autograd.grad((out * weights).sum(), leaves)
    return out.detach(), grads


@pytest.mark.parametrize(
    "fn, shapes, shares",
    [
        (lambda a, b: a @ b, [(3, 4), (4, 5)], [0.5, 0.5]),
        (lambda a, b: torch.matmul(a, b), [(2, 3, 4), (2, 4, 5)], [0.5, 0.5]),
        (lambda a, b: a * b, [(3, 4), (3, 4)], [0.5, 0.5]),
        (lambda a, b, c: torch.einsum("ij,jk,kl->il", a, b, c), [(2, 3), (3, 4), (4, 2)], [1 / 3] * 3),
        (lambda c, a, b: c.baddbmm(batch1=a, batch2=b, beta=0.5, alpha=2.0), [(2, 3, 5), (2, 3, 4), (2, 4, 5)],
         [1.0, 0.5, 0.5]),
        (lambda c, a, b: torch.addmm(c, a, b), [(3, 5), (3, 4), (4, 5)], [1.0, 0.5, 0.5]),
    ],
    ids=["@", "matmul", "mul", "einsum-3", "Tensor.baddbmm", "addmm"],
)
def test_products_of_input_dependent_tensors_share_the_gradient(fn, shapes, shares):
    generator = torch.Generator().manual_seed(0)
    tensors = [torch.randn(shape, generator=generator, dtype=torch.float64) for shape in shapes]
    plain_out, plain = _grads(fn, *tensors, rules=False)
    ruled_out, ruled = _grads(fn, *tensors, rules=True)
    assert torch.equal(plain_out, ruled_out)  # the forward value is the model's own
    for share, p, r in zip(shares, plain, ruled):
        assert torch.allclose(r, share * p, atol=1e-12)


def test_a_product_with_a_constant_or_a_weight_is_linear():
    generator = torch.Generator().manual_seed(1)
    x = torch.randn(3, 4, generator=generator, dtype=torch.float64, requires_grad=True)
    layer = torch.nn.Linear(4, 4).double()
    with lrp_rules(layer):
        (gradient,) = torch.autograd.grad((x * layer.weight[0] * 3.0).sum(), x)
    assert torch.allclose(gradient, (layer.weight[0] * 3.0).detach().expand_as(x))
    assert all(p.requires_grad for p in layer.parameters())


@pytest.mark.parametrize("function", [torch.tanh, F.gelu, F.silu, F.relu, torch.nn.GELU(approximate="tanh")])
def test_element_wise_non_linearities_pass_relevance_unchanged(function):
    x = torch.linspace(-3, 3, 13, dtype=torch.float64)
    out, (gradient,) = _grads(function, x, rules=True)
    weights = torch.linspace(-1, 2, 13, dtype=torch.float64)
    assert torch.equal(out, function(x))
    # relevance in = x * gradient = relevance out = f(x) * weight (x = 0 sits exactly on the grid)
    assert torch.allclose(x * gradient, out * weights, atol=1e-12)


def test_layer_norm_is_linear_with_its_standard_deviation_held():
    generator = torch.Generator().manual_seed(2)
    norm = torch.nn.LayerNorm(6).double()
    with torch.no_grad():
        norm.weight.copy_(torch.randn(6, generator=generator, dtype=torch.float64))
        norm.bias.copy_(torch.randn(6, generator=generator, dtype=torch.float64))
    x = torch.randn(2, 6, generator=generator, dtype=torch.float64, requires_grad=True)
    with lrp_rules(norm):
        y = norm(x)
        (gradient,) = torch.autograd.grad(y.sum(), x)
    assert torch.equal(y.detach(), norm(x).detach())
    # conservation up to the bias: x . gradient = sum(y - bias) per row, since mean(gradient) = 0
    assert torch.allclose((x * gradient).sum(-1), (y - norm.bias).sum(-1).detach(), atol=1e-12)


def test_method_all_and_the_method_list_include_the_lrp_methods(tmp_path, toy_dir):
    from contrastcat.methods import parse_method_list

    from ..helpers import invoke

    assert set(LRP_METHODS) <= set(parse_method_list("all"))
    listed = invoke("explain", "--list-methods")
    assert listed.exit_code == 0, listed.output
    assert set(LRP_METHODS) <= {line.split()[0] for line in listed.stdout.splitlines() if line.strip()}
    as_json = json.loads(invoke("explain", "--list-methods", "--json").stdout)
    assert [entry["name"] for entry in as_json] == parse_method_list("all")
    assert {entry["name"]: entry["needs_refs"] for entry in as_json}["contrastcat"] is True
    assert invoke("explain", "in.jsonl", "--json").exit_code == 2  # --json is for the list only
    out = tmp_path / "lrp.jsonl"
    result = invoke(
        "explain", toy_dir / "inputs.jsonl", "--model", toy_dir / "model", "--method", ",".join(LRP_METHODS), "-o", out, "-q"
    )
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["method"] for r in records[:4]] == LRP_METHODS and len(records) == 4 * 12


def test_in_place_changes_after_a_rule_work():
    """Falcon divides its attention scores in place (scores /= sqrt(d)) right after Q·Kᵀ."""
    generator = torch.Generator().manual_seed(3)
    a, b = (torch.randn(2, 3, 3, generator=generator, dtype=torch.float64) for _ in range(2))
    ruled_out, ruled = _grads(lambda x, y: (x @ y).div_(2.0), a, b, rules=True)
    assert torch.allclose(ruled_out, (a @ b) / 2)
    _, halved = _grads(lambda x, y: (x @ y) / 2.0, a, b, rules=False)
    assert all(torch.allclose(r, 0.5 * h) for r, h in zip(ruled, halved))


class _MakesItsOwnActivation(torch.nn.Module):
    """As DeBERTa's pooler: ``ACT2FN[name](x)`` builds the activation module inside forward."""

    def __init__(self, name: str):
        super().__init__()
        self.name = name

    def forward(self, x):
        from transformers.activations import ACT2FN

        return ACT2FN[self.name](x)


@pytest.mark.parametrize("name", ["gelu_new", "quick_gelu", "gelu_fast"])
def test_an_activation_made_inside_forward_takes_the_identity_rule(name):
    module = _MakesItsOwnActivation(name)
    x = torch.linspace(-3, 3, 13, dtype=torch.float64)
    out, (gradient,) = _grads(module, x, rules=True)
    assert torch.allclose(x * gradient, out * torch.linspace(-1, 2, 13, dtype=torch.float64), atol=1e-12)


@pytest.mark.parametrize("activation", [torch.nn.Hardsigmoid(), torch.nn.Sigmoid()])
def test_an_activation_that_is_not_zero_at_zero_keeps_its_gradient(activation):
    x = torch.linspace(-3, 3, 13, dtype=torch.float64)
    assert torch.allclose(_grads(activation, x, rules=True)[1][0], _grads(activation, x, rules=False)[1][0])


def test_with_mask_special_the_baselines_start_from_the_masked_pass(bert):
    """--mask-special: the prediction comes from the plain mask, the relevances from the masked
    pass; the latter's logit is what they sum to, and what the baselines divide by."""
    model = copy.deepcopy(bert.model)
    _zero_shares(model, "bert")
    classifier = wrap_classifier(model, bert.tokenizer, name="zeroed-bert")
    texts = tokenize(bert.tokenizer, TEXTS[1:3], classifier.max_length)
    captured = capture(
        classifier, [t.ids for t in texts], [t.special for t in texts], [0, 1],
        needs=frozenset({WORD_RELEVANCE, ATTENTION_RELEVANCE}), mask_special=True,
    )
    for b, length in enumerate(captured.lengths):
        total = float(captured.word_relevance[b, :length].sum() + captured.attention_relevance[b].double().sum())
        started = float(captured.relevance_logits[b])
        assert abs(total - started) <= 1e-4 * abs(started)
        assert abs(started - float(captured.logits[b, captured.targets[b]])) > 1e-3  # not the prediction's


def test_records_keep_the_lrp_relevance_that_sums_to_the_logit(bert):
    """A record's raw_scores are the method's relevance before scaling, as the explicit
    propagation above computes it: AttnLRP's is the word embeddings' relevance (logit units),
    Full LRP's the first layer input's divided by the logit (its relevance starts at 1 for the
    target). With the shares zeroed, AttnLRP's sum plus what the softmax absorbs (the attention
    maps' relevance, from the oracle) is the target logit, to 1e-4 (docs/methods.md); scaled,
    the raw scores are the record's scores."""
    import contrastcat

    model = copy.deepcopy(bert.model)
    _zero_shares(model, "bert")
    for classifier in (bert, wrap_classifier(model, bert.tokenizer, name="zeroed-bert")):
        records = contrastcat.explain(classifier, TEXTS[1:4], method=["attnlrp", "full-lrp"])
        assert [record.method for record in records] == ["attnlrp", "full-lrp"] * 3
        for attnlrp, full in zip(records[0::2], records[1::2]):
            oracle = explicit_relevance(classifier.model, attnlrp.token_ids, attnlrp.target)
            logit = float(oracle["logit"])
            _close(attnlrp.raw_scores, oracle["word"])
            _close(full.raw_scores, oracle["first"] / logit)
            raw = np.array(attnlrp.raw_scores)
            assert (raw < 0).any() and (raw > 0).any()  # signed: evidence against the class kept
            for record in (attnlrp, full):
                _close(record.scores, _minmax(record.raw_scores), rtol=1e-5)
            if classifier is not bert:
                absorbed, scale = float(oracle["attention"].sum()), max(float(np.abs(raw).sum()), abs(logit))
                assert abs(raw.sum() + absorbed - logit) <= 1e-4 * scale, (raw.sum(), absorbed, logit)
                first = float(np.sum(full.raw_scores)) * logit
                assert abs(first + absorbed - logit) <= 1e-4 * scale, (first, absorbed, logit)
