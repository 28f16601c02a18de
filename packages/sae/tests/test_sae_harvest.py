"""Hooks on a tiny transformers Llama (the same module layout as SmolLM2): captured tensors
equal the model's own hidden states, early stopping changes nothing, harvesting is chunked
and resumable, splicing the identity changes nothing."""

import numpy as np
import torch
from iclr24_sae import capture, ce_loss, harvest, hook_module, load_harvest, run_to_hook, splice
from iclr24_sae.lm import tiny_llama

IDS = torch.randint(0, 256, (5, 12), generator=torch.Generator().manual_seed(0))


def test_hooks_equal_manual_forward():
    model = tiny_llama(layers=3)
    with torch.no_grad():
        ref = model(input_ids=IDS, output_hidden_states=True).hidden_states
    for layer in (0, 1):  # hidden_states[L + 1] is block L's output (the last one is normed)
        module = hook_module(model, layer, "resid")
        with torch.no_grad(), capture(module) as seen:
            model(input_ids=IDS)
        assert torch.allclose(seen[0], ref[layer + 1], atol=1e-6)
        assert torch.allclose(run_to_hook(model, module, IDS), ref[layer + 1], atol=1e-6)
    # the MLP output is what the block's MLP gives on its own input
    mlp = hook_module(model, 1, "mlp")
    inputs = []
    h = mlp.register_forward_pre_hook(lambda _m, args: inputs.append(args[0]))
    with torch.no_grad(), capture(mlp) as seen:
        model(input_ids=IDS)
    h.remove()
    with torch.no_grad():
        assert torch.allclose(seen[0], mlp(inputs[0]), atol=1e-6)


def test_harvest_is_chunked_and_resumable(tmp_path):
    model = tiny_llama()
    module = hook_module(model, 0)
    man = harvest(model, module, IDS, tmp_path, chunk_seqs=2, batch_size=1)
    assert man == {"chunks": 3, "d": 32, "tokens": 5 * 11}
    acts, toks = load_harvest(tmp_path)
    assert acts.shape == (55, 32) and np.array_equal(toks, IDS[:, 1:].reshape(-1).numpy())
    assert np.load(tmp_path / "acts_00000.npy").shape[0] == 2 * 11  # one chunk in memory
    ref = run_to_hook(model, module, IDS)[:, 1:].reshape(-1, 32).numpy()
    assert np.allclose(acts, ref, atol=1e-6)
    # interrupted after chunk 0: the rerun keeps chunk 0 and recomputes the rest
    (tmp_path / "acts_00001.npy").unlink()
    (tmp_path / "manifest.json").unlink()
    before = (tmp_path / "acts_00000.npy").stat().st_mtime_ns
    harvest(model, module, IDS, tmp_path, chunk_seqs=2, batch_size=1)
    assert (tmp_path / "acts_00000.npy").stat().st_mtime_ns == before
    assert np.array_equal(load_harvest(tmp_path)[0], acts)


def test_splice_identity_and_zero():
    model = tiny_llama()
    module = hook_module(model, 1)
    clean = ce_loss(model, IDS)
    with splice(module, lambda h: h):
        assert np.isclose(ce_loss(model, IDS), clean, atol=1e-6)
    with splice(module, torch.zeros_like):
        assert not np.isclose(ce_loss(model, IDS), clean, atol=1e-3)
