"""DistributedInfoBatch in two gloo processes on CPU (torchrun), bounded by a timeout: the
sharding and score synchronisation, and a DDP training run whose numbers equal the same
training in one process with the global batch (kept sets exactly; losses and weights to
float32 summation-order noise, 1e-5)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from iclr24_infobatch import DistributedInfoBatch

WORKER = Path(__file__).with_name("ddp_worker_infobatch.py")


def test_needs_a_process_group():
    with pytest.raises(RuntimeError, match="process group"):
        DistributedInfoBatch(10, 2)


@pytest.mark.slow
@pytest.mark.skipif(not torch.distributed.is_available(), reason="torch.distributed missing")
def test_two_process_sharding_and_score_sync(tmp_path):
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
           str(WORKER), str(tmp_path)]  # fmt: skip
    # 233 s once on 2 shared cores at load average 12 (nice 15: the torch imports starved)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=420, env=env)
    if proc.returncode != 0 and "SIGABRT" in proc.stderr:
        # once in a fresh-clone make test (2026-12-05) rank 1 aborted ("terminate called without
        # an active exception": std::terminate on a joinable thread); the leg alone then passed.
        # One retry for that abort only: a wrong number or a second crash still fails.
        for f in tmp_path.iterdir():
            f.unlink()
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=420, env=env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    ok = sorted(p.name for p in tmp_path.glob("ok*"))
    assert ok == ["ok0", "ok1"]
    assert (tmp_path / "ok0").read_text() == (tmp_path / "ok1").read_text()
    eq = json.loads((tmp_path / "equality.json").read_text())
    ddp, one = eq["ddp"], eq["single"]
    pruned = [k for k, s in enumerate(one["kept"]) if len(s) < 480]
    assert len(pruned) >= 4, one["kept_per_epoch"]  # InfoBatch pruned in most epochs
    assert ddp["kept"] == one["kept"]  # the same samples kept, every epoch
    assert ddp["kept_per_epoch"] == one["kept_per_epoch"]
    # the same per-epoch training loss and final weights, but for the order in which float32
    # sums are taken (DDP all-reduces two half-batch gradients; one process sums the batch)
    assert max(abs(a - b) for a, b in zip(ddp["loss"], one["loss"])) < 1e-5, (ddp, one)
    assert eq["max_weight_diff"] < 1e-5, eq["max_weight_diff"]
    assert ddp["test_acc"] == one["test_acc"] and ddp["saved"] == one["saved"]
