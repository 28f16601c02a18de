"""Test helpers shared by the packages: run the ``paper`` preset on a miniature of its data.

A paper-path test writes a few rows of each dataset the ``paper`` preset reads, in the exact
on-disk format its loader expects, and runs the real ``reproduce --preset paper`` on it with
``--set`` capping only sizes (steps, examples, seeds, widths), never a code branch the real run
would not take::

    from iclr24_common.testing import run_paper_preset

    def test_paper_path_runs_on_miniature_data(tmp_path):
        write_miniature_cifar10(tmp_path / "data" / "cifar-10-batches-py")
        res = run_paper_preset(app, tmp_path / "data", tmp_path / "run",
                               sets={"epochs": 1, "seeds": "0,1"})
        assert {c["id"] for c in res["claims"]} == {...}

The run must reach ``results.json`` with every claim computed (a verdict from a test) and
every check evaluated; the results contract is enforced by :func:`load_results`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .experiment import ExperimentApp
from .results import load_results


def run_paper_preset(
    app: ExperimentApp,
    data_dir: str | Path,
    out_dir: str | Path,
    *,
    sets: Mapping[str, Any] | None = None,
    extra: Sequence[str] = (),
    threads: int = 1,
    preset: str = "paper",
) -> dict[str, Any]:
    """Run ``reproduce --preset paper --data-dir DATA --out OUT --set K=V ...`` in-process on
    CPU and return the checked results dict. Fails (AssertionError) on a non-zero exit, and
    names the log's tail so the failing line is in the test report."""
    argv = ["reproduce", "--preset", preset, "--data-dir", str(data_dir), "--out", str(out_dir),
            "--device", "cpu", "--threads", str(threads)]  # fmt: skip
    for key, value in (sets or {}).items():
        if isinstance(value, (list, tuple)):
            value = ",".join(str(v) for v in value)
        argv += ["--set", f"{key}={value}"]
    argv += list(extra)
    try:
        code = app.main(argv)
    except SystemExit as e:  # argparse errors
        code = e.code
    if code != 0:
        log = Path(out_dir) / "log.txt"
        tail = log.read_text().splitlines()[-15:] if log.exists() else ["(no log.txt)"]
        raise AssertionError(f"paper preset exited {code}: {' '.join(argv)}\n" + "\n".join(tail))
    res = load_results(out_dir)
    if res.get("preset") not in (None, preset):
        raise AssertionError(f"results.json is for preset {res.get('preset')!r}, not {preset!r}")
    for claim in res["claims"]:
        if claim.get("verdict") not in ("holds", "fails", "inconclusive"):
            raise AssertionError(f"claim {claim.get('id')!r} was not computed: {claim}")
    return res
