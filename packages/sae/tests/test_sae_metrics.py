"""The metrics on hand-made dictionaries and activations, the baselines, the toy data."""

import numpy as np
import torch
from iclr24_sae import (
    ToySuperposition,
    dead_fraction,
    dense_fraction,
    fvu,
    ica_basis,
    l0,
    loss_recovered,
    mmcs,
    neuron_basis,
    pca_basis,
    token_simulation_scores,
)


def test_fvu_l0_dead_dense_by_hand():
    x = np.array([[1.0, 0.0], [3.0, 2.0]])
    assert fvu(x, x) == 0
    assert np.isclose(fvu(x, np.tile(x.mean(0), (2, 1))), 1.0)
    codes = np.array([[0, 2.0, 0, 0], [0, 1.0, 3.0, 0]])
    assert l0(codes) == 1.5
    assert dead_fraction(codes) == 0.5
    assert dense_fraction(codes, 0.6) == 0.25
    assert loss_recovered(2.0, 2.0, 6.0) == 1.0 and loss_recovered(2.0, 4.0, 6.0) == 0.5


def test_mmcs_by_hand():
    eye = np.eye(3)
    assert mmcs(eye, eye[[2, 0, 1]] * 5) == 1.0
    rot = np.array([[1, 1, 0], [0, 0, 1.0]])  # 45 degrees from e1 and e2, exact on e3
    assert np.isclose(mmcs(eye, rot), (2 / np.sqrt(2) + 1) / 3)
    assert np.isclose(mmcs(eye, -eye), 0.0)  # signed, as the official code (SAE atoms)
    # arbitrary-sign bases (PCA, ICA, random) score each direction by its better sign
    assert mmcs(eye, -eye, signed=False) == 1.0
    flipped = np.array([[1, 0, 0], [0, -1, 0], [0, 0, 1.0]])
    assert np.isclose(mmcs(eye, flipped), 2 / 3) and mmcs(eye, flipped, signed=False) == 1.0
    both = np.concatenate([flipped, -flipped])  # the official to_nneg_dict's +w and -w
    assert mmcs(eye, both) == mmcs(eye, flipped, signed=False)


def test_simulation_score_tells_token_features_from_noise():
    rng = np.random.default_rng(0)
    tokens = rng.integers(0, 50, 4000)
    token_feature = (tokens == 7) * 2.0 + (tokens == 9) * 1.0
    noise = np.maximum(rng.standard_normal(4000), 0)
    acts = np.stack([token_feature, noise, np.zeros(4000)], 1)
    train = np.arange(4000) < 2000
    sim, conc = token_simulation_scores(acts, tokens, train, top_k=20, chunk=2)
    assert sim[0] > 0.99 and conc[0] == 1.0
    assert abs(sim[1]) < 0.2 and conc[1] < 0.5
    assert np.isnan(sim[2]) and np.isnan(conc[2])  # never fires: not scored


def test_baselines():
    rng = np.random.default_rng(0)
    mixing = rng.standard_normal((4, 4))  # non-orthogonal: PCA cannot find it
    sources = rng.laplace(size=(5000, 4))
    x = sources @ mixing.T  # columns of mixing are the true directions
    ica = ica_basis(x, seed=0)
    # ICA finds each mixing direction up to sign: MMCS over both signs of its atoms
    both = np.concatenate([ica.directions, -ica.directions])
    assert mmcs(mixing.T, both) > 0.95
    assert mmcs(mixing.T, ica.directions, signed=False) == mmcs(mixing.T, both)
    pca_dirs = pca_basis(x).directions
    assert mmcs(mixing.T, pca_dirs, signed=False) < 0.95
    pca = pca_basis(x)
    assert np.allclose(pca.directions @ pca.directions.T, np.eye(4), atol=1e-8)
    feats = neuron_basis(4).features(x[:3])
    assert feats.shape == (3, 8) and (feats >= 0).all()
    assert np.allclose(feats[:, :4] - feats[:, 4:], x[:3])


def test_toy_generator_follows_official_protocol():
    toy = ToySuperposition(d=32, n_features=64, n_active=5, decay=0.99, seed=0)
    assert torch.allclose(toy.features.norm(dim=1), torch.ones(64))
    codes = toy.sample_codes(20000, torch.Generator().manual_seed(0))
    freq = (codes > 0).float().mean(0)
    expected = 0.99 ** torch.arange(64) * 5 / 64
    assert torch.allclose(freq, expected, atol=0.01)
    assert float(codes.max()) <= 1 and float(codes.min()) >= 0


def test_interpretability_score_averages_live_features_only():
    """A dead or rare feature is left out of the dictionary's score (not scored 0); the
    share of live features is reported beside it; the paper preset keeps raw activations."""
    from iclr24_sae.experiment import PRESETS
    from iclr24_sae.studies import _score, activation_scale

    rng = np.random.default_rng(0)
    tokens = rng.integers(0, 30, 3000)
    explain = np.arange(3000) < 1500
    live = np.stack([(tokens == 3) * 1.0, (tokens == 5) * 2.0], 1)
    dead = np.zeros((3000, 2))
    one = _score("a", live, tokens, explain, 20)
    two = _score("b", np.concatenate([live, dead], 1), tokens, explain, 20)
    assert one["lm/a/interp"] > 0.99 and np.isclose(two["lm/b/interp"], one["lm/a/interp"])
    assert two["lm/b/interp_scored_frac"] == 0.5 and two["lm/b/n_features"] == 4
    assert _score("c", dead, tokens, explain, 20)["lm/c/interp"] == 0.0  # nothing live
    x = rng.standard_normal((100, 8)) * 7
    assert activation_scale(PRESETS["paper"], x) == 1.0
    s = activation_scale(PRESETS["default"], x)
    assert np.isclose(((x * s) ** 2).sum(1).mean(), 8)
