"""A model the caller holds, wrapped as a classifier without changing it (``contrastcat.load_model(model,
tokenizer)``): checked to be a classifier contrastcat can run, fingerprinted as given, and checked
again before each call, so no record names weights the model no longer has.
"""

from __future__ import annotations

import contextlib
import dataclasses

import torch

from ..errors import BadInput
from .adapters import adapter_for
from .borrowed import eager_eval, rescales_itself, settings_signature, tokenizer_signature, weight_signature
from .loading import Classifier, _check_classes, _classifier, check_vocabulary, identity, load_problem
from .precision import dtype_name
from .provenance import check_no_hooks

__all__ = ["borrow_classifier", "check_unchanged"]


def borrow_classifier(model: torch.nn.Module, tokenizer: object, *, name: str) -> Classifier:
    """Wrap a model the caller holds, as it is: not copied, moved or cast, its attention setting
    and training mode switched only for each pass and put back (``borrowed.eager_eval``). The
    fingerprint is of its weights now; :func:`check_unchanged` tells when they moved on."""
    _check_classes(model, name)
    if not getattr(tokenizer, "is_fast", False):
        raise BadInput(f"model {name!r}: a fast tokenizer is needed for character offsets")
    check_vocabulary(tokenizer, name, "the tokenizer given")
    parameter = next(model.parameters(), None)
    if parameter is None:
        raise BadInput(f"model {name!r} has no weights")
    if parameter.is_meta:
        raise BadInput(
            f"model {name!r} has its weights on the meta device (not loaded, or offloaded by accelerate's "
            "cpu_offload or a disk device_map): contrastcat reads and hashes them; load the model into memory whole"
        )
    packed = next((key for key, value in model.state_dict().items() if not isinstance(value, torch.Tensor)), None)
    if packed is not None:
        raise BadInput(
            f"model {name!r} holds quantized weights ({packed}, e.g. from torch.ao.quantization.quantize_dynamic): "
            "contrastcat takes gradients through float weights; pass the model before quantizing it"
        )
    if hasattr(model, "_orig_mod"):
        raise BadInput(
            f"model {name!r} is compiled (torch.compile): contrastcat's passes hook into the model's layers, "
            "which a compiled graph skips; pass the module it wraps (model._orig_mod)"
        )
    if any(tensor.is_inference() for tensor in (*model.parameters(), *model.buffers())):
        raise BadInput(
            f"model {name!r} was made under torch.inference_mode(): its weights cannot take part in the gradients "
            "contrastcat computes (load it outside inference_mode)"
        )
    if parameter.dtype not in (torch.float32, torch.bfloat16, torch.float16):
        raise BadInput(
            f"model {name!r} has {dtype_name(parameter.dtype)} weights: contrastcat runs float32, bfloat16 or float16 "
            "(cast it first: model.float())"
        )
    _check_vocabulary_fits(model, tokenizer, name)
    check_no_hooks(model, name)
    check_unsaved_buffers(model, name)
    with eager_eval(model):
        _check_head(model, name, parameter.device)
        adapter = adapter_for(model)
    classifier = _classifier(model, tokenizer, name, name, parameter.device, adapter)
    return dataclasses.replace(classifier, borrowed=True)


def check_unchanged(classifier: Classifier, function: str) -> None:
    """A classifier whose weights changed since it was loaded (its model trained on in the notebook,
    or edited) would be explained under its old fingerprint: refuse, so no record names weights
    the model no longer has. So are hooks added since, and tokens added to its tokenizer that
    its embeddings do not have."""
    check_no_hooks(classifier.model, classifier.name, function)
    _check_vocabulary_fits(classifier.model, classifier.tokenizer, classifier.name, function)
    _check_settings(classifier, function)
    _check_tokenizer(classifier, function)
    now = weight_signature(classifier.model)
    if now == classifier.versions:
        return
    check_unsaved_buffers(classifier.model, classifier.name, function)  # outside the fingerprint
    if identity(classifier.model, classifier.multi_label) == classifier.fingerprint:
        classifier.versions = now  # changed and put back: the same weights, no need to hash them again
        return
    again = "contrastcat.load_model(model, tokenizer)" if classifier.borrowed else "contrastcat.load_model"
    raise BadInput(
        f"{function}: the weights of model {classifier.name!r} changed since it was loaded "
        f"(its records would name the old ones): load it again with {again}"
    )


def _check_tokenizer(classifier: Classifier, function: str) -> None:
    """The tokenizer as loaded: its normalizer removed, its post-processor replaced, vocabulary
    entries swapped or its truncation side turned, a text's ids change under the same fingerprint."""
    if classifier.tokenizer_state and tokenizer_signature(classifier.tokenizer) != classifier.tokenizer_state:
        again = "contrastcat.load_model(model, tokenizer)" if classifier.borrowed else "contrastcat.load_model"
        raise BadInput(
            f"{function}: the tokenizer of model {classifier.name!r} changed since it was loaded (its pipeline, "
            f"vocabulary or settings: a text's ids change with it, the fingerprint of the weights does not): put it "
            f"back, or load the model again with {again}"
        )


def _check_settings(classifier: Classifier, function: str) -> None:
    """The config and the modules' plain attributes as loaded: an ``eps``, a ``scaling`` or a
    config value edited since changes the outputs, not the weights the fingerprint names."""
    if not classifier.settings:
        return
    now = settings_signature(classifier.model)
    if now == classifier.settings:
        return
    loaded, current = dict(classifier.settings), dict(now)
    # An attribute added since to the model object itself (a note of the user's own, the
    # ``vocab_size`` resize_token_embeddings leaves there) is left out; one added to the config
    # (``is_causal``, read with a default) or to a module inside counts.
    roots = {where.split(".")[0] for where in loaded}
    changed = next((where for where in {**loaded, **current}
                    if loaded.get(where) != current.get(where) and (where in loaded or where.split(".")[0] in roots)),
                   None)
    if changed is None:
        return
    again = "contrastcat.load_model(model, tokenizer)" if classifier.borrowed else "contrastcat.load_model"
    if changed == "config.problem_type":  # a pass with float labels sets it, or the caller did
        now = getattr(classifier.model.config, "problem_type", None)
        then = "multi-label" if classifier.multi_label else "single-label"
        raise BadInput(
            f"{function}: model {classifier.name!r} now says problem_type {now!r}; it was {then} when it was "
            "loaded (a pass with float labels makes it multi-label): what its probabilities are (a softmax over "
            f"the classes, or a sigmoid per label) is read once, when it is loaded: load it again with {again}"
        )
    if changed.endswith("<class>"):
        module = changed.removesuffix("<class>").rstrip(".")
        module = f"module {module}" if module else "the model object itself"
        now, then = current.get(changed), loaded.get(changed)
        what = "was removed" if now is None else "was added" if then is None else f"is a {now} now, not a {then}"
        raise BadInput(
            f"{function}: {module} of model {classifier.name!r} {what} since it was loaded (the outputs change "
            f"with it, the fingerprint of the weights does not): put it back, or load the model again with {again}"
        )
    raise BadInput(
        f"{function}: {changed} of model {classifier.name!r} changed since it was loaded (the outputs change with "
        f"it, the fingerprint of the weights does not): put it back, or load the model again with {again}"
    )


def check_unsaved_buffers(model: torch.nn.Module, name: str, function: str = "") -> None:
    """Buffers not saved with the weights (``position_ids``, ``token_type_ids``, rotary
    ``inv_freq``) are left out of the state dict, so out of the fingerprint; the model's own
    classes make them from the config alone. Each module holding one is made again from the
    config (its weights left uninitialised) and its buffers compared: one changed in place would
    change the outputs under the same fingerprint. A module the config alone does not make is
    not compared."""
    saved = set(model.state_dict())
    config = getattr(model, "config", None)
    for where, module in model.named_modules():
        unsaved = [(key, value) for key, value in module.named_buffers(recurse=False)
                   if value is not None and f"{where}.{key}".lstrip(".") not in saved]
        if not unsaved or config is None or rescales_itself(module):
            continue
        fresh = _made_again(module, config)
        for key, value in unsaved:
            made = None if fresh is None else getattr(fresh, key, None)
            if not isinstance(made, torch.Tensor):
                continue
            if made.shape != value.shape or not torch.equal(made.to(value.dtype), value.detach().cpu()):
                lead = f"{function + ': ' if function else ''}model {name!r}"
                raise BadInput(
                    f"{lead}: its buffer {where}.{key} is not what {type(module).__name__} makes from the config "
                    "(changed in place, or the config edited after loading): such a buffer is not saved with the "
                    "weights, so their fingerprint cannot name it; load the model again (or put the buffer or the "
                    "config back)"
                )


def _made_again(module: torch.nn.Module, config) -> torch.nn.Module | None:
    try:  # where transformers 5 keeps it; its weights are not needed, only its buffers
        from transformers.initialization import no_init_weights
    except ImportError:
        no_init_weights = contextlib.nullcontext
    try:
        with no_init_weights(), torch.device("cpu"):
            return type(module)(config)
    except Exception:  # noqa: BLE001 - a module its config alone does not make: not compared
        return None


def _check_head(model: torch.nn.Module, name: str, device: torch.device) -> None:
    """A model given in memory is a sequence classifier: one pass on two tokens gives one logit per
    class (a base model without its head, ``model.bert``, gives hidden states instead)."""
    try:
        with torch.no_grad():
            output = model(input_ids=torch.ones((1, 2), dtype=torch.long, device=device))
    except Exception as error:  # noqa: BLE001 - whatever it is, it does not run as a classifier
        raise BadInput(f"model {name!r} does not run on token ids as a classifier ({load_problem(error)})") from None
    logits = getattr(output, "logits", None)
    classes = int(model.config.num_labels)
    if not isinstance(logits, torch.Tensor) or tuple(logits.shape) != (1, classes):
        raise BadInput(
            f"model {name!r} ({type(model).__name__}) is not a sequence classifier: it gives no logits per class "
            "(pass the model with its classification head, e.g. AutoModelForSequenceClassification)"
        )


def held_classifier(model: torch.nn.Module) -> str:
    """Where a wrapper of the caller's holds a transformers model, said so: passing that is the fix."""
    if not isinstance(model, torch.nn.Module):
        return ""
    for where, module in model.named_modules():
        if where and callable(getattr(module, "get_input_embeddings", None)) and hasattr(module, "config"):
            return f"; yours holds one at .{where}: pass that (model.{where})"
    return ""


def _check_vocabulary_fits(model: torch.nn.Module, tokenizer, name: str, function: str = "") -> None:
    try:
        rows = int(model.get_input_embeddings().num_embeddings)
    except (AttributeError, NotImplementedError, TypeError):
        raise BadInput(
            f"{function + ': ' if function else ''}model {name!r} ({type(model).__name__}) has no input embeddings "
            f"(get_input_embeddings): contrastcat needs a transformers classifier{held_classifier(model)}"
        ) from None
    if len(tokenizer) > rows:
        raise BadInput(
            f"{function + ': ' if function else ''}model {name!r}: its tokenizer has {len(tokenizer)} tokens but its "
            f"embeddings only {rows}: they do not belong together (pass the model's own tokenizer, or resize the "
            "embeddings and load it again)"
        )
