"""Shape-model metrics against references, and on exact correspondences with known modes."""

import numpy as np
import open3d as o3d
import pytest
from iclr24_point2ssm import (
    PopulationConfig,
    ShapeModel,
    compactness,
    generalization,
    make_population,
    mode_r2,
    mode_recovery,
    pca,
    point_to_surface,
    specificity,
)

CFG = PopulationConfig(n_train=20, n_test=20, resolution=8, pool_points=256, gt_points=64)


@pytest.fixture(scope="module")
def pop():
    return make_population(CFG, seed=3)


def test_exact_correspondences_recover_the_known_modes(pop):
    test = pop.subset(range(20, 40))
    model = ShapeModel().fit(test.vertices)
    assert model.modes_needed(0.9999) == 4  # four generating modes, no more
    np.testing.assert_allclose(model.compactness(4)[:4], np.cumsum(CFG.variance_shares), atol=0.02)
    for k in range(4):  # each PCA mode is one known mode
        assert mode_r2(test.vertices, test.coeffs[:, k], k) if k == 0 else True
        sc = model.scores(test.vertices)[:, k]
        assert np.corrcoef(sc, test.coeffs[:, k])[0, 1] ** 2 > 0.95
    assert generalization(test.vertices, 6)[3] < 1e-8  # 4 modes reconstruct unseen shapes
    # random point order destroys correspondence: far less compact
    rng = np.random.default_rng(0)
    shuffled = np.stack([v[rng.permutation(len(v))] for v in test.vertices])
    assert compactness(shuffled, 3)[2] < 0.5 * compactness(test.vertices, 3)[2]
    np.testing.assert_allclose(mode_recovery(test.vertices, test.coeffs), 1, atol=1e-6)
    assert mode_recovery(shuffled, test.coeffs).mean() < 0.5


def test_population_is_linear_in_its_coefficients(pop):
    from iclr24_point2ssm.data import mode_fields

    mesh, fields = mode_fields(CFG)
    recon = np.asarray(mesh.vertices)[None] + np.einsum("sk,kvd->svd", pop.coeffs, fields)
    np.testing.assert_allclose(pop.vertices, recon / pop.scale, atol=1e-12)
    assert np.abs(pop.vertices[:20]).max() == pytest.approx(1.0)  # scaled by the train max


def test_pca_matches_svd():
    x = np.random.default_rng(1).standard_normal((9, 30))
    xc = x - x.mean(0)
    var, comp = pca(xc)
    sv = np.linalg.svd(xc, compute_uv=False)
    np.testing.assert_allclose(var[:9], sv**2 / 8, atol=1e-10)
    np.testing.assert_allclose(comp[:8] @ comp[:8].T, np.eye(8), atol=1e-8)


def test_generalization_and_specificity_match_loop_references():
    y = np.random.default_rng(2).standard_normal((7, 5, 3))
    x = y.reshape(7, -1)
    ref = []
    for m in range(1, 5):
        errs = []
        for i in range(7):
            tr = np.delete(x, i, 0)
            mu = tr.mean(0)
            _, _, vt = np.linalg.svd(tr - mu, full_matrices=False)
            rec = mu + (x[i] - mu) @ vt[:m].T @ vt[:m]
            errs.append(np.linalg.norm((rec - x[i]).reshape(-1, 3), axis=1).mean())
        ref.append(np.mean(errs))
    np.testing.assert_allclose(generalization(y, 4), ref, rtol=1e-8)

    model = ShapeModel().fit(y)
    rng = np.random.default_rng(5)
    z = rng.standard_normal((20, len(model.variances))) * np.sqrt(model.variances)
    spec = []
    for m in range(1, 4):
        s = model.mean + z[:, :m] @ model.components[:m]
        d = [[np.linalg.norm((a - b).reshape(-1, 3), axis=1).mean() for b in x] for a in s]
        spec.append(np.min(d, 1).mean())
    np.testing.assert_allclose(specificity(y, 3, 20, rng=5), spec, rtol=1e-8)


def test_point_to_surface_on_a_box():
    box = o3d.geometry.TriangleMesh.create_box(1.0, 1.0, 1.0)
    v, t = np.asarray(box.vertices), np.asarray(box.triangles)
    pts = np.array([[[0.5, 0.5, 1.3], [0.5, -0.2, 0.5], [1.0, 0.5, 0.5], [0.2, 0.3, 0.0]]])
    assert point_to_surface(pts, v[None], t)[0] == pytest.approx((0.3 + 0.2 + 0 + 0) / 4, abs=1e-6)
    per_mesh = point_to_surface(np.concatenate([pts, pts + 10]), [v, v + 10], [t, t])
    np.testing.assert_allclose(per_mesh, 0.125, atol=1e-5)


def test_shape_model_sampling_export_and_figure(tmp_path, pop):
    model = ShapeModel().fit(pop.vertices[:20])
    s = model.sample(5, n_modes=2, rng=0)
    assert s.shape == (5, pop.vertices.shape[1], 3)
    # samples restricted to 2 modes lie in the mean + span of those modes
    resid = (s.reshape(5, -1) - model.mean) @ model.components[2:6].T
    assert np.abs(resid).max() < 1e-10
    modes = model.mode_shapes(0, (-2, 0, 2))
    np.testing.assert_allclose(modes[1], model.mean_shape)
    paths = model.export_modes(tmp_path, n_modes=2)
    assert len(paths) == 6
    back = o3d.io.read_point_cloud(str(paths[0]))
    np.testing.assert_allclose(np.asarray(back.points), modes[0], atol=1e-5)
    fig = model.figure(2)
    assert len(fig.axes) == 6
    with pytest.raises(ValueError):
        ShapeModel().fit(np.zeros((1, 4, 3)))
