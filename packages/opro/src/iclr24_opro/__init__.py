"""iclr24-opro: Large Language Models as Optimizers (Yang et al., ICLR 2024),
https://arxiv.org/abs/2309.03409 -- the OPRO loop on iclr24_llm backends."""

import iclr24_common  # noqa: F401  (first: it sets the OpenMP wait policy before torch loads)

from .baselines import HUMAN_INSTRUCTIONS, LocalPerturbation, RandomSearch
from .data import (
    Example,
    load_bbh,
    load_gsm8k,
    make_sentiment_task,
    official_split,
    split_examples,
    task_kind,
)
from .linreg import (
    PAPER_SETTINGS,
    LinearRegression,
    format_linreg_meta_prompt,
    parse_linreg,
    scripted_linreg_optimizer,
)
from .opro import OPRO, OPROConfig, OPROResult, Problem, Scored, TextProblem
from .prompts import (
    INITIAL_INSTRUCTION,
    PromptOptimizationProblem,
    PromptProposer,
    instruction_meta_prompt,
    instructions_only_meta_prompt,
    scorer_prompt,
)
from .scoring import is_correct, normalize_prediction, official_correct, strict_correct
from .tsp import (
    TSP,
    brute_force,
    farthest_insertion,
    format_tsp_meta_prompt,
    held_karp,
    nearest_neighbour,
    parse_tsp,
    scripted_tsp_optimizer,
    tour_length,
    two_opt,
)

__version__ = "0.2.0"

__all__ = [
    "HUMAN_INSTRUCTIONS",
    "INITIAL_INSTRUCTION",
    "OPRO",
    "PAPER_SETTINGS",
    "TSP",
    "Example",
    "LinearRegression",
    "LocalPerturbation",
    "OPROConfig",
    "OPROResult",
    "Problem",
    "PromptOptimizationProblem",
    "PromptProposer",
    "RandomSearch",
    "Scored",
    "TextProblem",
    "brute_force",
    "farthest_insertion",
    "format_linreg_meta_prompt",
    "format_tsp_meta_prompt",
    "held_karp",
    "instruction_meta_prompt",
    "instructions_only_meta_prompt",
    "is_correct",
    "load_bbh",
    "load_gsm8k",
    "make_sentiment_task",
    "nearest_neighbour",
    "normalize_prediction",
    "official_correct",
    "official_split",
    "parse_linreg",
    "parse_tsp",
    "scorer_prompt",
    "scripted_linreg_optimizer",
    "scripted_tsp_optimizer",
    "split_examples",
    "strict_correct",
    "task_kind",
    "tour_length",
    "two_opt",
]
