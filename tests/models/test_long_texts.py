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
    """The long-text path taken from 1,100 characters on, in pieces of 150 whose cuts are checked
    over 200 characters either side (more than the 100 past which WordPiece reads a word as one
    [UNK], the widest any of these tokenizers looks): what 100 MB lines go through, on texts a
    test can tokenise whole for the oracle."""
    monkeypatch.setattr(tokens_module, "LONG_TEXT", 1100)
    monkeypatch.setattr(tokens_module, "COUNT_PIECE", 150)
    monkeypatch.setattr(tokens_module, "SYNC", 200)


class _Spy:
    """A tokenizer that notes the length of each text it tokenises without special tokens (the
    counting and the prefix, never the call that keeps the model's tokens)."""

    def __init__(self, tokenizer) -> None:
        self._tokenizer, self.pieces = tokenizer, []

    def __call__(self, texts, pairs=None, **options):
        if options.get("add_special_tokens") is False:
            self.pieces.extend(len(text) for text in (texts if isinstance(texts, list) else [texts]))
        return self._tokenizer(texts, pairs, **options)

    def __getattr__(self, name):
        return getattr(self._tokenizer, name)

    def counted_in_pieces(self, text: str) -> bool:
        """Counted in more than one piece, not read whole."""
        return len(self.pieces) > 1 and len(text) not in self.pieces


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
    spy = _Spy(tokenizer)
    got = tokenize(spy, texts, max_length)
    want = _plain(tokenizer, texts, max_length)
    assert [(t.ids, t.offsets, t.dropped) for t in got] == want
    assert got[-1].dropped > 10 * COUNTED_PIECES_AT_LEAST
    assert spy.counted_in_pieces(texts[-1]) and len(spy.pieces) > COUNTED_PIECES_AT_LEAST


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


@pytest.mark.parametrize("kind", KINDS)
def test_a_tokenizer_that_truncates_on_the_left_keeps_the_last_tokens(small_pieces, kind):
    """Read by suffix (the tokenizer's truncating call never sees the whole text), the tokens,
    their offsets in the whole text and the count dropped are the tokenizer's own."""
    tokenizer = _Watched(tiny.make_tokenizer(kind))
    tokenizer._tokenizer.truncation_side = "left"
    texts = [_text(8, 2500), _text(9, 40), _text(10, 2000)]
    got = tokenize(tokenizer, texts, 16)
    assert [(t.ids, t.offsets, t.dropped) for t in got] == _plain(tokenizer._tokenizer, texts, 16)
    assert got[0].offsets[-2][1] > len(texts[0]) - 40  # the text's end, not its start
    assert tokenizer.longest < len(texts[0]) // 2


@pytest.mark.parametrize("kind", KINDS)
def test_pairs_cut_on_the_left_are_read_by_suffix(kind):
    """A pair cut on the left costs the tokenizer memory with the product of its texts' lengths
    as one cut on the right does (two texts of 40,000 characters took 4 GB): the texts are read
    by suffix, and the pair's tokens, offsets and count dropped are still the tokenizer's own."""
    tokenizer = _Watched(tiny.make_tokenizer(kind))
    tokenizer._tokenizer.truncation_side = "left"
    first = [_text(41, 700), _text(42, 5), _text(43, 650)]
    second = [_text(44, 620), _text(45, 900), _text(46, 30)]
    got = tokenize(tokenizer, first, 64, pairs=second)
    assert [(t.ids, t.offsets, t.dropped) for t in got] == _plain(tokenizer._tokenizer, first, 64, second)
    assert tokenizer.longest < len(first[0]) // 2
    tokenizer.longest = 0
    long_pair = tokenize(tokenizer, [_text(47, 20_000)], 64, pairs=[_text(48, 21_000)])
    assert tokenizer.longest < 10_000 and long_pair[0].dropped > 20_000  # 170,000 characters each


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


@pytest.mark.parametrize("lengths", [(300, 400), (1200, 5), (3, 900), (600, 620)])
def test_pairs_past_a_few_times_the_models_length_give_what_the_whole_pair_gives(tokenizer, lengths):
    """With the real constants: a pair whose lengths multiply to more than 1,000 × max_length has
    its texts read by prefix from max_length + 64 characters on (a truncating pair call costs
    memory with the product of the two token counts), and
    what comes out is still exactly the tokenizer's own cut of the whole pair."""
    first = [_text(21 + index, words) for index, words in enumerate(lengths[:1] * 2)]
    second = [_text(31 + index, words) for index, words in enumerate(lengths[1:] * 2)]
    first[1] = first[1][: len(first[1]) // 3]  # the other text longer, then shorter
    got = tokenize(tokenizer, first, 64, pairs=second)
    assert [(t.ids, t.offsets, t.dropped) for t in got] == _plain(tokenizer, first, 64, second)


@pytest.mark.parametrize("kind", ["bert", "roberta"])
def test_pairs_of_many_tokens_per_character_cost_little_memory(kind):
    """4,000 CJK characters (one WordPiece token each) or emoji (four byte-level tokens each) per
    text, cut to 16 tokens as a pair: 5.6 GB and over 120 s by the tokenizer's own cut."""
    script = f"""
import resource
from contrastcat.models.tokens import tokenize
from contrastcat.testing import tiny
tokenizer = tiny.make_tokenizer({kind!r})
tokenize(tokenizer, ["a warm start"], 16, pairs=["and its pair"])
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
chars = "电影很好看的故事演员导演" if {kind!r} == "bert" else "👍😀🎬🍿"
first, second = (chars * 400)[:4000], (chars[::-1] * 400)[:4000]
(got,) = tokenize(tokenizer, [first], 16, pairs=[second])
print(len(got.ids), (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024)
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=True)
    kept, grown_mib = map(int, out.stdout.split())
    assert kept == 16 and grown_mib < 300, f"peak memory grew by {grown_mib} MiB"


def test_a_pair_of_two_long_texts_costs_little_memory():
    """Two texts of 40,000 characters each, cut to 64 tokens as a pair, in a process of its own:
    the tokenizer's own truncating pair call took 4.1 GB for them (and 99,999 + 150,000
    characters ran out of memory); read by prefix, the peak grows by little."""
    script = """
from pathlib import Path
from contrastcat.models.tokens import tokenize
from contrastcat.testing import tiny

def kib(field):
    line = next(l for l in Path("/proc/self/status").read_text().splitlines() if l.startswith(field))
    return int(line.split()[1])

tokenizer = tiny.make_tokenizer("bert")
tokenize(tokenizer, ["a warm start"], 64, pairs=["and its pair"])
words = "the film was great and the cast was warm ".split()
first = " ".join(words[i % 9] for i in range(9_000))
second = " ".join(words[(i * 7) % 9] for i in range(9_000))
Path("/proc/self/clear_refs").write_text("5")
before = kib("VmRSS")
(got,) = tokenize(tokenizer, [first], 64, pairs=[second])
grown = (kib("VmHWM") - before) // 1024
whole = len(tokenizer(first, second, truncation=False, verbose=False)["input_ids"])  # no cut: linear
print(len(first), len(second), whole - len(got.ids) - got.dropped, len(got.ids), grown)
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=True)
    first, second, miscounted, kept, grown_mib = map(int, out.stdout.split())
    assert first > 39_000 and second > 39_000 and kept == 64 and miscounted == 0
    assert grown_mib < 200, f"peak memory grew by {grown_mib} MiB for a pair of 40,000-character texts"


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


# Texts with no plain space to cut before: toy words joined by other white space or by none, and
# runs of characters that tokenizers split in their own ways.
_CJK = "电影很好演员们都不错故事无聊我们喜欢这部片子"
JOINED = {
    "new lines": "\n", "tabs": "\t", "CRLF": "\r\n", "no-break spaces": "\u00a0",
    "ideographic spaces": "\u3000", "zero-width spaces": "\u200b", "nothing": "",
}
RUNS = {
    "CJK": lambda rng: "".join(rng.choice(_CJK) for _ in range(rng.randint(1, 40))),
    "digits": lambda rng: str(rng.randrange(10 ** rng.randint(1, 40))),
    "punctuation": lambda rng: "".join(rng.choice("!?.,;:-()[]'\"…") for _ in range(rng.randint(1, 30))),
    "emoji": lambda rng: "".join(rng.choice("🙂😀🎉👍🏽❤️") for _ in range(rng.randint(1, 20))),
}


def _joined(seed: int, words: int, joiner: str) -> str:
    """Toy words joined by ``joiner``; where that is no white space, a comma or a full stop
    follows a word now and then (WordPiece would read the whole text as one [UNK] otherwise)."""
    rng = random.Random(seed)
    vocabulary = list(toy.FILLER + toy.POSITIVE + toy.NEGATIVE)
    stops = [""] if joiner.isspace() else ["", "", "", "", "", ",", "."]
    return joiner.join(rng.choice(vocabulary) + rng.choice(stops) for _ in range(words))


def _run(seed: int, length: int, kind: str) -> str:
    """Runs of one kind of character, each ended by a punctuation mark, with no white space: a
    cut is inside a word, or at a punctuation mark."""
    rng, text = random.Random(seed), ""
    while len(text) < length:
        text += RUNS[kind](rng) + rng.choice(",.;")
    return text


SAMPLES = {name: (lambda seed, joiner=joiner: _joined(seed, 1200, joiner)) for name, joiner in JOINED.items()} | {
    name: (lambda seed, name=name: _run(seed, 6500, name)) for name in RUNS
}


@pytest.mark.parametrize("sample", list(SAMPLES))
def test_texts_with_no_plain_space_give_what_the_whole_text_gives(tokenizer, small_pieces, sample):
    """Cut only before a plain space, a text of words joined by other white space (or none), or
    of runs with none, was cut inside a word: each piece counted about a token too many (for
    Metaspace, a space marker before each). Every cut must give the whole text's tokens."""
    texts = [SAMPLES[sample](seed) for seed in (21, 22)]
    spy = _Spy(tokenizer)
    got = tokenize(spy, texts, 16)
    assert [(t.ids, t.offsets, t.dropped) for t in got] == _plain(tokenizer, texts, 16)
    assert all(spy.counted_in_pieces(text) for text in texts)
    assert tokens_module._count(tokenizer, texts[0]) == len(tokenizer(texts[0], add_special_tokens=False)["input_ids"])


def _with_tokens(tokenizer, text: str, wanted: int) -> str:
    """``text`` with words appended, or its last words taken off, until it gives ``wanted`` tokens."""
    for _ in range(20):
        have = len(tokenizer(text, add_special_tokens=False, verbose=False)["input_ids"])
        if have == wanted:
            return text
        text = text + " the" * (wanted - have) if have < wanted else text.rsplit(" ", have - wanted)[0]
    raise AssertionError(f"no text of {wanted} tokens")


def _pair_of_counts(tokenizer, words: int, difference: int) -> tuple[str, str]:
    """Toy words joined by new lines, and others joined by spaces with ``difference`` tokens more."""
    first = _joined(31, words, "\n")
    wanted = len(tokenizer(first, add_special_tokens=False, verbose=False)["input_ids"]) + difference
    return first, _with_tokens(tokenizer, _joined(32, words, " "), wanted)


def _odd(tokenizer) -> int:
    """A max_length that leaves an odd number of tokens for a pair's two texts."""
    return 37 + int(tokenizer.num_special_tokens_to_add(pair=True))


@pytest.mark.parametrize("difference", [-1, 0, 1])
def test_a_pair_of_equal_counts_gives_the_odd_token_where_the_tokenizer_does(tokenizer, small_pieces, difference):
    """Which text of a pair keeps the odd token depends on which is longer, ties included: the
    whole counts must be exact for texts joined by new lines as for those joined by spaces."""
    first, second = _pair_of_counts(tokenizer, 1300, difference)
    spy = _Spy(tokenizer)
    (got,) = tokenize(spy, [first], _odd(tokenizer), pairs=[second])
    assert [(got.ids, got.offsets, got.dropped)] == _plain(tokenizer, [first], _odd(tokenizer), [second])
    assert spy.counted_in_pieces(first) and spy.counted_in_pieces(second)


def test_real_pieces_of_a_text_joined_by_new_lines_count_exactly(tokenizer):
    """The sizes the package runs with, on 212,000 characters of words joined by new lines: cut
    inside a word at 200,000, the count was off by a token or more (44,939 dropped for 44,938
    in the report; 2 to 4 more here, whichever tokenizer)."""
    text = _joined(42, 40_000, "\n")
    assert len(text) > tokens_module.COUNT_PIECE
    (got,) = tokenize(tokenizer, [text], 64)
    assert [(got.ids, got.offsets, got.dropped)] == _plain(tokenizer, [text], 64)



@pytest.mark.parametrize("kind", ["roberta", "llama", "albert"])
def test_a_short_pair_of_many_tokens_cut_on_the_left_is_read_by_suffix(kind):
    """Two texts under 2,000 characters can still be thousands of tokens each (an emoji is four
    byte-level tokens): a suffix is taken near the start of a text too (its window is read from
    the text's own start), so the truncating pair call never sees the whole pair. SentencePiece
    tokenizers begin a suffix with a word marker the whole text has not there: compared past it."""
    tokenizer = _Watched(tiny.make_tokenizer(kind))
    tokenizer._tokenizer.truncation_side = "left"
    first, second = "😀" * 300, "漢" * 300
    (got,) = tokenize(tokenizer, [first], 64, pairs=[second])
    assert [(got.ids, got.offsets, got.dropped)] == _plain(tokenizer._tokenizer, [first], 64, [second])
    tokenizer.longest = 0
    (got,) = tokenize(tokenizer, ["😀" * 1999], 64, pairs=["漢" * 1999])
    assert tokenizer.longest < 1_000 and got.dropped >= 2 * 1999 - 64  # a token a character at least
