"""Worker for test_infobatch_distributed.py, run under
``python -m torch.distributed.run --standalone --nproc_per_node=2`` (gloo, CPU).

Checks, on every rank: the shards of each epoch are disjoint, equally long, and cover the
kept indices but for a tail shorter than the world size; the scores stay identical on all
ranks after updates; a short DDP training run with train_run works. Writes ``ok`` files.

Then the equality run: InfoBatch trained with DDP (2 processes, batch 16 each) and, on rank 0,
the same training in one process (batch 32, the same global batches); rank 0 writes both runs'
kept sets per epoch, per-epoch losses, test accuracy and final weights to ``equality.json``
for the test to compare.
"""

import json
import os
import sys

import torch
import torch.distributed as dist
from iclr24_infobatch import DistributedInfoBatch, InfoBatch
from iclr24_infobatch.data import Split
from iclr24_infobatch.models import mlp
from iclr24_infobatch.train import TrainConfig, train_run

from iclr24_common import cleanup, init_distributed


def gather_list(x: torch.Tensor) -> list[torch.Tensor]:
    parts = [torch.empty_like(x) for _ in range(dist.get_world_size())]
    dist.all_gather(parts, x.contiguous())
    return parts


def main(out_dir: str) -> None:
    info = init_distributed("cpu")
    assert info.world_size == 2, info
    n, epochs = 103, 6
    ib = DistributedInfoBatch(n, epochs, prune_ratio=0.5, seed=7)
    ref = InfoBatch(n, epochs, prune_ratio=0.5, seed=7)  # the same draws, one process
    losses = torch.linspace(0.1, 4.0, n) ** 2
    for epoch in range(epochs):
        length = len(ib.sampler)
        local = ib.next_epoch()
        assert len(local) == length
        full_order = ref.next_epoch()
        shards = gather_list(local)
        assert len({len(s) for s in shards}) == 1  # equal shard sizes: DDP stays in step
        union = torch.cat(shards)
        assert len(torch.unique(union)) == len(union)  # disjoint
        kept = set(full_order.tolist())
        assert set(union.tolist()) <= kept
        assert 0 <= len(kept) - len(union) < info.world_size
        for b in torch.split(local, 8):
            ib.update(losses[b] * (1 + epoch), b)
        # the single-process reference records the same (gathered) losses
        ref.update(losses[union] * (1 + epoch), union)
        all_scores = gather_list(ib.scores)
        assert torch.equal(all_scores[0], all_scores[1])
        assert torch.equal(ib.scores, ref.scores)
        assert ib.forward_passes == ref.forward_passes
    assert ib.kept_per_epoch == ref.kept_per_epoch

    # A short DDP training run through the experiment's loop.
    g = torch.Generator().manual_seed(0)  # a linearly separable 3-class task, no sklearn import
    x = torch.randn(600, 20, generator=g)
    y = (x[:, :3] * torch.tensor([2.0, 1.0, 0.5])).argmax(1)
    split = Split(x[:480], y[:480], x[480:], y[480:], 3, "toy")
    torch.manual_seed(0)
    pruner = DistributedInfoBatch(len(split.y_train), 6, prune_ratio=0.5, seed=0)
    res = train_run(
        split,
        mlp(20, split.num_classes, hidden=32),
        pruner,
        TrainConfig(epochs=6, batch_size=16, max_lr=0.3),
        "cpu",
    )
    accs = gather_list(torch.tensor([res["test_acc"]]))
    assert accs[0].item() == accs[1].item() > 60.0, accs  # replicas agree, and learned
    assert res["saved_fraction"] > 0
    with open(os.path.join(out_dir, f"ok{info.rank}"), "w") as f:
        f.write(f"{res['test_acc']:.3f} {res['saved_fraction']:.4f}\n")
    equality(out_dir, split, info.rank)
    cleanup()


class Recorded:
    """Records the global kept set of every epoch (the selection, before sharding)."""

    def _select(self, epoch):
        kept = super()._select(epoch)
        self.kept_sets.append(sorted(int(i) for i in kept))
        return kept


class RecordedDistributed(Recorded, DistributedInfoBatch):
    kept_sets: list


class RecordedSingle(Recorded, InfoBatch):
    """One process; each epoch's order loses the same tail as under 2 processes (the official
    sampler's drop_last: at most 1 sample of an odd kept count), so that both runs train on
    the same samples."""

    kept_sets: list

    def _shard(self, order):
        return super()._shard(order[: (order.size // 2) * 2])


EPOCHS, BATCH, SEED = 8, 16, 3


def _train(split, pruner, batch):
    torch.manual_seed(SEED)  # the same initial weights (DDP broadcasts rank 0's anyway)
    model = mlp(split.x_train.shape[1], split.num_classes, hidden=32)
    res = train_run(split, model, pruner, TrainConfig(epochs=EPOCHS, batch_size=batch, max_lr=0.3),
                    "cpu")  # fmt: skip
    weights = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    return res, weights


def equality(out_dir, split, rank):
    """DDP InfoBatch vs the same training in one process with the global batch."""
    n = len(split.y_train)
    ddp_pruner = RecordedDistributed(n, EPOCHS, prune_ratio=0.5, seed=SEED)
    ddp_pruner.kept_sets = []
    ddp, w_ddp = _train(split, ddp_pruner, BATCH)
    # each rank's epoch loss is the mean of its batches' losses; the global batch's loss is
    # the mean of the two ranks' (equal batch sizes), so the mean over ranks is the global one
    losses = torch.tensor([ep["train_loss"] for ep in ddp["epochs"]], dtype=torch.float64)
    dist.all_reduce(losses)
    if rank != 0:
        return
    one_pruner = RecordedSingle(n, EPOCHS, prune_ratio=0.5, seed=SEED)
    one_pruner.kept_sets = []
    one, w_one = _train(split, one_pruner, 2 * BATCH)
    out = {
        "ddp": {"kept": ddp_pruner.kept_sets, "loss": (losses / 2).tolist(),
                "test_acc": ddp["test_acc"], "saved": ddp["saved_fraction"],
                "kept_per_epoch": ddp["kept_per_epoch"]},
        "single": {"kept": one_pruner.kept_sets, "loss": [ep["train_loss"] for ep in one["epochs"]],
                   "test_acc": one["test_acc"], "saved": one["saved_fraction"],
                   "kept_per_epoch": one["kept_per_epoch"]},
        "max_weight_diff": float((w_ddp - w_one).abs().max()),
    }  # fmt: skip
    with open(os.path.join(out_dir, "equality.json"), "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main(sys.argv[1])
