"""Generated tasks and the paper's loaders (files the test writes)."""

import json

import pytest
from iclr24_batchprompt import load_paper_task, make_sentiment

from iclr24_common import MissingDataError


def test_sentiment_is_balanced_and_seeded():
    a, b = make_sentiment(40, 3), make_sentiment(40, 3)
    assert a == b and a != make_sentiment(40, 4)
    assert sum(int(x["label"]) for x in a) == 20
    good = {"wonderful", "excellent", "superb", "great", "perfect", "lovely", "amazing"}
    for x in a:
        if any(w in x["sentence"] for w in good):
            assert x["label"] == "1"


def test_paper_loaders(tmp_path):
    d = tmp_path / "batchprompt"
    (d / "rte").mkdir(parents=True)
    rows = [
        {"premise": "p", "hypothesis": "h", "label": 0, "idx": 0},
        {"premise": "q", "hypothesis": "k", "label": -1, "idx": 1},
    ]
    (d / "rte" / "validation.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    assert load_paper_task(tmp_path, "rte") == [{"premise": "p", "hypothesis": "h", "label": "0"}]
    (d / "boolq").mkdir()
    (d / "boolq" / "dev.jsonl").write_text(
        json.dumps({"passage": "x", "question": "y", "answer": True})
    )
    assert load_paper_task(tmp_path, "boolq")[0]["label"] == "1"
    with pytest.raises(MissingDataError):
        load_paper_task(tmp_path, "qqp")
    with pytest.raises(ValueError):
        load_paper_task(tmp_path, "gsm8k")
