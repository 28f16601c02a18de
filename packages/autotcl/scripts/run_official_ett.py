"""Run the official AutoTCL code (AslanDing/AutoTCL) on CPU, ETTh1 or ETTh2 univariate, beside ours.

Nothing of the official code is copied here: the script exports the official tree from a
git mirror into a work folder outside this repository (`git archive`), lays the CSV where
the official loader reads it (`datasets/forecast/<dataset>.csv`), applies the CPU stand-ins
below at run time (no file of the official tree is edited), runs the official
`train_forecasting_autotcl_cost.py --dataset <ETTh1|ETTh2> --archive forecast_csv_univar`
(`config_etth1_uni` / `config_etth2_uni`) and writes the official evaluation's per-horizon MSE / MAE to JSON.

The stand-ins (each changes where or how fast it runs, nothing the algorithm computes):
  1. device 'cpu' instead of the script's `--gpu 2` (cuda:2): `utils.init_dl_program` is
     called with 'cpu';
  2. `Tensor.cuda()` returns the tensor itself (the losses call `.cuda()` on labels/masks);
  3. `data_load.data_dir` is defined as the path the next line reads (line 196 of
     `load_forecast_csv` reads an undefined `data_dir`, then line 197 reads the same file);
  4. `DatetimeIndex.weekofyear` (removed in pandas 2) is `isocalendar().week`, the same values;
  5. `--seed` is honoured: the dataset's config carries 'seed': 42, which overrides `--seed`;
  6. `torch.autograd.set_detect_anomaly(True)` (a debugging switch at import) is turned off;
  7. the monitoring evaluations every 10 epochs from epoch 20 are skipped (they encode
     the whole series on the test split and feed nothing back into training; the final
     evaluation after training, the one reported, runs as in the official script);
  8. einops, tsaug and bottleneck come from `--deps` (a `pip install --target` folder).

Usage (the official runs of the autotcl README, "The official code beside ours"):

    uv pip install --target /tmp/autotcl-official-deps --no-deps einops tsaug bottleneck
    python packages/autotcl/scripts/run_official_ett.py --dataset ETTh1 \
        --mirror /work/.mirror/AslanDing+AutoTCL/repo --commit 2ca0060 \
        --csv /work/data/autotcl/ETTh1.csv --work /tmp/autotcl-official \
        --deps /tmp/autotcl-official-deps --seed 0 --repr-dims 64 --threads 2 \
        --out /tmp/autotcl-official/seed0.json

`--epochs 0` runs the untrained-encoder control: the fit loop stops before its first step
and the official final evaluation encodes with the seed's initial weights.
"""

from __future__ import annotations

import argparse
import json
import os
import runpy
import shutil
import subprocess
import sys
import time
from pathlib import Path


def export(mirror: str, commit: str, work: Path) -> str:
    """Export the official tree at `commit` into `work`; return the full commit hash."""
    full = subprocess.run(
        ["git", "-C", mirror, "rev-parse", commit + "^{commit}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    work.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(
        ["git", "-C", mirror, "archive", full], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(work)], input=archive, check=True)
    return full


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mirror", required=True, help="git directory of AslanDing/AutoTCL")
    p.add_argument("--commit", default="2ca0060")
    p.add_argument("--dataset", choices=("ETTh1", "ETTh2"), default="ETTh1")
    p.add_argument("--csv", required=True, help="the dataset's CSV (zhouhaoyi/ETDataset@1d16c8f)")
    p.add_argument("--work", required=True, help="folder for the exported official tree")
    p.add_argument("--deps", default=None, help="folder with einops, tsaug, bottleneck")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--repr-dims", type=int, default=320, help="official default 320")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument(
        "--epochs",
        type=int,
        default=None,
        help="override the config's epochs (ETTh1 115, ETTh2 80); 0 gives the untrained-encoder "
        "control: the same seed's initialisation through the official evaluation",
    )
    p.add_argument("--out", required=True, help="JSON with the per-horizon MSE / MAE")
    a = p.parse_args()

    t_start = time.time()
    work = Path(a.work).resolve()
    commit = export(a.mirror, a.commit, work)
    forecast = work / "datasets" / "forecast"
    forecast.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(a.csv, forecast / f"{a.dataset}.csv")

    os.chdir(work)
    sys.path[:0] = [str(work)] + ([a.deps] if a.deps else [])

    import pandas as pd
    import torch

    torch.set_num_threads(a.threads)
    torch.Tensor.cuda = lambda self, *args, **kwargs: self  # stand-in 2
    if not hasattr(pd.DatetimeIndex, "weekofyear"):  # stand-in 4
        pd.DatetimeIndex.weekofyear = property(
            lambda self: pd.Index(self.isocalendar().week.to_numpy(dtype="int64"))
        )

    import config as official_config
    import data_load
    import utils as official_utils

    data_load.data_dir = str(forecast / f"{a.dataset}.csv")  # stand-in 3
    init_dl_program = official_utils.init_dl_program
    official_utils.init_dl_program = lambda device_name, **kw: init_dl_program("cpu", **kw)

    merge = official_config.merege_config

    def merge_keep_seed(config, dataset, univar=True):  # stand-in 5
        out = merge(config, dataset, univar)
        out.seed = a.seed
        if a.epochs is not None:  # a control, not the official run: say so in the output
            out.epochs = a.epochs
        return out

    official_config.merege_config = merge_keep_seed

    import AutoTCL_CoST
    import tasks

    torch.autograd.set_detect_anomaly(False)  # stand-in 6
    init = AutoTCL_CoST.AutoTCL.__init__

    def init_no_monitoring(self, *args, **kwargs):  # stand-in 7
        kwargs["eval_every_epoch"] = 10**9
        init(self, *args, **kwargs)

    AutoTCL_CoST.AutoTCL.__init__ = init_no_monitoring

    evals = []
    eval_forecasting = tasks.eval_forecasting

    def recorded(*args, **kwargs):
        t0 = time.time()
        out, res = eval_forecasting(*args, **kwargs)
        evals.append((time.time() - t0, res))
        return out, res

    tasks.eval_forecasting = recorded

    sys.argv = [
        "train_forecasting_autotcl_cost.py",
        "--dataset",
        a.dataset,
        "--archive",
        "forecast_csv_univar",
        "--seed",
        str(a.seed),
        "--repr_dims",
        str(a.repr_dims),
    ]
    t_run = time.time()
    runpy.run_path(str(work / "train_forecasting_autotcl_cost.py"), run_name="__main__")
    t_end = time.time()

    eval_s, res = evals[-1]
    result = {
        "commit": commit,
        "command": " ".join(sys.argv),
        "seed": a.seed,
        "dataset": a.dataset,
        "repr_dims": a.repr_dims,
        "epochs_override": a.epochs,
        "threads": a.threads,
        "horizons": {
            str(h): {"mse": float(r["norm"]["MSE"]), "mae": float(r["norm"]["MAE"])}
            for h, r in res["ours"].items()
        },
        "wall_s": round(t_end - t_start, 1),
        "train_s": round(t_end - t_run - eval_s, 1),
        "eval_s": round(eval_s, 1),
        "encode_s": round(float(res["ts2vec_infer_time"]), 1),
        "n_evaluations": len(evals),
    }
    Path(a.out).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
