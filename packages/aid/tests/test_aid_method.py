"""AID's invariants and its agreement with the official module."""

from pathlib import Path

import numpy as np
import pytest
import torch
from iclr24_aid import AIDDecomposition, LinearDecomposition

FIXTURE = Path(__file__).parent / "fixtures" / "official_aid_sar.npz"
# official parameter name -> ours (taewonpark/AID, SARtask/models/AID.py, class Decomposition)
NAMES = {
    "norm_pre_ff": "norm", "to_q": "to_q", "to_k": "to_k", "to_v": "to_v",
    "to_linear": "mlp", "slot_proj_linear": "out",
    "binding_linear": "initial.init.0", "reasoning_linear": "initial.init.1",
}  # fmt: skip


def test_matches_official_module_on_the_same_weights():
    """Fixture: the official ``Decomposition`` (commit 1ca659e, run in eval mode on torch 2.x,
    seed 0, input 8, 3 inputs, slot 4, MLP 6, 3 + 2 slots, 3 iterations): its inputs, weights
    and the binding / reasoning slots it returned. Our module, loaded with those weights, must
    return the same slots."""
    f = np.load(FIXTURE)
    ours = AIDDecomposition(8, 3, (3, 2), slot_size=4, iterations=3, mlp_hidden=6).eval()
    state = {}
    for key in f.files:
        if key.startswith("w:"):
            head, _, rest = key[2:].partition(".")
            state[f"{NAMES[head]}.{rest}"] = torch.from_numpy(f[key])
    ours.load_state_dict(state)  # strict: every parameter maps one to one
    with torch.no_grad():
        binding, reasoning = ours(torch.from_numpy(f["inputs"]))
    np.testing.assert_allclose(binding.numpy(), f["binding"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(reasoning.numpy(), f["reasoning"], rtol=1e-5, atol=1e-6)


def test_attention_is_softmax_over_slots_renormalised_over_inputs():
    torch.manual_seed(0)
    aid = AIDDecomposition(5, 4, 3, slot_size=6, iterations=1, mlp_hidden=7).eval()
    u = torch.randn(2, 4, 5)  # (batch, inputs, dim)
    (slots,), (attn,) = aid(u, return_attention=True)
    # by hand, from the weights: one iteration from the initial slots
    s0 = aid.initial(u)[0]
    k = torch.nn.functional.elu(u @ aid.to_k.weight.T + aid.to_k.bias) + 1
    q = torch.nn.functional.elu((s0 @ aid.to_q.weight.T + aid.to_q.bias + s0) / 6**0.5) + 1
    logits = torch.einsum("bid,bjd->bij", k, q)
    expected = torch.exp(logits) / torch.exp(logits).sum(-1, keepdim=True) + aid.eps
    expected = expected / expected.sum(1, keepdim=True)
    torch.testing.assert_close(attn, expected)
    torch.testing.assert_close(attn.sum(1), torch.ones(2, 3))  # each slot: weights over inputs
    assert slots.shape == (2, 3, 6)


def test_zero_iterations_keeps_the_initial_slots():
    torch.manual_seed(1)
    aid = AIDDecomposition(5, 4, (3, 2), slot_size=6, iterations=0).eval()
    u = torch.randn(7, 4, 5)
    for s0 in aid.initial(u):
        slots, _ = aid.attend(u, s0)
        assert torch.equal(slots, s0)


def test_iterations_change_the_slots_and_gradients_flow():
    torch.manual_seed(2)
    aid = AIDDecomposition(5, 4, 3, slot_size=6, iterations=2)
    u = torch.randn(3, 4, 5, requires_grad=True)
    s0 = aid.initial(u)[0]
    slots, _ = aid.attend(u, s0)
    assert not torch.allclose(slots, s0)
    slots.sum().backward()
    assert u.grad is not None and aid.to_q.weight.grad.abs().sum() > 0


@pytest.mark.parametrize("module", [LinearDecomposition, AIDDecomposition])
def test_shapes_for_any_leading_dims(module):
    dec = module(10, 3, (3, 2), 8)
    out = dec(torch.randn(6, 5, 3, 10))
    assert [o.shape for o in out] == [(6, 5, 3, 8), (6, 5, 2, 8)]


def test_bad_sizes_are_refused():
    with pytest.raises(ValueError):
        AIDDecomposition(4, 2, 0, 4)
    with pytest.raises(ValueError):
        AIDDecomposition(4, 2, 3, 4, iterations=-1)
