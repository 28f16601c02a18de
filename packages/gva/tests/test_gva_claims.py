"""The claims' criteria on small hand-made metrics (fast): a variance reduction that damps the
oscillation only because its policy never learns does not pass."""

from types import SimpleNamespace

from iclr24_gva.claims import bc_claims

from iclr24_common import Metrics

SEEDS = (0, 1, 2)
SPREAD = (1.0, 1.05, 0.95)
TASK = SimpleNamespace(name="env", lr=0.01, small_lr=0.001)
PRESET = SimpleNamespace(batch_size=32, large_batch=512)


def _metrics(small_lr_J: float, small_lr_dJ: float = 0.005, second_rel_dexcess=0.003):
    m = Metrics()
    runs = {  # config: (J_mean, dJ, rel_dJ, rel_dloss, rel_dexcess)
        "small_batch": (0.5, 0.02, 0.05, 0.0003, 0.003),
        "second_floor": (0.5, 0.02, 0.05, 0.0005, second_rel_dexcess),
        "large_batch": (0.5, 0.006, 0.01, 0.0002, 0.002),
        "small_lr": (small_lr_J, small_lr_dJ, 0.01, 0.001, 0.01),
    }
    for s, k in zip(SEEDS, SPREAD):
        for cfg, (J, dJ, rel_dJ, rel_dloss, rel_dexcess) in runs.items():
            p = f"env/{cfg}/"
            m.add(p + "J_mean", s, J * k)
            m.add(p + "dJ", s, dJ * k)
            m.add(p + "rel_dJ", s, rel_dJ * k)
            m.add(p + "rel_dloss", s, rel_dloss)
            m.add(p + "rel_dexcess", s, rel_dexcess)
            m.add(p + "floor", s, 0.08 if cfg != "second_floor" else 0.02)
            m.add(p + "action_noise", s, 0.2 if cfg != "second_floor" else 0.1)
            m.add(p + "grad_examples", s, 1000.0 * (512 if cfg == "large_batch" else 32))
            m.add(p + "ema/J_mean", s, J * k)
            m.add(p + "ema/dJ", s, 0.1 * dJ * k)
        m.add("env/untrained/J", s, 0.1 * k)
    return m


def _claims(m: Metrics) -> dict:
    return {c.id: c for c in bc_claims(m, PRESET, TASK)}


def test_a_small_lr_policy_that_learns_and_is_damped_holds():
    c = _claims(_metrics(small_lr_J=0.49))
    assert c["env/small-lr-damps-gva"].verdict == "holds"
    assert c["env/gva-exists"].verdict == "holds"
    assert c["env/ema-fixes-gva"].verdict == "holds"
    assert c["env/large-batch-damps-gva"].verdict == "holds"


def test_a_small_lr_policy_that_never_learns_fails():
    # damped because it barely moves: its reward stays at the untrained policy's
    c = _claims(_metrics(small_lr_J=0.1, small_lr_dJ=0.0002))["env/small-lr-damps-gva"]
    assert c.verdict == "fails"


def test_a_small_lr_policy_that_learns_less_fails():
    # damped and learning, but its reward falls short of the raw run's by > 10 %
    c = _claims(_metrics(small_lr_J=0.4))["env/small-lr-damps-gva"]
    assert c.verdict == "fails"


def test_gva_exists_is_judged_on_the_loss_above_the_floor_at_both_floors():
    # the loss with its floor barely moves (ratio 100+), but the loss above the floor jumps
    # as much as the reward does at the second floor: no GVA
    c = _claims(_metrics(small_lr_J=0.49, second_rel_dexcess=0.05))["env/gva-exists"]
    assert c.verdict == "fails"
    assert "second floor" in c.measured


def test_gva_exists_needs_a_policy_that_has_learned():
    m = _metrics(small_lr_J=0.49)
    for s, k in zip(SEEDS, SPREAD):  # the raw run is no better than the untrained policy
        m.add("env/untrained/J", s, 0.5 * k)
    assert _claims(m)["env/gva-exists"].verdict == "fails"
