"""The GPU benchmark script's CPU path on its tiny grid."""

import importlib.util
import json
from pathlib import Path

import pytest
import torch

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "bench_gpu.py"


def _load():
    spec = importlib.util.spec_from_file_location("deer_bench_gpu", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.slow
def test_bench_gpu_tiny_cpu_grid(tmp_path):
    torch.set_num_threads(1)
    assert _load().main(["--out", str(tmp_path), "--device", "cpu", "--tiny"]) == 0
    rows = json.loads((tmp_path / "bench_gpu.json").read_text())
    assert len(rows) == 4 and all("t_deer" in r and r["converged_deer"] for r in rows)
    assert all(r["err_deer"] < 1e-5 for r in rows)
    assert (tmp_path / "bench_gpu.md").exists() and (tmp_path / "bench_gpu.png").exists()


def test_bench_gpu_missing_device_exits_2(tmp_path):
    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    assert _load().main(["--out", str(tmp_path), "--device", "cuda"]) == 2
