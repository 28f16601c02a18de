import json
import subprocess
import sys
import textwrap

import pytest

from iclr24_common import get_dist_info, init_distributed

WORKER = textwrap.dedent(
    """
    import json, sys, torch
    from iclr24_common import (all_gather_cat, all_reduce_mean, cleanup, init_distributed,
                               is_main_process, rank0_only)
    info = init_distributed("cpu")
    t = torch.tensor([float(info.rank + 1)])
    all_reduce_mean(t)
    gathered = all_gather_cat(torch.tensor([info.rank]))

    @rank0_only
    def write():
        with open(sys.argv[1], "w") as f:
            json.dump({"world": info.world_size, "backend": info.backend, "mean": t.item(),
                       "gathered": gathered.tolist(), "main": is_main_process()}, f)

    write()
    cleanup()
    """
)


def test_single_process_is_a_noop(monkeypatch):
    for k in ["RANK", "WORLD_SIZE", "LOCAL_RANK"]:
        monkeypatch.delenv(k, raising=False)
    info = init_distributed()
    assert (info.rank, info.world_size, info.is_main, info.is_distributed) == (0, 1, True, False)
    assert get_dist_info().world_size == 1


@pytest.mark.slow
def test_two_process_gloo_all_reduce(tmp_path):
    script, out = tmp_path / "worker.py", tmp_path / "out.json"
    script.write_text(WORKER)
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc_per_node=2",
        str(script),
        str(out),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-2000:]
    res = json.loads(out.read_text())
    assert res == {"world": 2, "backend": "gloo", "mean": 1.5, "gathered": [0, 1], "main": True}
