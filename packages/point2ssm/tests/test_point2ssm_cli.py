"""The command line: bad input exits 2 with one line; the smoke reproduction is complete."""

import json

import pytest
from iclr24_point2ssm import cli


@pytest.mark.parametrize(
    "argv",
    [
        ["reproduce", "--preset", "bogus"],
        ["reproduce", "--preset", "smoke", "--conditions", "foggy"],
        ["reproduce", "--preset", "smoke", "--seeds", "-1"],
    ],
)
def test_bad_input_exits_2(argv, tmp_path, capsys):
    argv = [*argv, "--out", str(tmp_path / "run")]
    with pytest.raises(SystemExit) as e:
        cli.main(argv)
    assert e.value.code == 2
    assert "error" in capsys.readouterr().err


def test_steps_zero_is_a_usage_error(tmp_path, capsys):
    rc = cli.main(["reproduce", "--preset", "smoke", "--steps", "0", "--out", str(tmp_path)])
    assert rc == 2
    assert "--steps" in capsys.readouterr().err


def test_paper_preset_without_data_says_what_to_get(tmp_path, capsys):
    rc = cli.main(
        [
            "reproduce",
            "--preset",
            "paper",
            "--data-dir",
            str(tmp_path / "none"),
            "--out",
            str(tmp_path / "run"),
        ]
    )
    assert rc == 2
    err = capsys.readouterr().err
    assert "missing data" in err and "jadie1/Point2SSM" in err


@pytest.mark.slow
def test_smoke_reproduction_is_complete(tmp_path):
    out = tmp_path / "smoke"
    assert cli.main(["reproduce", "--preset", "smoke", "--out", str(out)]) == 0
    res = json.loads((out / "results.json").read_text())
    assert res["preset"] == "smoke" and res["seeds"] == [0]
    for cond in ("clean", "noisy", "partial"):
        for method in ("point2ssm", "dg-ae", "no-corr"):
            for metric in (
                "p2s",
                "cd",
                "compactness@3",
                "generalization@3",
                "specificity@3",
                "mode1_r2",
            ):
                v = res["metrics"][f"{cond}/{method}/{metric}"]
                assert v["per_seed"] and v["mean"] == v["mean"]  # present and not NaN
    # one model per condition, trained with that perturbation (official protocol)
    assert all(f"{c}/point2ssm/train_loss" in res["metrics"] for c in ("clean", "noisy", "partial"))
    ids = {c["id"] for c in res["claims"]}
    assert ids == {
        "compactness",
        "first-mode",
        "surface-accuracy",
        "robust-noisy",
        "robust-partial",
    }
    assert all(isinstance(c["holds"], bool) for c in res["claims"])
    for f in ("results.md", "log.txt", "ssm_metrics.png", "modes_point2ssm.png"):
        assert (out / f).stat().st_size > 0
    assert len(list((out / "modes_point2ssm").glob("*.ply"))) == 9


@pytest.mark.slow
def test_paper_preset_runs_on_a_mesh_folder(tmp_path, monkeypatch):
    """The `paper` code path (mesh folders, no known modes) end to end, at a tiny scale."""
    import dataclasses

    import numpy as np
    import open3d as o3d
    from iclr24_point2ssm import experiment

    root = tmp_path / "data" / "point2ssm" / "toy"
    rng = np.random.default_rng(0)
    for split, n in (("train", 8), ("val", 2), ("test", 5)):
        (root / f"{split}_meshes").mkdir(parents=True)
        for i in range(n):
            m = o3d.geometry.TriangleMesh.create_sphere(radius=1.0, resolution=6)
            m.vertices = o3d.utility.Vector3dVector(np.asarray(m.vertices) * rng.uniform(0.5, 2, 3))
            o3d.io.write_triangle_mesh(str(root / f"{split}_meshes/m{i}.ply"), m)
    tiny = dataclasses.replace(experiment.PRESETS["smoke"], data="meshes", steps=3)
    monkeypatch.setitem(experiment.PRESETS, "paper", tiny)
    out = tmp_path / "paper"
    argv = [
        "reproduce",
        "--preset",
        "paper",
        "--data-dir",
        str(tmp_path / "data"),
        "--dataset",
        "toy",
        "--conditions",
        "clean",
        "noisy",
        "--train-clean-only",
        "--out",
        str(out),
    ]
    assert cli.main(argv) == 0
    res = json.loads((out / "results.json").read_text())
    assert "clean/point2ssm/p2s" in res["metrics"] and "noisy/dg-ae/p2s" in res["metrics"]
    assert "clean/point2ssm/mode1_r2" not in res["metrics"]  # no known modes for real meshes
    # --train-clean-only: one model per method, trained on clean input, tested on both
    assert "clean/dg-ae/train_loss" in res["metrics"]
    assert "noisy/dg-ae/train_loss" not in res["metrics"]
    assert {c["id"] for c in res["claims"]} == {"compactness", "surface-accuracy", "robust-noisy"}
