"""One view with one meaning: the command, ``contrastcat.render`` and a notebook show the same
records the same way (one code path, one set of defaults), and an unsigned map is shaded on a
scale of its own (grey, no hue) that no one can read as the signed map's "for" (red)."""

from __future__ import annotations

import re

import pytest

import contrastcat
from contrastcat.methods import METHODS
from contrastcat.records.markup import LEGEND, SIGNED_LEGEND
from contrastcat.records.record import Records, read_records, write_records
from contrastcat.records.spans import METHODS_HERE, SIGNED_METHODS, is_signed
from contrastcat.views.terminal import render_rich
from tests.helpers import invoke
from tests.helpers import word_piece_record as make_record


def _records():
    """An unsigned map (Contrast-CAT's; its [CLS] holds the largest stored score, which must not set
    the scale), a signed one (AttnLRP's: "un" against the class) and a signed method's map that
    happens to have no score below 0 (integrated gradients'): still signed."""
    cls_heavy = dict(scores=[1.0, 0.2, 0.9, 0.1, 0.5, 0.0], raw_scores=[9.0, 0.2, 0.9, 0.1, 0.5, 0.0])
    return [
        make_record(id="a", **cls_heavy),
        make_record(id="a", method="attnlrp", raw_scores=[-3.4, -0.5, 0.9, 0.1, 1.0, 0.0], settings={}, library=None),
        make_record(id="b", method="integrated-gradients", raw_scores=[0.0, 0.2, 0.9, 0.1, 1.0, 0.0], settings={},
                    library=None),
    ]


def test_signed_methods_are_the_methods_that_say_so():
    assert SIGNED_METHODS == {name for name, method in METHODS.items() if method.signed}
    assert METHODS_HERE == set(METHODS)


def test_a_map_is_signed_as_its_method_is_and_another_tools_by_its_scores():
    negative = [0.0, -0.2, 0.9, 0.1, 1.0, 0.0]
    assert is_signed(make_record(method="attcat", raw_scores=[0.0, 0.2, 0.9, 0.1, 1.0, 0.0]))  # none below 0
    assert not is_signed(make_record(method="attcat"))  # no raw scores: its [0, 1] scores have no sign to show
    assert not is_signed(make_record(method="gradient-norm", raw_scores=negative))  # edited: still unsigned
    assert is_signed(make_record(method="gradient-norm", raw_scores=negative, settings={"made_elsewhere": True}))
    assert is_signed(make_record(method="another-tool", raw_scores=negative))
    assert not is_signed(make_record(method="another-tool", raw_scores=[abs(v) for v in negative]))


@pytest.mark.parametrize("flags, keywords", [
    ((), {}),
    (("--words",), {"words": True}),
    (("--no-rescale",), {"rescale": False}),
    (("--top", "2"), {"top": 2}),
    (("--no-signed", "--threshold", "0.5"), {"signed": False, "threshold": 0.5}),
    (("--compare", "contrastcat,attnlrp"), {"compare": "contrastcat,attnlrp"}),
])
def test_the_command_and_python_print_the_same(tmp_path, flags, keywords):
    path = tmp_path / "records.jsonl"
    write_records(str(path), _records())
    printed = invoke("render", path, *flags)
    assert printed.exit_code == 0, printed.output
    assert printed.stdout == contrastcat.render(read_records(str(path)), **keywords)


def test_the_defaults_scale_over_the_tokens_shown():
    """Python's render once scaled over every stored score: [CLS]'s 1.0 washed the text out."""
    shown = contrastcat.render(_records()[:1])
    assert shown == "a  contrastcat → negative (p=0.970)\n[un 0.12][bel 1.00][ievably 0.00] [dull 0.50]\n"


def test_the_page_and_a_notebook_show_the_same_blocks_and_legends(tmp_path):
    path, page = tmp_path / "records.jsonl", tmp_path / "page.html"
    write_records(str(path), _records())
    assert invoke("render", path, "--html", page).exit_code == 0
    html = page.read_text()
    notebook = Records(read_records(str(path)))._repr_html_()
    assert re.search(r"<main>(.*)</main>", html).group(1) in notebook
    for shown in (html, notebook):
        assert LEGEND in shown and SIGNED_LEGEND in shown  # both scales are on it, each named
        kinds = re.findall(r'<h3>(\S+) →.*?</h3><div class="text" dir="auto">(.*?)</div>', shown)
        classes = {method: set(re.findall(r'class="(t[^"]*)"', text)) for method, text in kinds}
        assert classes["contrastcat"] <= {"t mag", "t mag hi"} and classes["contrastcat"]
        assert classes["attnlrp"] >= {"t neg", "t hi"} and not any("mag" in c for c in classes["attnlrp"])
        assert not any("mag" in c or "neg" in c for c in classes["integrated-gradients"])  # signed, all for
    unsigned_only = tmp_path / "unsigned.html"
    write_records(str(path), _records()[:1])
    assert invoke("render", path, "--html", unsigned_only).exit_code == 0
    assert LEGEND in unsigned_only.read_text() and SIGNED_LEGEND not in unsigned_only.read_text()


def test_the_terminal_shades_an_unsigned_map_in_grey_and_names_both_scales(tmp_path):
    unsigned, signed, positive = _records()
    for record, grey in ((unsigned, True), (signed, False), (positive, False)):
        colours = [re.search(r"on #(\w\w)(\w\w)(\w\w)", str(span.style)).groups() for span in render_rich(record).spans]
        assert colours and all((len(set(c)) == 1) == grey for c in colours), (record.method, colours)
    path = tmp_path / "records.jsonl"
    write_records(str(path), _records())
    coloured = invoke("render", path, "--color", "always").stdout
    assert coloured.count("unsigned map: relevance 0") == 1 and coloured.count("signed map: against the class") == 1
    assert coloured.index("unsigned map") < coloured.index("contrastcat") < coloured.index("signed map: against")
    assert "unsigned map" not in invoke("render", path).stdout  # plain marks say the sign: +0.87, -0.41


def test_a_dumb_terminal_gets_marks_and_colour_asked_for_is_given(tmp_path, monkeypatch):
    """TERM=dumb: Rich shows no colour there, so auto gives the plain marks (never a text without
    its scores); colour asked for is written in the 16 standard colours."""
    from contrastcat.usecases.options.render import RenderOptions
    from contrastcat.spec import InCall

    monkeypatch.setenv("TERM", "dumb")
    monkeypatch.setattr("sys.stdout.isatty", lambda: True, raising=False)
    records = tmp_path / "r.jsonl"
    write_records(str(records), _records()[:1])
    assert RenderOptions.read({"attributions": str(records), "color": "auto"}, InCall("render_file")).colored is False
    coloured = contrastcat.render(_records()[:1], color=True)
    assert "\x1b[" in coloured and "unsigned map: relevance 0" in coloured


def test_an_empty_list_shows_no_legend():
    assert 'class="legend"' not in Records()._repr_html_()
