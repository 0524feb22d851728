"""Plain-loop oracles shared by the method tests (test files never import each other).

- ``explicit_relevance``: an explicit relevance propagation, written layer by layer in float64
  from the LRP rules' formulas on a BERT, no gradient, no hook (test_lrp, test_contrast_lrp).
- ``contrast_map_by_loop``, ``drops_by_loop`` and ``refined_by_loop``: Contrast-CAT's maps and deletion test, one
  position, unit and shortened input at a time (test_method_exact, test_contrast_lrp); the test's
  log-odds drop from the logits (``log_odds``), not from the probabilities the pipeline uses.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from ..helpers import forward, minmax, probability

TEXTS = [
    "the film was great and the music was lovely too",
    "a boring night in the old house with the dog",
    "we saw the city at night and it was a long road home",
]


def contrast_map_by_loop(model, ids, target, reference_ids):
    layers = model.config.num_hidden_layers
    out = forward(model, ids)
    hidden = out.hidden_states[:layers]
    grads = torch.autograd.grad(out.logits[0, target], hidden)
    with torch.no_grad():
        reference = forward(model, reference_ids).hidden_states[:layers]
    length = len(ids)
    scores = [0.0] * length
    for layer in range(layers):
        A = hidden[layer][0].tolist()
        G = grads[layer][0].tolist()
        R = reference[layer][0].tolist()
        attention = out.attentions[layer][0].tolist()  # [H][query][key]
        heads = len(attention)
        for i in range(length):
            alpha = sum(attention[h][q][i] for h in range(heads) for q in range(length)) / (heads * length)
            total = 0.0
            for j in range(len(A[i])):
                r = R[i][j] if i < len(R) else 0.0
                total += G[i][j] * (A[i][j] - r)
            scores[i] += alpha * total
    return minmax(scores)


def log_odds(model, ids, target):
    """log p_c - log(1 - p_c), from the logits: z_c - logsumexp of the other classes' z."""
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([ids])).logits[0].double()
    others = torch.cat([logits[:target], logits[target + 1 :]])
    return (logits[target] - torch.logsumexp(others, 0)).item()


def drops_by_loop(model, ids, special, target, maps, steps=None, measure="probability"):
    """S of each map: the mean drop over the grid's distinct counts as its top tokens are deleted,
    one shortened input at a time. ``steps``: only those of the (deduplicated) grid's counts,
    1-based; the first if none fits. ``measure``: the drop of the target's probability or log-odds."""
    value = probability if measure == "probability" else log_odds
    base = value(model, ids, target)
    counts = []
    for s in range(1, 10):
        count = round(s / 9 * len(ids))
        if count not in counts:
            counts.append(count)
    if steps is not None:
        counts = [counts[s - 1] for s in steps if s <= len(counts)] or counts[:1]
    drops = []
    for scores in maps:
        order = sorted((i for i in range(len(ids)) if not special[i]), key=lambda i: (-scores[i], i))
        step_drops = []
        for count in counts:
            removed = set(order[:count])
            kept = [t for i, t in enumerate(ids) if i not in removed]
            step_drops.append(base - value(model, kept, target))
        drops.append(sum(step_drops) / len(step_drops))
    return drops


def refined_by_loop(model, ids, special, target, maps, steps=None, measure="probability"):
    """The paper's refinement of ``maps`` (``drops_by_loop``'s S; keep S >= mean + std, average)."""
    drops = drops_by_loop(model, ids, special, target, maps, steps, measure)
    mean = sum(drops) / len(drops)
    std = (sum((d - mean) ** 2 for d in drops) / len(drops)) ** 0.5
    kept_maps = [m for m, d in zip(maps, drops) if d >= mean + std] or maps
    averaged = [sum(column) / len(kept_maps) for column in zip(*kept_maps)]
    return minmax(averaged), len(kept_maps)


def _linear(module):
    return module.weight.detach().double(), module.bias.detach().double()


def _layer_norm(module, x):
    """Forward, and the linear map it is with its standard deviation held: y = x M^T + beta."""
    n = x.shape[-1]
    sigma = torch.sqrt(x.var(dim=-1, unbiased=False, keepdim=True) + module.eps)  # [T, 1]
    weight, bias = module.weight.detach().double(), module.bias.detach().double()
    y = (x - x.mean(dim=-1, keepdim=True)) / sigma * weight + bias
    centring = torch.eye(n, dtype=torch.float64) - 1.0 / n
    maps = [torch.diag(weight / sigma[t, 0]) @ centring for t in range(x.shape[0])]  # one [n, n] per token
    return y, maps


def _ratio(relevance, z):
    """R / z, with 0 where z = 0 (a zero output carries no relevance to share)."""
    return torch.where(z == 0, torch.zeros_like(relevance), relevance / torch.where(z == 0, torch.ones_like(z), z))


def _through_linear_map(x, maps, y, relevance):
    """LRP-0 through y_t = M_t x_t + beta: R(x_ti) = sum_j x_ti M_t[j, i] R(y_tj) / y_tj."""
    return torch.stack([x[t] * (_ratio(relevance[t], y[t]) @ maps[t]) for t in range(x.shape[0])])


def _through_linear(x, weight, z, relevance):
    """LRP-0 through z = x W^T + b: R(x_i) = sum_j x_i W_ji R(z_j) / z_j (the bias keeps its share)."""
    return x * (_ratio(relevance, z) @ weight)


def _split_sum(parts, total, relevance):
    """Relevance of total = sum(parts), shared in proportion to each part."""
    return [part * _ratio(relevance, total) for part in parts]


def explicit_relevance(model, ids: list[int], target: int) -> dict:
    """Word relevance, first-layer-input relevance and per-layer attention relevance, by hand."""
    bert = model.bert
    ids_tensor = torch.tensor(ids)
    T = len(ids)
    embeddings = bert.embeddings
    word = embeddings.word_embeddings.weight.detach().double()[ids_tensor]
    position = embeddings.position_embeddings.weight.detach().double()[:T]
    token_type = embeddings.token_type_embeddings.weight.detach().double()[torch.zeros(T, dtype=torch.long)]
    summed = word + position + token_type
    x, embedding_maps = _layer_norm(embeddings.LayerNorm, summed)
    first = x

    caches = []
    for layer in bert.encoder.layer:
        attention = layer.attention
        H = attention.self.num_attention_heads
        d = x.shape[1] // H
        heads = lambda m: m.view(T, H, d).transpose(0, 1)  # noqa: E731  [H, T, d]
        (wq, bq), (wk, bk), (wv, bv) = (_linear(attention.self.query), _linear(attention.self.key), _linear(attention.self.value))
        q, k, v = x @ wq.T + bq, x @ wk.T + bk, x @ wv.T + bv
        qh, kh, vh = heads(q), heads(k), heads(v)
        scale = d**-0.5
        scores = qh @ kh.transpose(1, 2) * scale
        probs = torch.softmax(scores, dim=-1)
        context_heads = probs @ vh  # [H, T, d]
        context = context_heads.transpose(0, 1).reshape(T, H * d)
        wo, bo = _linear(attention.output.dense)
        o = context @ wo.T + bo
        r1 = o + x
        h1, maps1 = _layer_norm(attention.output.LayerNorm, r1)
        w1, b1 = _linear(layer.intermediate.dense)
        u = h1 @ w1.T + b1
        a = F.gelu(u)
        w2, b2 = _linear(layer.output.dense)
        f = a @ w2.T + b2
        r2 = f + h1
        h2, maps2 = _layer_norm(layer.output.LayerNorm, r2)
        caches.append(locals().copy())
        x = h2

    wp, bp = _linear(bert.pooler.dense)
    pooled_in = x[0] @ wp.T + bp
    pooled = torch.tanh(pooled_in)
    wc, bc = _linear(model.classifier)
    logits = pooled @ wc.T + bc

    relevance_logits = torch.zeros_like(logits)
    relevance_logits[target] = logits[target]
    relevance_pooled = _through_linear(pooled, wc, logits, relevance_logits)
    relevance_x = torch.zeros_like(x)
    relevance_x[0] = _through_linear(x[0], wp, pooled_in, relevance_pooled)  # tanh: identity rule
    attention_relevance, layer_inputs = [], []
    for c in reversed(caches):
        relevance_r2 = _through_linear_map(c["r2"], c["maps2"], c["h2"], relevance_x)
        relevance_f, relevance_h1 = _split_sum([c["f"], c["h1"]], c["r2"], relevance_r2)
        relevance_a = _through_linear(c["a"], c["w2"], c["f"], relevance_f)
        relevance_h1 = relevance_h1 + _through_linear(c["h1"], c["w1"], c["u"], relevance_a)  # gelu: identity
        relevance_r1 = _through_linear_map(c["r1"], c["maps1"], c["h1"], relevance_h1)
        relevance_o, relevance_in = _split_sum([c["o"], c["x"]], c["r1"], relevance_r1)
        relevance_context = _through_linear(c["context"], c["wo"], c["o"], relevance_o)
        H, T_, d = c["context_heads"].shape
        rc = relevance_context.view(T_, H, d).transpose(0, 1)  # [H, T, d]
        probs, vh, ctx = c["probs"], c["vh"], c["context_heads"]
        # context[h,t,j] = sum_s probs[h,t,s] vh[h,s,j]: each term's share, half to each factor.
        terms = probs[:, :, :, None] * vh[:, None, :, :]  # [H, t, s, j]
        shares = terms * _ratio(rc, ctx)[:, :, None, :]
        relevance_probs = 0.5 * shares.sum(dim=3)
        relevance_v = 0.5 * shares.sum(dim=1)
        attention_relevance.insert(0, relevance_probs)
        # AttnLRP's softmax rule, then scores[h,t,s] = scale sum_j q[h,t,j] k[h,s,j], half to each factor.
        scores = c["scores"]
        relevance_scores = scores * (relevance_probs - probs * relevance_probs.sum(dim=-1, keepdim=True))
        qk_terms = c["scale"] * c["qh"][:, :, None, :] * c["kh"][:, None, :, :]  # [H, t, s, j]
        qk_shares = qk_terms * _ratio(relevance_scores, scores)[:, :, :, None]
        relevance_q = 0.5 * qk_shares.sum(dim=2)
        relevance_k = 0.5 * qk_shares.sum(dim=1)
        merge = lambda m: m.transpose(0, 1).reshape(T_, H * d)  # noqa: E731
        relevance_in = relevance_in + sum(
            _through_linear(c["x"], c[w], c[z], merge(r))
            for w, z, r in (("wq", "q", relevance_q), ("wk", "k", relevance_k), ("wv", "v", relevance_v))
        )
        relevance_x = relevance_in
        layer_inputs.insert(0, (c["x"], relevance_in))
    relevance_first = relevance_x
    relevance_summed = _through_linear_map(summed, embedding_maps, first, relevance_first)
    relevance_word, _, _ = _split_sum([word, position, token_type], summed, relevance_summed)
    return {
        "word": relevance_word.sum(-1),
        "first": (relevance_first).sum(-1),
        "attention": torch.stack(attention_relevance),  # [L, H, T, T]
        "logit": logits[target],
        "layers": layer_inputs,  # per layer, (its input A^l, the relevance of each of its entries): [T, n] each
    }
