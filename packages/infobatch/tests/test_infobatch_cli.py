"""The CLI: bad input exits 2 with one line; the smoke reproduction writes complete results;
the README's library example runs."""

import json
import re
from pathlib import Path

import pytest
from iclr24_infobatch.cli import main

README = Path(__file__).parents[1] / "README.md"


@pytest.mark.parametrize(
    "argv",
    [
        ["reproduce", "--preset", "nope"],
        ["reproduce", "--preset", "smoke", "--epochs", "0"],
        ["reproduce", "--preset", "smoke", "--methods", "infobatch_r0.5"],
        ["reproduce", "--preset", "smoke", "--methods", "full", "random_r0.7"],
        ["reproduce", "--preset", "smoke", "--datasets", "cifar10"],
        ["reproduce", "--preset", "smoke", "--seeds", "-1"],
        ["reproduce", "--preset", "smoke", "--device", "tpu9"],
    ],
)
def test_bad_input_exits_2(argv, tmp_path, capsys):
    code = None
    try:
        code = main([*argv, "--out", str(tmp_path)])
    except SystemExit as e:  # argparse errors
        code = e.code
    assert code == 2
    # (the shared console log handler may keep an older test's closed stream: look only at
    # the lines this command printed itself)
    lines = [x for x in capsys.readouterr().err.splitlines() if x.startswith("iclr24-infobatch")]
    assert len(lines) == 1 and "error:" in lines[0]


def test_paper_preset_without_data_stops_at_once(tmp_path, capsys):
    code = main(["reproduce", "--preset", "paper", "--out", str(tmp_path / "o"),
                 "--data-dir", str(tmp_path / "empty"), "--datasets", "cifar10"])  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err
    assert "missing data" in err and "cifar-10-batches-py" in err


@pytest.mark.slow
def test_smoke_reproduction(tmp_path):
    out = tmp_path / "smoke"
    assert main(["reproduce", "--preset", "smoke", "--out", str(out)]) == 0
    res = json.loads((out / "results.json").read_text())
    for key in ("package", "version", "paper", "preset", "seeds", "device", "wall_seconds",
                "environment", "metrics", "claims"):  # fmt: skip
        assert key in res
    ids = {c["id"] for c in res["claims"]}
    assert ids == {f"{c}/digits" for c in
                   ("lossless", "saves-cost", "wall-clock", "annealing", "ablation-r0.7")}  # fmt: skip
    for c in res["claims"]:
        assert isinstance(c["holds"], bool) and c["measured"] and c["criterion"]
    m = res["metrics"]
    assert m["digits/full/saved_fraction"]["mean"] == 0.0
    assert 0.1 < m["digits/infobatch_r0.5/saved_fraction"]["mean"] < 0.5
    assert m["digits/full/test_acc"]["mean"] > 80.0
    assert (out / "results.md").exists() and (out / "epoch_sizes.png").exists()
    assert (out / "log.txt").exists() and (out / "runs.json").exists()
    # --resume reuses the finished runs: the same numbers, no retraining
    assert main(["reproduce", "--preset", "smoke", "--out", str(out), "--resume"]) == 0
    res2 = json.loads((out / "results.json").read_text())
    assert res2["metrics"] == res["metrics"]


def test_readme_library_example():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "README has no python example"
    exec(compile(blocks[0], str(README), "exec"), {})


@pytest.mark.slow
def test_paper_preset_code_path_on_tiny_cifar_files(tmp_path):
    """The paper preset's path (CIFAR loader, augmentation, ResNet-18, OneCycle) end to end
    on 12 fake images, 2 epochs."""
    import pickle

    import numpy as np

    base = tmp_path / "data" / "cifar-10-batches-py"
    base.mkdir(parents=True)
    rng = np.random.default_rng(0)
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        d = {b"data": rng.integers(0, 256, (2, 3072), dtype=np.uint8),
             b"labels": list(rng.integers(0, 10, 2))}  # fmt: skip
        (base / name).write_bytes(pickle.dumps(d))
    out = tmp_path / "paper"
    argv = ["reproduce", "--preset", "paper", "--datasets", "cifar10", "--epochs", "2",
            "--methods", "full", "infobatch_r0.5", "--data-dir", str(tmp_path / "data"),
            "--out", str(out), "--device", "cpu"]  # fmt: skip
    assert main(argv) == 0
    res = json.loads((out / "results.json").read_text())
    assert {c["id"] for c in res["claims"]} >= {"lossless/cifar10", "annealing/cifar10"}
    assert res["tasks"][0]["model"] == "resnet18" and res["tasks"][0]["train"]["augment"]
