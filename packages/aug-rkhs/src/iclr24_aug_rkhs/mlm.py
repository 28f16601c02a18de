"""Masked language modelling at several mask rates, then a linear probe: the paper's NLP
question (is there a sweet spot in the mask rate?) with a real transformer, at CPU scale.

For each mask rate alpha a small BERT-style encoder (``transformers.BertForMaskedLM`` built
from a config: nothing is downloaded) is pretrained from scratch on windows of the corpus
with the paper's augmentation, i.i.d. [MASK] replacement at rate alpha (every chosen token
becomes [MASK]; no 80-10-10 mix), and the MLM loss on the masked positions. The encoder is
then frozen; a window's representation is the mean of its last hidden states, and a linear
probe (ridge classifier, penalty chosen on validation windows) is fitted on labelled windows.

The downstream target is defined here (the corpus carries no labels): the corpus is cut into
``n_classes`` equal contiguous parts, and a window's label is the part it starts in. On a
corpus that is a sequence of articles (Wikipedia, the pydoc help topics in alphabetical
order) this is a topic label: it needs the window's content, not one token. The same
windows, labels and probe serve every rate, so rates are compared pairwise over seeds.

Two references beside the rates: the same architecture left at its random initialisation
(what pretraining adds) and a probe on the window's character histogram (no encoder).

Needs the ``mlm`` extra (torch, transformers): ``pip install 'iclr24-aug-rkhs[mlm]'``.
"""

from __future__ import annotations

import math

import numpy as np

from .data import Corpus


def windows_with_labels(
    corpus: Corpus, length: int, n: int, n_classes: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """n windows at uniform offsets and the corpus part each starts in. -> (n, L), (n,)"""
    n_starts = len(corpus.tokens) - length + 1
    if n_starts < n_classes:
        raise ValueError(f"the corpus is too short for {n_classes} parts of {length}-token windows")
    start = rng.integers(0, n_starts, size=n)
    return corpus.tokens[start[:, None] + np.arange(length)], start * n_classes // n_starts


def build_encoder(vocab_size: int, preset, seed: int):
    """A BERT-style masked LM from a config; id ``vocab_size`` is [MASK]."""
    import torch
    from transformers import BertConfig, BertForMaskedLM

    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=vocab_size + 1,
        hidden_size=preset.mlm_hidden,
        num_hidden_layers=preset.mlm_layers,
        num_attention_heads=preset.mlm_heads,
        intermediate_size=4 * preset.mlm_hidden,
        max_position_embeddings=preset.mlm_length,
        type_vocab_size=1,
    )  # dropout 0.1 and the rest as BERT's defaults
    return BertForMaskedLM(config)


def mask_tokens(tokens, alpha: float, mask_id: int, generator):
    """The augmentation: each token independently replaced by [MASK] with probability alpha.
    tokens: (B, L) long -> (inputs, labels) with labels -100 where nothing was masked."""
    import torch

    masked = torch.rand(tokens.shape, generator=generator) < alpha
    inputs = torch.where(masked, torch.full_like(tokens, mask_id), tokens)
    return inputs, torch.where(masked, tokens, torch.full_like(tokens, -100))


def pretrain(model, corpus: Corpus, alpha: float, preset, seed: int, device: str) -> float:
    """MLM pretraining for ``mlm_steps`` steps of ``mlm_batch`` random windows (AdamW, linear
    warm-up over the first 10% of steps then linear decay, as BERT's schedule).
    -> the mean MLM loss over the last 10% of steps"""
    import torch

    rng = np.random.default_rng([seed, round(alpha * 1e6), 7])
    gen = torch.Generator().manual_seed(int(rng.integers(2**31)))
    model.to(device).train()
    opt = torch.optim.AdamW(model.parameters(), lr=preset.mlm_lr, weight_decay=0.01)
    warm = max(1, preset.mlm_steps // 10)
    decay = max(1, preset.mlm_steps - warm)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warm, max(0.0, (preset.mlm_steps - s) / decay))
    )
    tail = []
    for step in range(preset.mlm_steps):
        batch = torch.from_numpy(corpus.windows(preset.mlm_length, preset.mlm_batch, rng))
        inputs, labels = mask_tokens(batch, alpha, corpus.vocab_size, gen)
        if (labels >= 0).any():  # a batch with no masked token carries no loss
            loss = model(input_ids=inputs.to(device), labels=labels.to(device)).loss
            opt.zero_grad()
            loss.backward()
            opt.step()
            if step >= preset.mlm_steps - max(1, preset.mlm_steps // 10):
                tail.append(loss.item())
        sched.step()
    return float(np.mean(tail)) if tail else math.nan


def embed(model, windows: np.ndarray, device: str, batch: int = 512) -> np.ndarray:
    """Mean of the last hidden states (no masking), the frozen encoder. (n, L) -> (n, hidden)"""
    import torch

    model.to(device).eval()
    out = []
    with torch.no_grad():
        for i in range(0, len(windows), batch):
            ids = torch.from_numpy(windows[i : i + batch]).to(device)
            out.append(model.bert(input_ids=ids).last_hidden_state.mean(1).cpu().numpy())
    return np.concatenate(out).astype(np.float64)


def char_histogram(windows: np.ndarray, vocab_size: int) -> np.ndarray:
    """The no-encoder reference: each window's token frequencies. (n, L) -> (n, V)"""
    hist = np.zeros((len(windows), vocab_size))
    np.add.at(hist, (np.repeat(np.arange(len(windows)), windows.shape[1]), windows.ravel()), 1.0)
    return hist / windows.shape[1]


def probe_error(features: dict[str, np.ndarray], labels: dict[str, np.ndarray], penalties) -> float:
    """Linear probe: ridge regression on one-hot labels (features standardised on train, a
    bias), the penalty of least validation error; -> test misclassification rate."""
    mean, std = features["train"].mean(0), features["train"].std(0) + 1e-8
    design = {k: np.column_stack([np.ones(len(v)), (v - mean) / std]) for k, v in features.items()}
    n_classes = int(max(v.max() for v in labels.values())) + 1
    onehot = np.eye(n_classes)[labels["train"]]
    x = design["train"]
    gram, rhs = x.T @ x / len(x), x.T @ onehot / len(x)
    reg = np.eye(len(gram))
    reg[0, 0] = 0.0  # the bias is not penalised
    best, best_val = None, np.inf
    for penalty in penalties:
        w = np.linalg.lstsq(gram + penalty * reg, rhs, rcond=None)[0]
        val = np.mean(np.argmax(design["val"] @ w, 1) != labels["val"])
        if val < best_val:
            best, best_val = w, val
    return float(np.mean(np.argmax(design["test"] @ best, 1) != labels["test"]))


def probe_windows(corpus: Corpus, preset, seed: int):
    """The labelled windows of one seed (the same for every rate). -> (windows, labels) dicts"""
    rng = np.random.default_rng([seed, 31])
    sizes = {"train": preset.mlm_probe_train, "val": preset.mlm_probe_val,
             "test": preset.mlm_probe_test}  # fmt: skip
    data = {k: windows_with_labels(corpus, preset.mlm_length, n, preset.mlm_classes, rng)
            for k, n in sizes.items()}  # fmt: skip
    return {k: v[0] for k, v in data.items()}, {k: v[1] for k, v in data.items()}


def measure_mlm_rate(preset, corpus: Corpus, alpha: float, seed: int, device: str) -> dict:
    """Pretrain at rate alpha, probe. -> {mlm/a<alpha>/probe_error, .../mlm_loss}"""
    wins, labels = probe_windows(corpus, preset, seed)
    model = build_encoder(corpus.vocab_size, preset, seed)
    loss = pretrain(model, corpus, alpha, preset, seed, device)
    feats = {k: embed(model, w, device) for k, w in wins.items()}
    key = f"mlm/a{alpha:g}"
    return {f"{key}/probe_error": probe_error(feats, labels, preset.mlm_penalties),
            f"{key}/mlm_loss": loss}  # fmt: skip


def measure_mlm_references(preset, corpus: Corpus, seed: int, device: str) -> dict:
    """The untrained encoder and the character histogram, on the same probe windows."""
    wins, labels = probe_windows(corpus, preset, seed)
    model = build_encoder(corpus.vocab_size, preset, seed)
    untrained = {k: embed(model, w, device) for k, w in wins.items()}
    hist = {k: char_histogram(w, corpus.vocab_size) for k, w in wins.items()}
    return {"mlm/untrained/probe_error": probe_error(untrained, labels, preset.mlm_penalties),
            "mlm/char_histogram/probe_error": probe_error(hist, labels, preset.mlm_penalties),
            "mlm/chance_error": 1 - 1 / preset.mlm_classes}  # fmt: skip
