"""Agreement with the official AutoTCL networks (AslanDing/AutoTCL 2ca0060,
``models/CoTs_encoder.py``, ``AutoTCL_CoST.py``): the augmentation network is a CoST encoder
with the trend head (``augsharenet``) and two sigmoid heads; its parameter count and its forward
match the official modules', and the CoST encoder's trend path has no dropout in training. The
official outputs are a fixture (provenance and the generating script in
fixtures/autotcl_official.json): the AutoTCL repository is not packaged and has no licence."""

import json
from pathlib import Path

import numpy as np
import torch
from iclr24_autotcl import AugmentationNet, TSEncoder

HERE = Path(__file__).parent / "fixtures"
FIXTURE = np.load(HERE / "autotcl_official.npz")
COUNTS = json.loads((HERE / "autotcl_official.json").read_text())["parameter_counts"]
ATOL = 1e-6


def state(prefix: str) -> dict[str, torch.Tensor]:
    return {k.removeprefix(prefix): torch.from_numpy(FIXTURE[k])
            for k in FIXTURE.files if k.startswith(prefix)}  # fmt: skip


def official_augmentation() -> AugmentationNet:
    aug = AugmentationNet(4, aug_dim=6, hidden_dims=8, depth=1)  # the fixture's test size
    aug.trunk.load_state_dict(state("aug/trunk/"))  # strict: the official names and shapes
    aug.h.load_state_dict(state("aug/h/"))
    aug.g.load_state_dict(state("aug/g/"))
    return aug


def count(module) -> int:
    return sum(p.numel() for p in module.parameters())


def test_parameter_counts_match_the_official_networks():
    aug = AugmentationNet(4, aug_dim=6, hidden_dims=8, depth=1)
    assert count(aug.trunk) == 9986 == COUNTS["augsharenet (C=4, hidden 8, aug_depth 1, aug_dim 6)"]
    assert count(aug.h) + count(aug.g) == COUNTS["factor_augnet + augmentation_projector"] == 56
    # the official run's size: 8 channels, hidden 64, AutoTCL's default aug_depth 3, aug_dim 16
    official_run = COUNTS["augsharenet official run (C=8, hidden 64, aug_depth 3, aug_dim 16)"]
    assert count(AugmentationNet(8).trunk) == official_run
    net = TSEncoder(4, 8, 8, depth=2, trend_head=True)
    assert count(net) == COUNTS["net (C=4, hidden 8, depth 2, 8 out)"]


def test_augmentation_forward_matches_the_official_modules():
    aug = official_augmentation()
    x = torch.from_numpy(FIXTURE["x"])
    with torch.no_grad():
        e = aug.trunk(x)
        h, g = torch.sigmoid(aug.h(e)), torch.sigmoid(aug.g(e))
        xa, mask, h2, g2 = aug(x, sample=False)
    np.testing.assert_allclose(e.numpy(), FIXTURE["out/embedding"], rtol=0, atol=ATOL)
    np.testing.assert_allclose(h.numpy(), FIXTURE["out/weight_h"], rtol=0, atol=ATOL)
    np.testing.assert_allclose(g.numpy(), FIXTURE["out/weight_s"], rtol=0, atol=ATOL)
    torch.testing.assert_close(h2, h)
    torch.testing.assert_close(g2, g)
    torch.testing.assert_close(xa, g * mask * x)  # x' = g(x) * m(h(x)) * x


def test_cost_trend_path_has_no_dropout_in_training():
    net = TSEncoder(4, 8, 8, depth=2, trend_head=True)
    net.load_state_dict(state("net/"))
    net.train()  # the official CoSTEncoder's forward never applies its repr_dropout
    x = torch.from_numpy(FIXTURE["x"])
    with torch.no_grad():
        out = net(x, mask="all_true")
    np.testing.assert_allclose(out.numpy(), FIXTURE["out/net_trend_train"], rtol=0, atol=ATOL)
