"""Runs the README's library example."""

import re
from pathlib import Path

import pytest
import torch

README = Path(__file__).resolve().parents[1] / "README.md"


@pytest.mark.slow
def test_readme_library_example(capsys):
    torch.set_num_threads(1)
    text = README.read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks, "no python example in the README"
    ns: dict = {}
    exec(compile(blocks[0], str(README), "exec"), ns)
    assert ns["out"].shape == (4, 2000, 32) and ns["h_n"].shape == (2, 4, 32)
    assert float((ns["out"] - ns["ref"](ns["x"])[0]).abs().max()) < 1e-5
    assert ns["res"].converged and ns["y"].shape == (4, 2000, 32)
    torch.testing.assert_close(ns["y"], ns["y_seq"], rtol=0, atol=1e-5)
    assert ns["res2"].iterations <= 2
    assert ns["sol"].shape == (1001, 2)
