"""The FWM backbone: exact write/read of orthogonal bindings, norm clipping, shapes."""

import pytest
import torch
import torch.nn.functional as F
from iclr24_aid import FWM, SAR, clip_frobenius, fwm_read, fwm_write


def test_write_then_read_recovers_bindings_at_orthogonal_roles():
    torch.manual_seed(0)
    B, m = 2, 6
    memory = torch.zeros(B, m, m, m)
    eye = torch.eye(m)
    fillers = 0.5 * torch.randn(3, B, m)
    pairs = [(0, 1), (2, 3), (4, 5)]
    for (i, j), f in zip(pairs, fillers):
        memory = fwm_write(memory, eye[i].expand(B, m), eye[j].expand(B, m), f, torch.ones(B, 1))
    assert memory.flatten(1).norm(dim=1).max() < 1  # no clipping happened
    for (i, j), f in zip(pairs, fillers):
        read = fwm_read(memory, eye[i].expand(B, m), eye[j].expand(B, m)[None])
        # stored exactly f / m (official write scale), read through the LayerNorm
        torch.testing.assert_close(read, F.layer_norm(f / m, (m,)), rtol=1e-5, atol=1e-5)


def test_delta_rule_converges_to_the_filler():
    B, m = 1, 4
    memory, r = torch.zeros(B, m, m, m), torch.eye(m)[:1]
    f = torch.full((B, m), 0.1)
    for _ in range(200):
        memory = fwm_write(memory, r, r, f, torch.ones(B, 1))
    torch.testing.assert_close(
        torch.einsum("bijf,i,j->bf", memory, r[0], r[0]), f, atol=1e-3, rtol=0
    )


def test_frobenius_clipping():
    big = torch.randn(3, 4, 4, 4) * 10
    small = big / big.flatten(1).norm(dim=1)[:, None, None, None] * 0.5
    torch.testing.assert_close(clip_frobenius(big).flatten(1).norm(dim=1), torch.ones(3))
    torch.testing.assert_close(clip_frobenius(small), small)
    memory = fwm_write(big, *torch.randn(3, 3, 4), torch.ones(3, 1))
    assert memory.flatten(1).norm(dim=1).max() <= 1 + 1e-5


@pytest.mark.parametrize("decomposition", ["linear", "aid"])
def test_fwm_shapes_and_components(decomposition):
    task = SAR(5, 0.5, 0)
    batch = task.sample(3, 4, torch_rng())
    model = FWM(task.vocab_size, decomposition, embedding_size=6, hidden_size=10, mem_size=5,
                mlp_hidden=7, input_proj_size=4)  # fmt: skip
    logits, parts = model(batch.keys, batch.values, batch.flags, return_components=True)
    assert logits.shape == (3, 10, task.vocab_size)
    assert parts["binding"].shape == (3, 10, 3, 5) and parts["reasoning"].shape == (3, 10, 2, 5)
    assert parts["binding"].abs().max() <= 1  # tanh


def test_unknown_decomposition_is_refused():
    with pytest.raises(ValueError, match="decomposition"):
        FWM(10, "mlp")


def torch_rng():
    import numpy as np

    return np.random.default_rng(0)
