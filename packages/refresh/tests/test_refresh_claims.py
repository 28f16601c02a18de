"""The claims' verdicts on small hand-made metrics (no training)."""

from types import SimpleNamespace

from iclr24_refresh.claims import make_checks, make_claims

from iclr24_common import Metrics

PRESET = SimpleNamespace(datasets=["d"], methods=["er"], scales=[1.0, 100.0], variant="official")


def _metrics(base, ref, big):
    m = Metrics()
    for s, (b, r, g) in enumerate(zip(base, ref, big)):
        m.add("d/er/acc_cil", s, b)
        m.add("d/er+refresh/acc_cil", s, r)
        m.add("d/er+refresh100x/acc_cil", s, g)
        for arm in ("er", "er+refresh", "er+refresh100x"):
            m.add(f"d/{arm}/steps", s, 100)
        for arm in ("er+refresh", "er+refresh100x"):
            m.add(f"d/{arm}/refresh_steps", s, 100)
        m.add("d/er+refresh/step_rel_error", s, 1e-4)
        m.add("unified/er/abs_diff", s, 0.0)
    return m


def _verdicts(m):
    return {c.id.split("/")[0]: c.verdict for c in make_claims(m, PRESET)}


def test_ties_do_not_pass_improves_and_no_harm_needs_the_lower_bound():
    tie = _metrics([70, 72, 74, 76], [70, 72, 74, 76], [70, 72, 74, 76])
    v = _verdicts(tie)
    assert v["no-harm"] == "holds"  # exactly equal: within the 2-point tolerance
    assert v["improves"] != "holds" and v["large-step-hurts"] != "holds"
    # a mean loss of 1 point (inside the old "mean >= -2" rule) with a wide spread: the lower
    # 2-SE bound is below -2 points, so "no harm" no longer holds
    wide = _metrics([70, 72, 74, 76], [74, 66, 76, 72], [70, 72, 74, 76])
    assert _verdicts(wide)["no-harm"] == "inconclusive"


def test_a_clear_gain_and_a_clear_drop_hold():
    m = _metrics([70, 72, 74, 76], [71, 73.2, 74.9, 77.1], [65, 66, 69, 70])
    v = _verdicts(m)
    assert v == {"no-harm": "holds", "improves": "holds", "large-step-hurts": "holds"}
    assert all(c.holds and c.why for c in make_checks(m, PRESET))
