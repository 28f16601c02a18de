"""The claims' verdicts and the checks on small hand-made metrics (no training)."""

from iclr24_aid.claims import clevr_steps, make_checks, make_claims
from iclr24_aid.experiment import PRESETS

from iclr24_common import Metrics

PRESET = PRESETS["default"]  # SAR at p 0 and 0.5, Sort-of-CLEVR; linear and aid


def _metrics(steps=None, clevr_steps_run=None, untrained_cos=(0.6, 0.62, 0.61)):
    m = Metrics()
    for s in range(3):
        m.add("data/test_pairs_seen_in_training", s, 0)
        m.add("data/test_pair_coverage", s, 1.0)
        for r in ("p0", "p0.5"):
            for k, acc in (("aid", 0.3 + 0.05 * s), ("linear", 0.02 + 0.01 * s)):
                m.add(f"{r}/{k}/test_acc", s, acc)
                m.add(f"{r}/{k}/train_acc", s, 0.95)
                m.add(f"{r}/{k}/gap", s, 0.95 - acc)
                m.add(f"{r}/{k}/chosen_step", s, 1100)
                m.add(f"{r}/{k}/steps_run", s, steps or PRESET.train.steps)
                m.add(f"{r}/{k}/role_cos_cross_key", s, (0.2 if k == "aid" else 0.5) + 0.01 * s)
        m.add("p0/aid_untrained/role_cos_cross_key", s, untrained_cos[s])
        for k, acc in (("aid", 0.62 + 0.01 * s), ("linear", 0.6 + 0.012 * s)):
            for kind in ("unary", "binary", "ternary", "mean"):
                m.add(f"clevr/{k}/test_acc/{kind}", s, acc)
            m.add(f"clevr/{k}/steps_run", s, clevr_steps_run or clevr_steps(PRESET))
    return m


def test_budget_checks_measure_the_steps_taken():
    checks = {c.id: c for c in make_checks(_metrics(), PRESET)}
    assert clevr_steps(PRESET) == 3 * 35 * 3  # 3 epochs x 35 batch indices x 3 kinds
    assert all(c.holds and c.why for c in checks.values())
    assert "sys-gap/p0" in checks and "sys-gap/p0" not in {c.id for c in make_claims(_metrics(), PRESET)}  # fmt: skip
    short = {c.id: c for c in make_checks(_metrics(steps=1100, clevr_steps_run=300), PRESET)}
    assert not short["budget/p0/aid"].holds and not short["budget/clevr/linear"].holds


def test_roles_claim_has_the_untrained_control():
    claims = {c.id: c for c in make_claims(_metrics(), PRESET)}
    assert claims["roles-disentangled/p0"].verdict == "holds"
    assert claims["aid-generalises/p0"].verdict == "holds"
    # an untrained FWM + AID whose roles are as orthogonal: the criterion tells nothing
    same = {c.id: c for c in make_claims(_metrics(untrained_cos=(0.19, 0.2, 0.22)), PRESET)}
    assert same["roles-disentangled/p0"].verdict == "inconclusive"
    assert "control passes" in same["roles-disentangled/p0"].test.reason


def test_a_tie_on_sort_of_clevr_does_not_hold():
    # AID - linear: +0.02, +0.018, +0.016: past 0 by more than 2 SE
    assert {c.id: c for c in make_claims(_metrics(), PRESET)}["aid-sort-of-clevr"].holds
    tie = _metrics()
    for s in range(3):
        tie.add("clevr/aid/test_acc/mean", s, tie.by_seed("clevr/linear/test_acc/mean")[s])
    claims = {c.id: c for c in make_claims(tie, PRESET)}
    assert claims["aid-sort-of-clevr"].verdict == "fails"
