"""Attribution records: what ``explain`` writes and ``evaluate`` and ``render`` read.

An attribution record is one JSON object a line, fields as in
:class:`AttributionRecord`. :class:`RecordFile` reads them as a stream and
validates each; a bad line is reported with file and line. The inputs
``explain`` reads are in :mod:`contrastcat.records.inputs` (re-exported here).
"""

from __future__ import annotations

import hashlib
import itertools
import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from .. import arguments
from ..errors import BadInput
from ..io import jsonl
from ..io.files import atomic_text_output
from ..io.lines import RECORD_LINES, LineSource, line_limit
from .inputs import LONGEST_LABEL
from .evidence import evidence_tokens, read_spans, written_spans
from .markup import notebook_html
from .spans import Word, word_scores
from .token_spans import check_tokens_at_offsets, spans_of_tokens

__all__ = [
    "AttributionRecord",
    "RecordFile",
    "check_record",
    "Records",
    "read_records",
    "write_records",
]


@dataclass
class AttributionRecord:
    """One explained input. ``scores[i]`` belongs to ``tokens[i]``, in [0, 1]; ``raw_scores[i]`` is the
    same token's score before that scaling, in the method's own units (signed where the method is;
    None in records written before it was kept, and in other tools' records that do not give it)."""

    id: Any
    text: str
    tokens: list[str]
    token_ids: list[int]
    offsets: list[list[int]]  # character span [start, end) of each token in ``text``
    special: list[bool]  # special tokens ([CLS], [SEP], ...) are never perturbed
    scores: list[float]
    target: int
    target_name: str
    probs: list[float]  # for the unperturbed input: softmax over the classes, or a sigmoid per label (multi_label)
    predicted: int
    label: Any
    method: str
    model: str
    model_fingerprint: str
    library: str | None  # fingerprint of the reference library, or null
    raw_scores: list[float] | None = None  # written after ``scores``
    refs_kept: int | None = None  # Contrast-CAT: maps kept by the deletion test
    refs_total: int | None = None  # Contrast-CAT: maps computed
    truncated: bool = False  # the text had more tokens than the model's length limit
    tokens_dropped: int = 0  # how many tokens the cut to the length limit dropped (off its end, or off its start where the tokenizer truncates on the left)
    pad_token_id: int | None = None  # the token batches were padded with (decoders: often EOS)
    model_dtype: str | None = None  # the weights' precision: float32, bfloat16, float16
    settings: dict = field(default_factory=dict)
    # A sentence pair: its second text, and per token the text it is in (0: ``text``, 1: ``pair``,
    # None: a token the tokenizer added); ``offsets`` are into that text. Not written for a single text.
    pair: str | None = None
    segments: list[int | None] | None = None
    # With ``explain --words``: :meth:`word_scores` as written (word, start, end, score, raw; and segment 1
    # for a word of a pair's second text).
    words: list[dict] | None = None
    # Character spans known to decide the label (explain --evidence-field): [start, end] each, and
    # [start, end, 1] in a pair's second text. Written only where the input gave some.
    evidence: list[list[int]] | None = None
    # The model is a multi-label classifier: ``probs`` are a sigmoid per label (several may be
    # above 0.5), ``target`` a label. Written only where true.
    multi_label: bool = False
    # Fields this version does not know (another tool's, a later version's), as read: written back
    # after the others, so a file read and saved again loses nothing.
    extra: dict | None = field(default=None, compare=False, repr=False)
    line: int | None = field(default=None, compare=False, repr=False)  # where it was read; never written

    def to_dict(self) -> dict:
        """The record as written to JSONL (without where it was read from)."""
        values = asdict(self)
        del values["line"]
        extra = values.pop("extra") or {}
        for key in (*PAIR_FIELDS, "words", "evidence"):
            if values[key] is None:
                del values[key]
        if not values["multi_label"]:
            del values["multi_label"]
        raw = values.pop("raw_scores")
        if raw is None:  # a record without them is written as it was read
            return {**values, **extra}
        written = {}
        for key, value in values.items():
            written[key] = value
            if key == "scores":
                written["raw_scores"] = raw
        return {**written, **extra}

    def to_json(self) -> str:
        return jsonl.dumps(self.to_dict())

    def evidence_tokens(self) -> list[bool] | None:
        """Per token, whether it overlaps an evidence span of its text (None: the record has no
        evidence; :mod:`contrastcat.records.evidence`)."""
        if self.evidence is None:
            return None
        spans = [(*span, 0) if len(span) == 2 else span for span in self.evidence]
        return evidence_tokens(self.offsets, self.segments, spans)

    def word_scores(self) -> list[Word]:
        """Its words as a reader sees them (:mod:`contrastcat.records.words`: pieces joined, punctuation
        a unit of its own), special tokens left out, each with its character
        span, its tokens' raw scores combined (``raw``: summed for a signed map, the strongest for
        an unsigned one) and that min–max scaled over the
        words (``score``) — what ``render --words`` shades. ``[w.to_dict() for w in ...]`` is what
        ``explain --words`` writes as the record's ``words``."""
        return word_scores(self)

    def _repr_html_(self) -> str:
        return notebook_html([self])


class Records(list):
    """A list of records, as ``contrastcat.explain(...)`` returns them: a notebook shows them coloured."""

    def to_dicts(self) -> list[dict]:
        return [record.to_dict() for record in self]

    def save(self, path: str) -> int:
        """Write them as JSONL (atomically; ``-``: standard output)."""
        for index, record in enumerate(self):
            if not isinstance(record, AttributionRecord):
                raise BadInput(f"save: item {index} is not an AttributionRecord, got {type(record).__name__}")
            # Changed by hand, it is checked as its line will be read back: nothing is written that
            # read_records, evaluate or render would refuse.
            check_record(record.to_dict(), f"save: item {index}", index + 1)
        return write_records(arguments.path("save: path", path), self)

    def to_frame(self, level: str = "tokens"):
        """A pandas DataFrame (pandas where installed): one row per token (``level="tokens"``: its
        position, text, span, segment, special flag, score, raw score, and whether it is evidence
        where a record has some), per word (``"words"``: :meth:`AttributionRecord.word_scores`, its
        tokens' raw scores combined and min–max scaled over the words), or per record
        (``"records"``: the target, its probability where the record has one, the prediction, the
        label). Each row names its record (``record``: its index here), id and method; ``segment``
        is the text a token is in (0, or 1 in a pair's second text; none for a special token)."""
        try:
            import pandas
        except ImportError:
            raise ImportError("to_frame needs pandas (pip install pandas); to_dicts() needs nothing") from None
        rows_of = FRAME_LEVELS.get(level) if isinstance(level, str) else None
        if rows_of is None:
            raise BadInput(f"to_frame: level must be one of {', '.join(FRAME_LEVELS)}, got {level!r}")
        for index, record in enumerate(self):
            if not isinstance(record, AttributionRecord):
                raise BadInput(f"to_frame: item {index} is not an AttributionRecord, got {type(record).__name__}")
        frame = pandas.DataFrame([row for index, record in enumerate(self) for row in rows_of(index, record)],
                                 columns=list(FRAME_COLUMNS[level]))
        if "segment" in frame:
            frame["segment"] = frame["segment"].astype("Int64")  # whole numbers, none where a token has none
        return frame

    def _repr_html_(self) -> str:
        more = f"<p><small>… and {len(self) - 50} more</small></p>" if len(self) > 50 else ""
        return notebook_html(self[:50]) + more


def _segments(record: AttributionRecord) -> list[int | None]:
    """Per token, the text it is in: a single text's are 0 (its special tokens none), as a pair's are."""
    if record.segments is not None:
        return list(record.segments)
    return [None if special else 0 for special in record.special]


def _named_rows(index: int, record: AttributionRecord) -> dict:
    return {"record": index, "id": record.id, "method": record.method, "target_name": record.target_name}


def _token_rows(index: int, record: AttributionRecord) -> list[dict]:
    evidence = record.evidence_tokens()
    raw, segments = record.raw_scores, _segments(record)
    return [{**_named_rows(index, record), "position": position, "token": token, "start": start, "end": end,
             "segment": segments[position],
             "special": record.special[position], "score": record.scores[position],
             "raw_score": None if raw is None else raw[position],
             "evidence": None if evidence is None else evidence[position]}
            for position, (token, (start, end)) in enumerate(zip(record.tokens, record.offsets))]


def _word_rows(index: int, record: AttributionRecord) -> list[dict]:
    return [{**_named_rows(index, record), "word": word.text, "start": word.start, "end": word.end,
             "segment": word.segment, "score": word.score, "raw": word.raw} for word in record.word_scores()]


def _record_rows(index: int, record: AttributionRecord) -> list[dict]:
    probability = record.probs[record.target] if 0 <= record.target < len(record.probs) else None  # made elsewhere
    return [{**_named_rows(index, record), "target": record.target, "probability": probability,
             "predicted": record.predicted, "label": record.label, "model": record.model, "tokens": len(record.tokens),
             "truncated": record.truncated, "text": record.text, "pair": record.pair}]


FRAME_LEVELS = {"tokens": _token_rows, "words": _word_rows, "records": _record_rows}
_NAMED = ("record", "id", "method", "target_name")
FRAME_COLUMNS = {
    "tokens": (*_NAMED, "position", "token", "start", "end", "segment", "special", "score", "raw_score", "evidence"),
    "words": (*_NAMED, "word", "start", "end", "segment", "score", "raw"),
    "records": (*_NAMED, "target", "probability", "predicted", "label", "model", "tokens", "truncated", "text", "pair"),
}


def text_digest(*parts: str) -> bytes:
    """A digest of ``parts`` told apart from any other sequence of strings (each one's length first)."""
    return bytes_digest(*(part.encode("utf-8", "surrogatepass") for part in parts))


def bytes_digest(*parts: bytes) -> bytes:
    digest = hashlib.blake2b(digest_size=16)
    for data in parts:
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.digest()


def input_digest(record: AttributionRecord, *more: str) -> bytes:
    """The input a record explains, told by a digest of its id, text and pair (and ``more``: what
    else a reader tells records apart by, a target class)."""
    texts = (record.text,) if record.pair is None else (record.text, record.pair)
    return text_digest(repr(record.id), *texts, *more)


SCORE_DECIMALS = 6
# Raw scores are in the method's units (a relevance of 1e-9 or of 40): significant digits, not decimals.
RAW_DIGITS = 7


def rounded(scores) -> list[float]:
    """Scores as records store them; re-attributions are rounded the same way before comparing."""
    return [round(float(s), SCORE_DECIMALS) for s in scores]


def raw_rounded(scores) -> list[float]:
    """Raw scores as records store them: to :data:`RAW_DIGITS` significant digits."""
    return [float(f"{float(s):.{RAW_DIGITS}g}") for s in scores]


def write_records(path: str, records: Iterable[AttributionRecord], inputs: Sequence[str | None] = ()) -> int:
    """Write records atomically (``-``: standard output); returns how many."""
    count = 0
    with atomic_text_output(path, inputs) as stream:
        for record in records:
            stream.write(record.to_json() + "\n")
            count += 1
    return count


# --- reading records -------------------------------------------------------------


def _number(value: Any) -> bool:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an int past a float's range: no score can be computed with it
        return False


def _finite_magnitudes(values: list) -> bool:
    """Magnitudes that add up to a finite number (ints past a float's range do not)."""
    try:
        return math.isfinite(sum(map(abs, values)))
    except OverflowError:
        return False


def _list_of(check: Callable[[Any], bool], surely: Callable[[list], bool] | None = None) -> Callable[[Any], bool]:
    """A list each item of which passes ``check``. ``surely``: a test at C speed that, where it
    says yes, every item would pass (a record as JSON reads it: exact types); where it says no,
    the items are checked one by one, so its answer never differs."""
    def valid(value: Any) -> bool:
        return isinstance(value, list) and ((surely is not None and surely(value)) or all(map(check, value)))

    return valid


def _of_types(*kinds: type) -> Callable[[list], bool]:
    allowed = set(kinds)
    return lambda items: set(map(type, items)) <= allowed


def _finite_numbers(items: list) -> bool:
    """Ints and floats (not bools) whose sum is finite: then each is (an infinity or a NaN
    would make it so), and a sum that overflows only sends them to be checked one by one."""
    try:
        return set(map(type, items)) <= {int, float} and math.isfinite(sum(items, 0.0))
    except OverflowError:  # an int too large for a float
        return False


def _indices(items: list) -> bool:
    return set(map(type, items)) <= {int} and min(items, default=0) >= 0


def _spans(items: list) -> bool:
    return set(map(type, items)) <= {list} and set(map(len, items)) <= {2} and _indices(
        list(itertools.chain.from_iterable(items))
    )


def _optional(check: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda value: value is None or check(value)


# A method's settings are a few short options. Their size is bounded: a reader keeps the first
# settings of each method to label its variants, for as long as it reads.
MOST_SETTINGS = 1000
LONGEST_SETTING = 1000  # characters of a key or of a string value


def _plain_settings(value: Any) -> bool:
    return (
        isinstance(value, dict) and len(value) <= MOST_SETTINGS
        and all(isinstance(key, str) and len(key) <= LONGEST_SETTING for key in value)
        and all(v is None or isinstance(v, (int, bool)) or (isinstance(v, float) and math.isfinite(v))
                or (isinstance(v, str) and len(v) <= LONGEST_SETTING) for v in value.values())
    )


def _index(value: Any) -> bool:
    return arguments.plain_int(value) and value >= 0


_WORD_FIELDS = {"word", "start", "end", "score", "raw"}


def _word(value: Any) -> bool:
    """One of ``explain --words``' words, as :meth:`Word.to_dict` writes it."""
    return (
        isinstance(value, dict) and set(value) - {"segment"} == _WORD_FIELDS and isinstance(value["word"], str)
        and _index(value["start"]) and _index(value["end"]) and _number(value["score"]) and _number(value["raw"])
        and value.get("segment", 1) == 1 and not isinstance(value.get("segment"), bool)
    )


# What each field of a record must hold, and how to say so.
RECORD_FIELDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "id": (lambda v: isinstance(v, (str, int, float)) and not isinstance(v, bool), "a string or a number"),
    "text": (lambda v: isinstance(v, str), "a string"),
    "tokens": (_list_of(lambda v: isinstance(v, str), _of_types(str)), "a list of strings"),
    "scores": (_list_of(_number, _finite_numbers), "a list of finite numbers"),
    # Summed over a word's pieces, and scaled: their magnitudes must add up to a finite number.
    "raw_scores": (
        _optional(lambda v: _list_of(_number, _finite_numbers)(v) and _finite_magnitudes(v)),
        "a list of finite numbers (their magnitudes adding up to a finite number) or null",
    ),
    "target": (_index, "a class index (an integer, 0 or more)"),
    "token_ids": (_list_of(_index, _indices), "a list of token ids (integers, 0 or more)"),
    "special": (_list_of(lambda v: isinstance(v, bool), _of_types(bool)), "a list of booleans"),
    "offsets": (_list_of(lambda o: isinstance(o, list) and len(o) == 2 and all(_index(v) for v in o), _spans),
                "a list of [start, end] pairs of integers"),
    "target_name": (lambda v: isinstance(v, str), "a string"),
    "probs": (_list_of(_number, _finite_numbers), "a list of finite numbers"),
    "predicted": (_index, "a class index (an integer, 0 or more)"),
    "method": (lambda v: isinstance(v, str), "a string"),
    "model": (lambda v: isinstance(v, str), "a string"),
    "model_fingerprint": (lambda v: isinstance(v, str), "a string"),
    "library": (_optional(lambda v: isinstance(v, str)), "a string or null"),
    "refs_kept": (_optional(_index), "an integer or null"),
    "refs_total": (_optional(_index), "an integer or null"),
    "truncated": (lambda v: isinstance(v, bool), "true or false"),
    "multi_label": (lambda v: isinstance(v, bool), "true or false"),
    "tokens_dropped": (_index, "an integer, 0 or more"),
    "pad_token_id": (_optional(_index), "a token id or null"),
    "model_dtype": (_optional(lambda v: v in ("float32", "bfloat16", "float16")), "float32, bfloat16, float16 or null"),
    "settings": (
        _plain_settings,
        f"an object of at most {MOST_SETTINGS} plain values (strings, finite numbers, booleans; keys and strings of "
        f"at most {LONGEST_SETTING} characters)",
    ),
    "pair": (_optional(lambda v: isinstance(v, str)), "a string or null"),
    # As an input's label is read: evaluate's gold target resolves it against the model's classes.
    # A reader checking gold labels keeps each distinct one until the model loads: a class name is short.
    "label": (
        _optional(lambda v: (isinstance(v, str) and len(v) <= LONGEST_LABEL) or arguments.plain_int(v)),
        f"a class index, a class name (at most {LONGEST_LABEL} characters) or null",
    ),
    "segments": (
        _optional(_list_of(lambda v: v is None or (arguments.plain_int(v) and v in (0, 1)))),
        "a list of 0, 1 or null (one per token) or null",
    ),
    "words": (
        _optional(_list_of(_word)),
        "a list of objects with word (a string), start and end (integers, 0 or more), score and raw (finite "
        "numbers) and an optional segment (1), or null",
    ),
}
PAIR_FIELDS = ("pair", "segments")  # written only for a sentence pair
REQUIRED = ("text", "scores", "target")  # and "tokens" or "offsets"; explain's records have every field
PER_TOKEN = ("token_ids", "offsets", "special")


def check_record(obj: dict, where: str, line: int | None = None) -> AttributionRecord:
    """The record of one JSON object, every field checked. A record made elsewhere (no token ids,
    :mod:`.elsewhere`) may give only ``text``, ``scores``, ``target`` and the ``tokens`` or
    ``offsets`` the scores belong to: its tokens are then the text at those offsets, its id
    ``line``, its method ``unknown``."""
    if obj.get("token_ids") == []:
        # What a record made elsewhere holds in memory, and so what Records.save writes for it: no ids.
        obj = {**obj, "token_ids": None}
    _check_fields(obj, where, line)
    given_tokens = "tokens" in obj  # else they are made from the offsets below, and agree
    if "tokens" not in obj:
        if any(not start <= end <= len(obj["text"]) for start, end in obj["offsets"]):
            raise BadInput(f"{where}: 'offsets' must be spans [start, end) inside 'text'")
        obj = {**obj, "tokens": [obj["text"][start:end] for start, end in obj["offsets"]]}
    if "id" not in obj:
        obj = {**obj, "id": line}
    length = len(obj["tokens"])
    if len(obj["scores"]) != length:
        raise BadInput(f"{where}: 'tokens' and 'scores' must be lists of the same length")
    for key in (*PER_TOKEN, "segments", "raw_scores"):
        if obj.get(key) is not None and len(obj[key]) != length:
            raise BadInput(f"{where}: {key!r} must be a list with one entry per token")
    if not obj.get("token_ids") and obj.get("offsets") is None:
        # Made elsewhere, scores per token string: where each one is (render shades them, evaluate aligns them).
        obj = {**obj, "offsets": spans_of_tokens(obj["text"], obj["tokens"], where)}
    _check_offsets(obj, where, given_tokens)
    if obj.get("evidence") is not None:
        texts = (obj["text"],) if obj.get("pair") is None else (obj["text"], obj["pair"])
        obj = {**obj, "evidence": written_spans(read_spans(obj["evidence"], texts, where))}
    record = _record(obj, length)
    if record.words is not None and jsonl.dumps(record.words) != jsonl.dumps(_written_words(record)):
        raise BadInput(
            f"{where}: 'words' are not this record's words (explain --words writes them from its tokens, offsets "
            "and raw scores; a record changed since must drop them)"
        )
    return record


def _written_words(record: AttributionRecord) -> list[dict]:
    return [word.to_dict() for word in word_scores(record)]


def _check_fields(obj: dict, where: str, line: int | None) -> None:
    """Every field a record needs is there, and each one given has its type."""
    missing = [key for key in REQUIRED if key not in obj]
    if "tokens" not in obj and obj.get("offsets") is None:
        missing.append("tokens or offsets")
    if "id" not in obj and (line is None or obj.get("token_ids")):
        missing.append("id")
    if missing:
        raise BadInput(f"{where}: not an attribution record (missing {', '.join(sorted(missing))})")
    for key, (valid, expected) in RECORD_FIELDS.items():
        if key in obj and not (valid(obj[key]) or (key in PER_TOKEN and obj[key] is None)):
            raise BadInput(f"{where}: {key!r} must be {expected}")
    if (obj.get("pair") is None) != (obj.get("segments") is None):
        raise BadInput(f"{where}: a sentence pair's record has both 'pair' and 'segments' (one per token)")
    if obj.get("pair") is not None and not obj.get("token_ids"):
        raise BadInput(f"{where}: a sentence pair's record needs the 'token_ids' explain writes")


def _check_offsets(obj: dict, where: str, given_tokens: bool) -> None:
    """Each span inside its text (the pair's, for its second segment), and the tokens given the
    text at their spans."""
    offsets = obj.get("offsets")
    if offsets is None:
        return
    segments = obj.get("segments") or [0] * len(offsets)
    if any(
        not start <= end <= len(obj["pair"] if segment == 1 else obj["text"])
        for (start, end), segment in zip(offsets, segments)
    ):
        inside = "'text' (or 'pair', for its tokens)" if obj.get("pair") is not None else "'text'"
        raise BadInput(f"{where}: 'offsets' must be spans [start, end) inside {inside}")
    if given_tokens:
        check_tokens_at_offsets((obj["text"], obj.get("pair")), obj["tokens"], offsets, obj.get("segments"), where)


def _record(obj: dict, length: int) -> AttributionRecord:
    """The record of a checked object, what it leaves out filled in."""
    offsets = obj.get("offsets")
    known = {f.name for f in fields(AttributionRecord)} - {"line", "extra"}
    values = {key: value for key, value in obj.items() if key in known}
    values["extra"] = {key: value for key, value in obj.items() if key not in known} or None
    for key in PER_TOKEN:
        if values.get(key) is None:
            values.pop(key, None)  # null: as if absent, filled in below
    values.setdefault("token_ids", [])
    # Without flags, a token with an empty character span is a special token ([CLS], [SEP]).
    values.setdefault("special", [start == end for start, end in offsets] if offsets else [False] * length)
    values.setdefault("offsets", [[0, 0]] * length)
    values.setdefault("target_name", str(obj["target"]))
    values.setdefault("probs", [])
    values.setdefault("predicted", obj["target"])
    values.setdefault("label", None)
    values.setdefault("method", "unknown")
    values.setdefault("model", "")
    values.setdefault("model_fingerprint", "")
    values.setdefault("library", None)
    return AttributionRecord(**values)


class RecordFile:
    """The records of a JSONL file (``-``: standard input), read as a stream."""

    def __init__(self, path: str, limit: int | None = None) -> None:
        self.source = LineSource(path, line_limit(RECORD_LINES))
        self.limit = limit  # the first records only (None: all)
        self.checked: int | None = None

    @property
    def name(self) -> str:
        return self.source.name

    def check(self, each: Callable[[AttributionRecord], None] | None = None) -> int:
        """Validate every line once (standard input is kept for the next pass), calling ``each``
        on every record for checks of the command's own; returns the count."""
        count = 0
        for record in self._records(keep=True):
            if each is not None:
                each(record)
            count += 1
        self.checked = count
        return count

    def records(self) -> Iterator[AttributionRecord]:
        return self._records(keep=False)

    def lines(self) -> Iterator[tuple[int, str, AttributionRecord]]:
        """Each record with its line's number and text (:func:`parsed_lines`), read once."""
        return itertools.islice(parsed_lines(self.source.text_lines(False), self.name), self.limit)

    def lines_kept(self) -> Iterator[tuple[int, str, AttributionRecord]]:
        """As :meth:`lines`, standard input kept for another read (of some lines again)."""
        return itertools.islice(parsed_lines(self.source.text_lines(True), self.name), self.limit)

    def placed(self) -> Iterator[tuple[int, int, str, AttributionRecord]]:
        """Each record with its line's number, byte offset and text, after :meth:`check` (which
        keeps standard input): a reader holding many records may hold where they are instead,
        and read each again with :meth:`line_at`."""
        place = [0]  # the offset of the line read last: each line is parsed as soon as it is read

        def remembered():
            for number, line, offset in self.source.placed_lines():
                place[0] = offset
                yield number, line

        for number, raw, record in itertools.islice(parsed_lines(remembered(), self.name), self.limit):
            yield number, place[0], raw, record

    def line_at(self, number: int, offset: int) -> bytes:
        """The bytes of line ``number`` as they are now at its byte ``offset`` (:meth:`placed`):
        the caller tells whether they are still the line it read."""
        return self.source.line_at(offset, number)

    def _records(self, keep: bool) -> Iterator[AttributionRecord]:
        return itertools.islice(parsed_records(self.source.text_lines(keep), self.name), self.limit)

    def close(self) -> None:
        self.source.close()


def parsed_records(numbered: Iterable[tuple[int, str]], name: str) -> Iterator[AttributionRecord]:
    """The records of (1-based number, JSONL line) pairs, each checked as ``name:number``; blank
    lines are skipped, and no record at all is bad input."""
    return (record for _, _, record in parsed_lines(numbered, name))


def parsed_lines(numbered: Iterable[tuple[int, str]], name: str) -> Iterator[tuple[int, str, AttributionRecord]]:
    """As :func:`parsed_records`, each record with its line's number and text (what a reader
    holding many records may keep instead: a parsed record takes many times its line)."""
    found = 0
    for number, raw in jsonl.lines(numbered):
        found += 1
        yield number, raw, record_of_line(number, raw, name)
    if not found:
        raise BadInput(f"{name}: no attribution records")


def record_of_line(number: int, raw: str, name: str) -> AttributionRecord:
    """The record of line ``number`` of ``name``, checked."""
    where = f"{name}:{number}"
    try:
        obj = jsonl.parse(raw)
    except jsonl.NotStrictJSON as error:
        raise BadInput(f"{where}: {error}") from None
    if not isinstance(obj, dict):
        raise BadInput(f"{where}: expected a JSON object")
    record = check_record(obj, where, number)
    record.line = number
    return record


def read_records(path: str) -> list[AttributionRecord]:
    """All attribution records of a JSONL file (``-``: standard input), validated."""
    return list(RecordFile(path).records())
