"""The claims' criteria on small hand-made metrics (fast): timing thresholds on per-seed
ratios, and the never-updated control."""

from types import SimpleNamespace

from iclr24_svd_update.claims import PAIRS, make_checks, make_claims

from iclr24_common import Metrics

PRESET = SimpleNamespace(batch_sizes=(10,), n_batches=4)
SEEDS = (0, 1, 2)


def _metrics(ratio=0.15, err=1e-4, stale_err=2e-2, gap=1e-14) -> Metrics:
    m = Metrics()
    for i, s in enumerate(SEEDS):
        j = 1 + 0.02 * (i - 1)  # a little spread between seeds
        for o, b in PAIRS:
            m.add(f"rows/s10/ours-{o}/time_ratio_vs_{b}", s, ratio * j)
            m.add(f"rows/s10/ours-{o}/sv_rel_error_vs_svds", s, err * j)
            m.add(f"rows/s10/{b}/sv_rel_error_vs_svds", s, err * j)
            m.add(f"rows/s10/ours-{o}/sv_gap_vs_{b}", s, gap)
            m.add(f"rows/s10/ours-{o}/hr10", s, 0.27 * j)
        m.add("rows/s10/stale/sv_rel_error_vs_svds", s, stale_err * j)
        m.add("rows/s10/recompute/hr10", s, 0.27 * j)
        m.add("rows/s10/stale/hr10", s, 0.2 * j)
    return m


def _claims(m):
    return {c.id: c for c in make_claims(m, PRESET)}


def test_fast_and_precise_holds():
    c = _claims(_metrics())
    assert c["speedup-s10"].verdict == "holds"
    assert c["close-to-svds"].verdict == "holds"
    assert c["downstream-hr10"].verdict == "holds"


def test_a_ratio_above_the_level_fails():
    assert _claims(_metrics(ratio=0.6))["speedup-s10"].verdict == "fails"


def test_precision_is_inconclusive_when_the_never_updated_svd_also_passes():
    c = _claims(_metrics(stale_err=1e-4))["close-to-svds"]
    assert c.verdict == "inconclusive" and "control passes" in c.test.reason


def test_same_as_baseline_is_a_check_with_why():
    checks = {c.id: c for c in make_checks(_metrics(), PRESET)}
    assert checks["same-as-baseline"].holds and checks["same-as-baseline"].why
    assert not {c.id: c for c in make_checks(_metrics(gap=1e-3), PRESET)}["same-as-baseline"].holds
