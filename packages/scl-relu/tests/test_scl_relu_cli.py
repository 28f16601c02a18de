"""The paper preset's code path (CIFAR loader, two augmented views, ResNet-18, checkpoints,
binding) end to end on a tiny fake CIFAR-10 that the test writes, and --resume of it."""

import json

import pytest
from iclr24_scl_relu.experiment import app

from iclr24_common import load_results

TINY = ["--set", "ufm_majority=6", "--set", "ufm_ratios=1,10", "--set", "ufm_steps=20",
        "--set", "ufm_dim=12", "--set", "net_ratios=2", "--set", "net_epochs=1",
        "--set", "net_batch=32", "--set", "net_variants=plain,relu,relu+bind",
        "--set", "net_warmup=0", "--seeds", "0"]  # fmt: skip


def test_paper_preset_runs_on_a_tiny_cifar_and_resumes(tmp_path, capsys, write_cifar):
    pytest.importorskip("torchvision")
    write_cifar(tmp_path / "data", n_train=8, n_test=10)
    out = tmp_path / "run"
    argv = ["reproduce", "--preset", "paper", "--device", "cpu", "--threads", "2",
            "--data-dir", str(tmp_path / "data"), "--out", str(out), *TINY]  # fmt: skip
    assert app.main(argv) == 0, capsys.readouterr().err
    res = load_results(out)
    assert res["config"]["data"] == "cifar10" and res["config"]["net_dim"] == 128
    names = res["metrics"]
    for v in ("plain", "relu", "relu+bind"):
        assert f"net-R2-tau0.1/{v}/probe_acc" in names
    assert names["net-R2-tau0.1/relu+bind/binding_in_every_batch"]["mean"] == 1.0
    assert len(list((out / "checkpoints").glob("*.pt"))) == 3
    assert (out / "gram_heatmaps.png").exists() and (out / "ufm_convergence.png").exists()
    assert app.main([*argv, "--resume"]) == 0
    again = json.loads((out / "results.json").read_text())
    assert again["units"]["computed"] == 0 and again["metrics"] == res["metrics"]
