"""Golden templates: our prompts equal the paper's Appendix D prompts character for character,
and the answer extraction reads the paper's own GPT-3.5-turbo outputs right."""

import importlib.util
from pathlib import Path

import pytest
from iclr24_analogical import (
    TEMPLATES,
    AnalogicalPrompting,
    analogical_prompt,
    boxed_contents,
    extract_answer,
    latex_equal,
    numeric_equal,
    option_equal,
)
from iclr24_analogical.analogical import SOLVE_MARKERS
from iclr24_analogical.baselines import few_shot_cot_prompt, zero_shot_cot_prompt
from iclr24_analogical.data import Problem

from iclr24_llm import ScriptedBackend

_spec = importlib.util.spec_from_file_location(
    "analogical_paper_appendix", Path(__file__).with_name("analogical_paper_appendix.py")
)
D = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(D)


@pytest.mark.parametrize(
    "task, problem, prompt",
    [
        ("gsm8k", D.GSM8K_PROBLEM, D.GSM8K_PROMPT),
        ("math", D.MATH_PROBLEM, D.MATH_PROMPT),
        ("bbh", D.BBH_PROBLEM, D.BBH_PROMPT),
        ("code", D.CODE_PROBLEM, D.CODE_PROMPT),
    ],
)
def test_templates_are_the_papers(task, problem, prompt):
    assert analogical_prompt(problem, task) == prompt
    assert AnalogicalPrompting(task).prompt(problem + "\n") == prompt  # trailing newline dropped


def test_generic_and_random_domain_templates():
    g = analogical_prompt("What is 2 + 3?", "generic")
    assert g == (
        "# Problem: What is 2 + 3?\n# Relevant problems: Recall three relevant and distinct "
        "problems. For each problem, describe it and explain the solution.\n"
        "# Solve the initial problem:"
    )
    r = analogical_prompt(D.GSM8K_PROBLEM, "random_domain")
    assert "biology problems that are unrelated" in r and "relevant or analogous" not in r
    # only the exemplars' domain differs from the GSM8K template
    assert r.split("## Random Problems:")[0] == D.GSM8K_PROMPT.split("## Analogous Problems:")[0]
    assert r.endswith(D.GSM8K_PROMPT.split("(enclosed in")[1])
    with pytest.raises(ValueError, match="task must be one of"):
        analogical_prompt("x", "nope")
    assert set(TEMPLATES) >= {"gsm8k", "math", "bbh", "code"}


@pytest.mark.parametrize(
    "output, target, check",
    [
        (D.GSM8K_OUTPUT, "26", numeric_equal),
        (D.MATH_OUTPUT, "\\frac{1}{5}", latex_equal),
        (D.BBH_OUTPUT, "valid", option_equal),
    ],
)
def test_extraction_reads_the_papers_outputs(output, target, check):
    ex = extract_answer(output)
    assert ex.rule == "boxed" and ex.after_marker
    assert check(ex.answer, target)
    # an output cut before the solve part has no marker: the whole text is read (its last
    # exemplar's box), and the record says the marker was not reached
    low = output.lower()
    cut = output[: min(low.find(m) for m in SOLVE_MARKERS if m in low)]
    ex_cut = extract_answer(cut)
    assert not ex_cut.after_marker and ex_cut.answer == boxed_contents(cut)[-1]
    # the analogical methods require the marker: that box is an exemplar's, not the answer
    strict = extract_answer(cut, require_marker=True)
    assert (strict.answer, strict.rule, strict.after_marker) == (None, "no_marker", False)
    assert extract_answer(output, require_marker=True) == ex


def test_extraction_rules_in_order():
    text = "Q: a\nA: \\boxed{3}\n\n## Solve the Initial Problem:\nA: 2 + 2 = 4. The answer is 4."
    ex = extract_answer(text)  # no box after the marker: "The answer is" wins over exemplar box
    assert (ex.answer, ex.rule) == ("4", "answer_is")
    assert extract_answer("so 12 apples, then 15 in all").answer == "15"
    assert extract_answer("so 12 apples, then 15 in all").rule == "last_number"
    assert extract_answer("no idea").rule == "none"
    nested = extract_answer("Solve the initial problem: \\boxed{\\frac{1}{\\sqrt{2}}} done")
    assert nested.answer == "\\frac{1}{\\sqrt{2}}"
    assert extract_answer("\\boxed{1} and \\boxed{2").answer == "1"  # unbalanced box skipped


def test_solve_greedy_with_a_backend():
    llm = ScriptedBackend(lambda p: "Solve the Initial Problem: \\boxed{7}")
    outs = AnalogicalPrompting("gsm8k", max_new_tokens=32).solve(llm, ["a", "b"])
    assert [extract_answer(c.text).answer for c in outs] == ["7", "7"]


def test_baseline_prompts():
    assert zero_shot_cot_prompt("Q?") == "Q?\nLet's think step by step."
    ex = [Problem("1+1?", "2", "1 + 1 = 2. The answer is 2.")]
    assert few_shot_cot_prompt("2+2?", ex) == (
        "Q: 1+1?\nA: 1 + 1 = 2. The answer is 2.\n\nQ: 2+2?\nA:"
    )
