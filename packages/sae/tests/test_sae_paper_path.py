"""The paper preset's path (issue 41): ``reproduce --preset paper`` on a miniature of the two
inputs it reads under ``<data-dir>/sae/``, in their real on-disk formats:

- ``pythia-70m-deduped/``: a Hugging Face GPT-NeoX folder as ``save_pretrained`` writes it
  (``config.json``, ``model.safetensors``, a byte-level BPE ``tokenizer.json`` with its
  ``tokenizer_config.json``), the Pythia-70M architecture (6 layers, parallel residual,
  rotary on 25% of each head) at a reduced width (64, 4 heads; Pythia-70M: 512, 8 heads) and
  random weights; the tokenizer is trained here on the miniature text (Pythia's has 50k
  tokens);
- ``openwebtext/*.txt``: plain-text documents, one per file.

``--set`` caps only sizes: 2 seeds, the toy at d = 32 / 64 features (paper 256 / 512) and 20
steps of 256, 24 sequences of 64 tokens, 30 SAE steps, 6 IOI prompts. Everything else is the
paper preset: layer 2, tied SAE without pre-bias, R = 2, alpha = 8.6e-4 on raw activations,
Adam 1e-3."""

import torch
from iclr24_sae.experiment import app
from iclr24_sae.patching import NAMES, TEMPLATES

from iclr24_common.testing import run_paper_preset

SENTENCES = (
    "The committee met on Tuesday to discuss the new budget for the city library.",
    "Researchers found that the river had risen by two metres after the storm.",
    "She said the results would be published in the journal next spring.",
    "Prices of coffee and tea went up again this year, according to the report.",
)


def _documents() -> list[str]:
    docs = []
    for i in range(24):
        names = [NAMES[(i + j) % len(NAMES)] for j in range(4)]
        story = " ".join(t.format(A=" " + names[0], B=" " + names[1], S=" " + names[2])
                         for t in TEMPLATES)  # fmt: skip
        docs.append(f"{SENTENCES[i % 4]} {story} {names[3]} smiled. {SENTENCES[(i + 1) % 4]}")
    return docs


def _write_pythia(folder, docs) -> None:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GPTNeoXConfig, GPTNeoXForCausalLM, PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=600, special_tokens=["<|endoftext|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())  # fmt: skip
    bpe.train_from_iterator(docs + [" " + n for n in NAMES] * 20, trainer)
    tok = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|endoftext|>",
                                  bos_token="<|endoftext|>")  # fmt: skip
    tok.save_pretrained(folder)
    torch.manual_seed(0)
    config = GPTNeoXConfig(vocab_size=len(tok), hidden_size=64, intermediate_size=256,
                           num_hidden_layers=6, num_attention_heads=4, rotary_pct=0.25,
                           use_parallel_residual=True, max_position_embeddings=2048,
                           eos_token_id=tok.eos_token_id, bos_token_id=tok.eos_token_id)  # fmt: skip
    GPTNeoXForCausalLM(config).save_pretrained(folder)


def test_paper_preset_runs_on_miniature_pythia_and_openwebtext(tmp_path):
    data = tmp_path / "data"
    docs = _documents()
    _write_pythia(data / "sae" / "pythia-70m-deduped", docs)
    (data / "sae" / "openwebtext").mkdir(parents=True)
    for i, doc in enumerate(docs):
        (data / "sae" / "openwebtext" / f"urlsf_subset00-{i}_data.txt").write_text(doc)
    res = run_paper_preset(app, data, tmp_path / "run", sets={
        "seeds": "0,1", "toy_d": 32, "toy_features": 64, "toy_steps": 20, "toy_batch": 256,
        "toy_eval_samples": 512, "toy_fit_samples": 1000, "n_seq": 24, "seq_len": 64,
        "steps": 30, "baseline_fit_tokens": 1000, "ica_fit_tokens": 500, "interp_tokens": 400,
        "ce_seqs": 2, "dashboard_features": 2, "ioi_prompts": 6, "ioi_ks": "1,4,16"})  # fmt: skip
    assert {c["id"] for c in res["claims"]} == {
        "toy/resolves-superposition", "lm/more-interpretable", "ioi/sae-localises"}  # fmt: skip
    assert all(c["holds"] for c in res["checks"])
    cfg, m = res["config"], res["metrics"]
    assert cfg["tied"] and not cfg["pre_bias"] and cfg["layer"] == 2 and cfg["lr"] == 1e-3
    assert cfg["alphas"] == [8.6e-4] and not cfg["normalize"]
    assert m["lm/sae/scale"]["mean"] == 1.0  # the paper's raw activations
    assert m["lm/neurons/n_features"]["mean"] == 2 * 64  # the miniature's width, both signs
