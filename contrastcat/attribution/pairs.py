"""Inputs as token sequences: single texts, or sentence pairs kept apart from them.

A run explains one kind or the other: the classifier it uses for pairs (``Classifier.paired``)
gives each pass segment ids, where the model reads them, by walking the pair template
(``models.segments``); a pair whose own segment ids that walk would not give is a bad line.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from ..errors import BadInput
from ..models import Classifier
from ..models.segments import SeparatorInText, check_types
from ..models.tokens import TokenizedText, tokenize
from ..records.inputs import InputRow

__all__ = ["checked_pairs", "tokenize_rows"]


def tokenize_rows(classifier: Classifier, rows: Sequence[InputRow], max_length: int, source: str) -> list[TokenizedText]:
    """The rows' tokens; sentence pairs (``classifier.paired()``) as the tokenizer joins them,
    each checked to keep its segment ids when tokens are removed (``models.segments``)."""
    pairs = [row.pair is not None for row in rows]
    if not classifier.pairs:
        if any(pairs):
            row = rows[pairs.index(True)]
            raise BadInput(f"{source}:{row.line}: a sentence pair among single texts: explain pairs and single texts apart")
        return tokenize(classifier.tokenizer, [row.text for row in rows], max_length, classifier.empty_input)
    if not all(pairs):
        row = rows[pairs.index(False)]
        raise BadInput(f"{source}:{row.line}: a single text among sentence pairs: explain pairs and single texts apart")
    texts = tokenize(
        classifier.tokenizer, [row.text for row in rows], max_length, classifier.empty_input, [row.pair for row in rows]
    )
    if classifier.pair_types is not None:
        for row, text in zip(rows, texts):
            check_types(classifier.pair_types, text.ids, text.types, f"{source}:{row.line}")
    return texts


def checked_pairs(
    classifier: Classifier, rows: Iterable[InputRow], max_length: int, source: str, skipped: list[str] | None = None
) -> Iterator[InputRow]:
    """The rows, each sentence pair checked to keep its segment ids when tokens go (a separator typed
    into a text would shift them): a bad one raises, or with ``skipped`` is listed there and left
    out. For a run that must refuse a bad line before it writes anything, or skip it (--on-error)."""
    paired = classifier.paired()
    usable = 0
    for row in rows:
        if row.pair is not None and paired.pair_types is not None:
            try:
                tokenize_rows(paired, [row], max_length, source)
            except SeparatorInText as error:
                if skipped is None:
                    raise
                skipped.append(str(error))
                continue
        usable += 1
        yield row
    if not usable and skipped:
        raise BadInput(f"{source}: no input row is usable ({len(skipped)} skipped)")
