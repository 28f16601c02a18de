"""Golden meta-prompts: what the official code (optimize_linear_regression.py,
optimize_tsp.py, opt_utils.gen_meta_prompt) prints for small fixed inputs, written out by hand from its format
strings. `check_golden()` compares our formatters with them (a reproduction claim)."""

from __future__ import annotations

import numpy as np

from .linreg import format_linreg_meta_prompt
from .prompts import instruction_meta_prompt
from .tsp import format_tsp_meta_prompt

LINREG_INPUT = [(18, 15, 10386.7), (16, 11, 1147.2), (15, 13, 93.9)]
LINREG_GOLDEN = """Now you will help me minimize a function with two input variables w, b. \
I have some (w, b) pairs and the function values at those points. The pairs are arranged in \
descending order based on their function values, where lower values are better.

input:
w=18, b=15
value:
10386

input:
w=16, b=11
value:
1147

input:
w=15, b=13
value:
93

Give me a new (w, b) pair that is different from all pairs above, and has a function value \
lower than any of the above. Do not write code. The output must end with a pair [w, b], where \
w and b are numerical values."""

TSP_POINTS = np.array([[2, 90], [-71, 89], [-37, -15], [65, -18]])
TSP_INPUT = [([0, 2, 1, 3], 512.9), ([0, 1, 2, 3], 401.2)]
TSP_GOLDEN = """You are given a list of points with coordinates below:
(0): (2, 90), (1): (-71, 89), (2): (-37, -15), (3): (65, -18).

Below are some previous traces and their lengths. The traces are arranged in descending \
order based on their lengths, where lower values are better.

<trace> 0,2,1,3 </trace>
length:
512

<trace> 0,1,2,3 </trace>
length:
401

Give me a new trace that is different from all traces above, and has a length lower than \
any of the above. The trace should traverse all points exactly once. The trace should start \
with '<trace>' and end with </trace>."""


INSTRUCTION_INPUT = [("Solve it.", 0.724), ("Let's solve the problem.", 0.61), ("Bad.", 0.2)]
INSTRUCTION_EXEMPLARS = [("How many legs do 2 cats have?", "8"), ("Is 7 odd?", "yes")]
INSTRUCTION_GOLDEN = """Your task is to generate the instruction <INS>. Below are some previous \
instructions with their scores. The score ranges from 0 to 100.

text:
Let's solve the problem.
score:
61

text:
Solve it.
score:
72


Below are some problems.

Problem:
<INS>
How many legs do 2 cats have?

Ground truth answer:
8

Problem:
<INS>
Is 7 odd?

Ground truth answer:
yes


Generate an instruction that is different from all the instructions <INS> above, and has a \
higher score than all the instructions <INS> above. The instruction should begin with <INS> \
and end with </INS>. The instruction should be concise, effective, and generally applicable \
to all problems above."""
"""gpt-3.5-turbo / gpt-4 optimizer, Q_begin, no Q:/A:, 100 score buckets, threshold 0.3 (the
official setting for GPT scorers: "Bad." at 20 is left out)."""


def check_golden() -> dict[str, bool]:
    """Whether each formatter reproduces its golden string exactly."""
    return {
        "linreg": format_linreg_meta_prompt(LINREG_INPUT) == LINREG_GOLDEN,
        "tsp": format_tsp_meta_prompt(TSP_POINTS, TSP_INPUT) == TSP_GOLDEN,
        "instruction": instruction_meta_prompt(
            INSTRUCTION_INPUT, INSTRUCTION_EXEMPLARS, position="Q_begin", threshold=0.3
        )
        == INSTRUCTION_GOLDEN,
    }
