"""The ``paper`` preset end to end on a miniature of its data, in the real on-disk formats.

What the real run reads (``data.c4_stream``): C4 shards ``<data-dir>/relora/c4/*.json.gz`` as
published in allenai/c4 ``en/`` (gzipped JSON lines with ``text``, ``timestamp``, ``url``, named
``c4-train.00000-of-01024.json.gz``) and a T5 tokenizer saved by ``save_pretrained`` under
``<data-dir>/relora/t5-base/``. Here: one shard of 120 made-up documents, and a T5 tokenizer
(sentencepiece unigram, vocabulary 64 + T5's 100 sentinel ids) trained on them, saved the same
way as t5-base.

Reduced, by ``--set`` only (the paper's values in brackets): steps 24 (20,000), warm start 8
(5,000), ReLoRA cycle 4 (2,000), per-cycle warm-up 2 (500), batch 4 of micro-batches 2 (600 of
50), sequence 32 (512), evaluation batches 2 (100), and the width: hidden 48, MLP 128, rank 8
(768, 2048, 128; r / d = 1/6 as in the paper) with the paper's 12 layers and 12 heads. The
schedule (official cyclic cosine), the four methods, the optimizer pruning and the claims are
the paper preset's own.
"""

import gzip
import io
import json
import random

from iclr24_relora.experiment import PRESETS, app

from iclr24_common.testing import run_paper_preset

WORDS = ("the model data train language large corpus text web page clean common crawl token "
         "learning rank update low high network weight matrix merge restart warm start").split()  # fmt: skip


def write_c4_shard(path, n_docs=120, seed=0):
    rng = random.Random(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    docs = []
    with gzip.open(path, "wt", encoding="utf-8") as f:
        for i in range(n_docs):
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 60))).capitalize()
            docs.append(text + ".")
            row = {"text": docs[-1], "timestamp": "2019-04-25T12:57:54Z",
                   "url": f"https://example.org/{i}"}  # fmt: skip
            f.write(json.dumps(row) + "\n")
    return docs


def write_t5_tokenizer(path, docs):
    import sentencepiece as spm
    from transformers import T5Tokenizer

    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(docs),
        model_writer=model,
        vocab_size=64,
        model_type="unigram",
        pad_id=0,
        eos_id=1,
        unk_id=2,
        bos_id=-1,
        pad_piece="<pad>",
        eos_piece="</s>",
        unk_piece="<unk>",
        minloglevel=2,
    )  # fmt: skip  (t5-base's special ids: pad 0, eos 1, unk 2)
    spiece = path.parent / "spiece.model"
    spiece.write_bytes(model.getvalue())
    T5Tokenizer(vocab_file=str(spiece), extra_ids=100).save_pretrained(path)


def test_paper_preset_runs_on_miniature_c4(tmp_path):
    data = tmp_path / "data"
    docs = write_c4_shard(data / "relora" / "c4" / "c4-train.00000-of-01024.json.gz")
    write_t5_tokenizer(data / "relora" / "t5-base", docs)
    paper = PRESETS["paper"]
    assert (paper.data, paper.schedule, paper.layers, paper.heads) == ("c4", "cyclic", 12, 12)
    # in this order: each --set is validated on its own
    sets = dict(warmup=2, relora_steps=4, warm_start=8, steps=24, batch_size=4, micro_batch=2,
                seq_len=32, eval_batches=2, hidden=48, intermediate=128, r=8)  # fmt: skip
    res = run_paper_preset(app, data, tmp_path / "run", sets=sets)
    assert res["preset"] == "paper" and res["seeds"] == [0]
    assert {c["id"] for c in res["claims"]} == {
        "high-rank-update", "beats-lora", "beats-lora-warm-start", "close-to-full-rank"
    }  # fmt: skip
    checks = {c["id"]: c for c in res["checks"]}
    assert all(c["holds"] for c in checks.values()), checks
    assert "merges per seed [3.0]" in checks["merges-at-zero-lr"]["measured"]
    # the cyclic schedule's merges happen at 1e-7 x the peak lr, not at 0
    assert "largest lr at a merge step 1e-10" in checks["merges-at-zero-lr"]["measured"]
    metrics = res["metrics"]
    vocab = len(json.loads((data / "relora" / "t5-base" / "tokenizer.json").read_text())["model"]["vocab"])  # fmt: skip
    assert vocab >= 64
    for method in ("full", "lora", "lora_warm", "relora"):
        assert metrics[f"{method}/steps"]["mean"] == 24
