"""The README's library example runs as written."""

import re
from pathlib import Path


def test_readme_library_example():
    readme = (Path(__file__).parents[1] / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", readme, flags=re.S)
    assert blocks, "the README has no python example"
    namespace: dict = {}
    exec(compile(blocks[0], "README.md", "exec"), namespace)  # noqa: S102
    assert namespace["audit"].violation_rate == 0.0
    assert namespace["reg"].predict(namespace["X"]).shape == (200,)
