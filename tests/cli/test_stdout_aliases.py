"""`/dev/stdout` is standard output everywhere `-` is: refused where `-` is, for the same reason."""

from __future__ import annotations

import pytest

from ..helpers import assert_one_line_error, invoke


@pytest.mark.parametrize("output", ["-", "/dev/stdout"])
def test_resume_cannot_continue_standard_output(tmp_path, toy_dir, toy_library, output):
    result = invoke("explain", toy_dir / "inputs.jsonl", "--refs", toy_library.path, "--method", "random",
                    "-o", output, "--resume", "-q")
    assert_one_line_error(result, "standard output cannot be continued")


@pytest.mark.parametrize("output", ["-", "/dev/stdout"])
def test_a_library_does_not_go_to_standard_output(tmp_path, toy_dir, output):
    result = invoke("build-refs", "--model", toy_dir / "model", "--data", toy_dir / "train.jsonl", "-o", output)
    assert_one_line_error(result, f"--output {output}: a library is an HDF5 file and cannot go to standard output")
