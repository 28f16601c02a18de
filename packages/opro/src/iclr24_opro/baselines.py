"""The baselines an LLM optimizer is measured against.

Black-box search at the same number of evaluations (distinct solutions scored) as the LLM,
through the same loop (opro.py, ``OPROConfig.max_evaluations``): random search over the
problem's search space, and local perturbation (hill climbing) of the best solution so far.
The paper compares with exhaustive search (regression, Section 3.1) and with the nearest
neighbour / farthest insertion heuristics (TSP, Table 3, in tsp.py); these two are stronger
than exhaustive search and need no model. For prompt optimisation the baselines are the
human-written instructions the paper compares with (Tables 1 and 4).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .opro import OPROConfig, Problem, Proposal, Scored, shown_in_prompt, step_seed

HUMAN_INSTRUCTIONS = {
    "kojima": "Let's think step by step.",
    "zhou": "Let’s work this out in a step by step way to be sure we have the right answer.",
    "empty": "",
}
"""The paper's human-designed baselines (Table 4): Kojima et al. 2022, Zhou et al. 2022 (APE;
its curly apostrophe as printed), and no instruction. The starting instruction "Let's solve
the problem." is measured as well."""


@dataclass
class RandomSearch:
    """`proposals_per_step` independent draws from the problem's search space."""

    config: OPROConfig
    name: str = "random"

    def propose(self, problem: Problem, history: list[Scored], step: int) -> Proposal:
        rng = np.random.default_rng(step_seed(self.config.seed, step))
        sols = [problem.random_solution(rng) for _ in range(self.config.proposals_per_step)]
        return Proposal(sols, [], len(sols))


@dataclass
class LocalPerturbation:
    """`proposals_per_step` random perturbations of the best solution so far (regression:
    -1/0/+1 on each coordinate; TSP: a random segment reversal, i.e. a 2-opt move)."""

    config: OPROConfig
    name: str = "local"

    def propose(self, problem: Problem, history: list[Scored], step: int) -> Proposal:
        rng = np.random.default_rng(step_seed(self.config.seed, step))
        best = shown_in_prompt(problem, history, 1)[0].solution
        sols = [problem.perturb(best, rng) for _ in range(self.config.proposals_per_step)]
        return Proposal(sols, [], len(sols))
