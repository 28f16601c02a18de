"""The README's Python blocks run as written, with the model replaced by the scripted
optimizers (the loop, the files and the numbers they print are real)."""

import re
from pathlib import Path

from iclr24_opro.experiment import scripted_optimizer

import iclr24_llm


def test_readme_examples_run(tmp_path, monkeypatch):
    scripted = scripted_optimizer()
    monkeypatch.setattr(iclr24_llm, "load_llm", lambda spec, **kw: scripted)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data" / "gsm8k").mkdir(parents=True)
    rows = "".join(f"What is {i} + {i}?\t{2 * i}\n" for i in range(60))
    (tmp_path / "data" / "gsm8k" / "gsm_train.tsv").write_text(rows)
    readme = (Path(__file__).parents[1] / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
    assert len(blocks) == 3
    ns: dict = {}
    exec(blocks[0], ns)  # noqa: S102
    assert (tmp_path / "runs" / "lr" / "trajectory.jsonl").exists()
    assert (tmp_path / "runs" / "lr" / "checkpoint.json").exists()
    assert ns["base"].evaluations <= 10_000 and ns["tsp"].gap(ns["res"].best.value) >= 0
    step_up = iclr24_llm.ScriptedBackend(  # one step up from the best solution shown
        lambda p: f"x = {int(p.split('solution:')[-1].split()[0]) + 1}"
    )
    ns2 = {**ns, "step_up": step_up}
    exec(blocks[1].replace("res = OPRO(prob, llm", "res = OPRO(prob, step_up"), ns2)  # noqa: S102
    assert ns2["res"].best.solution == 7
    exec(blocks[2], ns)  # noqa: S102
    assert ns["res"].best.value == 1.0 and "sentiment" in ns["res"].best.solution.lower()
    assert len(ns["train"]) == 2  # int(0.035 * 60) GSM8K training examples
    assert (tmp_path / "runs" / "po" / "trajectory.jsonl").exists()
