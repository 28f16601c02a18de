"""DistributedInfoBatch in two gloo processes on CPU (torchrun), bounded by a timeout."""

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
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=150, env=env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    ok = sorted(p.name for p in tmp_path.glob("ok*"))
    assert ok == ["ok0", "ok1"]
    assert (tmp_path / "ok0").read_text() == (tmp_path / "ok1").read_text()
