"""Agreement with the official TS2Vec code (github.com/yuezhihan/ts2vec): its encoder's weights
load into ours and give the same outputs on the same inputs, NaN-masked timesteps, sliding and
causal encoding included; its hierarchical contrastive loss gives the same value. The official
outputs are a fixture (provenance in fixtures/ts2vec_official.json): TS2Vec is not on PyPI."""

from pathlib import Path

import numpy as np
import pytest
import torch
from iclr24_autotcl import TSEncoder, encode_series, hierarchical_contrastive_loss
from iclr24_autotcl.baselines import TS2Vec

FIXTURE = np.load(Path(__file__).parent / "fixtures" / "ts2vec_official.npz")
STATE = {k.removeprefix("weight/"): torch.from_numpy(FIXTURE[k])
         for k in FIXTURE.files if k.startswith("weight/")}  # fmt: skip
ATOL = 1e-6  # float32; the outputs are of order 1


def official_encoder() -> TSEncoder:
    net = TSEncoder(8, 16, 16, depth=3)  # the smoke preset's encoder
    net.load_state_dict(STATE)  # strict: the same parameter names and shapes
    return net


@pytest.mark.parametrize(
    ("name", "data", "kwargs"),
    [
        ("plain", "x", {}),
        ("full_series", "x", {"full_series": True}),
        ("causal", "long", {"causal": True, "sliding_length": 1, "sliding_padding": 48}),
        ("sliding7", "long", {"sliding_length": 7, "sliding_padding": 10}),
    ],
)
def test_encoding_matches_the_official_ts2vec(name, data, kwargs):
    x = FIXTURE[data]
    assert np.isnan(x).any()  # NaN timesteps (whole and partial) are masked by both
    ours = encode_series(official_encoder(), x, **kwargs)
    official = FIXTURE[f"out/{name}"]
    if official.ndim == 3:  # official sliding encodes run on to a whole last window (126)
        official = official[:, : x.shape[1]]
    assert ours.shape == official.shape
    np.testing.assert_allclose(ours, official, rtol=0, atol=ATOL)


def test_mask_last_matches_the_official_forward():
    net = official_encoder().eval()
    with torch.no_grad():
        ours = net(torch.from_numpy(FIXTURE["x"]), mask="mask_last").numpy()
    np.testing.assert_allclose(ours, FIXTURE["out/mask_last"], rtol=0, atol=ATOL)


def test_an_official_checkpoint_loads_into_the_ts2vec_baseline():
    # the official TS2Vec.save writes the averaged model's state dict: module.<name>, n_averaged
    model = TS2Vec(8, 16, 16, depth=3)
    model.net.load_state_dict({f"module.{k}": v for k, v in STATE.items()}
                              | {"n_averaged": torch.tensor(1)})  # fmt: skip
    got = model.encode(FIXTURE["long"], causal=True, sliding_length=1, sliding_padding=48)
    np.testing.assert_allclose(got, FIXTURE["out/causal"], rtol=0, atol=ATOL)


def test_hierarchical_loss_matches_the_official_value():
    z1, z2 = torch.from_numpy(FIXTURE["z1"]), torch.from_numpy(FIXTURE["z2"])
    assert float(hierarchical_contrastive_loss(z1, z2)) == pytest.approx(
        float(FIXTURE["loss"]), abs=1e-6
    )
    assert float(hierarchical_contrastive_loss(z1, z2, temporal_unit=2)) == pytest.approx(
        float(FIXTURE["loss_temporal_unit2"]), abs=1e-6
    )
