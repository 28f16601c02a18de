"""Generated tasks, the paper's loaders and GSM8K (files the test writes)."""

import json

import pytest
from iclr24_batchprompt import (
    GSM8K,
    build_messages,
    load_paper_task,
    make_sentiment,
    parse_answer,
)
from iclr24_batchprompt.data import gsm8k_answer
from iclr24_batchprompt.experiment import app

from iclr24_common import MissingDataError, load_results


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
    with pytest.raises(MissingDataError, match="gsm8k test split"):
        load_paper_task(tmp_path, "gsm8k")
    with pytest.raises(ValueError):
        load_paper_task(tmp_path, "mnli")


GSM8K_ROWS = [  # the GSM8K file format: question, a worked answer ending "#### <number>"
    {"question": "Ann has 3 apples and buys 4 more. How many apples?", "answer": "3+4=7\n#### 7"},
    {"question": "A car costs $1,000 more than $250. Its price?", "answer": "...\n#### 1,250"},
    {"question": "Half of 7?", "answer": "7/2=3.5\n#### 3.5"},
]


def write_gsm8k(root):
    d = root / "batchprompt" / "gsm8k"
    d.mkdir(parents=True)
    (d / "test.jsonl").write_text("\n".join(json.dumps(r) for r in GSM8K_ROWS))


def test_gsm8k_loader_takes_the_number_after_the_hashes(tmp_path):
    write_gsm8k(tmp_path)
    items = load_paper_task(tmp_path, "gsm8k")
    assert [it["label"] for it in items] == ["7", "1250", "3.5"]
    assert items[0]["question"] == GSM8K_ROWS[0]["question"]
    with pytest.raises(ValueError, match="####"):
        gsm8k_answer("the answer is 7")


def test_gsm8k_batch_prompt_and_numeric_parsing():
    items = [{"question": r["question"]} for r in GSM8K_ROWS[:2]]
    msgs = build_messages(GSM8K, items)
    assert "given 2 questions from the GSM8K dataset" in msgs[0]["content"]
    assert msgs[-1]["content"] == f"Question 0: {items[0]['question']}\n\n" + (
        f"Question 1: {items[1]['question']}\n\n"
    )
    answer = (
        "Working for Question 1: 1000 + 250 = 1250.\nLabel for Question 1: [$1,250]\n"
        "Working for Question 0: 3 + 4 = 7.\nLabel for Question 0: [7 apples]\n"
        "Label for Question 2: [3.5]"
    )
    p = parse_answer(GSM8K, answer, 2)
    assert p.labels == {0: 7, 1: 1250} and p.extra == [2] and not p.missing
    assert parse_answer(GSM8K, "Label for Question 0: [3.50]", 1).labels == {0: 3.5}
    assert parse_answer(GSM8K, "Label for Question 0: [none]", 1).missing == [0]
    assert GSM8K.label_line(3, 42) == "Label for Question 3: [42]"


def test_gsm8k_reproduction_on_the_simulator(tmp_path):
    write_gsm8k(tmp_path)
    # batch sizes 1, 16, 32, 64 (SEAS at 32, 64) on 3 questions: one batch each
    small = ["--set", "votes=3", "--set", "sim_items=16", "--set", "sim_batch_size=4",
             "--set", "sim_votes=3"]  # fmt: skip
    argv = ["reproduce", "--preset", "paper", "--llm", "simulated", "--task", "gsm8k",
            "--n-items", "3", "--data-dir", str(tmp_path), "--out", str(tmp_path / "run"), *small]  # fmt: skip
    assert app.main(argv) == 0
    res = load_results(tmp_path / "run")
    assert res["task"] == "gsm8k" and "llm/bs32/seas/acc" in res["metrics"]
    checks = {c["id"]: c["holds"] for c in res["checks"]}
    assert checks["tokens-app-f-formula"] and checks["calls-ceil-n-over-b-times-k"]
    assert app.main([*argv[:-len(small) - 2], "--data-dir", str(tmp_path / "none"),
                     "--out", str(tmp_path / "run2")]) == 2  # fmt: skip
