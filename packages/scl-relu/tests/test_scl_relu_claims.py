"""The claims' criteria on small hand-made metrics (no training): the baseline run as a control
makes a distance criterion it passes too inconclusive; accuracy is a non-inferiority test."""

from iclr24_scl_relu.claims import make_checks, make_claims
from iclr24_scl_relu.experiment import Preset

from iclr24_common import Metrics

PRESET = Preset(seeds=(0, 1, 2), ufm_ratios=(1.0, 10.0), net_temperatures=(0.2,),
                net_variants=("plain", "relu"), net_epochs=40)  # fmt: skip


def metrics(*, unbound_of=1.1, relu_of=0.01, probe_drop=0.0, unbound_gap=5e-4,
            imbalanced_of=0.38) -> Metrics:  # fmt: skip
    m = Metrics()
    for s in range(3):
        e = 1e-7 * (s + 1)  # per-seed jitter
        feasible = {"min_entry": 0.0, "norm_error": 1e-7}
        m.update(s, {"dist_etf": e, "dist_of": 0.32}, prefix="ufm/balanced/")
        m.update(s, {"dist_etf": 0.26 + e, "dist_of": imbalanced_of + e, "angle_maj_maj": 99.0 + s,
                     "angle_min_min": 85.0 + s / 2}, prefix="ufm/imbalanced/")  # fmt: skip
        for r in (1, 10):
            m.update(s, {"dist_of": e, "nc1": 1e-15, "loss_minus_of": 1e-4, **feasible},
                     prefix=f"ufm+/R{r}/")  # fmt: skip
        m.update(s, {"graph_holds": 0.0, "graph_split_classes": 10.0, "graph_pairs_missing": 3.0,
                     "dist_of": unbound_of + e, "loss_minus_of": unbound_gap + 1e-4 * s,
                     **feasible}, prefix="batching/random/")  # fmt: skip
        m.update(s, {"graph_holds": 1.0, "dist_of": 1e-5 + e, "nc1": 1e-10,
                     "loss_minus_of": 1e-4, **feasible},
                 prefix="batching/binding/")  # fmt: skip
        for v, d, probe in (("plain", 0.38, 0.91), ("relu", relu_of, 0.92 - probe_drop)):
            m.update(s, {"dist_of": d + 0.01 * s, "zero_rows_train": 0.0, "nc1": 0.01,
                         "ncc_acc": 0.93 + 0.003 * s, "probe_acc": probe + 0.002 * s ** 2,
                         "epochs": 40.0}, prefix=f"net-R10-tau0.2/{v}/")  # fmt: skip
    return m


def verdicts(m: Metrics) -> dict[str, str]:
    return {c.id: c.verdict for c in make_claims(m, PRESET)}


def test_every_claim_holds_on_the_papers_picture():
    assert set(verdicts(metrics()).values()) == {"holds"}
    assert all(c.holds and c.why for c in make_checks(metrics(), PRESET))


def test_binding_is_inconclusive_when_the_unbound_batches_reach_the_of_too():
    claims = {c.id: c for c in make_claims(metrics(unbound_of=1e-4), PRESET)}
    assert claims["batching-binding-of"].verdict == "inconclusive"
    assert "control passes" in claims["batching-binding-of"].test.reason
    assert claims["batching-random-not-of"].verdict == "fails"


def test_relu_far_from_the_of_fails_and_an_accuracy_drop_past_2_points_fails():
    v = verdicts(metrics(relu_of=0.3, probe_drop=0.05))
    assert v["net-relu-orthogonal-frame-R10-tau0.2"] == "fails"
    assert v["net-relu-accuracy-R10-tau0.2"] == "fails"


def test_random_batches_stuck_above_the_of_loss_are_inconclusive_not_evidence():
    """Far from the OF but 0.5 nats above the OF's value of the batched objective: not a
    second minimiser (the optimiser is stuck), so the geometry claim is inconclusive."""
    claim = {c.id: c for c in make_claims(metrics(unbound_gap=0.5), PRESET)}[
        "batching-random-not-of"]  # fmt: skip
    assert claim.verdict == "inconclusive" and "optimiser stuck" in claim.test.reason
    stuck_near = {c.id: c for c in make_claims(metrics(unbound_gap=0.5, unbound_of=0.1), PRESET)}
    assert stuck_near["batching-random-not-of"].verdict == "inconclusive"


def test_neither_etf_nor_of_threshold_is_half_the_etf_of_distance():
    # k = 10: the ETF and the OF are 0.320 apart, the threshold is 0.160
    assert verdicts(metrics(imbalanced_of=0.17))["ufm-imbalanced-asymmetric"] == "holds"
    assert verdicts(metrics(imbalanced_of=0.15))["ufm-imbalanced-asymmetric"] == "fails"
