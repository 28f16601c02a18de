"""The claims' criteria on small hand-made metrics (no training): Auto MPG is non-inferiority
on paired per-seed MSEs within 5 % of the peer's mean, the scalability ratios are thresholds on
per-seed ratios (noise that cannot decide is inconclusive), convergence is a claim that fails
when a fit hits the epoch cap."""

from dataclasses import replace

from iclr24_smnn.claims import make_checks, make_claims
from iclr24_smnn.experiment import PRESETS

from iclr24_common import Metrics

PRESET = replace(PRESETS["default"], tasks=("autompg", "scalability"), scal_m=(1, 20))
MODELS = ["smnn", "lmn", "umnn", "gbm"]
TASKS = ["autompg"]


def metrics(*, smnn_mse=(7.5, 7.7, 7.6), smnn_time_hi=(0.040, 0.041, 0.039), capped=0) -> Metrics:
    m = Metrics()
    for s in range(3):
        for model, mse in (("smnn", smnn_mse[s]), ("lmn", 8.7), ("umnn", 7.6 + 0.1 * s),
                           ("gbm", 9.0)):  # fmt: skip
            m.update(s, {"test_mse": mse, "violation_rate": 0.0, "trials": 4.0},
                     prefix=f"autompg/{model}/")  # fmt: skip
            if model != "gbm":
                m.update(s, {"converged": 0.0 if (s, model) == (0, "umnn") and capped else 1.0,
                             "best_epoch": 100.0}, prefix=f"autompg/{model}/")  # fmt: skip
        m.add("autompg/smnn/violation_rate_init", s, 0.0)
        for model, lo, hi, p_lo, p_hi in (("smnn", 0.040, smnn_time_hi[s], 15953, 17017),
                                          ("umnn", 0.11, 2.4 + 0.1 * s, 6915, 113980),
                                          ("lmn", 0.032, 0.029, 6849, 6849)):  # fmt: skip
            m.update(s, {"epoch_seconds_m1": lo, "epoch_seconds_m20": hi, "params_m1": p_lo,
                         "params_m20": p_hi}, prefix=f"scalability/{model}/")  # fmt: skip
    return m


def claims(m: Metrics) -> dict:
    return {c.id: c for c in make_claims(m, PRESET, MODELS, TASKS)}


def test_comparable_flat_and_converged_hold():
    c = claims(metrics())
    # SMNN 7.5/7.7/7.6 vs UMNN 7.6/7.7/7.8: paired gap -0.1 +/- 0.058 SE, within 5 % of 7.7
    assert c["autompg-accuracy"].verdict == "holds"
    assert c["autompg-accuracy"].test.margin == 0.05 * 7.7
    assert c["scalability"].verdict == "holds" and c["converged"].verdict == "holds"
    assert {k.id for k in make_checks(metrics(), PRESET, MODELS, TASKS)} == {
        "monotonicity-guarantee", "peers-monotone", "equal-tuning"}  # fmt: skip


def test_autompg_a_tie_of_means_with_seed_noise_is_inconclusive_not_holds():
    # the mean MSE equals the peer's (7.7), but the seeds scatter far past the 5 % tolerance
    c = claims(metrics(smnn_mse=(5.7, 7.7, 9.7)))
    assert c["autompg-accuracy"].verdict == "inconclusive"
    assert claims(metrics(smnn_mse=(9.6, 9.7, 9.8)))["autompg-accuracy"].verdict == "fails"


def test_scalability_timing_noise_is_inconclusive_and_growth_fails():
    noisy = claims(metrics(smnn_time_hi=(0.030, 0.060, 0.072)))["scalability"]
    assert noisy.verdict == "inconclusive"  # mean ratio 1.35, below 1.5 but not by 2 SE
    assert claims(metrics(smnn_time_hi=(0.08, 0.09, 0.1)))["scalability"].verdict == "fails"


def test_a_fit_stopped_by_the_cap_keeps_converged_from_holding():
    assert claims(metrics(capped=1))["converged"].verdict != "holds"


def noise_metrics(smnn_slope, base_slopes=(0.40, 0.45, 0.50), jitter=(0.0, 0.02, -0.02)) -> Metrics:
    """Friedman #1 MSE at noise 0/5/10/20 for SMNN, the MLP and the same-structure network:
    linear in the noise (plus a per-seed jitter), with the given per-seed slopes."""
    m = Metrics()
    for s in range(3):
        for model, slope in (("smnn", smnn_slope[s]), ("same", base_slopes[s]),
                             ("mlp", base_slopes[s] + 0.3)):  # fmt: skip
            for nz in (0.0, 5.0, 10.0, 20.0):
                m.add(f"friedman_noise{nz:g}/{model}/test_mse", s, 1.0 + slope * nz + jitter[s])
    return m


def test_noise_claim_judges_the_growth_of_the_error_with_noise():
    tasks = [f"friedman_noise{nz:g}" for nz in (0.0, 5.0, 10.0, 20.0)]

    def verdict(smnn_slope):
        c = {
            c.id: c
            for c in make_claims(noise_metrics(smnn_slope), PRESET, ["smnn", "mlp", "same"], tasks)
        }
        return c["friedman-noise-robust"]

    grows_less = verdict((0.10, 0.12, 0.11))
    assert grows_less.verdict == "holds" and "(same)" in grows_less.criterion  # the lowest slope
    assert abs(grows_less.test.estimate - (0.45 - 0.11)) < 1e-9  # slope gap, per-seed fits
    assert verdict((0.40, 0.45, 0.50)).verdict == "fails"  # the same growth: not "much less"
    assert verdict((0.10, 0.45, 0.80)).verdict == "inconclusive"  # seeds cannot decide
    one_level = make_claims(noise_metrics((0.1, 0.1, 0.1)), PRESET, ["smnn", "same"],
                            ["friedman_noise20"])  # fmt: skip
    assert "friedman-noise-robust" not in {c.id for c in one_level}  # no growth to judge
