"""Part (c), masked-LM pretraining then a linear probe, at a tiny size: the augmentation masks
at its rate, the labels are the corpus parts, and the command line runs it end to end
(pretraining lowers the MLM loss, the claim is made) and resumes it."""

import math

import numpy as np
import pytest
import torch
from iclr24_aug_rkhs import load_pydoc_topics
from iclr24_aug_rkhs.experiment import app
from iclr24_aug_rkhs.mlm import mask_tokens, windows_with_labels

from iclr24_common import load_results

TINY = {"mlm_length": 16, "mlm_steps": 40, "mlm_batch": 16, "mlm_lr": 1e-2, "mlm_hidden": 16,
        "mlm_layers": 1, "mlm_heads": 2, "mlm_probe_train": 150, "mlm_probe_val": 60,
        "mlm_probe_test": 150}  # fmt: skip


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


def test_the_command_line_runs_the_masked_lm_sweep_and_resumes(tmp_path):
    sets = ["--set", "length=4", "--set", "text_lengths=4,6,8", "--set", "n_windows=100",
            "--set", "mlm_rates=0.1,0.4,0.8"]  # fmt: skip
    for k, v in TINY.items():
        sets += ["--set", f"{k}={v}"]
    argv = [
        "reproduce",
        "--preset",
        "smoke",
        "--seeds",
        "0",
        "--threads",
        "1",
        "--out",
        str(tmp_path),
        *sets,
    ]
    assert app.main(argv) == 0
    res = load_results(tmp_path)
    claim = next(c for c in res["claims"] if c["id"] == "mlm-sweet-spot")
    assert "untrained encoder" in claim["measured"]
    uniform = math.log(load_pydoc_topics().vocab_size + 1)  # the MLM loss at initialisation
    for rate in ("0.1", "0.4", "0.8"):
        assert 0 <= res["metrics"][f"mlm/a{rate}/probe_error"]["mean"] <= 1
        # pretraining learnt at least the character frequencies
        assert res["metrics"][f"mlm/a{rate}/mlm_loss"]["mean"] < uniform - 0.5
    assert app.main([*argv, "--resume"]) == 0
    assert load_results(tmp_path)["units"]["computed"] == 0
