"""Model families as data: one row per ``config.model_type``.

A row says where the transformer layers are (their *inputs* are the
activations A^l of docs/spec.md §1), which token the classification head reads, and
how positions and padding work. Everything else (attention probabilities,
word embeddings, the head itself) comes through the HuggingFace API, so a
new family is one row here and one test (``tests/models/test_families.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

ENCODER = "encoder"
DECODER = "decoder"

# Where input-gradient methods (input x gradient, integrated gradients) attribute.
WORD = "word"  # the word embeddings, before positions are added
# The embedding module's output, i.e. the first layer's input A^1. For families
# whose word embeddings enter a LayerNorm directly: LayerNorm is scale-invariant,
# so x . grad_x f = 0 at the word embeddings, and input x gradient would be zero
# up to rounding (and integrated gradients from a zero baseline too).
LAYER = "layer"

# How a family normalises (what AttnLRP's rule for a norm holds constant, capture.lrp_rules):
LAYER_NORM = "layer-norm"  # y = w (x − mean) / std + b: centred, then scaled by the standard deviation
RMS_NORM = "rms-norm"  # y = w x / rms(x): scaled by the root mean square, never centred
TORCH_LAYER_NORM = (("LayerNorm", LAYER_NORM),)  # torch.nn.LayerNorm, the norm of most encoders

FIRST = "first"  # the model's own head reads position 0 ([CLS], <s>)
LAST = "last"  # the head reads the last real token; pooled here (see models.forward)


@dataclass(frozen=True)
class Family:
    model_type: str
    layers: str  # dotted path from the base model to the ModuleList of layers
    kind: str = ENCODER
    pooling: str = FIRST
    head: str | None = None  # LAST pooling: the per-position classifier on the sequence model ("score")
    position_offset: int = 0  # positions of max_position_embeddings that can never hold a token
    # ALBERT: the listed modules are applied again and again (num_hidden_layers
    # applications in all); capture records every application, in call order.
    shared_layers: bool = False
    embedding_point: str = WORD
    # A config flag that, when true, moves the embedding point back to WORD
    # (DeBERTa-v2 adds absolute positions before its LayerNorm when position_biased_input).
    word_point_if: str | None = None
    # --mask-special zeroes special tokens in a 2-D key mask. DeBERTa builds a query x key
    # mask from it and a decoder's BOS sees only itself: some query rows then see no key,
    # their softmax spreads over the padding, and a batch changes the scores. Refused there.
    mask_special: bool = True
    # Its normalisation modules: (class name, LAYER_NORM or RMS_NORM) for every class of norm the
    # family's models hold (tests/models/test_families.py checks that none is missing).
    norms: tuple[tuple[str, str], ...] = TORCH_LAYER_NORM

    def attribution_point(self, config) -> str:
        if self.word_point_if and getattr(config, self.word_point_if, False):
            return WORD
        return self.embedding_point


def _decoder(model_type: str, layers: str, norm: str = "") -> Family:
    """A decoder classified by HuggingFace's ``score`` head on the last real token; ``norm``: the
    class of its RMS norms (none: torch's LayerNorm)."""
    norms = ((norm, RMS_NORM),) if norm else TORCH_LAYER_NORM
    return Family(model_type, layers, kind=DECODER, pooling=LAST, head="score", mask_special=False, norms=norms)


FAMILIES: dict[str, Family] = {
    row.model_type: row
    for row in (
        Family("bert", "encoder.layer"),
        Family("distilbert", "transformer.layer"),
        # RoBERTa counts positions from padding_idx + 1: two positions never hold a token.
        Family("roberta", "encoder.layer", position_offset=2),
        Family("xlm-roberta", "encoder.layer", position_offset=2),
        Family("albert", "encoder.albert_layer_groups", shared_layers=True),
        Family("electra", "encoder.layer"),
        Family(
            "deberta-v2", "encoder.layer", embedding_point=LAYER, word_point_if="position_biased_input",
            mask_special=False,
        ),
        Family("modernbert", "layers", embedding_point=LAYER),
        _decoder("gpt2", "h"),
        _decoder("llama", "layers", "LlamaRMSNorm"),
        _decoder("mistral", "layers", "MistralRMSNorm"),
        _decoder("qwen2", "layers", "Qwen2RMSNorm"),
    )
}

