"""Prompt optimisation: golden meta-prompts, scorer prompts, the official answer
normalisation cases, instruction filters and md5 de-duplication, data loaders, and the
problem on the generic OPRO loop with scripted LLMs."""

import hashlib
import json

import pytest
from iclr24_opro import OPRO, OPROConfig
from iclr24_opro.golden import INSTRUCTION_EXEMPLARS, INSTRUCTION_GOLDEN, INSTRUCTION_INPUT
from iclr24_opro.prompts import (
    INITIAL_INSTRUCTION,
    SENTIMENT_LABELS,
    Example,
    PromptOptimizationProblem,
    PromptProposer,
    extract_instruction,
    instruction_filter,
    instruction_md5,
    instruction_meta_prompt,
    is_correct,
    load_bbh,
    load_gsm8k,
    make_sentiment_task,
    normalize_prediction,
    normalize_target,
    polish_sentence,
    scorer_prompt,
    scripted_instruction_optimizer,
    scripted_sentiment_scorer,
    split_train_test,
)

from iclr24_common import MissingDataError
from iclr24_llm import ScriptedBackend

# ---------------------------------------------------------------- meta-prompt


def test_instruction_golden_gpt_q_begin():
    got = instruction_meta_prompt(
        INSTRUCTION_INPUT, INSTRUCTION_EXEMPLARS, position="Q_begin", threshold=0.3
    )
    assert got == INSTRUCTION_GOLDEN


def test_meta_prompt_top_k_ascending_and_integer_scores():
    ins = [(f"ins {i}", i / 30) for i in range(30)]  # 30 instructions, scores 0 .. 0.967
    got = instruction_meta_prompt(ins, [], max_instructions=20)
    shown = [line for line in got.splitlines() if line.startswith("ins ")]
    assert shown == [f"ins {i}" for i in range(10, 30)]  # the best 20, worst first
    assert "\nscore:\n97\n" in got and "\nscore:\n33\n" in got  # round(score * 100)
    assert "Below are some problems" not in got  # no exemplars given


def test_meta_prompt_text_bison_and_a_begin():
    bison = instruction_meta_prompt([("Go.", 0.5)], [("Q1", "A1")], optimizer="text-bison")
    assert bison.startswith(
        "I have some texts along with their corresponding scores. The texts are arranged in "
        "ascending order based on their scores, where higher scores indicate better quality."
        "\n\n\ntext:\nGo.\nscore:\n50\n\n\nThe following exemplars show how to apply your text"
    )
    assert "\ninput:\n<INS>\nQ1\n\noutput:\nA1\n" in bison
    assert bison.endswith("Write the text in square brackets.")
    a = instruction_meta_prompt([("Go.", 0.5)], [("Q1", "A1")], position="A_begin", include_qa=True)
    assert a.startswith("Your task is to generate the answer starting sentence <Start>.")
    assert "\nQ: Q1\nA: <Start>\nGround truth answer:\nA1\n" in a
    assert a.endswith("generally applicable to all QA pairs above.")
    q_end = instruction_meta_prompt([], [("Q1", "A1")], position="Q_end")
    assert "\nProblem:\nQ1\n<INS>\n" in q_end
    with pytest.raises(ValueError):
        instruction_meta_prompt([], [("Q1", "A1")], position="A_begin")  # needs Q:/A:


def test_scorer_prompt_positions():
    q, i = "What is 2+3?", "Think."
    assert scorer_prompt(q, i, "Q_begin") == "Think.\nWhat is 2+3?"
    assert scorer_prompt(q, i, "Q_end") == "What is 2+3?\nThink."
    assert scorer_prompt(q, "", "Q_begin") == q
    qa = {
        p: scorer_prompt(q, i, p, include_qa=True)
        for p in ("before_Q", "Q_begin", "Q_end", "A_begin")
    }
    assert qa == {
        "before_Q": "Think.\nQ: What is 2+3?\n\nA:",
        "Q_begin": "Q: Think.\nWhat is 2+3?\n\nA:",
        "Q_end": "Q: What is 2+3?\nThink.\n\nA:",
        "A_begin": "Q: What is 2+3?\n\nA: Think.",
    }
    assert scorer_prompt(q, "", "A_begin", include_qa=True) == "Q: What is 2+3?\n\nA:"
    with pytest.raises(ValueError):
        scorer_prompt(q, i, "A_begin")
    with pytest.raises(ValueError):
        scorer_prompt(q, i, "middle")


# ---------------------------------------------------------------- optimizer output


@pytest.mark.parametrize(
    "text, want",
    [
        ("Sure! <INS>Think step by step.</INS> Hope it helps", "Think step by step."),
        ("<INS> Be careful.", "Be careful."),  # no end tag: to the end
        ("Be careful.</INS>", "Be careful."),  # no start tag: from the start
        ("no tags at all", "no tags at all"),
    ],
)
def test_extract_instruction_gpt(text, want):
    assert extract_instruction(text) == want


def test_extract_instruction_other_styles():
    assert extract_instruction("x <Start>Let's see.</Start>", position="A_begin") == "Let's see."
    assert (
        extract_instruction("new: [Read carefully.] [x]", optimizer="text-bison")
        == "Read carefully."
    )
    assert extract_instruction("nothing", optimizer="text-bison") == ""


@pytest.mark.parametrize(  # official eval_utils_test.test_polish_sentence
    "raw, want",
    [
        ("Let's go.", "Let's go."),
        (" Let's go. ", "Let's go."),
        ("let's go.", "Let's go."),
        ("Let's go?", "Let's go?"),
        ("Let's go!", "Let's go!"),
        ("**bold** move", "Bold move"),
    ],
)
def test_polish_sentence(raw, want):
    assert polish_sentence(raw) == want


def test_filters_and_md5():
    assert instruction_filter("x" * 501) == "too long"
    assert instruction_filter("x" * 500) is None
    assert instruction_filter("Use 3 steps.", "gsm8k") == "contains numbers"
    assert instruction_filter("Use 3 steps.", "bbh") is None
    assert instruction_filter("Replace <INS> here.") == "contains 'INS'"
    assert instruction_md5("Let's go.") == hashlib.md5(b"Let's go.").hexdigest()
    assert instruction_md5("a") != instruction_md5("a ")


# ---------------------------------------------------------------- answer normalisation


@pytest.mark.parametrize(
    "pred, kw, want",
    [
        ("The answer is 42.", {"treat_as_number": True}, "42"),
        ("42 is the answer", {"treat_as_number": True}, "42"),
        ("5600 pounds", {"treat_as_number": True}, "5600"),
        ("It weighs 156kgs", {"treat_as_number": True}, "156"),
        ("a 823-yard run", {"treat_as_number": True}, "823"),
        ("The answer is eight", {"treat_as_number": True}, "8"),
        ("The answer is $1,234.", {"treat_as_number": True}, "1234"),
        ("so 3 + 4 = 7", {"treat_as_number": True}, "7"),
        ("The answer is 2.5", {"treat_as_number": True, "num_decimals": 1}, "2.5"),
        ("The answer is 2.46", {"treat_as_number": True, "num_decimals": 1}, "2.5"),
        ("He had 3 apples. #### 12", {"treat_as_number": True}, "12"),
        ("12 apples.\nQ: next question 99", {"treat_as_number": True}, "12"),
        ("The answer is (A) apple", {"treat_as_number": False}, "(a)"),
        ("The answer is: yes. Because", {"treat_as_number": False}, "yes"),
        ("Positive.", {"treat_as_number": False}, "positive"),
        ("1", {"treat_as_number": False, "treat_as_bool": True}, "true"),
        ("0", {"treat_as_number": False, "treat_as_bool": True}, "false"),
        (":yes", {"treat_as_number": False, "treat_as_bool": True}, "yes"),
    ],
)
def test_normalize_prediction(pred, kw, want):
    assert normalize_prediction(pred, **kw) == want


def test_normalize_target():
    assert normalize_target("She has 18 left. #### 18") == ("18", True, 0)
    assert normalize_target("The answer is 2.50") == ("2.50", True, 2)
    assert normalize_target("(B)") == ("(b)", False, 0)


@pytest.mark.parametrize(  # official eval_utils_test.test_get_accuracy, Boolean cases
    "target, pred, want",
    [
        ("Yes", ":yes", True),
        ("Yes", "yes", True),
        ("True", "true", True),
        ("Yes", "true", True),
        ("Yes", "false", False),
        ("Yes", "1", True),
        ("Invalid", "true", False),
        ("Invalid", "false", True),
        ("Invalid", "1", False),
    ],
)
def test_boolean_accuracy(target, pred, want):
    assert is_correct(target, pred, treat_as_bool=True) is want


@pytest.mark.parametrize(
    "target, pred, want",
    [
        ("#### 72", "Natalia sold 48 + 24 = 72 clips.", True),
        ("72", "The answer is 72 clips", True),
        ("72", "The answer is 73", False),
        ("2.5", "about 2.50", True),
        ("positive", "Positive", True),
        ("positive", "negative", False),
        ("(B)", "The answer is (B) east", True),
    ],
)
def test_is_correct(target, pred, want):
    assert is_correct(target, pred) is want


# ---------------------------------------------------------------- data


def test_sentiment_task_and_split():
    data = make_sentiment_task(60, seed=0)
    assert len(data) == 60 and data == make_sentiment_task(60, seed=0)
    assert sum(e.target == "positive" for e in data) == 30
    assert all(e.question.startswith("Review: ") for e in data)
    train, test = split_train_test(data, 1 / 3, seed=0)
    assert len(train) == 20 and len(test) == 40
    assert not set(map(id, train)) & set(map(id, test))
    _, test10 = split_train_test(data, 1 / 3, seed=0, max_test=10)
    assert test10 == test[:10]


def test_gsm8k_loaders(tmp_path):
    with pytest.raises(MissingDataError, match="GSM8K"):
        load_gsm8k(tmp_path, "test")
    (tmp_path / "gsm8k").mkdir()
    (tmp_path / "gsm8k" / "gsm_train.tsv").write_text("How many? 2+2\t4\nAnd 3+3?\t6\n")
    rows = [
        {"question": "Q one", "answer": "so 5 #### 5"},
        {"question": "Q two", "answer": "#### 7"},
    ]
    (tmp_path / "gsm8k" / "test.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    assert load_gsm8k(tmp_path, "train") == [
        Example("How many? 2+2", "4"),
        Example("And 3+3?", "6"),
    ]
    assert load_gsm8k(tmp_path, "test") == [Example("Q one", "5"), Example("Q two", "7")]


def test_bbh_loaders(tmp_path):
    with pytest.raises(MissingDataError, match="navigate"):
        load_bbh(tmp_path, "navigate")
    (tmp_path / "bbh").mkdir()
    (tmp_path / "bbh" / "navigate.json").write_text(
        json.dumps({"examples": [{"input": "Turn left. Back?", "target": "No"}]})
    )
    (tmp_path / "bbh" / "web_of_lies.jsonl").write_text(
        '{"input": "Does X lie?", "target": "Yes"}\n'
    )
    assert load_bbh(tmp_path, "navigate") == [Example("Turn left. Back?", "No")]
    assert load_bbh(tmp_path, "web_of_lies") == [Example("Does X lie?", "Yes")]


# ---------------------------------------------------------------- the problem on the loop


def _problem(**kw):
    scorer = ScriptedBackend(lambda p: "positive", scorer=scripted_sentiment_scorer)
    train, test = split_train_test(make_sentiment_task(40, seed=1), 0.5, seed=1)
    return PromptOptimizationProblem(scorer, train, labels=SENTIMENT_LABELS, **kw), test


def test_problem_scores_and_filters():
    prob, test = _problem(dataset="gsm8k")
    frac_pos = sum(e.target == "positive" for e in prob.train) / len(prob.train)
    assert prob.score(INITIAL_INSTRUCTION) == frac_pos  # the scripted scorer says 'positive'
    assert prob.evaluate("Classify the sentiment.", test) == 1.0
    assert prob.parse("<INS>use 2 steps</INS>") is None  # digits, GSM8K filter
    assert prob.parse("<INS></INS>") is None
    assert prob.parse("<INS>  think of the sentiment.</INS>") == "Think of the sentiment."
    assert prob.filtered == {"contains numbers": 1, "empty": 1}
    assert prob.exemplars(0) != prob.exemplars(1)  # resampled each step
    assert prob.exemplars(3) == prob.exemplars(3) and len(prob.exemplars(0)) == 3


def test_problem_generation_scoring_path():
    scorer = ScriptedBackend(lambda p: "The answer is 4.")
    prob = PromptOptimizationProblem(scorer, [Example("2+2?", "4"), Example("2+3?", "5")])
    assert prob.score("Compute.") == 0.5


def test_prompt_optimisation_loop_with_scripted_llms(tmp_path):
    prob, test = _problem()
    cfg = OPROConfig(steps=3, proposals_per_step=4, stop_at_optimum=False, seed=0)
    opt_llm = ScriptedBackend(scripted_instruction_optimizer)
    res = OPRO(prob, opt_llm, config=cfg, proposer=PromptProposer(opt_llm, cfg)).run(tmp_path / "r")
    assert res.steps_run == 3 and res.history[0].solution == INITIAL_INSTRUCTION
    assert res.best.value == 1.0 and "sentiment" in res.best.solution.lower()
    assert res.best_per_step[0] < 1.0 and res.best_per_step[-1] == 1.0
    keys = [prob.key(s.solution) for s in res.history]
    assert len(keys) == len(set(keys))  # md5 de-duplicated
    rec = json.loads((tmp_path / "r" / "trajectory.jsonl").read_text().splitlines()[0])
    assert rec["samples"] == 4
    # the meta-prompt the optimizer saw at step 1 shows the instructions ascending, as integers
    shown = sorted(res.history, key=lambda s: s.value)
    meta = prob.meta_prompt(shown)
    start = f"\nscore:\n{round(100 * res.history[0].value)}\n"
    assert meta.index(start) < meta.index("\nscore:\n100\n")


def test_bbh_prompt_task_from_the_command_line_options(tmp_path):
    import argparse
    import json as _json
    from types import SimpleNamespace

    from iclr24_opro.experiment import PRESETS, load_prompt_task

    from iclr24_common import MissingDataError, UsageError

    (tmp_path / "bbh").mkdir()
    rows = [
        {"input": f"Take {i} steps. Back to start?", "target": "Yes" if i % 2 else "No"}
        for i in range(10)
    ]
    (tmp_path / "bbh" / "navigate.jsonl").write_text("\n".join(_json.dumps(r) for r in rows))
    ctx = SimpleNamespace(args=argparse.Namespace(prompt_task="bbh:navigate"), data_dir=tmp_path)
    train, test, labels, dataset = load_prompt_task(PRESETS["paper"], ctx, 0)
    assert (len(train), len(test), labels, dataset) == (
        2,
        8,
        None,
        "bbh:navigate",
    )  # official 20/80
    assert {e.target for e in train + test} == {"Yes", "No"}
    ctx.args.prompt_task = "bbh:web_of_lies"
    with pytest.raises(MissingDataError, match="web_of_lies"):
        load_prompt_task(PRESETS["paper"], ctx, 0)
    for bad in ["bbh:", "mmlu"]:
        ctx.args.prompt_task = bad
        with pytest.raises(UsageError):
            load_prompt_task(PRESETS["paper"], ctx, 0)
