"""Activation patching: nothing patched changes nothing; every neuron patched at the last
position of prompts that differ only there gives exactly the corrupted behaviour."""

import numpy as np
import torch
from iclr24_sae import hook_module
from iclr24_sae.lm import tiny_llama
from iclr24_sae.patching import features_needed, patching_curve


def test_patching_curve_endpoints():
    model = tiny_llama(layers=3)
    module = hook_module(model, 1)
    g = torch.Generator().manual_seed(0)
    clean = torch.randint(0, 256, (4, 10), generator=g)
    corrupt = clean.clone()
    corrupt[:, -1] = (clean[:, -1] + 1) % 256

    def metric(logits):  # logit difference of two fixed tokens at the last position
        return logits[:, -1, 65] - logits[:, -1, 66]

    d = model.config.hidden_size
    shares = patching_curve(model, module, clean, corrupt, metric, lambda h: h, torch.eye(d),
                            ks=[0, 4, d])  # fmt: skip
    assert abs(shares[0]) < 1e-6
    assert np.isclose(shares[-1], 1.0, atol=1e-4)
    assert features_needed([0, 4, d], shares, 0.99) == d
    assert features_needed([1, 2], [0.1, 0.2], 0.5) == float("inf")
