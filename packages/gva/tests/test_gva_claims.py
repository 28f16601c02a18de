"""The claims' criteria on small hand-made metrics (fast): a variance reduction that damps the
oscillation only because its policy never learns does not pass."""

from types import SimpleNamespace

from iclr24_gva.claims import bc_claims

from iclr24_common import Metrics

SEEDS = (0, 1, 2)
SPREAD = (1.0, 1.05, 0.95)
TASK = SimpleNamespace(name="env", lr=0.01, small_lr=0.001)
PRESET = SimpleNamespace(batch_size=32, large_batch=512)


def _metrics(small_lr_J: float, small_lr_dJ: float = 0.005) -> Metrics:
    m = Metrics()
    runs = {  # config: (J_mean, dJ, rel_dJ, rel_dloss)
        "small_batch": (0.5, 0.02, 0.05, 0.003),
        "large_batch": (0.5, 0.006, 0.01, 0.002),
        "small_lr": (small_lr_J, small_lr_dJ, 0.01, 0.01),
    }
    for s, k in zip(SEEDS, SPREAD):
        for cfg, (J, dJ, rel_dJ, rel_dloss) in runs.items():
            p = f"env/{cfg}/"
            m.add(p + "J_mean", s, J * k)
            m.add(p + "dJ", s, dJ * k)
            m.add(p + "rel_dJ", s, rel_dJ * k)
            m.add(p + "rel_dloss", s, rel_dloss)
            m.add(p + "grad_examples", s, 1000.0 * (512 if cfg == "large_batch" else 32))
            m.add(p + "ema/J_mean", s, J * k)
            m.add(p + "ema/dJ", s, 0.1 * dJ * k)
        m.add("env/untrained/J", s, 0.1 * k)
    return m


def _claims(m: Metrics) -> dict:
    return {c.id: c for c in bc_claims(m, PRESET, TASK)}


def test_a_small_lr_policy_that_learns_and_is_damped_holds():
    c = _claims(_metrics(small_lr_J=0.45))
    assert c["env/small-lr-damps-gva"].verdict == "holds"
    assert c["env/gva-exists"].verdict == "holds"
    assert c["env/ema-fixes-gva"].verdict == "holds"
    assert c["env/large-batch-damps-gva"].verdict == "holds"


def test_a_small_lr_policy_that_never_learns_fails():
    # damped because it barely moves: its reward stays at the untrained policy's
    c = _claims(_metrics(small_lr_J=0.1, small_lr_dJ=0.0002))["env/small-lr-damps-gva"]
    assert c.verdict == "fails"


def test_gva_exists_needs_a_policy_that_has_learned():
    m = _metrics(small_lr_J=0.45)
    for s, k in zip(SEEDS, SPREAD):  # the raw run is no better than the untrained policy
        m.add("env/untrained/J", s, 0.5 * k)
    assert _claims(m)["env/gva-exists"].verdict == "fails"
