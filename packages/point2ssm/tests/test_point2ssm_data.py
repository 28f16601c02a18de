"""Input perturbations and the mesh-folder loader on small files written here."""

import struct

import numpy as np
import open3d as o3d
import pytest
import torch
from iclr24_point2ssm import (
    Perturbation,
    draw_inputs,
    load_mesh_split,
    read_mesh,
    read_vtk_polydata,
)

from iclr24_common import MissingDataError


def test_draw_inputs_subsets_partial_and_noise():
    g = torch.Generator().manual_seed(0)
    pool = torch.rand(3, 200, 3)
    x = draw_inputs(pool, Perturbation(num_points=50), g)
    assert x.shape == (3, 50, 3)
    for b in range(3):  # clean input = distinct points of the surface sample
        hit = (x[b][:, None] == pool[b][None]).all(-1)
        assert hit.any(1).all() and len(set(hit.float().argmax(1).tolist())) == 50
    # partial input on a line: the removed 40% is one interval around the seed point
    line = torch.zeros(2, 500, 3)
    line[..., 0] = torch.linspace(0, 1, 500)
    xp = draw_inputs(line, Perturbation(num_points=300, missing=0.4), g)
    for b in range(2):
        xs = torch.sort(torch.cat([xp[b, :, 0], torch.tensor([0.0, 1.0])])).values
        assert (xs[1:] - xs[:-1]).max() > 0.35  # the hole
    xn = draw_inputs(torch.zeros(3, 200, 3), Perturbation(num_points=200, noise=0.1), g)
    assert xn.mean().abs() < 0.02 and xn.std().item() == pytest.approx(0.1, rel=0.1)
    sparse = draw_inputs(pool, Perturbation(num_points=400, missing=0.5), g)  # with replacement
    assert sparse.shape == (3, 400, 3)


def write_ascii_vtk(path, v, t, new_format=False):
    lines = [
        "# vtk DataFile Version 5.1" if new_format else "# vtk DataFile Version 4.2",
        "test",
        "ASCII",
        "DATASET POLYDATA",
        f"POINTS {len(v)} float",
    ]
    lines += [" ".join(map(str, p)) for p in v]
    if new_format:
        lines += [
            f"POLYGONS {len(t) + 1} {3 * len(t)}",
            "OFFSETS vtktypeint64",
            " ".join(str(3 * i) for i in range(len(t) + 1)),
            "CONNECTIVITY vtktypeint64",
            " ".join(map(str, t.ravel())),
        ]
    else:
        lines += [f"POLYGONS {len(t)} {4 * len(t)}"] + [f"3 {a} {b} {c}" for a, b, c in t]
    lines += [f"POINT_DATA {len(v)}", "SCALARS s float 1", "LOOKUP_TABLE default"]
    lines += ["0"] * len(v)
    path.write_text("\n".join(lines) + "\n")


def write_binary_vtk(path, v, t):
    head = f"# vtk DataFile Version 3.0\nb\nBINARY\nDATASET POLYDATA\nPOINTS {len(v)} float\n"
    body = struct.pack(f">{v.size}f", *v.ravel())
    cells = np.concatenate([np.full((len(t), 1), 3), t], 1).ravel()
    poly = f"\nPOLYGONS {len(t)} {cells.size}\n".encode() + struct.pack(f">{cells.size}i", *cells)
    path.write_bytes(head.encode() + body + poly + b"\n")


def test_vtk_reader_all_variants(tmp_path):
    mesh = o3d.geometry.TriangleMesh.create_tetrahedron()
    v, t = np.asarray(mesh.vertices), np.asarray(mesh.triangles)
    for name, writer in [
        ("old.vtk", lambda p: write_ascii_vtk(p, v, t)),
        ("new.vtk", lambda p: write_ascii_vtk(p, v, t, new_format=True)),
        ("bin.vtk", lambda p: write_binary_vtk(p, v, t)),
    ]:
        writer(tmp_path / name)
        pv, pt = read_vtk_polydata(tmp_path / name)
        np.testing.assert_allclose(pv, v, atol=1e-6)
        np.testing.assert_array_equal(pt, t)
    quad = tmp_path / "quad.vtk"
    quad.write_text(
        "# vtk DataFile Version 4.2\nq\nASCII\nDATASET POLYDATA\nPOINTS 4 float\n"
        "0 0 0 1 0 0 1 1 0 0 1 0\nPOLYGONS 1 5\n4 0 1 2 3\n"
    )
    np.testing.assert_array_equal(read_vtk_polydata(quad)[1], [[0, 1, 2], [0, 2, 3]])
    (tmp_path / "bad.vtk").write_text("# vtk\nx\nASCII\nDATASET STRUCTURED_POINTS\n\n")
    with pytest.raises(ValueError):
        read_vtk_polydata(tmp_path / "bad.vtk")


def test_mesh_split_loader(tmp_path):
    root = tmp_path / "spleen"
    for split, n in (("train", 3), ("val", 1), ("test", 2)):
        (root / f"{split}_meshes").mkdir(parents=True)
        for i in range(n):
            m = o3d.geometry.TriangleMesh.create_sphere(radius=2.0 + i, resolution=5)
            v, t = np.asarray(m.vertices), np.asarray(m.triangles)
            if i % 2:
                o3d.io.write_triangle_mesh(str(root / f"{split}_meshes/s{i}.ply"), m)
            else:
                write_ascii_vtk(root / f"{split}_meshes/s{i}.vtk", v, t)
    split = load_mesh_split(root, pool_points=100, gt_points=30)
    assert [len(split[s]) for s in ("train", "val", "test")] == [3, 1, 2]
    name, v, t, pool, gt = split["train"][2]
    assert name == "s2" and pool.shape == (100, 3) and gt.shape == (30, 3)
    assert max(np.abs(r[1]).max() for r in split["train"]) == pytest.approx(1.0, rel=1e-5)
    r = np.linalg.norm(pool, axis=1)  # on the coarse r=4 sphere, divided by 4
    assert r.max() < 1 + 1e-6 and r.min() > 0.85
    v0, _ = read_mesh(root / "train_meshes/s1.ply")
    assert np.abs(np.linalg.norm(v0, axis=1) - 3).max() < 1e-5
    with pytest.raises(MissingDataError, match="spleen"):
        load_mesh_split(tmp_path / "nothing" / "spleen")
