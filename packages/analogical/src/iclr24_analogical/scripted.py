"""A scripted "capable model" for tests and the smoke run: it knows the answers and replies in
each method's style, so that every path of the machinery (the three extraction rules, boxed
exemplars before the solve marker, code extraction and the runner) is exercised end to end.
"""

from __future__ import annotations

from collections.abc import Sequence

from iclr24_llm import ScriptedBackend

from .analogical import CODE_TEMPLATE
from .baselines import COT_TRIGGER
from .data import CodeProblem, Problem


def _last_known(text: str, known: dict[str, str]) -> str | None:
    at = {q: text.rfind(q) for q in known}
    q = max(at, key=at.get, default=None)
    return q if q is not None and at[q] >= 0 else None


def scripted_solver(
    problems: Sequence[Problem], code: Sequence[CodeProblem] = ()
) -> ScriptedBackend:
    """Answers every known problem correctly: the test question is the last known question in
    the prompt (few-shot prompts show training questions first)."""
    answers = {p.question: p.answer for p in problems}
    programs = {p.statement: p.reference for p in code}

    def reply(prompt) -> str:
        text = prompt if isinstance(prompt, str) else prompt[-1]["content"]
        stmt = _last_known(text, programs)
        if stmt is not None:
            body = f"```python\n{programs[stmt]}\n```"
            if text.startswith(CODE_TEMPLATE[:40]):  # knowledge, exemplars with code, solution
                return ("## Algorithms:\nLoops.\n\n## Tutorial:\nRead the input, loop.\n\n"
                        "## Example Problems:\n1. Print 1.\n```python\nprint(1)\n```\n\n"
                        "## Python3 code to solve the original problem:\n"
                        f"- Explanation of the solution: direct.\n- Python3 code:\n{body}")  # fmt: skip
            return body
        q = _last_known(text, answers)
        if q is None:
            return "I do not know."
        a = answers[q]
        if "# Initial Problem:" in text:  # analogical: wrong boxed exemplars, then the solution
            # (a MATH answer such as \frac{1}{2} or a BBH target is not an integer)
            wrong = [str(int(a) + i) if a.lstrip("-").isdigit() else f"{a} {i}" for i in (1, 2, 3)]
            shots = "".join(f"Q{i}: A similar problem.\nA: It works out to \\boxed{{{w}}}.\n\n"
                            for i, w in enumerate(wrong, start=1))  # fmt: skip
            return f"{shots}## Solve the Initial Problem:\nQ: {q}\nA: So it is \\boxed{{{a}}}."
        if text.rstrip().endswith("A:"):  # few-shot CoT
            return f" Working it out step by step gives {a}. The answer is {a}."
        if text.rstrip().endswith(COT_TRIGGER):
            return f"First step 1, then step 2, so the result is {a}"
        return a

    return ScriptedBackend(reply, name="scripted")
