"""Worker for test_infobatch_distributed.py, run under
``python -m torch.distributed.run --standalone --nproc_per_node=2`` (gloo, CPU).

Checks, on every rank: the shards of each epoch are disjoint, equally long, and cover the
kept indices but for a tail shorter than the world size; the scores stay identical on all
ranks after updates; a short DDP training run with train_run works. Writes ``ok`` files.
"""

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
    cleanup()


if __name__ == "__main__":
    main(sys.argv[1])
