"""Attributions made by other tools (Captum, inseq, ferret, a script): the minimal record, and
its alignment to the tokens of the model that evaluates it (docs/cli.md, "Attributions made
elsewhere").

A minimal record has ``text``, ``scores``, ``target`` and, for each score, its character span
``offsets`` or its token string ``tokens`` (``method`` and ``id`` are optional). Without token
ids, ``evaluate`` tokenises the text with the model's tokenizer and gives each of the model's
tokens the sum of the scores of the spans it overlaps (a word's score reaches every subword of
it; finer pieces add up). A model token that overlaps no scored span, or a token string that
cannot be found in the text, makes the line refused: a silent guess would change the map.
"""

from __future__ import annotations

import math
from dataclasses import replace

from ..errors import BadInput
from ..spec import Names, backticked
from ..models.tokens import tokenize
from ..records.record import AttributionRecord
from ..records.token_spans import spans_of_tokens
from ..records.variants import MADE_ELSEWHERE


def made_elsewhere(record: AttributionRecord) -> bool:
    """A record without token ids: another tool's map, still to be aligned to a model's tokens."""
    return not record.token_ids


def aligned_settings(settings: dict) -> dict:
    """A record made elsewhere says so once aligned; its label (``MethodLabels``) is made from
    these settings, before the model loads as after."""
    return {**settings, MADE_ELSEWHERE: True}


def align(record: AttributionRecord, classifier, where: str, named: Names = backticked) -> AttributionRecord:
    """``record`` on the classifier's tokens: token ids, tokens, offsets and special flags of the
    model's tokenisation (cut at its length limit as explain cuts), each token scored by the sum
    of the scores of the spans over it. Refused, naming ``where``: a record that names other
    weights; spans that overlap; a span cutting across two of the model's tokens; a model token
    its spans leave partly unscored; a sum too large for a float."""
    if record.model_fingerprint and record.model_fingerprint != classifier.fingerprint:
        raise BadInput(
            f"{where}: the record names the weights {record.model_fingerprint}, but {classifier.name!r} loads "
            f"{classifier.fingerprint} here: pass the model it was made with ({named('model')})"
        )
    given = record.offsets
    if not any(end > start for start, end in given):  # no spans given: find the token strings
        given = spans_of_tokens(record.text, record.tokens, where)
    scored = sorted((start, end, score) for (start, end), score in zip(given, record.scores) if end > start)
    for (_, end, _), (start, _, _) in zip(scored, scored[1:]):
        if start < end:
            raise BadInput(f"{where}: two scored spans overlap (characters {start}-{end}): each character has one score")
    (tokens,) = tokenize(classifier.tokenizer, [record.text], classifier.max_length)  # as explain cuts it
    words = [(start, end) for (start, end), special in zip(tokens.offsets, tokens.special) if end > start and not special]
    for start, end, _ in scored:
        under = [(s, e) for s, e in words if s < end and start < e]
        if len(under) > 1 and any(s < start or e > end for s, e in under):
            raise BadInput(
                f"{where}: the scored span {record.text[start:end]!r} (characters {start}-{end}) cuts across the "
                "model's tokens: cannot tell which of them its score belongs to"
            )
    scores = []
    for (start, end), is_special in zip(tokens.offsets, tokens.special):
        if is_special or end <= start:
            scores.append(0.0)
            continue
        over = [(s, e, score) for s, e, score in scored if s < end and start < e]
        covered = [False] * (end - start)
        for s, e, _ in over:
            for i in range(max(s, start), min(e, end)):
                covered[i - start] = True
        missing = [record.text[start + i] for i, done in enumerate(covered) if not done and not record.text[start + i].isspace()]
        if missing:
            shown = record.text[start:end]
            what = "overlaps no scored span" if not over else "is only partly covered by scored spans"
            raise BadInput(
                f"{where}: the model's token {shown!r} (characters {start}-{end}) {what} of the record: "
                "cannot align it to this model's tokens"
            )
        total = float(sum(score for _, _, score in over))
        if not math.isfinite(total):
            raise BadInput(f"{where}: the scores over the model's token {record.text[start:end]!r} add up to {total}")
        scores.append(total)
    settings = aligned_settings(record.settings)
    return replace(
        record, token_ids=list(tokens.ids), tokens=list(tokens.tokens), offsets=[list(span) for span in tokens.offsets],
        special=list(tokens.special), scores=scores, truncated=tokens.truncated, tokens_dropped=tokens.dropped,
        settings=settings, **classifier.identity(),
    )
