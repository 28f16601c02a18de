"""The CLI: bad input exits 2 with one line; the smoke reproduction writes complete results."""

import json

import pytest
from iclr24_opro.cli import main


@pytest.mark.parametrize(
    "extra",
    [["--llm", "no-such-model-anywhere"], ["--llm-steps", "0"], ["--llm-seconds", "-1"]],
)
def test_bad_input_exits_2(tmp_path, capsys, extra):
    code = main(["reproduce", "--preset", "smoke", "--out", str(tmp_path), *extra])
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("iclr24-opro: error:")  # one line (after the run's log line)
    assert not any("Traceback" in line for line in err)


def test_paper_preset_without_gsm8k_exits_2(tmp_path, capsys):
    code = main(["reproduce", "--preset", "paper", "--data-dir", str(tmp_path / "none"),
                 "--out", str(tmp_path / "run")])  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err
    assert "GSM8K" in err and "Traceback" not in err


def test_unknown_preset_exits_2(tmp_path):
    with pytest.raises(SystemExit) as e:
        main(["reproduce", "--preset", "huge", "--out", str(tmp_path)])
    assert e.value.code == 2


@pytest.mark.slow
def test_smoke_reproduction_with_scripted_llm(tmp_path):
    out = tmp_path / "run"
    argv = ["reproduce", "--preset", "smoke", "--llm", "scripted", "--scorer", "scripted"]
    assert main([*argv, "--out", str(out)]) == 0
    res = json.loads((out / "results.json").read_text())
    ids = {c["id"]: c for c in res["claims"]}
    assert set(ids) == {"protocol", "capable-linreg", "capable-tsp", "llm-vs-random", "prompt-opt"}
    assert all(isinstance(c["holds"], bool) for c in ids.values())
    assert ids["protocol"]["holds"] and ids["capable-linreg"]["holds"]
    # the scripted optimizer finds a 'sentiment' instruction, which the scripted scorer needs
    assert ids["prompt-opt"]["holds"]
    assert res["metrics"]["prompt/best_test_acc"]["mean"] == 1.0
    assert res["metrics"]["prompt/steps"]["mean"] == 2
    assert (out / "prompt_best.png").exists()
    ptraj = out / "trajectories" / "prompt-seed0" / "trajectory.jsonl"
    assert len(ptraj.read_text().splitlines()) == 2
    for name in ("llm/parse_rate", "tsp/scripted_gap", "random/linreg_excess_loss"):
        assert name in res["metrics"]
    assert res["metrics"]["llm/usage_calls"]["mean"] == 16  # 2 steps x 8 samples
    assert (out / "linreg_best.png").exists() and (out / "tsp_best.png").exists()
    traj = out / "trajectories" / "llm-linreg-seed0" / "trajectory.jsonl"
    first = json.loads(traj.read_text().splitlines()[0])
    assert first["step"] == 0 and first["samples"] == 8
    # --resume: every run is already finished, so the same numbers come back
    assert main([*argv, "--out", str(out), "--resume"]) == 0
    again = json.loads((out / "results.json").read_text())
    drop = {"llm/seconds_per_step", "prompt/seconds", "prompt/optimisation_seconds"}  # wall time
    assert {k: v for k, v in again["metrics"].items() if k not in drop} == {
        k: v for k, v in res["metrics"].items() if k not in drop
    }


def test_readme_examples_run(tmp_path, monkeypatch):
    """The README's Python blocks, with the model replaced by the scripted optimizers."""
    import re
    from pathlib import Path

    from iclr24_opro import scripted_linreg_optimizer, scripted_tsp_optimizer
    from iclr24_opro.prompts import scripted_instruction_optimizer, scripted_sentiment_scorer

    import iclr24_llm as llm_mod
    from iclr24_llm import ScriptedBackend

    def both(prompt):
        if "<INS>" in prompt:
            return scripted_instruction_optimizer(prompt)
        if "<trace>" in prompt:
            return scripted_tsp_optimizer(prompt)
        if "solution:\n" in prompt:  # the TextProblem example: one step up from the best
            best = int(prompt.split("solution:\n")[-1].split("\n")[0])
            return f"x = {best + 1}"
        return scripted_linreg_optimizer(prompt)

    scripted = ScriptedBackend(both, scorer=scripted_sentiment_scorer)
    monkeypatch.setattr(llm_mod, "load_llm", lambda spec: scripted)
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
    exec(blocks[1], ns)  # noqa: S102
    assert ns["res"].best.solution == 7
    exec(blocks[2], ns)  # noqa: S102
    assert ns["res"].best.value == 1.0 and "sentiment" in ns["res"].best.solution.lower()
    assert len(ns["train"]) == 2  # int(0.035 * 60) GSM8K training examples
    assert (tmp_path / "runs" / "po" / "trajectory.jsonl").exists()
