"""The baseline attribution methods against straightforward, independent loops (docs/spec.md §1, §6).

For every baseline (RawAtt, Rollout, Att-grads, Att×Att-grads, Grad-SAM,
generic attention explainability, Input×Gradient, the gradient's norm, occlusion, integrated
gradients, TIS)
the library's final map from ``contrastcat.attribution.pipeline.attribute`` is compared,
to 1e-5 after min–max scaling, with an oracle written here for one input at
a time, from the written definitions, with the HuggingFace model alone.

Why the oracles are independent of the library's code paths:

- Nothing from ``contrastcat.capture.core`` or the methods' internals is used; only
  ``tokenize``, ``attribute`` and ``build_method`` (plus, for TIS, the two
  public helpers ``kmeans`` and ``input_seed``, which are tested on their own
  here: k-means on synthetic blobs).
- Gradients with respect to the attention probabilities are not taken from
  ``outputs.attentions`` (the library's route). A probe attention
  function registered with transformers' ``AttentionInterface`` recomputes the
  softmax itself and feeds ``probs + delta`` to the value product, with
  ``delta`` a zero tensor; ``d z_c / d delta`` is ``d z_c / d A``. The probe is
  checked against the eager attention (same probabilities, same logits) and
  against a central finite difference in float64.
- Maps are assembled by plain Python loops over layers, heads, queries and
  keys (lists, not batched tensor algebra), and TIS runs every masked input
  through the model on its own.
- The integrated-gradients oracle checks its own completeness
  (sum of attributions = z_c(x) - z_c(baseline)).

A last test checks that a padded batch of three texts gives, for every method,
the one-at-a-time result.
"""

from __future__ import annotations

import contextlib
import copy

import numpy as np
import pytest
import torch
from transformers import AttentionInterface, AttentionMaskInterface
from transformers.masking_utils import eager_mask

from contrastcat.attribution.pipeline import attribute
from contrastcat.methods import build_method
from contrastcat.methods.base import input_seed
from contrastcat.methods.tis import kmeans
from contrastcat.models import wrap_classifier
from contrastcat.models.tokens import tokenize

TEXTS = [
    "the film was great",
    "a boring night in the old house with the dog and a friend",
    "this movie was about a family and the old car on a long road in the city and the music was lovely and the end was quite good",
]
TEXT_IDS = ["short", "medium", "long"]
TOL = 1e-5
CLASSIFIERS = ["random_bert", "toy_classifier"]
TARGETS = ["pred", "other"]


@pytest.fixture(params=CLASSIFIERS)
def classifier(request):
    return request.getfixturevalue(request.param)


@pytest.fixture(scope="module")
def pad_bert(random_bert):
    """``random_bert`` with a nonzero [PAD] word embedding.

    BERT initialises (and training keeps) the [PAD] row at zero, so in the
    other two models the "pad" and "zero" IG baselines coincide.
    """
    model = copy.deepcopy(random_bert.model)
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        weight = model.get_input_embeddings().weight
        weight[random_bert.tokenizer.pad_token_id] = 0.1 * torch.randn(weight.shape[1], generator=generator)
    return wrap_classifier(model, random_bert.tokenizer, name="random-bert-pad")


# ---------------------------------------------------------------- small helpers


def tokens_of(classifier, text):
    (tokens,) = tokenize(classifier.tokenizer, [text], classifier.max_length)
    return tokens


def ones(length):
    return torch.ones((1, length), dtype=torch.long)


def logits_of(model, ids):
    with torch.no_grad():
        return model(input_ids=torch.tensor([list(ids)]), attention_mask=ones(len(ids))).logits[0].double()


def probability(model, ids, target):
    return torch.softmax(logits_of(model, ids), -1)[target].item()


def targets_for(model, ids, kind):
    """(what the library is asked for, the class index the oracle uses)."""
    predicted = int(logits_of(model, ids).argmax())
    if kind == "pred":
        return None, predicted
    other = (predicted + 1) % int(model.config.num_labels)
    return other, other


def minmax(values):
    low, high = min(values), max(values)
    if high == low:
        return [0.0] * len(values)
    return [(v - low) / (high - low) for v in values]


def library_map(classifier, tokens, target, name, **options):
    (refined,), _, (resolved,) = attribute(classifier, [tokens], [target], build_method(name, **options))
    return np.asarray(refined.scores, dtype=np.float64), resolved


def assert_map(actual, expected):
    expected = np.asarray(expected, dtype=np.float64)
    assert actual.shape == expected.shape
    assert np.abs(actual - expected).max() <= TOL, f"max |diff| = {np.abs(actual - expected).max():.3g}"


def matmul(X, Y):
    return [[sum(X[i][k] * Y[k][j] for k in range(len(Y))) for j in range(len(Y[0]))] for i in range(len(X))]


def head_mean(tensor):
    """[H][T][T] nested lists -> [T][T], mean over heads."""
    heads, length = len(tensor), len(tensor[0])
    return [
        [sum(tensor[h][q][k] for h in range(heads)) / heads for k in range(length)] for q in range(length)
    ]


# ------------------------------------------- attention probabilities and d z_c / d A

PROBE = "contrastcat-test-probe"
_ACTIVE_PROBES: list[_Probe] = []


class _Probe:
    """Per layer (in call order): the probabilities and the zero ``delta`` added to them."""

    def __init__(self, shift=None):
        self.probs: list[torch.Tensor] = []
        self.deltas: list[torch.Tensor] = []
        # (layer, head, query, key, amount) or None: a nonzero delta, for finite differences
        self.shift = shift


def _probe_attention(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
    probe = _ACTIVE_PROBES[-1]
    if scaling is None:
        scaling = query.size(-1) ** -0.5
    scores = torch.matmul(query, key.transpose(2, 3)) * scaling
    if attention_mask is not None:
        if attention_mask.dtype == torch.bool:
            scores = scores.masked_fill(~attention_mask, float("-inf"))
        else:
            scores = scores + attention_mask
    probs = torch.softmax(scores, dim=-1)
    delta = torch.zeros_like(probs)
    layer = len(probe.probs)
    if probe.shift is not None and probe.shift[0] == layer:
        _, head, q, k, amount = probe.shift
        delta[0, head, q, k] = amount
    delta.requires_grad_(True)
    probe.probs.append(probs.detach())
    probe.deltas.append(delta)
    output = torch.matmul(probs + delta, value).transpose(1, 2).contiguous()
    return output, probs


AttentionInterface.register(PROBE, _probe_attention)
AttentionMaskInterface.register(PROBE, eager_mask)


@contextlib.contextmanager
def probed(model, shift=None):
    probe = _Probe(shift)
    _ACTIVE_PROBES.append(probe)
    before = model.config._attn_implementation
    model.config._attn_implementation = PROBE
    try:
        yield probe
    finally:
        model.config._attn_implementation = before
        _ACTIVE_PROBES.pop()


def probed_logits(model, ids, shift=None):
    with probed(model, shift) as probe:
        logits = model(input_ids=torch.tensor([list(ids)]), attention_mask=ones(len(ids))).logits[0]
    return logits, probe


def attention_and_gradients(model, ids, target):
    """Per layer, A^l and dA^l = d z_c / d A^l as nested lists [H][query][key]."""
    logits, probe = probed_logits(model, ids)
    grads = torch.autograd.grad(logits[target], probe.deltas)
    attention = [p[0].double().tolist() for p in probe.probs]
    return attention, [g[0].double().tolist() for g in grads]


def eager_attentions(model, ids):
    with torch.no_grad():
        out = model(
            input_ids=torch.tensor([list(ids)]), attention_mask=ones(len(ids)), output_attentions=True
        )
    return [a[0].double().tolist() for a in out.attentions]


# ------------------------------------------------------------------------ oracles


def rawatt_by_loop(model, ids):
    last = eager_attentions(model, ids)[-1]
    heads, length = len(last), len(ids)
    scores = [sum(last[h][0][i] for h in range(heads)) / heads for i in range(length)]
    scores[0] = 0.0
    return minmax(scores)


def rollout_by_loop(model, ids):
    length = len(ids)
    rollout = None
    for layer in eager_attentions(model, ids):
        mean = head_mean(layer)
        augmented = [[mean[q][k] + (1.0 if q == k else 0.0) for k in range(length)] for q in range(length)]
        normalised = [[v / sum(row) for v in row] for row in augmented]
        for row in normalised:
            assert sum(row) == pytest.approx(1.0, abs=1e-12)
        rollout = normalised if rollout is None else matmul(normalised, rollout)
    scores = list(rollout[0])
    scores[0] = 0.0
    return minmax(scores)


def gradient_attention_by_loop(name, attention, grads):
    """att-grads, att-x-att-grads, grad-sam, generic-attention from A^l, dA^l (nested lists)."""
    layers, heads, length = len(attention), len(attention[0]), len(attention[0][0])
    if name == "generic-attention":
        R = [[1.0 if q == k else 0.0 for k in range(length)] for q in range(length)]
        for A, G in zip(attention, grads):
            mean = [
                [sum(max(G[h][q][k] * A[h][q][k], 0.0) for h in range(heads)) / heads for k in range(length)]
                for q in range(length)
            ]
            product = matmul(mean, R)
            R = [[R[q][k] + product[q][k] for k in range(length)] for q in range(length)]
        scores = list(R[0])
        scores[0] = 0.0
        return minmax(scores)

    def term(a, g):
        if name == "att-grads":
            return g
        if name == "att-x-att-grads":
            return g * a
        return max(g, 0.0) * a  # grad-sam

    scores = [0.0] * length
    for A, G in zip(attention, grads):
        for i in range(length):
            total = sum(term(A[h][q][i], G[h][q][i]) for h in range(heads) for q in range(length))
            scores[i] += total / (heads * length)
    if name == "grad-sam":
        scores = [s / layers for s in scores]
    return minmax(scores)


def word_embeddings(model, ids):
    with torch.no_grad():
        return model.get_input_embeddings()(torch.tensor([list(ids)]))[0]


def logit_and_gradient(model, embeds, target):
    point = embeds.detach().clone().requires_grad_(True)
    logit = model(inputs_embeds=point[None], attention_mask=ones(len(embeds))).logits[0, target]
    (grad,) = torch.autograd.grad(logit, point)
    return logit.item(), grad.double()


def input_x_gradient_by_loop(model, ids, target):
    embeds = word_embeddings(model, ids)
    _, grad = logit_and_gradient(model, embeds, target)
    E, G = embeds.double().tolist(), grad.tolist()
    return minmax([sum(E[i][d] * G[i][d] for d in range(len(E[i]))) for i in range(len(ids))])


def gradient_norm_by_loop(model, ids, target):
    _, grad = logit_and_gradient(model, word_embeddings(model, ids), target)
    return minmax([sum(g * g for g in row) ** 0.5 for row in grad.tolist()])


def occlusion_by_loop(model, tokens, target, mode, replacement):
    """Unscaled: each non-special token taken out alone, the model run on that copy by itself."""
    ids, special = list(tokens.ids), list(tokens.special)
    whole = probability(model, ids, target)
    drops = []
    for i in range(len(ids)):
        if special[i]:
            drops.append(0.0)
            continue
        copy = ids[:i] + ids[i + 1:] if mode == "delete" else ids[:i] + [replacement] + ids[i + 1:]
        drops.append(whole - probability(model, copy, target))
    return drops


def ig_raw_by_loop(model, tokens, target, steps, baseline, pad_id):
    """Unscaled IG sums per token, and z_c(E) - z_c(E')."""
    ids, special = list(tokens.ids), list(tokens.special)
    embeds = word_embeddings(model, ids)
    if baseline == "zero":
        filler = torch.zeros_like(embeds[0])
    else:
        filler = word_embeddings(model, [pad_id])[0]
    base = torch.stack([embeds[i] if special[i] else filler for i in range(len(ids))])
    nodes, weights = np.polynomial.legendre.leggauss(steps)
    total = torch.zeros(embeds.shape, dtype=torch.float64)
    for x, w in zip(nodes, weights):
        alpha = (x + 1.0) / 2.0
        _, grad = logit_and_gradient(model, base + float(alpha) * (embeds - base), target)
        total += (w / 2.0) * grad
    diff = (embeds.double() - base.double()).tolist()
    T = total.tolist()
    raw = [sum(diff[i][d] * T[i][d] for d in range(len(diff[i]))) for i in range(len(ids))]
    gap = logit_and_gradient(model, embeds, target)[0] - logit_and_gradient(model, base, target)[0]
    return raw, gap


def tis_by_loop(model, tokens, target, clusters, seed):
    ids, special = list(tokens.ids), list(tokens.special)
    length = len(ids)
    with torch.no_grad():
        out = model(input_ids=torch.tensor([ids]), attention_mask=ones(length), output_hidden_states=True)
    layers = int(model.config.num_hidden_layers)
    positions = [i for i in range(length) if not special[i]]
    features = []  # [T_ns][L * n]: the activations entering layers 1..L, concatenated
    for t in positions:
        row = []
        for layer in range(layers):
            row.extend(out.hidden_states[layer][0, t].double().tolist())
        features.append(row)
    points = [[features[t][c] for t in range(len(positions))] for c in range(len(features[0]))]
    centroids, _ = kmeans(torch.tensor(points, dtype=torch.float64), clusters, input_seed(seed, ids))
    keep = max(1, int(0.5 * len(positions)))
    weighted, counts = [0.0] * length, [0] * length
    for centroid in centroids.tolist():
        order = sorted(range(len(positions)), key=lambda j: (-centroid[j], j))
        kept = {positions[j] for j in order[:keep]}
        p = probability(model, [ids[i] for i in range(length) if special[i] or i in kept], target)
        for i in kept:
            weighted[i] += p
            counts[i] += 1
    scores = [weighted[i] / counts[i] if counts[i] else 0.0 for i in range(length)]
    return minmax(scores)


# ---------------------------------------------------- checks of the oracles' own tools


def test_probe_reproduces_eager_attention(random_bert):
    model = random_bert.model
    ids = tokens_of(random_bert, TEXTS[1]).ids
    logits, probe = probed_logits(model, ids)
    with torch.no_grad():
        out = model(
            input_ids=torch.tensor([list(ids)]), attention_mask=ones(len(ids)), output_attentions=True
        )
    assert model.config._attn_implementation == "eager"
    assert torch.allclose(logits.detach(), out.logits[0], atol=1e-6)
    assert len(probe.probs) == len(out.attentions)
    for mine, theirs in zip(probe.probs, out.attentions):
        assert torch.allclose(mine, theirs, atol=1e-6)


def test_probe_gradient_matches_finite_difference(random_bert):
    model = copy.deepcopy(random_bert.model).double()
    ids = tokens_of(random_bert, TEXTS[0]).ids
    target = 1
    logits, probe = probed_logits(model, ids)
    grads = torch.autograd.grad(logits[target], probe.deltas)
    eps = 1e-5
    for layer, head, q, k in [(0, 1, 2, 3), (1, 3, 0, 5), (1, 0, 4, 0)]:
        up = probed_logits(model, ids, (layer, head, q, k, eps))[0][target].item()
        down = probed_logits(model, ids, (layer, head, q, k, -eps))[0][target].item()
        assert grads[layer][0, head, q, k].item() == pytest.approx(
            (up - down) / (2 * eps), rel=1e-6, abs=1e-9
        )


@pytest.mark.parametrize(
    "which,kind,baseline",
    [("toy_classifier", "pred", "zero"), ("toy_classifier", "other", "zero"), ("pad_bert", "other", "pad")],
)
def test_ig_oracle_is_complete(request, which, kind, baseline):
    """Sum of the raw IG attributions = z_c(E) - z_c(E'), with 50 Gauss–Legendre nodes."""
    classifier = request.getfixturevalue(which)
    tokens = tokens_of(classifier, TEXTS[2])
    _, target = targets_for(classifier.model, tokens.ids, kind)
    pad_id = classifier.tokenizer.pad_token_id
    raw, gap = ig_raw_by_loop(classifier.model, tokens, target, 50, baseline, pad_id)
    assert abs(gap) > (0.1 if which == "toy_classifier" else 1e-4)  # the untrained model's logits barely move
    assert sum(raw) == pytest.approx(gap, rel=0.03)


def _blobs():
    generator = torch.Generator().manual_seed(7)
    centres = torch.tensor(
        [[0.0, 0.0, 0.0, 0.0], [10.0, 0.0, 0.0, 5.0], [0.0, -10.0, 6.0, 0.0]], dtype=torch.float64
    )
    sizes = [15, 20, 25]
    points, labels = [], []
    for index, (centre, size) in enumerate(zip(centres, sizes)):
        points.append(centre + 0.3 * torch.randn(size, 4, generator=generator, dtype=torch.float64))
        labels += [index] * size
    points = torch.cat(points)
    order = torch.randperm(len(points), generator=generator)
    return points[order], torch.tensor(labels)[order], centres


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kmeans_recovers_separated_blobs(seed):
    points, labels, centres = _blobs()
    centroids, assignment = kmeans(points, 3, seed)
    assert centroids.shape == (3, 4) and centroids.dtype == torch.float64
    assert assignment.shape == (len(points),) and assignment.dtype == torch.long
    for blob in range(3):
        found = set(assignment[labels == blob].tolist())
        assert len(found) == 1, f"blob {blob} split over clusters {found}"
        (cluster,) = found
        assert (assignment == cluster).sum().item() == (labels == blob).sum().item()
        members = points[labels == blob]
        assert torch.allclose(centroids[cluster], members.mean(0), atol=1e-9)
        assert torch.allclose(centroids[cluster], centres[blob], atol=0.3)
    again = kmeans(points, 3, seed)
    assert torch.equal(again[0], centroids) and torch.equal(again[1], assignment)


# --------------------------------------------------------- library against oracle


@pytest.mark.parametrize("text", TEXTS, ids=TEXT_IDS)
@pytest.mark.parametrize("name", ["rawatt", "rollout"])
def test_attention_maps_match_loop(classifier, text, name):
    tokens = tokens_of(classifier, text)
    actual, _ = library_map(classifier, tokens, None, name)
    oracle = rawatt_by_loop if name == "rawatt" else rollout_by_loop
    assert_map(actual, oracle(classifier.model, list(tokens.ids)))


@pytest.mark.parametrize("text", TEXTS, ids=TEXT_IDS)
@pytest.mark.parametrize("kind", TARGETS)
def test_attention_gradient_maps_match_loop(classifier, text, kind):
    tokens = tokens_of(classifier, text)
    asked, target = targets_for(classifier.model, tokens.ids, kind)
    attention, grads = attention_and_gradients(classifier.model, tokens.ids, target)
    for name in ["att-grads", "att-x-att-grads", "grad-sam", "generic-attention"]:
        actual, resolved = library_map(classifier, tokens, asked, name)
        assert resolved == target
        assert_map(actual, gradient_attention_by_loop(name, attention, grads))


@pytest.mark.parametrize("text", TEXTS, ids=TEXT_IDS)
@pytest.mark.parametrize("kind", TARGETS)
@pytest.mark.parametrize("name", ["input-x-gradient", "gradient-norm"])
def test_embedding_gradient_maps_match_loop(classifier, text, kind, name):
    tokens = tokens_of(classifier, text)
    asked, target = targets_for(classifier.model, tokens.ids, kind)
    actual, resolved = library_map(classifier, tokens, asked, name)
    assert resolved == target
    oracle = input_x_gradient_by_loop if name == "input-x-gradient" else gradient_norm_by_loop
    assert_map(actual, oracle(classifier.model, tokens.ids, target))


@pytest.mark.parametrize("text", TEXTS, ids=TEXT_IDS)
@pytest.mark.parametrize("kind", TARGETS)
@pytest.mark.parametrize("mode", ["delete", "mask", "unk"])
def test_occlusion_matches_loop(classifier, text, kind, mode):
    """The drops themselves (signed, in probability) to 1e-6; the scaled map where they spread (an
    untrained model's drops are about 1e-4, and scaling them would magnify float32's rounding)."""
    tokens = tokens_of(classifier, text)
    asked, target = targets_for(classifier.model, tokens.ids, kind)
    tokenizer = classifier.tokenizer
    replacement = {"delete": None, "mask": tokenizer.mask_token_id, "unk": tokenizer.unk_token_id}[mode]
    (refined,), _, (resolved,) = attribute(classifier, [tokens], [asked], build_method("occlusion", occlude=mode))
    assert resolved == target
    expected = occlusion_by_loop(classifier.model, tokens, target, mode, replacement)
    assert np.abs(np.asarray(refined.raw) - expected).max() <= 1e-6
    assert [refined.raw[i] for i, flag in enumerate(tokens.special) if flag] == [0.0] * sum(tokens.special)
    if max(expected) - min(expected) > 1e-2:
        assert_map(np.asarray(refined.scores, dtype=np.float64), minmax(expected))


def test_occlusion_keeps_the_drops_of_a_confident_input(toy_classifier):
    """The toy model's head scaled 5 times, on a text with its keyword twice: p_c is 1 - 1e-9 or
    so and no single token's removal moves it by more than about 1e-8, which a float32 softmax
    rounds to 0 (the map a constant). Occlusion's softmax is in float64: the drops are the
    oracle's, to the digits float32 logits hold."""
    model = copy.deepcopy(toy_classifier.model)
    with torch.no_grad():
        model.classifier.weight.mul_(5)
        model.classifier.bias.mul_(5)
    confident = wrap_classifier(model, toy_classifier.tokenizer, name="toy-confident")
    tokens = tokens_of(confident, "the film was great and the music was great too")
    (refined,), _, (target,) = attribute(confident, [tokens], [None], build_method("occlusion"))
    expected = np.asarray(occlusion_by_loop(model, tokens, target, "delete", None))
    assert 1 - probability(model, list(tokens.ids), target) < 1e-6 and 0 < np.ptp(expected) < 1e-6
    assert np.allclose(refined.raw, expected, rtol=1e-2, atol=1e-13)
    assert np.ptp(refined.scores) == pytest.approx(1.0)  # a map, not a constant
    assert np.abs(np.asarray(refined.scores) - np.asarray(minmax(expected.tolist()))).max() < 1e-2


# In random_bert and toy_classifier the [PAD] embedding is zero: "pad" there is "zero" again.
IG_CASES = [("random_bert", "zero"), ("toy_classifier", "zero"), ("pad_bert", "zero"), ("pad_bert", "pad")]


@pytest.mark.parametrize("text", TEXTS, ids=TEXT_IDS)
@pytest.mark.parametrize("kind", TARGETS)
@pytest.mark.parametrize("which,baseline", IG_CASES)
def test_integrated_gradients_match_loop(request, which, baseline, text, kind):
    classifier = request.getfixturevalue(which)
    tokens = tokens_of(classifier, text)
    asked, target = targets_for(classifier.model, tokens.ids, kind)
    actual, resolved = library_map(
        classifier, tokens, asked, "integrated-gradients", ig_steps=16, ig_baseline=baseline
    )
    assert resolved == target
    raw, _ = ig_raw_by_loop(classifier.model, tokens, target, 16, baseline, classifier.tokenizer.pad_token_id)
    assert_map(actual, minmax(raw))


@pytest.mark.parametrize("text", TEXTS, ids=TEXT_IDS)
@pytest.mark.parametrize("kind", TARGETS)
def test_tis_matches_loop(classifier, text, kind):
    tokens = tokens_of(classifier, text)
    asked, target = targets_for(classifier.model, tokens.ids, kind)
    actual, resolved = library_map(classifier, tokens, asked, "tis", clusters=8, seed=0)
    assert resolved == target
    assert_map(actual, tis_by_loop(classifier.model, tokens, target, clusters=8, seed=0))


# ------------------------------------------------------ batched equals one at a time

ALL_METHODS = [
    ("rawatt", {}),
    ("rollout", {}),
    ("att-grads", {}),
    ("att-x-att-grads", {}),
    ("grad-sam", {}),
    ("generic-attention", {}),
    ("input-x-gradient", {}),
    ("gradient-norm", {}),
    ("occlusion", {"occlude": "delete"}),
    ("occlusion", {"occlude": "mask"}),
    ("integrated-gradients", {"ig_steps": 16, "ig_baseline": "zero"}),
    ("integrated-gradients", {"ig_steps": 16, "ig_baseline": "pad"}),
    ("tis", {"clusters": 8, "seed": 0}),
]


@pytest.mark.parametrize(
    "name,options",
    ALL_METHODS,
    ids=[" ".join([n, *o.get("ig_baseline", o.get("occlude", "")).split()]) for n, o in ALL_METHODS],
)
def test_batch_equals_one_at_a_time(toy_classifier, name, options):
    texts = tokenize(toy_classifier.tokenizer, TEXTS, toy_classifier.max_length)
    assert len({len(t) for t in texts}) == 3
    targets = [None, 1, None]
    method = build_method(name, **options)
    batched, _, batched_targets = attribute(toy_classifier, texts, targets, method)
    for b, text in enumerate(texts):
        (single,), _, (target,) = attribute(toy_classifier, [text], [targets[b]], method)
        assert target == batched_targets[b]
        assert len(batched[b].scores) == len(text)
        assert_map(
            np.asarray(batched[b].scores, dtype=np.float64), np.asarray(single.scores, dtype=np.float64)
        )


def test_occluding_by_a_token_the_tokenizer_lacks_names_the_option():
    import contrastcat
    from contrastcat.errors import BadInput
    from contrastcat.testing import toy

    tokenizer = toy.make_tokenizer()
    tokenizer.unk_token = None
    classifier = wrap_classifier(toy.make_model(seed=3, hidden=32, layers=2, heads=4), tokenizer, name="no-unk")
    with pytest.raises(BadInput, match=r"^occlusion: occlude unk: this model's tokenizer has no unknown token; "
                                       r"use delete, mask or pad$"):
        contrastcat.explain(classifier, ["the film was great"], method="occlusion", occlude="unk")
