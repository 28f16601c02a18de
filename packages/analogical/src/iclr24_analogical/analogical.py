"""Large Language Models as Analogical Reasoners (Yasunaga, Chen, Li, Pasupat, Leskovec, Liang,
Chi & Zhou, ICLR 2024), https://arxiv.org/abs/2310.01714. No official code is public.

Analogical prompting: a prompting method phi maps a problem x to one prompt phi(x) that asks
the model to *self-generate* K relevant exemplars (question, rationale, boxed answer) and, for
code, high-level knowledge first (core concepts + a tutorial), then to solve the initial
problem, all in one pass (paper Sec. 4). y_hat = LLM(phi(x)); the answer is read from the part
after "Solve the Initial Problem" (the exemplars carry boxed answers of their own).

The templates below are the paper's full prompts (Appendix D: MATH, GSM8K, Codeforces,
BIG-Bench formal fallacies) character for character; the golden tests render the appendix
problems and compare with the appendix text. K = 5 for GSM8K, 3 for MATH / BIG-Bench / code
(Sec. 5.3 "Ours"); knowledge before exemplars (Sec. 4.2).
"""

from __future__ import annotations

from dataclasses import dataclass

# ---------------------------------------------------------------- the paper's templates

_MATH_HEAD = (
    "Your task is to tackle mathematical problems. When presented with a math problem, recall "
    "relevant problems as examples. Afterward, proceed to solve the initial problem.\n\n"
    "# Initial Problem:\n{problem}\n\n# Instructions:\n"
)
_QA_FORMAT = (
    "For each problem:\n"
    '- After "Q: ", describe the problem\n'
    '- After "A: ", explain the solution and enclose the ultimate answer in \\boxed{{}}.\n\n'
)
_SOLVE_FORMAT = (
    "Q: Copy and paste the initial problem here.\n"
    "A: Explain the solution and enclose the ultimate answer in \\boxed{{}} here."
)

GSM8K_TEMPLATE = (
    _MATH_HEAD + "Make sure that your response follows the instructions below.\n\n"
    "## Analogous Problems:\n"
    "Offer five diverse examples of math problems that are relevant or analogous to the "
    "initial problem. For each problem, elaborate on the solution and conclude with the "
    "ultimate answer (enclosed in \\boxed{{}}). "
    + _QA_FORMAT
    + "## Solve the Initial Problem:\n"
    + _SOLVE_FORMAT
)
"""Appendix D.2 (GSM8K, self-generated exemplars, K = 5)."""

MATH_TEMPLATE = (
    _MATH_HEAD + "Make sure to include all of the following points:\n\n"
    "## Relevant Problems:\n"
    "Recall three examples of math problems that are relevant to the initial problem. Note "
    "that your problems should be distinct from each other and from the initial problem (e.g., "
    "involving different numbers and names). " + _QA_FORMAT + "## Solve the Initial Problem:\n"
    'Say "Let\'s solve the following math problem." Then formulate your response in the '
    "following format:\n" + _SOLVE_FORMAT
)
"""Appendix D.1 (MATH, self-generated exemplars, K = 3)."""

BBH_TEMPLATE = (
    "Your task is to tackle reasoning problems. When presented with a problem, recall relevant "
    "problems as examples. Afterward, proceed to solve the initial problem.\n\n"
    "# Initial Problem:\n{problem}\n\n# Instructions:\n"
    "Make sure to include all of the following points:\n\n"
    "## Relevant Problems:\n"
    "Recall three examples of problems that are relevant to the initial problem. Note that "
    "your problems must be distinct from each other and from the initial problem. "
    + _QA_FORMAT
    + "## Solve the Initial Problem:\n"
    'Say "Let\'s solve the following reasoning problem." Then formulate your response in the '
    "following format:\n" + _SOLVE_FORMAT
)
"""Appendix D.4 (BIG-Bench, self-generated exemplars, K = 3)."""

CODE_TEMPLATE = (
    "Your goal is to write Python3 code to solve competitive programming problems. Given a "
    "problem, explain the core concepts in it and provide other relevant problems. Then solve "
    "the original problem.\n\n"
    "# Problem:\n{problem}\n\n"
    "# Instruction:\n\n"
    "## Algorithms:\nIdentify the core concepts or algorithms used to solve the problem.\n\n"
    "## Tutorial:\nWrite a useful tutorial about these algorithms.\n\n"
    "## Example Problems:\n"
    "Provide three examples of relevant competitive programming problems that involve these "
    "algorithms. For each problem, describe the problem, explain the solution in detail, and "
    "then write the correct Python3 code.\n\n"
    "## Python3 code to solve the original problem:\n"
    "Include the following points in your response:\n"
    "- Explanation of the solution:\n"
    "- Python3 code to solve the problem:"
)
"""Appendix D.3 (Codeforces, self-generated knowledge + exemplars, K = 3; the appendix's
problem statement ends with a newline, hence its extra blank line before "# Instruction:")."""

GENERIC_TEMPLATE = (
    "# Problem: {problem}\n"
    "# Relevant problems: Recall three relevant and distinct problems. For each problem, "
    "describe it and explain the solution.\n"
    "# Solve the initial problem:"
)
"""Sec. 4.1, the short form of the instruction."""

RANDOM_DOMAIN_TEMPLATE = GSM8K_TEMPLATE.replace(
    "## Analogous Problems:\nOffer five diverse examples of math problems that are relevant or "
    "analogous to the initial problem.",
    "## Random Problems:\nOffer five diverse examples of biology problems that are unrelated to "
    "the initial problem.",
)
"""Ablation after Qin et al. 2024 ("Relevant or Random", arXiv 2404.12728): self-generated
exemplars from a random domain (biology) instead of relevant ones. Their exact wording was not
found; this is the GSM8K template with only the exemplars' domain changed (our wording)."""

TEMPLATES = {
    "gsm8k": GSM8K_TEMPLATE,
    "math": MATH_TEMPLATE,
    "bbh": BBH_TEMPLATE,
    "code": CODE_TEMPLATE,
    "generic": GENERIC_TEMPLATE,
    "random_domain": RANDOM_DOMAIN_TEMPLATE,
}
SOLVE_MARKERS = ("solve the initial problem", "let's solve the following")
"""Where the answer to the initial problem starts (case-insensitive, the last occurrence)."""
CODE_MARKERS = ("python3 code to solve the original problem",)


def analogical_prompt(problem: str, task: str = "gsm8k") -> str:
    """phi(x) of analogical prompting for one problem: task is gsm8k, math, bbh, code, generic
    or random_domain (the ablation)."""
    if task not in TEMPLATES:
        raise ValueError(f"task must be one of {', '.join(TEMPLATES)}, not {task!r}")
    return TEMPLATES[task].format(problem=problem.strip("\n"))


@dataclass(frozen=True)
class AnalogicalPrompting:
    """The method as an object: ``prompt(x)`` and ``solve(llm, problems)`` (greedy, as the
    paper's temperature 0 for math and BIG-Bench)."""

    task: str = "gsm8k"
    max_new_tokens: int = 1024

    def prompt(self, problem: str) -> str:
        return analogical_prompt(problem, self.task)

    def solve(self, llm, problems: list[str], **kw):
        """One completion per problem (``Completion`` objects of iclr24_llm)."""
        kw = {"max_new_tokens": self.max_new_tokens, "temperature": 0.0} | kw
        return [c[0] for c in llm.generate([self.prompt(p) for p in problems], **kw)]
