"""The claims' criteria on small hand-made metrics (no training): the baseline run as a control
makes a distance criterion it passes too inconclusive; accuracy is a non-inferiority test with
the untrained network as its no-op arm; a premise that fails makes its claims inconclusive;
every criterion has a source and every claim its regime."""

from dataclasses import replace

import numpy as np
from iclr24_scl_relu.claims import CONTROL, NET_NEEDS, make_checks, make_claims, make_premises
from iclr24_scl_relu.experiment import Preset

from iclr24_common import Metrics
from iclr24_common.results import apply_premises

PRESET = Preset(seeds=(0, 1, 2), ufm_ratios=(1.0, 10.0), net_temperatures=(0.2,),
                net_variants=("plain", "relu"), net_epochs=40)  # fmt: skip


def metrics(*, unbound_of=1.1, relu_of=0.01, probe_drop=0.0, unbound_gap=5e-4,
            imbalanced_of=0.38, untrained_acc=(0.75, 0.48), graph_holds=0.0,
            dead=0.0) -> Metrics:  # fmt: skip
    m = Metrics()
    for s in range(3):
        e = 1e-7 * (s + 1)  # per-seed jitter
        feasible = {"min_entry": 0.0, "norm_error": 1e-7}
        m.update(s, {"dist_etf": e, "dist_of": 0.32}, prefix="ufm/balanced/")
        m.update(s, {"dist_etf": 0.26 + e, "dist_of": imbalanced_of + e, "angle_maj_maj": 99.0 + s,
                     "angle_min_min": 85.0 + s / 2}, prefix="ufm/imbalanced/")  # fmt: skip
        for r in (1, 10):
            m.update(s, {"dist_of": e, "nc1": 1e-15 * (s + 1), "loss_minus_of": 1e-4, **feasible},
                     prefix=f"ufm+/R{r}/")  # fmt: skip
        m.update(s, {"graph_holds": graph_holds, "graph_split_classes": 10.0, "graph_pairs_missing": 3.0,
                     "dist_of": unbound_of + e, "loss_minus_of": unbound_gap + 1e-4 * s,
                     **feasible}, prefix="batching/random/")  # fmt: skip
        m.update(s, {"graph_holds": 1.0, "dist_of": 1e-5 + e, "nc1": 1e-10,
                     "loss_minus_of": 1e-4, **feasible},
                 prefix="batching/binding/")  # fmt: skip
        ncc0, probe0 = untrained_acc
        for v, d, ncc, probe, ep in (("plain", 0.38, 0.93, 0.91, 40.0),
                                     ("relu", relu_of, 0.93 + 0.002 * s,
                                      0.92 - probe_drop + 0.003 * s, 40.0),
                                     (CONTROL, 1.15, ncc0 - 0.001 * s, probe0 + 0.001 * s,
                                      0.0)):  # fmt: skip
            m.update(s, {"dist_of": d + 0.01 * s * (v == "plain") + 0.004 * s,
                         "zero_rows_train": dead, "zero_rows_test": 0.0,
                         "nc1": 0.01, "ncc_acc": ncc + 0.003 * s,
                         "probe_acc": probe + 0.002 * s ** 2, "epochs": ep},
                     prefix=f"net-R10-tau0.2/{v}/")  # fmt: skip
    return m


def claims(m: Metrics, preset=PRESET, items=None) -> dict:
    """The claims after their premises (as write_results applies them)."""
    out = make_claims(m, preset, items)
    apply_premises(out, make_premises(m, preset))
    return {c.id: c for c in out}


def verdicts(m: Metrics) -> dict[str, str]:
    return {i: c.verdict for i, c in claims(m).items()}


def test_every_claim_holds_on_the_papers_picture():
    assert set(verdicts(metrics()).values()) == {"holds"}
    assert all(p.holds for p in make_premises(metrics(), PRESET))
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
    second minimiser (the optimiser is stuck): the premise fails, the claim is inconclusive."""
    claim = claims(metrics(unbound_gap=0.5))["batching-random-not-of"]
    assert claim.verdict == "inconclusive"
    assert claim.premise.startswith("premise batched-run-at-a-minimiser fails")
    stuck_near = claims(metrics(unbound_gap=0.5, unbound_of=0.1))
    assert stuck_near["batching-random-not-of"].verdict == "inconclusive"


def test_random_batches_that_meet_the_condition_are_no_evidence_for_thm_2():
    claim = claims(metrics(graph_holds=1.0))["batching-random-not-of"]
    assert claim.verdict == "inconclusive"
    assert claim.premise.startswith("premise random-batches-break-the-condition fails")


def test_the_untrained_network_is_the_no_op_arm_of_the_accuracy_claim():
    c = claims(metrics())["net-relu-accuracy-R10-tau0.2"]
    assert c.verdict == "holds" and c.test.control["outcome"] == "fails"
    assert "untrained" in c.moved
    # every seed of the two nets equally accurate: a pass on SE 0 is no pass
    m = metrics()
    for s in range(3):
        m.add("net-R10-tau0.2/relu/ncc_acc", s, m.by_seed("net-R10-tau0.2/plain/ncc_acc")[s])
    assert claims(m)["net-relu-accuracy-R10-tau0.2"].verdict == "inconclusive"
    # an untrained network as accurate as the trained ones: the test cannot tell, inconclusive
    c = claims(metrics(untrained_acc=(0.93, 0.91)))["net-relu-accuracy-R10-tau0.2"]
    assert c.verdict == "inconclusive" and "control passes" in c.test.reason
    # the geometry claim's control: an untrained ReLU net is far from the OF (fails)
    g = claims(metrics())["net-relu-orthogonal-frame-R10-tau0.2"]
    assert g.verdict == "holds" and g.test.parts[0]["control"]["outcome"] == "fails"


def test_dead_embeddings_make_the_network_geometry_inconclusive():
    g = claims(metrics(dead=0.05))["net-relu-orthogonal-frame-R10-tau0.2"]
    assert g.verdict == "inconclusive" and g.premise.startswith("premise live-embeddings")


def test_regimes_sources_and_the_shared_test_set():
    cs = claims(metrics())
    for c in cs.values():
        net = c.id.startswith("net-")
        assert c.regime == ("below" if net else "paper") and (c.needs == NET_NEEDS) == net
        parts = c.test.parts or (c.test.to_dict(),)
        assert all(p["source"] and p["source"]["kind"] in ("ours", "derived") for p in parts)
    assert cs["net-relu-accuracy-R10-tau0.2"].test_set == "per-seed"  # digits: split per seed
    far = cs["ufm-imbalanced-asymmetric"].test.parts[0]["source"]
    assert far["kind"] == "derived" and "0.160" in far["text"]
    # CIFAR: every seed scored on one test set, so the accuracy test takes the items' SE too
    rng = np.random.default_rng(0)
    m, items = metrics(), {}
    for v in ("relu", "plain", CONTROL):
        for acc in ("ncc_acc", "probe_acc"):
            rows = {s: (rng.random(50) < 0.9).astype(float) for s in range(3)}
            items[(f"net-R10-tau0.2/{v}", acc)] = rows
            for s, row in rows.items():
                m.add(f"net-R10-tau0.2/{v}/{acc}", s, row.mean())
    c = claims(m, replace(PRESET, data="cifar10"), items)["net-relu-accuracy-R10-tau0.2"]
    assert c.test_set == "shared" and all(p["se_basis"] == "items" for p in c.test.parts)


def test_neither_etf_nor_of_threshold_is_half_the_etf_of_distance():
    # k = 10: the ETF and the OF are 0.320 apart, the threshold is 0.160
    assert verdicts(metrics(imbalanced_of=0.17))["ufm-imbalanced-asymmetric"] == "holds"
    assert verdicts(metrics(imbalanced_of=0.15))["ufm-imbalanced-asymmetric"] == "fails"
