"""Activations from any transformers causal LM: forward hooks on a residual-stream layer or an
MLP output, streamed to disk in chunks (memory-bounded, resumable), optionally running only
the layers up to the hooked one; and splicing a reconstruction back in to measure the
cross-entropy it costs."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import torch
from torch import nn

from iclr24_common import atomic_write_bytes, atomic_write_json, progress

SITES = ("resid", "mlp")


class _Stop(Exception):
    """Raised by a hook to end the forward pass once the hooked layer has run."""


def decoder_layers(model: nn.Module) -> nn.ModuleList:
    """The transformer blocks of a causal LM (Llama/SmolLM ``model.layers``, GPT-NeoX/Pythia
    ``gpt_neox.layers``, GPT-2 ``transformer.h``...): the ModuleList with one entry per layer."""
    n = getattr(model.config, "num_hidden_layers", None)
    for _, mod in model.named_modules():
        if isinstance(mod, nn.ModuleList) and (n is None or len(mod) == n):
            return mod
    raise ValueError(f"no list of {n} transformer blocks found in {type(model).__name__}")


def hook_module(model: nn.Module, layer: int, site: str = "resid") -> nn.Module:
    """The module whose output is the activation: block ``layer`` (its output is the residual
    stream after that block) or that block's MLP."""
    blocks = decoder_layers(model)
    if not 0 <= layer < len(blocks):
        raise ValueError(f"layer must be in 0..{len(blocks) - 1}, got {layer}")
    if site not in SITES:
        raise ValueError(f"site must be one of {', '.join(SITES)}, got {site!r}")
    if site == "resid":
        return blocks[layer]
    for name in ("mlp", "feed_forward", "ffn"):
        if hasattr(blocks[layer], name):
            return getattr(blocks[layer], name)
    raise ValueError(f"block {layer} of {type(model).__name__} has no MLP submodule")


def _tensor(out):
    return out[0] if isinstance(out, tuple) else out


@contextlib.contextmanager
def capture(module: nn.Module, stop: bool = False) -> Iterator[list[torch.Tensor]]:
    """Collects ``module``'s output tensors ``(batch, seq, d)``; with ``stop`` the forward pass
    ends right after it (use :func:`run_to_hook`)."""
    seen: list[torch.Tensor] = []

    def hook(_mod, _inp, out):
        seen.append(_tensor(out).detach())
        if stop:
            raise _Stop

    handle = module.register_forward_hook(hook)
    try:
        yield seen
    finally:
        handle.remove()


@torch.no_grad()
def run_to_hook(model: nn.Module, module: nn.Module, ids: torch.Tensor) -> torch.Tensor:
    """``module``'s output for ``ids`` ``(batch, seq)``, running only the layers up to it."""
    with capture(module, stop=True) as seen:
        try:
            model(input_ids=ids, use_cache=False)
        except _Stop:
            pass
    return seen[0]


@contextlib.contextmanager
def splice(module: nn.Module, fn: Callable[[torch.Tensor], torch.Tensor]):
    """Replace ``module``'s output ``h`` ``(batch, seq, d)`` by ``fn(h)`` during the forward."""

    def hook(_mod, _inp, out):
        if isinstance(out, tuple):
            return (fn(out[0]), *out[1:])
        return fn(out)

    handle = module.register_forward_hook(hook)
    try:
        yield
    finally:
        handle.remove()


@torch.no_grad()
def ce_loss(model: nn.Module, ids: torch.Tensor, batch_size: int = 8) -> float:
    """Mean next-token cross-entropy over ``ids`` ``(n_seq, seq)``."""
    total, count = 0.0, 0
    for lo in range(0, len(ids), batch_size):
        x = ids[lo : lo + batch_size]
        logits = model(input_ids=x, use_cache=False).logits[:, :-1]
        loss = nn.functional.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), x[:, 1:].reshape(-1), reduction="sum"
        )
        total, count = total + float(loss), count + x[:, 1:].numel()
    return total / count


def harvest(
    model: nn.Module,
    module: nn.Module,
    ids: torch.Tensor,
    out_dir: str | Path,
    *,
    chunk_seqs: int = 64,
    batch_size: int = 8,
    skip_first: int = 1,
    stop: bool = True,
) -> dict:
    """Stream ``module``'s activations for the sequences ``ids`` ``(n_seq, seq)`` into
    ``out_dir/acts_<i>.npy`` (float32 ``(tokens, d)``) and ``tokens_<i>.npy`` (the token ids),
    ``chunk_seqs`` sequences per chunk: one chunk is in memory at a time. A chunk already on
    disk is kept (resume). The first ``skip_first`` positions of every sequence are dropped
    (the first token's residual is an outlier "attention sink" in most LMs). ``stop`` runs
    only the layers up to the hook. Returns the manifest (also written as
    ``manifest.json``, last, when every chunk is done)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    n_chunks = -(-len(ids) // chunk_seqs)
    for i in progress(range(n_chunks), desc="harvest", total=n_chunks):
        if (out / f"acts_{i:05d}.npy").exists() and (out / f"tokens_{i:05d}.npy").exists():
            continue
        chunk = ids[i * chunk_seqs : (i + 1) * chunk_seqs]
        acts = []
        for lo in range(0, len(chunk), batch_size):
            x = chunk[lo : lo + batch_size]
            if stop:
                h = run_to_hook(model, module, x)
            else:
                with torch.no_grad(), capture(module) as seen:
                    model(input_ids=x, use_cache=False)
                h = seen[0]
            acts.append(h[:, skip_first:].reshape(-1, h.shape[-1]).float().cpu().numpy())
        _save_npy(out / f"tokens_{i:05d}.npy", chunk[:, skip_first:].reshape(-1).numpy())
        _save_npy(out / f"acts_{i:05d}.npy", np.concatenate(acts))
    manifest = {"chunks": n_chunks, "d": int(np.load(out / "acts_00000.npy", mmap_mode="r").shape[1]),
                "tokens": int(len(ids) * (ids.shape[1] - skip_first))}  # fmt: skip
    atomic_write_json(out / "manifest.json", manifest)
    return manifest


def _save_npy(path: Path, arr: np.ndarray) -> None:
    import io

    buf = io.BytesIO()
    np.save(buf, arr)
    atomic_write_bytes(path, buf.getvalue())


def load_harvest(out_dir: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """All harvested activations ``(tokens, d)`` and token ids ``(tokens,)``."""
    out = Path(out_dir)
    manifest = json.loads((out / "manifest.json").read_text())
    acts = [np.load(out / f"acts_{i:05d}.npy") for i in range(manifest["chunks"])]
    toks = [np.load(out / f"tokens_{i:05d}.npy") for i in range(manifest["chunks"])]
    return np.concatenate(acts), np.concatenate(toks)
