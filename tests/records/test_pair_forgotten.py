"""Inputs that hold a sentence pair's second text, explained without ``pair_field``: the first
text alone is explained, so the user is told, once, whatever the pair's field is called and
whether the rows come from a file or from Python; a null or empty second text is no pair."""

from __future__ import annotations

import json
import warnings

import pytest

from contrastcat.errors import ContrastCatWarning
from contrastcat.records.inputs import InputFields, read_inputs, rows_from_objects


@pytest.mark.parametrize("name", ["pair", "text_pair", "hypothesis", "sentence2", "question2", "text_b", "passage",
                                  "Hypothesis", "sentence_2", "Text-Pair", "SENTENCE B", "premise", "context",
                                  "document"])
def test_a_second_text_under_any_common_name_is_noticed(tmp_path, name):
    rows = [{"id": 1, "text": "a good film", name: "a fine plot"}, {"id": 2, "text": "a dull night", name: "a wait"}]
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    with pytest.warns(ContrastCatWarning, match=rf"pairs.jsonl:1: the inputs have a '{name}' field") as said:
        assert [row.pair for row in read_inputs(str(path))] == [None, None]
    assert len(said) == 1
    with pytest.warns(ContrastCatWarning, match=rf"<inputs>: item 0: the inputs have a '{name}' field") as said:
        rows_from_objects(rows)
    assert len(said) == 1


def test_no_warning_for_a_null_pair_nor_where_the_pair_is_explained(tmp_path):
    path = tmp_path / "single.jsonl"
    path.write_text('{"text": "a good film", "pair": null}\n{"text": "a dull night", "hypothesis": ""}\n')
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read_inputs(str(path))
        rows_from_objects([{"text": "a good film", "pair": None}])
        assert rows_from_objects([{"text": "a", "hypothesis": "b"}], InputFields(pair="hypothesis"))[0].pair == "b"
        # A pair's name as the text field itself is no second text.
        assert rows_from_objects([{"hypothesis": "a", "label": 1}], InputFields(text="hypothesis"))[0].text == "a"
        assert rows_from_objects([{"premise": "a", "Premise_id": "p1"}], InputFields(text="premise"))[0].text == "a"
        assert rows_from_objects([{"context": "a", "label": 0}], InputFields(text="context"))[0].text == "a"


def test_a_csv_header_in_another_case_is_noticed(tmp_path):
    path = tmp_path / "pairs.csv"
    path.write_text("id,Text,Hypothesis\n1,a good film,a fine plot\n")
    with pytest.warns(ContrastCatWarning, match=r"pairs.csv:2: the inputs have a 'Hypothesis' field"):
        read_inputs(str(path), text_field="Text")


def test_names_that_only_look_alike_are_not_pairs():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rows_from_objects([{"text": "a good film", "pairs": "x", "passages": "y", "hypothesis_id": "z", "text3": "w"}])


@pytest.mark.parametrize(
    "row, text_field, name",
    [
        # QNLI: a question and the sentence that may answer it, either one explained.
        ({"question": "who won?", "sentence": "the home side won.", "label": 0}, "question", "sentence"),
        ({"question": "who won?", "sentence": "the home side won.", "label": 0}, "sentence", "question"),
        # NLI explained by its hypothesis: the premise beside it is the pair's other text.
        ({"premise": "a man sleeps", "hypothesis": "a man rests"}, "hypothesis", "premise"),
        ({"text": "who won?", "context": "the home side won."}, "text", "context"),
        ({"text": "who won?", "document": "the home side won."}, "text", "document"),
    ],
)
def test_common_pair_columns_beside_the_text_are_noticed(tmp_path, row, text_field, name):
    # These were missed: the first text alone was explained, silently, for a pair data set.
    path = tmp_path / "pairs.jsonl"
    path.write_text(json.dumps(row) + "\n")
    with pytest.warns(ContrastCatWarning, match=rf"pairs.jsonl:1: the inputs have a '{name}' field") as said:
        read_inputs(str(path), text_field=text_field)
    assert len(said) == 1
    with pytest.warns(ContrastCatWarning, match=rf"item 0: the inputs have a '{name}' field"):
        rows_from_objects([row], InputFields(text=text_field))


def test_question_and_sentence_alone_are_single_texts():
    # SST-2's text is `sentence`; a `question` or `sentence` beside another text is no pair:
    # these two mean a pair only beside each other, one of them the text.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rows_from_objects([{"sentence": "a good film", "label": 1}], InputFields(text="sentence"))
        rows_from_objects([{"text": "a good film", "sentence": "a good film", "question": "is it good?"}])
        rows_from_objects([{"question": "is it good?", "answer": "yes"}], InputFields(text="question"))


def test_long_field_names_are_not_kept_by_the_name_cache():
    """Every field name is normalised to look for pair columns; a crafted file of megabyte keys
    (1,100 rows took 2.4 GB) must not fill the cache with them."""
    from contrastcat.records import inputs

    inputs._short_key.cache_clear()
    rows = [{"text": "a film", "k" * 100_000 + str(index): 1} for index in range(50)]
    assert len(list(rows_from_objects(rows, InputFields("text")))) == 50
    assert inputs._short_key.cache_info().currsize <= 2
