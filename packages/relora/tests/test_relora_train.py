"""The training loop: resume continues bit-identically, data-parallel ranks agree after merges,
the schedule and the merges line up."""

import os
import tempfile
from types import SimpleNamespace

import pytest
import torch
import torch.multiprocessing as mp
from iclr24_relora import ReLoRALinear, ReLoRATrainer, TrainConfig
from torch import nn


class ToyLM(nn.Module):
    """A two-layer byte LM with transformers' calling convention (model(input_ids, labels).loss)."""

    def __init__(self, vocab=32, d=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.head = nn.Linear(d, vocab)

    def forward(self, input_ids, labels=None):
        logits = self.head(self.embed(input_ids) + self.mlp(self.embed(input_ids)))
        if labels is None:
            return SimpleNamespace(loss=None, logits=logits)
        loss = nn.functional.cross_entropy(
            logits[:, :-1].reshape(-1, logits.shape[-1]), labels[:, 1:].reshape(-1)
        )
        return SimpleNamespace(loss=loss, logits=logits)


def batches(step, seed=0):
    g = torch.Generator().manual_seed(seed * 1000 + step)
    return torch.randint(0, 32, (8, 12), generator=g)


CONFIG = TrainConfig(method="relora", total_steps=12, warm_start_steps=3, relora_steps=3,
                     restart_warmup_steps=1, warmup_steps=2, r=2, lr=1e-2, batch_size=8,
                     seq_len=12, seed=0)  # fmt: skip


def fresh(config=CONFIG):
    torch.manual_seed(0)
    return ReLoRATrainer(ToyLM(), config, batches)


def test_relora_merges_after_zero_lr_steps_and_prunes():
    trainer = fresh().train()
    assert trainer.merges == 2  # after steps 6 and 9 (3 + k * 3)
    assert trainer.lrs[3] == trainer.lrs[6] == trainer.lrs[9] == 0.0
    assert all(f >= 0.9 for f in trainer.reset_fractions)
    assert any(isinstance(m, ReLoRALinear) for m in trainer.model.modules())


def test_resume_continues_bit_identically(tmp_path):
    straight = fresh().train()
    first = fresh().train(until=7, checkpoint=tmp_path / "ckpt.pt", checkpoint_every=7)
    del first
    torch.manual_seed(123)  # the checkpoint restores the RNG (dropout) state
    resumed = fresh().load(tmp_path / "ckpt.pt")
    assert resumed.step == 7 and resumed.merges == 1
    resumed.train()
    assert resumed.losses == straight.losses
    for a, b in zip(straight.model.state_dict().values(), resumed.model.state_dict().values(),
                    strict=True):  # fmt: skip
        assert torch.equal(a, b)


def test_snapshot_forks_the_warm_start():
    full = fresh(TrainConfig(**{**CONFIG.__dict__, "method": "full"})).train(until=3)
    relora = fresh().restore(full.snapshot())
    assert relora.step == 3 and relora.losses == full.losses
    relora.train()
    assert relora.merges == 2 and len(relora.losses) == CONFIG.total_steps


def test_bad_config_is_refused():
    with pytest.raises(ValueError):
        TrainConfig(method="nope")
    with pytest.raises(ValueError):
        TrainConfig(total_steps=5, warm_start_steps=5)


NO_DROPOUT = TrainConfig(**{**CONFIG.__dict__, "dropout": 0.0})


def _rank(rank, world, init_file, out_dir):
    import torch.distributed as dist

    os.environ.update(RANK=str(rank), WORLD_SIZE=str(world), LOCAL_RANK=str(rank))
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world)
    try:
        trainer = fresh(NO_DROPOUT).train()
        state = {k: v for k, v in trainer.model.state_dict().items()}
        torch.save({"state": state, "merges": trainer.merges}, f"{out_dir}/rank{rank}.pt")
    finally:
        dist.destroy_process_group()


def test_two_gloo_ranks_agree_after_merges():
    with tempfile.TemporaryDirectory() as tmp:
        # fork: the workers need this test module, which spawn could not import
        mp.start_processes(_rank, args=(2, f"{tmp}/init", tmp), nprocs=2, start_method="fork")
        r0, r1 = (torch.load(f"{tmp}/rank{i}.pt") for i in (0, 1))
    assert r0["merges"] == r1["merges"] == 2
    lora_a = [k for k in r0["state"] if k.endswith("lora_A")]
    assert lora_a
    for k, v in r0["state"].items():  # A re-drawn identically, and every weight in sync
        assert torch.equal(v, r1["state"][k]), k
    # gradients averaged over the two half-batches = one process on the whole batch
    single = fresh(NO_DROPOUT).train().model.state_dict()
    for k, v in r0["state"].items():
        torch.testing.assert_close(v, single[k], atol=1e-5, rtol=1e-4)


def test_update_ranks_are_measured_from_the_warm_start():
    full = fresh(TrainConfig(**{**CONFIG.__dict__, "method": "full"})).train()
    relora = fresh().train()
    assert set(full.w_start) == set(relora.w_start) == {"mlp.0", "mlp.2"}
    ranks = relora.update_ranks()
    assert set(ranks) == {"mlp.0", "mlp.2"} and max(ranks.values()) > CONFIG.r
    assert not torch.equal(full.model.get_submodule("mlp.0").weight, full.w_start["mlp.0"])


def test_per_sequence_losses_average_to_the_evaluation_loss_and_the_update_is_measured():
    trainer = fresh()
    evals = [batches(100 + i) for i in range(2)]
    trainer.train(until=CONFIG.warm_start_steps)
    assert trainer.relative_update() != trainer.relative_update()  # nan: no warm start yet
    trainer.train()
    per_seq = trainer.evaluate_items(evals)
    assert len(per_seq) == 16 and len(set(per_seq)) > 1
    assert sum(per_seq) / 16 == pytest.approx(trainer.evaluate(evals), rel=1e-6)
    moved = trainer.relative_update()
    assert 0 < moved < 10
    # the same number by hand: the merged weights against the warm start's, all together
    num = sum(float((m.merged_weight().detach() - trainer.w_start[n]).pow(2).sum())
              for n, m in trainer.model.named_modules() if isinstance(m, ReLoRALinear))  # fmt: skip
    den = sum(float(w.pow(2).sum()) for w in trainer.w_start.values())
    assert moved == pytest.approx((num / den) ** 0.5, rel=1e-6)
