"""The claims' criteria on small hand-made metrics: a stop is required, the never-fires control
(the final epoch) turns a criterion it passes too into an inconclusive verdict."""

from iclr24_labelwave.claims import make_checks, make_claims
from iclr24_labelwave.experiment import Preset
from iclr24_labelwave.train import TrainConfig

from iclr24_common import Metrics

PRESET = Preset(seeds=(0, 1, 2), noises=("sym:0.4",), holdouts=(0.1,),
                train=TrainConfig(epochs=100, batch_size=32))  # fmt: skip


def metrics(*, stopped=1.0, final=(70.0, 72.0, 71.0), lw_epoch=(22, 24, 23)) -> Metrics:
    m = Metrics()
    for s in range(3):
        m.update(s, {
            "sym0.4/labelwave/test_acc": 92.0 + s * 0.5,
            "sym0.4/labelwave/epoch": lw_epoch[s],
            "sym0.4/labelwave/stopped": stopped,
            "sym0.4/labelwave/epochs_from_oracle": abs(lw_epoch[s] - 24),
            "sym0.4/labelwave/kept_vs_logged": 0.0,
            "sym0.4/labelwave/replay_agrees": 1.0,
            "sym0.4/final/test_acc": final[s],
            "sym0.4/oracle/test_acc": 93.0 + s * 0.5,
            "sym0.4/oracle/epoch": 24,
            "sym0.4/noise/realised_rate": 0.4,
            "sym0.4/holdout10/test_acc": 91.0 + s * 0.4,
            "sym0.4/holdout10/epoch": 25,
        })  # fmt: skip
    return m


def verdicts(m: Metrics) -> dict[str, str]:
    return {c.id: c.verdict for c in make_claims(m, PRESET)}


def test_all_hold_when_the_rule_stops_near_the_oracle_and_the_end_is_bad():
    assert verdicts(metrics()) == {
        "beats-final/sym0.4": "holds", "near-oracle": "holds", "vs-holdout/sym0.4": "holds"
    }  # fmt: skip
    assert all(c.holds for c in make_checks(metrics(), PRESET))


def test_no_claim_holds_when_the_rule_never_fires():
    # the same accuracies and epochs, but patience never ran out on any run: every claim that
    # reads Label Wave's epoch fails (issue 38)
    v = verdicts(metrics(stopped=0.0))
    assert v == {"beats-final/sym0.4": "fails", "near-oracle": "fails",
                 "vs-holdout/sym0.4": "fails"}  # fmt: skip


def test_the_final_epoch_control_makes_a_criterion_it_passes_inconclusive():
    # no overfitting: the last epoch is as good as the hold-out rule and near the oracle,
    # and the last epoch lies next to the oracle's
    good_end = metrics(final=(92.5, 93.0, 93.5))
    claims = {c.id: c for c in make_claims(good_end, PRESET)}
    assert claims["vs-holdout/sym0.4"].verdict == "inconclusive"
    assert "control passes" in claims["vs-holdout/sym0.4"].test.reason
    assert claims["near-oracle"].verdict == "inconclusive"
    assert claims["beats-final/sym0.4"].verdict == "fails"
