"""scripts/bench_gpu.py (the paper's GPU speed grid as the `grid` preset) on a tiny CPU grid."""

import importlib.util
from pathlib import Path

import pytest
import torch

from iclr24_common import load_results

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "bench_gpu.py"


def _load():
    spec = importlib.util.spec_from_file_location("deer_bench_gpu", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.slow
def test_bench_gpu_tiny_cpu_grid_writes_results_like_a_preset(tmp_path):
    out = tmp_path / "grid"
    argv = ["--out", str(out), "--device", "cpu", "--tiny", "--threads", "1"]  # tiny: 1 is fastest
    assert _load().main(argv) == 0
    res = load_results(out)
    assert res["preset"] == "grid" and res["config"]["speed_hidden"] == [1, 4]
    claims = {c["id"]: c for c in res["claims"]}
    assert set(claims) == {"speedup-hidden1", "speedup-hidden4"}
    assert all(c["rests_on"] == ["timed-solves-correct"] for c in claims.values())
    assert all("V100" in c["paper"] or "Fig. 2" in c["paper"]
               for k, c in claims.items() if k.startswith("speedup"))  # fmt: skip
    assert res["metrics"]["speed/h4_T1000/deer_seconds"]["seeds"] == [0, 1]
    premises = {p["id"]: p for p in res["premises"]}
    assert premises["timed-solves-correct"]["verdict"] == "holds"
    table = (out / "v100_comparison.md").read_text()
    assert "| 1 | 1,000 |" in table and "15.7" in table  # the official V100 point beside ours
    assert (out / "speedup_cpu.png").exists()
    # the time limit: nothing new is started once it is spent; --resume fills in the rest
    budget = tmp_path / "budget"
    assert _load().main([*argv[:1], str(budget), *argv[2:], "--budget-s", "0.001"]) == 0
    first = load_results(budget)
    assert first["speed_skipped"] and len(first["metrics"]) < len(res["metrics"])


def test_bench_gpu_missing_device_exits_2(tmp_path, capsys):
    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    assert _load().main(["--out", str(tmp_path), "--device", "cuda"]) == 2
    assert "cuda" in capsys.readouterr().err.lower()
