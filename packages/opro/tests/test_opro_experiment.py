"""The reproduction with scripted LLMs (no model): units, claims vs checks, resume, and the
errors of an unreachable --llm; the presets' validation."""

import json
import socket
from dataclasses import replace

import pytest
from iclr24_opro.experiment import PRESETS, Preset, main


def test_scripted_smoke_run_and_resume(tmp_path, capsys):
    out = tmp_path / "run"
    argv = ["reproduce", "--preset", "smoke", "--llm", "scripted", "--scorer", "scripted",
            "--llm-steps", "3", "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    res = json.loads((out / "results.json").read_text())
    # the preset the claims read is the one that ran (--llm-steps is a preset field)
    assert res["config"]["llm"] == "scripted" and res["config"]["linreg_steps"] == 3
    assert res["metrics"]["linreg/llm/steps"]["mean"] <= 3
    claims = {c["id"] for c in res["claims"]}
    checks = {c["id"]: c for c in res["checks"]}
    assert claims == {"linreg-llm-vs-search", "tsp-llm-vs-search", "prompt-beats-human"}
    assert all(c["holds"] for c in checks.values()), checks
    m = res["metrics"]
    assert m["linreg/random/evaluations"]["mean"] == m["linreg/llm/evaluations"]["mean"] > 0
    # the scripted optimizer finds a 'sentiment' instruction, which the scripted scorer needs
    assert m["prompt/opro/test_acc"]["mean"] == 1.0 > m["prompt/human/test_acc"]["mean"]
    for name in ("linreg_best.png", "tsp_best.png", "paper_vs_ours.png", "results.md"):
        assert (out / name).exists()
    first = json.loads(
        (out / "trajectories/seed0/linreg-llm/trajectory.jsonl").read_text().splitlines()[0]
    )
    assert first["step"] == 0 and first["samples"] == 2  # the smoke's linreg_per_step
    assert main([*argv, "--resume"]) == 0
    again = json.loads((out / "results.json").read_text())
    assert again["metrics"] == res["metrics"] and again["units"]["computed"] == 0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("spec", ["openai:m@http://127.0.0.1:{port}/v1", "openai:no-url"])
def test_unreachable_or_malformed_openai_llm_is_one_line_exit_2(spec, tmp_path, capsys):
    spec = spec.format(port=_free_port())
    code = main(["reproduce", "--preset", "smoke", "--llm", spec, "--scorer", "scripted",
                 "--out", str(tmp_path)])  # fmt: skip
    err = [ln for ln in capsys.readouterr().err.splitlines() if "error" in ln]
    assert code == 2 and len(err) == 1 and err[0].startswith("iclr24-opro: error:"), err
    assert not (tmp_path / "units" / "seed0%2Fscripted.pkl").exists()  # checked before any work


def test_preset_validation():
    with pytest.raises(ValueError, match="linreg_steps"):
        replace(PRESETS["smoke"], linreg_steps=0)
    with pytest.raises(ValueError, match="linreg_per_step"):
        replace(PRESETS["default"], linreg_per_step=0)
    with pytest.raises(ValueError, match="scoring"):
        Preset(scoring="lenient")
    with pytest.raises(ValueError, match="prompt task"):
        Preset(prompt_task="mmlu")
    with pytest.raises(ValueError, match="tsp_max_samples"):
        replace(PRESETS["default"], tsp_per_step=8, tsp_max_samples=4)
    with pytest.raises(ValueError, match="samples_per_call"):
        replace(PRESETS["default"], samples_per_call=0)
    replace(PRESETS["default"], tsp_per_step=8, tsp_max_samples=8, samples_per_call=None)
    # the official decoding budget in every preset but the smoke
    assert PRESETS["default"].llm_max_new_tokens == PRESETS["paper"].llm_max_new_tokens == 1024
    assert PRESETS["default"].prompt_max_new_tokens == 1024
    assert PRESETS["paper"].prompt_task == "gsm8k" and PRESETS["paper"].linreg_steps == 500
    assert PRESETS["paper"].linreg_per_step == PRESETS["paper"].tsp_per_step == 8  # official
