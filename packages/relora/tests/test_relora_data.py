"""The default data, the batch stream, and the paper's C4 loader on small files."""

import gzip
import json

import pytest
import torch
from iclr24_relora import byte_stream, c4_stream, pydoc_bytes

from iclr24_common import MissingDataError


def test_pydoc_bytes_are_english_prose():
    data = pydoc_bytes()
    assert len(data) > 400_000 and data.max() < 256
    assert b'The "assert" statement' in data.tobytes()


def test_batches_are_a_function_of_seed_and_step():
    stream = byte_stream()
    a, b = stream.batch(0, 5, 4, 16), stream.batch(0, 5, 4, 16)
    assert a.shape == (4, 16) and torch.equal(a, b)
    assert not torch.equal(a, stream.batch(1, 5, 4, 16))
    ev = stream.eval_batches(2, 4, 16)
    assert torch.equal(ev[0], stream.eval_batches(2, 4, 16)[0])
    assert len(stream.train) + len(stream.val) + len(stream.eval) == len(pydoc_bytes())
    # the validation windows (tuning) come from neither the training nor the test tokens
    val = stream.val_batches(2, 4, 16)
    assert torch.equal(val[1], stream.val_batches(2, 4, 16)[1])
    assert len(stream.val) == pytest.approx(0.05 * len(pydoc_bytes()), abs=2)


def test_c4_missing_says_where_and_how(tmp_path):
    with pytest.raises(MissingDataError, match="t5-base"):
        c4_stream(tmp_path)


def test_c4_loader_reads_shards_with_a_local_tokenizer(tmp_path):
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    words = ["<unk>", "the", "cat", "sat", "on", "mat", "</s>"]
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", eos_token="</s>")
    fast.save_pretrained(tmp_path / "relora" / "t5-base")
    (tmp_path / "relora" / "c4").mkdir()
    with gzip.open(tmp_path / "relora" / "c4" / "c4-train.00000-of-01024.json.gz", "wt") as f:
        for text in ["the cat sat", "on the mat"] * 10:
            f.write(json.dumps({"text": text, "url": "u", "timestamp": "t"}) + "\n")
    stream = c4_stream(tmp_path)
    assert stream.vocab_size == len(words)
    assert stream.tokens[:3].tolist() == [1, 2, 3]
