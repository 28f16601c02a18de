"""The a-priori trace-gap bound in m (issue 38): the kernel-PCA encoder of the exact kernel,
its trace gap, the bound, the claim on its decay in m and its premise (the bound informative
at >= 3 sizes m); and the approximation bound written with the L2 norm of f* against the
RKHS-norm form the package uses."""

from types import SimpleNamespace

import numpy as np
import pytest
from iclr24_aug_rkhs import (
    approximation_bound,
    approximation_bound_l2,
    kernel_pca_encoder,
    kernel_pca_encoder_counts,
    mask_augmentation,
    random_target,
    topic_mixture,
    trace_gap_sample_bound,
)
from iclr24_aug_rkhs.claims import _trace_gap_rate, _trace_gap_sample_bound, make_premises

from iclr24_common import Metrics, apply_premises

V, L = 3, 4


@pytest.fixture(scope="module")
def space():
    return topic_mixture(V, L, stay=0.6)


def _empirical_ratio_trace(aug, funcs, samples):
    """Tr(G_H^-1 G_m) of span(funcs), G_m = mean_j f(x_j) f(x_j)^T = <f, T_m g>_H."""
    lam, psi = aug.spectrum.eigenvalues, aug.spectrum.eigenfunctions
    keep = lam > 1e-12
    coef = psi.T @ (aug.p_x[:, None] * funcs)
    g_h = coef[keep].T @ (coef[keep] / lam[keep, None])
    rows = funcs[samples]
    return float(np.trace(np.linalg.solve(g_h, rows.T @ rows / len(samples))))


@pytest.mark.parametrize("d", [1, 2])
def test_kernel_pca_encoder_maximises_the_empirical_ratio_trace(space, d):
    """Its tau is the trace gap of span(1, phi), and no other span containing the constant
    has a larger empirical ratio trace (the step the bound's proof rests on)."""
    aug = mask_augmentation(space.p_x, V, L, 0.5)
    rng = np.random.default_rng(0)
    samples = rng.choice(aug.n_inputs, 80, p=space.p_x)
    phi, tau = kernel_pca_encoder(aug, samples, d)
    assert tau == pytest.approx(aug.trace_gap(phi), abs=1e-10) and tau > 1e-4
    ones = np.ones((aug.n_inputs, 1))
    best = _empirical_ratio_trace(aug, np.hstack([ones, phi]), samples)
    psi = aug.spectrum.eigenfunctions
    assert best >= _empirical_ratio_trace(aug, np.hstack([ones, psi[:, 1 : d + 1]]), samples)
    for _ in range(20):
        other = psi[:, 1:12] @ rng.standard_normal((11, d))
        assert best >= _empirical_ratio_trace(aug, np.hstack([ones, other]), samples) - 1e-12
    counts = np.bincount(samples, minlength=aug.n_inputs)
    assert kernel_pca_encoder_counts(aug, counts, d)[1] == pytest.approx(tau, abs=1e-12)


def test_trace_gap_vanishes_with_many_samples_and_stays_under_its_bound(space):
    aug = mask_augmentation(space.p_x, V, L, 0.8)
    rng = np.random.default_rng(1)
    kappa_sq, taus = aug.kappa() ** 2, []
    for m in (100, 10_000, 1_000_000):
        counts = rng.multinomial(m, space.p_x)
        taus.append(kernel_pca_encoder_counts(aug, counts, 1)[1])
        assert taus[-1] <= trace_gap_sample_bound(kappa_sq, m, 1, 0.01)
    assert taus[2] < 1e-3 * taus[0]
    # the bound's rate: exactly m^-1/2
    assert trace_gap_sample_bound(2.0, 400, 1, 0.1) == pytest.approx(
        trace_gap_sample_bound(2.0, 100, 1, 0.1) / 2)  # fmt: skip
    with pytest.raises(ValueError):
        trace_gap_sample_bound(2.0, 0, 1, 0.1)


@pytest.mark.parametrize("alpha", [0.2, 0.6])
def test_l2_form_of_the_approximation_bound(space, alpha):
    """eps ||f*||_H^2 and eps / (1 - eps) ||f*||^2 are the same number at the exact eps; for
    an assumed eps above it the L2 form is looser; both bound the approximation error."""
    aug = mask_augmentation(space.p_x, V, L, alpha)
    lam = aug.spectrum.eigenvalues
    f = random_target(space, 1, np.random.default_rng(3))
    eps, h_sq, l2_sq = aug.isometry_epsilon(f), aug.rkhs_norm_sq(f), float(space.p_x @ f**2)
    exact = approximation_bound(eps, h_sq, lam[2])
    assert approximation_bound_l2(eps, l2_sq, lam[2]) == pytest.approx(exact, rel=1e-10)
    assert aug.approximation_error(f, 1) <= exact * (1 + 1e-12)
    looser = min(eps + 0.5 * (1 - eps), 0.99)
    assert approximation_bound_l2(looser, l2_sq, lam[2]) > approximation_bound(looser, h_sq, lam[2])
    assert approximation_bound_l2(1.0, l2_sq, lam[2]) == float("inf")


PRESET = SimpleNamespace(msweep_rates=(0.8, 0.9), msweep_m=(100, 1000, 10_000, 100_000),
                         msweep_delta=0.01, vocab_size=3, length=4, d=1)  # fmt: skip


def _metrics(slopes: dict[float, list[float]], ratio: float = 1e-3, m: Metrics | None = None,
             group: str = "msweep", eigengap: float = 0.1) -> Metrics:  # fmt: skip
    m = Metrics() if m is None else m
    for a, per_seed in slopes.items():
        for s, slope in enumerate(per_seed):
            k = f"{group}/a{a:g}"
            m.update(s, {f"{k}/slope": slope, f"{k}/slope_all": slope, f"{k}/kappa_sq": 30.0,
                         f"{k}/ceiling": 0.5, f"{k}/eigengap": eigengap})  # fmt: skip
            for mm in PRESET.msweep_m:
                bound = 10.0 / np.sqrt(mm)
                m.update(s, {f"{k}/m{mm}/bound": bound, f"{k}/m{mm}/trace_gap": ratio * bound})
    return m


def test_rate_claim_holds_fails_and_is_inconclusive():
    fast = {0.8: [-1.0, -0.97, -1.02], 0.9: [-0.99, -1.01, -1.0]}
    claim = _trace_gap_rate(_metrics(fast), PRESET)
    assert claim.verdict == "holds" and claim.regime == "paper" and claim.test_set == "none"
    assert all("61bde66" in p["source"]["text"] for p in claim.test.parts)
    stuck = {0.8: [0.01, -0.02, 0.0], 0.9: [-0.99, -1.01, -1.0]}  # no decay at 0.8
    assert _trace_gap_rate(_metrics(stuck), PRESET).verdict == "fails"
    vacuous = {0.8: [float("nan")] * 3, 0.9: [-0.99, -1.01, -1.0]}  # < 3 non-vacuous m
    assert _trace_gap_rate(_metrics(vacuous), PRESET).verdict == "inconclusive"
    assert _trace_gap_sample_bound(_metrics(fast), PRESET).holds
    assert not _trace_gap_sample_bound(_metrics(fast, ratio=1.5), PRESET).holds


def test_the_rate_claim_rests_on_the_bound_being_informative():
    fast = {0.8: [-1.0, -0.97, -1.02], 0.9: [-0.99, -1.01, -1.0]}
    (premise,) = make_premises(_metrics(fast), PRESET)
    claim = _trace_gap_rate(_metrics(fast), PRESET)
    apply_premises([claim], [premise])
    assert premise.id == "bound-informative" and premise.verdict == "holds"
    assert claim.rests_on == ("bound-informative",) and claim.verdict == "holds"
    assert "0.8: 3 of 4" in premise.measured  # the bound 10 / sqrt(m) < 0.5 at m >= 1000
    # one seed at one rate without a slope (fewer than 3 informative m): the premise fails and
    # the claim, which would hold on the other rate's slopes alone, is inconclusive
    short = {0.8: [-1.0, float("nan"), -1.02], 0.9: [-0.99, -1.01, -1.0]}
    (premise,) = make_premises(_metrics(short), PRESET)
    claim = _trace_gap_rate(_metrics(short), PRESET)
    apply_premises([claim], [premise])
    assert premise.verdict == "fails" and "without a fitted slope: 1 of 6" in premise.measured
    assert claim.verdict == "inconclusive" and "bound-informative" in claim.premise
    no_sweep = SimpleNamespace(**{**vars(PRESET), "msweep_rates": ()})
    assert make_premises(_metrics(fast), no_sweep) == []


GAPFREE = SimpleNamespace(**{**vars(PRESET), "msweep_gapfree_d": 2})
FAST = {0.8: [-1.0, -0.97, -1.02], 0.9: [-0.99, -1.01, -1.0]}


def _both(gapped, gapfree, eigengap: float = 0.0, ratio: float = 1e-3) -> Metrics:
    m = _metrics(gapped, ratio)
    return _metrics(gapfree, ratio, m, "msweep_gapfree", eigengap)


def test_gap_free_case_holds_only_when_its_trace_gap_decays_too():
    # issue 50: the claim also needs the case Theorem 2 is about (lambda_d = lambda_{d+1})
    claim = _trace_gap_rate(_both(FAST, FAST), GAPFREE)
    assert claim.verdict == "holds" and len(claim.test.parts) == 4
    assert claim.rests_on == ("bound-informative", "no-eigengap")
    assert "gap-free, d = 2" in claim.measured
    # the gapped case decays, the gap-free one is stuck: the claim fails
    stuck = {0.8: [-0.1, -0.12, -0.09], 0.9: [-0.99, -1.01, -1.0]}
    assert _trace_gap_rate(_both(FAST, stuck), GAPFREE).verdict == "fails"
    # without the gap-free case configured, only the gapped parts are tested (as before)
    assert len(_trace_gap_rate(_both(FAST, stuck), PRESET).test.parts) == 2
    assert not _trace_gap_sample_bound(_both(FAST, FAST, ratio=1.5), GAPFREE).holds


def test_no_eigengap_premise_holds_on_a_degenerate_block_and_fails_on_a_gap():
    premises = {p.id: p for p in make_premises(_both(FAST, FAST, eigengap=1e-16), GAPFREE)}
    assert premises["no-eigengap"].verdict == "holds"
    claim = _trace_gap_rate(_both(FAST, FAST, eigengap=1e-16), GAPFREE)
    apply_premises([claim], list(premises.values()))
    assert claim.verdict == "holds"
    # a "gap-free" case that has a gap: the premise fails and the claim is inconclusive
    premises = {p.id: p for p in make_premises(_both(FAST, FAST, eigengap=0.05), GAPFREE)}
    assert premises["no-eigengap"].verdict == "fails"
    claim = _trace_gap_rate(_both(FAST, FAST, eigengap=0.05), GAPFREE)
    apply_premises([claim], list(premises.values()))
    assert claim.verdict == "inconclusive" and "no-eigengap" in claim.premise


def test_two_topic_space_has_a_degenerate_block_at_d_2(space):
    # the premise's construction: lambda_2 = lambda_3 = 1 - alpha exactly, lambda_1 isolated
    lam = mask_augmentation(space.p_x, V, L, 0.9).spectrum.eigenvalues
    assert abs(lam[2] - lam[3]) < 1e-9 and lam[1] - lam[2] > 0.05
    assert abs(lam[2] - 0.1) < 1e-9
