"""The claims' criteria on small hand-made metrics (fast): a variance reduction that damps the
oscillation only because its policy never learns does not pass; nor does one that a policy
whose training stopped when the window opened would pass as well (the no-op control); a
policy that has not learned fails the premise its claims rest on."""

from types import SimpleNamespace

import numpy as np
import pytest
from iclr24_gva.claims import GVA_COMMIT, bc_claims, lm_claims, make_premises

from iclr24_common import Metrics, apply_premises

SEEDS = (0, 1, 2)
SPREAD = (1.0, 1.05, 0.95)
TASK = SimpleNamespace(name="env", lr=0.01, small_lr=0.001, steps=4000)
PRESET = SimpleNamespace(batch_size=32, large_batch=512, state_dim=4, action_dim=2, horizon=200,
                         width=64, lm_layers=2, lm_dim=32, lm_context=32, lm_steps=1000,
                         lm_batch=32, window=20, tasks=lambda: {"env": TASK},
                         lr_scale=lambda task: 10)  # fmt: skip


def _metrics(small_lr_J: float, small_lr_dJ: float = 0.005, second_rel_dtrain=0.0005,
             frozen_J: float = 0.3, capped: float = 0.0, rel_dexcess: float = 0.85):  # fmt: skip
    m = Metrics()
    runs = {  # config: (J_mean, dJ, rel_dJ, rel_dtrain, steps to the window)
        "small_batch": (0.5, 0.02, 0.05, 0.0003, 6000),
        "second_floor": (0.5, 0.02, 0.05, second_rel_dtrain, 6000),
        "large_batch": (0.5, 0.006, 0.01, 0.0002, 5000),
        "small_lr": (small_lr_J, small_lr_dJ, 0.01, 0.001, 60000),
    }
    for s, k in zip(SEEDS, SPREAD):
        for cfg, (J, dJ, rel_dJ, rel_dtrain, steps) in runs.items():
            p = f"env/{cfg}/"
            m.add(p + "J_mean", s, J * k * (1 + 0.002 * s * (cfg != "small_batch")))
            m.add(p + "dJ", s, dJ * k)
            m.add(p + "rel_dJ", s, rel_dJ * k)
            m.add(p + "rel_dtrain", s, rel_dtrain)
            m.add(p + "rel_dloss", s, rel_dtrain)
            m.add(p + "rel_dexcess", s, rel_dexcess)  # the loss above the floor: not judged
            m.add(p + "train_loss", s, 0.081 if cfg != "second_floor" else 0.021)
            m.add(p + "train_floor", s, 0.08 if cfg != "second_floor" else 0.02)
            m.add(p + "floor", s, 0.08 if cfg != "second_floor" else 0.02)
            m.add(p + "action_noise", s, 0.2 if cfg != "second_floor" else 0.1)
            m.add(p + "grad_examples", s, steps * (512 if cfg == "large_batch" else 32.0))
            m.add(p + "steps_to_window", s, float(steps))
            m.add(p + "window_checkpoints", s, 20.0)
            m.add(p + "capped", s, capped if cfg == "small_lr" and s == 1 else 0.0)
            m.add(p + "ema/J_mean", s, J * k * (1 - 0.001 * s))
            m.add(p + "ema/dJ", s, (0.1 + 0.01 * s) * dJ * k)  # EMA / raw 0.10-0.12
            m.add(p + "window_displacement", s, 0.05 * k)
            m.add(p + "ema/window_displacement", s, 0.04 * k)
        # the raw run's policy held at the window's first checkpoint (still learning then)
        m.add("env/small_batch/frozen/J_mean", s, frozen_J * k * (1 + 0.002 * (s - 1)))
        m.add("env/untrained/J", s, 0.1 * k)
    return m


def _claims(m: Metrics) -> dict:
    claims = bc_claims(m, PRESET, TASK)
    apply_premises(claims, make_premises(m, PRESET))
    return {c.id: c for c in claims}


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


def test_gva_exists_is_judged_on_the_training_loss_at_both_label_noise_levels():
    # held out (issue 49): the reward jumps 5 % while the training loss (the paper's Fig. 1)
    # moves 0.03-0.05 %: more than 10x at both levels, however much the loss above its
    # floor jumps (85 %: the old criterion's denominator, reported, not judged)
    c = _claims(_metrics(small_lr_J=0.49))["env/gva-exists"]
    assert c.verdict == "holds"
    assert "training loss" in c.statement and "rel |d BC training loss|" in c.criterion
    # the training loss jumps 2 % at the second label noise: the ratio there is 2.5, no GVA
    c = _claims(_metrics(small_lr_J=0.49, second_rel_dtrain=0.02))["env/gva-exists"]
    assert c.verdict == "fails"
    assert "second label noise" in c.measured


def test_the_claims_rest_on_a_policy_that_has_learned():
    m = _metrics(small_lr_J=0.49)
    assert make_premises(m, PRESET)[0].holds
    for s, k in zip(SEEDS, SPREAD):  # the raw run is no better than the untrained policy
        m.add("env/untrained/J", s, 0.5 * k)
    learned, _ = make_premises(m, PRESET)
    assert learned.id == "env/learned" and learned.verdict == "fails"
    c = _claims(m)
    for claim in ("gva-exists", "ema-fixes-gva", "large-batch-damps-gva", "small-lr-damps-gva"):
        assert c[f"env/{claim}"].verdict == "inconclusive"
        assert c[f"env/{claim}"].premise.startswith("premise env/learned fails")


def test_a_damping_that_stopping_training_would_match_is_inconclusive():
    # the raw run had plateaued when the window opened: a policy stopped there keeps the
    # reward (0.5) without any jump, so "without lowering the reward" cannot tell EMA or the
    # large batch from stopping
    c = _claims(_metrics(small_lr_J=0.49, frozen_J=0.5))
    for claim in ("ema-fixes-gva", "large-batch-damps-gva"):
        v = c[f"env/{claim}"]
        assert v.verdict == "inconclusive" and "control passes" in v.test.reason, claim
        ctl = next(p["control"] for p in v.test.parts if p["kind"] == "non-inferiority")
        assert ctl["name"] == "training stopped at the window's start"
        assert ctl["outcome"] == "holds" and "relative weight displacement" in v.moved
    # the small lr's no-op is lr -> 0 (the untrained policy), which never reaches the reward
    v = c["env/small-lr-damps-gva"]
    ctl = next(p["control"] for p in v.test.parts if p["kind"] == "non-inferiority")
    assert ctl["name"] == "the untrained policy" and ctl["outcome"] == "fails"
    assert v.verdict == "holds"


def test_the_small_lr_is_compared_at_its_plateau_with_the_steps_it_needs():
    # held out (issue 49): damped and, with 10x the steps, at the raw run's reward: holds;
    # the steps it took are in the measurement (the cost in progress)
    c = _claims(_metrics(small_lr_J=0.5))["env/small-lr-damps-gva"]
    assert c.verdict == "holds" and "60000" in c.measured and "10x" in c.measured
    assert "not at equal steps" in c.criterion
    # at its plateau it still learns 20 % less: fails
    assert _claims(_metrics(small_lr_J=0.4))["env/small-lr-damps-gva"].verdict == "fails"


def test_a_run_that_never_reached_its_plateau_leaves_the_claims_undecided():
    # held out (issue 49): one small-lr run stopped at its cap, not by the plateau rule
    m = _metrics(small_lr_J=0.49, capped=1.0)
    premises = {p.id: p for p in make_premises(m, PRESET)}
    assert premises["env/plateaued"].verdict == "fails"
    assert "1 of 12 runs capped" in premises["env/plateaued"].measured
    for claim in _claims(m).values():
        assert claim.verdict == "inconclusive"
        assert claim.premise.startswith("premise env/plateaued fails")
    assert {p.id: p for p in make_premises(_metrics(0.49), PRESET)}["env/plateaued"].holds


def test_every_criterion_is_sourced_and_every_claim_below_the_papers_regime():
    c = _claims(_metrics(small_lr_J=0.49))
    for claim in c.values():
        assert claim.regime == "below" and "MuJoCo" in claim.needs and "2 x 64 MLP" in claim.needs
        assert claim.test_set == "per-seed"
        assert claim.rests_on == ("env/learned", "env/plateaued")
        assert all(p["source"]["kind"] == "ours" for p in claim.test.parts)
    src = c["env/gva-exists"].test.parts[0]["source"]["text"]
    assert "order of magnitude (10x)" in src and "training loss" in src and GVA_COMMIT in src
    assert "more than 10x" in c["env/gva-exists"].statement


def _lm_metrics(ema_shift: float, item_noise: float):
    """Raw and EMA validation losses of three seeds on 50 shared sequences: EMA lower by
    ``ema_shift`` on average; each sequence's gap off it by up to +-``item_noise``."""
    rng = np.random.default_rng(0)
    base = rng.uniform(1.5, 2.5, 50)
    wobble = rng.uniform(-item_noise, item_noise, 50)
    wobble -= wobble.mean()  # the mean gap stays ema_shift
    m, items = Metrics(), {"val": {}, "ema/val": {}}
    for s, k in zip(SEEDS, SPREAD):
        raw = base + 0.01 * k
        ema = raw - ema_shift * k - wobble
        items["val"][s], items["ema/val"][s] = raw.tolist(), ema.tolist()
        m.add("lm/val", s, raw.mean())
        m.add("lm/ema/val", s, ema.mean())
        m.add("lm/dval", s, 0.02 * k)
        m.add("lm/ema/dval", s, 0.01 * k)
    return m, items


def test_the_lm_loss_claim_takes_the_shared_validation_sequences_into_its_se():
    m, items = _lm_metrics(ema_shift=0.05, item_noise=0.01)
    c = {x.id: x for x in lm_claims(m, PRESET, items)}
    assert c["lm-ema"].verdict == "holds" and c["lm-ema"].test.se_basis == "items"
    assert c["lm-ema"].test_set == "shared" and c["lm-ema-steadier"].test_set == "none"
    assert c["lm-ema-steadier"].verdict == "holds"
    # the same mean gap, but the sequences disagree: the items' SE decides, inconclusive
    m, items = _lm_metrics(ema_shift=0.05, item_noise=1.0)
    lm = {x.id: x for x in lm_claims(m, PRESET, items)}["lm-ema"]
    assert lm.test.item_se > lm.test.seed_se and lm.verdict == "inconclusive"
    assert lm.test.estimate == pytest.approx(c["lm-ema"].test.estimate, abs=0.2)
