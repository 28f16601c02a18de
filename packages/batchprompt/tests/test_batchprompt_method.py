"""BPE voting (plain and self-weighted), SEAS stopping on scripted confidences, the ledger
against the App. F formula, and the simulator's binomial prediction."""

import math
import re

import numpy as np
import pytest
from iclr24_batchprompt import (
    CONFIDENT,
    NOT_CONFIDENT,
    SENTIMENT,
    TokenTerms,
    Vote,
    formula_tokens,
    llm_answerer,
    majority,
    official_tokens,
    planned_calls,
    run_batches,
)
from iclr24_batchprompt.simulate import (
    PositionBias,
    majority_wrong,
    predicted_accuracy,
    simulated_llm,
)

from iclr24_llm import ScriptedBackend

C, N = CONFIDENT, NOT_CONFIDENT


def votes(*pairs):
    return [Vote(r, 0, lab, conf) for r, (lab, conf) in enumerate(pairs)]


def test_majority_and_self_weighted():
    v = votes((1, C), (0, N), (0, N))
    assert majority(v) == 0  # 2 votes to 1
    assert majority(v, weighted=True) == 1  # 1.0 against 0.2 + 0.2
    assert majority(v, weighted=True, alpha=0.6) == 0
    assert majority(v, rounds=1) == 1
    assert majority(votes((0, C), (1, C))) == 0  # a tie goes to the label voted first
    assert majority(votes((None, None))) is None


def scripted(script):
    """A backend answering item ``s<k>`` with ``script[k][round]`` (label, confidence); the
    round is counted per item, so the answer does not depend on its position."""
    asked = {}

    def fn(prompt):
        lines = []
        for m in re.finditer(r"Input (\d+): s(\d+)", prompt[-1]["content"]):
            i, k = int(m.group(1)), int(m.group(2))
            r = asked.get(k, 0)
            asked[k] = r + 1
            lab, conf = script[k][r]
            lines.append(SENTIMENT.label_line(i, lab, conf))
        return "\n".join(lines)

    return ScriptedBackend(fn), asked


def test_seas_stops_after_two_equal_confident_rounds():
    script = {
        0: [(1, C), (1, C), (1, C), (1, C), (1, C)],  # stops after round 2
        1: [(1, N), (1, C), (1, C), (0, C), (0, C)],  # stops after round 3 (needs the update)
        2: [(1, C), (0, C), (0, C), (1, C), (1, C)],  # labels differ first: stops after round 3
        3: [(0, N), (0, N), (0, N), (0, N), (0, N)],  # never confident: all 5 rounds
    }
    llm, asked = scripted(script)
    items = [{"sentence": f"s{k}", "label": "1"} for k in range(4)]
    res = run_batches(llm_answerer(llm), SENTIMENT, items, batch_size=4, rounds=5, seas=True)
    assert [len(v) for v in res.votes] == [2, 3, 3, 5]
    assert asked == {0: 2, 1: 3, 2: 3, 3: 5}
    assert res.ledger.calls == 5 and res.ledger.asked[-1] == [3]
    assert res.predictions() == [1, 1, 0, 0]


def test_official_seas_stops_on_agreement_alone():
    """adaptive_batch_run.py (ac3c354): two consecutive equal labels, confidence ignored."""
    script = {
        0: [(1, C), (1, C), (1, C), (1, C), (1, C)],  # stops after round 2 (as the paper's)
        1: [(1, N), (1, N), (1, C), (0, C), (0, C)],  # not confident: stops after round 2 here
        2: [(1, C), (0, C), (0, N), (1, C), (1, C)],  # stops after round 3 (0, 0)
        3: [(0, N), (1, N), (0, N), (1, N), (0, N)],  # never agrees: all 5 rounds
    }
    items = [{"sentence": f"s{k}", "label": "1"} for k in range(4)]
    llm, asked = scripted(script)
    res = run_batches(llm_answerer(llm), SENTIMENT, items, batch_size=4, rounds=5,
                      seas="official")  # fmt: skip
    assert [len(v) for v in res.votes] == [2, 2, 3, 5] and res.ledger.calls == 5
    llm, _ = scripted(script)
    paper = run_batches(llm_answerer(llm), SENTIMENT, items, batch_size=4, rounds=5, seas="paper")
    assert [len(v) for v in paper.votes] == [2, 5, 5, 5]  # needs both answers confident
    with pytest.raises(ValueError, match="seas must be"):
        run_batches(llm_answerer(llm), SENTIMENT, items, batch_size=4, seas="early")


def test_seas_batch_that_empties_stops_calling():
    script = {k: [(1, C)] * 5 for k in range(3)}
    llm, _ = scripted(script)
    items = [{"sentence": f"s{k}", "label": "1"} for k in range(3)]
    res = run_batches(llm_answerer(llm), SENTIMENT, items, batch_size=3, rounds=5, seas=True)
    assert res.ledger.calls == 2 and llm.usage.as_dict()["calls"] == 2


def test_bpe_permutes_later_rounds_and_counts_calls():
    script = {k: [(1, C)] * 5 for k in range(10)}
    llm, _ = scripted(script)
    items = [{"sentence": f"s{k}", "label": "1"} for k in range(10)]
    res = run_batches(llm_answerer(llm), SENTIMENT, items, batch_size=4, rounds=5, seed=3)
    assert res.ledger.calls == planned_calls(10, 4, 5) == 15
    assert [v[0].position for v in res.votes[:4]] == [0, 1, 2, 3]  # round 1: original order
    assert any(v[r].position != v[0].position for v in res.votes for r in range(1, 5))
    assert all(sorted(c) == sorted(set(c)) for c in res.ledger.asked)


def test_ledger_equals_app_f_formula():
    """Whitespace tokens (the simulator's count) are additive: the formula alone is exact."""
    bias = PositionBias(drop=0.1, repeat=0.05, extra=0.1)  # many re-asks
    items = [{"sentence": f"Review {k} here.", "label": str(k % 2)} for k in range(37)]
    truth = {it["sentence"]: int(it["label"]) for it in items}
    llm = simulated_llm(SENTIMENT, truth, bias, seed=1)
    res = run_batches(
        llm_answerer(llm), SENTIMENT, items, batch_size=8, rounds=3, seas=True, seed=1
    )
    terms = TokenTerms(llm.count_tokens, SENTIMENT, items, confidence=True)
    assert res.ledger.reasks > 0
    assert res.ledger.prompt_tokens == terms.paper(res.ledger.asked, 8)
    assert terms.overheads(res.ledger.asked, 8) == {"batch_size": 0, "numbers": 0, "joins": 0}
    assert res.ledger.prompt_tokens == llm.usage.as_dict()["prompt_tokens"]
    t_items = [terms.item(i) for i in range(len(items))]
    assert terms.paper(res.ledger.asked, 8) == formula_tokens(
        res.ledger.asked, terms.prompt(8), t_items
    )
    # the official count pays the instruction once per batch: less than what was billed
    rounds = [len(v) for v in res.votes]
    official = official_tokens(math.ceil(37 / 8), terms.prompt(8), t_items, rounds)
    assert official < res.ledger.prompt_tokens


# a byte-level BPE pre-tokenizer's pieces (GPT-2 / SmolLM2 style): words with their leading
# space, each digit alone, a run of whitespace kept whole only at the end of a turn
_PIECES = re.compile(r" ?[^\W\d_]+|\d| ?[^\s\w]+|\s+(?!\S)|\s+")


class PieceCounter(ScriptedBackend):
    """Counts tokens as a chat model would: per turn <|im_start|>, role, pieces, <|im_end|>."""

    def count_tokens(self, prompt):
        return sum(3 + len(_PIECES.findall(f"{m['role']}\n{m['content']}")) for m in prompt)


def test_ledger_equals_app_f_formula_plus_overheads_on_a_bpe_tokenizer():
    bias = PositionBias(drop=0.1, repeat=0.05, extra=0.1)
    items = [{"sentence": f"Review {k} here.", "label": str(k % 2)} for k in range(37)]
    truth = {it["sentence"]: int(it["label"]) for it in items}
    llm = PieceCounter(simulated_llm(SENTIMENT, truth, bias, seed=1).fn)
    res = run_batches(
        llm_answerer(llm), SENTIMENT, items, batch_size=12, rounds=3, seas=True, seed=1
    )
    asked = res.ledger.asked
    terms = TokenTerms(llm.count_tokens, SENTIMENT, items, confidence=True)
    over = terms.overheads(asked, 12)
    assert terms.join == 1  # "\n\n" is one piece at the end of the turn, two before "Input"
    assert over["joins"] == sum(len(c) - 1 for c in asked)
    assert over["numbers"] == sum(j >= 10 for c in asked for j in range(len(c)))  # "Input 10"
    # a re-ask or a shrunk SEAS batch states a one-digit batch size: one token less, 3 times
    assert over["batch_size"] == -3 * sum(len(c) < 10 for c in asked)
    assert res.ledger.reasks > 0 and over["batch_size"] < 0
    assert res.ledger.prompt_tokens == terms.paper(asked, 12) + sum(over.values())
    assert res.ledger.prompt_tokens > terms.paper(asked, 12)  # the formula alone undercounts


def test_binomial_tail():
    assert majority_wrong([0.1] * 3) == pytest.approx(3 * 0.01 * 0.9 + 0.001)
    assert majority_wrong([0.2]) == pytest.approx(0.2)
    assert majority_wrong([0.3, 0.3]) == pytest.approx(0.09 + 0.5 * 2 * 0.21)


def test_simulator_matches_prediction():
    bias = PositionBias(drop=0, repeat=0, extra=0)
    items = [{"sentence": f"Item {k}.", "label": str(k % 2)} for k in range(640)]
    truth = {it["sentence"]: int(it["label"]) for it in items}
    res = run_batches(
        llm_answerer(simulated_llm(SENTIMENT, truth, bias, seed=0)),
        SENTIMENT,
        items,
        batch_size=16,
        rounds=5,
        seed=0,
    )
    for r in (1, 5):
        acc = np.mean([p == int(it["label"]) for p, it in zip(res.predictions(rounds=r), items)])
        pred = predicted_accuracy(bias, len(items), 16, r)
        assert abs(acc - pred) < 3 * math.sqrt(pred * (1 - pred) / len(items)) + 0.01
    assert predicted_accuracy(bias, 640, 16, 5) > predicted_accuracy(bias, 640, 16, 1) + 0.1
