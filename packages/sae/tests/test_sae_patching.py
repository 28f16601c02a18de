"""Activation patching: nothing patched changes nothing; every neuron patched gives exactly
the corrupted behaviour; IOI prompt pairs align token by token; the curve read-out."""

import numpy as np
import torch
from iclr24_sae import hook_module
from iclr24_sae.lm import load_lm, tiny_llama
from iclr24_sae.patching import PromptPairs, features_needed, ioi_prompts, patching_curve


def _tiny_patching_case():
    """A 3-layer tiny model hooked at layer 1, and 4 prompt pairs that differ in one token."""
    model = tiny_llama(layers=3)
    module = hook_module(model, 1)
    g = torch.Generator().manual_seed(0)
    clean = torch.randint(0, 256, (4, 10), generator=g)
    corrupt = clean.clone()
    corrupt[:, 5] = (clean[:, 5] + 1) % 256
    pairs = [PromptPairs(clean, corrupt, torch.full((4,), 65), torch.full((4,), 66))]
    return model, module, pairs, g


def test_patching_curve_endpoints():
    model, module, pairs, g = _tiny_patching_case()
    d = model.config.hidden_size
    shares = patching_curve(model, module, pairs, lambda h: h, torch.eye(d), ks=[0, 4, d])
    assert abs(shares[0]) < 1e-6
    assert np.isclose(shares[-1], 1.0, atol=1e-4)
    # an orthonormal rotation (PCA-like) patched in full is exact too
    q = torch.linalg.qr(torch.randn(d, d, generator=g))[0]
    assert np.isclose(patching_curve(model, module, pairs, lambda h: h @ q, q.T, [d])[0], 1.0,
                      atol=1e-4)  # fmt: skip


def test_sae_error_node_makes_the_full_patch_exact():
    """With the SAE's error patched as a node (sparse feature circuits), every feature plus
    the error gives exactly the corrupted behaviour, though the SAE reconstructs h badly;
    with the error left clean, every feature gives less."""
    from iclr24_sae import SparseAutoencoder

    model, module, pairs, g = _tiny_patching_case()
    d = model.config.hidden_size
    sae = SparseAutoencoder(d, 2 * d, [1e-3], seed=0)  # untrained: a poor reconstruction
    scale = 3.0
    atoms = sae.dictionary()[0].detach() / scale
    encode = lambda h: sae.encode(h * scale)[0].detach()  # noqa: E731
    error = lambda h: (h - sae(h * scale)[0][0] / scale).detach()  # noqa: E731
    with_err = patching_curve(model, module, pairs, encode, atoms, [0, 2 * d], error=error)
    without = patching_curve(model, module, pairs, encode, atoms, [2 * d])
    assert np.isclose(with_err[-1], 1.0, atol=1e-4)
    assert abs(without[0] - 1.0) > 1e-2 and abs(with_err[0]) > 1e-3  # the error carries part


def test_ioi_prompts_align_and_flip_the_answer():
    lm = load_lm("tiny")
    pairs = ioi_prompts(lm.encode, 12, seed=1)
    assert sum(len(p.io) for p in pairs) == 12
    for p in pairs:
        assert p.clean.shape == p.corrupt.shape
        assert ((p.clean != p.corrupt).sum(1) >= 1).all() and (p.io != p.s).all()
        # the corrupted prompt differs only where the repeated name is
        diff = (p.clean != p.corrupt).any(0).nonzero().flatten()
        assert diff.max() - diff.min() < 8


def test_features_needed_interpolates_geometrically():
    assert features_needed([1, 2], [0.1, 0.2], 0.5) == float("inf")
    assert features_needed([4, 16], [0.6, 0.9], 0.5) == 4.0
    assert np.isclose(features_needed([4, 16], [0.0, 1.0], 0.5), 8.0)
    assert np.isclose(features_needed([0, 10], [0.0, 1.0], 0.5), 5.0)
