"""The claims decide from per-seed values: speed-ups are thresholds on per-seed time ratios
(noise gives inconclusive, a single timing is judged as one value) below the paper's regime
on a CPU, the paper preset's training speed-up must pass the paper's 10x; convergence and the
timed solves' correctness are premises that can fail (their claims then inconclusive); the
equality of outputs is a check; the training comparison has an untrained no-op arm."""

from dataclasses import replace

from iclr24_deer.claims import make_checks, make_claims, make_premises
from iclr24_deer.experiment import PRESETS

from iclr24_common import Metrics
from iclr24_common.results import apply_premises

PRESET = PRESETS["default"]


def speed_metrics(nngru, deer, n=1, T=100_000) -> Metrics:
    m = Metrics()
    for s, (a, b) in enumerate(zip(nngru, deer)):
        p = f"speed/h{n}_T{T}/"
        m.update(s, {"nngru_seconds": a, "deer_seconds": b, "qdeer_seconds": b,
                     "deer_iters": 4, "deer_err": 1e-6 * (s + 1), "qdeer_err": 1e-6,
                     "deer_converged": 1.0, "qdeer_converged": 1.0}, prefix=p)  # fmt: skip
    return m


def by_id(claims):
    return {c.id: c for c in claims}


def test_speed_claims_are_thresholds_on_per_seed_ratios():
    fast = by_id(make_claims(speed_metrics([1.5, 1.4, 1.6], [0.15, 0.16, 0.14]), PRESET))
    assert fast["speedup-hidden1"].verdict == "holds"
    assert fast["speedup-hidden1"].test.kind == "threshold"
    assert fast["speedup-hidden1"].test.source.kind == "derived"
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
    assert paper.test.source.kind == "paper" and cpu.test.source.kind == "derived"
    assert cpu.regime == paper.regime == "below" and "V100" in paper.needs  # a CPU run
    on_gpu = by_id(make_claims(m, replace(PRESET, data="eigenworms"), "cuda"))["training-faster"]
    assert on_gpu.regime == "paper"


def test_speed_claims_are_below_the_papers_regime_on_a_cpu_and_rest_on_correct_solves():
    m = speed_metrics([1.5, 1.4, 1.6], [0.15, 0.16, 0.14])
    cpu = by_id(make_claims(m, PRESET, "cpu"))["speedup-hidden1"]
    assert cpu.regime == "below" and "286.0x" in cpu.needs and "V100" in cpu.needs
    assert by_id(make_claims(m, PRESET, "cuda"))["speedup-hidden1"].regime == "paper"
    assert cpu.rests_on == ("timed-solves-correct",)
    (premise,) = make_premises(m, PRESET)
    assert premise.id == "timed-solves-correct" and premise.verdict == "holds"
    for s in range(3):  # a timed solve that missed nn.GRU's output: the timing is no evidence
        m.add("speed/h1_T100000/deer_err", s, 1e-2)
    claims = make_claims(m, PRESET, "cpu")
    apply_premises(claims, make_premises(m, PRESET))
    assert by_id(claims)["speedup-hidden1"].verdict == "inconclusive"
    assert by_id(claims)["speedup-hidden1"].premise.startswith("premise timed-solves-correct")


def train_metrics(gap, init_gap) -> Metrics:
    m = Metrics()
    for s, (g, i) in enumerate(zip(gap, init_gap)):
        m.update(s, {"loss_rel_gap": g, "init_loss_rel_gap": i, "init_final_loss": 1.6,
                     "deer_final_loss": 1.0, "seq_final_loss": 1.0, "deer_test_acc": 0.5,
                     "seq_test_acc": 0.5, "seq_seconds_per_step": 2.0,
                     "deer_seconds_per_step": 1.0}, prefix="train/")  # fmt: skip
    return m


def test_training_unchanged_has_the_untrained_model_as_its_no_op_arm():
    moved = by_id(make_claims(train_metrics([1e-7, 3e-8, 2e-7], [0.4, 0.5, 0.45]), PRESET))
    c = moved["training-unchanged"]
    assert c.verdict == "holds" and c.test.control["outcome"] == "fails" and "untrained" in c.moved
    # training moved the loss by under 2 %: equal final losses say nothing, inconclusive
    idle = by_id(make_claims(train_metrics([1e-7, 3e-8, 2e-7], [4e-3, 2e-3, 3e-3]), PRESET))
    assert idle["training-unchanged"].verdict == "inconclusive"
    assert "control passes" in idle["training-unchanged"].test.reason
    bad = by_id(make_claims(train_metrics([0.1, 0.12, 0.09], [0.4, 0.5, 0.45]), PRESET))
    assert bad["training-unchanged"].verdict == "fails"


def test_convergence_is_a_premise_that_can_fail_and_equality_a_check():
    m = train_metrics([1e-7, 3e-8, 2e-7], [0.4, 0.5, 0.45])
    for s in range(3):
        m.update(s, {"err_fp32": 3e-7, "err_fp64": 1e-13, "iters_max": 5.0,
                     "nonconverged": 0.0}, prefix="equiv/")  # fmt: skip
    (premise,) = make_premises(m, PRESET)
    assert premise.id == "newton-converged" and premise.verdict == "holds"  # 5 on every seed:
    assert premise.test.n == 1  # the worst solve, one value (not a mean with SE 0)
    checks = by_id(make_checks(m, PRESET))
    assert checks["no-accuracy-loss"].holds and checks["no-accuracy-loss"].why
    for s in range(3):
        m.update(s, {"iters_max": 100.0, "nonconverged": 2.0}, prefix="equiv/")
    (premise,) = make_premises(m, PRESET)
    assert premise.verdict == "fails"  # max_iter hit on every seed
    claims = make_claims(m, PRESET)
    apply_premises(claims, [premise])
    assert by_id(claims)["training-unchanged"].verdict == "inconclusive"
    m.add("equiv/iters_max", 1, 5.0)
    m.add("equiv/nonconverged", 1, 1.0)  # a single non-converged solve on one seed fails it
    assert make_premises(m, PRESET)[0].verdict == "fails"
    for s in range(3):  # outputs off by 1e-3 on every seed: not float precision
        m.update(s, {"err_fp32": 1e-3}, prefix="equiv/")
    assert not by_id(make_checks(m, PRESET))["no-accuracy-loss"].holds


def test_checks_say_why_they_hold():
    m = Metrics()
    m.update(0, {"grad_relerr_fp32": 2e-7, "grad_relerr_fp64": 3e-15}, prefix="equiv/")
    m.update(0, {"n": 32, "qdeer_saved_per_state": 12.0, "deer_saved_per_state": 43.0},
             prefix="memory/")  # fmt: skip
    checks = make_checks(m, PRESET)
    assert {c.id for c in checks} == {"exact-gradients", "quasi-deer-memory"}
    assert all(c.holds and c.why for c in checks)


def test_quasi_deer_rss_is_a_check_not_a_claim_of_the_paper():
    def memrss(ratios):
        m = Metrics()
        for s, r in enumerate(ratios):
            m.update(s, {"n": 64, "deer_mib": 100.0, "qdeer_mib": 100.0 * r, "ratio": r,
                         "deer_peak_reached": 1.0, "qdeer_peak_reached": 1.0}, prefix="memrss/")  # fmt: skip
        assert "quasi-deer-memory-rss" not in by_id(make_claims(m, PRESET))
        return by_id(make_checks(m, PRESET))["quasi-deer-memory-rss"]

    assert memrss([0.2, 0.21, 0.19]).holds
    assert "not a claim of the DEER paper" in memrss([0.2, 0.21, 0.19]).statement
    assert not memrss([0.2, 0.35, 0.19]).holds  # the worst seed decides
