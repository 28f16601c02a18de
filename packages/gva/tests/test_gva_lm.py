"""The character-level LM part: data, model, and the raw/EMA validation log."""

import torch
from iclr24_gva.lm import CharTransformer, LMConfig, encode, pydoc_text, train_lm


def test_pydoc_text_is_bundled_and_deterministic():
    text = pydoc_text()
    assert len(text) > 100_000 and text == pydoc_text()
    ids, vocab = encode(text[:1000])
    assert "".join(vocab[i] for i in ids) == text[:1000]


def test_transformer_is_causal():
    model = CharTransformer(20, context=16, dim=16, layers=1, heads=2).eval()
    x = torch.randint(20, (2, 16))
    y = x.clone()
    y[:, 10:] = (y[:, 10:] + 1) % 20  # change the future only
    torch.testing.assert_close(model(x)[:, :10], model(y)[:, :10])


def test_train_lm_logs_raw_and_ema():
    config = LMConfig(steps=20, eval_every=10, batch_size=4, context=16, dim=16, layers=1,
                      heads=2, val_batches=2)  # fmt: skip
    out = train_lm(config, seed=0, text=pydoc_text()[:20_000])
    assert out["step"] == [10, 20] and out["decay_from"] == 16
    assert len(out["val"]) == len(out["val_ema"]) == 2
    assert out["val"][-1] < out["val"][0] + 0.5  # finite and not diverging
