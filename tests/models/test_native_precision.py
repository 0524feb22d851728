"""Half precision only where the hardware runs it natively.

Each answer of the CPU query is forced (torch's own feature queries, or
$CONTRASTCAT_NATIVE_BF16 for a whole command) and the precision chosen is
checked: the embedded models' training, ``--forward-dtype auto``, and the one
warning an emulated ``--forward-dtype bfloat16`` gets.
"""

from __future__ import annotations

import json
import warnings

import pytest
import torch

from contrastcat.attribution.pipeline import ExplainSettings, explain
from contrastcat.errors import BadInput, SlowPrecision
from contrastcat.methods import build_method
from contrastcat.models import precision
from contrastcat.models.precision import NATIVE_BF16_ENV, effective_forward_dtype, native
from contrastcat.models.zoo.train import Recipe, fine_tune
from contrastcat.records.inputs import InputRow
from contrastcat.testing import toy

from ..helpers import assert_one_line_error, invoke

CPU = torch.device("cpu")
QUERIES = ("_is_amx_tile_supported", "_is_avx512_bf16_supported", "_is_amx_fp16_supported")


@pytest.fixture()
def cpu_has(monkeypatch):
    """Force torch's CPU feature queries: cpu_has("_is_amx_tile_supported") and no other unit."""
    monkeypatch.delenv(NATIVE_BF16_ENV, raising=False)

    def force(*units: str) -> None:
        for query in QUERIES:
            monkeypatch.setattr(torch.cpu, query, lambda answer=query in units: answer, raising=False)

    return force


@pytest.mark.parametrize(
    "units, bf16, fp16",
    [((), False, False), (("_is_amx_tile_supported",), True, False),
     (("_is_avx512_bf16_supported",), True, False), (("_is_amx_tile_supported", "_is_amx_fp16_supported"), True, True)],
)
def test_native_follows_torchs_cpu_queries(cpu_has, units, bf16, fp16):
    cpu_has(*units)
    assert native(torch.float32, CPU)
    assert native(torch.bfloat16, CPU) is bf16
    assert native(torch.float16, CPU) is fp16
    assert precision.describe_hardware(CPU).endswith("bfloat16 native" if bf16 else "bfloat16 emulated")


def test_cuda_asks_for_bfloat16_without_emulation(monkeypatch):
    monkeypatch.delenv(NATIVE_BF16_ENV, raising=False)
    asked = []

    def supported(including_emulation=True):
        asked.append(including_emulation)
        return False  # a GPU before Ampere: torch would emulate it

    monkeypatch.setattr(torch.cuda, "is_bf16_supported", supported)
    assert native(torch.bfloat16, torch.device("cuda")) is False and asked == [False]
    assert native(torch.float16, torch.device("cuda"))


def test_the_environment_overrides_the_detection(cpu_has, monkeypatch):
    cpu_has("_is_amx_tile_supported")
    monkeypatch.setenv(NATIVE_BF16_ENV, "0")
    assert not native(torch.bfloat16, CPU)
    cpu_has()
    monkeypatch.setenv(NATIVE_BF16_ENV, "1")
    assert native(torch.bfloat16, CPU)
    monkeypatch.setenv(NATIVE_BF16_ENV, "yes")
    with pytest.raises(BadInput, match="must be 0 or 1"):
        native(torch.bfloat16, CPU)


@pytest.mark.parametrize("units, expected", [((), torch.float32), (("_is_amx_tile_supported",), torch.bfloat16)])
def test_the_embedded_models_train_in_bfloat16_only_where_native(cpu_has, units, expected):
    cpu_has(*units)
    assert Recipe().training_dtype(CPU) is expected
    assert Recipe(precision="float32").training_dtype(CPU) is torch.float32
    seen = []
    model = toy.make_model(seed=0, hidden=32, layers=1, heads=2)
    model.bert.encoder.layer[0].register_forward_hook(
        lambda *_: seen.append(torch.get_autocast_dtype("cpu") if torch.is_autocast_enabled("cpu") else torch.float32)
    )
    examples = toy.make_examples(8, seed=0)
    fine_tune(model, toy.make_tokenizer(), [e.text for e in examples], [e.label for e in examples],
              Recipe(batch_size=4, max_length=16))
    assert seen == [expected, expected]  # both training steps


def test_forward_dtype_auto_resolves_by_the_hardware(cpu_has):
    cpu_has()
    assert effective_forward_dtype("auto", torch.float32, CPU) == "same"
    cpu_has("_is_avx512_bf16_supported")
    assert effective_forward_dtype("auto", torch.float32, CPU) == "bfloat16"
    assert effective_forward_dtype("auto", torch.bfloat16, CPU) == "same"  # autocast never raises precision


def test_an_emulated_half_precision_runs_with_a_warning_and_a_native_one_without(cpu_has):
    cpu_has()
    with pytest.warns(SlowPrecision, match=r"forward passes in bfloat16: this CPU \(.*\) has no AMX or AVX-512 BF16"):
        assert effective_forward_dtype("bfloat16", torch.float32, CPU) == "bfloat16"
    with pytest.warns(SlowPrecision, match="forward passes in float16: .* has no AMX-FP16"):
        effective_forward_dtype("float16", torch.float32, CPU)
    cpu_has("_is_amx_tile_supported")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert effective_forward_dtype("bfloat16", torch.float32, CPU) == "bfloat16"
        assert effective_forward_dtype("auto", torch.float32, CPU) == "bfloat16"


def test_explain_records_the_precision_auto_chose(toy_classifier, toy_library, monkeypatch):
    rows = [InputRow(i + 1, i, e.text) for i, e in enumerate(toy.make_examples(4, seed=3))]
    method = build_method("contrastcat", refs_used=5)
    options = ExplainSettings(batch_size=2, forward_dtype="auto")
    monkeypatch.setenv(NATIVE_BF16_ENV, "0")
    emulated = list(explain(toy_classifier, rows, method, toy_library, options=options))
    assert all("forward_dtype" not in r.settings for r in emulated)  # float32, as without the option
    monkeypatch.setenv(NATIVE_BF16_ENV, "1")
    native_run = list(explain(toy_classifier, rows, method, toy_library, options=options))
    assert all(r.settings["forward_dtype"] == "bfloat16" for r in native_run)


def _warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("warning:")]


def test_cli_warns_once_for_an_emulated_bfloat16_and_never_for_a_native_one(toy_dir, toy_library, tmp_path,
                                                                           monkeypatch):
    out = tmp_path / "attr.jsonl"
    # On the CPU by name: on a machine with a GPU, auto would choose it (and no CPU warning would come).
    command = ("explain", toy_dir / "inputs.jsonl", "--refs", toy_library.path, "--refs-used", "5", "--device", "cpu",
               "--batch-size", "2", "--forward-dtype", "bfloat16", "-o", out, "--quiet")
    monkeypatch.setenv(NATIVE_BF16_ENV, "0")
    warnings.simplefilter("always")  # once per command even where Python's filters would repeat it (pytest undoes this)
    result = invoke(*command)  # 12 inputs in 6 batches: still one warning
    assert result.exit_code == 0, result.output
    said = _warnings(result.stderr)
    assert len(said) == 1 and said[0].startswith("warning: forward passes in bfloat16: this CPU (") and (
        "is emulated and runs slower than float32" in said[0]), result.stderr
    assert {json.loads(line)["settings"]["forward_dtype"] for line in out.read_text().splitlines()} == {"bfloat16"}

    evaluated = invoke("evaluate", out, "--model", toy_dir / "model", "--device", "cpu", "--forward-dtype", "bfloat16",
                       "--kendall", "--refs", toy_library.path, "--min-tokens", "3", "--json", "--quiet")
    assert evaluated.exit_code == 0, evaluated.output
    assert len(_warnings(evaluated.stderr)) == 1, evaluated.stderr

    monkeypatch.setenv(NATIVE_BF16_ENV, "1")
    result = invoke(*command)
    assert result.exit_code == 0 and result.stderr == "", result.stderr


def test_a_wrong_override_is_one_line(toy_dir, tmp_path, monkeypatch):
    monkeypatch.setenv(NATIVE_BF16_ENV, "maybe")
    result = invoke("explain", toy_dir / "inputs.jsonl", "--model", toy_dir / "model", "--method", "attcat",
                    "--forward-dtype", "auto", "-o", tmp_path / "out.jsonl")
    assert_one_line_error(result, "$CONTRASTCAT_NATIVE_BF16 must be 0 or 1")


def test_evaluate_warns_when_it_explains_bfloat16_records_again_and_refuses_auto(toy_dir, toy_library, tmp_path,
                                                                                   monkeypatch):
    out = tmp_path / "bf.jsonl"
    monkeypatch.setenv(NATIVE_BF16_ENV, "1")
    assert invoke("explain", toy_dir / "inputs.jsonl", "--refs", toy_library.path, "--refs-used", "5",
                  "--forward-dtype", "bfloat16", "-o", out, "--quiet").exit_code == 0
    monkeypatch.setenv(NATIVE_BF16_ENV, "0")
    evaluated = invoke("evaluate", out, "--kendall", "--refs", toy_library.path, "--min-tokens", "3", "--json")
    assert evaluated.exit_code == 0, evaluated.output
    assert len(_warnings(evaluated.stderr)) == 1 and "forward passes in bfloat16" in evaluated.stderr

    edited = tmp_path / "auto.jsonl"
    lines = out.read_text().splitlines()
    record = json.loads(lines[0])
    record["settings"]["forward_dtype"] = "auto"
    edited.write_text("\n".join([json.dumps(record), *lines[1:]]) + "\n")
    result = invoke("evaluate", edited, "--kendall", "--refs", toy_library.path, "--min-tokens", "3", "--json")
    assert_one_line_error(result, "settings cannot be used again (forward_dtype auto names no precision)")


def test_an_empty_override_is_unset_and_a_forced_answer_is_not_called_hardware(cpu_has, monkeypatch):
    cpu_has()
    monkeypatch.setenv(NATIVE_BF16_ENV, "")
    assert not native(torch.bfloat16, CPU)
    assert precision.describe_hardware(CPU).endswith("bfloat16 emulated")
    monkeypatch.setenv(NATIVE_BF16_ENV, "1")
    assert precision.describe_hardware(CPU).endswith("bfloat16 native (as $CONTRASTCAT_NATIVE_BF16 says, not the hardware)")


def test_an_override_to_emulated_says_so_rather_than_denying_the_hardware(cpu_has, monkeypatch):
    cpu_has("_is_amx_tile_supported")  # a CPU with AMX, told to measure the emulated path
    monkeypatch.setenv(NATIVE_BF16_ENV, "0")
    with pytest.warns(SlowPrecision) as said:
        effective_forward_dtype("bfloat16", torch.float32, CPU)
    message = str(said[0].message)
    assert "+AMX) is taken to have no AMX or AVX-512 BF16 ($CONTRASTCAT_NATIVE_BF16=0)" in message, message
