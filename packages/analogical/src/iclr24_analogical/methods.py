"""Every prompting method on the same problems: prompts, one batched generation, answers.

``MATH_METHODS`` maps a name to a prompt builder; ``run_method`` builds the prompts of one
method for a list of problems, generates once (greedy, one budget for every method), extracts
and judges the answers, and returns per-problem records and the method's summary numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .analogical import CODE_TEMPLATE, analogical_prompt
from .answers import CHECKERS, extract_answer
from .baselines import (
    K_FEW_SHOT,
    Retriever,
    few_shot_cot_prompt,
    fixed_exemplars,
    retrieved_cot_prompts,
    zero_shot_cot_prompt,
    zero_shot_prompt,
)
from .coderun import RunResult, acc_at_k, extract_code, run_program
from .data import CodeProblem, Problem

MATH_METHODS = ("zero_shot", "zero_shot_cot", "few_shot_cot", "retrieved_cot", "analogical",
                "analogical_random")  # fmt: skip
"""0-shot, 0-shot CoT, few-shot CoT (fixed K = 5), few-shot retrieved CoT (K = 5), analogical
prompting (self-generated exemplars) and its random-domain ablation."""
LABELLED = ("few_shot_cot", "retrieved_cot")
ANALOGICAL = ("analogical", "analogical_random")
"""Methods whose prompt asks for exemplars first and then "# Solve the Initial Problem": their
answer is read only after that marker (an answer elsewhere is an exemplar's, not extracted)."""
CODE_METHODS = ("zero_shot", "analogical")
"""Code: 0-shot (the problem and the task sentence) vs self-generated knowledge + exemplars."""

CODE_ZERO_SHOT = (
    "Your goal is to write Python3 code to solve competitive programming problems.\n\n"
    "# Problem:\n{problem}\n\n# Python3 code to solve the problem:"
)
"""0-shot code prompt: the first sentence of the paper's code template, then the problem (our
wording: the paper's 0-shot prompt for Codeforces is not printed)."""


@dataclass
class MathContext:
    """What the labelled-exemplar baselines need: the training pool and the retriever."""

    pool: Sequence[Problem]
    retriever: Retriever | None = None
    seed: int = 0
    k: int = K_FEW_SHOT
    analogical_task: str = "gsm8k"


def build_prompts(method: str, problems: Sequence[Problem], mc: MathContext) -> list[str]:
    qs = [p.question for p in problems]
    if method == "zero_shot":
        return [zero_shot_prompt(q) for q in qs]
    if method == "zero_shot_cot":
        return [zero_shot_cot_prompt(q) for q in qs]
    if method == "few_shot_cot":
        fixed = fixed_exemplars(mc.pool, mc.k, mc.seed)
        return [few_shot_cot_prompt(q, fixed) for q in qs]
    if method == "retrieved_cot":
        if mc.retriever is None:
            raise ValueError("retrieved_cot needs a retriever")
        return retrieved_cot_prompts(qs, mc.retriever, mc.k)
    if method == "analogical":
        return [analogical_prompt(q, mc.analogical_task) for q in qs]
    if method == "analogical_random":
        return [analogical_prompt(q, "random_domain") for q in qs]
    raise ValueError(f"method must be one of {', '.join(MATH_METHODS)}")


def run_method(llm, method: str, problems: Sequence[Problem], mc: MathContext, *,
               max_new_tokens: int) -> tuple[dict[str, float], list[dict]]:  # fmt: skip
    """Greedy answers of one method; (summary numbers, per-problem records)."""
    prompts = build_prompts(method, problems, mc)
    # few-shot answers end where the model starts a next "Q:" (Wei et al.'s exemplar format)
    stop = ["\nQ:"] if method in LABELLED else None
    outs = llm.generate(prompts, max_new_tokens=max_new_tokens, temperature=0.0, stop=stop)
    records = []
    for p, prompt, out in zip(problems, prompts, outs):
        c = out[0]
        ex = extract_answer(c.text, require_marker=method in ANALOGICAL)
        records.append({
            "question": p.question, "target": p.answer, "family": p.family,
            "completion": c.text, "answer": ex.answer, "rule": ex.rule,
            "after_marker": ex.after_marker, "correct": CHECKERS[p.kind](ex.answer, p.answer),
            "prompt_tokens": c.prompt_tokens, "completion_tokens": c.completion_tokens,
            "truncated": c.finish_reason == "length", "prompt": prompt,
        })  # fmt: skip
    return summarize(records), records


def summarize(records: list[dict]) -> dict[str, float]:
    col = lambda k: np.array([r[k] for r in records], dtype=float)  # noqa: E731
    rules = [r["rule"] for r in records]
    return {
        "acc": float(col("correct").mean()),
        "extraction_rate": float(np.mean([r not in ("none", "no_marker") for r in rules])),
        "format_rate": float(np.mean([r in ("boxed", "answer_is") for r in rules])),
        "marker_rate": float(col("after_marker").mean()),
        "output_tokens": float(col("completion_tokens").mean()),
        "prompt_tokens": float(col("prompt_tokens").mean()),
        "truncated_rate": float(col("truncated").mean()),
        "n": float(len(records)),
    }


def code_prompt(method: str, problem: CodeProblem) -> str:
    if method == "zero_shot":
        return CODE_ZERO_SHOT.format(problem=problem.statement)
    if method == "analogical":
        return CODE_TEMPLATE.format(problem=problem.statement)
    raise ValueError(f"code method must be one of {', '.join(CODE_METHODS)}")


def run_code_method(llm, method: str, problems: Sequence[CodeProblem], *, samples: int,
                    k: int, temperature: float, max_new_tokens: int, seed: int,
                    seconds: float) -> tuple[dict[str, float], list[dict]]:  # fmt: skip
    """``samples`` programs per problem (greedy when samples == 1, else sampled at
    ``temperature`` as the paper's 10 at 0.7), each run on the tests; Acc@1 and Acc@k.

    As on the math path, the analogical program is read only after its "Python3 code to solve
    the original problem" heading: a completion without it is "not extracted" (status
    ``no_marker``, scored wrong) rather than read whole. Each program records whether it was
    cut at the token budget (``truncated_rate``: the premise ``within-budget/code_<method>``)."""
    prompts = [code_prompt(method, p) for p in problems]
    kw = {"temperature": 0.0} if samples == 1 else {"temperature": temperature, "seed": seed}
    outs = llm.generate(prompts, n=samples, max_new_tokens=max_new_tokens, **kw)
    need_marker = method == "analogical"
    records, acc1, acck, tokens, cut = [], [], [], [], []
    for p, out in zip(problems, outs):
        runs = []
        for c in out:
            code = extract_code(c.text, require_marker=need_marker)
            if code is None and need_marker and extract_code(c.text) is not None:
                runs.append(RunResult("no_marker", 0, len(p.tests)))  # code, but not its own
            else:
                runs.append(run_program(code, list(p.tests), seconds=seconds))
        n_ok = sum(r.ok for r in runs)
        acc1.append(acc_at_k(len(runs), n_ok, 1))
        acck.append(acc_at_k(len(runs), n_ok, min(k, len(runs))))
        tokens += [c.completion_tokens for c in out]
        cut += [c.finish_reason == "length" for c in out]
        records.append({"problem": p.name, "statuses": [r.status for r in runs],
                        "details": [r.detail for r in runs], "acc1": acc1[-1],
                        "truncated": [c.finish_reason == "length" for c in out],
                        "completions": [c.text for c in out]})  # fmt: skip
    statuses = [s for r in records for s in r["statuses"]]
    return {
        "acc1": float(np.mean(acc1)),
        "acck": float(np.mean(acck)),
        "output_tokens": float(np.mean(tokens)),
        "no_code_rate": float(np.mean([s in ("no_code", "no_marker") for s in statuses])),
        "no_marker_rate": float(np.mean([s == "no_marker" for s in statuses])),
        "truncated_rate": float(np.mean(cut)),
        "n": float(len(problems)),
    }, records
