"""Prompt optimisation: meta-prompts (the official gen_meta_prompt outputs, both types),
scorer prompts, instruction extraction, filters and md5 de-duplication, exemplar selection,
periodic validation, data splits and loaders, and the problem on the loop with scripted LLMs."""

import hashlib
import json

import numpy as np
import pytest
from iclr24_opro import OPRO, OPROConfig
from iclr24_opro.data import (
    SENTIMENT_LABELS,
    Example,
    TaskKind,
    load_bbh,
    load_gsm8k,
    make_sentiment_task,
    official_split,
    split_examples,
    task_kind,
)
from iclr24_opro.official import FEW_SHOT, HISTORY, _instruction_prompt, fixtures
from iclr24_opro.prompts import (
    INITIAL_INSTRUCTION,
    SCORER_THRESHOLD,
    PromptOptimizationProblem,
    PromptProposer,
    extract_instruction,
    instruction_filter,
    instruction_md5,
    instruction_meta_prompt,
    polish_sentence,
    scorer_prompt,
    scripted_instruction_optimizer,
    scripted_sentiment_scorer,
)

from iclr24_common import MissingDataError
from iclr24_llm import ScriptedBackend

# ---------------------------------------------------------------- meta-prompt


@pytest.mark.parametrize(
    "case", fixtures()["instruction_meta_prompts"],
    ids=lambda c: "-".join(str(v) for k, v in c.items() if k != "official"),
)  # fmt: skip
def test_instruction_meta_prompt_equals_the_official_output(case):
    """opt_utils.gen_meta_prompt outputs: every optimizer style, position, Q:/A: format,
    threshold, bucketing, exemplar order, and the instructions_only type."""
    assert _instruction_prompt(case, HISTORY) == case["official"]


def test_fixture_inputs_are_what_the_official_call_saw():
    assert [q for q, _ in FEW_SHOT] == [
        "How many legs do 2 cats have?", "Is 7 odd?", "Which is (A) red (B) blue?"]  # fmt: skip
    assert fixtures()["provenance"]["repository"] == "https://github.com/google-deepmind/opro"


def test_meta_prompt_top_k_ascending_and_integer_scores():
    ins = [(f"ins {i}", i / 30) for i in range(30)]  # 30 instructions, scores 0 .. 0.967
    got = instruction_meta_prompt(ins, None, max_instructions=20)
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
    assert instruction_meta_prompt(
        [], [("Q1", "A1")], instructions_before_exemplars=False
    ).startswith("Below are some problems.\n\nProblem:\n<INS>\nQ1\n")
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
    assert extract_instruction("a <TEXT>Solve.</TEXT> <TEXT>x</TEXT>",
                               meta_prompt_type="instructions_only") == "Solve."  # fmt: skip
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


# ---------------------------------------------------------------- data


def test_sentiment_task_and_split():
    data = make_sentiment_task(60, seed=0)
    assert len(data) == 60 and data == make_sentiment_task(60, seed=0)
    assert sum(e.target == "positive" for e in data) == 30
    assert all(e.question.startswith("Review: ") for e in data)
    train, evals, test = split_examples(data, 1 / 3)
    assert len(train) == 20 and len(test) == 40 and evals == []
    assert not set(map(id, train)) & set(map(id, test))
    _, _, test10 = split_examples(data, 1 / 3, max_test=10)
    assert test10 == test[:10]


def test_official_split_replays_the_global_seed_0_draws():
    """optimize_instructions.py: np.random.seed(0); train = sorted choice; eval from the rest."""
    n = 97
    np.random.seed(0)
    train = np.sort(np.random.choice(n, size=int(0.2 * n), replace=False))
    rest = np.sort(np.array(list(set(np.arange(n)) - set(train))))
    evals = np.sort(np.random.choice(rest, size=int(0.2 * n), replace=False))
    tr, ev, te = official_split(n, 0.2, 0.2)
    np.testing.assert_array_equal(tr, train)
    np.testing.assert_array_equal(ev, evals)
    assert sorted([*tr, *ev, *te]) == list(range(n))


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
    train, _, test = split_examples(make_sentiment_task(40, seed=1), 0.5)
    return PromptOptimizationProblem(scorer, train, labels=SENTIMENT_LABELS, **kw), test


def test_problem_scores_and_filters():
    prob, test = _problem(kind=TaskKind("gsm8k"))  # the GSM8K filter, text answers
    frac_pos = sum(e.target == "positive" for e in prob.train) / len(prob.train)
    assert prob.score(INITIAL_INSTRUCTION) == frac_pos  # the scripted scorer says 'positive'
    assert prob.evaluate("Classify the sentiment.", test) == 1.0
    assert prob.parse("<INS>use 2 steps</INS>") is None  # digits, GSM8K filter
    assert prob.parse("<INS></INS>") is None
    assert prob.parse("<INS>  think of the sentiment.</INS>") == "Think of the sentiment."
    assert prob.filtered == {"contains numbers": 1, "empty": 1}
    assert prob.exemplars(0) != prob.exemplars(1)  # resampled each step
    assert prob.exemplars(3) == prob.exemplars(3) and len(prob.exemplars(0)) == 3


def test_exemplar_selection_follows_the_official_criteria():
    prob, _ = _problem()
    n = len(prob.train)
    for step in (0, 5):  # official 'random': np.random.seed(i_step); choice(train_index, 3)
        np.random.seed(step)
        assert prob.exemplar_indices(step) == sorted(np.random.choice(n, 3, replace=False).tolist())
    prob.exemplar_selection = "constant"
    assert prob.exemplar_indices(0) == prob.exemplar_indices(7)
    prob.exemplar_selection = "accumulative_most_frequent"
    prob._wrong = {"a": [4, 9], "b": [9, 2], "c": [9]}
    assert prob.exemplar_indices(3) == [2, 4, 9]  # 3 wrong questions: all of them
    prob._wrong["d"] = [11, 4]
    got = prob.exemplar_indices(3)
    assert 9 in got or 4 in got  # drawn among the most often wrong
    prob.exemplar_selection = "current_most_frequent"
    from iclr24_opro import Scored

    shown = [Scored("b", 0.5, 0)]  # only b is shown: its wrong questions
    prob._wrong = {instruction_md5("b"): [2, 9], instruction_md5("x"): [1]}
    assert prob.exemplar_indices(1, shown) == [2, 9]
    with pytest.raises(ValueError, match="exemplar_selection"):
        _problem(exemplar_selection="best")


def test_scorer_threshold_is_the_official_one():
    assert SCORER_THRESHOLD == {"palm": 0.0, "gpt": 0.3}
    shown = instruction_meta_prompt([("Low.", 0.2), ("High.", 0.8)], None, threshold=0.3)
    assert "High." in shown and "Low." not in shown


def test_periodic_validation_scores_the_step_instructions(tmp_path):
    prob, test = _problem(eval_examples=make_sentiment_task(10, seed=9), eval_interval=2)
    cfg = OPROConfig(steps=3, proposals_per_step=4, stop_at_optimum=False, seed=0)
    opt_llm = ScriptedBackend(scripted_instruction_optimizer)
    res = OPRO(prob, opt_llm, config=cfg, proposer=PromptProposer(opt_llm, cfg)).run(tmp_path / "r")
    steps = {s for s, _, _ in prob.eval_results}
    assert steps <= {0, 2} and 0 in steps  # every eval_interval steps, from step 0
    for _, ins, acc in prob.eval_results:
        assert acc == prob.evaluate(ins, prob.eval_examples)
    # resumed from the checkpoint, the validation record and the scores come back
    again, _ = _problem(eval_examples=prob.eval_examples, eval_interval=2)
    OPRO(again, opt_llm, config=cfg, proposer=PromptProposer(opt_llm, cfg)).run(
        tmp_path / "r", resume=True
    )
    assert again.eval_results == prob.eval_results and again._scores == prob._scores
    assert res.steps_run == 3


def test_instructions_only_meta_prompt_and_parsing():
    prob, _ = _problem(meta_prompt_type="instructions_only", kind=task_kind("bbh:web_of_lies"))
    from iclr24_opro import Scored

    text = prob.meta_prompt([Scored("B.", 0.5, 0), Scored("A.", 0.25, -1)])
    assert text == ("Create a piece of text at the beginning of the question to enhance the "
                    "precision in solving diverse web of lies problems.\n\nPrecision: 25 "
                    "<TEXT>A.</TEXT>\n\nPrecision: 50 <TEXT>B.</TEXT>")  # fmt: skip
    assert prob.parse("sure: <TEXT>think again</TEXT>") == "Think again"
    assert prob.parse("no tags") is None


def test_multiple_choice_is_judged_by_option_text():
    q = "Where does the sun rise?\nOptions:\n(A) west\n(B) east"
    scorer = ScriptedBackend(lambda p: "The answer is east.")
    prob = PromptOptimizationProblem(
        scorer, [Example(q, "(B)")], kind=task_kind("bbh:date_understanding")
    )
    assert prob.score("Answer.") == 1.0
    prob_text = PromptOptimizationProblem(
        scorer, [Example(q, "(B)")], kind=task_kind("bbh:navigate")
    )
    assert prob_text.score("Answer.") == 0.0  # not a multiple-choice task: "(b)" not in it


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


def test_bbh_prompt_task_from_the_preset(tmp_path):
    import json as _json
    from dataclasses import replace

    from iclr24_opro.experiment import PRESETS, load_prompt_data

    (tmp_path / "bbh").mkdir()
    rows = [
        {"input": f"Take {i} steps. Back to start?", "target": "Yes" if i % 2 else "No"}
        for i in range(10)
    ]
    (tmp_path / "bbh" / "navigate.jsonl").write_text("\n".join(_json.dumps(r) for r in rows))
    preset = replace(PRESETS["paper"], prompt_task="bbh:navigate", prompt_train_ratio=0.2)
    train, evals, test, labels = load_prompt_data(preset, tmp_path, 0)
    assert (len(train), len(evals), len(test), labels) == (2, 0, 8, None)  # official 20/80
    assert {e.target for e in train + test} == {"Yes", "No"}
    with pytest.raises(MissingDataError, match="web_of_lies"):
        load_prompt_data(replace(preset, prompt_task="bbh:web_of_lies"), tmp_path, 0)
    for bad in ["bbh:", "mmlu", "bbh:nope"]:
        with pytest.raises(ValueError, match="prompt task"):
            replace(preset, prompt_task=bad)
