"""Agreement with the official InfoBatch sampler on the same losses.

``fixtures/official_sampler.json`` holds what the official code (NUS-HPC-AI-Lab/InfoBatch,
``infobatch/infobatch.py`` at commit 22fc44fc, not on PyPI) produced when driven epoch by
epoch with fixed losses: each epoch's kept indices and loss weights (provenance inside the
file). The official sampler reseeds NumPy's global RNG with its iteration count before each
epoch (``np.random.seed(iterations)``, iteration 1 being the first epoch); handing our pruner
a ``RandomState`` seeded the same way makes every prune draw comparable, so the kept sets and
the weights must be identical, but for the one documented difference: the official weights
keep their 1/(1-r) values into the annealing epochs when ``num_epochs * delta`` is not an
integer, ours are reset to 1.
"""

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from iclr24_infobatch import InfoBatch

FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "official_sampler.json").read_text())


def losses(epoch: int, n: int) -> torch.Tensor:
    i = np.arange(n)
    return torch.tensor(np.abs(np.sin(0.37 * i + 1.3 * epoch)) * 3 + 1e-4 * i, dtype=torch.float32)


@pytest.mark.parametrize("case", FIXTURE["cases"], ids=lambda c: f"n{c['n']}-E{c['epochs']}")
def test_same_kept_sets_and_weights_as_the_official_sampler(case):
    n, epochs = case["n"], case["epochs"]
    ib = InfoBatch(n, epochs, prune_ratio=case["prune_ratio"], delta=case["delta"])
    integer_stop = float(epochs * case["delta"]).is_integer()
    for e in range(epochs):
        ib.rng = np.random.RandomState(e + 1)  # the official iteration count of epoch e
        order = ib.next_epoch()
        assert sorted(order.tolist()) == case["kept"][e], f"epoch {e}"
        official = torch.tensor(case["weights"][e])
        if ib.is_pruning_epoch(e) or integer_stop:
            assert torch.equal(ib.weights, official), f"epoch {e}"
        else:  # the documented difference: the official weights leak into annealing
            assert torch.all(ib.weights == 1) and torch.any(official != 1), f"epoch {e}"
        ib.update(losses(e, n)[order], order)
    assert ib.pruned_samples == case["pruned_total"]
    assert any(len(k) < n for k in case["kept"])  # the fixture does exercise pruning
