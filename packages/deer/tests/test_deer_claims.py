"""The claims decide from per-seed values: speed-ups are thresholds on per-seed time ratios
(noise gives inconclusive, a single timing is judged as one value), the paper preset's
training speed-up must pass the paper's 10x, convergence and equality are claims that can
fail; the checks say why they hold."""

from dataclasses import replace

from iclr24_deer.claims import make_checks, make_claims
from iclr24_deer.experiment import PRESETS

from iclr24_common import Metrics

PRESET = PRESETS["default"]


def speed_metrics(nngru, deer, n=1, T=100_000) -> Metrics:
    m = Metrics()
    for s, (a, b) in enumerate(zip(nngru, deer)):
        p = f"speed/h{n}_T{T}/"
        m.update(s, {"nngru_seconds": a, "deer_seconds": b, "qdeer_seconds": b,
                     "deer_iters": 4, "deer_err": 1e-6, "qdeer_err": 1e-6,
                     "deer_converged": 1.0, "qdeer_converged": 1.0}, prefix=p)  # fmt: skip
    return m


def by_id(claims):
    return {c.id: c for c in claims}


def test_speed_claims_are_thresholds_on_per_seed_ratios():
    fast = by_id(make_claims(speed_metrics([1.5, 1.4, 1.6], [0.15, 0.16, 0.14]), PRESET))
    assert fast["speedup-hidden1"].verdict == "holds"
    assert fast["speedup-hidden1"].test.kind == "threshold"
    slow = by_id(make_claims(speed_metrics([1.0, 1.1, 0.9], [2.0, 2.1, 1.9]), PRESET))
    assert slow["speedup-hidden1"].verdict == "fails"
    # ratios 1.6, 0.7, 1.3: faster on average, but the seeds' noise cannot decide
    noisy = by_id(make_claims(speed_metrics([1.6, 0.7, 1.3], [1.0, 1.0, 1.0]), PRESET))
    assert noisy["speedup-hidden1"].verdict == "inconclusive"


def test_a_single_timing_is_judged_as_one_value_and_says_so():
    one = by_id(make_claims(speed_metrics([1.5], [0.5]), PRESET))["speedup-hidden1"]
    assert one.verdict == "holds" and one.test.n == 1
    assert "a single timing" in one.measured


def test_training_speed_up_uses_the_papers_10x_in_the_paper_setting():
    m = Metrics()
    for s, r in enumerate([4.0, 4.5, 3.8]):
        m.update(s, {"loss_rel_gap": 1e-5, "deer_final_loss": 1.0, "seq_final_loss": 1.0,
                     "deer_test_acc": 0.5, "seq_test_acc": 0.5, "seq_seconds_per_step": r,
                     "deer_seconds_per_step": 1.0}, prefix="train/")  # fmt: skip
    cpu = by_id(make_claims(m, PRESET))["training-faster"]
    assert cpu.verdict == "holds" and "1" in cpu.criterion
    paper = by_id(make_claims(m, replace(PRESET, data="eigenworms")))["training-faster"]
    assert paper.verdict == "fails" and "10" in paper.criterion


def test_convergence_and_equality_are_claims_that_can_fail():
    m = Metrics()
    for s in range(3):
        m.update(s, {"err_fp32": 3e-7, "err_fp64": 1e-13, "iters_max": 100.0,
                     "nonconverged": 2.0}, prefix="equiv/")  # fmt: skip
    claims = by_id(make_claims(m, PRESET))
    assert claims["no-accuracy-loss"].verdict == "holds"
    assert claims["newton-converged"].verdict == "fails"  # max_iter hit on every seed
    for s in range(3):  # outputs off by 1e-3 on every seed: not float precision
        m.update(s, {"err_fp32": 1e-3}, prefix="equiv/")
    assert by_id(make_claims(m, PRESET))["no-accuracy-loss"].verdict == "fails"


def test_checks_say_why_they_hold():
    m = Metrics()
    m.update(0, {"grad_relerr_fp32": 2e-7, "grad_relerr_fp64": 3e-15}, prefix="equiv/")
    m.update(0, {"n": 32, "qdeer_saved_per_state": 12.0, "deer_saved_per_state": 43.0},
             prefix="memory/")  # fmt: skip
    checks = make_checks(m, PRESET)
    assert {c.id for c in checks} == {"exact-gradients", "quasi-deer-memory"}
    assert all(c.holds and c.why for c in checks)


def test_quasi_deer_rss_claim_is_a_threshold_on_the_per_seed_ratio():
    def memrss(ratios):
        m = Metrics()
        for s, r in enumerate(ratios):
            m.update(s, {"n": 64, "deer_mib": 100.0, "qdeer_mib": 100.0 * r, "ratio": r,
                         "deer_peak_reached": 1.0, "qdeer_peak_reached": 1.0}, prefix="memrss/")  # fmt: skip
        return by_id(make_claims(m, PRESET))["quasi-deer-memory-rss"]

    assert memrss([0.2, 0.21, 0.19]).verdict == "holds"
    assert memrss([0.5, 0.6, 0.55]).verdict == "fails"
