"""The linear-attention Transformer: the chunked fast-weight form equals the quadratic form,
causality, the AID layers, shapes, and the corpora."""

import math

import pytest
import torch
from iclr24_aid import LinearTransformerLM, causal_linear_attention, quadratic_linear_attention
from iclr24_aid.corpus import batchify, pydoc_corpus, wt103_paths
from iclr24_aid.linear_transformer import dpfp, feature_map
from iclr24_aid.tasks import lm_nll, lm_segment_nll

from iclr24_common import MissingDataError


@pytest.mark.parametrize("T, chunk", [(37, 8), (16, 64), (64, 16)])
def test_chunked_equals_quadratic_form(T, chunk):
    torch.manual_seed(0)
    q, k = (feature_map(torch.randn(2, 3, T, 5), "elu") for _ in range(2))
    v = torch.randn(2, 3, T, 4)
    out = causal_linear_attention(q, k, v, chunk=chunk)
    torch.testing.assert_close(out, quadratic_linear_attention(q, k, v), rtol=1e-5, atol=1e-5)
    # and the definition, step by step: out_t = sum_{j<=t} (q_t.k_j) v_j / (q_t.sum_{j<=t} k_j + eps)
    t = T // 2
    w = (q[:, :, t, None] * k[:, :, : t + 1]).sum(-1)  # (B, H, t + 1)
    ref = (w[..., None] * v[:, :, : t + 1]).sum(2) / (w.sum(-1, keepdim=True) + 1e-5)
    torch.testing.assert_close(out[:, :, t], ref, rtol=1e-5, atol=1e-5)


def test_dpfp_feature_map():
    x = torch.randn(3, 7)
    phi = dpfp(x)
    assert phi.shape == (3, 2 * 7 * 3) and (phi >= 0).all()


@pytest.mark.parametrize("decomposition, phi", [("linear", "elu"), ("aid", "elu"), ("aid", "dpfp")])
def test_causal_output_at_t_ignores_later_tokens(decomposition, phi):
    torch.manual_seed(0)
    model = LinearTransformerLM(30, decomposition, n_layer=3, d_model=16, n_head=2, d_head=8,
                                d_inner=32, aid_every=2, phi=phi).eval()  # fmt: skip
    x = torch.randint(0, 30, (2, 12))
    y = x.clone()
    y[:, 7:] = (x[:, 7:] + 1) % 30
    a, b = model(x), model(y)
    assert a.shape == (2, 12, 30)
    torch.testing.assert_close(a[:, :7], b[:, :7])
    assert (a[:, 7:] - b[:, 7:]).abs().max() > 1e-4  # later positions do see the change


def test_aid_sits_in_every_kth_layer():
    model = LinearTransformerLM(10, "aid", n_layer=6, d_model=16, n_head=2, d_head=8,
                                d_inner=16, aid_every=4)  # fmt: skip
    assert [layer.aid is not None for layer in model.layers] == [1, 0, 0, 0, 1, 0]
    base = LinearTransformerLM(10, "linear", n_layer=6, d_model=16, n_head=2, d_head=8,
                               d_inner=16, aid_every=4)  # fmt: skip
    assert all(layer.aid is None for layer in base.layers)
    with pytest.raises(ValueError, match="decomposition"):
        LinearTransformerLM(10, "mlp")


def test_adaptive_softmax_nll_and_tied_softmax():
    torch.manual_seed(0)
    x, y = torch.randint(0, 50, (2, 9)), torch.randint(0, 50, (2, 9))
    model = LinearTransformerLM(50, "aid", n_layer=1, d_model=16, n_head=2, d_head=8,
                                d_inner=16, cutoffs=(10, 30)).eval()  # fmt: skip
    nll = model.nll(x, y).item()
    assert math.isfinite(nll) and nll > 0
    tied = LinearTransformerLM(50, "linear", n_layer=1, d_model=16, n_head=2, d_head=8,
                               d_inner=16).eval()  # fmt: skip
    logits = tied(x)
    torch.testing.assert_close(
        tied.nll(x, y), torch.nn.functional.cross_entropy(logits.flatten(0, 1), y.flatten())
    )
    for m in (model, tied):  # per token: (B, T), averaging to the mean NLL
        per_token = m.token_nll(x, y)
        assert per_token.shape == y.shape and bool((per_token > 0).all())
        torch.testing.assert_close(per_token.mean(), m.nll(x, y))


def test_segment_scores_average_to_the_test_nll():
    # 16 streams of 20 tokens, segments of 6: 19 targets a stream -> 6, 6, 6, 1 per segment
    torch.manual_seed(0)
    ids = torch.randint(0, 30, (16 * 20 + 3,))
    model = LinearTransformerLM(30, "aid", n_layer=1, d_model=16, n_head=2, d_head=8,
                                d_inner=16, aid_every=1).eval()  # fmt: skip
    mean, items = lm_segment_nll(model, ids, tgt_len=6)
    assert items.shape == (16 * 4,) and math.isclose(items.mean(), mean, rel_tol=1e-9)
    data = batchify(ids, 16)  # the old reading: each segment's mean NLL x its tokens
    with torch.no_grad():
        total = sum(float(model.nll(data[:, i : min(i + 6, 19)], data[:, i + 1 : min(i + 7, 20)]))
                    * 16 * (min(i + 6, 19) - i) for i in range(0, 19, 6))  # fmt: skip
    assert math.isclose(mean, total / (16 * 19), rel_tol=1e-5)
    assert lm_nll(model, ids, tgt_len=6) == mean


def test_pydoc_corpus_and_batchify():
    corpus = pydoc_corpus()
    assert len(corpus.train) > 400_000 and len(corpus.valid) > 20_000
    assert int(corpus.train.max()) < len(corpus.vocab)
    b = batchify(torch.arange(10), 3)
    assert b.tolist() == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]


def test_wikitext103_missing_says_where(tmp_path):
    with pytest.raises(MissingDataError, match="wikitext"):
        wt103_paths(tmp_path)
    folder = tmp_path / "aid" / "wikitext-103"
    folder.mkdir(parents=True)
    for split in ("train", "valid", "test"):
        (folder / f"wiki.{split}.tokens").write_text(" = Title = \n the cat sat <unk> \n")
    from iclr24_aid import load_wikitext103

    corpus = load_wikitext103(tmp_path)
    assert corpus.vocab[0] in ("=", "<eos>") and len(corpus.train) == 9
    assert corpus.vocab[int(corpus.train[-2])] == "<unk>"
