"""The one training loop: full-rank warm start, then ReLoRA cycles (or the baselines), AdamW,
gradient clipping, the jagged schedule, checkpoint/resume and data parallelism under torchrun.

Methods (the four rows of the paper's Table 2):
- ``full``: every weight trained, cosine schedule.
- ``lora``: pure low-rank training from scratch, W replaced by s B A (no base weight).
- ``lora_warm``: full-rank for ``warm_start_steps``, then LoRA on the frozen W, no merges.
- ``relora``: full-rank for ``warm_start_steps``, then LoRA merged and re-initialised every
  ``relora_steps``, optimizer states pruned, lr restarted from 0 (the jagged schedule).
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from iclr24_common import get_dist_info, load_checkpoint, save_checkpoint
from iclr24_common.checkpoint import rng_state, set_rng_state

from .relora import (
    PRUNE_MODES,
    cyclic_cosine_schedule,
    effective_rank,
    jagged_cosine_schedule,
    lora_parameters,
    merge_and_reinit,
    relora_layers,
    reset_optimizer_state,
    target_names,
    wrap_relora,
)

METHODS = ("full", "lora", "lora_warm", "relora")
SCHEDULES = ("jagged", "cyclic")


def tiny_llama(vocab_size: int = 256, seq_len: int = 128, **shape) -> nn.Module:
    """A LLaMA causal LM built with transformers' LlamaConfig; defaults are the official 9M
    shape (configs/llama_9m.json: hidden 128, MLP 352, 4 layers, 4 heads) with a byte vocab."""
    from transformers import LlamaConfig, LlamaForCausalLM

    config = dict(hidden_size=128, intermediate_size=352, num_hidden_layers=4)
    config.update(num_attention_heads=4, rms_norm_eps=1e-6, initializer_range=0.02)
    config.update(shape)
    return LlamaForCausalLM(
        LlamaConfig(
            vocab_size=vocab_size,
            max_position_embeddings=seq_len,
            bos_token_id=None,
            eos_token_id=None,
            pad_token_id=None,
            tie_word_embeddings=False,
            use_cache=False,
            **config,
        )
    )


@dataclass(frozen=True)
class TrainConfig:
    method: str = "relora"
    """full, lora, lora_warm or relora."""
    total_steps: int = 400
    warm_start_steps: int = 100
    """Full-rank steps before LoRA (paper: 5k of 20k steps for 130M, i.e. 25%)."""
    relora_steps: int = 50
    """Steps between merges (official paper_130M.sh: --relora 2000 of 20000, i.e. 10%)."""
    restart_warmup_steps: int = 10
    """lr ramp after each merge (official: 100 steps; paper Figure 2: 50-100)."""
    warmup_steps: int = 20
    """First warm-up (official paper_130M.sh: 500 of 20000)."""
    lr: float = 1e-3
    """Official paper_130M.sh: --lr 0.001 for full-rank and ReLoRA alike."""
    min_lr_ratio: float = 0.1
    """Official --min_lr_ratio 0.1."""
    schedule: str = "jagged"
    """jagged: official ``--scheduler cosine_restarts`` (one cosine over the run, lr 0 at each
    restart and a ramp of restart_warmup_steps; the official README's ReLoRA command);
    cyclic: official ``--scheduler cosine --cycle_length`` (scripts/paper_130M.sh): each ReLoRA
    cycle its own warm-up of warmup_steps and cosine to min_lr_ratio."""
    r: int = 8
    alpha: float = 2.0
    """alpha / r = 0.25, the official scale (torchrun_main.py at HEAD 176f376: --lora_r 128,
    --lora_alpha 32; at e3e42dd lora_alpha=32 hard-coded with --lora_r 128)."""
    dropout: float = 0.1
    """Official lora_dropout=0.1."""
    prune_mode: str = "magnitude"
    prune_ratio: float = 0.9
    """Official paper_130M.sh: --optimizer_magnitude_pruning 0.9."""
    clip: float = 1.0
    weight_decay: float = 0.0
    """Official default --weight_decay 0.0."""
    batch_size: int = 16
    """Sequences per optimizer step, over all ranks."""
    micro_batch: int = 0
    """Sequences per forward pass on one rank (0: all of its rows at once)."""
    seq_len: int = 128
    seed: int = 0

    def __post_init__(self):
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}")
        if self.schedule not in SCHEDULES:
            raise ValueError(f"schedule must be one of {SCHEDULES}")
        if self.prune_mode not in PRUNE_MODES:
            raise ValueError(f"prune_mode must be one of {PRUNE_MODES}")
        if min(self.total_steps, self.relora_steps, self.r, self.batch_size, self.seq_len) < 1:
            raise ValueError("total_steps, relora_steps, r, batch_size and seq_len must be >= 1")
        if not 0 <= self.warm_start_steps < self.total_steps:
            raise ValueError("warm_start_steps must be in [0, total_steps)")
        if self.lr <= 0 or self.clip <= 0:
            raise ValueError("lr and clip must be > 0")

    @property
    def switch_step(self) -> int | None:
        """The step at which LoRA layers appear (None: never)."""
        return {"full": None, "lora": 0}.get(self.method, self.warm_start_steps)


class ReLoRATrainer:
    """Trains ``model`` on ``batches(step) -> (batch, seq)`` token ids by ``config.method``.

    Under torchrun each rank takes rows rank::world of every batch and gradients are averaged
    (what DDP does); merges re-draw A from a generator seeded by (seed, merge count), so every
    rank re-draws the same A without communication.
    """

    def __init__(
        self,
        model: nn.Module,
        config: TrainConfig,
        batches: Callable[[int], torch.Tensor],
        device: str | torch.device = "cpu",
    ):
        self.model, self.config, self.batches = model.to(device), config, batches
        self.device = torch.device(device)
        self.step = 0
        self.merges = 0
        self.losses: list[float] = []
        self.lrs: list[float] = []
        self.reset_fractions: list[float] = []
        self.w_start: dict[str, torch.Tensor] = {}
        self.dist = get_dist_info()
        if config.batch_size % self.dist.world_size:
            raise ValueError(f"batch_size {config.batch_size} is not divisible by the "
                             f"{self.dist.world_size} ranks")  # fmt: skip
        if config.switch_step == 0:
            self._switch()
        self.optimizer = self._new_optimizer()

    # ------------------------------------------------------------ pieces

    def _generator(self, salt: int) -> torch.Generator:
        return torch.Generator().manual_seed(self.config.seed * 7919 + 104_729 * salt + 1)

    def _new_optimizer(self) -> torch.optim.Optimizer:
        params = [p for p in self.model.parameters() if p.requires_grad]
        c = self.config
        return torch.optim.AdamW(params, lr=c.lr, weight_decay=c.weight_decay)

    @property
    def wrapped(self) -> bool:
        return bool(relora_layers(self.model))

    def _switch(self) -> None:
        """Warm start over: wrap the targets with LoRA."""
        c = self.config
        state = torch.get_rng_state()  # the LoRA init must not shift the dropout stream
        torch.manual_seed(c.seed * 7919 + 17)
        wrap_relora(self.model, c.r, c.alpha, dropout=c.dropout, lora_only=c.method == "lora")
        torch.set_rng_state(state)
        self.model.to(self.device)

    def lr_multiplier(self, step: int) -> float:
        c = self.config
        if c.schedule == "cyclic":
            # official `--scheduler cosine`: full-rank and pure LoRA one cycle over the run; the
            # warm-started methods follow the full-rank run's schedule until the switch, then
            # cycles aligned to the merges (ReLoRA: --cycle_length = --relora, as in
            # paper_130M.sh; LoRA + warm start: one cycle over its LoRA phase)
            ws = c.warm_start_steps
            if c.method in ("full", "lora") or step < ws:
                return cyclic_cosine_schedule(step, cycle_length=c.total_steps,
                                              warmup_steps=c.warmup_steps,
                                              min_lr_ratio=c.min_lr_ratio)  # fmt: skip
            cycle = c.relora_steps if c.method == "relora" else c.total_steps - ws
            return cyclic_cosine_schedule(step - ws, cycle_length=cycle,
                                          warmup_steps=c.warmup_steps,
                                          min_lr_ratio=c.min_lr_ratio)  # fmt: skip
        # restarts: at the switch to LoRA (fresh factors and optimizer), then at every merge
        restarts = c.method == "relora" or (c.method == "lora_warm" and c.warm_start_steps > 0)
        return jagged_cosine_schedule(
            step,
            total_steps=c.total_steps,
            warmup_steps=c.warmup_steps,
            restart_every=c.relora_steps if c.method == "relora" else c.total_steps,
            restart_warmup_steps=c.restart_warmup_steps if restarts else 0,
            first_restart=c.warm_start_steps,
            min_lr_ratio=c.min_lr_ratio,
        )

    def _sync_grads(self, loss: torch.Tensor) -> torch.Tensor:
        """Average the gradients (what DDP does) and the loss over the ranks; returns the loss."""
        if not self.dist.is_distributed:
            return loss
        import torch.distributed as dist

        grads = [p.grad for p in self.model.parameters() if p.grad is not None]
        flat = torch.cat([g.flatten() for g in grads] + [loss.reshape(1).to(grads[0])])
        dist.all_reduce(flat)
        flat /= self.dist.world_size
        offset = 0
        for g in grads:
            g.copy_(flat[offset : offset + g.numel()].view_as(g))
            offset += g.numel()
        return flat[-1]

    # ------------------------------------------------------------ the loop

    def train_step(self) -> float:
        c = self.config
        if self.step == c.warm_start_steps and not self.w_start and c.method != "lora":
            self.w_start = {  # the reference of rank(dW), for full-rank too
                n: self.model.get_submodule(n).weight.detach().clone()
                for n in target_names(self.model)
            }
        if self.step == c.switch_step and not self.wrapped:
            self._switch()
            self.optimizer = (
                self._new_optimizer()
            )  # official: a fresh optimizer after --continue_from
        batch = self.batches(self.step).to(self.device)
        if self.dist.is_distributed:
            batch = batch[self.dist.rank :: self.dist.world_size]
        lr = c.lr * self.lr_multiplier(self.step)
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        self.model.train()
        self.optimizer.zero_grad(set_to_none=True)
        chunks = batch.split(c.micro_batch) if c.micro_batch else (batch,)
        loss = torch.zeros((), device=self.device)
        for chunk in chunks:  # gradient accumulation
            part = self.model(input_ids=chunk, labels=chunk).loss * (len(chunk) / len(batch))
            part.backward()
            loss += part.detach()
        loss = self._sync_grads(loss)
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), c.clip)
        self.optimizer.step()
        self.step += 1
        # official torchrun_main.py: merge right after the step whose lr was 0 (1e-7 in the
        # cyclic schedule; update_step % relora == 1), then prune the fresh factors' Adam states
        since = self.step - 1 - c.warm_start_steps
        if c.method == "relora" and since > 0 and since % c.relora_steps == 0:
            self.merge()
        self.losses.append(loss.item())
        self.lrs.append(lr)
        return self.losses[-1]

    def merge(self) -> None:
        self.merges += 1
        merge_and_reinit(self.model, self._generator(self.merges))
        frac = reset_optimizer_state(
            self.optimizer,
            lora_parameters(self.model),
            self.config.prune_mode,
            self.config.prune_ratio,
            generator=self._generator(-self.merges),
        )
        self.reset_fractions.append(frac)

    def train(self, until: int | None = None, *, checkpoint: str | Path | None = None,
              checkpoint_every: int = 0, on_step: Callable[[int, float], None] | None = None):  # fmt: skip
        """Train to step ``until`` (default: total_steps), checkpointing every
        ``checkpoint_every`` steps to ``checkpoint`` when given."""
        until = self.config.total_steps if until is None else until
        while self.step < until:
            loss = self.train_step()
            if on_step is not None:
                on_step(self.step, loss)
            if checkpoint and checkpoint_every and self.step % checkpoint_every == 0:
                self.save(checkpoint)
        return self

    @torch.no_grad()
    def evaluate(self, batches: list[torch.Tensor]) -> float:
        """Mean next-token cross-entropy (nats per token) over ``batches``, dropout off."""
        self.model.eval()
        losses = [float(self.model(input_ids=b.to(self.device), labels=b.to(self.device)).loss)
                  for b in batches]  # fmt: skip
        return sum(losses) / len(losses)

    @torch.no_grad()
    def evaluate_items(self, batches: list[torch.Tensor]) -> list[float]:
        """Mean next-token cross-entropy of every sequence of ``batches`` (nats per token),
        dropout off: the per-item scores of a shared evaluation set. Every sequence has the
        same length, so their mean is :meth:`evaluate`'s loss."""
        self.model.eval()
        out: list[float] = []
        for b in batches:
            b = b.to(self.device)  # (batch, seq)
            logits = self.model(input_ids=b).logits[:, :-1].float()  # (batch, seq - 1, vocab)
            nll = nn.functional.cross_entropy(logits.transpose(1, 2), b[:, 1:], reduction="none")
            out += nll.mean(dim=1).tolist()  # (batch,): one loss per sequence
        return out

    # ------------------------------------------------------------ state

    def state(self) -> dict:
        return {
            "step": self.step,
            "merges": self.merges,
            "wrapped": self.wrapped,
            "losses": list(self.losses),
            "lrs": list(self.lrs),
            "reset_fractions": list(self.reset_fractions),
            "w_start": self.w_start,
        }

    def save(self, path: str | Path) -> Path:
        if not self.dist.is_main:
            return Path(path)
        return save_checkpoint(
            path, step=self.step, model=self.model, optimizer=self.optimizer, extra=self.state()
        )

    def load(self, path: str | Path) -> ReLoRATrainer:
        """Continue from a checkpoint written by ``save`` (model, optimizer, RNG, counters)."""
        extra = torch.load(path, map_location="cpu", weights_only=False)["extra"]
        self._prepare(extra)
        load_checkpoint(path, model=self.model, optimizer=self.optimizer)
        return self._restore(extra)

    def snapshot(self) -> bytes:
        """The whole training state in memory (to fork the warm start into other methods)."""
        buf = io.BytesIO()
        payload = {"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict()}
        torch.save({**payload, "rng": rng_state(), "extra": self.state()}, buf)
        return buf.getvalue()

    def restore(self, blob: bytes) -> ReLoRATrainer:
        payload = torch.load(io.BytesIO(blob), map_location="cpu", weights_only=False)
        self._prepare(payload["extra"])
        self.model.load_state_dict(payload["model"])
        self.optimizer.load_state_dict(payload["optimizer"])
        set_rng_state(payload["rng"])
        return self._restore(payload["extra"])

    def _prepare(self, extra: dict) -> None:
        if extra["wrapped"] and not self.wrapped:
            self._switch()
            self.optimizer = self._new_optimizer()

    def _restore(self, extra: dict) -> ReLoRATrainer:
        self.step, self.merges = extra["step"], extra["merges"]
        self.losses, self.lrs = list(extra["losses"]), list(extra["lrs"])
        self.reset_fractions = list(extra["reset_fractions"])
        self.w_start = extra["w_start"]
        return self

    # ------------------------------------------------------------ diagnostics

    def update_ranks(self, rel_tol: float = 0.1) -> dict[str, int]:
        """Effective rank of each wrapped matrix's update: dW = W_now - W_warmstart (for pure
        LoRA, whose W is s B A alone, the rank of the learned matrix itself)."""
        out = {}
        for name in [n for n, _ in self._relora_named()] or target_names(self.model):
            m = self.model.get_submodule(name)
            w = m.merged_weight() if hasattr(m, "merged_weight") else m.weight
            ref = self.w_start.get(name) if self.config.method != "lora" else None
            out[name] = effective_rank(w - ref if ref is not None else w, rel_tol)
        return out

    @torch.no_grad()
    def relative_update(self) -> float:
        """How far training moved the adapted matrices from the warm start, all together:
        ||W_now - W_warmstart||_F / ||W_warmstart||_F (nan without a warm start: pure LoRA,
        or before the warm start ends)."""
        if self.config.method == "lora" or not self.w_start:
            return float("nan")
        num = den = 0.0
        for name, ref in self.w_start.items():
            m = self.model.get_submodule(name)
            w = m.merged_weight() if hasattr(m, "merged_weight") else m.weight
            num += float((w.detach().cpu() - ref.cpu()).pow(2).sum())
            den += float(ref.pow(2).sum())
        return (num / den) ** 0.5

    def _relora_named(self):
        return [(n, m) for n, m in self.model.named_modules() if hasattr(m, "merged_weight")]

    def trainable_parameters(self) -> int:
        return sum(p.numel() for p in self.model.parameters() if p.requires_grad)

    def optimizer_state_bytes(self) -> int:
        return sum(
            t.numel() * t.element_size()
            for s in self.optimizer.state.values()
            for t in s.values()
            if torch.is_tensor(t) and t.dim() > 0
        )
