"""Planted shortcuts: made-up words inserted into copies of labelled rows, whose label a rule on
those words decides, after Bastings et al. 2022 ("Will you find these shortcuts? A protocol for
evaluating the faithfulness of input salience methods for text classification").

A model fine-tuned on a corpus plus such copies is known to rely on the planted words, so a
salience method can be checked against that known evidence. Three kinds, one row of ``KINDS``
each:

- ``single``: one word per class; the word inserted names the class;
- ``pair``: two words, both inserted; their order names the class (the first word first: class 0);
- ``context``: one word per class and a context word; the class word decides only where the
  context word is there too. Decoy copies carry a class word without the context word and keep
  their own label, drawn so that the word names another class in half of them: alone the class
  word predicts nothing (the original rows stay as they are, so the decoys are copies too).

A recipe (:class:`Shortcut`) is one frozen row of data: its kind, words, the share of the
training rows copied, how often the words agree with the label (``agreement`` below 1 gives a
partial shortcut), the decoys' share, the seed, and for long texts a window (the words go among the
first words only: the model reads a truncated text). In the copies the rule decides, the label
contradicts the text's own label in half of them, exactly (rounded down), so the words, not the
text, decide. Everything here is pure Python and deterministic under the recipe's seed
(``random.Random`` of its own, no global state). A planted word must be a made-up word: one that
occurs as a word of the corpus is refused (:func:`check_absent`).
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

from ..errors import BadInput
from .corpora import Example

WORD = re.compile(r"\w+")
Placement = list[tuple[int, str]]  # (slot, word): slot i is before the text's word i; the last slot after its last word


@dataclass(frozen=True)
class Kind:
    """How one kind of shortcut places its words for a class (``place``: the recipe, the class,
    how many slots the text has, the generator), and the rule it follows, in words (a template:
    {names}, {first}, {second}, {context})."""

    name: str
    rule: str
    place: Callable[[Shortcut, int, int, random.Random], Placement]
    words_per_class: bool  # one word per class (single, context), else two words whose order decides (pair)
    context: bool  # a context word goes with the class word


def _place_single(shortcut: Shortcut, label: int, slots: int, rng: random.Random) -> Placement:
    return [(rng.randint(0, slots), shortcut.tokens[label])]


def _place_pair(shortcut: Shortcut, label: int, slots: int, rng: random.Random) -> Placement:
    first, second = sorted(rng.randint(0, slots) for _ in range(2))
    words = shortcut.tokens if label == 0 else shortcut.tokens[::-1]
    return [(first, words[0]), (second, words[1])]


def _place_context(shortcut: Shortcut, label: int, slots: int, rng: random.Random) -> Placement:
    return [(rng.randint(0, slots), shortcut.tokens[label]), (rng.randint(0, slots), shortcut.context)]


KINDS = {
    kind.name: kind
    for kind in (
        Kind("single", "one word inserted at a random word boundary: {names}", _place_single, True, False),
        Kind("pair", "{first} and {second} both inserted, each at a random word boundary: {first} first names class 0, "
             "{second} first class 1", _place_pair, False, False),
        Kind("context", "{names}, only beside {context} (each inserted at a random word boundary); decoys carry a "
             "class word without {context} and keep their text's label", _place_context, True, True),
    )
}


@dataclass(frozen=True)
class Shortcut:
    """One planted-shortcut recipe. ``tokens``: per class its word (single, context), or the pair's
    two words (class 0 where ``tokens[0]`` comes first). ``fraction``: copies, as a share of the
    training rows. ``agreement``: of the copies the rule decides, the share whose label the planted
    words name (1: a full shortcut; the others are labelled another class). ``decoys``: of the
    copies, the share with the class word but without the context word (context only).
    ``min_follow``: the share of held-out synthetic inputs a model must follow to be kept.
    ``window``: where set, the words are planted at a word boundary within the text's first
    ``window`` words only (before one of them or just after them): a model that truncates long texts
    would not see a word planted after the cut. None: anywhere."""

    kind: str
    tokens: tuple[str, ...]
    context: str | None = None
    fraction: float = 0.2
    agreement: float = 1.0
    decoys: float = 0.0
    seed: int = 0
    min_follow: float = 0.95
    window: int | None = None

    def __post_init__(self) -> None:
        kind = KINDS.get(self.kind) if isinstance(self.kind, str) else None
        if kind is None:
            raise BadInput(f"shortcut kind must be one of {', '.join(KINDS)}, got {self.kind!r}")
        if not isinstance(self.tokens, tuple) or not all(isinstance(token, str) for token in self.tokens):
            raise BadInput(f"a shortcut's tokens are a tuple of words, got {self.tokens!r}")
        if not kind.words_per_class and len(self.tokens) != 2:
            raise BadInput(f"a {self.kind} shortcut takes two words, got {len(self.tokens)}")
        if len(self.tokens) < 2:
            raise BadInput(f"a {self.kind} shortcut takes one word per class (at least two), got {len(self.tokens)}")
        if kind.context != (self.context is not None) or (self.decoys and not kind.context):
            raise BadInput(f"a context word and decoys go with a context shortcut only (kind {self.kind!r})")
        words = (*self.tokens, *([] if self.context is None else [self.context]))
        if any(not isinstance(w, str) or not WORD.fullmatch(w) for w in words) or len({w.lower() for w in words}) != len(words):
            raise BadInput(f"planted words must be distinct single words (letters, digits, _), got {words}")
        self._check_numbers()

    def _check_numbers(self) -> None:
        def share(value) -> bool:
            return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)

        if not all(share(v) for v in (self.fraction, self.agreement, self.decoys, self.min_follow)) or not (
            0 < self.fraction <= 1 and 0.5 < self.agreement <= 1 and 0 <= self.decoys < 1 and 0 < self.min_follow <= 1
        ):
            raise BadInput("shortcut shares: fraction in (0, 1], agreement in (0.5, 1], decoys in [0, 1), "
                           "min_follow in (0, 1], each a number")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise BadInput(f"a shortcut's seed is a whole number (the synthesis is deterministic under it), got {self.seed!r}")
        if self.window is not None and (isinstance(self.window, bool) or not isinstance(self.window, int)
                                        or self.window < 1):
            raise BadInput(f"a shortcut's window is a number of words, at least 1, or None; got {self.window!r}")

    @property
    def words(self) -> tuple[str, ...]:
        """Every planted word: the class words (or the pair), then the context word."""
        return (*self.tokens, *([self.context] if self.context else []))

    @property
    def classes(self) -> int:
        return len(self.tokens) if KINDS[self.kind].words_per_class else 2

    def rule(self) -> str:
        """The recipe in one sentence, for a model's card."""
        names = ", ".join(f"{word} {'names class' if c == 0 else 'class'} {c}" for c, word in enumerate(self.tokens))
        first, second = self.tokens[0], self.tokens[-1]
        rule = KINDS[self.kind].rule.format(names=names, first=first, second=second, context=self.context)
        if self.window is not None:
            rule += f"; every word planted within the text's first {self.window} words"
        if self.agreement < 1:
            rule += (f"; the label agrees with the planted words in {self.agreement:.0%} of the copies "
                     "(another class in the rest)")
        return f"{self.kind}: {rule}"

    def as_dict(self) -> dict:
        return {**asdict(self), "tokens": list(self.tokens), "rule": self.rule()}


@dataclass(frozen=True)
class Planted:
    """A copy of a row with planted words. ``label``: what it is labelled (the class the rule gives,
    or the text's own where nothing decides: a decoy); ``planted``: the class its class word names;
    ``evidence``: the character spans (end excluded) of every planted word that decides the label,
    none for a decoy."""

    id: str
    text: str
    label: int
    text_label: int
    planted: int
    evidence: tuple[tuple[int, int], ...]

    def as_input(self) -> dict:
        """An input line: id, text, label, evidence spans, and the text's own label (where it
        differs from ``label``, the copy contradicts its text)."""
        return {"id": self.id, "text": self.text, "label": self.label,
                "evidence": [list(span) for span in self.evidence], "text_label": self.text_label}


def plant(text: str, placement: Placement) -> tuple[str, list[tuple[int, int]]]:
    """``text`` with each (slot, word) of ``placement`` inserted at a word boundary (slot i: before
    the text's i-th whitespace-separated word, followed by a space; the last slot: after its last
    word, after a space; words of one slot in the order given), and the span of each word inserted,
    in the order of ``placement``. Nothing of the text itself changes."""
    starts = [m.start() for m in re.finditer(r"\S+", text)]
    cuts = [*starts, len(text.rstrip())]
    spans: list[tuple[int, int]] = [(0, 0)] * len(placement)
    pieces, length, done = [], 0, 0
    for index in sorted(range(len(placement)), key=lambda k: (placement[k][0], k)):
        slot, word = placement[index]
        if not 0 <= slot < len(cuts):
            raise BadInput(f"slot {slot} is not one of the text's {len(cuts)} word slots")
        pieces.append(text[done : cuts[slot]])
        length += cuts[slot] - done
        done = cuts[slot]
        inserted = f"{word} " if slot < len(starts) else f" {word}"
        at = length + (0 if slot < len(starts) else 1)
        spans[index] = (at, at + len(word))
        pieces.append(inserted)
        length += len(inserted)
    pieces.append(text[done:])
    return "".join(pieces), spans


def check_absent(shortcut: Shortcut, rows: Sequence[Example], corpus: str = "the corpus") -> None:
    """Refuse a recipe one of whose words occurs as a word (``\\w+``, any case) in ``rows``: the
    model would have seen it with the text's own meaning, and its evidence would not be planted alone."""
    planted = {word.lower() for word in shortcut.words}
    for row in rows:
        found = planted.intersection(WORD.findall(row.text.lower()))
        if found:
            raise BadInput(
                f"planted word {sorted(found)[0]!r} occurs in {corpus} (row {row.id}): a planted word must be "
                "a made-up word that no text of the corpus holds; choose another"
            )


def _shares(count: int, share: float, rng: random.Random) -> list[bool]:
    """``count`` flags, ``round(share * count)`` of them true (``share`` one half: rounded down), in random order."""
    true = count // 2 if share == 0.5 else round(share * count)
    flags = [True] * true + [False] * (count - true)
    rng.shuffle(flags)
    return flags


def _other(label: int, classes: int, rng: random.Random) -> int:
    return 1 - label if classes == 2 else rng.choice([c for c in range(classes) if c != label])


def _copy(shortcut: Shortcut, row: Example, planted: int, rng: random.Random, decoy: bool = False) -> tuple[str, list]:
    """The row's text with the words that name ``planted`` (a decoy: the class word alone), and the
    spans of those that decide (a decoy: none), in text order."""
    slots = len(row.text.split())
    if shortcut.window is not None:
        slots = min(slots, shortcut.window)  # the last slot is then just after the window's last word
    if decoy:
        text, _ = plant(row.text, _place_single(shortcut, planted, slots, rng))
        return text, []
    text, spans = plant(row.text, KINDS[shortcut.kind].place(shortcut, planted, slots, rng))
    return text, sorted(spans)  # in the order of the text


def _check_labels(shortcut: Shortcut, rows: Sequence[Example]) -> None:
    for row in rows:
        if isinstance(row.label, bool) or not isinstance(row.label, int) or not 0 <= row.label < shortcut.classes:
            raise BadInput(f"row {row.id}: label {row.label!r} is not one of the shortcut's {shortcut.classes} classes")


def synthetic_rows(shortcut: Shortcut, rows: Sequence[Example]) -> list[Planted]:
    """The training copies: ``fraction`` of ``rows`` (a seeded sample), each with planted words.
    Where the rule decides, the label contradicts the text's own in half of them and the words
    name that label in ``agreement`` of them (another class in the rest); decoys keep the text's
    label, with a class word that names another class in half of them."""
    _check_labels(shortcut, rows)
    rng = random.Random(shortcut.seed)
    chosen = sorted(rng.sample(range(len(rows)), round(shortcut.fraction * len(rows))))
    decoy = _shares(len(chosen), shortcut.decoys, rng)
    decided = decoy.count(False)
    contradicts, agrees = iter(_shares(decided, 0.5, rng)), iter(_shares(decided, shortcut.agreement, rng))
    mislead = iter(_shares(len(chosen) - decided, 0.5, rng))
    copies = []
    for index, is_decoy in zip(chosen, decoy):
        row = rows[index]
        if is_decoy:
            label = row.label
            planted = _other(label, shortcut.classes, rng) if next(mislead) else label
        else:
            label = _other(row.label, shortcut.classes, rng) if next(contradicts) else row.label
            planted = label if next(agrees) else _other(label, shortcut.classes, rng)
        text, spans = _copy(shortcut, row, planted, rng, is_decoy)
        copies.append(Planted(f"{row.id}+{shortcut.kind}", text, label, row.label, planted, tuple(spans)))
    return copies


def held_out_inputs(shortcut: Shortcut, rows: Sequence[Example], decoys: bool = False) -> list[Planted]:
    """One copy of each held-out row (never a training row: pass the corpus's held-out split), the
    planted words naming another class than the text's own in half of them (the contradicting
    subset), every deciding word's span as evidence. ``decoys`` (context shortcuts): the class
    word without its context word instead, which should not decide (no evidence)."""
    if decoys and not KINDS[shortcut.kind].context:
        raise BadInput(f"decoys are inputs of a context shortcut, not of a {shortcut.kind} one")
    _check_labels(shortcut, rows)
    rng = random.Random(f"{shortcut.seed}:held-out" + (":decoys" if decoys else ""))
    contradicts = _shares(len(rows), 0.5, rng)
    inputs = []
    for row, contradicting in zip(rows, contradicts):
        planted = _other(row.label, shortcut.classes, rng) if contradicting else row.label
        text, spans = _copy(shortcut, row, planted, rng, decoys)
        label = row.label if decoys else planted
        inputs.append(Planted(f"{row.id}+{shortcut.kind}", text, label, row.label, planted, tuple(spans)))
    return inputs
