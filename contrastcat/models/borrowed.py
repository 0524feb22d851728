"""Running a model the caller holds (``contrastcat.load_model(model, tokenizer)``) without changing it.

contrastcat needs eager attention (the only implementation that returns attention
probabilities) and eval mode (no dropout). A model it loads itself is set up so once; a
model it is lent is switched for each pass and then given back its own attention setting
and its modules' training flags, so the caller's notebook goes on as before.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import functools
import hashlib
import types
from collections.abc import Iterator

import torch


@contextlib.contextmanager
def eager_eval(model: torch.nn.Module) -> Iterator[None]:
    """``model`` with eager attention and in eval mode inside, as it was after."""
    configs = _configs(model.config)
    attention = [getattr(config, "_attn_implementation_internal", None) for config in configs]
    # Each module's own flag: train() would set a module's children too, and a caller may have
    # put some of them (a dropout) in eval mode inside a model that is training.
    modes = [(module, module.training) for module in model.modules()]
    model.config._attn_implementation = "eager"  # the setter sets the sub-configs' too
    model.eval()
    try:
        yield
    finally:
        for config, value in zip(configs, attention):
            config._attn_implementation_internal = value
        for module, training in modes:
            module.training = training


def _configs(config) -> list:
    """A config and its sub-configs, each of which holds its own attention setting."""
    found = [config]
    for key in getattr(config, "sub_configs", {}) or {}:
        sub = getattr(config, key, None)
        if sub is not None:
            found += _configs(sub)
    return found


def weight_signature(model: torch.nn.Module) -> tuple:
    """What the weights are now, cheaply: per weight its storage, its in-place version (an optimizer
    step, ``load_state_dict``) and a checksum of its bits (a write through ``.data`` or a numpy view
    moves no version). On the CPU the checksum is SHA-1 of the bytes, of each 8 MB slice of a large
    tensor (every call from Python pays it: for MiniLM's 90 MB about 0.1 s in one thread, where
    integer sums took 1.5 to 2 s, and about 0.04 s in two); elsewhere it is
    computed where the weights are (:func:`_checksum`). Either changes when values move within a
    tensor (two rows swapped, a transpose), and is exact and the same on every call."""
    named = [*model.named_parameters(), *model.named_buffers()]
    # SHA-1 lets go of the interpreter while it reads a buffer: the tensors, and the slices of a
    # large one (an embedding table is half of MiniLM's 90 MB), are hashed side by side, one
    # thread per core torch uses (0.1 s a call in one thread; 0.04 in two).
    with concurrent.futures.ThreadPoolExecutor(max(1, min(torch.get_num_threads(), 8))) as pool:
        sums = [_joined(under_way) for under_way in [_combined(pool, tensor.detach()) for _, tensor in named]]
    found = []
    for (name, tensor), checksum in zip(named, sums):
        try:
            version = tensor._version
        except RuntimeError:  # an inference-mode tensor keeps no version counter
            version = None
        found.append((name, tensor.detach().data_ptr(), version, checksum))
    return tuple(found)


# Module attributes that change nothing the model computes: the mode, which every pass switches
# and puts back, memory-saving recomputation, and the model card's tags.
_MODES = frozenset({"training", "gradient_checkpointing", "model_tags"})
_PLAIN = (bool, int, float, str, type(None))
# Config values that change no output: class names (read once, at loading), what saving fills
# in (the classes it was saved as, the weights' dtype, which the weights themselves carry), and
# what a pass returns besides the logits (each pass asks for what it needs) or keeps for generation.
_NAMES = frozenset({"id2label", "label2id", "architectures", "dtype", "torch_dtype", "transformers_version",
                    "_name_or_path", "name_or_path", "output_attentions", "output_hidden_states", "use_cache"})
# transformers fills in a missing problem_type at the first pass with labels (a loss computed in a
# notebook): "single_label_classification" for integer labels is what None was read as at loading.
_SINGLE_LABEL = "single_label_classification"


def _in_training_only(key: str) -> bool:
    """Dropout rates (``hidden_dropout_prob``, GPT-2's ``resid_pdrop``, ``layerdrop``): every pass
    runs in eval mode, where they change nothing."""
    return "dropout" in key or key.endswith("_pdrop") or key == "layerdrop"


def _config_items(config) -> list[tuple[str, str]]:
    values = config.to_dict()
    if values.get("problem_type") is None and "problem_type" in values:
        values["problem_type"] = _SINGLE_LABEL
    return [(f"config.{key}", repr(value)) for key, value in sorted(values.items())
            if key not in _NAMES and not _in_training_only(key)]


def _setting(value) -> str | None:
    """How a module's attribute is compared: plain values and containers of them by value, a
    function (an activation held as one) by where it is defined; anything else is not a setting."""
    if isinstance(value, _PLAIN):
        return repr(value)
    if isinstance(value, (tuple, list, frozenset, set)):
        parts = [_setting(v) for v in value]
        if None in parts:
            return None
        return f"{type(value).__name__}({sorted(parts) if isinstance(value, (set, frozenset)) else parts})"
    if isinstance(value, dict):
        parts = {str(k): _setting(v) for k, v in value.items()}
        return None if None in parts.values() else repr(sorted(parts.items()))
    if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, functools.partial)):
        function = value.func if isinstance(value, functools.partial) else value
        return f"{getattr(function, '__module__', '?')}.{getattr(function, '__qualname__', repr(function))}" + (
            repr((value.args, sorted(value.keywords.items()))) if isinstance(value, functools.partial) else "")
    return None


def rescales_itself(module: torch.nn.Module) -> bool:
    """A rotary embedding that rescales with the input's length (dynamic, longrope) changes its
    own buffers and lengths as it runs: neither is compared with what it was."""
    return getattr(module, "rope_type", None) in ("dynamic", "longrope")


def settings_signature(model: torch.nn.Module) -> tuple:
    """What the model computes with besides its tensors: its config and each module's plain
    attributes (a LayerNorm's ``eps``, an attention's ``scaling``, a sliding window), as
    (where, value) pairs. An edit to one changes the outputs while the weights, and so the
    fingerprint, stay the same. Rotary embeddings that rescale with the input's length
    (dynamic, longrope) keep their own changing lengths and are left out."""
    found = []
    config = getattr(model, "config", None)
    if config is not None and hasattr(config, "to_dict"):
        found.extend(_config_items(config))
    for where, module in model.named_modules():
        # Its class: a module swapped for another (a dropout or an activation for a function of
        # the user's, parameterless) changes the outputs with no weight or setting changed.
        found.append((f"{where}.<class>".lstrip("."), f"{type(module).__module__}.{type(module).__qualname__}"))
        if rescales_itself(module) or isinstance(module, torch.nn.modules.dropout._DropoutNd):
            continue
        for key, value in vars(module).items():
            if key.startswith("_") or key in _MODES or _in_training_only(key):
                continue
            setting = _setting(value)
            if setting is not None:
                found.append((f"{where}.{key}".lstrip("."), setting))
    return tuple(found)


SLICE = 1 << 20  # values per step of the checksum: its temporaries stay a few MB
HASHED_SLICE = 8 << 20  # bytes of a CPU tensor hashed apart, so that one large tensor is read by several threads


def _combined(pool, data: torch.Tensor):
    """A CPU tensor of several slices: their SHA-1s under way (:func:`_joined` makes one of them);
    else the tensor's :func:`_checksum`, under way."""
    flat = data.contiguous().view(-1)
    if flat.device.type != "cpu" or flat.numel() * flat.element_size() <= HASHED_SLICE:
        return pool.submit(_checksum, flat)
    raw = flat.view(torch.uint8).numpy()
    return [pool.submit(_sha1, raw[start : start + HASHED_SLICE]) for start in range(0, len(raw), HASHED_SLICE)]


def _joined(found) -> str | tuple[int, int]:
    """The checksum :func:`_combined` set under way: a tensor's own, or its slices' joined."""
    if not isinstance(found, list):
        return found.result()
    return "+".join(part.result() for part in found)


def _sha1(buffer) -> str:
    return hashlib.sha1(buffer, usedforsecurity=False).hexdigest()


def _checksum(data: torch.Tensor) -> tuple[int, int] | str:
    """SHA-1 of a CPU tensor's bytes; of one on another device (read where it is, without copying
    it to the CPU), (sum, position-weighted sum) of its bits read as integers, wrapping in int64."""
    flat = data.contiguous().view(-1)
    if flat.device.type == "cpu":
        return hashlib.sha1(flat.view(torch.uint8).numpy(), usedforsecurity=False).hexdigest()
    if flat.numel() == 0:
        return (0, 0)
    width = flat.element_size()
    integer = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}.get(width)
    words = flat.view(integer) if integer is not None else flat.view(torch.uint8)
    positions = torch.arange(1, min(SLICE, words.numel()) + 1, dtype=torch.int64, device=words.device)
    total = weighted = 0
    for start in range(0, words.numel(), SLICE):
        part = words[start : start + SLICE].to(torch.int64)
        part_sum = int(part.sum())
        total += part_sum
        # sum((start + i) * x_i) = start * sum(x) + sum(i * x_i), i from 1
        weighted += start * part_sum + int((part * positions[: part.numel()]).sum())
    return total, weighted


# What a tokenizer encodes with besides its backend's pipeline: how it cuts, pads and marks, and
# which inputs it hands the model (``model_input_names``: whether segment ids are sent).
_TOKENIZER_SETTINGS = (
    "truncation_side", "padding_side", "model_max_length", "split_special_tokens", "model_input_names",
)
# A slow tokenizer's own text handling (a fast one's is in its backend pipeline, where setting
# these attributes changes nothing).
_SLOW_SETTINGS = ("do_lower_case", "add_prefix_space")


def tokenizer_signature(tokenizer) -> str:
    """A digest of what turns a text into ids: a fast tokenizer's whole pipeline (normalizer,
    pre-tokenizer, model and vocabulary, post-processor; not the truncation and padding each call
    sets on it), or a slow one's vocabulary, and the settings that cut, pad and mark. Changed after
    loading (a normalizer removed, vocabulary entries swapped), the ids of a text change while the
    weights, and so the fingerprint, stay the same."""
    import hashlib

    parts = []
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None and hasattr(backend, "to_str"):
        parts.append(_pipeline_text(backend.to_str()))
    else:
        if hasattr(tokenizer, "get_vocab"):
            parts.append(repr(sorted(tokenizer.get_vocab().items())))
        parts.extend(f"{name}={_setting(getattr(tokenizer, name, None))}" for name in _SLOW_SETTINGS)
    for name in _TOKENIZER_SETTINGS:
        parts.append(f"{name}={_setting(getattr(tokenizer, name, None))}")
    # The pad token is left out: padded positions are filled with the id chosen at loading
    # (``Classifier.pad_id``), so ``tokenizer.pad_token = tokenizer.eos_token`` after loading, which
    # batched pipelines of decoder models need, changes nothing here.
    special = {k: v for k, v in (getattr(tokenizer, "special_tokens_map", None) or {}).items() if k != "pad_token"}
    parts.append(repr(sorted((str(k), str(v)) for k, v in special.items())))
    return hashlib.sha256("\n".join(parts).encode("utf-8", "surrogatepass")).hexdigest()


def _pipeline_text(serialized: str) -> str:
    """A fast tokenizer's serialization without the truncation and padding each call sets. The
    tokenizers library writes them first (after the version), before ``added_tokens``: the text
    from there on is taken as it is, when what precedes it holds both and nothing else. Otherwise the whole
    document is read and written again without them (five times slower for a 250k vocabulary,
    and this runs before every call on a lent model)."""
    import json

    cut = serialized.find('"added_tokens"')
    if cut > 0:
        try:
            head = json.loads(serialized[:cut].rstrip().rstrip(",") + "}")
        except ValueError:
            head = None
        if isinstance(head, dict) and {"truncation", "padding"} <= set(head) <= {"version", "truncation", "padding"}:
            return f"{head.get('version')}\n{serialized[cut:]}"
    pipeline = json.loads(serialized)
    pipeline.pop("truncation", None)
    pipeline.pop("padding", None)
    return json.dumps(pipeline, sort_keys=True)
