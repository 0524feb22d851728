"""Tiny classifiers of every supported family, built here with no download.

No checkpoint of RoBERTa, GPT-2, Llama, ... is available offline, so each
family is built from its own HuggingFace config class, with a tokenizer
trained locally (``tokenizers``) on the planted-keyword corpus of
``contrastcat.testing.toy`` and laid out the way the family's real tokenizer is:
which special tokens it adds ([CLS] x [SEP], <s> x </s>, <s> x, or none as
GPT-2), whether it has a pad token (GPT-2 and Llama have none; Qwen2 pads
with its EOS), byte-level BPE or a SentencePiece-style vocabulary.

``build(family, seed)`` gives a random model (the per-family tests);
``train_tiny`` trains one on the toy task (the keyword tests, ``toy-*``
aliases). One row of ``TINY`` per family.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

import torch

from . import toy

BYTE_BPE = "byte-bpe"  # GPT-2, RoBERTa, ModernBERT, Qwen2
METASPACE_BPE = "metaspace-bpe"  # SentencePiece-style: Llama, Mistral, ALBERT, DeBERTa-v2, XLM-R
WORDPIECE = "wordpiece"  # BERT, DistilBERT, ELECTRA

BERT_SPECIALS = {"pad": "[PAD]", "unk": "[UNK]", "cls": "[CLS]", "sep": "[SEP]", "mask": "[MASK]"}
ROBERTA_SPECIALS = {"bos": "<s>", "pad": "<pad>", "eos": "</s>", "unk": "<unk>", "mask": "<mask>", "cls": "<s>", "sep": "</s>"}
GPT2_SPECIALS = {"bos": "<|endoftext|>", "eos": "<|endoftext|>", "unk": "<|endoftext|>"}
LLAMA_SPECIALS = {"unk": "<unk>", "bos": "<s>", "eos": "</s>"}
QWEN_SPECIALS = {"eos": "<|endoftext|>", "pad": "<|endoftext|>", "unk": "<|endoftext|>"}

VOCAB_SIZE = 320  # every toy word becomes one token; byte-level needs its 256 bytes first
POSITIONS = 64


@dataclass(frozen=True)
class TinyFamily:
    model_type: str
    config: Callable[..., object]  # (vocab_size, hidden, layers, heads, token ids) -> config
    vocabulary: str
    specials: dict[str, str]
    template: tuple[str, str | None] | None  # tokens added around a text: (before, after), or None


def _ids(tokenizer, specials: dict[str, str]) -> dict[str, int | None]:
    found = {role: tokenizer.convert_tokens_to_ids(token) for role, token in specials.items()}
    return {f"{role}_token_id": found.get(role) for role in ("pad", "bos", "eos", "cls", "sep")}


def _bert_like(cls_name: str, position_offset: int = 0, **fixed):
    def make(vocab_size, hidden, layers, heads, ids):
        import transformers

        return getattr(transformers, cls_name)(
            vocab_size=vocab_size, hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=heads,
            intermediate_size=hidden * 2, max_position_embeddings=POSITIONS + position_offset, **fixed, **ids,
        )

    return make


def _distilbert(vocab_size, hidden, layers, heads, ids):
    from transformers import DistilBertConfig

    return DistilBertConfig(
        vocab_size=vocab_size, dim=hidden, n_layers=layers, n_heads=heads, hidden_dim=hidden * 2,
        max_position_embeddings=POSITIONS, pad_token_id=ids["pad_token_id"],
    )


def _gpt2(vocab_size, hidden, layers, heads, ids):
    from transformers import GPT2Config

    return GPT2Config(vocab_size=vocab_size, n_embd=hidden, n_layer=layers, n_head=heads, n_positions=POSITIONS, **ids)


def _decoder(cls_name: str, **fixed):
    def make(vocab_size, hidden, layers, heads, ids):
        import transformers

        return getattr(transformers, cls_name)(
            vocab_size=vocab_size, hidden_size=hidden, intermediate_size=hidden * 2, num_hidden_layers=layers,
            num_attention_heads=heads, num_key_value_heads=max(1, heads // 2), max_position_embeddings=POSITIONS,
            tie_word_embeddings=False, **fixed, **ids,
        )

    return make


TINY: dict[str, TinyFamily] = {
    row.model_type: row
    for row in (
        TinyFamily("bert", _bert_like("BertConfig"), WORDPIECE, BERT_SPECIALS, ("[CLS]", "[SEP]")),
        TinyFamily("distilbert", _distilbert, WORDPIECE, BERT_SPECIALS, ("[CLS]", "[SEP]")),
        TinyFamily(
            "roberta", _bert_like("RobertaConfig", position_offset=2, type_vocab_size=1), BYTE_BPE,
            ROBERTA_SPECIALS, ("<s>", "</s>"),
        ),
        TinyFamily(
            "xlm-roberta", _bert_like("XLMRobertaConfig", position_offset=2, type_vocab_size=1), METASPACE_BPE,
            ROBERTA_SPECIALS, ("<s>", "</s>"),
        ),
        TinyFamily("albert", _bert_like("AlbertConfig", embedding_size=16), METASPACE_BPE, BERT_SPECIALS, ("[CLS]", "[SEP]")),
        TinyFamily("electra", _bert_like("ElectraConfig", embedding_size=24), WORDPIECE, BERT_SPECIALS, ("[CLS]", "[SEP]")),
        TinyFamily(
            "deberta-v2",
            _bert_like(
                "DebertaV2Config", relative_attention=True, position_biased_input=False,
                pos_att_type=["p2c", "c2p"], max_relative_positions=-1, position_buckets=16,
            ),
            METASPACE_BPE, BERT_SPECIALS, ("[CLS]", "[SEP]"),
        ),
        TinyFamily(
            "modernbert", _bert_like("ModernBertConfig", global_attn_every_n_layers=2, local_attention=16),
            BYTE_BPE, BERT_SPECIALS, ("[CLS]", "[SEP]"),
        ),
        TinyFamily("gpt2", _gpt2, BYTE_BPE, GPT2_SPECIALS, None),
        TinyFamily("llama", _decoder("LlamaConfig"), METASPACE_BPE, LLAMA_SPECIALS, ("<s>", None)),
        TinyFamily("mistral", _decoder("MistralConfig", sliding_window=None), METASPACE_BPE, LLAMA_SPECIALS, ("<s>", None)),
        TinyFamily("qwen2", _decoder("Qwen2Config", use_sliding_window=False), BYTE_BPE, QWEN_SPECIALS, None),
    )
}


# Families whose tokenizers give token type ids (segment ids), as their real ones do.
TYPED = ("bert", "albert", "electra", "deberta-v2")


def corpus_texts() -> list[str]:
    """What the tokenizers learn their vocabulary from: every toy word, in sentences."""
    words = list(toy.FILLER + toy.POSITIVE + toy.NEGATIVE)
    sentences = [" ".join(words)] + words  # each word inside a sentence and at its start
    sentences += [example.text for example in toy.make_examples(400, seed=99)]
    return sentences


def wordpiece_vocabulary(specials: list[str]) -> dict[str, int]:
    """Special tokens, every toy word, then single characters (alone and as ##pieces)."""
    words = sorted({word for text in corpus_texts() for word in text.split()})
    characters = sorted({c for word in words for c in word} | set("abcdefghijklmnopqrstuvwxyz0123456789.,!?'"))
    tokens = list(dict.fromkeys([*specials, *words, *characters, *(f"##{c}" for c in characters)]))
    return {token: index for index, token in enumerate(tokens)}


def make_tokenizer(model_type: str):
    """A fast tokenizer laid out like the family's own, trained on the toy corpus."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    row = TINY[model_type]
    specials = list(dict.fromkeys(row.specials.values()))
    if row.vocabulary == WORDPIECE:
        # Written out, not trained: the WordPiece trainer numbers its vocabulary
        # differently from one run to the next, and a test model must not change.
        tokenizer = Tokenizer(models.WordPiece(wordpiece_vocabulary(specials), unk_token=row.specials["unk"]))
        tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
        tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tokenizer.decoder = decoders.WordPiece()
        trainer = None
    elif row.vocabulary == BYTE_BPE:
        tokenizer = Tokenizer(models.BPE())
        tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tokenizer.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(
            vocab_size=VOCAB_SIZE + 320, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
        )
    else:
        tokenizer = Tokenizer(models.BPE(unk_token=row.specials["unk"]))
        tokenizer.pre_tokenizer = pre_tokenizers.Metaspace()
        tokenizer.decoder = decoders.Metaspace()
        trainer = trainers.BpeTrainer(vocab_size=VOCAB_SIZE, special_tokens=specials)
    if trainer is not None:
        tokenizer.train_from_iterator(corpus_texts(), trainer)
    if row.template is not None:
        before, after = row.template
        single = " ".join(part for part in (before, "$A", after) if part)
        # Each family's own pair template: BERT's [CLS] A [SEP] B [SEP] with B typed 1,
        # RoBERTa's <s> A </s></s> B </s> with no types, a decoder's <s> A B.
        if row.model_type in TYPED:
            pair = f"{before} $A {after} $B:1 {after}:1"
        elif after == "</s>":
            pair = f"{before} $A {after} {after} $B {after}"
        else:
            pair = " ".join(part for part in (before, "$A", after, "$B:1", after) if part)
        used = [token for token in (before, after) if token]
        tokenizer.post_processor = processors.TemplateProcessing(
            single=single, pair=pair, special_tokens=[(t, tokenizer.token_to_id(t)) for t in dict.fromkeys(used)]
        )
    if row.vocabulary == BYTE_BPE:
        # ByteLevel offsets include the space before a word: trim them to the word.
        steps = [processors.ByteLevel(trim_offsets=True)]
        if tokenizer.post_processor is not None:
            steps.append(tokenizer.post_processor)
        tokenizer.post_processor = processors.Sequence(steps)
    names = {f"{role}_token": token for role, token in row.specials.items()}
    inputs = ["input_ids", "token_type_ids", "attention_mask"] if row.model_type in TYPED else ["input_ids", "attention_mask"]
    return PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, model_max_length=POSITIONS, model_input_names=inputs, **names
    )


def build(
    model_type: str,
    seed: int = 0,
    hidden: int = 32,
    layers: int = 2,
    heads: int = 4,
    tokenizer=None,
    init_range: float | None = None,
):
    """(random model, tokenizer) of the family, three classes as in the toy task.

    ``init_range``: the weights' initial standard deviation. HF's default (0.02)
    makes a random [CLS]-pooled encoder predict one class for every input;
    about 0.5 gives predictions that vary with the input, as tests need.
    """
    from transformers import AutoModelForSequenceClassification

    tokenizer = tokenizer or make_tokenizer(model_type)
    row = TINY[model_type]
    config = row.config(len(tokenizer), hidden, layers, heads, _ids(tokenizer, row.specials))
    config.num_labels = len(toy.LABELS)
    config.id2label = dict(enumerate(toy.LABELS))
    config.label2id = {name: i for i, name in enumerate(toy.LABELS)}
    if init_range is not None:
        config.initializer_range = init_range
    torch.manual_seed(seed)
    model = AutoModelForSequenceClassification.from_config(config, attn_implementation="eager")
    return model.eval(), tokenizer


def train_tiny(
    model_type: str, examples: list[toy.ToyExample], training: toy.Training = toy.Training(epochs=2),
    hidden: int = 64, layers: int = 2,
):
    """(model, tokenizer) of the family trained on the planted-keyword task (deterministic per seed).

    Training batches are padded exactly as the pipeline pads (right padding,
    the classifier's pad token, decoders pooled at the last real token), so
    what the model learns is what it is explained with.
    """
    from ..models import wrap_classifier

    model, tokenizer = build(model_type, seed=training.seed, hidden=hidden, layers=layers)
    classifier = wrap_classifier(model, tokenizer, name=f"toy-{model_type}")
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=training.lr)
    encoded = tokenizer([e.text for e in examples], truncation=True, max_length=POSITIONS)["input_ids"]
    labels = torch.tensor([e.label for e in examples])
    order = list(range(len(examples)))
    rng = random.Random(training.seed)
    for _ in range(training.epochs):
        rng.shuffle(order)
        train_epoch(classifier, encoded, labels, order, optimizer, training.batch_size)
    model.eval()
    return model, tokenizer


def train_epoch(classifier, sequences, labels: torch.Tensor, order: list[int], optimizer, batch_size: int = 32) -> None:
    """One pass over ``order`` in batches, padded and pooled as the pipeline pads and pools
    (``models.forward.classify``), so what a model learns is what it is explained with."""
    from ..models import classify
    from ..models.tokens import pad

    for start in range(0, len(order), batch_size):
        batch = order[start : start + batch_size]
        ids, mask = pad([sequences[i] for i in batch], classifier.pad_id, classifier.device)
        logits, _ = classify(classifier, mask, mask.sum(dim=1), input_ids=ids)
        loss = torch.nn.functional.cross_entropy(logits, labels[batch])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def trained_classifier_and_library(model_type: str, seed: int, path):
    """A family's tiny model trained on 2,000 toy sentences, wrapped, with a 30-reference
    library built from 600 others at ``path``: what the keyword tests and the
    families benchmark explain with."""
    from ..library import BuildSettings, RefLibrary, SelectionSettings, build_library
    from ..records.data import LabelledData
    from ..models import wrap_classifier

    model, tokenizer = train_tiny(model_type, toy.make_examples(2000, seed=0), toy.Training(seed, epochs=2))
    classifier = wrap_classifier(model, tokenizer, name=f"toy-{model_type}")
    references = toy.make_examples(600, seed=1)
    build_library(
        classifier, LabelledData([e.text for e in references], [e.label for e in references], "toy"), path,
        BuildSettings(selection=SelectionSettings(k=30, keep=30)),
    )
    return classifier, RefLibrary(path)
