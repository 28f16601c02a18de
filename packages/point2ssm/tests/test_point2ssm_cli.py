"""Package-specific command-line behaviour (the common contract is tested in shared/tests):
option errors, the paper preset's message, a fresh machine without open3d or libusb, and the
paper preset's whole path on a small mesh folder."""

import json
import subprocess
import sys
import textwrap

import pytest
from iclr24_point2ssm.experiment import main


@pytest.mark.parametrize(
    "argv,msg",
    [
        (["--preset", "smoke", "--conditions", "foggy"], "invalid choice"),
        (["--preset", "smoke", "--steps", "0"], "steps must be >= 1"),
        (["--preset", "smoke", "--set", "num_output=999"], "num_output must be <= num_input"),
        (["--preset", "smoke", "--set", "data=cad"], "data must be"),
        (["--preset", "smoke", "--set", "train_sizes=16"], "train_sizes must be between"),
        (["--preset", "smoke", "--set", "sparse_sweep=4"], "sparse_sweep sizes must be >= k"),
        (["--preset", "paper"], "jadie1/Point2SSM"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(argv, msg, tmp_path, capsys):
    argv = ["reproduce", *argv, "--out", str(tmp_path / "run"), "--data-dir", str(tmp_path)]
    try:
        code = main(argv)
    except SystemExit as e:  # argparse errors
        code = e.code
    err = capsys.readouterr().err
    assert code == 2 and msg in err, err


def test_options_reach_the_preset(capsys):
    argv = ["reproduce", "--preset", "smoke", "--steps", "5", "--conditions", "clean", "noisy",
            "--train-perturbed", "--dataset", "pancreas", "--print-config"]  # fmt: skip
    assert main(argv) == 0
    config = json.loads(capsys.readouterr().out)
    assert config["steps"] == 5 and config["conditions"] == ["clean", "noisy"]
    assert config["train_on_perturbed"] is True and config["dataset"] == "pancreas"
    assert main(["reproduce", "--preset", "paper", "--train-clean-only", "--print-config"]) == 0
    assert json.loads(capsys.readouterr().out)["train_on_perturbed"] is False


BLOCK_OPEN3D = """
import sys
class Block:  # what `import open3d` does on a machine without the library
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "open3d":
            raise ImportError({message!r})
sys.meta_path.insert(0, Block())
"""


@pytest.mark.parametrize(
    "message,fix",
    [
        ("libusb-1.0.so.0: cannot open shared object file: No such file or directory",
         "apt-get install libusb-1.0-0"),
        ("No module named 'open3d'", "pip install"),
    ],
    ids=["no-libusb", "no-open3d"],
)  # fmt: skip
def test_missing_open3d_is_one_line_naming_the_fix(message, fix, tmp_path):
    """The package imports and --help works without open3d; the run stops with one line."""
    code = BLOCK_OPEN3D.format(message=message) + textwrap.dedent(f"""
        import iclr24_point2ssm
        from iclr24_point2ssm.experiment import main
        assert "open3d" not in sys.modules
        try:
            main(["reproduce", "--help"])
        except SystemExit as e:
            assert e.code == 0
        sys.exit(main(["reproduce", "--preset", "smoke", "--out", {str(tmp_path)!r}]))
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    errors = [ln for ln in proc.stderr.splitlines() if "error" in ln.lower()]
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert len(errors) == 1 and fix in errors[0] and "open3d" in errors[0], proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == errors[0]  # the run stops there
    assert "Traceback" not in proc.stderr and "preset smoke:" not in proc.stderr  # at once


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
    tiny = dataclasses.replace(experiment.PRESETS["smoke"], data="meshes", steps=3,
                               train_sizes=(4,))  # fmt: skip
    monkeypatch.setitem(experiment.PRESETS, "paper", tiny)
    out = tmp_path / "paper"
    argv = ["reproduce", "--preset", "paper", "--data-dir", str(tmp_path / "data"),
            "--dataset", "toy", "--conditions", "clean", "sparse", "--train-perturbed",
            "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    res = json.loads((out / "results.json").read_text())
    assert "clean/point2ssm/p2s" in res["metrics"] and "sparse/point2ssm/p2s" in res["metrics"]
    assert "clean/point2ssm/mode1_r2" not in res["metrics"]  # no known modes for real meshes
    # --train-perturbed: one model per perturbation, as in the official code, for Point2SSM
    # and the strongest baseline of the clean comparison
    assert "clean/dg-ae/train_loss" in res["metrics"]
    again = {k.split("/")[1] for k in res["metrics"] if k.startswith("sparse/")
             and k.endswith("/train_loss")}  # fmt: skip
    assert len(again) == 2 and "point2ssm" in again
    ids = {c["id"] for c in res["claims"]}
    assert ids == {"cd", "p2s", "compactness", "generalization", "specificity", "robust-sparse",
                   "robust-train-size"}  # fmt: skip
    premises = {p["id"] for p in res["premises"]}  # one per training: condition and method
    assert {
        "converged/clean/point2ssm",
        "converged/sparse/point2ssm",
        "converged/train4/point2ssm",
    } <= premises
    assert "train4/point2ssm/cd" in res["metrics"] and "points16/dg-ae/cd" in res["metrics"]
