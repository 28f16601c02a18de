"""Does the encoder explain the gap to the official code on ETTh? Ours at the official run's size.

The official AutoTCL script (AslanDing/AutoTCL@2ca0060, run beside ours by
`run_official_ett.py --repr-dims 64`) trains CoST's encoder: the dilated network 64 wide x 10
blocks with CoST's trend head (causal convolutions of kernels 1..128), 1.32M parameters at
64-d. `paper-cpu` trains TS2Vec's network 32 wide x 6 blocks (58k parameters). This script
runs our AutoTCL (the paper's method) and the same seed's untrained encoder with the official
run's encoder (`encoder=cost`, hidden_dims 64, depth 10, output_dims 64; `--output-dims 320`
the paper's) and every other setting
of `paper-cpu` (config_etth1_uni; `--preset paper-cpu-etth2`: ETTh2 and config_etth2_uni), on
the same CSV and seeds, through our evaluation
(`measure_method`, as the package's units). TS2Vec is not rerun at this size (its 200
iterations at 1.32M parameters do not fit the time here). One JSON per (seed, method) under
--out: an interrupted run continues where it stopped.

    python packages/autotcl/scripts/encoder_size_check.py --data-dir /work/data \
        --seeds 0 1 2 --out /tmp/autotcl-encoder-size
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch
from iclr24_autotcl.autotcl import TSEncoder
from iclr24_autotcl.experiment import PRESETS, load_task, measure_method

OFFICIAL_SIZE = dict(encoder="cost", hidden_dims=64, depth=10)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data-dir", required=True, help="folder holding autotcl/ETTh1.csv, ETTh2.csv")
    p.add_argument("--preset", choices=("paper-cpu", "paper-cpu-etth2"), default="paper-cpu")
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--methods", nargs="+", default=["autotcl", "untrained"])
    p.add_argument(
        "--output-dims",
        type=int,
        default=64,
        help="representation size: 64 as the official run beside ours, 320 the paper's",
    )
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--out", required=True, help="folder for one JSON per (seed, method)")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    size = OFFICIAL_SIZE | {"output_dims": a.output_dims}
    preset = replace(PRESETS[a.preset], **size)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    for seed in a.seeds:
        task = load_task(preset, seed, a.data_dir)
        channels = task.data.shape[-1]
        encoder = TSEncoder(channels, preset.output_dims, preset.hidden_dims, preset.depth,
                            trend_head=True)  # fmt: skip
        n_params = sum(p.numel() for p in encoder.parameters())
        print(f"seed {seed}: encoder {size}, {n_params:,} parameters ({channels} input channels)")
        for method in a.methods:
            path = out / f"seed{seed}-{method}.json"
            if path.exists():
                continue
            res = measure_method(preset, seed, method, task)
            keep = {k: float(v) for k, v in res.items() if np.ndim(v) == 0}
            path.write_text(json.dumps(keep | {"encoder_parameters": n_params}, indent=1) + "\n")
    print("| seed | method | " + " | ".join(f"H={h} MSE / MAE" for h in preset.horizons) + " |")
    for path in sorted(out.glob("seed*.json")):
        r = json.loads(path.read_text())
        seed, method = path.stem.split("-", 1)
        cells = [
            f"{r[f'{method}/mse_h{h}']:.3f} / {r[f'{method}/mae_h{h}']:.3f}"
            for h in preset.horizons
        ]
        print(f"| {seed[4:]} | {method} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
