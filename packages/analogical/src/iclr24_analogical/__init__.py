"""Large Language Models as Analogical Reasoners (Yasunaga et al., ICLR 2024),
https://arxiv.org/abs/2310.01714

Analogical prompting (the paper's templates, exactly), its baselines (0-shot, 0-shot CoT,
few-shot CoT, few-shot retrieved CoT), answer extraction and checking, and a sandboxed runner
for generated code, on any iclr24-llm backend.
"""

import iclr24_common  # noqa: F401  (first: it sets the OpenMP wait policy before torch loads)

from .analogical import (
    BBH_TEMPLATE,
    CODE_TEMPLATE,
    GENERIC_TEMPLATE,
    GSM8K_TEMPLATE,
    MATH_TEMPLATE,
    RANDOM_DOMAIN_TEMPLATE,
    TEMPLATES,
    AnalogicalPrompting,
    analogical_prompt,
)
from .answers import (
    Extraction,
    boxed_contents,
    extract_answer,
    latex_equal,
    normalize_latex,
    numeric_equal,
    option_equal,
    to_number,
)
from .baselines import (
    MiniLMEmbedder,
    Retriever,
    few_shot_cot_prompt,
    fixed_exemplars,
    retrieved_cot_prompts,
    zero_shot_cot_prompt,
    zero_shot_prompt,
)
from .coderun import RunResult, acc_at_k, extract_code, run_program
from .data import (
    CODE_PROBLEMS,
    FAMILIES,
    CodeProblem,
    Problem,
    load_task,
    make_split,
    make_word_problems,
)
from .methods import CODE_METHODS, MATH_METHODS, MathContext, run_code_method, run_method

__version__ = "0.1.0"

__all__ = [
    "BBH_TEMPLATE", "CODE_METHODS", "CODE_PROBLEMS", "CODE_TEMPLATE", "FAMILIES",
    "GENERIC_TEMPLATE", "GSM8K_TEMPLATE", "MATH_METHODS", "MATH_TEMPLATE",
    "RANDOM_DOMAIN_TEMPLATE", "TEMPLATES", "AnalogicalPrompting", "CodeProblem", "Extraction",
    "MathContext", "MiniLMEmbedder", "Problem", "Retriever", "RunResult", "acc_at_k",
    "analogical_prompt", "boxed_contents", "extract_answer", "extract_code",
    "few_shot_cot_prompt", "fixed_exemplars", "latex_equal", "load_task", "make_split",
    "make_word_problems", "normalize_latex", "numeric_equal", "option_equal",
    "retrieved_cot_prompts", "run_code_method", "run_method", "run_program", "to_number",
    "zero_shot_cot_prompt", "zero_shot_prompt",
]  # fmt: skip
