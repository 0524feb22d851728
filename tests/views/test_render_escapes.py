"""``render`` shows control and bidi characters from the records as escapes.

An id like ``\\x1b]0;pwned\\x07\\x1b[2J`` must not set the terminal's title and clear its
screen; CR, BEL and NUL in a text must not reach the terminal; an unclosed U+202E must not
reverse the tokens after it, in the terminal or in ``--html``. Each is shown as Python
writes it (``\\x1b``, ``\\x07``, ``\\r``, ``\\x00``, ``\\u202e``), in both views. The records
are written by hand: no model is needed.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest

from contrastcat.records.record import read_records

from ..helpers import invoke

EVIL_ID = "evil\x1b]0;pwned\x07\x1b[2J"
PIECES = ["good\r", "film\x07", "nul\x00here", "\u202ereversed", "after", "all", "\x9b31m\x85", "del\x7f"]
METHOD = "m\x1b[31m[red]"
TARGET = "pos\u202e[/]"
SECOND_ID = "two\nlines\u2028fake  m → pos (p=1.000)"
SECOND_TEXT = "first line\nsecond\tline \u2067isolate"

# What must never be printed as itself: C0 and C1 controls, DEL and the bidi controls
# (tab and newline are allowed as layout; they are checked where one line is expected).
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
SGR = re.compile(r"\x1b\[[0-9;]*m")  # Rich's colours: the only escape sequences allowed


def _record(ident, text, method=METHOD, target_name=TARGET):
    offsets, tokens, cursor = [[0, 0]], ["[CLS]"], 0
    for piece in text.split(" "):
        offsets.append([cursor, cursor + len(piece)])
        tokens.append(piece)
        cursor += len(piece) + 1
    offsets.append([0, 0])
    tokens.append("[SEP]")
    scores = [0.0] + [round((i + 1) / (len(tokens) - 2), 3) for i in range(len(tokens) - 2)] + [0.0]
    return {
        "id": ident, "text": text, "tokens": tokens, "scores": scores, "target": 0, "offsets": offsets,
        "special": [True] + [False] * (len(tokens) - 2) + [True], "target_name": target_name,
        "probs": [0.97, 0.03], "method": method,
    }


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    path = tmp_path_factory.mktemp("escapes") / "hostile.jsonl"
    lines = [_record(EVIL_ID, " ".join(PIECES)), _record(SECOND_ID, SECOND_TEXT)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


# Words are what a reader sees: control and format characters part them as white space does
# (and are shown, escaped, between them), so "nul\x00here" is two words.
WORDS = ["good", "film", "nul", "here", "reversed", "after", "all", "31m", "del", "first", "line", "second", "line",
         "isolate"]
MARK = re.compile(r"\[([^\]\n]*?) [+-]?\d+\.\d\d\]")  # "[piece 0.11]": a shaded piece in plain text


def _assert_escaped(shown: str) -> None:
    """No control character as itself, each shown as its escape (once the shading marks and the
    page's tags around the pieces are read through)."""
    assert not CONTROL.findall(shown), CONTROL.findall(shown)
    shown = re.sub(r"<[^>]+>", "", MARK.sub(r"\1", shown))
    for escaped in (r"evil\x1b]0;pwned\x07\x1b[2J", r"good\r", r"film\x07", r"nul\x00here", r"\u202ereversed",
                    r"\x9b31m\x85", r"del\x7f", r"m\x1b[31m[red]", r"pos\u202e[/]", r"\u2067isolate"):
        assert escaped in shown, (escaped, shown)


@pytest.mark.parametrize("words", [[], ["--words"]], ids=["tokens", "words"])
def test_plain_render_prints_no_control_character(records, words):
    result = invoke("render", records, "--color", "never", *words)
    assert result.exit_code == 0, result.output
    _assert_escaped(result.stdout)
    if words:  # a word is marked alone, the control character after it shown escaped
        assert re.search(r"\[good \d\.\d\d\]\\r \[film \d\.\d\d\]\\x07", result.stdout), result.stdout
    else:
        assert "[good\\r " in result.stdout  # a marked token is escaped inside its brackets too
    lines = result.stdout.splitlines()
    # The id's line breaks are escapes: a header stays one line and cannot forge another record's.
    assert lines[0].startswith(r"evil\x1b]0;pwned\x07\x1b[2J  m\x1b[31m[red] → pos\u202e[/] (p=0.970)")
    assert r"two\nlines\u2028fake  m → pos (p=1.000)  m\x1b[31m[red] →" in result.stdout
    # A text's own newline and tab are layout, kept.
    layout = r"\[line \d\.\d\d\]\n\[second \d\.\d\d\]\t\[line " if words else re.escape("[line\nsecond\tline ")
    assert re.search(layout, result.stdout), result.stdout


def test_coloured_render_prints_only_colour_codes(records):
    result = invoke("render", records, "--color", "always")
    assert result.exit_code == 0, result.output
    assert SGR.search(result.stdout)  # coloured indeed
    shown = SGR.sub("", result.stdout)
    _assert_escaped(shown)
    assert "[red]" in shown and "[/]" in shown  # printed, never read as Rich markup
    legend, title = shown.splitlines()[:2]  # coloured, the scale's legend comes first
    assert legend.startswith(("unsigned map: relevance 0", "signed map: against the class"))
    assert title == r"evil\x1b]0;pwned\x07\x1b[2J  m\x1b[31m[red] → pos\u202e[/] (p=0.970)"


def test_top_words_are_escaped_one_line_per_record(records):
    result = invoke("render", records, "--top", "3", "--color", "always")
    assert result.exit_code == 0, result.output
    assert not CONTROL.findall(result.stdout)
    lines = result.stdout.splitlines()
    assert len(lines) == 2 and r"evil\x1b]0;pwned\x07\x1b[2J" in lines[0]
    assert "del 1.00" in lines[0]  # words, unless --no-words: the DEL parts it from nothing shown
    tokens = invoke("render", records, "--top", "3", "--no-words", "--color", "always")
    assert not CONTROL.findall(tokens.stdout) and r"del\x7f 1.00" in tokens.stdout.splitlines()[0]


class _Tokens(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tokens: list[dict] = []
        self.texts: list[dict] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        classes = (attrs.get("class") or "").split()
        if tag == "span" and "t" in classes:
            self.tokens.append(attrs)
        if tag == "div" and "text" in classes:
            self.texts.append(attrs)


def test_html_escapes_controls_and_isolates_each_token(records, tmp_path):
    page = tmp_path / "page.html"
    result = invoke("render", records, "--html", page, "--words")
    assert result.exit_code == 0, result.output
    text = page.read_text(encoding="utf-8")
    assert not CONTROL.findall(text), CONTROL.findall(text)
    _assert_escaped(text.replace("&#x27;", "'"))
    assert "<h2>evil\\x1b]0;pwned\\x07\\x1b[2J</h2>" in text
    assert "two\\nlines\\u2028fake" in text
    parsed = _Tokens()
    parsed.feed(text)
    assert [attrs["aria-label"].split(":")[0] for attrs in parsed.tokens] == WORDS
    for attrs in parsed.tokens:  # a token's bidi cannot reach the next one
        assert "unicode-bidi:isolate" in attrs["style"].replace(" ", ""), attrs
    assert parsed.texts and all(attrs.get("dir") == "auto" for attrs in parsed.texts)
    assert "\\u202e<span" in text  # the override, between two words, shown as its escape
    again = tmp_path / "again.html"
    assert invoke("render", records, "--html", again, "--words").exit_code == 0
    assert again.read_bytes() == page.read_bytes()  # still byte-deterministic


def test_python_render_and_notebook_view(records):
    import contrastcat

    found = read_records(str(records))
    shown = contrastcat.render(found)
    _assert_escaped(shown)
    assert shown.splitlines()[0].startswith(r"evil\x1b]0;pwned\x07\x1b[2J  m\x1b[31m[red] →")
    notebook = found[0]._repr_html_()
    # The page's view (tokens): the override is its token's first character, shown as its escape.
    assert not CONTROL.findall(notebook) and r">\u202ereversed<" in notebook


def test_visible_keeps_ordinary_text():
    from contrastcat.records.spans import visible

    ordinary = "café naïve 中文テキスト 😀 👨\u200d👩\u200d👧 a\u00a0b x\u3000y \\x1b typed"
    assert visible(ordinary) == ordinary
    assert visible(7) == "7" and visible(1.5) == "1.5"
    assert visible("a\tb\nc\u2028d\re", body=True) == "a\tb\nc\u2028d\\re"
    assert visible("a\tb\nc\u2028d\re") == "a\\tb\\nc\\u2028d\\re"
    assert visible("\x1b\x07\x00\x7f\x85\u202e\u2066\u200f\u061c") == "\\x1b\\x07\\x00\\x7f\\x85\\u202e\\u2066\\u200f\\u061c"
