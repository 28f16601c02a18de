"""--llm explain-then-simulate with the scripted backend: a feature that fires on one token
is explained by that token and simulated perfectly; a feature that fires at random is not;
the prompts carry what the protocol needs."""

import numpy as np
from iclr24_sae.autointerp import (
    autointerp_scores,
    explain_prompt,
    explain_then_simulate,
    scripted_llm,
)

VOCAB = ["the", " cat", " sat", " on", " mat", ".", " dog", " ran"]


def _decode(ids):
    return "".join(VOCAB[i] for i in ids)


def _data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    tokens = rng.integers(0, len(VOCAB), n)
    cat = np.where(tokens == 1, rng.uniform(1, 2, n), 0.0)  # fires on " cat" only
    noise = np.where(rng.random(n) < 0.2, rng.uniform(0, 1, n), 0.0)  # fires at random
    return tokens, np.stack([cat, noise], 1), np.arange(n) < n // 2


def test_token_feature_is_explained_and_simulated():
    tokens, feats, explain = _data()
    llm = scripted_llm()
    score, text = explain_then_simulate(llm, feats[:, 0], tokens, explain, _decode, seed=0)
    assert text.strip() == "cat" and score > 0.95
    noisy, _ = explain_then_simulate(llm, feats[:, 1], tokens, explain, _decode, seed=0)
    assert noisy < 0.5
    res = autointerp_scores(llm, feats, tokens, explain, _decode, n_features=2, seed=0)
    assert set(res["features"]) == {0, 1} and res["score"] < score
    assert llm.usage.as_dict()["calls"] > 0


def test_explain_prompt_shows_ratings():
    p = explain_prompt([([" a", " b"], np.array([0, 10]))])
    assert "Fires on: ' b' 10" in p and p.endswith("This feature fires on")


def test_llm_autointerp_scores_every_basis(tmp_path):
    from iclr24_sae import SparseAutoencoder
    from iclr24_sae.experiment import PRESETS
    from iclr24_sae.studies import llm_autointerp

    preset = PRESETS["smoke"]
    rng = np.random.default_rng(0)
    tokens = rng.integers(0, len(VOCAB), 600)
    acts = (rng.standard_normal((600, 8)) + 3 * (tokens == 1)[:, None]).astype(np.float32)
    sae = SparseAutoencoder(8, 16, [1e-3], seed=0)
    out = llm_autointerp(preset, 0, scripted_llm(), acts, tokens, sae, 1.0, _decode)
    for name in ("sae", "pca", "ica", "neurons", "random"):
        assert -1 <= out[f"lm/{name}/llm_interp"] <= 1
        assert len(out["_explanations"][name]) == preset.llm_features


def test_unreachable_llm_is_one_line_exit_2(tmp_path, capsys):
    from iclr24_sae.experiment import main

    code = main(["reproduce", "--preset", "smoke", "--llm", "openai:m@http://127.0.0.1:9/v1",
                 "--out", str(tmp_path)])  # fmt: skip
    assert code == 2
    assert "--llm openai:m@http://127.0.0.1:9/v1" in capsys.readouterr().err
