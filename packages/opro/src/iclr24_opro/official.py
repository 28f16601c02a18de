"""Agreement with the official code: our formatters, scorers and TSP heuristics against
outputs of the official functions on the same inputs (``fixtures/official_opro.json``).

Provenance (also inside the file): google-deepmind/opro, ``metrics.py`` and
``eval_utils.py`` (answer scoring), ``opt_utils.gen_meta_prompt`` (instruction meta-prompts,
both types), and the ``gen_meta_prompt`` / ``solve_tsp`` functions nested in
``optimize_linear_regression.py`` and ``optimize_tsp.py``, run once on the inputs stored with
each output (commits in the file's ``provenance``). The fixtures are data: no official code
is shipped or imported.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import numpy as np

from .linreg import format_linreg_meta_prompt
from .prompts import instruction_meta_prompt, instructions_only_meta_prompt
from .scoring import normalize_prediction, official_correct
from .tsp import distance_matrix, farthest_insertion, format_tsp_meta_prompt, nearest_neighbour

FIXTURES = Path(__file__).parent / "fixtures" / "official_opro.json"
MC_QUESTION = ("From which direction does the sun rise in the morning?\nOptions:\n(A) west\n"
               "(B) east\n(C) north\n(D) south")  # fmt: skip
FEW_SHOT = [
    ("How many legs do 2 cats have?", "8"),
    ("Is 7 odd?", "yes"),
    ("Which is (A) red (B) blue?", "(B)"),
]  # fmt: skip  (official indices 0, 1, 3)


@cache
def fixtures() -> dict:
    return json.loads(FIXTURES.read_text(encoding="utf-8"))


def _instruction_prompt(case: dict, history: list) -> str:
    pairs = [(ins, score) for ins, score, _ in history]
    if case["type"] == "instructions_only":
        return instructions_only_meta_prompt(
            pairs, position=case["position"], dataset=case["dataset"], task=case["task"],
            num_score_buckets=case["num_score_buckets"],
        )  # fmt: skip
    return instruction_meta_prompt(
        pairs, FEW_SHOT if case["few_shot"] else None, position=case["position"],
        optimizer="gpt" if case["optimizer"].startswith("gpt") else "text-bison",
        include_qa=case["include_qa"], threshold=case["threshold"], max_instructions=4,
        num_score_buckets=case["num_score_buckets"],
        instructions_before_exemplars=case["instructions_before_exemplars"],
    )  # fmt: skip


HISTORY = [("Solve it.", 0.724, 0), ("Let's solve the problem.", 0.61, -1), ("Bad.", 0.2, 1),
           ("Think step by step.", 0.9, 2), ("Be careful with the units.", 0.455, 3)]  # fmt: skip


def agreement() -> dict[str, tuple[int, int]]:
    """(agreeing, total) per kind: byte-identical meta-prompts, scoring verdicts (an official
    IndexError counts as wrong here), normalised answers, and heuristic TSP tours."""
    fx = fixtures()
    out: dict[str, tuple[int, int]] = {}

    def count(name, pairs):
        pairs = list(pairs)
        out[name] = (sum(a == b for a, b in pairs), len(pairs))

    count("instruction_meta_prompts",
          ((_instruction_prompt(c, HISTORY), c["official"]) for c in fx["instruction_meta_prompts"]))  # fmt: skip
    count("linreg_meta_prompts", (
        (format_linreg_meta_prompt(sorted(map(tuple, c["pairs"]), key=lambda p: -p[2])[-20:]),
         c["official"]) for c in fx["linreg_meta_prompts"]))  # fmt: skip
    count("tsp_meta_prompts", (
        (format_tsp_meta_prompt(np.stack([c["x"], c["y"]], 1),
                                [([int(v) for v in t.split(",")], d)
                                 for t, d in sorted(map(tuple, c["pairs"]), key=lambda p: -p[1])[-10:]]),
         c["official"]) for c in fx["tsp_meta_prompts"]))  # fmt: skip
    count("scoring", (
        (official_correct(c["target"], c["answer"], treat_as_number=c["treat_as_number"],
                          treat_as_bool=c["treat_as_bool"],
                          question=MC_QUESTION if c["multiple_choice"] else ""),
         c["official"] if c["official"] != "IndexError" else False) for c in fx["scoring"]))  # fmt: skip
    count("normalize_prediction", (
        (normalize_prediction(c["answer"], treat_as_number=c["treat_as_number"],
                              num_decimals=c["num_decimals"], treat_as_bool=c["treat_as_bool"]),
         c["official"]) for c in fx["normalize_prediction"]))  # fmt: skip
    tours = []
    for c in fx["tsp_solvers"]:
        d = distance_matrix(np.stack([c["x"], c["y"]], 1))
        tours += [(farthest_insertion(d), c["farthest_insertion"]),
                  (nearest_neighbour(d), c["nearest_neighbor"])]  # fmt: skip
    count("tsp_heuristic_tours", tours)
    return out
