"""The method's invariants: merges keep the function, the schedule's restarts, the optimizer
reset, the rank growth, the export; and agreement with peft and the official code."""

import json
import math
from pathlib import Path

import pytest
import torch
from iclr24_relora import (
    ReLoRALinear,
    cyclic_cosine_schedule,
    effective_rank,
    jagged_cosine_schedule,
    lora_parameters,
    merge_and_reinit,
    reset_optimizer_state,
    tiny_llama,
    unwrap_relora,
    wrap_relora,
)
from torch import nn

OFFICIAL = json.loads((Path(__file__).parent / "fixtures" / "official_relora.json").read_text())


def trained_relora_llama(steps=3):
    torch.manual_seed(0)
    model = wrap_relora(tiny_llama(256, 16, num_hidden_layers=1), r=4, dropout=0.0)
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    x = torch.randint(0, 256, (2, 16))
    for _ in range(steps):
        opt.zero_grad()
        model(input_ids=x, labels=x).loss.backward()
        opt.step()
    return model, opt, x


def test_merge_keeps_the_logits():
    model, _, x = trained_relora_llama()
    model.eval()
    assert any(m.lora_B.abs().sum() > 0 for m in model.modules() if isinstance(m, ReLoRALinear))
    before = model(input_ids=x).logits
    assert merge_and_reinit(model, torch.Generator().manual_seed(1)) == 7
    after = model(input_ids=x).logits
    assert (after - before).abs().max() < 1e-5
    for m in model.modules():
        if isinstance(m, ReLoRALinear):
            assert m.lora_B.abs().sum() == 0 and m.lora_A.abs().sum() > 0 and m.merges == 1


def test_wrap_freezes_w_and_trains_the_rest():
    model = wrap_relora(tiny_llama(256, 16, num_hidden_layers=1), r=2)
    frozen = {n for n, p in model.named_parameters() if not p.requires_grad}
    assert frozen and all(n.endswith("proj.weight") for n in frozen)
    trainable = {n for n, p in model.named_parameters() if p.requires_grad}
    assert any("embed_tokens" in n for n in trainable) and any("lm_head" in n for n in trainable)
    assert any("norm" in n for n in trainable) and len(lora_parameters(model)) == 14
    with pytest.raises(ValueError, match="no nn.Linear"):
        wrap_relora(nn.Sequential(nn.Linear(2, 2)), r=1)


def test_matches_peft_lora_layer():
    # in the test group (the CI leg installs it); the workspace env has no groups
    peft = pytest.importorskip("peft")

    torch.manual_seed(0)
    base = nn.Sequential()
    base.add_module("proj", nn.Linear(6, 5))
    ours = ReLoRALinear(base.proj, r=3, alpha=12.0, dropout=0.0)
    with torch.no_grad():
        ours.lora_B.normal_()  # a non-trivial B (zero merges so far)
    cfg = peft.LoraConfig(r=3, lora_alpha=12, lora_dropout=0.0, target_modules=["proj"])
    theirs = peft.get_peft_model(base, cfg)
    layer = theirs.base_model.model.proj
    with torch.no_grad():
        layer.lora_A["default"].weight.copy_(ours.lora_A)
        layer.lora_B["default"].weight.copy_(ours.lora_B)
    x = torch.randn(4, 6, requires_grad=True)
    x2 = x.detach().clone().requires_grad_(True)
    y_ours, y_theirs = ours(x), theirs(x2)
    torch.testing.assert_close(y_ours, y_theirs)
    y_ours.square().sum().backward()
    y_theirs.square().sum().backward()
    torch.testing.assert_close(ours.lora_A.grad, layer.lora_A["default"].weight.grad)
    torch.testing.assert_close(ours.lora_B.grad, layer.lora_B["default"].weight.grad)
    torch.testing.assert_close(x.grad, x2.grad)
    assert ours.weight.grad is None and layer.base_layer.weight.grad is None  # W frozen in both
    # our merge is peft's merge: W + (alpha / r) B A
    merged = theirs.merge_and_unload().proj.weight
    torch.testing.assert_close(ours.merged_weight(), merged)


def test_wrapped_llama_matches_peft_on_the_same_targets():
    """The whole wrapped LLaMA (official targets: attention and MLP) against peft's LoRA with
    the same factors and the official scale alpha / r = 32 / 128: logits and every LoRA
    factor's gradient equal."""
    # in the test group (the CI leg installs it); the workspace env has no groups
    peft = pytest.importorskip("peft")

    torch.manual_seed(0)
    base = tiny_llama(64, 8, hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                      num_attention_heads=4)  # fmt: skip
    twin = tiny_llama(64, 8, hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                      num_attention_heads=4)  # fmt: skip
    twin.load_state_dict(base.state_dict())
    ours = wrap_relora(base, r=4, alpha=1.0, dropout=0.0)  # alpha / r = 0.25
    names = [n for n, m in ours.named_modules() if isinstance(m, ReLoRALinear)]
    cfg = peft.LoraConfig(r=4, lora_alpha=1.0, lora_dropout=0.0, target_modules=names)
    theirs = peft.get_peft_model(twin, cfg)
    with torch.no_grad():
        for n in names:
            m, t = ours.get_submodule(n), theirs.base_model.model.get_submodule(n)
            m.lora_B.normal_()
            t.lora_A["default"].weight.copy_(m.lora_A)
            t.lora_B["default"].weight.copy_(m.lora_B)
    x = torch.randint(0, 64, (2, 8))
    out_ours, out_theirs = ours(input_ids=x, labels=x), theirs(input_ids=x, labels=x)
    torch.testing.assert_close(out_ours.logits, out_theirs.logits)
    out_ours.loss.backward()
    out_theirs.loss.backward()
    for n in names:
        m, t = ours.get_submodule(n), theirs.base_model.model.get_submodule(n)
        torch.testing.assert_close(m.lora_A.grad, t.lora_A["default"].weight.grad)
        torch.testing.assert_close(m.lora_B.grad, t.lora_B["default"].weight.grad)


def test_lr_is_zero_at_each_restart_and_ramps_linearly():
    kw = dict(total_steps=300, warmup_steps=10, restart_every=50, restart_warmup_steps=5)
    lr = [jagged_cosine_schedule(s, first_restart=100, **kw) for s in range(300)]
    assert lr[0] == 0 and lr[5] == pytest.approx(0.5)
    for restart in (100, 150, 200, 250):
        assert lr[restart] == 0.0
        ramp = lr[restart : restart + 5]
        assert ramp == pytest.approx([i * ramp[1] for i in range(5)])  # linear from 0
        assert lr[restart - 1] > 0 and lr[restart + 5] > lr[restart + 4]
    assert lr[60] > lr[99] > 0.1 and min(lr[10:]) >= 0.0
    assert jagged_cosine_schedule(299, **kw) == pytest.approx(0.1, abs=1e-3)  # min_lr_ratio


@pytest.mark.parametrize("case", OFFICIAL["schedule"], ids=["small", "2000-step cycles"])
def test_schedule_agrees_with_official_cosine_restarts(case):
    c = case["config"]
    ours = [
        jagged_cosine_schedule(
            s,
            total_steps=c["num_training_steps"],
            warmup_steps=c["first_warmup_steps"],
            restart_every=c["restart_every"],
            restart_warmup_steps=c["restart_warmup_steps"],
            min_lr_ratio=c["min_lr_ratio"],
        )
        for s in case["steps"]
    ]
    assert ours == pytest.approx(case["multipliers"], abs=1e-12)


def test_jagged_ramp_ends_on_the_envelope():
    """ac33a08: the ramp after a restart aims at the envelope's value where the ramp ends."""
    kw = dict(total_steps=300, warmup_steps=10, restart_every=50, restart_warmup_steps=5)
    lr = [jagged_cosine_schedule(s, **kw) for s in range(300)]
    no_restarts = [jagged_cosine_schedule(s, total_steps=300, warmup_steps=10) for s in range(300)]
    for restart in (50, 100, 150, 200, 250):
        assert lr[restart + 5] == no_restarts[restart + 5]
        assert lr[restart + 4] == pytest.approx(0.8 * no_restarts[restart + 5])


@pytest.mark.parametrize("case", OFFICIAL["cyclic_schedule"], ids=["small", "paper_130M"])
def test_cyclic_schedule_agrees_with_official_cosine_with_cycle_length(case):
    c = case["config"]
    ours = [
        cyclic_cosine_schedule(
            s,
            cycle_length=c["cycle_length"],
            warmup_steps=c["num_warmup_steps"],
            min_lr_ratio=c["min_lr_ratio"],
        )
        for s in case["steps"]
    ]
    assert ours == pytest.approx(case["multipliers"], abs=1e-12)


def adam_with_state(shape=(8, 32)):
    torch.manual_seed(0)
    p = nn.Parameter(torch.randn(shape))
    opt = torch.optim.Adam([p], lr=1e-3)
    for _ in range(3):
        opt.zero_grad()
        (p * torch.randn(shape)).sum().backward()
        opt.step()
    return p, opt


def test_shared_mask_reset_prunes_90_percent_and_keeps_m_v_consistent():
    p, opt = adam_with_state()
    frac = reset_optimizer_state(opt, [p], "magnitude", 0.9)
    m, v = opt.state[p]["exp_avg"], opt.state[p]["exp_avg_sq"]
    assert frac >= 0.9 and (m == 0).float().mean() >= 0.9
    assert not ((m != 0) & (v == 0)).any()
    assert ((m == 0) == (v == 0)).all()


def test_independent_mode_matches_official_magnitude_pruning():
    case = OFFICIAL["magnitude_pruning"]
    p = nn.Parameter(torch.zeros(6, 10))
    opt = torch.optim.Adam([p])
    opt.state[p] = {
        "step": torch.tensor(1.0),
        "exp_avg": torch.tensor(case["exp_avg"]),
        "exp_avg_sq": torch.tensor(case["exp_avg_sq"]),
    }
    reset_optimizer_state(opt, [p], "magnitude_independent", case["ratio"])
    torch.testing.assert_close(opt.state[p]["exp_avg"], torch.tensor(case["exp_avg_pruned"]))
    torch.testing.assert_close(opt.state[p]["exp_avg_sq"], torch.tensor(case["exp_avg_sq_pruned"]))
    # the official rule prunes m and v separately: some entries keep m != 0 with v == 0
    m, v = opt.state[p]["exp_avg"], opt.state[p]["exp_avg_sq"]
    assert ((m != 0) & (v == 0)).any()


def test_plain_and_random_reset():
    p, opt = adam_with_state()
    assert reset_optimizer_state(opt, [p], "reset") == 1.0
    assert opt.state[p]["exp_avg_sq"].abs().sum() == 0
    p, opt = adam_with_state((64, 64))
    frac = reset_optimizer_state(opt, [p], "random", 0.9, torch.Generator().manual_seed(0))
    assert 0.87 < frac < 0.93
    with pytest.raises(ValueError):
        reset_optimizer_state(opt, [p], "bogus")


def test_merges_build_a_high_rank_update_on_toy_regression():
    torch.manual_seed(0)
    d, r = 24, 2
    target = torch.randn(d, d)  # a full-rank map to learn
    layer = ReLoRALinear(nn.Linear(d, d, bias=False), r=r, alpha=r, dropout=0.0)
    w0 = layer.weight.clone()
    opt = torch.optim.Adam(lora_parameters(layer_holder := nn.ModuleList([layer])), lr=0.05)
    g = torch.Generator().manual_seed(0)
    for _ in range(8):
        for _step in range(40):
            x = torch.randn(64, d)
            loss = (layer(x) - x @ target.T).square().mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        merge_and_reinit(layer_holder, g)
        reset_optimizer_state(opt, lora_parameters(layer_holder), "reset")
    assert effective_rank(layer.weight - w0) > r * 2
    assert effective_rank(layer.delta() + torch.randn(d, r) @ torch.randn(r, d)) <= r


def test_export_is_a_plain_transformers_model(tmp_path):
    from transformers import LlamaForCausalLM

    model, _, x = trained_relora_llama()
    model.eval()
    logits = model(input_ids=x).logits
    unwrap_relora(model).save_pretrained(tmp_path)
    loaded = LlamaForCausalLM.from_pretrained(tmp_path).eval()
    assert not any(isinstance(m, ReLoRALinear) for m in loaded.modules())
    assert (loaded(input_ids=x).logits - logits).abs().max() < 1e-5


def test_kaiming_init_and_lora_only():
    layer = ReLoRALinear(nn.Linear(16, 4), r=2, lora_only=True)
    assert layer.weight is None and layer.lora_B.abs().sum() > 0
    assert layer.lora_A.abs().max() <= 1 / math.sqrt(16)
    with pytest.raises(RuntimeError):
        layer.merge_and_reinit()
    with pytest.raises(ValueError):
        ReLoRALinear(nn.Linear(2, 2), r=0)
