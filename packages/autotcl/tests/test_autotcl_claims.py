"""The claims' verdicts on small hand-made metrics (no training)."""

from types import SimpleNamespace

from iclr24_autotcl.claims import make_checks, make_claims

from iclr24_common import Metrics

PRESET = SimpleNamespace(horizons=(24,), data="generated", seattle_hours=0, uea=("JV",),
                         faithful_quirks=True, ts2vec_iters=200)  # fmt: skip


def _metrics(mse, acc, keep=(0.6, 0.62, 0.61)):
    m = Metrics()
    for s in range(3):
        for k, v in mse.items():
            m.add(f"{k}/mse", s, v[s])
        for k, v in acc.items():
            m.add(f"JV/{k}/acc", s, v[s])
            m.add(f"JV/{k}/iters", s, 200)
        for k in ("autotcl", "ts2vec", "random_mask"):
            m.add(f"{k}/iters", s, 200 if k == "ts2vec" else 100)
            m.add(f"{k}/param_change", s, 0.1)
        m.add("autotcl/keep_ratio", s, keep[s])
    return m


def _claims(m):
    return {c.id: c for c in make_claims(m, PRESET)}


BASE_MSE = {"ts2vec": [0.8, 0.85, 0.82], "raw_lag": [0.7, 0.6, 0.65], "oracle": [0.3, 0.32, 0.31]}
ACC = {"autotcl": [0.96, 0.95, 0.97], "ts2vec": [0.97, 0.97, 0.96],
       "random_mask": [0.96, 0.97, 0.97], "untrained": [0.95, 0.94, 0.96]}  # fmt: skip


def test_a_tie_with_the_random_mask_does_not_pass():
    tie = {"autotcl": [1.10, 1.05, 1.08], "random_mask": [1.0996, 1.0497, 1.0795],
           "untrained": [1.2, 1.1, 1.15]}  # fmt: skip
    c = _claims(_metrics({**BASE_MSE, **tie}, ACC))["forecast/vs-random-mask"]
    assert c.verdict == "fails"  # +0.0004 MSE is far below the 2 % margin (0.02)


def test_the_untrained_encoder_makes_a_passing_claim_inconclusive():
    mse = {"autotcl": [0.5, 0.52, 0.51], "random_mask": [0.6, 0.63, 0.61]}
    good = _claims(_metrics({**BASE_MSE, **mse, "untrained": [1.2, 1.1, 1.15]}, ACC))
    assert good["forecast/vs-random-mask"].verdict == "holds"
    assert good["forecast/vs-ts2vec"].verdict == "holds"
    assert good["forecast/vs-raw-lag"].verdict == "holds"
    # the untrained encoder as good as AutoTCL: every forecasting claim is inconclusive
    bad = _claims(_metrics({**BASE_MSE, **mse, "untrained": [0.49, 0.5, 0.5]}, ACC))
    for cid in ("forecast/vs-random-mask", "forecast/vs-ts2vec", "forecast/vs-raw-lag"):
        assert bad[cid].verdict == "inconclusive" and "control passes" in bad[cid].test.reason
    # classification: the untrained encoder within 1 point of TS2Vec too -> inconclusive
    acc = {**ACC, "autotcl": [0.97, 0.975, 0.965], "untrained": [0.97, 0.97, 0.96]}
    cls = _claims(_metrics({**BASE_MSE, **mse, "untrained": [1.2, 1.1, 1.15]}, acc))
    assert cls["classify/JV-vs-ts2vec"].verdict == "inconclusive"


def test_oracle_is_a_claim_and_the_keep_ratio_a_check_under_the_quirk():
    mse = {"autotcl": [0.5, 0.52, 0.51], "random_mask": [0.6, 0.63, 0.61],
           "untrained": [1.2, 1.1, 1.15]}  # fmt: skip
    m = _metrics({**BASE_MSE, **mse}, ACC)
    assert _claims(m)["oracle/lower-bound"].verdict == "holds"
    checks = {c.id: c for c in make_checks(m, PRESET)}
    assert checks["mask/not-degenerate"].holds and "quirk" in checks["mask/not-degenerate"].why
    assert all(c.holds and c.why for c in checks.values())
    # without the quirk the keep ratio is a measured claim that can fail
    off = SimpleNamespace(**{**vars(PRESET), "faithful_quirks": False})
    low = _metrics({**BASE_MSE, **mse}, ACC, keep=(0.1, 0.12, 0.11))
    claims = {c.id: c for c in make_claims(low, off)}
    assert claims["mask/not-degenerate"].verdict == "fails"
    assert "mask/not-degenerate" not in {c.id for c in make_checks(low, off)}
