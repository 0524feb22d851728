"""A model in memory that is not what its fingerprint says, or that would fail deep inside,
is refused in one line, at load_model or at the next call: hooks (which change what the model
computes without changing its weights), weights partly made under inference_mode, a tokenizer
grown past the embeddings after loading, a module without input embeddings. Before, hooks kept
the directory's fingerprint (evaluate accepted their records against the directory model) and
the others ended in raw exceptions."""

from __future__ import annotations

import functools
import types
import shutil

import h5py
import pytest
import torch
from torch.nn.utils import prune
from transformers import AutoModelForSequenceClassification, AutoTokenizer

import contrastcat
from contrastcat.library.schema import content_fingerprint
from contrastcat.testing import tiny
from contrastcat.models.loading import weights_fingerprint

from ..helpers import assert_bad_input, assert_one_line_error, invoke

TEXTS = ["the film was a brilliant story", "a dull and boring night"]


def _loaded(toy_dir):
    model = AutoModelForSequenceClassification.from_pretrained(toy_dir / "model", attn_implementation="eager")
    return model.eval(), AutoTokenizer.from_pretrained(toy_dir / "model")


def _shift(module, inputs, output):
    output.logits[:, 0] += 5.0
    return output


def _detach(module, inputs, output):
    return (output[0].detach(), *output[1:])


def test_a_hook_added_after_loading_is_refused_and_one_added_before_too(toy_dir):
    model, tokenizer = _loaded(toy_dir)
    classifier = contrastcat.load_model(model, tokenizer)
    assert contrastcat.explain(classifier, TEXTS, method="attcat")  # transformers' own hooks are fine
    handle = model.register_forward_hook(_shift)
    assert_bad_input(lambda: contrastcat.explain(classifier, TEXTS, method="attcat"),
                     "explain: model", "forward hook", "_shift", "on the model itself", "handle.remove()")
    assert_bad_input(lambda: contrastcat.load_model(model, tokenizer), "forward hook", "_shift")
    handle.remove()
    assert contrastcat.explain(classifier, TEXTS, method="attcat")


def test_a_hook_that_detaches_a_layer_is_one_line_not_a_traceback(toy_dir):
    model, tokenizer = _loaded(toy_dir)
    classifier = contrastcat.load_model(model, tokenizer)
    model.bert.encoder.layer[0].register_forward_hook(_detach)
    assert_bad_input(lambda: contrastcat.explain(classifier, TEXTS, method="attcat"),
                     "forward hook", "_detach", "on bert.encoder.layer.0")


def test_a_global_hook_is_refused(toy_dir):
    model, tokenizer = _loaded(toy_dir)
    handle = torch.nn.modules.module.register_module_forward_hook(lambda module, inputs, output: output)
    try:
        assert_bad_input(lambda: contrastcat.load_model(model, tokenizer), "forward hook", "every module")
    finally:
        handle.remove()


def test_weights_partly_made_under_inference_mode_are_refused(toy_dir):
    model, tokenizer = _loaded(toy_dir)
    with torch.inference_mode():
        model.classifier = torch.nn.Linear(model.config.hidden_size, model.config.num_labels)  # the last weights
    assert not next(model.parameters()).is_inference()
    assert_bad_input(lambda: contrastcat.load_model(model, tokenizer), "inference_mode")


def test_a_tokenizer_grown_after_loading_is_refused_at_the_next_call(toy_dir):
    model, tokenizer = _loaded(toy_dir)
    classifier = contrastcat.load_model(model, tokenizer)
    tokenizer.add_tokens([f"newword{i}" for i in range(400)])
    assert_bad_input(lambda: contrastcat.explain(classifier, ["newword3 was good"], method="attcat"),
                     "explain: model", "its tokenizer has", "do not belong together")


def test_a_module_without_input_embeddings_is_refused(toy_dir):
    model, tokenizer = _loaded(toy_dir)

    class NoEmbeddings(type(model)):
        def get_input_embeddings(self):
            raise NotImplementedError

    model.__class__ = NoEmbeddings
    assert_bad_input(lambda: contrastcat.load_model(model, tokenizer), "has no input embeddings")


def test_library_token_ids_outside_the_vocabulary_are_refused_before_sanity(toy_dir, toy_library, tmp_path):
    crafted = tmp_path / "refs.h5"
    shutil.copyfile(toy_library.path, crafted)
    with h5py.File(crafted, "r+") as file:
        ids = file["classes/0/token_ids"][0].copy()
        ids[1] = 10**6
        file["classes/0/token_ids"][0] = ids
        file.attrs["fingerprint"] = content_fingerprint(file)
    records = tmp_path / "attr.jsonl"
    assert invoke("explain", toy_dir / "inputs.jsonl", "--refs", toy_library.path, "--method", "contrastcat",
                  "-o", records, "-q").exit_code == 0
    for command in (["explain", toy_dir / "inputs.jsonl", "--refs", crafted, "--method", "contrastcat",
                     "-o", tmp_path / "out.jsonl", "-q"],
                    ["sanity", records, "--refs", crafted, "-q", "--bootstrap", "0"]):
        result = invoke(*command)
        assert_one_line_error(result, "reference 0 of classes/0 holds token id 1000000, outside the vocabulary")


def _shuffled_tokenizer(toy_dir, tmp_path):
    """The model's own tokenizer with its ordinary words' ids shuffled: the same size, another vocabulary."""
    import json
    import random

    from transformers import PreTrainedTokenizerFast

    own = AutoTokenizer.from_pretrained(toy_dir / "model")
    data = json.loads(own.backend_tokenizer.to_str())
    vocab = data["model"]["vocab"]
    special = set(own.all_special_tokens)
    words = [token for token in vocab if token not in special]
    ids = [vocab[token] for token in words]
    random.Random(0).shuffle(ids)
    vocab.update(zip(words, ids))
    path = tmp_path / "shuffled.json"
    path.write_text(json.dumps(data))
    return PreTrainedTokenizerFast(tokenizer_file=str(path), **{f"{k}_token": v for k, v in own.special_tokens_map.items()})


def test_records_of_another_vocabulary_are_refused_against_the_models_own(toy_dir, toy_library, tmp_path):
    """The fingerprint names the weights; the tokens a record names must be what the model's
    tokenizer calls their ids, and a library's references must tokenise to the ids it stores."""
    model, _ = _loaded(toy_dir)
    shuffled = contrastcat.load_model(model, _shuffled_tokenizer(toy_dir, tmp_path))
    assert_bad_input(lambda: contrastcat.explain(shuffled, TEXTS, toy_library, method="contrastcat"),
                     "does not give the token ids stored for the library's references")
    records = contrastcat.explain(shuffled, TEXTS, method="attcat")
    path = tmp_path / "shuffled.jsonl"
    records.save(path)
    result = invoke("evaluate", path, "--model", toy_dir / "model", "--bootstrap", "0", "--min-tokens", "1", "-q")
    assert_one_line_error(result, "the records were made with another vocabulary")
    own = contrastcat.explain(contrastcat.load_model(str(toy_dir / "model")), TEXTS, method="attcat")
    own.save(tmp_path / "own.jsonl")
    assert invoke("evaluate", tmp_path / "own.jsonl", "--model", toy_dir / "model", "--bootstrap", "0", "--min-tokens", "1",
                  "-q").exit_code == 0


def test_buffers_made_under_inference_mode_and_a_compiled_model_are_one_line(toy_dir):
    with torch.inference_mode():
        model = AutoModelForSequenceClassification.from_pretrained(toy_dir / "model", attn_implementation="eager")
    _, tokenizer = _loaded(toy_dir)
    assert_bad_input(lambda: contrastcat.load_model(model, tokenizer), "inference_mode")
    own, _ = _loaded(toy_dir)
    assert_bad_input(lambda: contrastcat.load_model(torch.compile(own), tokenizer), "torch.compile", "_orig_mod")


def test_hooks_that_pass_for_transformers_and_a_replaced_forward_are_refused(toy_dir):
    import types

    model, tokenizer = _loaded(toy_dir)
    classifier = contrastcat.load_model(model, tokenizer)

    def disguised(module, inputs, output):
        return output

    disguised.__module__ = "transformers.fake"  # the name claims transformers; the code is here
    handle = model.bert.encoder.layer[1].register_forward_hook(disguised)
    assert_bad_input(lambda: contrastcat.explain(classifier, TEXTS, method="attcat"), "forward hook", "disguised")
    handle.remove()
    head = model.classifier
    head.forward = types.MethodType(lambda self, x: torch.nn.functional.linear(x, self.weight) * 0, head)
    assert_bad_input(lambda: contrastcat.explain(classifier, TEXTS, method="attcat"),
                     "has its forward replaced on classifier")
    del head.forward
    assert contrastcat.explain(classifier, TEXTS, method="attcat")


def test_inputs_with_a_pair_field_explained_as_single_texts_say_so(toy_dir, tmp_path):
    source = tmp_path / "pairs.jsonl"
    source.write_text('{"id": 1, "text": "a good film", "pair": "a fine plot"}\n'
                      '{"id": 2, "text": "a dull night", "pair": "a long wait"}\n')
    result = invoke("explain", source, "--model", toy_dir / "model", "--method", "attcat", "-o", tmp_path / "o.jsonl")
    assert result.exit_code == 0
    assert result.stderr.count("the inputs have a 'pair' field, but --pair-field is not given") == 1


# --- code that is not the library's, wherever it is put --------------------------------------
# Each of these ran while the records named the weights' fingerprint, the directory model's.


class _Negate(torch.nn.Module):
    """A hook that is a module: torch calls it through Module.__call__ (torch's code), but what runs is this forward."""

    def forward(self, module, inputs, output):
        return -output


class _CallableHook:
    def __call__(self, module, inputs, output):
        return -output


def test_a_hook_that_is_a_module_or_a_callable_object_is_told_by_the_code_it_runs(toy_dir):
    import functools

    model, tokenizer = _loaded(toy_dir)
    classifier = contrastcat.load_model(model, tokenizer)
    for hook, shown in ((_Negate(), "_Negate"), (functools.partial(_Negate()), "_Negate"),
                        (functools.partial(functools.partial(_CallableHook())), "_CallableHook")):
        handle = model.classifier.register_forward_hook(hook)
        assert_bad_input(lambda: contrastcat.explain(classifier, TEXTS, method="attcat"),
                         "explain: model", "forward hook", shown, "on classifier")
        assert_bad_input(lambda: contrastcat.load_model(model, tokenizer), "forward hook", shown)
        handle.remove()
    prune.l1_unstructured(model.classifier, "weight", amount=0.2)  # torch's own hook: fine
    assert contrastcat.load_model(model, tokenizer)


def test_state_dict_hooks_that_forge_the_fingerprint_are_refused(toy_dir):
    model, tokenizer = _loaded(toy_dir)
    fingerprint = contrastcat.load_model(model, tokenizer).fingerprint
    saved = {key: value.clone() for key, value in model.classifier.state_dict().items()}
    with torch.no_grad():
        model.classifier.weight.neg_()

    def forged(module, state, prefix, local_metadata):  # the weights as they were, not those that run
        state.update({prefix + key: value for key, value in saved.items()})

    handle = model.classifier._register_state_dict_hook(forged)
    assert weights_fingerprint(model) == fingerprint  # what it forges
    assert_bad_input(lambda: contrastcat.load_model(model, tokenizer),
                     "state_dict hook", "forged", "on classifier", "the fingerprint reads")
    handle.remove()
    with torch.no_grad():
        model.classifier.weight.neg_()
    classifier = contrastcat.load_model(model, tokenizer)
    for register in (model.register_state_dict_pre_hook, model.register_load_state_dict_post_hook,
                     model.register_load_state_dict_pre_hook):
        handle = register(lambda *arguments: None)
        assert_bad_input(lambda: contrastcat.explain(classifier, TEXTS, method="attcat"), "state_dict", "<lambda>")
        handle.remove()


def test_a_method_replaced_on_a_library_class_is_refused(toy_dir):
    import transformers.activations
    from transformers.models.bert import modeling_bert

    model, tokenizer = _loaded(toy_dir)
    classifier = contrastcat.load_model(model, tokenizer)
    linear = torch.nn.Linear.forward

    def negated(self, x):
        return -linear(self, x) if self is model.classifier else linear(self, x)

    attention = modeling_bert.BertSelfAttention.forward

    @functools.wraps(attention)  # claims, through __wrapped__, to be transformers' own
    def halved(self, *args, **kwargs):
        return (attention(self, *args, **kwargs)[0] * 0.5, *attention(self, *args, **kwargs)[1:])

    gelu = transformers.activations.GELUActivation
    patches = ((torch.nn.Linear, "forward", negated, "torch.nn.modules.linear.Linear.forward", "negated"),
               (modeling_bert.BertSelfAttention, "forward", halved, "BertSelfAttention.forward", "halved"),
               # transformers' own code, but not the class's: QuickGELU computed where GELU is named
               (gelu, "forward", transformers.activations.QuickGELUActivation.forward, "GELUActivation.forward",
                "QuickGELUActivation.forward"),
               (torch.nn.Module, "__getattr__", lambda self, name: None, "Module.__getattr__", "<lambda>"))
    for owner, attribute, replacement, *fragments in patches:
        _refused_while_patched(classifier, owner, attribute, replacement,
                               "explain: model", *fragments, "put the class's own back")
    assert contrastcat.explain(classifier, TEXTS, method="attcat")


def _refused_while_patched(classifier, owner, attribute, replacement, *fragments):
    """With ``owner.attribute`` (a class's or a module's) replaced, explain is refused naming
    ``fragments``; the original is put back whatever happens."""
    original = vars(owner)[attribute]
    setattr(owner, attribute, replacement)
    try:
        assert_bad_input(lambda: contrastcat.explain(classifier, TEXTS, method="attcat"), *fragments)
    finally:
        setattr(owner, attribute, original)


def test_a_function_replaced_in_a_library_module_is_refused(toy_dir):
    from transformers.models.bert import modeling_bert

    model, tokenizer = _loaded(toy_dir)
    classifier = contrastcat.load_model(model, tokenizer)
    attention, linear = modeling_bert.eager_attention_forward, torch.nn.functional.linear

    def sharper(module, query, key, value, attention_mask, scaling=None, **kwargs):
        return attention(module, query, key, value, attention_mask, scaling=(scaling or 1.0) * 4, **kwargs)

    for namespace, attribute, replacement, shown in (
            (modeling_bert, "eager_attention_forward", sharper, "sharper"),
            (torch.nn.functional, "linear", lambda x, w, b=None: -linear(x, w, b), "<lambda>")):
        _refused_while_patched(classifier, namespace, attribute, replacement,
                               f"{namespace.__name__}.{attribute} is not the library's own", shown)
    assert contrastcat.explain(classifier, TEXTS, method="attcat")


def test_call_machinery_replaced_on_a_module_instance_is_refused(toy_dir):
    model, tokenizer = _loaded(toy_dir)
    classifier = contrastcat.load_model(model, tokenizer)
    head = model.classifier
    call = head._call_impl
    for attribute, value, fragment in (("_call_impl", lambda *a, **k: -call(*a, **k), "has its _call_impl replaced"),
                                       ("_wrapped_call_impl", lambda *a, **k: -call(*a, **k), "_wrapped_call_impl"),
                                       ("_compiled_call_impl", lambda *a, **k: -call(*a, **k), "is compiled")):
        setattr(head, attribute, value)
        assert_bad_input(lambda: contrastcat.explain(classifier, TEXTS, method="attcat"), fragment, "classifier")
        delattr(head, attribute)
    # accelerate's device hook lets accelerate's forward replace the instance's; a hook of your own does not
    head._hf_hook, head.forward = object(), lambda x: -torch.nn.functional.linear(x, head.weight, head.bias)
    assert_bad_input(lambda: contrastcat.explain(classifier, TEXTS, method="attcat"),
                     "has its forward replaced on classifier")
    del head._hf_hook, head.forward
    layers = model.bert.encoder.layer
    layers[1]._hf_hook, layers[1].forward = object(), layers[0].forward  # layer 0's weights where layer 1's belong
    assert_bad_input(lambda: contrastcat.explain(classifier, TEXTS, method="attcat"),
                     "has its forward replaced on bert.encoder.layer.1")
    del layers[1]._hf_hook, layers[1].forward
    head.forward = head.forward  # the class's own, bound to the module (as accelerate leaves it): fine
    assert contrastcat.explain(classifier, TEXTS, method="attcat")
    del head.forward
    # a function a library module calls through an attribute (GELUActivation.act)
    activation = model.bert.encoder.layer[0].intermediate.intermediate_act_fn
    activation.act = lambda x: torch.relu(x)
    assert_bad_input(lambda: contrastcat.explain(classifier, TEXTS, method="attcat"),
                     "<lambda> in", "as act on bert.encoder.layer.0.intermediate.intermediate_act_fn")
    del activation.act
    activation.act = torch.nn.functional.gelu  # the library's own, as it was
    assert contrastcat.explain(classifier, TEXTS, method="attcat")


class _NegatingLinear(torch.nn.Linear):
    def forward(self, x):
        return -super().forward(x)


class _Head(torch.nn.Module):
    def __init__(self, weight, bias):
        super().__init__()
        self.weight, self.bias = torch.nn.Parameter(weight), torch.nn.Parameter(bias)

    def forward(self, x):
        return torch.nn.functional.linear(x, self.weight, self.bias).flip(-1)


@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")
def test_a_class_of_your_own_inside_a_transformers_model_is_refused(toy_dir):
    model, tokenizer = _loaded(toy_dir)
    classifier = contrastcat.load_model(model, tokenizer)
    head = model.classifier
    head.__class__ = _NegatingLinear
    assert_bad_input(lambda: contrastcat.explain(classifier, TEXTS, method="attcat"),
                     "classifier (_NegatingLinear) is of a class of your own", "replaces forward")
    head.__class__ = torch.nn.Linear
    model.classifier = _Head(head.weight.detach(), head.bias.detach())  # the same weights, the same names
    assert weights_fingerprint(model) == classifier.fingerprint
    assert_bad_input(lambda: contrastcat.load_model(model, tokenizer), "classifier (_Head) is of a class of your own")
    model.classifier, dropout = head, model.dropout
    model.dropout = torch.jit.script(torch.nn.Identity())  # compiled from code of anyone's
    assert_bad_input(lambda: contrastcat.load_model(model, tokenizer), "dropout is compiled with torch.jit")
    model.dropout = dropout
    model_class = type(model)

    class Negated(model_class):
        def forward(self, *args, **kwargs):
            output = super().forward(*args, **kwargs)
            output.logits = -output.logits
            return output

    class Described(model_class):  # adds a method of its own, replaces none: what runs is the library's
        def describe(self):
            return "mine"

    model.__class__ = Negated
    assert_bad_input(lambda: contrastcat.load_model(model, tokenizer), "the model itself (Negated)", "replaces forward")
    model.__class__ = Described
    assert contrastcat.explain(contrastcat.load_model(model, tokenizer), TEXTS, method="attcat")


def test_quantized_weights_are_one_line_not_a_traceback(toy_dir):
    model, tokenizer = _loaded(toy_dir)
    quantized = torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)
    assert_bad_input(lambda: contrastcat.load_model(quantized, tokenizer), "holds quantized weights")


class _PassesOn(torch.nn.Module):
    """What peft's PeftModel and LoraModel do: lookups they cannot answer are passed on to the
    model held as ``model`` — the very name Llama's classifier keeps its base model under."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self.model, name)

    def forward(self, *args, **kwargs):
        return self.model(*args, **kwargs)


def test_a_wrapper_that_passes_lookups_on_finds_a_decoders_layers():
    from contrastcat.testing import tiny

    model, tokenizer = tiny.build("llama", init_range=0.5)
    plain = contrastcat.explain(contrastcat.load_model(model, tokenizer), TEXTS, method="attcat")
    wrapped = contrastcat.explain(contrastcat.load_model(_PassesOn(model), tokenizer), TEXTS, method="attcat")
    assert [r.scores for r in wrapped] == [r.scores for r in plain]


def test_a_parametrization_of_your_own_is_named_and_torchs_own_load(toy_dir):
    # A parametrization computes the weight each time the module runs: one of the caller's own is
    # code the fingerprint cannot name (refused, saying so and how to bake it in); torch's own
    # weight_norm/spectral_norm are functions of stored tensors, as the hook-based weight_norm is.
    from torch.nn.utils import parametrizations, parametrize

    class Doubled(torch.nn.Module):
        def forward(self, weight):
            return 2 * weight

    model, tokenizer = _loaded(toy_dir)
    parametrize.register_parametrization(model.bert.encoder.layer[0].output.dense, "weight", Doubled())
    assert_bad_input(lambda: contrastcat.load_model(model, tokenizer),
                     "bert.encoder.layer.0.output.dense has a parametrization of 'weight' (", "Doubled",
                     "remove_parametrizations(module, 'weight', leave_parametrized=True)")
    parametrize.remove_parametrizations(model.bert.encoder.layer[0].output.dense, "weight", leave_parametrized=True)
    doubled = contrastcat.load_model(model, tokenizer)
    assert doubled.fingerprint != contrastcat.load_model(*_loaded(toy_dir)).fingerprint  # baked in: named
    for norm in (parametrizations.weight_norm, parametrizations.spectral_norm):
        model, tokenizer = _loaded(toy_dir)
        norm(model.bert.encoder.layer[0].output.dense)
        assert contrastcat.explain(contrastcat.load_model(model, tokenizer), TEXTS[:1], method="attcat")[0].tokens


def test_a_wrapper_of_your_own_is_told_where_its_classifier_is(toy_dir):
    model, tokenizer = _loaded(toy_dir)

    class Wrapper(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, **inputs):
            return self.inner(**inputs)

    assert_bad_input(lambda: contrastcat.load_model(Wrapper(model), tokenizer),
                     "not a transformers model (it has no config); yours holds one at .inner: pass that (model.inner)")
    Wrapper.config = model.config  # one that passes for a transformers model, but holds no embeddings itself
    assert_bad_input(lambda: contrastcat.load_model(Wrapper(model), tokenizer),
                     "has no input embeddings", "yours holds one at .inner: pass that (model.inner)")
    assert_bad_input(lambda: contrastcat.load_model(torch.nn.Linear(2, 2), tokenizer), "it has no config)")


def test_one_layer_module_used_twice_is_refused_at_loading(toy_dir):
    model, tokenizer = _loaded(toy_dir)
    model.bert.encoder.layer[1] = model.bert.encoder.layer[0]
    assert_bad_input(lambda: contrastcat.load_model(model, tokenizer),
                     "layer 1 at 'encoder.layer' is the same module as layer 0")


def test_a_buffer_not_saved_with_the_weights_changed_in_place_is_refused(toy_dir):
    # position_ids is left out of the state dict, so out of the fingerprint: reversed, it moves
    # every prediction under the directory's fingerprint. Compared with what the embeddings'
    # class makes from the config, at loading and at the next call.
    model, tokenizer = _loaded(toy_dir)
    classifier = contrastcat.load_model(model, tokenizer)
    before = contrastcat.explain(classifier, TEXTS, method="attcat")
    with torch.no_grad():
        model.bert.embeddings.position_ids.copy_(model.bert.embeddings.position_ids.flip(-1))
    fragment = "its buffer bert.embeddings.position_ids is not what BertEmbeddings makes from the config"
    assert_bad_input(lambda: contrastcat.explain(classifier, TEXTS, method="attcat"), "explain: ", fragment)
    assert_bad_input(lambda: contrastcat.load_model(model, tokenizer), fragment)
    with torch.no_grad():
        model.bert.embeddings.position_ids.copy_(model.bert.embeddings.position_ids.flip(-1))  # put back
    assert [r.scores for r in contrastcat.explain(classifier, TEXTS, method="attcat")] == [r.scores for r in before]
    half, tokenizer = _loaded(toy_dir)
    assert contrastcat.load_model(half.to(torch.bfloat16), tokenizer).fingerprint  # cast buffers compare equal


SETTING_EDITS = {
    "bert": (lambda m: setattr(m.bert.embeddings.LayerNorm, "eps", 10.0), "bert.embeddings.LayerNorm.eps"),
    "bert-scaling": (lambda m: setattr(m.bert.encoder.layer[0].attention.self, "scaling", 5.0),
                     "bert.encoder.layer.0.attention.self.scaling"),
    "llama": (lambda m: setattr(m.model.rotary_emb, "attention_scaling", 3.0), "model.rotary_emb.attention_scaling"),
    "modernbert": (lambda m: setattr(m.config, "local_attention", 2), "config.local_attention"),
    "mistral": (lambda m: setattr(m.config, "sliding_window", 2), "config.sliding_window"),
    "deberta-v2": (lambda m: setattr(m.deberta.encoder.layer[0].attention.self, "pos_att_type", ["c2p"]),
                   "deberta.encoder.layer.0.attention.self.pos_att_type"),
    "bert-activation": (lambda m: setattr(m.bert.encoder.layer[0].intermediate.intermediate_act_fn, "act", torch.tanh),
                        "bert.encoder.layer.0.intermediate.intermediate_act_fn.act"),
}


@pytest.mark.parametrize("edit", sorted(SETTING_EDITS))
def test_a_setting_edited_after_loading_is_refused_and_put_back_is_taken(edit):
    """A LayerNorm's eps, an attention's scaling, a rotary scale or a config's window change the
    scores (these did) while the weights, and so the fingerprint, stay the same: refused at the
    next call, naming the setting; put back, the model is explained again as before."""
    family = edit.removesuffix("-scaling").removesuffix("-activation")
    change, where = SETTING_EDITS[edit]
    model, tokenizer = tiny.build(family, init_range=0.5)
    classifier = contrastcat.load_model(model, tokenizer)
    texts = ["the film was good and great the film was good and great the plot", "a bad boring plot"]
    before = [r.scores for r in contrastcat.explain(classifier, texts, method="attcat")]
    owner, name = (model.config, where.rsplit(".", 1)[1]) if where.startswith("config.") else (
        model.get_submodule(where.rsplit(".", 1)[0]), where.rsplit(".", 1)[1])
    old = getattr(owner, name)
    change(model)
    assert_bad_input(lambda: contrastcat.explain(classifier, texts, method="attcat"), "explain: ", f"{where} of model")
    setattr(owner, name, old)
    assert [r.scores for r in contrastcat.explain(classifier, texts, method="attcat")] == before


@pytest.mark.parametrize("family", sorted(tiny.TINY))
def test_explaining_twice_leaves_every_familys_settings_as_they_were(family):
    """The passes switch attention and mode and put them back: the settings check must never
    refuse a model nobody touched, in any family."""
    model, tokenizer = tiny.build(family)
    classifier = contrastcat.load_model(model, tokenizer)
    first = [r.scores for r in contrastcat.explain(classifier, ["the film was good", "a bad plot"], method="attcat")]
    again = [r.scores for r in contrastcat.explain(classifier, ["the film was good", "a bad plot"], method="attcat")]
    assert first == again


def test_class_names_renamed_after_loading_change_nothing_and_are_taken(toy_dir):
    """Class names are read once, at loading: renamed afterwards in config.id2label they change
    no record, so the settings check leaves them be."""
    model, tokenizer = _loaded(toy_dir)
    classifier = contrastcat.load_model(model, tokenizer)
    before = contrastcat.explain(classifier, TEXTS, method="attcat")
    model.config.id2label = {index: f"other-{index}" for index in model.config.id2label}
    after = contrastcat.explain(classifier, TEXTS, method="attcat")
    assert [(r.scores, r.target_name) for r in after] == [(r.scores, r.target_name) for r in before]


def test_tags_and_a_checkpoint_saved_after_loading_are_taken(tmp_path):
    """Tagging a model for its card and saving a checkpoint (which fills in the config's
    architectures and dtype) change no output: a lent model is still explained after them."""
    model, tokenizer = tiny.build("bert")
    classifier = contrastcat.load_model(model, tokenizer)
    before = [r.scores for r in contrastcat.explain(classifier, TEXTS, method="attcat")]
    model.add_model_tags(["my-finetune"])
    model.save_pretrained(tmp_path / "checkpoint")
    assert [r.scores for r in contrastcat.explain(classifier, TEXTS, method="attcat")] == before


def _validation_loss(model, tokenizer):
    """What a notebook does between two explanations: a loss, no gradients (transformers fills in
    ``config.problem_type`` from the labels' dtype the first time)."""
    batch = tokenizer(["a bad plot"], return_tensors="pt")
    with torch.no_grad():
        model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], labels=torch.tensor([0]))


HARMLESS = {
    "loss with integer labels": _validation_loss,
    "config.output_attentions": lambda m, t: setattr(m.config, "output_attentions", True),
    "config.output_hidden_states": lambda m, t: setattr(m.config, "output_hidden_states", True),
    "config.use_cache": lambda m, t: setattr(m.config, "use_cache", not m.config.use_cache),
    "a dropout rate (no pass runs in training mode)": lambda m, t: setattr(m.bert.embeddings.dropout, "p", 0.5),
    "config's dropout rates": lambda m, t: setattr(m.config, "hidden_dropout_prob", 0.9),
    "resize_token_embeddings to the same size": lambda m, t: m.resize_token_embeddings(
        m.get_input_embeddings().num_embeddings),
    "a new attribute of the user's own": lambda m, t: setattr(m, "note", "validated on 2026-11-26"),
}


@pytest.mark.parametrize("action", sorted(HARMLESS))
def test_what_changes_no_output_is_taken_by_the_settings_check(action):
    """Each of these left the weights and the scores as they were, yet was refused as a setting
    "the outputs change with": the check compares only what a pass in eval mode computes with,
    as it was at loading (an attribute added since is not one the model's code was written to read)."""
    model, tokenizer = tiny.build("bert", init_range=0.5)
    classifier = contrastcat.load_model(model, tokenizer)
    before = [r.scores for r in contrastcat.explain(classifier, TEXTS, method="attcat")]
    HARMLESS[action](model, tokenizer)
    assert [r.scores for r in contrastcat.explain(classifier, TEXTS, method="attcat")] == before


def test_a_loss_computed_on_a_llama_model_is_taken_too():
    model, tokenizer = tiny.build("llama", init_range=0.5)
    classifier = contrastcat.load_model(model, tokenizer)
    before = [r.scores for r in contrastcat.explain(classifier, TEXTS, method="attcat")]
    _validation_loss(model, tokenizer)
    assert model.config.problem_type == "single_label_classification"
    assert [r.scores for r in contrastcat.explain(classifier, TEXTS, method="attcat")] == before


def test_a_model_made_multi_label_since_loading_is_refused():
    """A forward with float labels tells transformers the model is multi-label (sigmoids, not a
    softmax): no longer the single-label classifier it was loaded as, so refused by name."""
    model, tokenizer = tiny.build("bert", init_range=0.5)
    classifier = contrastcat.load_model(model, tokenizer)
    batch = tokenizer(["a bad plot"], return_tensors="pt")
    with torch.no_grad():
        model(**batch, labels=torch.zeros(1, model.config.num_labels))
    assert model.config.problem_type == "multi_label_classification"
    assert_bad_input(lambda: contrastcat.explain(classifier, TEXTS, method="attcat"), "now says problem_type 'multi_label_classification'")


def _swap_first(model, names, replacement):
    for parent in model.modules():
        for key, child in parent._modules.items():
            if type(child).__name__ in names:
                parent._modules[key] = replacement
                return parent, key, child
    raise AssertionError(f"no {names} in the model")


@pytest.mark.parametrize("family, names", [
    ("bert", ("Dropout",)), ("bert", ("Tanh",)), ("llama", ("SiLUActivation", "SiLU")), ("gpt2", ("NewGELUActivation",)),
])
def test_a_module_swapped_for_one_without_weights_is_refused(family, names):
    """A dropout or an activation replaced by another parameterless module changes the scores
    (by up to 1.0 here) with no weight and no setting of its own changed: refused, naming it."""
    model, tokenizer = tiny.build(family, init_range=0.5)
    classifier = contrastcat.load_model(model, tokenizer)
    before = [r.scores for r in contrastcat.explain(classifier, TEXTS, method="attcat")]
    parent, key, old = _swap_first(model, names, torch.nn.Hardtanh(-0.05, 0.05))
    assert_bad_input(lambda: contrastcat.explain(classifier, TEXTS, method="attcat"), "is a torch.nn.modules.activation.Hardtanh now, not a")
    parent._modules[key] = old
    assert [r.scores for r in contrastcat.explain(classifier, TEXTS, method="attcat")] == before


@pytest.mark.parametrize("family", ["gpt2", "llama"])
def test_a_config_value_added_since_loading_is_compared_too(family):
    """``config.is_causal`` is read with a default (absent at loading): set to False it makes a
    decoder's attention bidirectional, and the scores change; refused by name."""
    model, tokenizer = tiny.build(family, init_range=0.5)
    classifier = contrastcat.load_model(model, tokenizer)
    contrastcat.explain(classifier, TEXTS, method="attcat")
    model.config.is_causal = False
    assert_bad_input(lambda: contrastcat.explain(classifier, TEXTS, method="attcat"), "config.is_causal of model")


def test_a_module_attached_to_the_model_object_is_left_out_and_one_removed_inside_is_named():
    """A probe attached to the model object itself (never called by its forward) is the user's,
    as any attribute added there; a module removed from inside is named as removed."""
    model, tokenizer = tiny.build("bert", init_range=0.5)
    classifier = contrastcat.load_model(model, tokenizer)
    before = [r.scores for r in contrastcat.explain(classifier, TEXTS, method="attcat")]
    model.my_probe = torch.nn.Identity()
    model.my_hooks = torch.nn.ModuleDict()
    assert [r.scores for r in contrastcat.explain(classifier, TEXTS, method="attcat")] == before
    del model.bert.pooler._modules["activation"]
    assert_bad_input(lambda: contrastcat.explain(classifier, TEXTS, method="attcat"),
                     "module bert.pooler.activation of model", "was removed since it was loaded")


@pytest.mark.parametrize("edit", ["normalizer", "post_processor", "vocabulary", "truncation_side"])
def test_a_tokenizer_edited_after_loading_is_refused_and_taken_back(edit):
    """The tokenizer's pipeline and settings as loaded: its normalizer removed (the words became
    [UNK]), its post-processor removed (no [CLS]/[SEP]), two vocabulary entries swapped, or its
    truncation side turned changed a text's ids under the same fingerprint, and were explained.
    Put back, the classifier is taken again; tokenizing many texts in between (which sets the
    backend's truncation and padding each call) is no change."""
    import json

    from tokenizers import Tokenizer, normalizers, processors

    model, tokenizer = tiny.build("bert", init_range=0.5)
    classifier = contrastcat.load_model(model, tokenizer)
    before = contrastcat.explain(classifier, ["The Film was GOOD", "a dull plot"], method="attcat", max_length=8)
    saved = tokenizer.backend_tokenizer.to_str(), tokenizer.truncation_side
    if edit == "normalizer":
        tokenizer.backend_tokenizer.normalizer = normalizers.Sequence([])
    elif edit == "post_processor":
        tokenizer.backend_tokenizer.post_processor = processors.Sequence([])
    elif edit == "vocabulary":
        document = json.loads(saved[0])
        vocabulary = document["model"]["vocab"]
        vocabulary["good"], vocabulary["film"] = vocabulary["film"], vocabulary["good"]
        tokenizer._tokenizer = Tokenizer.from_str(json.dumps(document))
    else:
        tokenizer.truncation_side = "left"
    assert_bad_input(
        lambda: contrastcat.explain(classifier, ["The Film was GOOD"], method="attcat"),
        "explain: the tokenizer of model", "changed since it was loaded",
    )
    tokenizer._tokenizer, tokenizer.truncation_side = Tokenizer.from_str(saved[0]), saved[1]
    again = contrastcat.explain(classifier, ["The Film was GOOD", "a dull plot"], method="attcat", max_length=8)
    assert [r.to_dict() for r in again] == [r.to_dict() for r in before]


def test_tokenizer_edits_that_change_no_id_are_taken_and_input_names_are_not():
    """The pad token set after loading (what batched pipelines of decoder models need) changes
    nothing here (padding uses the id chosen at loading): taken, the same records. Dropping
    token_type_ids from ``model_input_names`` stops segment ids reaching a pair model: refused."""
    model, tokenizer = tiny.build("gpt2", init_range=0.5)
    classifier = contrastcat.load_model(model, tokenizer)
    before = contrastcat.explain(classifier, ["a good film", "dull"], method="attcat")
    tokenizer.pad_token = tokenizer.eos_token
    after = contrastcat.explain(classifier, ["a good film", "dull"], method="attcat")
    assert [r.to_dict() for r in after] == [r.to_dict() for r in before]
    model, tokenizer = tiny.build("bert", init_range=0.5)
    classifier = contrastcat.load_model(model, tokenizer)
    contrastcat.explain(classifier, [("a man plays", "a person plays")], method="attcat")
    tokenizer.model_input_names = ["input_ids", "attention_mask"]
    assert_bad_input(
        lambda: contrastcat.explain(classifier, [("a man plays", "a person plays")], method="attcat"),
        "the tokenizer of model", "changed since it was loaded",
    )


def test_the_tokenizer_digest_leaves_out_truncation_and_padding_in_either_order():
    """What each call sets on a fast tokenizer's backend (truncation, padding) is left out whether
    the serialization puts them first (read past cheaply) or elsewhere (read whole); the rest counts."""
    import json

    from contrastcat.models.borrowed import _pipeline_text

    _, tokenizer = tiny.build("bert")
    backend = tokenizer.backend_tokenizer
    plain = backend.to_str()
    backend.enable_truncation(5)
    backend.enable_padding(length=7)
    cutting = backend.to_str()
    assert cutting != plain and _pipeline_text(cutting) == _pipeline_text(plain)
    document = json.loads(cutting)
    reordered = {key: document[key] for key in [k for k in document if k not in ("truncation", "padding")]}
    reordered.update(truncation=document["truncation"], padding=document["padding"])
    moved = json.dumps(reordered)
    document["normalizer"] = None
    assert _pipeline_text(moved) == _pipeline_text(json.dumps({**reordered, "truncation": None, "padding": None}))
    assert _pipeline_text(moved) != _pipeline_text(json.dumps(document))


def _compiled_here(x: torch.Tensor, size: int) -> torch.Tensor:
    return torch.sign(x) * size


def _forged(x: torch.Tensor, size: int) -> torch.Tensor:
    return x * 0


@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")
def test_a_library_function_compiled_where_it_is_defined_runs_its_own_code(tmp_path, monkeypatch):
    """transformers 5.17's DeBERTa (not 5.24's) defines module functions under ``@torch.jit.script``:
    what runs is compiled from the library's own file, so it is the library's (it was refused,
    and with it every DeBERTa model in memory). A script of anyone else's code is still not."""
    from contrastcat.models.provenance import _Code, _shown

    package = tmp_path / "their_library"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "layers.py").write_text(
        "import torch\n\n\n@torch.jit.script\ndef bucket(x: torch.Tensor, size: int) -> torch.Tensor:\n"
        "    return torch.sign(x) * size\n\n\ndef plain(x: torch.Tensor, size: int) -> torch.Tensor:\n"
        "    return x * size\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    from their_library import layers

    own = (str(package.resolve()) + "/",)
    assert layers.bucket(torch.tensor([-2.0, 3.0]), 4).tolist() == [-4.0, 4.0]  # compiled and running
    assert _Code(own).foreign(layers.bucket) is None
    assert _Code(own).foreign(layers.plain) is None
    mine = torch.jit.script(_compiled_here)
    assert _shown(_Code(own).foreign(mine)).startswith("_compiled_here in ")  # named by the file it came from
    mine._torchdynamo_inline = layers.plain  # says it was made from the library's function: it was not
    assert _Code(own).foreign(mine) is mine
    assert _shown(mine) == "a torch.jit script, tests.api.test_in_memory_hostile._compiled_here"
    assert _Code(()).foreign(layers.bucket) is not None  # a library's only when its folder is the packages'
    # Every attribute the names are read from forged: the script of this file's code says it was made
    # from a copy of the library's function under the script's own name. torch's record of what it
    # compiled from that copy (nothing) is what tells.
    _forged.__module__, _forged.__qualname__, _forged.__name__ = "mine", "anything", "anything"
    forged = torch.jit.script(_forged)
    alias = types.FunctionType(layers.plain.__code__, layers.plain.__globals__, "anything")
    alias.__module__, alias.__qualname__ = "mine", "anything"
    forged._torchdynamo_inline = alias
    assert forged.qualified_name == "__torch__.mine.anything"
    assert _Code(own).foreign(forged) is forged
