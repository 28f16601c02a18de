"""The one training loop: Adam on minibatches, L1 warm-up, unit-norm decoder after every
step, dead-feature tracking and (optionally) resampling of dead features."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from iclr24_common import progress

from .sae import SparseAutoencoder, unit_rows


@dataclass(frozen=True)
class TrainConfig:
    steps: int = 2000
    """The library's default; the presets set their own (``steps``: smoke 150, default 1000,
    paper 100000; see the README)."""
    batch_size: int = 256
    """Official default (``config.py`` TrainArgs.batch_size = 256)."""
    lr: float = 1e-3
    """Adam learning rate (official ``config.py``: lr = 1e-3)."""
    l1_warmup_steps: int = 0
    """Steps over which alpha ramps linearly from 0 (a peers' option; the paper has none)."""
    resample_every: int = 0
    """Every this many steps, re-initialise features dead for the whole window (0: never;
    the paper does not resample, Anthropic's "Towards monosemanticity" does)."""


def _resample(sae: SparseAutoencoder, opt: torch.optim.Adam, x: torch.Tensor, gen) -> int:
    """Re-initialise dead features (``steps_since_fired`` >= the window) of every member to
    inputs it reconstructs worst, sampled with probability ~ squared error; reset their Adam
    moments. Returns how many features were resampled."""
    dead = sae.steps_since_fired >= sae._window  # (k, n_dict)
    if not dead.any():
        return 0
    with torch.no_grad():
        x_hat, _ = sae(x)
        err = (x_hat - x).pow(2).sum(-1)  # (k, batch)
        w = sae.W_enc
        alive_norm = w.norm(dim=-1)[~dead].mean() if (~dead).any() else torch.tensor(1.0)
        for m in range(sae.k):
            idx = dead[m].nonzero().flatten()
            if len(idx) == 0:
                continue
            pick = torch.multinomial(err[m] + 1e-12, len(idx), replacement=True, generator=gen)
            new = unit_rows(x[pick] - (sae.b_dec[m] if sae.pre_bias else 0))
            if not sae.tied:
                sae.W_dec[m, idx] = new
            w[m, idx] = new * (0.2 * alive_norm if not sae.tied else 1.0)
            sae.b_enc[m, idx] = 0.0
            for p in [w, sae.b_enc] + ([] if sae.tied else [sae.W_dec]):
                st = opt.state.get(p)
                if st:
                    st["exp_avg"][m, idx] = 0.0
                    st["exp_avg_sq"][m, idx] = 0.0
        sae.steps_since_fired[dead] = 0
    return int(dead.sum())


def train_sae(
    sae: SparseAutoencoder,
    data: torch.Tensor | Callable[[int, torch.Generator], torch.Tensor],
    config: TrainConfig,
    *,
    seed: int = 0,
    desc: str = "sae",
) -> dict[str, list[float]]:
    """Train ``sae`` (all its alphas at once) on ``data``: a tensor ``(n, d)`` sampled in
    random minibatches, or a function ``(batch_size, generator) -> (batch, d)`` that makes
    fresh data (the toy model). Returns per-member final ``mse``, ``l1`` and the number of
    features resampled."""
    gen = torch.Generator().manual_seed(seed)
    if isinstance(data, torch.Tensor):
        tensor = data

        def data(b, g):  # noqa: F811
            return tensor[torch.randint(len(tensor), (b,), generator=g)]

    opt = torch.optim.Adam(sae.parameters(), lr=config.lr)
    sae._window = max(1, config.resample_every)
    resampled = 0
    sae.train()
    for step in progress(range(config.steps), desc=desc, total=config.steps):
        x = data(config.batch_size, gen)
        warm = min(1.0, (step + 1) / config.l1_warmup_steps) if config.l1_warmup_steps else 1.0
        out = sae.losses(x, alpha_scale=warm)
        opt.zero_grad(set_to_none=True)
        out["loss"].sum().backward()
        opt.step()
        sae.normalise_decoder_()
        with torch.no_grad():
            fired = (out["c"] > 0).any(1)  # (k, n_dict)
            sae.steps_since_fired += 1
            sae.steps_since_fired[fired] = 0
        if config.resample_every and (step + 1) % config.resample_every == 0:
            if step + 1 < config.steps:  # never resample right before the end
                resampled += _resample(sae, opt, x, gen)
    sae.eval()
    return {"mse": out["mse"].tolist(), "l1": out["l1"].tolist(), "resampled": resampled}
