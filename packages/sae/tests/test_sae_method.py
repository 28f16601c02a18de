"""The SAE's invariants: unit-norm atoms, exact recovery from the ground truth, the official
loss, batched alphas equal separate runs, dead-feature tracking and resampling, save/load."""

import numpy as np
import pytest
import torch
from iclr24_sae import SparseAutoencoder, TrainConfig, mmcs, train_sae
from iclr24_sae.data import ToySuperposition


def test_decoder_rows_stay_unit_norm():
    toy = ToySuperposition(d=16, n_features=32, seed=0)
    for tied in (False, True):
        sae = SparseAutoencoder(16, 24, [1e-3, 1e-2], tied=tied, seed=1)
        train_sae(sae, toy.sample, TrainConfig(steps=30, batch_size=64, lr=1e-2))
        norms = (sae.W_enc if tied else sae.W_dec).norm(dim=-1)
        assert torch.allclose(norms, torch.ones_like(norms), atol=1e-5)
        assert torch.allclose(sae.dictionary().norm(dim=-1), torch.ones(2, 24), atol=1e-6)


def test_ground_truth_init_recovers_exactly():
    # orthonormal true features: c = ReLU(D x) gives back the non-negative codes exactly
    d, n = 16, 8
    q, _ = torch.linalg.qr(torch.randn(d, d, generator=torch.Generator().manual_seed(0)))
    truth = q[:n]  # (n, d)
    codes = torch.rand(200, n) * (torch.rand(200, n) < 0.3)
    x = codes @ truth
    sae = SparseAutoencoder(d, n, 1e-3, pre_bias=False)
    with torch.no_grad():
        sae.W_enc[0] = truth
        sae.W_dec[0] = truth
    with torch.no_grad():
        x_hat, c = sae(x)
        assert mmcs(truth.numpy(), sae.dictionary()[0].numpy()) > 1 - 1e-6
    assert torch.allclose(c[0], codes, atol=1e-5)
    assert float((x_hat[0] - x).abs().max()) < 1e-5


def test_loss_matches_official_formula():
    # official sae_ensemble.FunctionalSAE.loss: (x_hat - x)^2 mean + alpha * ||c||_1 mean
    torch.manual_seed(0)
    sae = SparseAutoencoder(8, 12, [0.01, 0.1], pre_bias=False, seed=3)
    x = torch.randn(32, 8)
    out = sae.losses(x)
    for m, alpha in enumerate([0.01, 0.1]):
        enc, dec = sae.W_enc[m], sae.W_dec[m] / sae.W_dec[m].norm(dim=-1, keepdim=True)
        c = torch.clamp(x @ enc.T + sae.b_enc[m], min=0)
        ref = ((c @ dec - x) ** 2).mean() + alpha * torch.norm(c, 1, dim=-1).mean()
        assert torch.allclose(out["loss"][m], ref, atol=1e-6)


def test_batched_alphas_equal_separate_runs():
    toy = ToySuperposition(d=12, n_features=20, seed=2)
    batched = SparseAutoencoder(12, 16, [1e-4, 3e-3], seed=5)
    alone = batched.member(1)
    cfg = TrainConfig(steps=40, batch_size=32, lr=3e-3)
    train_sae(batched, toy.sample, cfg, seed=7)
    train_sae(alone, toy.sample, cfg, seed=7)
    assert torch.allclose(batched.dictionary()[1], alone.dictionary()[0], atol=1e-5)
    assert not torch.allclose(batched.dictionary()[0], alone.dictionary()[0], atol=1e-3)


def test_dead_features_are_tracked_and_resampled():
    toy = ToySuperposition(d=12, n_features=20, seed=0)
    sae = SparseAutoencoder(12, 16, 1e-3, seed=0)
    with torch.no_grad():
        sae.b_enc[0, :4] = -100.0  # these four can never fire
    train_sae(sae, toy.sample, TrainConfig(steps=20, batch_size=64))
    assert (sae.steps_since_fired[0, :4] == 20).all()
    sae2 = SparseAutoencoder(12, 16, 1e-3, seed=0)
    with torch.no_grad():
        sae2.b_enc[0, :4] = -100.0
    info = train_sae(sae2, toy.sample, TrainConfig(steps=30, batch_size=64, resample_every=10))
    assert info["resampled"] >= 4
    assert float(sae2.b_enc[0, :4].detach().min()) > -50  # re-initialised, no longer pinned off


def test_save_load_roundtrip(tmp_path):
    sae = SparseAutoencoder(6, 10, [1e-3, 2e-3], tied=True, seed=0)
    path = sae.save(tmp_path / "sae.pt")
    back = SparseAutoencoder.load(path)
    assert back.config() == sae.config()
    x = torch.randn(5, 6)
    with torch.no_grad():
        assert torch.equal(back(x)[0], sae(x)[0])
    (tmp_path / "bad.pt").write_bytes(b"junk")
    with pytest.raises(ValueError, match="bad.pt"):
        SparseAutoencoder.load(tmp_path / "bad.pt")


def test_toy_sae_beats_pca_quickly():
    toy = ToySuperposition(d=16, n_features=24, n_active=1.5, seed=0)
    sae = SparseAutoencoder(16, 24, 1e-3, seed=0)
    train_sae(sae, toy.sample, TrainConfig(steps=600, batch_size=256, lr=1e-2))
    from iclr24_sae import pca_basis

    x = toy.sample(4000, torch.Generator().manual_seed(1)).numpy()
    truth = toy.features.numpy()
    assert (
        mmcs(truth, sae.dictionary()[0].detach().numpy())
        > mmcs(truth, pca_basis(x).directions) + 0.2
    )
    assert np.isfinite(mmcs(truth, sae.dictionary()[0].detach().numpy()))
