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
from ..evaluation.word_stats import BLOCK, base_excess, corrected_level, paired_excess, poisson_weights, replicate_interval
from ..views.word_summary import MIN_EXCESS, ClassWords, Example, MethodInfo, Shortcut, Summary, WordStat
from ..records.record import AttributionRecord, RecordFile, record_of_line
from .options.summarize import SummarizeOptions
from .word_tally import SPOOL, WordTally

_CHUNK_ROWS = 1 << 18
SCREENED_MOST = 200  # association-flagged words per method and class whose attribution is drawn
EXAMPLES = 3


@dataclass
class Groups:
    """The final groups (method, target, split) and, per raw group of the tally, the ones it feeds."""

    keys: list[tuple[str, int, str]]
    feeds: np.ndarray  # [raw groups, 2]: the "all" group and the split's (-1: none)
    signed: np.ndarray  # per raw group: its method's words score by the sum rule
    inputs: np.ndarray  # per final group: its records


def summarize_records(records: Iterable[tuple[int, AttributionRecord]], chosen: SummarizeOptions, source: str,
                      again: Callable[[set[int]], dict[int, AttributionRecord]]) -> Summary:
    """The summary of ``records`` ((line, record) pairs, read once); ``again`` reads the records of
    some lines a second time (the shortcuts' examples)."""
    forbidden = forbidden_words(chosen)
    with tempfile.TemporaryFile(prefix="contrastcat-summary-") as spool:
        tally = WordTally(chosen, source, spool)
        for line, record in records:
            tally.add(record, line)
        tally.flush()
        if not tally.records:
            raise BadInput(f"{source}: no attribution records")
        groups = _groups(tally, chosen)
        counts, sums, tops, baseline = _moments(spool, groups, len(tally.vocabulary))
        screened = _screen(tally, chosen)
        shown = _shown(groups, counts, sums, chosen, forbidden, tally)
        slots = sorted({*shown, *((groups.keys.index((m, c, "all")), w) for m, c, w in screened
                                   if (m, c, "all") in groups.keys)})
        drawn, best = _draws(spool, groups, slots, len(tally.vocabulary), chosen)
    return _summary(tally, groups, (counts, sums, tops, baseline), (slots, drawn, best), screened, chosen, again, forbidden)


def forbidden_words(chosen: SummarizeOptions) -> list[str]:
    """--forbid's words and those of --forbid-file, as the summary counts them (case-folded unless kept)."""
    words = list(chosen.forbid or ())
    if chosen.forbid_file is not None:
        from ..io.lines import LineSource

        source = LineSource(chosen.forbid_file)
        try:
            for number, text in source.text_lines():
                word = text.split("#", 1)[0].strip()
                if word:
                    words.append(word)
        except UnicodeDecodeError:
            raise BadInput(f"{chosen.forbid_file}: not UTF-8 text") from None
        finally:
            source.close()
    if not chosen.tokens:
        from ..records.words import units

        for word in words:
            found = units(word)
            if len(found) != 1 or found[0].start != 0 or found[0].end != len(word):
                raise BadInput(
                    f"{chosen.named('forbid')}: {word!r} is not one word as summarize counts them "
                    "(punctuation and spaces part words): forbid each word alone"
                )
    return [word if chosen.keep_case else word.casefold() for word in words]


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
        signed[raw] = chosen.rule == "sum" or (chosen.rule == "auto" and method.signed)
    inputs = np.zeros(len(keys), dtype=np.int64)
    for raw, count in enumerate(tally.group_inputs):
        for final in feeds[raw]:
            if final >= 0:
                inputs[final] += count
    return Groups(keys, feeds, signed, inputs)


def _split(method, gold, predicted) -> str | None:
    """correct or wrong where the record's gold label tells (a multi-label record's one label does not)."""
    if gold is None or method.multi_label:
        return None
    if gold[0] == "i":
        return "correct" if gold[1] == predicted else "wrong"
    name = method.names.get(predicted)
    if name is not None:
        return "correct" if name.strip().casefold() == gold[1] else "wrong"
    return "wrong" if gold[1] in {n.strip().casefold() for n in method.names.values()} else None


def _chunks(spool) -> Iterator[np.ndarray]:
    """The spool's rows, in chunks that never part a record's rows."""
    spool.seek(0)
    carry = np.empty(0, dtype=SPOOL)
    while True:
        data = spool.read(_CHUNK_ROWS * SPOOL.itemsize)
        rows = np.frombuffer(data, dtype=SPOOL)
        if not len(rows):
            if len(carry):
                yield carry
            return
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


def _moments(spool, groups: Groups, words: int):
    """Per final group and word: inputs holding it, the sum of its values, how often it is an input's
    strongest unit for (0) and against (1) the class; and per group the mean of every word's value."""
    size = (len(groups.keys), max(words, 1))
    counts, sums = np.zeros(size, np.int64), np.zeros(size, np.float64)
    tops = np.zeros((2, *size), np.int64)
    total, occurrences = np.zeros(len(groups.keys)), np.zeros(len(groups.keys))
    for rows in _chunks(spool):
        values = _values(rows, groups)
        starts = np.flatnonzero(np.r_[True, rows["line"][1:] != rows["line"][:-1]])
        strongest = _each_record(values, starts, np.argmax)
        weakest = _each_record(values, starts, np.argmin)
        for column in (0, 1):
            final = groups.feeds[rows["group"], column]
            kept = final >= 0
            np.add.at(counts, (final[kept], rows["word"][kept]), 1)
            np.add.at(sums, (final[kept], rows["word"][kept]), values[kept])
            np.add.at(total, final[kept], values[kept])
            np.add.at(occurrences, final[kept], 1)
            for side, chosen, sign in ((0, strongest, 1), (1, weakest, -1)):
                hit = chosen[(final[chosen] >= 0) & (sign * values[chosen] > 0)]
                np.add.at(tops[side], (final[hit], rows["word"][hit]), 1)
    return counts, sums, tops, total / np.maximum(occurrences, 1)


def _each_record(values: np.ndarray, starts: np.ndarray, pick) -> np.ndarray:
    """The row of each record (rows ``starts[i]`` up to the next start) that ``pick`` (argmax, argmin) chooses."""
    ends = np.r_[starts[1:], len(values)]
    return np.array([start + pick(values[start:end]) for start, end in zip(starts, ends)], dtype=np.int64)


def _ranked(counts, sums, group: int, chosen: SummarizeOptions, sign: int) -> list[int]:
    """Word ids of ``group``'s top K by mean value (sign 1: highest first; -1: lowest, below 0 only)."""
    held = counts[group] >= chosen.min_count
    means = np.where(held, sums[group] / np.maximum(counts[group], 1), np.nan)
    candidates = np.flatnonzero(held & (sign * means > 0))
    order = candidates[np.lexsort((candidates, -sign * means[candidates]))]
    return [int(i) for i in order[: chosen.top]]


def _shown(groups: Groups, counts, sums, chosen, forbidden: list[str], tally: WordTally) -> set[tuple[int, int]]:
    shown = set()
    forbidden_ids = [tally.vocabulary[w] for w in forbidden if w in tally.vocabulary]
    for group in range(len(groups.keys)):
        for sign in (1, -1):
            shown.update((group, word) for word in _ranked(counts, sums, group, chosen, sign))
        shown.update((group, word) for word in forbidden_ids if counts[group, word] >= chosen.min_count)
    return shown


def _screen(tally: WordTally, chosen: SummarizeOptions) -> dict[tuple[str, int, int], tuple]:
    """The (method, class, word)s whose prediction rate lies far above what the data supports, with
    their association: at most :data:`SCREENED_MOST` a class, by the low end of the excess."""
    screened = {}
    for label, method in tally.methods.items():
        found = _association(method, chosen)
        for target in range(method.classes):
            ranked = sorted(((e.interval.low, w, e) for (c, w), e in found.items() if c == target), reverse=True)
            for _, word, excess in ranked[:SCREENED_MOST]:
                screened[label, target, word] = excess
    return screened


def _association(method, chosen: SummarizeOptions) -> dict:
    labelled = {g: table for g, table in method.holding.items() if g is not None}
    if not labelled or method.multi_label:
        holding = sum(method.holding.values())
        tests = int((holding[:, 0] >= chosen.min_count).sum()) * method.classes
        level = corrected_level(chosen.ci, tests)
        method.support, method.level, method.tests = "base rate", level, tests
        return _flagged(holding, method, lambda w, c: base_excess(int(holding[w, 1 + c]), int(holding[w, 0]),
                                                                    method.predicted[c] / method.inputs, level), chosen)
    size = max(len(t) for t in labelled.values())
    holding = np.zeros((size, 1 + method.classes), np.int64)
    gold = np.zeros((size, method.classes), np.int64)  # inputs holding the word labelled as each class
    both = np.zeros((size, method.classes), np.int64)  # ... and predicted as it
    for key, table in labelled.items():
        holding[: len(table)] += table
        for c in range(method.classes):
            if _is_class(method, key, c):
                gold[: len(table), c] += table[:, 0]
                both[: len(table), c] += table[:, 1 + c]
    tests = int((holding[:, 0] >= chosen.min_count).sum()) * method.classes
    level = corrected_level(chosen.ci, tests)
    method.support, method.level, method.tests = "gold labels", level, tests

    def excess(w, c):
        predicted, labelled_as = int(holding[w, 1 + c]), int(gold[w, c])
        return paired_excess(int(both[w, c]), predicted - int(both[w, c]), labelled_as - int(both[w, c]),
                             int(holding[w, 0]), level)

    return _flagged(holding, method, excess, chosen)


def _flagged(holding, method, excess, chosen) -> dict:
    found = {}
    for word in np.flatnonzero(holding[:, 0] >= chosen.min_count):
        for c in range(method.classes):
            if holding[word, 1 + c] == 0:
                continue
            result = excess(int(word), c)
            if result.interval.low > 0 and result.value >= MIN_EXCESS:
                found[c, int(word)] = result
    return found


def _is_class(method, key, c: int) -> bool:
    if key[0] == "i":
        return key[1] == c
    name = method.names.get(c)
    return name is not None and name.strip().casefold() == key[1]


def _draws(spool, groups: Groups, slots: list[tuple[int, int]], words: int, chosen: SummarizeOptions):
    """Pass three: for each (group, word) of ``slots``, its resamples' weighted sums and weights, and
    the records where it weighs most (line, value) for the shortcuts' examples."""
    resamples = chosen.bootstrap
    keys = np.array([g * words + w for g, w in slots], dtype=np.int64)
    sums, weights = np.zeros((len(slots), resamples)), np.zeros((len(slots), resamples))
    best = (np.empty(0, np.int64), np.empty(0), np.empty(0, np.int64))  # slot, value, line
    if not len(keys):
        return (sums, weights), best
    step = max(1, 4_000_000 // max(resamples, 1))  # rows drawn at once: about 32 MB of weights
    for rows in _chunks(spool):
        values = _values(rows, groups)
        for column in (0, 1):
            final = groups.feeds[rows["group"], column]
            key = np.where(final >= 0, final * words + rows["word"], -1)
            place = np.minimum(np.searchsorted(keys, key), len(keys) - 1)
            hit = np.flatnonzero(keys[place] == key)
            slot, value, line = place[hit], values[hit], rows["line"][hit]
            best = _best(np.r_[best[0], slot], np.r_[best[1], value], np.r_[best[2], line])
            for first in range(0, len(hit) if resamples else 0, step):
                part = slice(first, first + step)
                drawn = _weights(line[part], chosen.seed, resamples)
                np.add.at(sums, slot[part], drawn * value[part, None])
                np.add.at(weights, slot[part], drawn)
    return (sums, weights), best


def _weights(lines: np.ndarray, seed: int, resamples: int) -> np.ndarray:
    """Each line's Poisson weights: those its block's generator draws (:func:`poisson_weights`)."""
    drawn = np.empty((len(lines), resamples), dtype=np.float64)
    blocks = lines // BLOCK
    for block in np.unique(blocks):
        mine = blocks == block
        drawn[mine] = poisson_weights(seed, int(block), resamples)[lines[mine] % BLOCK]
    return drawn


def _best(slot: np.ndarray, value: np.ndarray, line: np.ndarray):
    """The :data:`EXAMPLES` rows of each slot with the highest value (the earliest line on a tie)."""
    order = np.lexsort((line, -value, slot))
    slot, value, line = slot[order], value[order], line[order]
    rank = np.arange(len(slot)) - np.searchsorted(slot, slot)
    kept = rank < EXAMPLES
    return slot[kept], value[kept], line[kept]


def _summary(tally: WordTally, groups: Groups, moments, draws, screened, chosen, again, forbidden) -> Summary:
    counts, sums, tops, baseline = moments
    slots, (resampled, weights), best = draws
    place = {slot: i for i, slot in enumerate(slots)}
    names = {i: word for word, i in tally.vocabulary.items()}

    def stat(group: int, word: int) -> WordStat:
        count = int(counts[group, word])
        index = place.get((group, word))
        interval = None if index is None else replicate_interval(resampled[index], weights[index], count, chosen.intervals)
        inputs = max(int(groups.inputs[group]), 1)
        return WordStat(names[word], count, float(sums[group, word] / count), interval,
                        float(tops[0, group, word] / inputs), float(tops[1, group, word] / inputs))

    classes = []
    for group, (label, target, split) in enumerate(groups.keys):
        classes.append(ClassWords(
            label, target, tally.methods[label].names.get(target, str(target)), split, int(groups.inputs[group]),
            float(baseline[group]), [stat(group, w) for w in _ranked(counts, sums, group, chosen, 1)],
            [stat(group, w) for w in _ranked(counts, sums, group, chosen, -1)],
        ))
    classes.sort(key=lambda c: (list(tally.methods).index(c.method), c.target, ("all", "correct", "wrong").index(c.split)))
    shortcuts = _shortcuts(tally, groups, screened, stat, baseline, (place, best), again)
    infos = [MethodInfo(m.label, "sum" if _signed(m, chosen) else "max", m.signed, m.inputs,
                        sum(int(groups.inputs[g]) for g, k in enumerate(groups.keys) if k[0] == m.label and k[2] == "all"),
                        m.support, m.level, m.tests)
             for m in tally.methods.values()]
    model = tally.model[1] if tally.model else ""
    summary = Summary(tally.source, model, _settings(chosen), infos, classes, shortcuts)
    summary.problems = gate(summary, forbidden, chosen)
    return summary


def _signed(method, chosen) -> bool:
    return chosen.rule == "sum" or (chosen.rule == "auto" and method.signed)


def _shortcuts(tally, groups: Groups, screened, stat, baseline, examples, again) -> list[Shortcut]:
    place, (best_slot, best_value, best_line) = examples
    found = []
    for (label, target, word), excess in screened.items():
        key = (label, target, "all")
        if key not in groups.keys:
            continue  # no record explains the class: nothing says the model leans on the word for it
        group = groups.keys.index(key)
        if (group, word) not in place:
            continue
        attribution = stat(group, word)
        if attribution.interval is None or attribution.interval.low <= max(0.0, float(baseline[group])):
            continue
        mine = best_slot == place[group, word]
        found.append((excess, attribution, label, target, list(zip(best_line[mine].tolist(), best_value[mine].tolist()))))
    lines = {line for *_, shown in found for line, _ in shown}
    records = again(lines) if lines else {}
    shortcuts = []
    for excess, attribution, label, target, shown in sorted(found, key=lambda f: (-f[0].interval.low, f[1].word)):
        method = tally.methods[label]
        shortcuts.append(Shortcut(
            label, target, method.names.get(target, str(target)), attribution.word, attribution.inputs,
            excess.rate, excess.support, excess.interval, attribution.mean, attribution.interval,
            [_example(records[line], line, value, method) for line, value in shown if line in records],
        ))
    return shortcuts


def _example(record: AttributionRecord, line: int, value: float, method) -> Example:
    return Example(record.id, line, record.label, method.names.get(record.predicted, str(record.predicted)), value, record)


def _settings(chosen: SummarizeOptions) -> dict:
    return {"top": chosen.top, "min_count": chosen.min_count, "tokens": chosen.tokens, "keep_case": chosen.keep_case,
            "symbols": chosen.symbols, "rule": chosen.rule, "bootstrap": chosen.bootstrap, "ci": chosen.ci,
            "seed": chosen.seed, "min_excess": MIN_EXCESS}


def gate(summary: Summary, forbidden: list[str], chosen: SummarizeOptions) -> list[str]:
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
        return summarize_records(records, chosen, source.name, lambda lines: _lines_again(source, lines))
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


def summarize_in_memory(records: list[AttributionRecord], chosen: SummarizeOptions, source: str) -> Summary:
    """The summary of records held in memory (their place in the list, from 1, as their line)."""
    return summarize_records(enumerate(records, 1), chosen, source, lambda lines: {n: records[n - 1] for n in lines})


def run_summarize(chosen: SummarizeOptions) -> Summary:
    """The command: the summary of the file, its JSON written to ``output`` and its page to
    ``html`` (each whole or not at all; ``-``: standard output)."""
    from ..io.files import atomic_text_output

    summary = summarize_file(chosen)
    for path, text in ((chosen.output, summary.to_json), (chosen.html, summary.html)):
        if path is not None:
            with atomic_text_output(path, [chosen.attributions]) as stream:
                stream.write(text() + ("\n" if path == chosen.output else ""))
    return summary
