"""The HTML view (``render --html``), in a real headless Chromium, and the terminal extras.

The page must load without a console message, show one span per token, and
show hostile text as text: the inputs below carry a ``<script>`` and an
``onerror`` attribute that would change the page's title if they ran. A
screenshot is kept as a test artifact in build/test-artifacts/ (not committed).
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from ..helpers import invoke

HOSTILE = [
    'a good film <script>document.title="pwned"</script> with great music',
    'a dull night "><img src=x onerror="document.title=\'pwned\'"> and a boring story',
    "plain & simple: the actor was superb < 3 > 2",
]
CHROMIUM = next((shutil.which(name) for name in ("chromium", "chromium-browser", "google-chrome") if shutil.which(name)), None)
ARTIFACTS = Path(__file__).resolve().parents[2] / "build" / "test-artifacts"


@pytest.fixture(scope="module")
def records(toy_dir, tmp_path_factory):
    folder = tmp_path_factory.mktemp("html")
    source = folder / "in.jsonl"
    source.write_text("".join(json.dumps({"id": f"x{i}", "text": t}) + "\n" for i, t in enumerate(HOSTILE)))
    out = folder / "attr.jsonl"
    result = invoke("explain", source, "--model", toy_dir / "model", "--method", "attcat,random", "-o", out, "-q")
    assert result.exit_code == 0, result.output
    return out


class _Elements(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.title = ""
        self._in_title = False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in_title = tag == "title"

    def handle_data(self, data):
        if self._in_title:
            self.title += data

    def handle_endtag(self, tag):
        self._in_title = False


def _expected_token_spans(path: Path) -> int:
    """Non-special tokens whose text is not blank, counted from the records themselves."""
    count = 0
    for line in path.read_text().splitlines():
        record = json.loads(line)
        for (start, end), special in zip(record["offsets"], record["special"]):
            count += not special and record["text"][start:end].strip() != ""
    return count


def test_the_page_escapes_every_text_and_has_no_script(records, tmp_path):
    page = tmp_path / "page.html"
    assert invoke("render", records, "--html", page).exit_code == 0
    text = page.read_text()
    assert "<script" not in text.lower() and "<img" not in text.lower()
    shown = html.unescape(re.sub(r"<[^>]+>", "", text))  # what a reader sees: the texts, whole
    for hostile in HOSTILE:
        assert shown.count(hostile) == 2  # two methods' blocks
    assert "http://" not in text and "https://" not in text  # nothing loads from the network
    parsed = _Elements()
    parsed.feed(text)
    assert sum(1 for tag, attrs in parsed.tags if tag == "span" and "t" in attrs.get("class", "").split()) == (
        _expected_token_spans(records)
    )
    assert sum(tag == "section" for tag, _ in parsed.tags) == len(HOSTILE)  # one block per input, both methods in it


def test_notebooks_show_records_through_the_same_renderer(records):
    from contrastcat.records.markup import input_block, notebook_html
    from contrastcat.records.record import RecordFile, Records

    found = Records(RecordFile(str(records)).records())
    shown = found._repr_html_()
    assert 'class="contrastcat"' in shown and "<script" not in shown.lower()
    assert input_block([found[0]]) in found[0]._repr_html_()  # the page's view: tokens, rescaled
    tokens = len(re.findall(r'class="t( neg| mag)?( hi)?"', notebook_html([found[0]])))
    assert tokens == sum(not s and found[0].text[a:b].strip() != "" for (a, b), s in zip(found[0].offsets, found[0].special))


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (apt-get install chromium): no browser check")
def test_the_page_in_a_real_headless_chromium(records, tmp_path):
    page = tmp_path / "page.html"
    assert invoke("render", records, "--html", page).exit_code == 0
    browser = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0"]
    env = {**os.environ, "HOME": str(tmp_path)}
    dumped = subprocess.run([*browser, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120, env=env)
    assert dumped.returncode == 0, dumped.stderr[-2000:]
    console = [line for line in dumped.stderr.splitlines() if ":CONSOLE" in line]
    assert console == [], console  # no error, no blocked script, no failed load
    dom = _Elements()
    dom.feed(dumped.stdout)
    assert dom.title == f"contrastcat: {records}"  # the injected code never ran (it would set "pwned")
    tags = [tag for tag, _ in dom.tags]
    assert "script" not in tags and "img" not in tags
    spans = [attrs for tag, attrs in dom.tags if tag == "span" and "t" in attrs.get("class", "").split()]
    assert len(spans) == _expected_token_spans(records)
    assert all(attrs.get("tabindex") == "0" and attrs.get("title") == attrs.get("data-score") for attrs in spans)
    assert 'pwned' in dumped.stdout  # shown as text
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "render-html.png"
    words = tmp_path / "words.html"
    assert invoke("render", records, "--html", words, "--words").exit_code == 0
    taken = subprocess.run(
        [*browser, f"--screenshot={shot}", "--window-size=1200,900", words.as_uri()],
        capture_output=True, text=True, timeout=120, env=env,
    )
    assert taken.returncode == 0, taken.stderr[-2000:]
    assert shot.read_bytes().startswith(b"\x89PNG")
    dark = ARTIFACTS / "render-html-dark.png"  # the reader's system in dark mode
    taken = subprocess.run(
        [*browser, "--blink-settings=preferredColorScheme=0", f"--screenshot={dark}", "--window-size=1200,900",
         words.as_uri()],
        capture_output=True, text=True, timeout=120, env=env,
    )
    assert taken.returncode == 0 and dark.read_bytes().startswith(b"\x89PNG")
    assert dark.read_bytes() != shot.read_bytes()


# ------------------------------------------------------------------ terminal extras


def test_top_lists_the_k_most_relevant_words(records):
    result = invoke("render", records, "--top", "2", "--words")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert len(lines) == 2 * len(HOSTILE)  # one line per record
    for line in lines:
        # A signed map's (attcat's) strongest against the class follow its strongest for it.
        found, _, against = line.split(": ", 1)[1].partition("; against: ")
        listed = found.split(", ")
        scores = [float(item.rsplit(" ", 1)[1]) for item in listed]
        # A signed map (attcat's: "+1.00") lists the words for the class, then those against it,
        # each leaving out what prints as ±0.00: it may list fewer than 2 of either.
        signed = listed[0].rsplit(" ", 1)[1][0] in "+-"
        assert (1 <= len(listed) <= 2 if signed else len(listed) == 2) and scores == sorted(scores, reverse=True)
        if against:
            scores = [float(item.rsplit(" ", 1)[1]) for item in against.split(", ")]
            assert len(scores) <= 2 and scores == sorted(scores) and all(score <= 0 for score in scores)


def test_compare_puts_two_methods_of_an_input_one_above_the_other(records):
    result = invoke("render", records, "--compare", "random,attcat", "--color", "never")
    assert result.exit_code == 0, result.output
    headers = [line for line in result.stdout.splitlines() if "→" in line]
    assert [h.split()[0] for h in headers] == [f"x{i}" for i in range(len(HOSTILE)) for _ in range(2)]
    assert [h.split()[1] for h in headers] == ["random", "attcat"] * len(HOSTILE)
    bad = invoke("render", records, "--compare", "random,nosuch")
    assert bad.exit_code == 2 and "no records of method 'nosuch'" in bad.stderr


def test_compare_keeps_variants_apart_and_limits_after_pairing(records, tmp_path):
    lines = [json.loads(line) for line in records.read_text().splitlines()]
    variant = [{**r, "settings": {**r["settings"], "seed": 9}} for r in lines if r["method"] == "random"]
    path = tmp_path / "variants.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in lines + variant))
    result = invoke("render", path, "--compare", "random,random[seed=9]", "--limit", "4", "--color", "never")
    assert result.exit_code == 0, result.output
    headers = [line for line in result.stdout.splitlines() if "→" in line]
    assert [h.split()[1] for h in headers] == ["random", "random[seed=9]"] * 2
    page = tmp_path / "variants.html"
    assert invoke("render", path, "--html", page).exit_code == 0
    assert "random[seed=9] →" in page.read_text()
    refused = invoke("render", path, "--html", page, "--top", "3")
    assert refused.exit_code == 2 and "--html shades every token" in refused.stderr and "--top and --threshold are for the terminal" in refused.stderr


def test_top_scores_are_the_shown_ones(records):
    plain = invoke("render", records, "--top", "1", "--limit", "1").stdout
    assert plain.split("; against: ")[0].rstrip().endswith("1.00")  # rescaled over the tokens shown, like the text
