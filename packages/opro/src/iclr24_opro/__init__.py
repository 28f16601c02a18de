"""iclr24-opro: Large Language Models as Optimizers (Yang et al., ICLR 2024),
https://arxiv.org/abs/2309.03409 -- the OPRO loop on iclr24_common.llm backends."""

__version__ = "0.1.0"

from .linreg import (  # noqa: E402
    PAPER_SETTINGS,
    LinearRegression,
    format_linreg_meta_prompt,
    parse_linreg,
    scripted_linreg_optimizer,
)
from .opro import (  # noqa: E402
    OPRO,
    LocalPerturbation,
    OPROConfig,
    OPROResult,
    Problem,
    RandomSearch,
    Scored,
    TextProblem,
    plot_best,
)
from .tsp import (  # noqa: E402
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

__all__ = [
    "OPRO",
    "PAPER_SETTINGS",
    "TSP",
    "LinearRegression",
    "LocalPerturbation",
    "OPROConfig",
    "OPROResult",
    "Problem",
    "RandomSearch",
    "Scored",
    "TextProblem",
    "brute_force",
    "farthest_insertion",
    "format_linreg_meta_prompt",
    "format_tsp_meta_prompt",
    "held_karp",
    "nearest_neighbour",
    "parse_linreg",
    "parse_tsp",
    "plot_best",
    "scripted_linreg_optimizer",
    "scripted_tsp_optimizer",
    "tour_length",
    "two_opt",
]
