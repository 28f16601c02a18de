"""Training loops of the other two backbones: TPR-RNN on (sys-)bAbI (official
``bAbItask/AID_with_TPRRNN/train.py``) and the linear Transformer LM (official
``WikiText103/example_scripts/run.sh``, Transformer-XL's ``train.py``). Both keep the checkpoint
that is best on validation and report the test split there."""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from iclr24_common import progress

from .babi import Babi
from .corpus import Corpus, batchify
from .linear_transformer import LinearTransformerLM
from .tprrnn import TPRRNN
from .train import model_device


# ---------------------------------------------------------------------------- bAbI
@dataclass(frozen=True)
class BabiTrain:
    """Optimisation; defaults are the official ``train.py``'s."""

    epochs: int = 100
    """Epochs (official 100); an epoch is as many batches as the 20 training sets hold."""
    batch_size: int = 128
    """Stories per batch, all from one task drawn at random (official 128)."""
    lr: float = 1e-3
    """Adam (official 1e-3, betas (0.9, 0.99), eps 1e-9), x0.1 in the first epoch (warm-up)."""
    clip: float = 50.0
    """Gradient-norm clipping (official 50)."""
    decay_below: float = 0.1
    """Halve the learning rate once when the validation loss falls below this (official)."""
    reconstruction: float = 1e-2
    """Weight of AID's word-reconstruction loss (official 1e-2; the linear TPR-RNN has none)."""
    max_batches: int = 0
    """Cap on batches per epoch (0: the full epoch); for smoke tests."""


def babi_correct(model: TPRRNN, data: Babi, split: str, batch_size: int = 256):
    """Per task, whether each question of ``split`` is answered right ((questions,) uint8), and
    the mean loss over every question, in eval mode."""
    was = model.training
    model.eval()
    right, losses, count, device = {}, 0.0, 0, model_device(model)
    with torch.no_grad():
        for t, splits in data.tasks.items():
            d, hits = splits[split], []
            for i in range(0, len(d), batch_size):
                story, query, target = (x[i : i + batch_size].to(device)
                                        for x in (d.story, d.query, d.answer))  # fmt: skip
                logits = model(story, query)
                hits.append((logits.argmax(-1) == target).cpu().numpy())
                losses += float(nn.functional.cross_entropy(logits, target, reduction="sum"))
                count += len(target)
            right[t] = np.concatenate(hits).astype(np.uint8) if hits else np.zeros(0, np.uint8)
    model.train(was)
    return right, losses / max(count, 1)


def babi_accuracy(model: TPRRNN, data: Babi, split: str, batch_size: int = 256):
    """Accuracy per task on ``split`` and the mean validation loss, in eval mode."""
    right, loss = babi_correct(model, data, split, batch_size)
    return {t: int(r.sum()) / max(len(r), 1) for t, r in right.items()}, loss


def babi_items(right: dict) -> np.ndarray:
    """Per-question scores whose mean is the mean over tasks of the per-task accuracy (the
    sys-bAbI number): question j of task t scores ``correct_j * n / (T * n_t)`` (n questions
    in all, n_t in task t, T tasks); every weight is 1 when the tasks hold equally many."""
    n, T = sum(len(r) for r in right.values()), len(right)
    return np.concatenate([r * (n / (T * max(len(r), 1))) for r in right.values()])


def train_babi(model: TPRRNN, data: Babi, config: BabiTrain, seed: int, desc: str = ""):
    """Train on every task's training split; keep the best mean validation accuracy."""
    rng = np.random.default_rng([seed, 11])
    device = model_device(model)  # the run's --device: the model is there, batches follow it
    opt = torch.optim.Adam(model.parameters(), lr=config.lr, betas=(0.9, 0.99), eps=1e-9)
    tasks = list(data.tasks)
    per_task = {t: math.ceil(len(data.tasks[t]["train"]) / config.batch_size) for t in tasks}
    epoch_batches = sum(per_task.values())
    if config.max_batches:
        epoch_batches = min(epoch_batches, config.max_batches)
    best, best_state, decayed, history = -1.0, None, False, []
    for epoch in progress(range(1, config.epochs + 1), desc=desc, total=config.epochs):
        for g in opt.param_groups:  # official WarmupScheduler: 0.1 x lr for the first epoch
            g["lr"] = config.lr * (0.1 if epoch == 1 else 1.0) * (0.5 if decayed else 1.0)
        model.train()
        for _ in range(epoch_batches):
            d = data.tasks[tasks[rng.integers(len(tasks))]]["train"]
            idx = torch.from_numpy(rng.choice(len(d), min(config.batch_size, len(d)), False))
            story, query, answer = (x[idx].to(device) for x in (d.story, d.query, d.answer))
            logits = model(story, query)
            loss = nn.functional.cross_entropy(logits, answer)
            if config.reconstruction:
                loss = loss + config.reconstruction * model.auxiliary_loss(story, query)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), config.clip)
            opt.step()
        accs, val_loss = babi_accuracy(model, data, "valid")
        val = float(np.mean(list(accs.values())))
        history.append(val)
        if val_loss < config.decay_below:
            decayed = True
        if val > best:
            best, best_state = val, copy.deepcopy(model.state_dict())
    model.load_state_dict(best_state)
    model.eval()
    return model, history


# ---------------------------------------------------------------------------- language model
@dataclass(frozen=True)
class LMTrain:
    """Optimisation; defaults are the official ``run.sh`` (Transformer-XL's loop)."""

    steps: int = 500_000
    """Training steps (official max_step 500000)."""
    batch_size: int = 96
    """Streams per batch (official 96)."""
    tgt_len: int = 256
    """Tokens per segment; no memory across segments (official tgt_len 256, mem_len 0)."""
    lr: float = 2.5e-4
    """Adam learning rate (official 0.00025), linear warm-up then cosine decay to 0."""
    warmup: int = 2000
    """Warm-up steps (official 2000)."""
    clip: float = 0.25
    """Gradient-norm clipping (Transformer-XL default 0.25)."""
    eval_every: int = 4000
    """Steps between validations (Transformer-XL default eval-interval 4000)."""
    eval_tokens: int = 0
    """Validate on the first this many tokens of the split (0: all)."""


def lm_segment_nll(model: LinearTransformerLM, ids: torch.Tensor, tgt_len: int,
                   batch_size: int = 16) -> tuple[float, np.ndarray]:  # fmt: skip
    """Mean NLL (nats per token) over ``ids`` cut into independent segments of ``tgt_len``
    (``batch_size`` streams), and one score per segment of a stream whose mean is that NLL:
    the segment's summed NLL x segments / tokens (segments hold tgt_len tokens, the last
    fewer), the per-item scores of a shared test set."""
    was = model.training
    model.eval()
    data = batchify(ids, batch_size).to(model_device(model))
    sums = []  # (batch_size,) summed NLL per stream, one per segment
    with torch.no_grad():
        for i in range(0, data.shape[1] - 1, tgt_len):
            x = data[:, i : min(i + tgt_len, data.shape[1] - 1)]
            y = data[:, i + 1 : i + 1 + x.shape[1]]
            sums.append(model.token_nll(x, y).double().sum(1).cpu().numpy())
    model.train(was)
    seg = np.concatenate(sums) if sums else np.zeros(0)
    count = max((data.shape[1] - 1) * batch_size, 1)
    return float(seg.sum() / count), seg * (len(seg) / count)


def lm_nll(model: LinearTransformerLM, ids: torch.Tensor, tgt_len: int, batch_size: int = 16):
    """Mean NLL (nats per token) over ``ids`` cut into independent segments of ``tgt_len``."""
    return lm_segment_nll(model, ids, tgt_len, batch_size)[0]


def train_lm(model: LinearTransformerLM, corpus: Corpus, config: LMTrain, seed: int, desc=""):
    """Train on the training stream; keep the checkpoint with the best validation NLL.
    Returns the model and the history of (step, train loss, validation NLL)."""
    rng = np.random.default_rng([seed, 12])
    data = batchify(corpus.train, config.batch_size).to(model_device(model))  # the run's device
    valid = corpus.valid[: config.eval_tokens] if config.eval_tokens else corpus.valid
    opt = torch.optim.Adam(model.parameters(), lr=config.lr)

    def schedule(step):  # Transformer-XL: linear warm-up, then cosine over max_step
        if step < config.warmup:
            return (step + 1) / config.warmup
        return 0.5 * (1 + math.cos(math.pi * step / config.steps))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, schedule)
    best, best_state, history, running = math.inf, None, [], []
    pos = int(rng.integers(data.shape[1] - config.tgt_len - 1))  # a random start per seed
    model.train()
    for step in progress(range(1, config.steps + 1), desc=desc, total=config.steps):
        if pos + config.tgt_len + 1 > data.shape[1]:
            pos = 0
        x = data[:, pos : pos + config.tgt_len]
        y = data[:, pos + 1 : pos + 1 + config.tgt_len]
        pos += config.tgt_len
        loss = model.nll(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), config.clip)
        opt.step()
        sched.step()
        running.append(loss.item())
        if step % config.eval_every == 0 or step == config.steps:
            val = lm_nll(model, valid, config.tgt_len)
            history.append((step, float(np.mean(running)), val))
            running = []
            if val < best:
                best, best_state = val, copy.deepcopy(model.state_dict())
    model.load_state_dict(best_state)
    model.eval()
    return model, history
