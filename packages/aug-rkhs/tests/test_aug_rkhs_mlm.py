"""Part (c), masked-LM pretraining then a linear probe, at a tiny size: the augmentation masks
at its rate, pretraining lowers the MLM loss, and the command line runs it end to end (with
the claim) and resumes it."""

import math

import numpy as np
import pytest
import torch
from iclr24_aug_rkhs import load_pydoc_topics
from iclr24_aug_rkhs.experiment import PRESETS, app
from iclr24_aug_rkhs.mlm import build_encoder, mask_tokens, pretrain, windows_with_labels

from iclr24_common import load_results

TINY = {"mlm_length": 16, "mlm_steps": 40, "mlm_batch": 16, "mlm_hidden": 16, "mlm_layers": 1,
        "mlm_heads": 2, "mlm_probe_train": 150, "mlm_probe_val": 60, "mlm_probe_test": 150}  # fmt: skip


def test_mask_tokens_masks_at_the_rate_and_labels_only_the_masked():
    tokens = torch.randint(0, 10, (400, 50))
    inputs, labels = mask_tokens(tokens, 0.3, 10, torch.Generator().manual_seed(0))
    masked = inputs == 10
    assert masked.float().mean().item() == pytest.approx(0.3, abs=0.01)
    assert torch.equal(labels[masked], tokens[masked]) and bool((labels[~masked] == -100).all())
    assert torch.equal(inputs[~masked], tokens[~masked])


def test_labels_are_the_corpus_part_a_window_starts_in():
    corpus = load_pydoc_topics()
    wins, labels = windows_with_labels(corpus, 8, 500, 4, np.random.default_rng(0))
    assert wins.shape == (500, 8) and set(labels) == {0, 1, 2, 3}
    tokens = corpus.tokens
    for w, y in zip(wins[:20], labels[:20]):  # the window is in the text, in part y
        starts = np.flatnonzero(np.all(np.lib.stride_tricks.sliding_window_view(tokens, 8) == w, 1))
        assert any(s * 4 // (len(tokens) - 7) == y for s in starts)


def test_pretraining_lowers_the_masked_lm_loss():
    import dataclasses

    preset = dataclasses.replace(PRESETS["smoke"], **TINY)
    corpus = load_pydoc_topics()
    model = build_encoder(corpus.vocab_size, preset, seed=0)
    batch = torch.from_numpy(corpus.windows(16, 64, np.random.default_rng(1)))
    inputs, labels = mask_tokens(batch, 0.3, corpus.vocab_size, torch.Generator().manual_seed(1))
    with torch.no_grad():
        start = model.eval()(input_ids=inputs, labels=labels).loss.item()
    end = pretrain(model, corpus, 0.3, preset, 0, "cpu")
    assert start == pytest.approx(math.log(corpus.vocab_size + 1), rel=0.1)  # uniform at init
    assert end < start - 0.5


def test_the_command_line_runs_the_masked_lm_sweep_and_resumes(tmp_path):
    sets = ["--set", "length=4", "--set", "text_lengths=4,6,8", "--set", "n_windows=100",
            "--set", "mlm_rates=0.1,0.4,0.8"]  # fmt: skip
    for k, v in TINY.items():
        sets += ["--set", f"{k}={v}"]
    argv = ["reproduce", "--preset", "smoke", "--out", str(tmp_path), *sets]
    assert app.main(argv) == 0
    res = load_results(tmp_path)
    claim = next(c for c in res["claims"] if c["id"] == "mlm-sweet-spot")
    assert "untrained encoder" in claim["measured"]
    for rate in ("0.1", "0.4", "0.8"):
        errors = res["metrics"][f"mlm/a{rate}/probe_error"]["per_seed"]
        assert all(0 <= e <= 1 for e in errors)
    assert app.main([*argv, "--resume"]) == 0
    assert load_results(tmp_path)["units"]["computed"] == 0
