"""InfoBatch: Lossless Training Speed Up by Unbiased Dynamic Data Pruning.

Qin, Wang, Zheng, Gu, Peng, Xu, Zhou, Shang, Sun, Xie, You. ICLR 2024 (oral).
https://arxiv.org/abs/2303.04947 -- official code: https://github.com/NUS-HPC-AI-Lab/InfoBatch

Every sample z keeps a score H(z): its loss the last time it was trained on. Before each
epoch t (paper Sec. 3.1-3.3):

    D_low  = {z : H(z) < mean_z H(z)}                        (well-learned samples)
    soft pruning:         drop a random r-fraction of D_low   (without replacement)
    expectation rescaling: loss(z) <- loss(z) / (1 - r)       for the kept z in D_low
    annealing:            the last (1 - delta) of the epochs use all data, weight 1

so that E[sum_kept w(z) grad L(z)] ~= sum_all grad L(z) while ~r|D_low| forward and
backward passes per epoch are saved.

The baselines (full data, random and hard dynamic pruning) subclass :class:`DynamicPruner`
in ``baselines.py``.

Differences from the official code (also in the README): no monkeypatch of DataLoader
internals (``update`` takes the batch's indices, or reads them from the sampler's order);
an own ``numpy.random.Generator`` instead of reseeding the global NumPy RNG each epoch;
annealing starts at ``epoch >= num_epochs - ceil((1 - delta) * num_epochs)`` and always
resets the weights (the official ``iterations == stop_prune + 1`` never fires when
``num_epochs * delta`` is not an integer, so the 1/(1-r) weights leaked into the full-data
epochs); and no pruning while all scores are equal (nothing observed yet, official issue #25).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import torch
from torch.utils.data import Dataset, Sampler

from iclr24_common.dist import all_gather_cat, get_dist_info

# Official code: ``self.scores = torch.ones(len(dataset)) * 3`` (any constant works: equal
# scores mean "not observed yet").
INITIAL_SCORE = 3.0


class DynamicPruner(Dataset):
    """Per-epoch sample selection with per-sample scores and loss weights.

    Wraps ``dataset`` (anything with ``len``; ``__getitem__`` returns ``(index, item)`` as the
    official code does). Subclasses implement :meth:`_select`, which returns the global kept
    indices of an epoch and fills ``self.weights``.

    Counters (global over all processes): ``forward_passes`` counts the samples that went
    through :meth:`update`; ``planned_passes`` the samples the sampler scheduled;
    ``pruned_samples`` the samples the selection dropped (sum over epochs of N - kept).
    """

    def __init__(
        self,
        dataset: Any,
        num_epochs: int,
        *,
        seed: int = 0,
        distributed: bool = False,
        drop_last: bool = True,
    ):
        if num_epochs < 1:
            raise ValueError(f"num_epochs must be >= 1, got {num_epochs}")
        self.dataset = dataset
        self.num_samples = int(dataset) if isinstance(dataset, int) else len(dataset)
        if self.num_samples < 1:
            raise ValueError("the dataset is empty")
        self.num_epochs = int(num_epochs)
        self.scores = torch.full((self.num_samples,), INITIAL_SCORE, dtype=torch.float32)
        self.weights = torch.ones(self.num_samples, dtype=torch.float32)
        self.rng = np.random.default_rng(seed)
        info = get_dist_info() if distributed else None
        self.rank = info.rank if info else 0
        self.world_size = info.world_size if info else 1
        self.drop_last = drop_last
        self.epoch = 0  # epochs drawn so far
        self.forward_passes = 0
        self.planned_passes = 0
        self.pruned_samples = 0
        self.kept_per_epoch: list[int] = []
        self._plan: torch.Tensor | None = None  # this process's order for the current epoch
        self._pending: torch.Tensor | None = None  # the next epoch's order, drawn early by len()
        self._cursor = 0

    # -- the dataset interface ---------------------------------------------------------
    def __len__(self) -> int:
        return self.num_samples

    def __getitem__(self, index: int):
        return index, self.dataset[index]

    # -- epochs ----------------------------------------------------------------------
    def _select(self, epoch: int) -> np.ndarray:
        """Global kept indices of ``epoch`` (any order); sets ``self.weights``."""
        raise NotImplementedError

    def _draw(self) -> torch.Tensor:
        kept = np.asarray(self._select(self.epoch), dtype=np.int64)
        self.kept_per_epoch.append(int(kept.size))
        self.pruned_samples += self.num_samples - int(kept.size)
        order = kept[self.rng.permutation(kept.size)]  # official: np.random.shuffle(remained)
        order = self._shard(order)
        self.epoch += 1
        return torch.from_numpy(order)

    def _shard(self, order: np.ndarray) -> np.ndarray:
        """This process's part of the epoch's order; every process draws the same order."""
        w = self.world_size
        if w == 1:
            self.planned_passes += order.size
            return order
        if self.drop_last:  # official DistributedIBSampler default: drop the tail
            order = order[: (order.size // w) * w]
        else:  # pad by wrapping around, like torch's DistributedSampler
            pad = (-order.size) % w
            order = np.concatenate([order, np.resize(order, pad)]) if pad else order
        self.planned_passes += order.size
        return order[self.rank :: w]

    def next_epoch(self) -> torch.Tensor:
        """Draw the next epoch: its sample order for this process, shape (n_epoch,)."""
        if self.epoch >= self.num_epochs and self._pending is None:
            raise RuntimeError(f"all {self.num_epochs} epochs have been drawn")
        plan = self._pending if self._pending is not None else self._draw()
        self._pending, self._plan, self._cursor = None, plan, 0
        return plan

    def epoch_length(self) -> int:
        """Samples of the epoch in progress, else of the next epoch (drawn now, with the
        current scores, and used by the next :meth:`next_epoch`)."""
        if self._plan is not None and self._cursor < len(self._plan):
            return len(self._plan)
        if self._pending is None and self.epoch >= self.num_epochs:  # training is over
            return len(self._plan) if self._plan is not None else 0
        if self._pending is None:
            self._pending = self._draw()
        return len(self._pending)

    def batches(self, batch_size: int) -> Iterator[torch.Tensor]:
        """Draw the next epoch and yield its index batches, each (<= batch_size,)."""
        yield from torch.split(self.next_epoch(), batch_size)

    @property
    def sampler(self) -> PrunedSampler:
        """A ``torch.utils.data.Sampler`` over this object's epochs (for a DataLoader)."""
        return PrunedSampler(self)

    # -- the training step ------------------------------------------------------------
    def update(self, loss: torch.Tensor, indices: torch.Tensor | None = None) -> torch.Tensor:
        """Record per-sample ``loss`` (B,) as the new scores; return the weighted mean loss.

        ``indices`` (B,) are the batch's dataset indices; when omitted they are the next
        B entries of the sampler's order (DataLoaders keep the sampler's order).
        """
        if loss.dim() != 1:
            raise ValueError(
                f"update expects per-sample losses of shape (B,), got {tuple(loss.shape)}"
            )
        b = loss.shape[0]
        if indices is None:
            if self._plan is None or self._cursor + b > len(self._plan):
                raise RuntimeError("no indices given and the sampler's order is exhausted")
            indices = self._plan[self._cursor : self._cursor + b]
        indices = torch.as_tensor(indices).reshape(-1).long().cpu()
        if indices.shape[0] != b:
            raise ValueError(f"{indices.shape[0]} indices for {b} losses")
        self._cursor += b
        weights = self.weights[indices].to(device=loss.device, dtype=loss.dtype)
        values = loss.detach().float()
        if self.world_size > 1:  # every process records every process's scores
            pairs = torch.stack([indices.to(values.device).double(), values.double()], dim=1)
            pairs = all_gather_cat(pairs).cpu()
            indices, values = pairs[:, 0].long(), pairs[:, 1].float()
        self.scores[indices] = values.cpu()
        self.forward_passes += int(indices.shape[0])
        return (loss * weights).mean()

    # -- accounting --------------------------------------------------------------------
    @property
    def full_passes(self) -> int:
        """Sample passes of full-data training for ``num_epochs`` epochs."""
        return self.num_epochs * self.num_samples

    def saved_fraction(self) -> float:
        """Measured: 1 - (samples that went through ``update``) / (epochs * N)."""
        return 1.0 - self.forward_passes / self.full_passes

    def predicted_saved_fraction(self) -> float:
        """From the selection's pruned counts: sum_t (N - kept_t) / (epochs * N)."""
        return self.pruned_samples / self.full_passes

    def state_dict(self) -> dict[str, Any]:
        return {
            "scores": self.scores.clone(),
            "weights": self.weights.clone(),
            "rng": self.rng.bit_generator.state,
            "epoch": self.epoch,
            "counters": [self.forward_passes, self.planned_passes, self.pruned_samples],
            "kept_per_epoch": list(self.kept_per_epoch),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.scores.copy_(state["scores"])
        self.weights.copy_(state["weights"])
        self.rng.bit_generator.state = state["rng"]
        self.epoch = int(state["epoch"])
        self.forward_passes, self.planned_passes, self.pruned_samples = state["counters"]
        self.kept_per_epoch = list(state["kept_per_epoch"])
        self._plan = self._pending = None
        self._cursor = 0


class PrunedSampler(Sampler[int]):
    """Yields one epoch of a :class:`DynamicPruner` per ``iter()``; ``len`` is that epoch's
    size (which shrinks while pruning)."""

    def __init__(self, pruner: DynamicPruner):
        self.pruner = pruner

    def __iter__(self) -> Iterator[int]:
        return iter(self.pruner.next_epoch().tolist())

    def __len__(self) -> int:
        return self.pruner.epoch_length()


class InfoBatch(DynamicPruner):
    """InfoBatch (paper Sec. 3): soft pruning of below-mean-loss samples with ratio
    ``prune_ratio``, 1/(1-r) rescaling of the kept ones, full data for the last
    ``1 - delta`` of the epochs.

    >>> ib = InfoBatch(dataset, num_epochs=200)                     # r = 0.5, delta = 0.875
    >>> loader = DataLoader(ib, batch_size=128, sampler=ib.sampler)  # items are (index, item)
    >>> for idx, (x, y) in loader:
    ...     loss = ib.update(F.cross_entropy(model(x), y, reduction="none"), idx)
    ...     loss.backward()
    """

    def __init__(
        self,
        dataset: Any,
        num_epochs: int,
        prune_ratio: float = 0.5,  # paper Sec. 4 setup: "default value r = 0.5"
        delta: float = 0.875,  # paper Sec. 4 setup: "delta = 0.875"
        *,
        seed: int = 0,
        distributed: bool = False,
        drop_last: bool = True,
    ):
        super().__init__(
            dataset, num_epochs, seed=seed, distributed=distributed, drop_last=drop_last
        )
        if not 0.0 <= prune_ratio < 1.0:
            raise ValueError(f"prune_ratio must be in [0, 1), got {prune_ratio}")
        if not 0.0 <= delta <= 1.0:
            raise ValueError(f"delta must be in [0, 1], got {delta}")
        self.prune_ratio, self.delta = float(prune_ratio), float(delta)
        # Official: keep_ratio = min(1, max(0.1, 1 - prune_ratio)).
        self.keep_ratio = min(1.0, max(0.1, 1.0 - self.prune_ratio))
        # Annealing: the last ceil((1 - delta) E) epochs train on the full data with weight 1.
        self.num_full_epochs = math.ceil(round((1.0 - self.delta) * self.num_epochs, 9))
        self.prune_epochs = self.num_epochs - self.num_full_epochs
        self.low_counts: list[int] = []  # |D_low| of each epoch (0 when nothing was pruned)

    def is_pruning_epoch(self, epoch: int) -> bool:
        return epoch < self.prune_epochs

    def low_fraction(self) -> float | None:
        """Mean share of the samples below the mean score over the epochs that pruned: the
        saved fraction is ~ r x this x (those epochs) / num_epochs."""
        low = [c for c in self.low_counts if c > 0]
        return float(np.mean(low)) / self.num_samples if low else None

    def state_dict(self) -> dict[str, Any]:
        return {**super().state_dict(), "low_counts": list(self.low_counts)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        super().load_state_dict(state)
        self.low_counts = list(state.get("low_counts", []))

    def _select(self, epoch: int) -> np.ndarray:
        n = self.num_samples
        self.weights.fill_(1.0)
        scores = self.scores
        if not self.is_pruning_epoch(epoch) or bool((scores == scores[0]).all()):
            self.low_counts.append(0)
            return np.arange(n)  # annealing, or nothing observed yet
        low = (scores < scores.mean()).numpy()  # D_low: H(z) < mean H
        low_idx, high_idx = np.flatnonzero(low), np.flatnonzero(~low)
        self.low_counts.append(int(low_idx.size))
        n_keep = int(self.keep_ratio * low_idx.size)  # official: a fixed count, floor
        kept_low = self.rng.choice(low_idx, n_keep, replace=False)
        self.weights[torch.from_numpy(kept_low)] = 1.0 / self.keep_ratio  # expectation rescaling
        return np.concatenate([high_idx, kept_low])


class DistributedInfoBatch(InfoBatch):
    """:class:`InfoBatch` under DistributedDataParallel.

    Every process draws the same epoch (same seed, same all-gathered scores) and takes the
    strided part ``order[rank::world_size]`` of it (the tail is dropped to a multiple of
    ``world_size`` as in the official sampler, or padded with ``drop_last=False``).
    ``update`` all-gathers (index, loss) pairs so that the scores stay identical everywhere.
    Call it after ``iclr24_common.init_distributed()``.
    """

    def __init__(self, dataset: Any, num_epochs: int, prune_ratio: float = 0.5,
                 delta: float = 0.875, *, seed: int = 0, drop_last: bool = True):  # fmt: skip
        if not get_dist_info().is_distributed:
            raise RuntimeError("DistributedInfoBatch needs an initialised process group "
                               "(iclr24_common.init_distributed() under torchrun)")  # fmt: skip
        super().__init__(dataset, num_epochs, prune_ratio, delta, seed=seed, distributed=True,
                         drop_last=drop_last)  # fmt: skip
