"""Contrast-CAT's ablations (the paper's Table 3, Figure 5, Appendix) against independent loops.

The oracle generalises the loop of test_method_exact: activations from
``output_hidden_states``, attention from ``output_attentions``, one layer,
position and hidden unit at a time, with the ablation switched in plain code.
Reference pools are checked by hand on the stub classifier of test_library.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from contrastcat.attribution.pipeline import ExplainSettings, attribute, explain
from contrastcat.errors import BadInput
from contrastcat.library import BuildSettings, RefLibrary, SelectionSettings, build_library
from contrastcat.records.data import LabelledData
from contrastcat.library.names import parse_pools
from contrastcat.methods import ContrastCAT, ContrastCATPlus, build_method, input_seed
from contrastcat.models.tokens import tokenize
from contrastcat.records.inputs import InputRow

from ..helpers import LABELS, build_toy_library, forward, minmax, probability, stub_classifier, stub_texts

TEXTS = [
    "the film was great and the music was lovely too",
    "a boring night in the old house with the dog",
]


@pytest.fixture(scope="module")
def pooled_library(toy_dir, toy_classifier, toy_examples):
    return build_toy_library(toy_classifier, toy_examples, toy_dir / "refs-pools.h5", pools=("same", "random"), seed=7)


def map_by_loop(model, ids, target, reference_ids, attention=True, last=None, unscaled=False):
    """One contrastive map; ``attention`` False drops alpha-hat, ``last`` keeps the last N layers;
    ``unscaled`` returns it before min-max scaling."""
    layers = model.config.num_hidden_layers
    out = forward(model, ids)
    hidden = out.hidden_states[:layers]
    grads = torch.autograd.grad(out.logits[0, target], hidden)
    with torch.no_grad():
        reference = forward(model, reference_ids).hidden_states[:layers] if reference_ids else None
    length = len(ids)
    scores = [0.0] * length
    for layer in range(layers):
        if last is not None and layer < layers - last:
            continue
        A, G = hidden[layer][0].detach().double(), grads[layer][0].double()
        R = reference[layer][0].double() if reference is not None else None
        heads = out.attentions[layer][0].tolist()
        for i in range(length):
            alpha = 1.0
            if attention:
                alpha = sum(h[q][i] for h in heads for q in range(length)) / (len(heads) * length)
            contrast = A[i] - R[i] if R is not None and i < len(R) else A[i]
            scores[i] += alpha * float(torch.dot(G[i], contrast))
    return scores if unscaled else minmax(scores)


def unrefined(classifier, library, text, **options):
    (tokens,) = tokenize(classifier.tokenizer, [text], classifier.max_length)
    method = ContrastCAT(refine=False, **options)
    (refined,), _, (target,) = attribute(classifier, [tokens], [None], method, library, ExplainSettings())
    return list(tokens.ids), target, refined.scores


def average_of(maps):
    return minmax([sum(column) / len(maps) for column in zip(*maps)])


@pytest.mark.parametrize("text", TEXTS)
def test_refs_used_zero_is_attcat(toy_classifier, text):
    rows = [InputRow(line=1, id=0, text=text)]
    (zero,) = explain(toy_classifier, rows, build_method("contrastcat", refs_used=0))
    (attcat,) = explain(toy_classifier, rows, build_method("attcat"))
    assert zero.scores == attcat.scores
    assert zero.refs_kept is None and zero.library is None


@pytest.mark.parametrize("text", TEXTS)
def test_no_attention_and_last_layers_match_loop(toy_classifier, toy_library, text):
    model = toy_classifier.model
    for options, loop in (
        ({"attention": False}, {"attention": False}),
        ({"layers": 1}, {"last": 1}),
        ({"layers": "1", "attention": False}, {"last": 1, "attention": False}),
    ):
        ids, target, scores = unrefined(toy_classifier, toy_library, text, refs_used=3, **options)
        references = toy_library.entries(target)[:3]
        expected = average_of([map_by_loop(model, ids, target, list(r.token_ids), **loop) for r in references])
        assert scores.tolist() == pytest.approx(expected, abs=1e-5), options


@pytest.mark.parametrize("text", TEXTS)
def test_same_and_random_references_match_loop(toy_classifier, pooled_library, text):
    model = toy_classifier.model
    ids, target, same = unrefined(toy_classifier, pooled_library, text, refs_used=3, reference_select="same")
    references = pooled_library.entries(target, "same")[:3]
    assert all(r.label == target for r in references)
    expected = average_of([map_by_loop(model, ids, target, list(r.token_ids)) for r in references])
    assert same.tolist() == pytest.approx(expected, abs=1e-5)

    ids, target, drawn = unrefined(toy_classifier, pooled_library, text, refs_used=3, reference_select="random", seed=4)
    pool = pooled_library.entries(target, "random")
    rows = np.random.default_rng(input_seed(4, ids)).permutation(len(pool))[:3]
    expected = average_of([map_by_loop(model, ids, target, list(pool[r].token_ids)) for r in rows])
    assert drawn.tolist() == pytest.approx(expected, abs=1e-5)
    _, _, other_seed = unrefined(toy_classifier, pooled_library, text, refs_used=3, reference_select="random", seed=5)
    assert not np.allclose(drawn, other_seed)


def test_pools_selected_by_hand(tmp_path):
    classifier = stub_classifier()
    path = tmp_path / "pools.h5"
    options = BuildSettings(selection=SelectionSettings(k=2, keep=3), batch_size=4, pools=("same", "random"), seed=3)
    build_library(classifier, LabelledData(stub_texts(), LABELS, "stub"), path, options)
    library = RefLibrary(path)
    assert library.info.pools == ("same", "random")
    # Rows of the class itself, classified correctly, long enough, most confident first (see test_library.PROBS).
    assert [e.source_row for e in library.entries(0, "same")] == [8, 0, 1]
    assert [e.source_row for e in library.entries(1, "same")] == [3, 5]
    assert [e.source_row for e in library.entries(2, "same")] == [6, 7]
    drawn = [e.source_row for e in library.entries(0, "random")]
    assert len(drawn) == len(set(drawn)) == 3 and 4 not in drawn  # r4 is too short
    assert [e.source_row for e in library.entries(2, "random")] == drawn  # one pool for every class
    again = tmp_path / "again.h5"
    build_library(classifier, LabelledData(stub_texts(), LABELS, "stub"), again, options)
    assert [e.source_row for e in RefLibrary(again).entries(0, "random")] == drawn
    stacked = library.references(1, 2, torch.device("cpu"), pool="same")
    assert stacked.shape[0] == 2


def test_random_pool_is_stored_by_default_and_plus_needs_it(tmp_path):
    """contrastcat-plus reads the random pool, so a library has it unless asked not to."""
    classifier = stub_classifier()
    selection = SelectionSettings(k=2, keep=3)
    build_library(classifier, LabelledData(stub_texts(), LABELS, "stub"), tmp_path / "d.h5", BuildSettings(selection=selection))
    assert RefLibrary(tmp_path / "d.h5").info.pools == ("random",)
    bare = tmp_path / "bare.h5"
    build_library(classifier, LabelledData(stub_texts(), LABELS, "stub"), bare, BuildSettings(selection=selection, pools=()))
    rows = [InputRow(line=1, id=0, text="r1 w w w w")]
    with pytest.raises(BadInput, match="no 'random' reference pool.*rebuild it with the reference pools random"):
        list(explain(classifier, rows, ContrastCATPlus(candidates=2), RefLibrary(bare)))
    with pytest.raises(BadInput, match="`candidates` 8 reads 4 references from the 'contrast' pool for class"):
        list(explain(classifier, rows, ContrastCATPlus(candidates=8), RefLibrary(tmp_path / "d.h5")))


def test_library_without_pools_refuses_clearly(toy_library):
    with pytest.raises(BadInput, match="rebuild it with the reference pools same"):
        toy_library.require_pool("same")


@pytest.mark.parametrize(
    "options, message",
    [
        ({"refs_used": -1}, "`refs_used`"),
        ({"reference_select": "other"}, "`reference_select`"),
        ({"layers": "0"}, "`layers`"),
        ({"layers": "some"}, "`layers`"),
        ({"rho": "median"}, "`rho`"),
    ],
)
def test_bad_ablation_options(options, message):
    with pytest.raises(BadInput, match=message):
        ContrastCAT(**options)


def test_more_layers_than_the_model_has(toy_classifier, toy_library):
    (tokens,) = tokenize(toy_classifier.tokenizer, [TEXTS[0]], toy_classifier.max_length)
    with pytest.raises(BadInput, match="layers"):
        attribute(toy_classifier, [tokens], [None], ContrastCAT(layers=9), toy_library)


@pytest.mark.parametrize("text", TEXTS)
def test_contrast_plus_random_references_match_loop(toy_classifier, pooled_library, text):
    """Beyond the paper: K - K//2 contrasting references, then K//2 random rows."""
    model = toy_classifier.model
    ids, target, mixed = unrefined(
        toy_classifier, pooled_library, text, refs_used=5, reference_select="contrast+random", seed=4
    )
    contrast = pooled_library.entries(target)[:3]
    pool = pooled_library.entries(target, "random")
    rows = np.random.default_rng(input_seed(4, ids)).permutation(len(pool))[:2]
    references = [list(r.token_ids) for r in contrast] + [list(pool[r].token_ids) for r in rows]
    expected = average_of([map_by_loop(model, ids, target, reference) for reference in references])
    assert mixed.tolist() == pytest.approx(expected, abs=1e-5)


def drops_by_loop(model, ids, special, target, maps, lerf):
    """The deletion test by hand: mean MoRF drop (minus the mean LeRF drop when ``lerf``)."""
    base = probability(model, ids, target)
    counts = list(dict.fromkeys(round(s / 9 * len(ids)) for s in range(1, 10)))
    drops = []
    for scores in maps:
        total = 0.0
        for sign, direction in ((1, -1), (-1, 1)) if lerf else ((1, -1),):
            order = sorted((i for i in range(len(ids)) if not special[i]), key=lambda i: (direction * scores[i], i))
            step = []
            for count in counts:
                removed = set(order[:count])
                step.append(base - probability(model, [t for i, t in enumerate(ids) if i not in removed], target))
            total += sign * sum(step) / len(step)
        drops.append(total)
    return drops


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize(
    "options",
    [
        {"top_maps": 2, "refine_score": "morf"},
        {"top_maps": 1, "refine_score": "morf-lerf"},
        {"top_maps": 3, "refine_score": "morf", "magnitude": True, "pool": "contrast"},
    ],
    ids=["top2-morf", "top1-morf-lerf", "top3-morf-magnitude-contrast"],
)
def test_contrastcat_plus_matches_loop(toy_classifier, pooled_library, text, options):
    """Beyond the paper: the paper's maps against a mixed pool, the best N by drop score."""
    model = toy_classifier.model
    (tokens,) = tokenize(toy_classifier.tokenizer, [text], toy_classifier.max_length)
    method = ContrastCATPlus(candidates=5, seed=3, **options)
    (refined,), _, (target,) = attribute(toy_classifier, [tokens], [None], method, pooled_library, ExplainSettings())
    ids, special = list(tokens.ids), list(tokens.special)
    contrast = pooled_library.entries(target)
    if options.get("pool") == "contrast":
        references = [list(r.token_ids) for r in contrast[:5]]
    else:
        pool = pooled_library.entries(target, "random")
        rows = np.random.default_rng(input_seed(3, ids)).permutation(len(pool))[:2]
        references = [list(r.token_ids) for r in contrast[:3]] + [list(pool[r].token_ids) for r in rows]
    raw = [map_by_loop(model, ids, target, reference, unscaled=True) for reference in references]
    maps = [minmax(r) for r in raw]
    if options.get("magnitude"):
        maps += [minmax([abs(v) for v in r]) for r in raw]
    drops = drops_by_loop(model, ids, special, target, maps, options["refine_score"] == "morf-lerf")
    # The N best, and any map tied with the N-th (|map| equals the map when it has no negative term).
    threshold = sorted(drops, reverse=True)[options["top_maps"] - 1]
    best = [k for k in range(len(maps)) if drops[k] >= threshold - 1e-9]
    expected = minmax([sum(maps[k][i] for k in best) / len(best) for i in range(len(ids))])
    assert refined.scores.tolist() == pytest.approx(expected, abs=1e-5)
    assert sorted(np.flatnonzero(refined.kept).tolist()) == sorted(best)
    assert refined.drop_scores.tolist() == pytest.approx(drops, abs=1e-6)


@pytest.mark.parametrize(
    "text, expected",
    [("random", ("random",)), ("none", ()), (" same , random ", ("same", "random")), ("same,same", ("same",))],
)
def test_pools_spelling(text, expected):
    assert parse_pools(text) == expected


@pytest.mark.parametrize("text, message", [("", "or none for neither"), (",", "or none"),
                                           ("random,none", "none stands alone"), ("bogus", "unknown pool 'bogus'")])
def test_bad_pools_spelling(text, message):
    with pytest.raises(BadInput, match=message):
        parse_pools(text)
