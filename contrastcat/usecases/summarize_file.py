"""The summarize use case: what a classifier relies on across a records file.

Pass one (:mod:`contrastcat.usecases.word_tally`) reads and checks every record and writes a spool
of (record, word, value) rows; a bad line fails there, before anything is written. Pass two reads
the spool: each word's count and mean per method, class and split (all inputs; the model's right
and wrong predictions, where records carry gold labels), and how often it is an input's strongest
unit. Then the words to show are picked (each class's top K for it and against it, the words the
association test flags, the forbidden ones) and pass three draws their Poisson bootstrap
intervals and the shortcuts' examples from the spool; the examples' records are read again last.
Memory: the vocabulary and arrays of a few numbers per word and group, never the records.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import numpy as np

from ..errors import BadInput
from ..evaluation.word_stats import BLOCK, STRIP, Excess, base_excess, corrected_level, paired_excess, poisson_weights, replicate_interval
from ..views.word_summary import MIN_EXCESS, ClassWords, Example, MethodInfo, Shortcut, Summary, WordStat
from ..records.record import AttributionRecord, RecordFile, record_of_line
from .options.summarize import SummarizeOptions
from ..records.input_words import input_words, word_key
from .word_tally import SPOOL, WordTally, class_of, settle_names

_CHUNK_ROWS = 1 << 18
SCREENED_MOST = 200  # association-flagged words per method and class whose attribution is drawn
_ROWS_AT_ONCE = 1024  # hits weighted at once: 1,024 x 1,000 resamples, 8 MB
SLOTS_MEMORY = 256 * 2**20  # the resamples' sums and weights held at once (more slots: another read of the spool)
EXAMPLES = 3


@dataclass
class Groups:
    """The final groups (method, target, split) and, per raw group of the tally, the ones it feeds."""

    keys: list[tuple[str, int, str]]
    feeds: np.ndarray  # [raw groups, 2]: the "all" group and the split's (-1: none)
    signed: np.ndarray  # per raw group: its method's words score by the sum rule
    inputs: np.ndarray  # per final group: its records

    def __post_init__(self) -> None:
        self._index = {key: group for group, key in enumerate(self.keys)}

    def find(self, key: tuple[str, int, str]) -> int | None:
        """The final group of (method, target, split), or None where no record is in it."""
        return self._index.get(key)


def summarize_records(records: Iterable[tuple[int, AttributionRecord]], chosen: SummarizeOptions, source: str,
                      place: Callable[[int], str], again: Callable[[set[int]], dict[int, AttributionRecord]]) -> Summary:
    """The summary of ``records`` ((line, record) pairs, read once, from ``source``; ``place(line)``
    names one in a message); ``again`` reads the records of some lines a second time (the
    shortcuts' examples)."""
    forbidden = forbidden_words(chosen)
    with tempfile.TemporaryFile(prefix="contrastcat-summary-") as spool:
        tally = WordTally(chosen, place, spool)
        progress = chosen.progress or (lambda phase, done, total: None)
        for line, record in records:
            tally.add(record, line)
            if tally.records % 1024 == 0:
                progress("reading records", tally.records, None)
        tally.flush()
        progress("reading records", tally.records, tally.records)
        if not tally.records:
            raise BadInput(f"{source}: no attribution records")
        settle_names(tally)
        groups = _groups(tally, chosen)
        moments = Moments.of(spool, groups, len(tally.vocabulary), lambda done, total: progress("counting words", done, total))
        screened = _screen(tally, chosen)
        shown = _shown(groups, moments, chosen)
        # A class no record explains, or whose records never hold the word, says nothing of its attribution.
        alls = {(m, c, w): groups.find((m, c, "all")) for m, c, w in screened}
        candidates = {(group, w) for (_, _, w), group in alls.items()
                      if group is not None and moments.at(group, w) is not None}
        slots = sorted(shown | candidates)
        intervals, best = _draws(spool, groups, (slots, candidates), moments, chosen)
    summary = _summary(tally, groups, moments, (slots, intervals, best), (screened, again))
    summary.source = source
    summary.problems = gate(summary, forbidden)
    return summary


def forbidden_words(chosen: SummarizeOptions) -> list[str]:
    """--forbid's words and those of --forbid-file, as the summary counts them (case-folded unless
    kept); a word that can never be counted is refused, named where it was given."""
    given = [(word, chosen.named("forbid")) for word in chosen.forbid or ()]
    if chosen.forbid_file is not None:
        from ..io.lines import LineSource

        source = LineSource(chosen.forbid_file)
        try:
            for number, text in source.text_lines():
                word = text.split("#", 1)[0].strip()
                if word:
                    given.append((word, f"{source.name}:{number}"))
        except UnicodeDecodeError:
            raise BadInput(f"{source.name}: not UTF-8 text") from None
        finally:
            source.close()
    if not chosen.tokens:
        for word, where in given:
            _one_unit(word, where, chosen)
    return [word_key(word, chosen.keep_case) for word, _ in given]


def _one_unit(word: str, where: str, chosen: SummarizeOptions) -> None:
    from ..records.words import units

    found = units(word)
    if len(found) != 1 or found[0].start != 0 or found[0].end != len(word):
        raise BadInput(f"{where}: {word!r} is not one word as summarize counts them (punctuation and spaces part "
                       "words): forbid each word alone")
    if not found[0].is_word and not chosen.symbols:
        raise BadInput(f"{where}: {word!r} is punctuation, which {chosen.bare('symbols').replace('--', '--no-')} "
                       "leaves out: it can never be found")


def _groups(tally: WordTally, chosen: SummarizeOptions) -> Groups:
    keys: list[tuple[str, int, str]] = []
    index: dict[tuple[str, int, str], int] = {}
    feeds = np.full((len(tally.group_inputs), 2), -1, dtype=np.int64)
    signed = np.zeros(len(tally.group_inputs), dtype=bool)
    for (label, target, gold, predicted), raw in tally.groups.items():
        method = tally.methods[label]
        split = _split(method, gold, predicted)
        for column, name in enumerate(("all", split)):
            if name is None:
                continue
            key = (label, target, name)
            if key not in index:
                index[key] = len(keys)
                keys.append(key)
            feeds[raw, column] = index[key]
        signed[raw] = _signed(method, chosen)
    inputs = np.zeros(len(keys), dtype=np.int64)
    for raw, count in enumerate(tally.group_inputs):
        for final in feeds[raw]:
            if final >= 0:
                inputs[final] += count
    return Groups(keys, feeds, signed, inputs)


def _split(method, gold, predicted) -> str | None:
    """correct or wrong where the record's gold label tells (a multi-label record's one label does
    not; nor does a label of a class no record names, beside a prediction no record names)."""
    if gold is None or method.multi_label:
        return None
    labelled = class_of(method, gold)
    if labelled is None and predicted not in method.names:
        return None
    return "correct" if labelled == predicted else "wrong"


def _chunks(spool, progress=None) -> Iterator[np.ndarray]:
    """The spool's rows, in chunks that never part a record's rows; ``progress(done, total)`` in rows."""
    total = spool.seek(0, 2) // SPOOL.itemsize
    spool.seek(0)
    done = 0
    carry = np.empty(0, dtype=SPOOL)
    while True:
        data = spool.read(_CHUNK_ROWS * SPOOL.itemsize)
        rows = np.frombuffer(data, dtype=SPOOL)
        if not len(rows):
            if len(carry):
                yield carry
            return
        done += len(rows)
        if progress is not None:
            progress(done, total)
        rows = np.concatenate([carry, rows])
        last = rows["line"][-1]
        cut = int(np.searchsorted(rows["line"], last))  # the last record may go on in the next read
        if cut == 0:
            carry = rows
            continue
        carry = rows[cut:]
        yield rows[:cut]


def _values(rows: np.ndarray, groups: Groups) -> np.ndarray:
    return np.where(groups.signed[rows["group"]], rows["total"], rows["strongest"]).astype(np.float64)


@dataclass
class Moments:
    """Per (final group, word) that occurs, in the order of ``keys`` (group × words + word): the
    inputs holding the word, the sum of its values, how often it is an input's strongest unit
    for the class and against it; and per group the mean value of every word of its inputs.
    Sparse: a word that never occurs in a class's inputs takes nothing there."""

    keys: np.ndarray
    counts: np.ndarray
    sums: np.ndarray
    top_for: np.ndarray
    top_against: np.ndarray
    baseline: np.ndarray
    words: int

    @classmethod
    def of(cls, spool, groups: Groups, words: int, progress=None) -> Moments:
        found = cls(np.empty(0, np.int64), *(np.empty(0) for _ in range(4)), np.zeros(len(groups.keys)), max(words, 1))
        total, occurrences = np.zeros(len(groups.keys)), np.zeros(len(groups.keys))
        for rows in _chunks(spool, progress):
            values = _values(rows, groups)
            starts = np.flatnonzero(np.r_[True, rows["line"][1:] != rows["line"][:-1]])
            strongest, weakest = _each_record(values, starts, np.argmax), _each_record(values, starts, np.argmin)
            for column in (0, 1):
                final = groups.feeds[rows["group"], column]
                kept = np.flatnonzero(final >= 0)
                keys = final * found.words + rows["word"]
                np.add.at(total, final[kept], values[kept])
                np.add.at(occurrences, final[kept], 1)
                tops = []
                for chosen, sign in ((strongest, 1), (weakest, -1)):
                    hit = chosen[(final[chosen] >= 0) & (sign * values[chosen] > 0)]
                    tops.append(keys[hit])
                found._add(keys[kept], values[kept], tops)
        found.baseline = total / np.maximum(occurrences, 1)
        return found

    def _add(self, keys: np.ndarray, values: np.ndarray, tops: list[np.ndarray]) -> None:
        merged = np.union1d(self.keys, np.concatenate([keys, *tops]))
        old = np.searchsorted(merged, self.keys)
        columns = []
        for column, (new, weights) in zip(
            (self.counts, self.sums, self.top_for, self.top_against),
            ((keys, None), (keys, values), (tops[0], None), (tops[1], None)),
        ):
            grown = np.zeros(len(merged))
            grown[old] = column
            grown += np.bincount(np.searchsorted(merged, new), weights=weights, minlength=len(merged))
            columns.append(grown)
        self.keys = merged
        self.counts, self.sums, self.top_for, self.top_against = columns

    def group(self, group: int) -> tuple[np.ndarray, slice]:
        """The word ids of ``group`` that occur, and where their values are."""
        first, last = np.searchsorted(self.keys, [group * self.words, (group + 1) * self.words])
        return self.keys[first:last] - group * self.words, slice(first, last)

    def at(self, group: int, word: int) -> int | None:
        key = group * self.words + word
        index = int(np.searchsorted(self.keys, key))
        return index if index < len(self.keys) and self.keys[index] == key else None


def _each_record(values: np.ndarray, starts: np.ndarray, pick) -> np.ndarray:
    """The row of each record (rows ``starts[i]`` up to the next start) that ``pick`` (argmax, argmin) chooses."""
    ends = np.r_[starts[1:], len(values)]
    return np.array([start + pick(values[start:end]) for start, end in zip(starts, ends)], dtype=np.int64)


def _ranked(moments: Moments, group: int, chosen: SummarizeOptions, sign: int) -> list[int]:
    """Word ids of ``group``'s top K by mean value (sign 1: highest first; -1: lowest, below 0
    only), ties by first seen; words in fewer than ``min_count`` inputs left out."""
    words, where = moments.group(group)
    counts, sums = moments.counts[where], moments.sums[where]
    held = counts >= chosen.min_count
    means = sums[held] / counts[held]
    words = words[held]
    chosen_words = np.flatnonzero(sign * means > 0)
    order = chosen_words[np.lexsort((words[chosen_words], -sign * means[chosen_words]))]
    return [int(words[i]) for i in order[: chosen.top]]


def _shown(groups: Groups, moments: Moments, chosen) -> set[tuple[int, int]]:
    shown = set()
    for group in range(len(groups.keys)):
        for sign in (1, -1):
            shown.update((group, word) for word in _ranked(moments, group, chosen, sign))
    return shown


def _screen(tally: WordTally, chosen: SummarizeOptions) -> dict[tuple[str, int, int], Excess]:
    """The (method, class, word)s whose prediction rate lies far above what the data supports, with
    their excess: at most :data:`SCREENED_MOST` a class, by the low end of its interval."""
    screened = {}
    for label, method in tally.methods.items():
        found = _association(method, chosen)
        for target in range(method.classes):
            ranked = sorted(((e.interval.low, -w, w, e) for (c, w), e in found.items() if c == target), reverse=True)
            for *_, word, excess in ranked[:SCREENED_MOST]:
                screened[label, target, word] = excess
    return screened


def _association(method, chosen: SummarizeOptions) -> dict[tuple[int, int], Excess]:
    """Against the gold labels where the method's inputs carry them (those inputs only), else
    against each class's share of the inputs; Bonferroni-corrected over every word and class tested."""
    classes = method.classes
    if method.labelled_inputs:
        table = method.labelled.table
        method.support = "gold labels"
    else:
        table = method.holding.table
        method.support = "base rate"
    tested = np.flatnonzero(table[:, 0] >= chosen.min_count)
    method.tests = len(tested) * classes
    method.level = level = corrected_level(chosen.ci, method.tests)
    found = {}
    for word in tested:
        row = [int(v) for v in table[word]]
        for c in range(classes):
            predicted = row[1 + c]
            if predicted == 0:
                continue
            if method.labelled_inputs:
                both, labelled = row[1 + 2 * classes + c], row[1 + classes + c]
                excess = paired_excess(both, predicted - both, labelled - both, row[0], level)
            else:
                excess = base_excess(predicted, row[0], method.predicted[c] / method.inputs, level)
            if excess.interval.low > 0 and excess.value >= MIN_EXCESS:
                found[c, int(word)] = excess
    return found


def _draws(spool, groups: Groups, slots, moments: Moments, chosen: SummarizeOptions):
    """Pass three: each (group, word) slot's interval, from its resamples' weighted sums and weights
    (drawn for :data:`SLOTS_MEMORY` bytes of slots at a time, one read of the spool each; only the
    intervals are kept), and for the candidates the records where the word weighs most (slot,
    value, line) for their examples."""
    slots, candidates = slots
    words = moments.words
    keys = np.array([g * words + w for g, w in slots], dtype=np.int64)
    wanted = np.array([slot in candidates for slot in slots], dtype=bool)
    intervals: list = [None] * len(slots)
    best = (np.empty(0, np.int64), np.empty(0), np.empty(0, np.int64))
    batch = max(1, SLOTS_MEMORY // (16 * max(chosen.bootstrap, 1)))
    for first in range(0, len(slots), batch):
        part = slice(first, first + batch)
        (sums, weights), found = _draw_batch(spool, groups, (keys[part], wanted[part]), words, chosen)
        if chosen.progress is not None:
            chosen.progress("drawing intervals", min(first + batch, len(slots)), len(slots))
        for index, (group, word) in enumerate(slots[part]):
            count = int(moments.counts[moments.at(group, word)])
            intervals[first + index] = replicate_interval(sums[index], weights[index], count, chosen.intervals)
        best = tuple(np.r_[old, new + (first if i == 0 else 0)] for i, (old, new) in enumerate(zip(best, found)))
    return intervals, best


def _draw_batch(spool, groups: Groups, slots, words: int, chosen: SummarizeOptions):
    keys, wanted = slots
    resamples = chosen.bootstrap
    sums, weights = np.zeros((len(keys), resamples)), np.zeros((len(keys), resamples))
    best = (np.empty(0, np.int64), np.empty(0), np.empty(0, np.int64))  # slot, value, line
    for rows in _chunks(spool):
        values = _values(rows, groups)
        hits = []
        for column in (0, 1):
            final = groups.feeds[rows["group"], column]
            key = np.where(final >= 0, final * words + rows["word"], -1)
            place = np.minimum(np.searchsorted(keys, key), len(keys) - 1)
            hit = np.flatnonzero(keys[place] == key)
            hits.append((place[hit], values[hit], rows["line"][hit]))
        slot, value, line = (np.concatenate(part) for part in zip(*hits))
        example = wanted[slot]
        best = _best(np.r_[best[0], slot[example]], np.r_[best[1], value[example]], np.r_[best[2], line[example]])
        _resampled(sums, weights, (slot, value, line), chosen.seed)
    return (sums, weights), best


def _resampled(sums: np.ndarray, weights: np.ndarray, hits, seed: int) -> None:
    """Adds each hit (slot, value, line) to its slot's resamples, weighted by its line's Poisson
    weights: generated once a block of lines and strip of resamples (:func:`poisson_weights`)."""
    slot, value, line = hits
    blocks = line // BLOCK
    for block in np.unique(blocks):
        mine = np.flatnonzero(blocks == block)
        for strip in range(0, sums.shape[1], STRIP):
            width = min(STRIP, sums.shape[1] - strip)
            block_weights = poisson_weights(seed, int(block), strip // STRIP)
            for first in range(0, len(mine), _ROWS_AT_ONCE):
                some = mine[first : first + _ROWS_AT_ONCE]
                drawn = block_weights[line[some] % BLOCK, :width]
                np.add.at(sums[:, strip : strip + width], slot[some], drawn * value[some, None])
                np.add.at(weights[:, strip : strip + width], slot[some], drawn)


def _best(slot: np.ndarray, value: np.ndarray, line: np.ndarray):
    """The :data:`EXAMPLES` rows of each slot with the highest value (the earliest line on a tie)."""
    order = np.lexsort((line, -value, slot))
    slot, value, line = slot[order], value[order], line[order]
    rank = np.arange(len(slot)) - np.searchsorted(slot, slot)
    kept = rank < EXAMPLES
    return slot[kept], value[kept], line[kept]


def _summary(tally: WordTally, groups: Groups, moments: Moments, draws, shortcuts_found) -> Summary:
    """The summary's words per group, its shortcuts (``shortcuts_found``: the screened words and how
    to read their examples again) and its methods."""
    chosen = tally.chosen
    slots, intervals, best = draws
    place = {slot: i for i, slot in enumerate(slots)}
    names = {i: word for word, i in tally.vocabulary.items()}

    def stat(group: int, word: int) -> WordStat:
        at = moments.at(group, word)
        count = int(moments.counts[at])
        index = place.get((group, word))
        interval = None if index is None else intervals[index]
        inputs = max(int(groups.inputs[group]), 1)
        return WordStat(names[word], count, float(moments.sums[at] / count), interval,
                        float(moments.top_for[at] / inputs), float(moments.top_against[at] / inputs))

    classes = []
    for group, (label, target, split) in enumerate(groups.keys):
        classes.append(ClassWords(
            label, target, tally.methods[label].names.get(target, (str(target),))[0], split, int(groups.inputs[group]),
            float(moments.baseline[group]), [stat(group, w) for w in _ranked(moments, group, chosen, 1)],
            [stat(group, w) for w in _ranked(moments, group, chosen, -1)],
        ))
    order = list(tally.methods)
    classes.sort(key=lambda c: (order.index(c.method), c.target, ("all", "correct", "wrong").index(c.split)))
    screened, again = shortcuts_found
    shortcuts = _shortcuts(tally, groups, (screened, stat, moments.baseline), (place, best), again)
    infos = [MethodInfo(m.label, "sum" if _signed(m, chosen) else "max", m.signed, m.inputs,
                        sum(int(groups.inputs[g]) for g, k in enumerate(groups.keys) if k[0] == m.label and k[2] == "all"),
                        m.support, m.level, m.tests, chosen.bootstrap > 0)
             for m in tally.methods.values()]
    model = tally.model[1] if tally.model else ""
    return Summary("", model, _settings(chosen), infos, classes, shortcuts)


def _signed(method, chosen) -> bool:
    return chosen.rule == "sum" or (chosen.rule == "auto" and method.signed)


def _shortcuts(tally, groups: Groups, found_by, examples, again) -> list[Shortcut]:
    """``found_by``: the screened words, a word's statistic, each group's baseline."""
    screened, stat, baseline = found_by
    place, (best_slot, best_value, best_line) = examples
    found = []
    for (label, target, word), excess in screened.items():
        group = groups.find((label, target, "all"))
        if group is None or (group, word) not in place:  # no record of the class holds the word
            continue
        attribution = stat(group, word)
        if attribution.interval is None or attribution.interval.low <= max(0.0, float(baseline[group])):
            continue
        mine = best_slot == place[group, word]
        found.append((excess, attribution, label, target, list(zip(best_line[mine].tolist(), best_value[mine].tolist()))))
    lines = {line for *_, shown in found for line, _ in shown}
    records = again(lines) if lines else {}
    for excess, attribution, label, target, shown in found:
        for line, value in shown:
            _unchanged(records[line], line, (attribution.word, value), tally.methods[label], tally)
    shortcuts = []
    for excess, attribution, label, target, shown in sorted(found, key=lambda f: (-f[0].interval.low, f[1].word)):
        method = tally.methods[label]
        shortcuts.append(Shortcut(
            label, target, method.names.get(target, (str(target),))[0], attribution.word, excess.count,
            excess.rate, excess.support, excess.interval, attribution.mean, attribution.interval,
            [_example(records[line], line, value, method) for line, value in shown if line in records],
        ))
    return shortcuts


def _unchanged(record: AttributionRecord, line: int, word_value: tuple[str, float], method, tally: WordTally) -> None:
    """An example read again is the record counted: its word has the value the spool holds (the
    file may have been rewritten between the passes)."""
    word, value = word_value
    chosen = tally.chosen
    found = {w.key: w for w in input_words(record, tally.place(line), chosen.tokens, chosen.keep_case)}
    counted = found.get(word)
    again = None if counted is None else (counted.total if _signed(method, chosen) else counted.strongest)
    if again != value:
        raise BadInput(f"{tally.place(line)}: changed while it was read (not the record counted there)")


def _example(record: AttributionRecord, line: int, value: float, method) -> Example:
    return Example(record.id, line, record.label, method.names.get(record.predicted, (str(record.predicted),))[0], value,
                   record)


def _settings(chosen: SummarizeOptions) -> dict:
    return {"top": chosen.top, "min_count": chosen.min_count, "tokens": chosen.tokens, "keep_case": chosen.keep_case,
            "symbols": chosen.symbols, "rule": chosen.rule, "bootstrap": chosen.bootstrap, "ci": chosen.ci,
            "seed": chosen.seed, "min_excess": MIN_EXCESS}


def gate(summary: Summary, forbidden: list[str]) -> list[str]:
    """A line for each forbidden word among a class's top K words (over all its inputs) or its
    candidate shortcuts."""
    problems = []
    wanted = set(forbidden)
    for group in summary.words():
        for rank, stat in enumerate(group.for_class, 1):
            if stat.word in wanted:
                problems.append(
                    f"forbidden word {stat.word!r} is #{rank} of the words for class {group.name!r} "
                    f"({group.method}: mean {stat.mean:.3f}{_interval(stat.interval)}, in {stat.inputs} inputs)"
                )
    for shortcut in summary.shortcuts:
        if shortcut.word in wanted:
            problems.append(
                f"forbidden word {shortcut.word!r} is a candidate shortcut for class {shortcut.name!r} "
                f"({shortcut.method}: predicted as it in {shortcut.rate:.0%} of {shortcut.inputs} inputs, the data "
                f"supports {shortcut.support:.0%})"
            )
    return problems


def _interval(interval) -> str:
    return "" if interval is None else f" [{interval.low:.3f}, {interval.high:.3f}]"


# --- the records: a file read once (then the examples' lines again), or records in memory ------


def summarize_file(chosen: SummarizeOptions) -> Summary:
    """``contrastcat summarize`` on a records file (``-``: standard input, kept for the examples)."""
    source = RecordFile(chosen.attributions)
    try:
        records = ((number, record) for number, _, record in source.lines_kept())
        return summarize_records(records, chosen, source.name, lambda line: f"{source.name}:{line}",
                                 lambda lines: _lines_again(source, lines))
    finally:
        source.close()


def _lines_again(source: RecordFile, lines: set[int]) -> dict[int, AttributionRecord]:
    found = {}
    for number, raw in source.source.text_lines(False):
        if number in lines:
            found[number] = record_of_line(number, raw, source.name)
            if len(found) == len(lines):
                break
    if len(found) != len(lines):
        raise BadInput(f"{source.name}: changed while it was read (lines {sorted(lines - set(found))[:3]} are gone)")
    return found


def summarize_in_memory(records: list[AttributionRecord], chosen: SummarizeOptions) -> Summary:
    """The summary of records held in memory (item i read as line i + 1)."""
    return summarize_records(enumerate(records, 1), chosen, "summarize: records",
                             lambda line: f"summarize: records: item {line - 1}",
                             lambda lines: {n: records[n - 1] for n in lines})


def run_summarize(chosen: SummarizeOptions) -> Summary:
    """The command: the summary of the file, its JSON written to ``output`` and its page to
    ``html`` (``-``: standard output): both or neither (each to a temporary file, renamed into
    place once both were written whole)."""
    from contextlib import ExitStack

    from ..io.files import atomic_text_output

    summary = summarize_file(chosen)
    protected = [chosen.attributions, chosen.forbid_file]
    with ExitStack() as outputs:
        for path, text in ((chosen.output, lambda: summary.to_json() + "\n"), (chosen.html, summary.html)):
            if path is not None:
                outputs.enter_context(atomic_text_output(path, protected)).write(text())
    return summary
