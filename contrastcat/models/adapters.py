"""One loaded model's adapter: its family row and the modules that row points to.

A model type with a row in ``families.FAMILIES`` uses it. Any other model
type goes through a checked fallback: the one ModuleList in the base model
whose length is ``config.num_hidden_layers`` is taken as the layers (a
decoder is recognised by HuggingFace's ``score`` head), with a one-line
warning; when no single list fits, the model type is refused with one line.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from ..errors import BadInput
from .families import DECODER, FAMILIES, LAST, LAYER, LAYER_NORM, RMS_NORM, WORD, Family


def position_limit(config, model: nn.Module | None = None) -> int:
    """The most tokens (special ones included) the model's position embeddings take.

    A family without a row (CamemBERT, say) may count positions from its padding
    index as RoBERTa does: a position table with a ``padding_idx`` loses that many
    positions and one more."""
    positions = getattr(config, "max_position_embeddings", None) or getattr(config, "n_positions", None) or 512
    family = FAMILIES.get(getattr(config, "model_type", ""))
    if family is not None:
        return int(positions) - family.position_offset
    table = getattr(getattr(_base_model(model), "embeddings", None), "position_embeddings", None) if model else None
    padding = getattr(table, "padding_idx", None)
    return int(positions) - (int(padding) + 1 if padding is not None else 0)


@dataclass(frozen=True)
class Adapter:
    """How to reach the parts of one loaded model that capture and pooling need."""

    family: Family
    base: nn.Module  # the sequence model under the classification head
    layers: nn.ModuleList  # modules whose inputs are A^l (for ALBERT: applied repeatedly)
    num_layers: int  # L: activations captured per input
    head: nn.Module | None = None  # LAST pooling: per-position classifier applied to the pooled state
    warning: str | None = None  # set when the fallback chose the layers
    embedding_point: str = WORD  # where input-gradient methods attribute (see families.WORD / LAYER)

    @property
    def model_type(self) -> str:
        return self.family.model_type

    @property
    def decoder(self) -> bool:
        return self.family.kind == DECODER


def _attribute_path(root: nn.Module, dotted: str) -> nn.Module | None:
    node: object = root
    for part in dotted.split("."):
        node = getattr(node, part, None)
        if node is None:
            return None
    return node if isinstance(node, nn.Module) else None


def _base_model(model: nn.Module) -> nn.Module:
    prefix = getattr(model, "base_model_prefix", "")
    base = getattr(model, prefix, None) or model
    # A wrapper that passes attribute lookups on to what it holds (peft's PeftModel → LoraModel →
    # the classifier) can answer the prefix with its own attribute of that name: LoraModel.model
    # is the whole classifier where the prefix is "model" (Llama, Qwen2, Mistral). One step more.
    inner = getattr(base, prefix, None) if base is not model and prefix else None
    if isinstance(inner, nn.Module) and getattr(base, "base_model_prefix", None) == prefix:
        base = inner
    return base


def _refuse(model_type: str, why: str) -> BadInput:
    return BadInput(
        f"model type {model_type!r} is not supported: {why} "
        f"(supported: {', '.join(sorted(FAMILIES))})"
    )


def _fallback(model: nn.Module, base: nn.Module, model_type: str, expected: int | None) -> Family:
    found = [
        name for name, module in base.named_modules() if isinstance(module, nn.ModuleList) and len(module) == expected
    ]
    if len(found) != 1:
        raise _refuse(
            model_type,
            f"no single layer list of config.num_hidden_layers = {expected} modules in the model "
            f"({len(found)} found)",
        )
    layers = _attribute_path(base, found[0])
    calls = _probe(model, layers)
    if calls is None:
        raise _refuse(model_type, f"a test forward pass failed, so the layers at {found[0]!r} cannot be checked")
    if calls != expected:
        raise _refuse(
            model_type, f"the {expected} modules at {found[0]!r} ran {calls} times in a forward pass, not once each"
        )
    # Word embeddings that enter a LayerNorm directly (BLOOM) make input x gradient there zero:
    # attribute the first layer's input instead, as the ModernBERT row does.
    point = LAYER if _scale_invariant(model) else WORD
    if isinstance(getattr(model, "score", None), nn.Module):  # HF names its decoder classification heads score
        return Family(
            model_type, found[0], kind=DECODER, pooling=LAST, head="score", mask_special=False, embedding_point=point,
            norms=_guessed_norms(model),
        )
    return Family(model_type, found[0], embedding_point=point, norms=_guessed_norms(model))


def _guessed_norms(model: nn.Module) -> tuple[tuple[str, str], ...]:
    """A family without a row: its norms guessed from their class names, as HuggingFace names them
    (``…RMSNorm``, and T5's RMS norm ``T5LayerNorm``; any other ``…LayerNorm`` is centred)."""
    found = {}
    for module in model.modules():
        name = type(module).__name__
        if name.endswith(("RMSNorm", "T5LayerNorm")):
            found[name] = RMS_NORM
        elif isinstance(module, nn.LayerNorm) or name.endswith("LayerNorm"):
            found[name] = LAYER_NORM
    return tuple(sorted(found.items()))


def _scale_invariant(model: nn.Module) -> bool:
    """Whether the logits ignore the scale of the word embeddings (a LayerNorm right after them):
    then x . grad_x z is rounding next to |x| |grad_x z|, token by token."""
    vocabulary = int(getattr(model.config, "vocab_size", 0) or 2)
    ids = torch.tensor([[i % vocabulary for i in range(1, 9)]], device=next(model.parameters()).device)
    try:
        with torch.enable_grad():
            words = model.get_input_embeddings()(ids).detach().float().requires_grad_()
            logits = model(inputs_embeds=words.to(next(model.parameters()).dtype)).logits
            (gradient,) = torch.autograd.grad(logits[0].max(), words)
    except Exception:  # noqa: BLE001 - a model that takes no inputs_embeds keeps the word embeddings
        return False
    along = (words * gradient).sum(-1).abs().max()
    scale = (words.norm(dim=-1) * gradient.norm(dim=-1)).max()
    return bool(scale > 0 and along < 1e-3 * scale)


def _probe(model: nn.Module, layers: nn.Module) -> int | None:
    """How many times the guessed layers run in one forward pass of an eight-token input
    (a list of lists, or blocks never called, give another count than L)."""
    calls = [0]

    def count(_module, _args):
        calls[0] += 1

    handles = [layer.register_forward_pre_hook(count) for layer in layers]
    try:
        with torch.no_grad():
            vocabulary = int(getattr(model.config, "vocab_size", 0) or 2)
            ids = [[i % vocabulary for i in range(1, 9)]]
            model(input_ids=torch.tensor(ids, device=next(model.parameters()).device))
    except Exception:  # noqa: BLE001 - any failure means the guess cannot be trusted
        return None
    finally:
        for handle in handles:
            handle.remove()
    return calls[0]


def adapter_for(model: nn.Module) -> Adapter:
    config = model.config
    model_type = str(getattr(config, "model_type", "unknown"))
    base = _base_model(model)
    expected = getattr(config, "num_hidden_layers", None)
    family = FAMILIES.get(model_type)
    warning = None
    if family is None:
        family = _fallback(model, base, model_type, expected)
        warning = (
            f"model type {model_type!r} has no row in contrastcat's families: using the {expected} layers at "
            f"{family.layers!r} and {'the last real token' if family.pooling == LAST else 'the model head'} "
            "for pooling; check the results (see docs/models.md, Model families)"
        )
    layers = _attribute_path(base, family.layers)
    if not isinstance(layers, nn.ModuleList) or len(layers) == 0:
        raise _refuse(model_type, f"its layers are not at {family.layers!r}")
    if not family.shared_layers and len(layers) != expected:
        raise _refuse(model_type, f"{len(layers)} layers at {family.layers!r} but config.num_hidden_layers = {expected}")
    seen: dict[int, int] = {}
    for index, layer in enumerate(layers):
        first = seen.setdefault(id(layer), index)
        if first != index and not family.shared_layers:
            # One module twice runs twice: each run is an activation the family's row does not count.
            raise BadInput(
                f"layer {index} at {family.layers!r} is the same module as layer {first}: a model that runs one "
                f"layer twice is not a {model_type!r} model as its family describes it (give each layer its own module)"
            )
    head = None
    if family.pooling == LAST:
        head = _attribute_path(model, family.head or "")
        if head is None:
            raise _refuse(model_type, f"no classification head {family.head!r}")
    return Adapter(
        family=family,
        base=base,
        layers=layers,
        num_layers=int(expected),
        head=head,
        warning=warning,
        embedding_point=family.attribution_point(config),
    )


def layer_input(args: tuple, kwargs: dict) -> torch.Tensor:
    """The hidden-state tensor a layer was called with, whatever its signature."""
    if args and isinstance(args[0], torch.Tensor):
        return args[0]
    for key in ("hidden_states", "x", "hidden_state"):
        if isinstance(kwargs.get(key), torch.Tensor):
            return kwargs[key]
    raise RuntimeError("could not find the hidden states among a layer's inputs")
