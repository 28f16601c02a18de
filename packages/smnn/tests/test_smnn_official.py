"""Agreement with the official implementation (github.com/retna319/SMNN, ``SMNN.py``).

``fixtures/official_smnn_outputs.json`` holds the official classes' outputs on fixed inputs,
with their weights (provenance inside the file): our modules loaded with the same weights must
give the same outputs. The official network takes its monotone columns increasing (its
scripts flip decreasing ones in preprocessing); ours negates a declared -1 column inside.
"""

import json
from pathlib import Path

import pytest
import torch
from iclr24_smnn import MLP, SMNN, SameStructureNet, SMNNConfig, official_state_dict

FIXTURE = json.loads(
    (Path(__file__).parent / "fixtures" / "official_smnn_outputs.json").read_text()
)
X = torch.tensor(FIXTURE["X"], dtype=torch.float64)  # (32, 6)


def _load(net: torch.nn.Module, case: dict) -> torch.nn.Module:
    sd = {k: torch.tensor(v, dtype=torch.float64) for k, v in case["state_dict"].items()}
    net = net.double()
    net.load_state_dict(official_state_dict(sd), strict=True)
    return net.eval()


@pytest.mark.parametrize("name, cls", [("smnn", SMNN), ("same", SameStructureNet)])
def test_partially_connected_networks_match_official(name, cls):
    case = FIXTURE[name]
    c = case["config"]
    cfg = SMNNConfig(tuple(c["exp"]), tuple(c["relu"]), tuple(c["conf"]))
    net = _load(cls(6, c["mono_feature"], cfg), case)
    with torch.no_grad():
        y = net(X)
    expected = torch.tensor(case["y"], dtype=torch.float64)
    assert y.shape == expected.shape == (32,)
    assert torch.allclose(y, expected, rtol=1e-12, atol=1e-9)


def test_mlp_matches_official():
    case = FIXTURE["mlp"]
    net = _load(MLP(6, tuple(case["config"]["hidden"])), case)
    with torch.no_grad():
        assert torch.allclose(net(X), torch.tensor(case["y"], dtype=torch.float64), atol=1e-12)


def test_decreasing_feature_is_the_official_flipped_column():
    """Declaring feature 4 decreasing equals the official model on the column negated."""
    case = FIXTURE["smnn"]
    c = case["config"]
    cfg = SMNNConfig(tuple(c["exp"]), tuple(c["relu"]), tuple(c["conf"]))
    net = _load(SMNN(6, {1: +1, 4: -1}, cfg), case)
    flipped = X.clone()
    flipped[:, 4] = -flipped[:, 4]
    with torch.no_grad():
        assert torch.allclose(net(flipped), torch.tensor(case["y"], dtype=torch.float64),
                              rtol=1e-12, atol=1e-9)  # fmt: skip
