"""The language model whose activations are studied: the project's offline SmolLM2-135M
(through ``iclr24_llm``), a Hugging Face folder (the paper's Pythia-70M-deduped), or a tiny
random Llama on bytes (for fast tests of the plumbing)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn


@dataclass
class LM:
    model: nn.Module
    encode: Callable[[str], list[int]]
    """Text to token ids (no special tokens)."""
    decode: Callable[[list[int]], str]
    eos: int
    name: str


def tiny_llama(seed: int = 0, d: int = 32, layers: int = 2) -> nn.Module:
    """A randomly initialised Llama with a byte vocabulary (256 ids): the same module layout
    as SmolLM2, small enough for unit tests."""
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    config = LlamaConfig(vocab_size=256, hidden_size=d, intermediate_size=2 * d,
                         num_hidden_layers=layers, num_attention_heads=4,
                         num_key_value_heads=2, max_position_embeddings=512)  # fmt: skip
    return LlamaForCausalLM(config).eval()


def load_lm(spec: str, threads: int | None = None, device: str = "cpu") -> LM:
    """``"local"``: SmolLM2-135M-Instruct from the project's LLM layer; ``"tiny"``: a random
    byte-level Llama; otherwise a Hugging Face model folder."""
    if spec == "tiny":
        model = tiny_llama()
        return LM(model, lambda s: list(s.encode("utf-8")),
                  lambda ids: bytes(ids).decode("utf-8", "replace"), 10, "tiny-llama")  # fmt: skip
    if spec == "local":
        from iclr24_llm import load_llm

        backend = load_llm("local", threads=threads, device=device)
        model, tok, name = backend.model, backend.tokenizer, backend.name
    else:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        tok = AutoTokenizer.from_pretrained(Path(spec))
        model = AutoModelForCausalLM.from_pretrained(Path(spec), dtype=torch.float32)
        model.to(device).eval()
        name = Path(spec).name
    eos = tok.eos_token_id if tok.eos_token_id is not None else 0
    return LM(model, lambda s: tok(s, add_special_tokens=False).input_ids,
              lambda ids: tok.decode(ids), eos, name)  # fmt: skip


def token_sequences(lm: LM, docs: list[str], seq_len: int, n_seq: int) -> torch.Tensor:
    """The documents tokenised, joined with EOS and cut into ``n_seq`` rows of ``seq_len``
    tokens ``(n_seq, seq_len)`` (fewer rows when the text runs out)."""
    ids: list[int] = []
    for doc in docs:
        ids += lm.encode(doc) + [lm.eos]
        if len(ids) >= seq_len * n_seq:
            break
    rows = min(n_seq, len(ids) // seq_len)
    if rows < 1:
        raise ValueError(f"the text gives fewer than {seq_len} tokens")
    return torch.tensor(ids[: rows * seq_len]).reshape(rows, seq_len)
