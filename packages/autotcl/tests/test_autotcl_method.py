"""The method's invariants: shapes, the hard-concrete mask and its straight-through gradient,
the losses against hand computations, causality of the encoding, determinism, save/load."""

import numpy as np
import pytest
import torch
from iclr24_autotcl import (
    AugmentationNet,
    AutoTCL,
    TSEncoder,
    encode_series,
    gaussian_mmd,
    hard_concrete,
    hierarchical_contrastive_loss,
    info_nce,
    local_info_nce,
)
from iclr24_autotcl.autotcl import AdamW
from iclr24_autotcl.baselines import TS2Vec, centerize_vary_length_series


def tiny(**kw):
    return AutoTCL(3, output_dims=8, hidden_dims=8, depth=2, aug_hidden_dims=8, batch_size=4,
                   max_train_length=40, lr=1e-3, **kw)  # fmt: skip


@pytest.mark.parametrize("trend_head", [False, True])
def test_encoder_shapes(trend_head):
    net = TSEncoder(3, 16, 8, depth=2, trend_head=trend_head).eval()
    assert net(torch.randn(5, 37, 3)).shape == (5, 37, 16)


def test_official_ts2vec_parameter_names():
    # the layout of yuezhihan/ts2vec models/encoder.py + dilated_conv.py (depth 10, 64 -> 320):
    # input_fc, feature_extractor.net.{i}.conv{1,2}.conv, a projector on the last block only
    names = {n for n, _ in TSEncoder(1, 320, 64, 10).named_parameters()}
    expected = {"input_fc.weight", "input_fc.bias"}
    for i in range(11):
        for c in ("conv1", "conv2"):
            expected |= {f"feature_extractor.net.{i}.{c}.conv.{w}" for w in ("weight", "bias")}
    expected |= {
        "feature_extractor.net.10.projector.weight",
        "feature_extractor.net.10.projector.bias",
    }
    assert names == expected


def test_hard_mask_is_binary_and_gradients_pass_straight_through():
    torch.manual_seed(0)
    aug = AugmentationNet(3, aug_dim=4, hidden_dims=8)
    x = torch.randn(2, 30, 3)
    xa, mask, h, g = aug(x)
    assert set(mask.unique().tolist()) <= {0.0, 1.0}
    assert xa.shape == mask.shape == h.shape == g.shape == x.shape
    torch.testing.assert_close(xa, g * mask * x)
    (xa * torch.randn_like(xa)).sum().backward()
    assert aug.h.weight.grad.abs().sum() > 0  # only the straight-through path reaches h


def test_hard_concrete_deterministic_without_noise():
    logits = torch.tensor([-3.0, 0.0, 0.2, 3.0])
    soft = hard_concrete(logits, training=False, hard=False)
    expected = (torch.sigmoid(logits) * 1.05 - 0.05).clamp(0, 1)
    torch.testing.assert_close(soft, expected)
    # sigmoid(0) * 1.05 - 0.05 = 0.475 < 0.5: dropped; sigmoid(0.2) -> 0.53: kept
    assert hard_concrete(logits, training=False).tolist() == [0.0, 0.0, 1.0, 1.0]


def test_mmd_zero_for_identical_inputs_and_positive_otherwise():
    torch.manual_seed(0)
    a = torch.randn(8, 5)
    assert abs(float(gaussian_mmd(a, a))) < 1e-6
    assert float(gaussian_mmd(a, a + 1.0)) > 0.01


def test_info_nce_matches_hand_computation():
    rng = np.random.default_rng(0)
    z1, z2 = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    n1 = z1 / np.linalg.norm(z1, axis=1, keepdims=True)
    n2 = z2 / np.linalg.norm(z2, axis=1, keepdims=True)
    s = n1 @ n2.T / 0.5
    expected = -np.mean([s[i, i] - np.log(np.exp(s[i]).sum()) for i in range(4)])
    got = info_nce(torch.tensor(z1), torch.tensor(z2), temperature=0.5)
    assert float(got) == pytest.approx(expected, rel=1e-10)


def test_local_info_nce_matches_hand_computation():
    rng = np.random.default_rng(1)
    k, size = 5, 3
    z = rng.standard_normal((2, k * size, 4))  # T divisible by k: the crop starts at 0
    crops = (z / np.linalg.norm(z, axis=-1, keepdims=True)).reshape(2, k, size, 4).max(2)
    losses = []
    for b in range(2):
        s = crops[b] @ crops[b].T
        for i in range(k):
            pos = i + 1 if i < k - 1 else k - 2
            near = {0: {0, 1, 2}, k - 1: {k - 1, k - 2, k - 3}}.get(i, {i - 1, i, i + 1})
            negs = [s[i, j] for j in range(k) if j not in near]
            logits = np.array([s[i, pos], *negs])
            losses.append(-(logits[0] - np.log(np.exp(logits).sum())))
    zt = torch.tensor(z)
    assert float(local_info_nce(zt, k=k, first_only=False)) == pytest.approx(np.mean(losses))
    assert float(local_info_nce(zt, k=k)) == pytest.approx(np.mean(losses[:k]))


def test_hierarchical_loss_is_lower_for_matching_views():
    torch.manual_seed(0)
    z = torch.randn(4, 16, 8)
    assert hierarchical_contrastive_loss(z, z * 5) < hierarchical_contrastive_loss(
        z, torch.randn(4, 16, 8) * 5
    )


def test_adamw_matches_its_update_rule():
    p = torch.nn.Parameter(torch.tensor([1.0, -2.0]))
    opt = AdamW([p], lr=0.1)
    m = v = np.zeros(2)
    w = np.array([1.0, -2.0])
    for t, g in enumerate([np.array([0.5, -1.0]), np.array([0.2, 0.3])], start=1):
        p.grad = torch.tensor(g, dtype=torch.float32)
        opt.step()
        w = w * (1 - 0.1 * 0.01)
        m, v = 0.9 * m + 0.1 * g, 0.999 * v + 0.001 * g**2
        w = w - 0.1 * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
    np.testing.assert_allclose(p.detach().numpy(), w, rtol=1e-6)


def test_causal_encoding_ignores_the_future():
    torch.manual_seed(0)
    net = TSEncoder(2, 4, 8, depth=2)
    x = np.random.default_rng(0).standard_normal((1, 50, 2)).astype(np.float32)
    y = x.copy()
    y[:, 30:] += 10.0
    a = encode_series(net, x, causal=True, sliding_length=1, sliding_padding=10)
    b = encode_series(net, y, causal=True, sliding_length=1, sliding_padding=10)
    assert a.shape == (1, 50, 4)
    np.testing.assert_allclose(a[:, :30], b[:, :30], atol=1e-6)
    assert np.abs(a[:, 30:] - b[:, 30:]).max() > 1e-3
    # the sliding windows equal encoding each window on its own
    window = x[:, 20 - 10 : 21]
    np.testing.assert_allclose(a[0, 20], encode_series(net, window)[0, -1], atol=1e-5)


def test_fit_is_deterministic_and_save_load_round_trips(tmp_path):
    x = np.random.default_rng(0).standard_normal((1, 200, 3)).astype(np.float32)
    reprs = []
    for _ in range(2):
        torch.manual_seed(3)
        model = tiny()
        losses = model.fit(x, n_epochs=2)
        assert len(losses) == 2 and np.isfinite(losses).all()
        reprs.append(model.encode(x, full_series=True))
    np.testing.assert_array_equal(*reprs)
    assert reprs[0].shape == (1, 8)
    model.save(tmp_path / "m.pt")
    other = tiny()
    other.load(tmp_path / "m.pt")
    np.testing.assert_array_equal(other.encode(x, full_series=True), reprs[1])


def test_random_mask_keeps_the_requested_share():
    torch.manual_seed(0)
    model = tiny(augmentation="random", keep_ratio=0.3)
    keep = model.mask_keep_rate(np.ones((1, 2000, 3), dtype=np.float32), samples=4)
    assert keep.mean() == pytest.approx(0.3, abs=0.01)


def test_one_encode_for_autotcl_and_ts2vec():
    assert AutoTCL.encode is TS2Vec.encode
    model = TS2Vec(3, 8, 8, depth=2)
    x = np.random.default_rng(0).standard_normal((2, 30, 3)).astype(np.float32)
    np.testing.assert_array_equal(model.encode(x, full_series=True),
                                  encode_series(model.net.module, x).max(axis=1))  # fmt: skip


def test_centerize_vary_length_series_matches_the_official_rule():
    x = np.full((2, 6, 1), np.nan)
    x[0, :2, 0] = [1, 2]  # 0 before, 4 after -> shifted right by 2
    x[1, 3:, 0] = [3, 4, 5]  # 3 before, 0 after -> shifted left by 2
    out = centerize_vary_length_series(x)[..., 0]
    np.testing.assert_array_equal(out[0, 2:4], [1, 2])
    assert np.isnan(out[0, [0, 1, 4, 5]]).all()
    # official: offset = (prefix + suffix) // 2 - prefix = (3 + 0) // 2 - 3 = -2
    np.testing.assert_array_equal(out[1, 1:4], [3, 4, 5])


def test_ts2vec_trains_on_variable_length_series():
    x = np.random.default_rng(0).standard_normal((8, 20, 2)).astype(np.float32)
    x[::2, 12:] = np.nan  # padded at the end, as JapaneseVowels
    model = TS2Vec(2, 8, 8, depth=2, batch_size=4)
    losses = model.fit(x, n_iters=3)
    assert len(losses) == 3 and np.isfinite(losses).all()
    assert np.isfinite(model.encode(x, full_series=True)).all()


def test_keep_probability_is_exact_and_the_quirk_confines_it():
    from iclr24_autotcl.autotcl import hard_concrete_keep_probability, quirk_keep_range

    logits = torch.tensor([-4.0, -0.5, 0.0, 0.3, 1.0, 5.0])
    torch.manual_seed(0)
    samples = torch.stack([hard_concrete(logits) for _ in range(40_000)]).mean(0)
    exact = hard_concrete_keep_probability(logits)
    torch.testing.assert_close(samples, exact, atol=0.01, rtol=0)
    # h = sigmoid(logit) in (0, 1) as the logit (the official quirk): [0.4735, 0.7355]
    lo, hi = quirk_keep_range()
    assert (round(lo, 4), round(hi, 4)) == (0.4735, 0.7355)
    aug = AugmentationNet(3, aug_dim=4, hidden_dims=8, faithful_quirks=True)
    with torch.no_grad():
        aug.h.bias.fill_(50.0)  # h -> 1 everywhere: the quirk's ceiling, however large the logit
    p = aug.keep_probability(torch.randn(2, 30, 3))
    assert p.min() >= lo - 1e-6 and p.max() <= hi + 1e-6 and p.max() > hi - 1e-3
    free = AugmentationNet(3, aug_dim=4, hidden_dims=8)  # the paper: h a free logit
    free.load_state_dict(aug.state_dict())
    assert free.keep_probability(torch.randn(2, 30, 3)).min() > 0.999  # keeps everything


def test_the_soft_masks_keep_statistic_is_its_expected_value():
    # config_etth2_uni's soft mask (hard_mask False): what it keeps of an element on average
    from iclr24_autotcl.autotcl import quirk_keep_range, soft_concrete_mean

    logits = torch.tensor([-4.0, -0.5, 0.0, 0.3, 1.0, 5.0])
    torch.manual_seed(0)
    samples = hard_concrete(logits.expand(20_000, -1), 0.05, -0.02, hard=False).mean(0)
    mean = soft_concrete_mean(logits, 0.05, -0.02)  # the soft values' SD <= 0.3: SE < 0.0025
    torch.testing.assert_close(samples, mean, atol=0.01, rtol=0)
    assert (mean.diff() > 0).all() and mean.min() >= 0 and mean.max() <= 1
    # the quirk (logit h in (0, 1)) confines the soft mask too, to a band of its own
    lo, hi = quirk_keep_range(0.05, 0.02, hard=False)
    assert 0.45 < lo < hi < 0.75 and (lo, hi) != quirk_keep_range(0.05, 0.02)
    aug = AugmentationNet(3, aug_dim=4, hidden_dims=8, gamma_zeta=0.02, hard_mask=False,
                          faithful_quirks=True)  # fmt: skip
    with torch.no_grad():
        aug.h.bias.fill_(50.0)
    p = aug.keep_probability(torch.randn(2, 30, 3))
    assert p.min() >= lo - 1e-6 and p.max() <= hi + 1e-6 and p.max() > hi - 1e-3
    # a soft-mask AutoTCL trains and reports its keep statistic
    model = tiny(hard_mask=False, gamma_zeta=0.02)
    x = np.random.default_rng(0).standard_normal((1, 120, 3)).astype(np.float32)
    assert np.isfinite(model.fit(x, n_epochs=1)).all()
    keep = model.keep_probability(x)
    assert keep.shape == (1, 120, 3) and 0 <= keep.min() <= keep.max() <= 1


def test_the_etth2_preset_is_the_official_config_etth2_uni():
    from iclr24_autotcl.experiment import PRESETS

    # AslanDing/AutoTCL@2ca0060 config.py config_etth2_uni, the keys that
    # train_forecasting_autotcl_cost.py passes on (hidden_dims: the augmentation trunk here)
    official = dict(autotcl_batch=32, autotcl_lr=1e-05, meta_lr=0.01, local_weight=0.1,
                    reg_weight=0.1, regular_weight=0.0, aug_hidden_dims=128,
                    autotcl_max_train_length=512, gamma_zeta=0.02, aug_dim=16, gumbel_bias=0.05,
                    hard_mask=False, autotcl_epochs=80)  # fmt: skip
    preset = PRESETS["paper-cpu-etth2"]
    assert {k: getattr(preset, k) for k in official} == official
    assert preset.data == "ETTh2" and preset.horizons == (24, 48, 168, 336, 720)


def test_missing_values_stay_missing_in_the_view():
    torch.manual_seed(0)
    x = torch.randn(2, 12, 3)
    x[0, 8:] = float("nan")  # a shorter series, NaN-padded at the end
    xa, mask, _, g = AugmentationNet(3, aug_dim=4, hidden_dims=8)(x)
    assert torch.isnan(xa[0, 8:]).all() and not torch.isnan(xa[:, :8]).any()
    torch.testing.assert_close(xa[:, :8], (g * mask * x)[:, :8])


def test_autotcl_trains_on_nan_padded_series_without_zero_filling():
    x = np.random.default_rng(0).standard_normal((8, 20, 2)).astype(np.float32)
    x[::2, 12:] = np.nan  # padded at the end, as JapaneseVowels
    from iclr24_autotcl.autotcl import split_into_windows

    windows = split_into_windows(x, None)
    assert np.isnan(windows).any()  # kept for the encoder to mask (TS2Vec's convention)
    assert not np.isnan(windows[:, 4:12]).any()  # centred: the padding split on both sides
    model = AutoTCL(2, output_dims=8, hidden_dims=8, depth=2, aug_hidden_dims=8, batch_size=4)
    losses = model.fit(x, n_epochs=None, n_iters=3)
    assert len(losses) >= 1 and np.isfinite(losses).all()
    assert np.isfinite(model.encode(x, full_series=True)).all()


@pytest.mark.parametrize("length", [257, 40])
def test_the_fft_trend_head_equals_the_official_convolutions(length):
    from iclr24_autotcl.autotcl import FFT_MIN_DIMS

    torch.manual_seed(0)
    net = TSEncoder(3, FFT_MIN_DIMS, 8, depth=2, trend_head=True).eval()
    z = torch.randn(2, FFT_MIN_DIMS, length)
    # the official head: each kernel's conv with padding k - 1 both sides, last k - 1 cut, mean
    official = torch.stack([
        (conv(z)[..., : -(k - 1)] if k > 1 else conv(z))
        for k, conv in zip(net.kernels, net.tfd)
    ]).mean(0)  # fmt: skip
    got = net.trend(z)
    torch.testing.assert_close(got, official, atol=2e-5, rtol=1e-4)
    torch.testing.assert_close(net.trend(z, last=3), official[..., -3:], atol=2e-5, rtol=1e-4)
    # gradients flow through the FFT to every kernel
    net.trend(z).square().sum().backward()
    assert all(conv.weight.grad.abs().sum() > 0 for conv in net.tfd)


@pytest.mark.parametrize("dims", [8, 64])
def test_encoding_the_last_steps_only_gives_the_same_representations(dims):
    torch.manual_seed(0)
    net = TSEncoder(2, dims, 8, depth=2, trend_head=True).eval()
    x = torch.randn(3, 50, 2)
    with torch.no_grad():
        torch.testing.assert_close(net(x, last=1), net(x)[:, -1:], atol=2e-5, rtol=1e-4)
        torch.testing.assert_close(net(x, last=7), net(x)[:, -7:], atol=2e-5, rtol=1e-4)
