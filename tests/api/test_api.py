"""The public API: the README's example runs end to end, and its pieces behave as documented."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import contrastcat
from contrastcat.errors import BadInput
from contrastcat.records.record import Records

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_example() -> str:
    text = README.read_text(encoding="utf-8")
    match = re.search(r"<!-- api-example -->\n```python\n(.*?)```", text, re.S)
    assert match, "the README lost its API example"
    return match.group(1)


def test_the_readme_example_runs_on_the_toy_model(toy_dir, toy_library, tmp_path, capsys):
    """The README's block as written, on the toy model and its library (where the README's commands
    above it left ./refs.h5)."""
    import shutil

    code = readme_example()
    for original in ('"minilm-rt"', '"refs.h5"', '"attr.jsonl"'):
        assert original in code
    shutil.copy(toy_library.path, tmp_path / "refs.h5")
    code = (code.replace('"minilm-rt"', repr(str(toy_dir / "model")))
                .replace('"refs.h5"', repr(str(tmp_path / "refs.h5")))
                .replace('"attr.jsonl"', repr(str(tmp_path / "attr.jsonl"))))
    scope: dict = {}
    exec(compile(code, "README.md", "exec"), scope)
    recs, report, frame = scope["recs"], scope["report"], scope["df"]
    assert [(r.id, r.method) for r in recs] == [(0, "contrastcat"), (0, "attcat"), ("r2", "contrastcat"), ("r2", "attcat")]
    assert list(frame[frame["record"] == 0]["score"]) == recs[0].scores and recs[0].settings["refs_used"] == 10
    assert len(frame) == sum(len(r.tokens) for r in recs)
    assert isinstance(recs, Records) and len((tmp_path / "attr.jsonl").read_text().splitlines()) == 4
    assert "<span" in recs[0]._repr_html_() and "<span" in recs._repr_html_()
    document = report.to_dict()
    assert set(document["methods"]) == {"contrastcat", "attcat"} and document["records"] == 4
    json.dumps(document, allow_nan=False)
    assert "<table>" in report._repr_html_()
    printed = capsys.readouterr().out
    assert printed.startswith("| method | MoRF AOPC ↑") and "contrastcat → " in printed


def test_api_explain_equals_the_cli(toy_dir, toy_library, tmp_path):
    from ..helpers import invoke

    out = tmp_path / "cli.jsonl"
    result = invoke("explain", toy_dir / "inputs.jsonl", "--refs", toy_library.path, "--method", "contrastcat,rollout",
                    "--refs-used", "5", "--device", "cpu", "-o", out, "-q")
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (toy_dir / "inputs.jsonl").read_text().splitlines()]
    clf = contrastcat.load_model(str(toy_dir / "model"), device="cpu")
    recs = contrastcat.explain(clf, rows, library=contrastcat.open_library(toy_library.path),
                               method=["contrastcat", "rollout"], refs_used=5)
    from_cli = [json.loads(line) for line in out.read_text().splitlines()]
    from_api = recs.to_dicts()
    for a, b in zip(from_cli, from_api):
        a.pop("model"), b.pop("model")  # the name as given: a path here, the same path there
    assert from_cli == from_api


def test_api_errors_are_one_line_bad_input(toy_dir):
    clf = contrastcat.load_model(str(toy_dir / "model"), device="cpu")
    with pytest.raises(BadInput, match=r"^method contrastcat has no option 'ref_used' \(its options: refs_used"):
        contrastcat.explain(clf, ["a good film"], method="contrastcat", ref_used=5)
    with pytest.raises(BadInput, match=r"^no method has an option 'cluster' \(options: refs_used, "):
        contrastcat.explain(clf, ["a good film"], method=["tis", "cat"], cluster=5)
    with pytest.raises(BadInput, match=r"^method contrastcat needs a reference library"):
        contrastcat.explain(clf, ["a good film"])
    with pytest.raises(BadInput, match=r"^inputs: item 1: field 'text' is empty$"):
        contrastcat.explain(clf, ["a good film", {"text": " "}], method="attcat")
    # Named as the call spells it, as every option of evaluate is (checked once, where read).
    with pytest.raises(BadInput, match=r"^evaluate: steps must be one of paper, reference, got 'all'$"):
        contrastcat.evaluate(clf, [], steps="all")
    with pytest.raises(BadInput, match=r"^evaluate\(\) got an unexpected keyword argument 'plot'"):
        contrastcat.evaluate(clf, [], plot="c.png")  # a file call's option, not the in-memory one's
    with pytest.raises(AttributeError):
        contrastcat.nothing_here  # noqa: B018


def test_a_datasets_dataset_is_accepted_as_inputs_and_as_library_data(toy_dir, toy_examples, tmp_path):
    import datasets

    clf = contrastcat.load_model(str(toy_dir / "model"), device="cpu")
    rows = datasets.Dataset.from_dict({
        "review": [e.text for e in toy_examples[:200]],
        "stars": [e.label for e in toy_examples[:200]],
    })
    lib = contrastcat.build_library(clf, tmp_path / "refs.h5", data=rows, text_field="review", label_field="stars",
                                    k=5, keep=5)
    assert lib.info.data == "python objects" and lib.pool_size("contrast", 0) == 5
    recs = contrastcat.explain(clf, rows.select(range(3)), library=lib, text_field="review", label_field="stars",
                               target="gold", refs_used=5)
    assert [r.id for r in recs] == [0, 1, 2] and [r.target for r in recs] == rows["stars"][:3]
    texts = [e.text for e in toy_examples[:3]]
    assert [r.text for r in contrastcat.explain(clf, texts, method="attcat")] == texts


def test_a_notebook_completes_the_public_calls():
    import contrastcat

    listed = dir(contrastcat)
    assert {"load_model", "open_library", "build_library", "cached_library", "explain", "evaluate", "render"} <= set(listed)
    assert "__version__" in listed and listed == sorted(listed)


def test_no_public_callable_shows_the_environment_in_its_help(monkeypatch):
    """A default of ``os.environ`` would print every variable (tokens among them) in help() and
    in generated docs: each public callable's signature and help hold none."""
    import inspect
    import pydoc

    monkeypatch.setenv("CONTRASTCAT_PLANTED_SECRET", "hunter2-planted")
    for name in contrastcat.__all__:
        value = getattr(contrastcat, name)
        if callable(value) and not isinstance(value, type):
            assert "hunter2-planted" not in pydoc.render_doc(value, renderer=pydoc.plaintext), name
    assert str(inspect.signature(contrastcat.torchrun_follower)) == "() -> 'bool'"


@pytest.mark.parametrize("function, arguments", [
    ("explain", (None, ["a film"])), ("build_library", (None, "refs.h5")), ("sanity", (None, [])),
])
@pytest.mark.parametrize("option", ["device", "dtype"])
def test_a_loading_option_given_with_a_classifier_points_to_load_model(function, arguments, option):
    """``explain(classifier, texts, device="cuda")``: the model is loaded already, so the device is
    load_model's to choose; said before anything else is looked at (the classifier here is None)."""
    with pytest.raises(BadInput) as raised:
        getattr(contrastcat, function)(*arguments, **{option: "cuda" if option == "device" else "bfloat16"})
    assert str(raised.value) == (f"{function}: {option} is chosen where the model is loaded, not here: "
                                 f"contrastcat.load_model(name, {option}=...), then pass the classifier it returns")


def test_an_item_without_the_text_field_names_the_fields_it_has(toy_dir):
    """Python items: the default id the call adds is not one of the item's fields."""
    clf = contrastcat.load_model(str(toy_dir / "model"), device="cpu")
    with pytest.raises(BadInput) as raised:
        contrastcat.explain(clf, [{"text": "a film"}, {"sentence": "x", "y": 1}], method="random")
    assert str(raised.value) == ("inputs: item 1: missing text field 'text' (its fields: sentence, y; "
                                 "`text_field` names another)")


def test_a_model_given_with_a_classifier_points_to_load_model_without_it():
    with pytest.raises(BadInput) as raised:
        contrastcat.explain(None, ["a film"], model="minilm-rt")
    assert str(raised.value) == ("explain: model is chosen where the model is loaded, not here: "
                                 "contrastcat.load_model(name), then pass the classifier it returns")
