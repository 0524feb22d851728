"""A model the caller holds, wrapped as a classifier without changing it (``contrastcat.load_model(model,
tokenizer)``): checked to be a classifier contrastcat can run, fingerprinted as given, and checked
again before each call, so no record names weights the model no longer has.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os

import torch

from ..errors import BadInput
from .adapters import adapter_for
from .borrowed import eager_eval, weight_signature
from .loading import Classifier, _check_classes, _classifier, check_vocabulary, load_problem, weights_fingerprint
from .precision import dtype_name

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
        raise BadInput(f"model {name!r} is on the meta device: its weights are not loaded")
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
    with eager_eval(model):
        _check_head(model, name, parameter.device)
        adapter = adapter_for(model)
    classifier = _classifier(
        model, tokenizer, name, name, parameter.device, None, adapter, weights_fingerprint(model)
    )
    return dataclasses.replace(classifier, borrowed=True)


def check_unchanged(classifier: Classifier, function: str) -> None:
    """A classifier whose weights changed since it was loaded (its model trained on in the notebook,
    or edited) would be explained under its old fingerprint: refuse, so no record names weights
    the model no longer has. So are hooks added since, and tokens added to its tokenizer that
    its embeddings do not have."""
    check_no_hooks(classifier.model, classifier.name, function)
    _check_vocabulary_fits(classifier.model, classifier.tokenizer, classifier.name, function)
    now = weight_signature(classifier.model)
    if now == classifier.versions:
        return
    if weights_fingerprint(classifier.model) == classifier.fingerprint:
        classifier.versions = now  # changed and put back: the same weights, no need to hash them again
        return
    again = "contrastcat.load_model(model, tokenizer)" if classifier.borrowed else "contrastcat.load_model"
    raise BadInput(
        f"{function}: the weights of model {classifier.name!r} changed since it was loaded "
        f"(its records would name the old ones): load it again with {again}"
    )


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


def _check_vocabulary_fits(model: torch.nn.Module, tokenizer, name: str, function: str = "") -> None:
    try:
        rows = int(model.get_input_embeddings().num_embeddings)
    except (AttributeError, NotImplementedError, TypeError):
        raise BadInput(
            f"{function + ': ' if function else ''}model {name!r} ({type(model).__name__}) has no input embeddings "
            "(get_input_embeddings): contrastcat needs a transformers classifier"
        ) from None
    if len(tokenizer) > rows:
        raise BadInput(
            f"{function + ': ' if function else ''}model {name!r}: its tokenizer has {len(tokenizer)} tokens but its "
            f"embeddings only {rows}: they do not belong together (pass the model's own tokenizer, or resize the "
            "embeddings and load it again)"
        )


# Hooks these packages install themselves (transformers records attentions and hidden states
# with forward hooks; contrastcat's own are removed after each pass; torch's pruning reparametrises
# weights the fingerprint then sees): they do not change what the model computes unseen. Told by
# where their code is, not by the module name a function claims.
_OWN_PACKAGES = ("transformers", "torch", "contrastcat", "accelerate")
_HOOK_KINDS = {
    "_forward_pre_hooks": "forward pre-hook", "_forward_hooks": "forward hook",
    "_backward_pre_hooks": "backward pre-hook", "_backward_hooks": "backward hook",
}


def _package_folders() -> tuple[str, ...]:
    folders = []
    for package in _OWN_PACKAGES:
        spec = importlib.util.find_spec(package)
        if spec is not None and spec.submodule_search_locations:
            folders += [os.path.realpath(folder) + os.sep for folder in spec.submodule_search_locations]
    return tuple(folders)


def _code_file(hook) -> str:
    function = getattr(hook, "func", hook)  # functools.partial
    code = getattr(function, "__code__", None) or getattr(getattr(type(function), "__call__", None), "__code__", None)
    return os.path.realpath(code.co_filename) if code is not None else ""


def check_no_hooks(model: torch.nn.Module, name: str, function: str = "") -> None:
    """A hook can change what a model computes (shift its logits, detach a layer) without
    changing its weights, which is all its fingerprint covers: records would name a model that
    did not run. Refuse one in one line, naming where it is, rather than explain it."""
    found = [(where, kind, hook) for where, module in model.named_modules() for kind in _HOOK_KINDS
             for hook in getattr(module, kind, {}).values()]
    found += [("every module (a global hook)", kind, hook) for kind in _HOOK_KINDS
              for hook in getattr(torch.nn.modules.module, f"_global{kind}", {}).values()]
    own = _package_folders()
    for where, kind, hook in found:
        if _code_file(hook).startswith(own):
            continue
        function_of = getattr(hook, "func", hook)
        source = getattr(function_of, "__module__", None) or ""
        shown = f"{source}.{getattr(function_of, '__qualname__', type(function_of).__name__)}".lstrip(".")
        raise BadInput(
            f"{function + ': ' if function else ''}model {name!r} has a {_HOOK_KINDS[kind]} ({shown}) on "
            f"{where or 'the model itself'}: a hook can change what the model computes without changing its weights, "
            "which is all its fingerprint names; remove it (handle.remove()) and load the model again"
        )
    for where, module in model.named_modules():
        # A forward replaced on the instance (monkeypatched) runs instead of the class's: the same
        # weights, another computation. accelerate's device hooks (``_hf_hook``) move tensors only.
        if "forward" in vars(module) and not hasattr(module, "_hf_hook"):
            raise BadInput(
                f"{function + ': ' if function else ''}model {name!r} has its forward replaced on "
                f"{where or 'the model itself'}: it computes something else than its weights, which is all its "
                "fingerprint names; put the class's forward back (del module.forward) and load the model again"
            )
