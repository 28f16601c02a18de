"""The paper preset (the official spleen meshes' layout: ``<data-dir>/point2ssm/spleen/
{train,val,test}_meshes/*.vtk``; one model per method and input condition, as in the official
code) end to end on a miniature of that data set written in the real on-disk format: legacy
VTK 4.2 ASCII POLYDATA as the official ``data/spleen/*_meshes/spleen_*.vtk`` files are
(jadie1/Point2SSM d87c452: header ``# vtk DataFile Version 4.2 / vtk output / ASCII /
DATASET POLYDATA``, ``POINTS n float`` nine values a line, ``POLYGONS t 4t`` one ``3 a b c``
a line, then ``POINT_DATA n`` with ``NORMALS Normals float``).

Reduced (sizes only): 5 / 1 / 3 train / val / test meshes of 114 vertices (an ellipsoid with
random axes) instead of the spleen's 40 meshes of ~10 000; 2 training steps of 15 000;
N = 64 input and M = 32 output points (paper 1024 / 1024); a reduced width: DGCNN k = 10
(27), block width 2 (24), latent 32 (128), attention feed-forward 64 (1024); 20 specificity
samples (200). Everything else is the paper preset's: its seed, the four input conditions,
a model per method and condition, every method, batch 8, lr 1e-4.
"""

import numpy as np
import pytest
from iclr24_point2ssm.data import read_vtk_polydata
from iclr24_point2ssm.experiment import app

from iclr24_common.testing import run_paper_preset


def write_vtk_42(path, vertices, triangles) -> None:
    """A mesh as VTK 4.2 (the official spleen files' writer) ASCII POLYDATA with normals."""
    v = np.asarray(vertices, dtype=np.float32)
    normals = v / np.linalg.norm(v, axis=1, keepdims=True)  # a star-shaped surface's normals

    def rows(values, per_line=9):
        flat = [f"{x:g}" for x in np.ravel(values)]
        return "".join(
            " ".join(flat[i : i + per_line]) + " \n" for i in range(0, len(flat), per_line)
        )

    text = ("# vtk DataFile Version 4.2\nvtk output\nASCII\nDATASET POLYDATA\n"
            f"POINTS {len(v)} float\n{rows(v)}\n"
            f"POLYGONS {len(triangles)} {4 * len(triangles)}\n"
            + "".join(f"3 {a} {b} {c} \n" for a, b, c in triangles)
            + f"\nPOINT_DATA {len(v)}\nNORMALS Normals float\n{rows(normals)}\n")  # fmt: skip
    path.write_text(text)


def write_spleen_miniature(root, sizes=(("train", 5), ("val", 1), ("test", 3)), seed=0):
    """``root/{train,val,test}_meshes/spleen_<i>.vtk``: ellipsoids with random axes (in mm, as
    the official meshes, whose coordinates reach ~40)."""
    o3d = pytest.importorskip("open3d")  # the package's own dependency
    sphere = o3d.geometry.TriangleMesh.create_sphere(radius=1.0, resolution=8)
    v0, tris = np.asarray(sphere.vertices), np.asarray(sphere.triangles)
    rng, i = np.random.default_rng(seed), 0
    for split, n in sizes:
        (root / f"{split}_meshes").mkdir(parents=True)
        for _ in range(n):
            i += 1
            write_vtk_42(root / f"{split}_meshes/spleen_{i}.vtk", v0 * rng.uniform(10, 40, 3), tris)
    return v0, tris


def test_miniature_meshes_read_back(tmp_path):
    v0, tris = write_spleen_miniature(tmp_path / "spleen")
    v, t = read_vtk_polydata(tmp_path / "spleen" / "train_meshes" / "spleen_1.vtk")
    assert v.shape == v0.shape and np.array_equal(t, tris)
    assert (
        (tmp_path / "spleen/train_meshes/spleen_1.vtk")
        .read_text()
        .startswith(
            "# vtk DataFile Version 4.2\nvtk output\nASCII\nDATASET POLYDATA\nPOINTS 114 float\n"
        )
    )


SIZES = {"steps": 2, "num_output": 32, "num_input": 64, "k": 10, "bb_size": 2, "latent": 32,
         "d_ff": 64, "spec_samples": 20}  # fmt: skip


def test_paper_preset_runs_on_miniature_spleen_meshes(tmp_path):
    data = tmp_path / "data"
    write_spleen_miniature(data / "point2ssm" / "spleen")
    res = run_paper_preset(app, data, tmp_path / "run", sets=SIZES)
    cfg = res["config"]
    assert (cfg["data"], cfg["dataset"], cfg["train_on_perturbed"]) == ("meshes", "spleen", True)
    m = res["metrics"]
    for method in ("point2ssm", "dg-ae", "pn-ae", "cpae"):
        assert f"clean/{method}/train_loss" in m and f"clean/{method}/p2s" in m
    for cond in ("noisy", "partial", "sparse"):  # Point2SSM and the strongest baseline again
        again = {k.split("/")[1] for k in m if k.startswith(f"{cond}/")
                 and k.endswith("/train_loss")}  # fmt: skip
        assert len(again) == 2 and "point2ssm" in again and f"{cond}/no-corr/p2s" in m
    assert "clean/point2ssm/mode1_r2" not in m  # real meshes have no known modes
    claims = {c["id"]: c for c in res["claims"]}
    assert {"cd", "p2s", "compactness", "generalization", "specificity"} <= set(claims)
    # the generated population's true compactness is no statement about real meshes
    assert "true correspondences" not in claims["compactness"]["measured"]
