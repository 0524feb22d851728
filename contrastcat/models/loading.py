"""Load a classifier from a hub id or a directory, or wrap one already loaded.

Loading never enables ``trust_remote_code`` and always asks for the eager
attention path, the only one that returns attention probabilities. Names
(aliases, embedded models) are resolved one level up, in ``contrastcat.models.resolve``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import types
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import torch
import transformers
from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer

from ..errors import BadInput, ContrastCatWarning, ModelUnavailable
from .adapters import Adapter, adapter_for, position_limit
from .aliases import single_texts_only
from .borrowed import settings_signature, tokenizer_signature, weight_signature
from .devices import resolve_device
from .precision import dtype_name, resolve_dtype
from .segments import PairTypes, pair_types


@dataclass
class Classifier:
    """A loaded classifier and everything the pipeline needs to know about it."""

    model: torch.nn.Module
    tokenizer: object
    name: str  # as the user gave it (alias, hub id or path)
    source: str  # what was loaded: hub id or absolute path
    label_names: tuple[str, ...]
    fingerprint: str
    adapter: Adapter
    device: torch.device
    max_length: int  # tokens explained per input by default (the tokenizer's limit)
    position_limit: int  # the most tokens the model's position embeddings take (`max_length`'s ceiling)
    pad_id: int  # the token that fills padded positions (see choose_pad_id)
    empty_input: tuple[int, ...]  # what an input with every token deleted is scored as
    dtype: torch.dtype = torch.float32  # the weights' precision
    # Inputs are sentence pairs (see ``paired``); ``pair_types`` gives their token type ids
    # where the model reads them (None: it does not, or single texts).
    pairs: bool = False
    pair_types: PairTypes | None = None
    # A model the caller loaded (``contrastcat.load_model(model, tokenizer)``): every pass switches
    # it to eager attention and eval mode and puts back what it found (see ``forward.in_use``).
    borrowed: bool = False
    # The weights as fingerprinted (borrowed.weight_signature): a caller who trains or edits
    # ``model`` afterwards is refused by the next call (in_memory.check_unchanged).
    versions: tuple = ()
    # Its config and modules' plain attributes as loaded (borrowed.settings_signature): edited
    # afterwards, they change the outputs under the same fingerprint, and are refused.
    settings: tuple = ()
    # Its tokenizer's pipeline and settings as loaded (borrowed.tokenizer_signature): likewise.
    tokenizer_state: str = ""
    # The config says multi_label_classification: each class is a label of its own, scored by its
    # own sigmoid (not one softmax over the classes), and several may hold at once.
    multi_label: bool = False

    @property
    def num_classes(self) -> int:
        return len(self.label_names)

    @property
    def num_layers(self) -> int:
        return self.adapter.num_layers

    @property
    def hidden_size(self) -> int:
        return int(self.model.config.hidden_size)

    def paired(self) -> Classifier:
        """This classifier for sentence pairs: the same model, passes given segment ids where it reads
        them. A model known to read single texts is explained on pairs (the user may mean it), with
        a warning: whatever asks for pairs (explain, build-refs, evaluate, compare) says it once."""
        if self.pairs:
            return self
        reason = single_texts_only(self.name, getattr(self.model.config, "finetuning_task", None))
        if reason:
            warnings.warn(f"{self.name} {reason}: its maps of sentence pairs explain inputs of a kind it never "
                          "saw, and may mean little", ContrastCatWarning, stacklevel=2)
        walk = pair_types(self.tokenizer, self.model.config, self.name)
        return dataclasses.replace(self, pairs=True, pair_types=walk)

    def identity(self) -> dict:
        """The model as every record names it: as given, its weights, their precision."""
        return {"model": self.name, "model_fingerprint": self.fingerprint, "model_dtype": dtype_name(self.dtype)}


def weights_fingerprint(model: torch.nn.Module) -> str:
    """Content hash of the parameters and buffers, independent of file format."""
    digest = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        flat = tensor.detach().to("cpu").contiguous()
        digest.update(name.encode())
        digest.update(str(flat.dtype).encode())
        digest.update(str(tuple(flat.shape)).encode())
        digest.update(flat.view(-1).view(torch.uint8).numpy().tobytes())
    return "sha256:" + digest.hexdigest()[:32]


@contextlib.contextmanager
def quiet_transformers() -> Iterator[None]:
    """Keep transformers' own progress bars and notices off our stderr while loading."""
    logging = transformers.utils.logging
    verbosity = logging.get_verbosity()
    bars = logging.is_progress_bar_enabled()
    logging.set_verbosity_error()
    logging.disable_progress_bar()
    try:
        yield
    finally:
        logging.set_verbosity(verbosity)
        if bars:
            logging.enable_progress_bar()


def _label_names(model: torch.nn.Module, override: tuple[str, ...] | None) -> tuple[str, ...]:
    config = model.config
    count = int(config.num_labels)
    from_config = tuple(str(config.id2label.get(i, f"LABEL_{i}")) for i in range(count))
    generic = all(label == f"LABEL_{i}" for i, label in enumerate(from_config))
    if override and generic and len(override) == count:
        return tuple(override)
    return from_config


def choose_pad_id(tokenizer, config) -> int:
    """The token that fills padded positions.

    The tokenizer's pad token, else the config's (RoBERTa derives positions
    from it, so it must be the model's own), else EOS: GPT-2 and Llama ship
    none, and with right padding, causal attention and pooling by length the
    padding's content never reaches a real token (see ``models.forward``).
    """
    for candidate in (
        getattr(tokenizer, "pad_token_id", None),
        getattr(config, "pad_token_id", None),
        getattr(tokenizer, "eos_token_id", None),
        getattr(config, "eos_token_id", None),
    ):
        if isinstance(candidate, (list, tuple)):
            candidate = candidate[0] if candidate else None
        if candidate is not None:
            return int(candidate)
    return 0


def choose_empty_input(tokenizer, pad_id: int) -> tuple[int, ...]:
    """What an input with every token deleted is: the special tokens the tokenizer
    adds to an empty text ([CLS] [SEP], <s>), or, where it adds none (GPT-2),
    the EOS token alone, else the pad token. A model cannot run on zero tokens."""
    added = [int(i) for i in tokenizer("", add_special_tokens=True)["input_ids"]]
    if added:
        return tuple(added)
    eos = getattr(tokenizer, "eos_token_id", None)
    return (int(eos if eos is not None else pad_id),)


def load_pretrained(
    source: str | Path,
    *,
    name: str,
    device: torch.device,
    dtype: str | torch.dtype = "auto",
    label_names: tuple[str, ...] | None = None,
) -> Classifier:
    """``from_pretrained`` on a hub id or a directory, with one-line errors.

    ``label_names`` replace the config's only where it says LABEL_0, LABEL_1, ...
    """
    source = str(source)
    is_local = os.path.isdir(source)  # false for a name too long to look up (Path.is_dir raises)
    weights_dtype = resolve_dtype(dtype, device)
    where = f"model {name!r}: cannot load {source}" if is_local else f"model {name!r} ({source})"
    with quiet_transformers(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch and transformers warn about odd configs on stderr
        if is_local:
            # Some transformers versions (5.17) refuse at reading a problem_type outside their own
            # three, in words that name no kind of model: read it first, so the refusal is the same
            # whatever version reads the file.
            written = _json_object(Path(source) / "config.json") or {}
            check_problem_type(types.SimpleNamespace(problem_type=written.get("problem_type")), name)
        with _loading(where, "config.json", is_local):
            config = AutoConfig.from_pretrained(source, trust_remote_code=False)
        check_known_code(config, name)
        check_head(architectures(config), name, "config.json names", base=True)
        check_problem_type(config, name)
        if is_local:
            check_tokenizer_code(Path(source), name)
        with _loading(where, "its tokenizer", is_local):
            tokenizer = AutoTokenizer.from_pretrained(source, trust_remote_code=False)
        with _loading(where, "its weights", is_local):
            try:
                model, loaded = AutoModelForSequenceClassification.from_pretrained(
                    source, config=config, trust_remote_code=False, attn_implementation="eager",
                    dtype=weights_dtype, output_loading_info=True,
                )
            except Exception as error:  # noqa: BLE001 - shapes that disagree with the config: say which
                raise _MismatchedShapes(_first_mismatch(source, config, weights_dtype)) from error
    check_complete(loaded, name, source)
    if not getattr(tokenizer, "is_fast", False):
        raise BadInput(f"model {name!r}: a fast tokenizer is needed for character offsets")
    check_vocabulary(tokenizer, name, source)
    return wrap_classifier(model, tokenizer, name=name, source=source, device=device, label_names=label_names)


def _json_object(path: Path) -> dict | None:
    """A JSON file's object as written; None where it cannot be read as one (missing, not JSON,
    arrays nested past Python's limit, not an object): the loader that reads it next says what is
    wrong with it."""
    try:
        with open(path, encoding="utf-8") as stream:
            found = json.load(stream)
    except (OSError, ValueError, RecursionError):
        return None
    return found if isinstance(found, dict) else None


class _MismatchedShapes(Exception):
    """Carries the first weight whose shape disagrees with the config (None: something else)."""


@contextlib.contextmanager
def _loading(where: str, part: str, is_local: bool) -> Iterator[None]:
    """One line for a failure loading ``part``: a damaged directory fails in many ways (json,
    safetensors, shapes), a hub id that is not cached in one."""
    try:
        yield
    except (BadInput, ModelUnavailable):
        raise
    except Exception as error:  # noqa: BLE001
        if not is_local:
            if not isinstance(error, (OSError, ValueError, _MismatchedShapes)):
                raise
            raise ModelUnavailable(
                f"{where} is not in the local cache and the hub cannot be reached: "
                "run once with network access to cache it, or pass a local model directory"
            ) from None
        raise BadInput(f"{where}: {part}: {load_problem(error)}") from None


def load_problem(error: BaseException) -> str:
    """What went wrong, in one line, from what ``from_pretrained`` raised."""
    if isinstance(error, _MismatchedShapes):
        if error.args[0]:
            return error.args[0]
        error = error.__cause__ or error
    if isinstance(error, KeyError):
        return f"a required entry {error.args[0]!r} is missing"
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    # transformers points at a report it logged (we keep its log quiet): the first line alone says nothing.
    lines = [line for line in lines if "look at the above report" not in line] or lines
    if len(lines) > 1 and lines[0].endswith(":"):  # a heading whose reason is on the next line (a field's validation)
        return f"{lines[0]} {lines[1]}"
    return lines[0] if lines else type(error).__name__


def _first_mismatch(source: str, config, weights_dtype) -> str | None:
    """Load again, letting sizes disagree, to name the first weight that does."""
    try:
        _, loaded = AutoModelForSequenceClassification.from_pretrained(
            source, config=config, trust_remote_code=False, attn_implementation="eager",
            dtype=weights_dtype, output_loading_info=True, ignore_mismatched_sizes=True,
        )
    except Exception:  # noqa: BLE001 - not a shape problem after all
        return None
    for key, *shapes in sorted(loaded.get("mismatched_keys", ()), key=str):
        if len(shapes) == 2:
            saved, expected = (list(shape) for shape in shapes)
            return f"{key} is {saved} in the checkpoint but config.json makes it {expected}"
        return f"{key} does not have the shape config.json gives it"
    return None


def architectures(config) -> list[str]:
    """The classes config.json names (one name given as a string is one class, not its letters)."""
    named = getattr(config, "architectures", None) or []
    return [named] if isinstance(named, str) else [str(cls) for cls in named]


def check_known_code(config, name: str) -> None:
    """Refuse a model that needs its own code: contrastcat never runs it (trust_remote_code), and
    loading it as its base type would run other code than the model's author wrote."""
    auto_map = getattr(config, "auto_map", None)
    if auto_map:
        shown = ", ".join(f"{key} -> {value}" for key, value in sorted(dict(auto_map).items()))[:200]
        raise BadInput(
            f"model {name!r}: config.json declares its own code ({shown}), which contrastcat does not run "
            "(no trust_remote_code); use a model transformers supports itself"
        )
    unknown = [arch for arch in architectures(config) if not hasattr(transformers, str(arch))]
    if unknown:
        raise BadInput(
            f"model {name!r}: config.json names the architecture {unknown[0]!r}, which transformers "
            f"{transformers.__version__} does not have; contrastcat does not run a model's own code"
        )


def check_tokenizer_code(directory: Path, name: str) -> None:
    """A tokenizer that declares its own code (``auto_map`` in tokenizer_config.json) is refused
    as a model's is: loaded as its base type it would split text otherwise than its author's."""
    settings = _json_object(directory / "tokenizer_config.json")  # None: the tokenizer's loading says why
    if settings is not None and settings.get("auto_map"):
        raise BadInput(
            f"model {name!r}: tokenizer_config.json declares its own tokenizer code, which contrastcat does not "
            "run (no trust_remote_code); use a tokenizer transformers supports itself"
        )


def check_complete(loaded: dict, name: str, source: str) -> None:
    """Every weight of the classifier came from the checkpoint: a missing one (a checkpoint without
    a trained classification head) would be random, and so would every explanation."""
    missing = sorted(loaded.get("missing_keys", ()))
    if missing:
        more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
        raise BadInput(
            f"model {name!r}: {source} lacks the weight {missing[0]}{more}: it would be random "
            "(a checkpoint without a trained classification head is not a classifier)"
        )


def check_vocabulary(tokenizer, name: str, source: str) -> None:
    """A tokenizer that knows only its special tokens (its vocabulary file missing) would map every
    word to the unknown token, and the model would explain nothing: refuse it."""
    special = set(getattr(tokenizer, "all_special_ids", ()) or ())
    if len(tokenizer) - len(special) < 2:
        raise BadInput(
            f"model {name!r}: the tokenizer in {source} has no vocabulary beside its {len(special)} special "
            "token(s): its vocabulary file (tokenizer.json, vocab.txt, vocab.json + merges.txt or a "
            "sentencepiece model) is missing or empty"
        )


def wrap_classifier(
    model: torch.nn.Module,
    tokenizer: object,
    *,
    name: str,
    source: str | None = None,
    device: str | torch.device = "cpu",
    dtype: str | torch.dtype | None = None,
    label_names: tuple[str, ...] | None = None,
) -> Classifier:
    """Wrap an already loaded model (a notebook's, or a test's) as a :class:`Classifier`.

    ``dtype``: cast the weights (None keeps them as they are).
    """
    target_device = device if isinstance(device, torch.device) else resolve_device(device)
    _check_classes(model, name)
    model.config._attn_implementation = "eager"
    model.eval()
    adapter = adapter_for(model)
    if dtype is not None:
        chosen = resolve_dtype(dtype, target_device)
        if isinstance(chosen, torch.dtype):
            model.to(chosen)
    model.to(target_device)
    return _classifier(model, tokenizer, name, source or name, target_device, adapter, label_names)


def _check_classes(model: torch.nn.Module, name: str) -> None:
    check_head([type(model).__name__], name, "it is")
    check_problem_type(model.config, name)
    if int(getattr(model.config, "num_labels", 0)) < 2:
        raise BadInput(f"model {name!r} has {model.config.num_labels} output(s): a classifier needs at least 2 classes")


# What each ``problem_type`` a config may declare is, for the refusal's wording. A classifier is
# explained with the probabilities it was trained to give: one softmax over the classes, or (a
# multi-label classifier) one sigmoid per label. A regression's outputs are values, and no
# probability of them means anything the model does.
_UNSUPPORTED_PROBLEMS = {
    "regression": "a regression model (its outputs are values, not classes)",
}
MULTI_LABEL = "multi_label_classification"


# Heads that are not a sequence classifier's, by how transformers' class names end, and what they
# do: each is refused by name. Loaded as a sequence classifier, some would even fit (a Llama token
# classifier's ``score`` is a sequence classifier's too) and be explained as what they are not.
_OTHER_HEADS = (
    ("ForTokenClassification", "a token classifier (a label per token)"),
    ("ForQuestionAnswering", "an extractive question-answering model (answer spans)"),
    ("ForMultipleChoice", "a multiple-choice model"),
    ("ForConditionalGeneration", "a sequence-to-sequence generator"),
    ("ForCausalLM", "a text generator (causal language model)"),
    ("LMHeadModel", "a text generator (language-model head)"),
    ("ForSeq2SeqLM", "a sequence-to-sequence generator"),
    ("ForMaskedLM", "a masked language model (no classification head)"),
    ("ForPreTraining", "a pre-training checkpoint (no classification head)"),
    ("ForNextSentencePrediction", "a next-sentence-prediction head (pre-training)"),
)


def check_head(classes, name: str, said: str, base: bool = False) -> None:
    """Refuse, in one line, a model whose class (``classes``: what ``said`` gives) is another task's
    head than sequence classification, naming what it is and what contrastcat explains; with
    ``base``, also a base model's class (``BertModel``: no head at all). In memory a module's own
    class name says nothing of the kind, and a base model gives no logits to explain anyway."""
    if any(str(cls).endswith("ForSequenceClassification") for cls in classes):
        return
    for cls in classes:
        what = next((what for ending, what in _OTHER_HEADS if str(cls).endswith(ending)), None)
        if what is None and base and str(cls).endswith("Model") and "For" not in str(cls):
            what = "a base model (no classification head)"
        if what is not None:
            raise BadInput(
                f"model {name!r}: {said} {cls}, {what}; contrastcat explains sequence classifiers only "
                "(a class per text or text pair; docs/models.md, What is explained)"
            )


def check_problem_type(config, name: str) -> bool:
    """Whether the config says the model is multi-label; a model whose config says it is no
    classifier is refused in one line, rather than explained with probabilities it does not
    compute. A config that says nothing is a single-label classifier (what transformers assumes
    of integer labels): its training objective cannot be known from the weights."""
    problem = getattr(config, "problem_type", None)
    if problem in (None, "", "single_label_classification"):
        return False
    if problem == MULTI_LABEL:
        return True
    shown = repr(problem) if len(repr(problem)) <= 60 else repr(problem)[:57] + "..."
    what = _UNSUPPORTED_PROBLEMS.get(str(problem), "which is no problem type transformers knows")
    raise BadInput(
        f"model {name!r}: its config says problem_type={shown}, {what}; contrastcat explains "
        "classifiers only (softmax over the classes, or a sigmoid per label for multi_label_classification)"
    )


def identity(model: torch.nn.Module, multi_label: bool) -> str:
    """The fingerprint records and libraries name: the weights', and for a multi-label classifier
    that too (the same weights read with one softmax give other probabilities, other references
    and other maps). A single-label model's is its weights' alone, as it always was."""
    fingerprint = weights_fingerprint(model)
    if not multi_label:
        return fingerprint
    return "sha256:" + hashlib.sha256(f"{fingerprint} {MULTI_LABEL}".encode()).hexdigest()[:32]


def _classifier(model, tokenizer, name: str, source: str, device, adapter, label_names=None) -> Classifier:
    """The classifier of a model on ``device`` whose adapter is known."""
    multi_label = check_problem_type(model.config, name)
    fingerprint = identity(model, multi_label)  # read on the CPU, wherever the weights are
    positions = position_limit(model.config, model)
    tokenizer_limit = getattr(tokenizer, "model_max_length", positions) or positions
    pad_id = choose_pad_id(tokenizer, model.config)
    return Classifier(
        model=model,
        tokenizer=tokenizer,
        name=name,
        source=source,
        label_names=_label_names(model, label_names),
        fingerprint=fingerprint,
        adapter=adapter,
        device=device,
        max_length=int(min(positions, tokenizer_limit)),
        position_limit=positions,
        pad_id=pad_id,
        empty_input=choose_empty_input(tokenizer, pad_id),
        dtype=next(model.parameters()).dtype,
        versions=weight_signature(model),
        settings=settings_signature(model),
        tokenizer_state=tokenizer_signature(tokenizer),
        multi_label=multi_label,
    )


def recast(classifier: Classifier, dtype: str | torch.dtype) -> Classifier:
    """The classifier with its weights in ``dtype`` (and their fingerprint); "auto" keeps them. The
    model is cast in place: the classifier given names weights it no longer has (and is refused)."""
    chosen = resolve_dtype(dtype, classifier.device)
    if not isinstance(chosen, torch.dtype) or chosen == classifier.dtype:
        return classifier
    classifier.model.to(chosen)
    return dataclasses.replace(
        classifier, fingerprint=identity(classifier.model, classifier.multi_label), dtype=chosen,
        versions=weight_signature(classifier.model), settings=settings_signature(classifier.model),
    )


def check_max_length(classifier: Classifier, max_length: int | None, named: str = "`max_length`") -> int:
    """The token limit to explain with: the model's own, or one the user chose up to its positions
    (``named``: the option as the caller spells it)."""
    if max_length is None:
        return classifier.max_length
    if not 2 <= max_length <= classifier.position_limit:
        raise BadInput(
            f"{named} {max_length}: the model {classifier.name!r} takes 2 to {classifier.position_limit} tokens"
        )
    return max_length
