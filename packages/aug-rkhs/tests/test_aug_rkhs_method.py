"""The operator, kernel and spectrum of an augmentation against their definitions, the closed
forms against brute-force enumeration, and the bounds on random targets (no public code
exists for this paper: every closed form is checked against enumeration on small spaces)."""

import itertools
import math

import numpy as np
import pytest
from iclr24_aug_rkhs import (
    FiniteAugmentation,
    MarkovChain,
    approximation_bound,
    constrained_probe,
    enumerate_sequences,
    mask_augmentation,
    mask_eigenvalues_product,
    mask_kappa_sq_product,
    mask_log_kernel_diagonal_markov,
    mask_log_kernel_diagonal_mc,
    mask_trace,
    nystrom_encoder,
    probe_error_bound,
    random_target,
    replacement_augmentation,
    replacement_kappa_sq_uniform,
    topic_mixture,
    trace_gap_approximation_bound,
)

V, L = 3, 4


@pytest.fixture(scope="module")
def space():
    return topic_mixture(V, L, stay=0.6)


def brute_force_mask(p_x, alpha):
    """p(a|x) of [MASK] replacement written out view by view, as a dict-of-dicts."""
    seqs = enumerate_sequences(V, L)
    cond = {}
    for i, x in enumerate(seqs):
        for masked in itertools.product([0, 1], repeat=L):
            a = tuple(V if m else t for m, t in zip(masked, x))
            cond.setdefault(i, {})[a] = alpha ** sum(masked) * (1 - alpha) ** (L - sum(masked))
    views = sorted({a for row in cond.values() for a in row})
    col = {a: j for j, a in enumerate(views)}
    dense = np.zeros((len(seqs), len(views)))
    for i, row in cond.items():
        for a, p in row.items():
            dense[i, col[a]] = p
    p_a = p_x @ dense
    return dense, (dense / p_a) @ dense.T  # conditional, kernel


@pytest.mark.parametrize("alpha", [0.15, 0.5, 0.85])
def test_mask_kernel_matches_brute_force(space, alpha):
    aug = mask_augmentation(space.p_x, V, L, alpha)
    dense, kernel = brute_force_mask(space.p_x, alpha)
    np.testing.assert_allclose(aug.kernel(), kernel, rtol=1e-12)
    assert aug.n_augmentations == (V + 1) ** L


@pytest.mark.parametrize("make", [mask_augmentation, replacement_augmentation])
def test_top_eigenpair_is_one_and_constant(space, make):
    aug = make(space.p_x, V, L, 0.3)
    lam, psi = aug.spectrum.eigenvalues, aug.spectrum.eigenfunctions
    assert lam[0] == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(psi[:, 0], 1.0, atol=1e-10)
    assert np.all(lam[1:] <= 1 + 1e-12) and np.all(lam >= 0)
    gram = (psi.T * space.p_x) @ psi
    np.testing.assert_allclose(gram, np.eye(len(lam)), atol=1e-9)  # orthonormal in L2(P_X)


@pytest.mark.parametrize("make", [mask_augmentation, replacement_augmentation])
def test_kernel_is_symmetric_psd_and_gamma_star_gamma_is_its_operator(space, make):
    aug = make(space.p_x, V, L, 0.4)
    k = aug.kernel()
    np.testing.assert_allclose(k, k.T, rtol=1e-13)
    assert np.linalg.eigvalsh(k).min() >= -1e-10 * np.abs(k).max()
    f = np.random.default_rng(0).standard_normal(aug.n_inputs)
    np.testing.assert_allclose(
        aug.gamma_adjoint(aug.gamma(f)), aug.integral_operator(f), atol=1e-11
    )
    lam, psi = aug.spectrum.eigenvalues, aug.spectrum.eigenfunctions
    np.testing.assert_allclose(aug.integral_operator(psi[:, 3]), lam[3] * psi[:, 3], atol=1e-10)


def test_gamma_is_the_adjoint_of_gamma_star(space):
    aug = mask_augmentation(space.p_x, V, L, 0.3)
    rng = np.random.default_rng(1)
    f, g = rng.standard_normal(aug.n_inputs), rng.standard_normal(aug.n_augmentations)
    lhs = aug.p_a @ (aug.gamma(f) * g)  # <Gamma f, g>_{P_A}
    assert lhs == pytest.approx(space.p_x @ (f * aug.gamma_adjoint(g)), rel=1e-12)


@pytest.mark.parametrize("alpha", [0.1, 0.45, 0.9])
def test_mask_closed_forms_match_numbers(space, alpha):
    # the trace holds for any full-support P_X, here a Markov mixture
    aug = mask_augmentation(space.p_x, V, L, alpha)
    assert aug.trace() == pytest.approx(mask_trace(V, L, alpha), rel=1e-10)
    assert aug.spectrum.eigenvalues.sum() == pytest.approx(mask_trace(V, L, alpha), rel=1e-9)
    # a product P_X with unequal marginals: kappa^2 and the whole spectrum
    marg = np.array([[0.5, 0.3, 0.2], [0.1, 0.6, 0.3], [0.2, 0.2, 0.6], [0.7, 0.2, 0.1]])
    seqs = enumerate_sequences(V, L)
    p_prod = np.prod(marg[np.arange(L), seqs], axis=1)
    prod = mask_augmentation(p_prod, V, L, alpha)
    assert prod.kappa() ** 2 == pytest.approx(mask_kappa_sq_product(marg, alpha), rel=1e-10)
    np.testing.assert_allclose(
        prod.spectrum.eigenvalues, mask_eigenvalues_product(V, L, alpha), atol=1e-10
    )


def test_replacement_closed_form_and_ordering():
    uniform = np.full(V**L, V**-L)
    aug = replacement_augmentation(uniform, V, L, 0.3)
    assert aug.kappa() ** 2 == pytest.approx(replacement_kappa_sq_uniform(V, L, 0.3), rel=1e-10)
    # kappa falls with the rate, for both augmentations
    kappas = [mask_augmentation(uniform, V, L, a).kappa() for a in (0.1, 0.3, 0.6, 0.9)]
    assert np.all(np.diff(kappas) < 0)


def test_markov_sum_over_masks_matches_enumeration():
    chain = MarkovChain(np.array([0.2, 0.3, 0.5]), MarkovChain.sticky(3, 1, 0.5).transition)
    seqs = enumerate_sequences(3, 5)
    aug = mask_augmentation(np.exp(chain.log_prob(seqs)), 3, 5, 0.35)
    exact = np.exp(mask_log_kernel_diagonal_markov(chain, seqs, 0.35))
    np.testing.assert_allclose(exact, aug.kernel_diagonal(), rtol=1e-11)


def test_monte_carlo_kernel_diagonal_is_unbiased():
    chain = MarkovChain.sticky(3, 0, 0.4)
    seqs = enumerate_sequences(3, 5)
    p_x = np.exp(chain.log_prob(seqs))

    def log_marginal(batch, keep):  # P(X_keep = x_keep) by enumeration
        out = [np.log(p_x[np.all(seqs[:, k] == x[k], axis=1)].sum()) for x, k in zip(batch, keep)]
        return np.array(out)

    rng = np.random.default_rng(0)
    rows = rng.choice(len(seqs), 30, replace=False)
    mc = np.exp(mask_log_kernel_diagonal_mc(seqs[rows], log_marginal, 0.4, 3000, rng))
    exact = np.exp(mask_log_kernel_diagonal_markov(chain, seqs[rows], 0.4))
    assert np.mean(mc / exact) == pytest.approx(1.0, abs=0.03)


def test_isometry_epsilon_and_norm(space):
    aug = mask_augmentation(space.p_x, V, L, 0.3)
    psi, lam = aug.spectrum.eigenfunctions, aug.spectrum.eigenvalues
    f = 0.6 * psi[:, 1] + 0.8 * psi[:, 7]
    assert aug.rkhs_norm_sq(f) == pytest.approx(0.36 / lam[1] + 0.64 / lam[7], rel=1e-9)
    assert aug.isometry_epsilon(f) == pytest.approx(
        1 - 1 / (0.36 / lam[1] + 0.64 / lam[7]), rel=1e-9
    )
    assert aug.isometry_epsilon(psi[:, 0]) == pytest.approx(0.0, abs=1e-10)


@pytest.mark.parametrize("degree", [1, 2, 3])
@pytest.mark.parametrize("alpha", [0.2, 0.6])
def test_approximation_bound_holds_on_random_targets(space, degree, alpha):
    aug = mask_augmentation(space.p_x, V, L, alpha)
    lam = aug.spectrum.eigenvalues
    for seed in range(5):
        f = random_target(space, degree, np.random.default_rng(seed))
        for d in (1, 4, 10, 30):
            bound = approximation_bound(aug.isometry_epsilon(f), aug.rkhs_norm_sq(f), lam[d + 1])
            assert aug.approximation_error(f, d) <= bound * (1 + 1e-10)


def test_probe_error_bound_holds_on_random_targets(space):
    alpha, d, n, noise = 0.5, 8, 150, 0.1
    aug = mask_augmentation(space.p_x, V, L, alpha)
    lam, psi = aug.spectrum.eigenvalues, aug.spectrum.eigenfunctions
    for seed in range(10):
        rng = np.random.default_rng(seed)
        f = random_target(space, 2, rng)
        norm_sq = aug.rkhs_norm_sq(f)
        idx = rng.choice(aug.n_inputs, n, p=space.p_x)
        y = f[idx] + noise * math.sqrt(3) * rng.uniform(-1, 1, n)
        gram = np.diag(1 / lam[: d + 1])
        w = constrained_probe(psi[idx, : d + 1], y, gram, math.sqrt(norm_sq))
        assert w @ gram @ w <= norm_sq * (1 + 1e-6)  # the constraint holds
        err = space.p_x @ (psi[:, : d + 1] @ w - f) ** 2
        bound = probe_error_bound(
            epsilon=aug.isometry_epsilon(f), rkhs_norm_sq=norm_sq, lambda_next=lam[d + 1],
            kappa=aug.kappa(), y_max=np.abs(f).max() + noise * math.sqrt(3), n=n, delta=0.05,
        )  # fmt: skip
        assert err <= bound["total"]
        assert aug.approximation_error(f, d) <= bound["approximation"] * (1 + 1e-10)


def test_trace_gap_is_zero_for_the_top_eigenspace_and_positive_otherwise(space):
    aug = mask_augmentation(space.p_x, V, L, 0.4)
    lam, psi = aug.spectrum.eigenvalues, aug.spectrum.eigenfunctions
    for d in (1, 3, 8):
        assert aug.ratio_trace(psi[:, 1 : d + 1]) == pytest.approx(lam[: d + 1].sum(), rel=1e-9)
        assert aug.trace_gap(psi[:, 1 : d + 1]) == pytest.approx(0.0, abs=1e-9)
        tilted = psi[:, 1 : d + 1] + 0.5 * psi[:, d + 1 : 2 * d + 1]
        assert aug.trace_gap(tilted) > 1e-3
    # a change of basis inside the span leaves the ratio trace unchanged
    mix = np.random.default_rng(0).standard_normal((3, 3))
    assert aug.ratio_trace(psi[:, 1:4] @ mix) == pytest.approx(lam[:4].sum(), rel=1e-9)


@pytest.mark.parametrize("alpha", [0.15, 0.5, 0.85])
def test_trace_gap_bound_holds_for_estimated_and_perturbed_encoders(space, alpha):
    """The H-projection of f* on the encoder's span (inside the radius-||f*||_H ball) is
    within the trace-gap bound, and it reduces to the top-d bound at tau = 0."""
    aug = mask_augmentation(space.p_x, V, L, alpha)
    lam, psi = aug.spectrum.eigenvalues, aug.spectrum.eigenfunctions
    for seed in range(6):
        rng = np.random.default_rng(seed)
        f = random_target(space, 1 + seed % 2, rng)
        d = 1 + seed % 3
        if seed % 2:
            feats = nystrom_encoder(aug, rng.choice(aug.n_inputs, 60, p=space.p_x), d)[0]
        else:
            feats = psi[:, 1 : d + 1] + 0.3 * rng.standard_normal(d) * psi[:, d + 1 : 2 * d + 1]
        funcs = np.column_stack([np.ones(aug.n_inputs), feats])
        g_l2, g_h = aug.grams(feats)
        w = np.linalg.solve(
            g_h, (psi.T @ (space.p_x[:, None] * funcs)).T @ (aug.coefficients(f) / lam)
        )
        eps, norm_sq = aug.isometry_epsilon(f), aug.rkhs_norm_sq(f)
        assert w @ g_h @ w <= norm_sq * (1 + 1e-9)  # inside the probe's constraint set
        err = space.p_x @ (funcs @ w - f) ** 2
        tau = aug.trace_gap(feats)
        assert tau >= -1e-10
        assert err <= trace_gap_approximation_bound(eps, norm_sq, lam[d + 1], tau) * (1 + 1e-9)
        assert trace_gap_approximation_bound(eps, norm_sq, lam[d + 1], 0.0) == pytest.approx(
            approximation_bound(eps, norm_sq, lam[d + 1])
        )


def test_constrained_probe_is_least_squares_when_the_constraint_is_loose():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((50, 3))
    y = x @ np.array([1.0, -2.0, 0.5])
    w = constrained_probe(x, y, np.eye(3), radius=100.0)
    np.testing.assert_allclose(w, [1.0, -2.0, 0.5], atol=1e-10)
    tight = constrained_probe(x, y, np.eye(3), radius=1.0)
    assert tight @ tight == pytest.approx(1.0, rel=1e-6)


def test_nystrom_encoder_merges_repeated_samples_exactly(space):
    """The merged (distinct inputs, frequencies) eigenproblem equals the m x m one."""
    aug = mask_augmentation(space.p_x, V, L, 0.5)
    samples = np.random.default_rng(0).choice(aug.n_inputs, 120, p=space.p_x)
    m, rows = len(samples), aug.conditional[samples]
    p_hat = np.asarray(rows.mean(0)).ravel()
    seen = p_hat > 0
    k_hat = (aug.conditional[:, seen] / p_hat[seen]) @ rows[:, seen].T.toarray()  # (n_x, m)
    mu, vec = np.linalg.eigh(k_hat[samples] / m)
    top = np.argsort(mu)[::-1][1:4]
    reference = k_hat @ vec[:, top] / (np.sqrt(m) * mu[top])
    psi_hat, mu_hat = nystrom_encoder(aug, samples, 3)
    np.testing.assert_allclose(mu_hat, mu[top], rtol=1e-10)
    np.testing.assert_allclose(np.abs(psi_hat), np.abs(reference), atol=1e-10)


def test_nystrom_encoder_recovers_the_exact_eigenspace_with_many_samples(space):
    aug = mask_augmentation(space.p_x, V, L, 0.5)
    lam, psi = aug.spectrum.eigenvalues, aug.spectrum.eigenfunctions
    assert lam[1] - lam[2] > 0.1  # psi_1 is isolated (lambda_2.. are degenerate here)
    # many samples: the empirical measure and p_hat(a) approach P_X and p(a)
    samples = np.random.default_rng(0).choice(aug.n_inputs, 20000, p=space.p_x)
    psi_hat, mu = nystrom_encoder(aug, samples, 1)
    assert mu[0] == pytest.approx(lam[1], abs=0.01)
    cos = space.p_x @ (psi_hat[:, 0] * psi[:, 1]) / np.sqrt(space.p_x @ psi_hat[:, 0] ** 2)
    assert abs(cos) > 0.99


def test_bad_inputs_are_rejected(space):
    with pytest.raises(ValueError, match="alpha"):
        mask_augmentation(space.p_x, V, L, 1.0)
    with pytest.raises(ValueError, match="distribution"):
        FiniteAugmentation(np.ones((2, 2)), [0.5, 0.5])
    with pytest.raises(ValueError, match="strictly positive"):
        FiniteAugmentation(np.eye(2), [1.0, 0.0])
