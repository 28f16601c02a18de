"""Geometry metrics on exact geometries."""

import numpy as np
import pytest
from iclr24_scl_relu import (
    class_means,
    geometry,
    gram_distance,
    mean_angle,
    nc1,
    orthogonal_frame,
    simplex_etf,
    zero_row_fraction,
)


def etf_vectors(k):
    """k unit vectors in R^k with pairwise cosine -1/(k-1)."""
    M = np.eye(k) - 1.0 / k
    return M / np.linalg.norm(M, axis=1, keepdims=True)


@pytest.mark.parametrize("k", [4, 6, 10])
def test_exact_geometries_are_at_distance_zero(k):
    labels = np.repeat(np.arange(k), 3)
    of = geometry(np.eye(k)[labels], labels, majority=range(k // 2))
    assert of["dist_of"] == pytest.approx(0, abs=1e-12) and of["nc1"] == pytest.approx(0, abs=1e-12)
    assert of["dist_etf_centred"] == pytest.approx(0, abs=1e-12)  # a centred OF is an ETF
    assert of["angle_maj_maj"] == pytest.approx(90) and of["angle_maj_min"] == pytest.approx(90)
    etf = geometry(etf_vectors(k)[labels], labels, majority=range(k // 2))
    assert etf["dist_etf"] == pytest.approx(0, abs=1e-12)
    assert etf["dist_etf_centred"] == pytest.approx(0, abs=1e-12)
    between = np.sqrt(2 - 2 * np.sqrt((k - 1) / k))  # the OF and the ETF are this far apart
    assert etf["dist_of"] == pytest.approx(between) and of["dist_etf"] == pytest.approx(between)
    assert etf["angle_maj_maj"] == pytest.approx(np.degrees(np.arccos(-1 / (k - 1))))


def test_gram_distance_ignores_scale_and_sees_permutation_invariance():
    G = simplex_etf(5)
    assert gram_distance(3.0 * G, G) == pytest.approx(0, abs=1e-12)
    assert gram_distance(orthogonal_frame(5) * 2, np.eye(5)) == pytest.approx(0, abs=1e-12)
    assert gram_distance(np.zeros((5, 5)), np.eye(5)) == pytest.approx(np.sqrt(2))


def test_nc1_grows_with_within_class_spread():
    rng = np.random.default_rng(0)
    labels = np.repeat(np.arange(3), 50)
    base = np.eye(3)[labels]
    small = nc1(base + 0.01 * rng.standard_normal(base.shape), labels)
    large = nc1(base + 0.1 * rng.standard_normal(base.shape), labels)
    assert 0 < small < large


def test_class_means_angles_and_zero_rows():
    h = np.array([[1.0, 0], [1.0, 0], [0, 1.0], [0, 0]])
    labels = np.array([0, 0, 1, 1])
    np.testing.assert_allclose(class_means(h, labels), [[1, 0], [0, 0.5]])
    assert mean_angle(class_means(h, labels), [0], [1]) == pytest.approx(90)
    assert zero_row_fraction(h) == 0.25
