"""The noise generators: the official builder's outputs (fixtures), rates, pair structure, seeds."""

import json
from pathlib import Path

import numpy as np
import pytest
from iclr24_labelwave import make_noisy_labels
from sklearn.datasets import load_digits

FIXTURE = Path(__file__).parent / "fixtures" / "official_noise_digits.json"


@pytest.mark.parametrize("case", json.loads(FIXTURE.read_text())["cases"],
                         ids=lambda c: f"{c['kind']}{c['rate']}-seed{c['seed']}")  # fmt: skip
def test_same_noisy_labels_as_the_official_builder(case):
    x, y = load_digits(return_X_y=True)
    n = json.loads(FIXTURE.read_text())["n"]
    ours = make_noisy_labels(y[:n], case["kind"], case["rate"], 10, case["seed"], features=x[:n])
    np.testing.assert_array_equal(ours.labels, case["noisy_labels"])


@pytest.fixture(scope="module")
def clean():
    rng = np.random.default_rng(0)
    return rng.integers(0, 10, 5000), rng.random((5000, 12))  # labels (n,), features (n, d)


@pytest.mark.parametrize(
    "kind,rate", [("sym", 0.4), ("pair", 0.3), ("instance", 0.4), ("sym", 0.2)]
)
def test_realised_rate_and_transition(clean, kind, rate):
    y, x = clean
    noisy = make_noisy_labels(y, kind, rate, 10, seed=3, features=x)
    assert abs(noisy.rate - rate) <= 0.03
    assert abs(np.mean(noisy.labels != y) - noisy.rate) < 1e-12
    np.testing.assert_allclose(noisy.transition.sum(axis=1), 1.0)
    if kind == "pair":  # class i only ever becomes i + 1 (mod 10)
        allowed = np.eye(10, dtype=bool) | np.roll(np.eye(10, dtype=bool), 1, axis=1)
        assert (noisy.transition[~allowed] == 0).all()
        assert (np.diag(np.roll(noisy.transition, -1, axis=1)) > 0.2).all()
        assert noisy.nominal[9, 0] == pytest.approx(rate)


def test_same_seed_same_labels_other_seed_other_labels(clean):
    y, x = clean
    a, b, c = (make_noisy_labels(y, "instance", 0.4, 10, s, features=x).labels for s in (1, 1, 2))
    np.testing.assert_array_equal(a, b)
    assert (a != c).any()


def test_bad_noise_is_refused(clean):
    y, _ = clean
    with pytest.raises(ValueError, match="noise kind"):
        make_noisy_labels(y, "asym", 0.2, 10, 0)
    with pytest.raises(ValueError, match="rate"):
        make_noisy_labels(y, "sym", 1.2, 10, 0)
    with pytest.raises(ValueError, match="features"):
        make_noisy_labels(y, "instance", 0.2, 10, 0)
