"""Agreement with SAELens' standard SAE (sae-lens 6.5.3, ``StandardTrainingSAE``) on the same
weights and inputs, from a fixture SAELens itself wrote (``fixtures/make_saelens_fixture.py``:
SAELens cannot be installed beside this workspace's lock; the README says why).

Same model (``c = ReLU(W_enc (x - b_dec) + b_enc)``, ``x_hat = W_dec^T c + b_dec``); the losses
differ only in scale: SAELens sums the squared error over ``d`` and weights each code by its
decoder row's norm (1 here: our rows are unit), so with ``alpha = l1_coefficient / d`` our
loss is SAELens' divided by ``d``, and so are the gradients."""

import json
from pathlib import Path

import torch
from iclr24_sae import SparseAutoencoder

FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "saelens_standard.json").read_text())


def _t(name):
    return torch.tensor(FIXTURE[name], dtype=torch.float64)


def test_forward_loss_and_gradients_agree_with_saelens():
    assert FIXTURE["provenance"].startswith("sae-lens 6.5.3")
    w_enc, w_dec, x = _t("W_enc"), _t("W_dec"), _t("x")
    d, n_dict = w_enc.shape
    sae = SparseAutoencoder(d, n_dict, [FIXTURE["l1_coefficient"] / d]).double()
    with torch.no_grad():
        sae.W_enc.copy_(w_enc.T[None])  # ours (k, n_dict, d); SAELens (d, n_dict)
        sae.W_dec.copy_(w_dec[None])
        sae.b_enc.copy_(_t("b_enc")[None])
        sae.b_dec.copy_(_t("b_dec")[None])
    x_hat, c = sae(x)
    torch.testing.assert_close(c[0], _t("feature_acts"), rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(x_hat[0], _t("sae_out"), rtol=1e-12, atol=1e-12)
    assert (c[0] > 0).any() and (c[0] == 0).any()  # the ReLU is exercised both ways
    terms = sae.losses(x)
    torch.testing.assert_close(terms["mse"][0] * d, torch.tensor(FIXTURE["mse_loss"]).double())
    l1 = terms["l1"][0] * FIXTURE["l1_coefficient"]
    torch.testing.assert_close(l1, torch.tensor(FIXTURE["l1_loss"]).double())
    loss = terms["loss"][0]
    torch.testing.assert_close(loss * d, torch.tensor(FIXTURE["loss"]).double())
    loss.backward()
    g = {k: torch.tensor(v, dtype=torch.float64) / d for k, v in FIXTURE["grads"].items()}
    torch.testing.assert_close(sae.W_enc.grad[0], g["W_enc"].T)
    torch.testing.assert_close(sae.b_enc.grad[0], g["b_enc"])
    torch.testing.assert_close(sae.b_dec.grad[0], g["b_dec"])
    # our forward uses unit_rows(W_dec): at unit rows its gradient is SAELens' projected off
    # each row's own direction (the sphere's tangent), which is what an update along it keeps
    gw = g["W_dec"]
    tangent = gw - (gw * w_dec).sum(1, keepdim=True) * w_dec
    torch.testing.assert_close(sae.W_dec.grad[0], tangent)
