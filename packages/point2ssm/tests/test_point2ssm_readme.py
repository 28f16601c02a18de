"""The README's library example runs as written."""

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_example_runs(tmp_path, monkeypatch):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "no python example in the README"
    monkeypatch.chdir(tmp_path)
    scope: dict = {}
    exec(compile(blocks[0], "README.md", "exec"), scope)
    assert scope["y"].shape == (24, 64, 3)
    assert scope["attn"].shape == (24, 64, 128)
    assert scope["samples"].shape == (10, 64, 3)
    assert len(list((tmp_path / "modes").glob("*.ply"))) == 9
    assert scope["p2s"].shape == (24,)
