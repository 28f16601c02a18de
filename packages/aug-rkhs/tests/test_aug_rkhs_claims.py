"""The claims' criteria on small hand-made metrics (fast): an end-point best rate fails the
sweet spot, and the untrained-encoder control makes the masked-LM sweet spot inconclusive."""

from types import SimpleNamespace

from iclr24_aug_rkhs.claims import _mlm_sweet_spot, _sweet_spot

from iclr24_common import Metrics

SEEDS = (0, 1, 2, 3)
JITTER = (0.0, 0.002, -0.001, 0.001)


def _sweet_metrics(curve: dict[float, float]) -> Metrics:
    m = Metrics()
    for a, e in curve.items():
        for s, j in zip(SEEDS, JITTER):
            m.add(f"finite/a{a:g}/error", s, e + j)
            m.add(f"ideal_ridge/a{a:g}/error", s, 0.05)
    return m


PRESET = SimpleNamespace(alphas=(0.05, 0.1, 0.5, 0.9), low_rate=0.1, sweet_factor=2.0,
                         vocab_size=3, length=4, n_pretrain=50, d=1, n_labels=50)  # fmt: skip


def test_sweet_spot_holds_with_an_interior_best_rate():
    claim = _sweet_spot(_sweet_metrics({0.05: 0.3, 0.1: 0.2, 0.5: 0.08, 0.9: 0.1}), PRESET)
    assert claim.verdict == "holds", claim.test


def test_sweet_spot_fails_when_the_best_rate_is_an_end():
    # monotone: the strongest masking is best, so "too strong hurts" is false
    claim = _sweet_spot(_sweet_metrics({0.05: 0.3, 0.1: 0.2, 0.5: 0.09, 0.9: 0.08}), PRESET)
    assert claim.verdict == "fails"


def _mlm_metrics(curve: dict[float, float], untrained: float) -> Metrics:
    m = Metrics()
    for s, j in zip(SEEDS, JITTER):
        for a, e in curve.items():
            m.add(f"mlm/a{a:g}/probe_error", s, e + j)
        m.add("mlm/untrained/probe_error", s, untrained + j)
        m.add("mlm/char_histogram/probe_error", s, 0.7)
        m.add("mlm/chance_error", s, 0.875)
    return m


MLM = SimpleNamespace(mlm_rates=(0.05, 0.3, 0.8), mlm_layers=2, mlm_hidden=64, mlm_steps=10,
                      mlm_batch=8, mlm_length=16, mlm_classes=8)  # fmt: skip


def test_mlm_sweet_spot_holds_when_pretraining_beats_the_untrained_encoder():
    claim = _mlm_sweet_spot(_mlm_metrics({0.05: 0.8, 0.3: 0.7, 0.8: 0.8}, untrained=0.85), MLM)
    assert claim.verdict == "holds"


def test_mlm_sweet_spot_is_inconclusive_when_the_untrained_encoder_also_passes():
    claim = _mlm_sweet_spot(_mlm_metrics({0.05: 0.8, 0.3: 0.7, 0.8: 0.8}, untrained=0.6), MLM)
    assert claim.verdict == "inconclusive" and "control passes" in claim.test.reason
