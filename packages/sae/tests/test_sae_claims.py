"""The claims' verdicts on small hand-made metrics: the untrained-SAE control makes the
interpretability claim inconclusive when it passes too; the toy claim's random dictionary;
an SAE that never reaches the IOI share fails the IOI claim."""

import math

from iclr24_sae.claims import make_checks, make_claims
from iclr24_sae.experiment import PRESETS

from iclr24_common import Metrics

PRESET = PRESETS["default"]


def _metrics(sae_interp=0.70, untrained_interp=0.30, sae_k=(8.0, 9.0, 7.5)) -> Metrics:
    m = Metrics()
    for s in (0, 1, 2):
        e = 0.01 * s  # seed noise
        m.update(s, {"toy/sae/mmcs": 0.97 + e, "toy/pca/mmcs": 0.33 + e, "toy/ica/mmcs": 0.47 - e,
                     "toy/random/mmcs": 0.30 + e, "toy/sae/r1_a0.003/unit_norm_error": 1e-7})  # fmt: skip
        for b, v in (("pca", 0.52), ("ica", 0.50), ("neurons", 0.60), ("random", 0.66)):
            m.add(f"lm/{b}/interp", s, v + e / 2)
        m.update(s, {"lm/sae/interp": sae_interp + e, "lm/untrained/interp": untrained_interp + e,
                     "lm/sae/interp_scored_frac": 0.7, "lm/untrained/interp_scored_frac": 1.0,
                     "lm/sae/alpha": 2e-3, "lm/sae/fvu": 0.12, "lm/sae/l0": 18.0, "lm/sae/dead": 0.3,
                     "lm/sae/ce_recovered": 0.94, "lm/sae/n_features": 1152.0,
                     "lm/neurons/n_features": 1152.0, "lm/sae/unit_norm_error": 1e-7,
                     "ioi/sae/k_needed": sae_k[s], "ioi/neurons/k_needed": 19.1,
                     "ioi/pca/k_needed": 38.5, "ioi/sae/full_share": 0.9,
                     "ioi/task/accuracy": 0.98, "ioi/task/logit_diff": 4.6,
                     "ioi/task/logit_diff_se": 0.3, "ioi/task/prompts": 40.0,
                     "ioi/task/corrupt_logit_diff": -5.2})  # fmt: skip
    return m


def _verdicts(m: Metrics) -> dict[str, str]:
    return {c.id: c.verdict for c in make_claims(m, PRESET)}


def test_claims_hold_on_a_trained_sae_beyond_its_controls():
    assert _verdicts(_metrics()) == {"toy/resolves-superposition": "holds",
                                     "lm/more-interpretable": "holds",
                                     "ioi/sae-localises": "holds"}  # fmt: skip


def test_untrained_sae_passing_makes_the_interpretability_claim_inconclusive():
    [lm] = [c for c in make_claims(_metrics(untrained_interp=0.75), PRESET)
            if c.id == "lm/more-interpretable"]  # fmt: skip
    assert lm.verdict == "inconclusive" and "control passes" in lm.test.reason
    assert lm.test.control["name"] == "untrained SAE" and lm.test.control["outcome"] == "holds"


def test_sae_below_the_strongest_baseline_fails_whatever_the_control():
    v = _verdicts(_metrics(sae_interp=0.19, untrained_interp=0.75))
    assert v["lm/more-interpretable"] == "fails"


def test_sae_that_never_reaches_the_share_fails_the_ioi_claim():
    v = _verdicts(_metrics(sae_k=(math.nan, math.nan, math.nan)))
    assert v["ioi/sae-localises"] == "fails"


def test_checks_say_why():
    checks = make_checks(_metrics(), PRESET, {"tokens": 320 * 127, "chunks": 5})
    assert all(c.holds and c.why for c in checks)
