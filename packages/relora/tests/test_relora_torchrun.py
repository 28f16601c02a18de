"""Data parallelism through the real command line: ``torchrun --nproc-per-node 2`` (gloo, CPU)
runs ``reproduce`` and its numbers equal one process's on the same preset.

What this adds to ``test_relora_train.py::test_two_gloo_ranks_agree_after_merges`` (two forked
gloo ranks on a toy model: every weight, the re-drawn A included, identical on both ranks and
equal to one process's): the launcher's environment, ``init_distributed``, the four methods on
the LLaMA, the warm-start fork, the evaluation and rank-0-only writing of results.json.

Tolerance: every loss within 1e-5 nats of the single process's (measured: <= 3e-7; the
gradients differ only by the order of a float sum, half-batch means averaged by all-reduce
against one full-batch mean), the relative weight displacement from the warm start within
1e-6 of it (measured: 2e-10, the same float-order noise), every other metric (effective ranks, merges, steps, zeroed
fractions, parameter counts) equal. LoRA dropout is set to 0 (``--set dropout=0``): with
dropout, each rank draws its masks for its own rows, a different but equally valid stream.
"""

import json
import os
import subprocess
import sys

import pytest
import torch
from iclr24_relora.experiment import app

# smoke preset, 14 steps: 4 warm-start steps, then ReLoRA cycles of 3 (3 merges); the tuning
# grid cut to its official point (one unit per method: ranks that all run the same units in
# order are what is compared, not the choice)
SETS = {"dropout": 0, "steps": 14, "warm_start": 4, "relora_steps": 3, "warmup": 2,
        "tune_lr": 1e-3}  # fmt: skip
ARGS = ["reproduce", "--preset", "smoke", "--device", "cpu", "--threads", "1"]
ARGS += [a for k, v in SETS.items() for a in ("--set", f"{k}={v}")]


@pytest.mark.slow
@pytest.mark.skipif(not torch.distributed.is_available(), reason="torch.distributed missing")
def test_torchrun_two_ranks_equal_one_process(tmp_path):
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
           "-m", "iclr24_relora.experiment", *ARGS, "--out", str(tmp_path / "two")]  # fmt: skip
    # ~25 s of CPU (three processes import torch and transformers); the bound is generous for
    # a loaded machine (it took 100-240 s of wall time with 8 jobs sharing 2 cores)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert app.main([*ARGS, "--out", str(tmp_path / "one")]) == 0
    two = json.loads((tmp_path / "two" / "results.json").read_text())["metrics"]
    one = json.loads((tmp_path / "one" / "results.json").read_text())["metrics"]
    assert set(two) == set(one)
    assert two["relora/merges"]["mean"] == 3
    for key in one:
        if key.endswith("seconds"):
            continue
        a, b = two[key]["per_seed"], one[key]["per_seed"]
        if "loss" in key:
            assert a == pytest.approx(b, abs=1e-5), key
        elif key.endswith("rel_update"):  # weights: the same float-order noise as the losses
            assert a == pytest.approx(b, rel=1e-6), key
        else:
            assert a == b, key
