"""A text far longer than the model reads is tokenised by prefix and counted in pieces, never
whole (one 5 MB line used to cost 1.5 GB): what comes out must be exactly what the tokenizer
gives the whole text — the same ids, offsets and special flags, the same count of dropped
tokens — for each kind of tokenizer the families use. The oracle is the tokenizer called
plainly on the whole text, truncated and not."""

from __future__ import annotations

import random
import subprocess
import sys

import pytest

from contrastcat.models import tokens as tokens_module
from contrastcat.models.tokens import tokenize
from contrastcat.testing import tiny, toy

# WordPiece (BERT), byte-level BPE with </s></s> pairs (RoBERTa), byte-level BPE (GPT-2), Metaspace BPE (Llama).
KINDS = ["bert", "roberta", "gpt2", "llama"]


@pytest.fixture(scope="module", params=KINDS)
def tokenizer(request):
    return tiny.make_tokenizer(request.param)


@pytest.fixture
def small_pieces(monkeypatch):
    """The long-text path taken from 1,100 characters on, in pieces of 150: what 100 MB lines
    go through, on texts a test can tokenise whole for the oracle."""
    monkeypatch.setattr(tokens_module, "LONG_TEXT", 1100)
    monkeypatch.setattr(tokens_module, "COUNT_PIECE", 150)


def _text(seed: int, words: int) -> str:
    """Toy words with the white space and characters that decide where tokenizers split:
    runs of spaces, new lines, tabs, punctuation, accents, an emoji, a word of 300 letters."""
    rng = random.Random(seed)
    vocabulary = list(toy.FILLER + toy.POSITIVE + toy.NEGATIVE) + ["café", "naïve", "🙂", "x" * 300, "it's", "3.14"]
    gaps = [" "] * 12 + ["  ", "   ", "\n", " \n ", "\t", ", ", ". ", "!"]
    return "".join(rng.choice(vocabulary) + rng.choice(gaps) for _ in range(words))


def _plain(tokenizer, texts, max_length, pairs=None):
    """(ids, offsets, special mask, dropped) as the tokenizer gives them for the whole texts."""
    cut = tokenizer(texts, pairs, truncation=True, max_length=max_length,
                    return_offsets_mapping=True, return_special_tokens_mask=True)
    whole = tokenizer(texts, pairs, truncation=False, verbose=False)["input_ids"]
    return [
        (tuple(ids), tuple(map(tuple, offsets)), len(full) - len(ids))
        for ids, offsets, full in zip(cut["input_ids"], cut["offset_mapping"], whole)
    ]


@pytest.mark.parametrize("max_length", [16, 40])
def test_long_texts_give_what_the_whole_text_gives(tokenizer, small_pieces, max_length):
    texts = [_text(seed, words) for seed, words in enumerate([5, 400, 900, 2000])]
    assert all(len(t) > 1100 for t in texts[1:])  # the long path, in several pieces
    got = tokenize(tokenizer, texts, max_length)
    want = _plain(tokenizer, texts, max_length)
    assert [(t.ids, t.offsets, t.dropped) for t in got] == want
    assert got[-1].dropped > 10 * COUNTED_PIECES_AT_LEAST


COUNTED_PIECES_AT_LEAST = 20  # 2,000 words in pieces of 150 characters


def test_long_pairs_give_what_the_whole_pair_gives(tokenizer, small_pieces):
    first = [_text(1, 300), _text(2, 3), _text(3, 250)]
    second = [_text(4, 2), _text(5, 260), _text(6, 400)]
    got = tokenize(tokenizer, first, 40, pairs=second)
    want = _plain(tokenizer, first, 40, second)
    assert [(t.ids, t.offsets, t.dropped) for t in got] == want


def test_a_text_of_few_long_tokens_is_read_until_it_has_enough(tokenizer, small_pieces):
    """One word of 5,000 letters is one token or few: no prefix of it has enough tokens, so the
    prefix grows to the whole text; then real words follow."""
    text = "y" * 5000 + " " + _text(7, 300)
    (got,) = tokenize(tokenizer, [text], 16)
    assert [(got.ids, got.offsets, got.dropped)] == _plain(tokenizer, [text], 16)


def test_memory_is_bounded_by_what_the_model_reads(toy_dir):
    """A 5 MB line, tokenised for a model of 512 tokens, in a process of its own: its peak
    resident memory (reset after loading, read from /proc) grows by far less than the ~0.9 GB
    the whole text's tokens took (3.6 GB for a text four times as long)."""
    script = f"""
from pathlib import Path
from transformers import AutoTokenizer
from contrastcat.models.tokens import tokenize

def kib(field):
    line = next(l for l in Path("/proc/self/status").read_text().splitlines() if l.startswith(field))
    return int(line.split()[1])

tokenizer = AutoTokenizer.from_pretrained({str(toy_dir / "model")!r})
tokenize(tokenizer, ["a warm start"], 512)
text = "the film was great and the cast was warm " * 125_000
Path("/proc/self/clear_refs").write_text("5")  # the peak (VmHWM) starts again from here
before = kib("VmRSS")
(got,) = tokenize(tokenizer, [text], 512)
print(len(text), got.dropped, (kib("VmHWM") - before) // 1024)
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=True)
    length, dropped, grown_mib = map(int, out.stdout.split())
    assert length == 5_125_000 and dropped == 9 * 125_000 - 510  # 9 tokens a repeat, [CLS] and [SEP] kept
    assert grown_mib < 300, f"peak memory grew by {grown_mib} MiB for a 5 MB text"


def test_a_tokenizer_that_truncates_on_the_left_keeps_the_last_tokens(small_pieces):
    tokenizer = tiny.make_tokenizer("bert")
    tokenizer.truncation_side = "left"
    texts = [_text(8, 900), _text(9, 40)]
    got = tokenize(tokenizer, texts, 16)
    assert [(t.ids, t.offsets, t.dropped) for t in got] == _plain(tokenizer, texts, 16)
    assert got[0].offsets[-2][1] > len(texts[0]) - 40  # the text's end, not its start


class _Watched:
    """A tokenizer that notes the longest text it was asked to truncate (the expensive call)."""

    def __init__(self, tokenizer) -> None:
        self._tokenizer, self.longest = tokenizer, 0

    def __call__(self, texts, pairs=None, **options):
        if options.get("truncation"):
            for text in [*(texts if isinstance(texts, list) else [texts]), *(pairs or [])]:
                self.longest = max(self.longest, len(text))
        return self._tokenizer(texts, pairs, **options)

    def __getattr__(self, name):
        return getattr(self._tokenizer, name)


def test_two_long_texts_of_a_pair_are_cut_to_short_prefixes():
    """Which text of a pair is longer must be the same for the prefixes as for the whole texts;
    where it is not, the prefix grows by small steps, not by the counting pieces (a pair call
    that truncates costs tens of kilobytes per token: 200k-character prefixes took gigabytes)."""
    tokenizer = _Watched(tiny.make_tokenizer("bert"))
    first = [_text(seed, 30_000) for seed in (11, 12, 13)]
    second = [_text(seed, 30_000) for seed in (14, 15, 16)]
    got = tokenize(tokenizer, first, 64, pairs=second)
    assert all(len(text) > 150_000 for text in first + second) and all(t.dropped > 0 for t in got)
    assert tokenizer.longest <= 4 * (16 * 64 + 4096)
