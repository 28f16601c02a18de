"""ReLoRA: High-Rank Training Through Low-Rank Updates.

Lialin, Muckatira, Shivagunde & Rumshisky, ICLR 2024, https://arxiv.org/abs/2307.05695;
official code https://github.com/Guitaricet/relora (``peft_pretraining/relora.py``,
``peft_pretraining/training_utils.py``, ``torchrun_main.py``).

A ReLoRA layer computes (Algorithm 1 of the paper)

    y = W x + b + s * B (A dropout(x)),      s = alpha / r,  A: (r, d_in),  B: (d_out, r)

with W frozen. Every ``relora_steps`` optimizer steps the low-rank product is merged,

    W <- W + s * B A,     A ~ kaiming-uniform (re-drawn),     B <- 0,

so the network's function is unchanged, and the Adam states of A and B are mostly reset
(magnitude pruning keeps the largest 10%). Each cycle adds an update of rank <= r, so the total
update W_final - W_start is a sum of low-rank steps whose rank can grow to min(d_in, d_out):
"high-rank training through low-rank updates". The learning rate drops to 0 at each merge and
warms up again over a few steps (the "jagged" cosine schedule of the paper's Figure 2).

The pure low-rank baseline of the paper ("LoRA" in its Table 2) has no W at all: y = s B A x + b
with both factors trained from a kaiming init (``lora_only`` in the official code).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import torch
from torch import nn

TARGETS = ("attn", "attention", "mlp")
"""Linear layers wrapped by default: attention and MLP (official ``target_modules``)."""

PRUNE_MODES = ("magnitude", "magnitude_independent", "random", "reset", "none")


# ---------------------------------------------------------------- small helpers


def _kaiming_(weight: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """nn.Linear's default init, kaiming_uniform(a=sqrt(5)): U(-1/sqrt(fan_in), 1/sqrt(fan_in)),
    drawn from ``generator`` so that every DDP rank can draw the same A."""
    bound = 1.0 / math.sqrt(weight.shape[1])
    with torch.no_grad():
        fresh = torch.rand(weight.shape, generator=generator, dtype=torch.float32)
        weight.copy_(((fresh * 2 - 1) * bound).to(weight))
    return weight


def effective_rank(update: torch.Tensor, rel_tol: float = 0.1) -> int:
    """Number of singular values of ``update`` above ``rel_tol`` x the largest one (the paper's
    Figure 4 counts singular values above a fixed threshold; a relative one does not depend on
    the weights' scale)."""
    s = torch.linalg.svdvals(update.detach().double())
    return int((s > rel_tol * s[0]).sum()) if s.numel() and s[0] > 0 else 0


# ---------------------------------------------------------------- the layer


class ReLoRALinear(nn.Module):
    """A linear layer with a frozen full-rank W and a trainable low-rank s * B A (or, with
    ``lora_only``, the low-rank product alone)."""

    def __init__(
        self,
        base: nn.Linear,
        r: int,
        alpha: float = 32.0,
        dropout: float = 0.1,
        lora_only: bool = False,
    ):
        super().__init__()
        if r < 1:
            raise ValueError("r must be >= 1")
        d_out, d_in = base.weight.shape
        self.in_features, self.out_features = d_in, d_out
        self.r, self.alpha, self.scaling = r, alpha, alpha / r  # official lora_alpha=32
        self.lora_only = lora_only
        self.dropout = nn.Dropout(dropout)  # official lora_dropout=0.1
        dev, dt = base.weight.device, base.weight.dtype
        self.lora_A = nn.Parameter(torch.empty(r, d_in, device=dev, dtype=dt))  # (r, d_in)
        self.lora_B = nn.Parameter(torch.empty(d_out, r, device=dev, dtype=dt))  # (d_out, r)
        _kaiming_(self.lora_A)
        if lora_only:  # official lora_only: both factors kaiming, no base weight
            self.weight = None
            _kaiming_(self.lora_B)
        else:
            # W frozen; B = 0 so the wrapped network computes what the base did. (The official
            # code also zeroes A at wrap time, leaving the first cycle untrained: its issue #18.)
            self.weight = nn.Parameter(base.weight.detach().clone(), requires_grad=False)
            nn.init.zeros_(self.lora_B)
        self.bias = base.bias  # stays trainable, as in the official code
        self.merges = 0

    def delta(self) -> torch.Tensor:
        """The low-rank update s * B A, (d_out, d_in)."""
        return self.scaling * (self.lora_B @ self.lora_A)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (..., d_in) -> (..., d_out)
        low = (self.dropout(x) @ self.lora_A.T) @ self.lora_B.T * self.scaling
        if self.lora_only:
            return low + self.bias if self.bias is not None else low
        return nn.functional.linear(x, self.weight, self.bias) + low

    @torch.no_grad()
    def merge_and_reinit(self, generator: torch.Generator | None = None) -> None:
        """W += s B A; A re-drawn (kaiming), B = 0: the layer's function is unchanged."""
        if self.lora_only:
            raise RuntimeError("a lora_only layer has no W to merge into")
        self.weight += self.delta()
        _kaiming_(self.lora_A, generator)
        self.lora_B.zero_()
        self.merges += 1

    def merged_weight(self) -> torch.Tensor:
        """The dense weight this layer computes with (dropout off)."""
        return self.delta() if self.lora_only else self.weight + self.delta()

    def extra_repr(self) -> str:
        return (
            f"in={self.in_features}, out={self.out_features}, r={self.r}, alpha={self.alpha}, "
            f"lora_only={self.lora_only}"
        )


# ---------------------------------------------------------------- the model


def wrap_relora(
    model: nn.Module,
    r: int,
    alpha: float = 32.0,
    target: Sequence[str] = TARGETS,
    dropout: float = 0.1,
    lora_only: bool = False,
) -> nn.Module:
    """Replace every nn.Linear whose name contains one of ``target`` by a ReLoRALinear, in place.

    Trainable afterwards (as in the official ``torchrun_main.py``): the LoRA factors, norms,
    embeddings, lm_head and biases; the wrapped W are frozen. Returns the model.
    """
    names = target_names(model, target)
    if not names:
        raise ValueError(f"no nn.Linear module name contains any of {tuple(target)}")
    for name in names:
        parent_name, _, child = name.rpartition(".")
        parent = model.get_submodule(parent_name) if parent_name else model
        setattr(parent, child, ReLoRALinear(getattr(parent, child), r, alpha, dropout, lora_only))
    for p in model.parameters():
        p.requires_grad_(True)
    for m in relora_layers(model):
        if m.weight is not None:
            m.weight.requires_grad_(False)
    return model


def target_names(model: nn.Module, target: Sequence[str] = TARGETS) -> list[str]:
    """Names of the nn.Linear modules whose name contains one of ``target`` (lm_head never)."""
    return [
        n
        for n, m in model.named_modules()
        if isinstance(m, nn.Linear) and any(t in n for t in target) and "lm_head" not in n
    ]


def relora_layers(model: nn.Module) -> list[ReLoRALinear]:
    return [m for m in model.modules() if isinstance(m, ReLoRALinear)]


def lora_parameters(model: nn.Module) -> list[nn.Parameter]:
    return [p for m in relora_layers(model) for p in (m.lora_A, m.lora_B)]


def merge_and_reinit(model: nn.Module, generator: torch.Generator | None = None) -> int:
    """Merge every ReLoRA layer; with the same ``generator`` seed every DDP rank re-draws the
    same A. Returns the number of layers merged."""
    layers = relora_layers(getattr(model, "module", model))
    for layer in layers:
        layer.merge_and_reinit(generator)
    return len(layers)


@torch.no_grad()
def unwrap_relora(model: nn.Module) -> nn.Module:
    """Replace each ReLoRALinear by a plain nn.Linear holding its merged weight, in place, so
    that ``save_pretrained`` writes an ordinary transformers model."""
    for name, m in list(model.named_modules()):
        if isinstance(m, ReLoRALinear):
            dense = nn.Linear(m.in_features, m.out_features, bias=m.bias is not None)
            dense.to(m.lora_A.device, m.lora_A.dtype)
            dense.weight.copy_(m.merged_weight())
            if m.bias is not None:
                dense.bias = m.bias
            parent_name, _, child = name.rpartition(".")
            setattr(model.get_submodule(parent_name) if parent_name else model, child, dense)
    return model


# ---------------------------------------------------------------- the optimizer reset


@torch.no_grad()
def _quantile_mask(t: torch.Tensor, ratio: float) -> torch.Tensor:
    # official magnitude_pruning: keep entries strictly above the ratio-quantile of |t|
    mag = t.abs()
    return mag > torch.quantile(mag.flatten().float(), ratio).to(mag.dtype)


@torch.no_grad()
def _topk_mask(t: torch.Tensor, ratio: float) -> torch.Tensor:
    # keep entries above the ceil(ratio * n)-th smallest |t|: at least ratio of them are zeroed
    # (the interpolated quantile can zero a hair fewer)
    mag = t.abs().flatten()
    k = math.ceil(ratio * mag.numel())
    if k == 0:
        return torch.ones_like(t, dtype=torch.bool)
    return t.abs() > mag.kthvalue(k).values


@torch.no_grad()
def reset_optimizer_state(
    optimizer: torch.optim.Optimizer,
    params: Iterable[nn.Parameter],
    mode: str = "magnitude",
    ratio: float = 0.9,
    generator: torch.Generator | None = None,
    keys: Sequence[str] = ("exp_avg", "exp_avg_sq"),
) -> float:
    """Partially reset the Adam states of ``params`` in place; returns the fraction zeroed.

    - ``magnitude`` (default): one mask per parameter, from |exp_avg|, applied to both moments,
      so that no entry keeps m != 0 with v = 0 (a step of m / (sqrt(0) + eps) would explode).
    - ``magnitude_independent``: the official rule, each moment pruned by its own magnitudes.
    - ``random``: a random fraction ``ratio`` of the entries zeroed (one mask for both).
    - ``reset``: everything zeroed (official ``reset_optimizer_on_relora``).
    Paper: magnitude pruning of 99% for 130M+; official ``paper_130M.sh``: 0.9.
    """
    if mode not in PRUNE_MODES:
        raise ValueError(f"mode must be one of {PRUNE_MODES}")
    if not 0.0 <= ratio <= 1.0:
        raise ValueError("ratio must be in [0, 1]")
    zeroed = total = 0
    for p in params:
        state = optimizer.state.get(p)
        if not state or mode == "none":
            continue
        moments = [state[k] for k in keys if k in state]
        if mode == "magnitude_independent":
            masks = [_quantile_mask(t, ratio) for t in moments]
        else:
            if mode == "magnitude":
                mask = _topk_mask(moments[0], ratio)
            elif mode == "random":
                mask = torch.rand(moments[0].shape, generator=generator) >= ratio
                mask = mask.to(moments[0].device)  # official random_pruning (one mask here)
            else:  # reset
                mask = torch.zeros_like(moments[0], dtype=torch.bool)
            masks = [mask] * len(moments)
        for t, m in zip(moments, masks, strict=True):
            t.mul_(m.to(t.dtype))
        zeroed += int((moments[0] == 0).sum())
        total += moments[0].numel()
    return zeroed / total if total else 0.0


# ---------------------------------------------------------------- the jagged schedule


def _envelope(progress: float, min_lr_ratio: float) -> float:
    progress = min(1.0, max(0.0, progress))
    return min_lr_ratio + (1 - min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * progress))


def jagged_cosine_schedule(
    step: int,
    *,
    total_steps: int,
    warmup_steps: int,
    restart_every: int | None = None,
    restart_warmup_steps: int = 0,
    first_restart: int | None = None,
    min_lr_ratio: float = 0.1,
) -> float:
    """The lr multiplier at ``step``: the official ``cosine_restarts`` scheduler
    (``_get_cosine_schedule_with_multiple_warmups_lambda`` in peft_pretraining/training_utils.py
    at commit ac33a08, "minor scheduler hotfix", unchanged at HEAD 176f376).

    Linear warm-up over ``warmup_steps``, then cosine decay from 1 to ``min_lr_ratio`` at
    ``total_steps``. At every restart, steps first_restart + k * restart_every (k >= 0;
    ``first_restart`` defaults to ``restart_every``, as in the official code), the multiplier
    is exactly 0 and ramps back linearly over ``restart_warmup_steps`` to the cosine envelope's
    value at the END of the ramp, progress (restart + restart_warmup - warmup) / (total - warmup)
    (ac33a08; before it, 0e2bbbf aimed at progress restart / (total - warmup)), so the ramp
    joins the envelope.
    """
    if not 0 < min_lr_ratio <= 1:
        raise ValueError("min_lr_ratio must be in (0, 1]")
    if step < warmup_steps:
        return step / max(1, warmup_steps)
    decay_len = max(1, total_steps - warmup_steps)
    if restart_every and restart_warmup_steps > 0:
        first = restart_every if first_restart is None else first_restart
        if step >= first:
            into = (step - first) % restart_every
            if into < restart_warmup_steps:
                target = (step - into + restart_warmup_steps - warmup_steps) / decay_len
                return into / restart_warmup_steps * _envelope(target, min_lr_ratio)
    return _envelope((step - warmup_steps) / decay_len, min_lr_ratio)


def cyclic_cosine_schedule(
    step: int,
    *,
    cycle_length: int,
    warmup_steps: int,
    min_lr_ratio: float = 0.1,
) -> float:
    """The lr multiplier at ``step`` of the official ``cosine`` scheduler with
    ``--cycle_length`` (``_get_cyclical_cosine_schedule_with_min_lr_lambda``, training_utils.py,
    the same at e3e42dd, where scripts/paper_130M.sh was added, and at HEAD 176f376): every
    cycle of ``cycle_length`` steps warms up linearly over its first ``warmup_steps`` steps and
    then decays by a cosine from 1 to ``min_lr_ratio`` at the cycle's end. In every cycle but
    the first, the first two steps are at 1e-7 (the steps around the merge). With
    ``cycle_length`` = the run's length this is a plain warm-up + cosine schedule.
    """
    if not 0 < min_lr_ratio <= 1:
        raise ValueError("min_lr_ratio must be in (0, 1]")
    if cycle_length < 1:
        raise ValueError("cycle_length must be >= 1")
    into = step % cycle_length
    if into < warmup_steps:
        if step != into and into < 2:
            return 1e-7
        return into / max(1, warmup_steps)
    return _envelope((into - warmup_steps) / max(1, cycle_length - warmup_steps), min_lr_ratio)
