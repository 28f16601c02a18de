"""Large Language Models as Optimizers (OPRO; Yang et al., ICLR 2024),
https://arxiv.org/abs/2309.03409 -- the generic optimisation loop.

One OPRO step (paper Section 2, Figure 2):

    meta_prompt_t = problem.meta_prompt(top-k of {(s, f(s)) : s in history}, sorted worst -> best)
    s_1..s_K      ~ LLM(meta_prompt_t, temperature=1.0)          # K = 8 proposals per step
    history      <- history + {(s_i, f(s_i))} for the s_i that parse and are valid

The same loop drives the baselines (baselines.py: random search, local perturbation of the
best) at the same number of evaluations (distinct solutions scored, ``max_evaluations``):
only the `Proposer` changes. Every step is appended to a trajectory
JSONL, the state is checkpointed (JSON, atomic; after every slow step, about once a second
for fast ones, and at the end) and `resume=True` continues from it; the sampling seed of a step depends only on (seed, step, attempt), so a resumed run
continues the same trajectory as one run straight through. With ``samples_per_call`` the
samples of a step are asked for in several calls, each with its own attempt seed.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from iclr24_common import atomic_write_json
from iclr24_llm import LLM

Solution = Any  # JSON-able: a list [w, b], a list of city indices, a string ...


@dataclass(frozen=True)
class Scored:
    """One evaluated solution."""

    solution: Solution
    value: float
    step: int
    """The step that proposed it (-1 for a starting solution, as in the official code)."""


class Problem(Protocol):
    """What the loop needs from a task (LinearRegression, TSP, or `TextProblem`)."""

    minimize: bool

    def initial_solutions(self) -> list[Solution]: ...
    def score(self, solution: Solution) -> float: ...
    def key(self, solution: Solution) -> Hashable: ...
    def meta_prompt(self, shown: Sequence[Scored]) -> str: ...
    def parse(self, text: str) -> Solution | None: ...
    def is_optimal(self, solution: Solution, value: float) -> bool: ...
    def random_solution(self, rng: np.random.Generator) -> Solution: ...
    def perturb(self, solution: Solution, rng: np.random.Generator) -> Solution: ...


@dataclass
class OPROConfig:
    """Loop settings; defaults are the official optimize_linear_regression.py / optimize_tsp.py."""

    steps: int = 500
    """Maximum optimisation steps (official: max_num_steps = 500)."""
    proposals_per_step: int = 8
    """Solutions asked for per step (official: num_generated_points_in_each_step = 8)."""
    max_shown: int = 20
    """Best solutions shown in the meta-prompt (official: 20 for regression, 10 for TSP)."""
    temperature: float = 1.0
    """Optimizer sampling temperature (official: 1.0)."""
    max_new_tokens: int = 1024
    """Decoding cap per proposal (official: max_decode_steps = 1024)."""
    resample_invalid: bool = False
    """Keep sampling until `proposals_per_step` valid ones (official TSP loop), else keep the
    valid ones among exactly `proposals_per_step` samples (official regression loop)."""
    max_samples_per_step: int = 32
    """Cap on samples per step when resampling (the official TSP loop has none and can hang)."""
    samples_per_call: int | None = None
    """Samples asked of the LLM per call (None: all a step needs in one call). 1 on a CPU:
    a batch decodes until its longest reply, so one reply that runs to the decoding cap makes
    the short ones wait; one at a time each stops at its own end of turn."""
    max_evaluations: int | None = None
    """Stop once this many distinct new solutions have been scored (equal-evaluation
    comparisons); the last step's proposals are cut to fit."""
    stop_at_optimum: bool = True
    """Stop once `problem.is_optimal` (official regression loop: break on (w_true, b_true))."""
    seed: int = 0
    """Base seed; step t, attempt a samples with seed derived from (seed, t, a)."""


@dataclass
class Proposal:
    solutions: list[Solution]
    raw: list[str]
    samples: int
    reply_tokens: list[int] = field(default_factory=list)
    """Tokens generated per LLM reply (empty for the baselines)."""
    capped: int = 0
    """Replies that stopped at the decoding cap (``finish_reason == "length"``)."""


class Proposer(Protocol):
    name: str

    def propose(self, problem: Problem, history: list[Scored], step: int) -> Proposal: ...


def shown_in_prompt(problem: Problem, history: Sequence[Scored], k: int) -> list[Scored]:
    """The k best of the history, worst first and best last (official: `sorted(..., key=-value)
    [-k:]` for minimisation). Ties keep insertion order (the official code iterates a set)."""
    sign = -1.0 if problem.minimize else 1.0
    return sorted(history, key=lambda s: sign * s.value)[-k:]


def step_seed(seed: int, step: int, attempt: int = 0) -> int:
    return int(np.random.SeedSequence([seed, step + 1, attempt]).generate_state(1)[0])


@dataclass
class LLMProposer:
    """The OPRO optimizer: samples the meta-prompt at temperature 1.0."""

    llm: LLM
    config: OPROConfig
    name: str = "opro"

    def propose(self, problem: Problem, history: list[Scored], step: int) -> Proposal:
        cfg = self.config
        prompt = problem.meta_prompt(shown_in_prompt(problem, history, cfg.max_shown))
        sols, raw, tokens, samples, attempt, capped = [], [], [], 0, 0, 0
        while True:
            need = cfg.proposals_per_step - (len(sols) if cfg.resample_invalid else 0)
            need = min(need, cfg.max_samples_per_step - samples)
            if need <= 0:
                break
            # one call per `samples_per_call` samples; each call (attempt) has its own seed
            for k in range(0, need, cfg.samples_per_call or need):
                n = min(cfg.samples_per_call or need, need - k)
                [outs] = self.llm.generate(
                    [prompt],
                    n=n,
                    temperature=cfg.temperature,
                    max_new_tokens=cfg.max_new_tokens,
                    seed=step_seed(cfg.seed, step, attempt),
                )
                samples, attempt = samples + n, attempt + 1
                for c in outs:
                    raw.append(c.text)
                    tokens.append(int(c.completion_tokens))
                    capped += c.finish_reason == "length"
                    sol = problem.parse(c.text)
                    if sol is not None:
                        sols.append(sol)
            if not cfg.resample_invalid:
                break
        return Proposal(sols[: cfg.proposals_per_step], raw, samples, tokens, capped)


@dataclass
class OPROResult:
    history: list[Scored]
    best: Scored
    best_per_step: list[float]
    """Best value after each step (index 0: after the starting solutions)."""
    steps_run: int
    steps_to_optimum: int | None
    """Steps until an optimal solution was first proposed (1-based), None if never."""
    evaluations_to_optimum: int | None
    """Distinct solutions scored until the optimum (starting ones not counted), None if never."""
    evaluations: int
    """Distinct new solutions scored (the paper's "unique pairs explored", starts excluded)."""
    samples: int
    parsed: int
    usage: dict[str, int] = field(default_factory=dict)
    reply_tokens: list[int] = field(default_factory=list)
    """Tokens generated per LLM reply, in order."""
    replies_capped: int = 0
    """LLM replies that stopped at the decoding cap."""

    @property
    def parse_rate(self) -> float:
        return self.parsed / self.samples if self.samples else float("nan")


class OPRO:
    """The optimisation loop over any `Problem`, with any `Proposer` (default: the LLM).

    >>> opt = OPRO(problem, llm=load_llm("local"), config=OPROConfig(steps=20))
    >>> res = opt.run(out_dir="runs/x")       # trajectory.jsonl, checkpoint.json, best.png
    """

    def __init__(
        self,
        problem: Problem,
        llm: LLM | None = None,
        *,
        config: OPROConfig | None = None,
        proposer: Proposer | None = None,
    ):
        self.problem, self.config = problem, config or OPROConfig()
        if proposer is None:
            if llm is None:
                raise ValueError("OPRO needs an llm or a proposer")
            proposer = LLMProposer(llm, self.config)
        self.proposer, self.llm = proposer, llm
        self.history: list[Scored] = []
        self._keys: set[Hashable] = set()
        self.best_per_step: list[float] = []
        self.step_index = 0
        self.steps_to_optimum: int | None = None
        self.evaluations_to_optimum: int | None = None
        self.evaluations = self.samples = self.parsed = self.replies_capped = 0
        self.reply_tokens: list[int] = []
        self._usage_prior: dict[str, int] = {}  # spent before a resume
        self._usage_base = self._ledger()  # the backend's ledger when this run started

    def _ledger(self) -> dict[str, int]:
        return self.llm.usage.as_dict() if self.llm is not None else {}

    def usage(self) -> dict[str, int]:
        """LLM calls and tokens spent by this optimisation (across resumes)."""
        now = self._ledger()
        keys = set(now) | set(self._usage_prior)
        return {
            k: self._usage_prior.get(k, 0) + now.get(k, 0) - self._usage_base.get(k, 0)
            for k in sorted(keys)
        }

    # ---- state

    def _add(self, sol: Solution, step: int) -> Scored:
        """Score a solution not seen before and append it to the history (the official
        history is a set: a solution proposed again is neither re-scored nor counted)."""
        s = Scored(sol, float(self.problem.score(sol)), step)
        self._keys.add(self.problem.key(sol))
        self.history.append(s)
        if self.steps_to_optimum is None and self.problem.is_optimal(sol, s.value):
            self.steps_to_optimum = max(step + 1, 0)
            self.evaluations_to_optimum = self.evaluations + (step >= 0)
        return s

    def best(self) -> Scored:
        return shown_in_prompt(self.problem, self.history, 1)[0]

    def state_dict(self) -> dict[str, Any]:
        return {
            "proposer": self.proposer.name,
            "config": asdict(self.config),
            "history": [asdict(s) for s in self.history],
            "best_per_step": self.best_per_step,
            "step_index": self.step_index,
            "steps_to_optimum": self.steps_to_optimum,
            "evaluations_to_optimum": self.evaluations_to_optimum,
            "counts": [self.evaluations, self.samples, self.parsed],
            "reply_tokens": self.reply_tokens,
            "replies_capped": self.replies_capped,
            "usage": self.usage(),
            "problem": self.problem.state_dict() if hasattr(self.problem, "state_dict") else None,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.history = [Scored(**s) for s in state["history"]]
        self._keys = {self.problem.key(s.solution) for s in self.history}
        self.best_per_step = list(state["best_per_step"])
        self.step_index = int(state["step_index"])
        self.steps_to_optimum = state["steps_to_optimum"]
        self.evaluations_to_optimum = state.get("evaluations_to_optimum")
        self.evaluations, self.samples, self.parsed = state["counts"]
        self.reply_tokens = list(state.get("reply_tokens", []))
        self.replies_capped = int(state.get("replies_capped", 0))
        if state.get("problem") is not None:
            self.problem.load_state_dict(state["problem"])
        self._usage_prior, self._usage_base = dict(state.get("usage", {})), self._ledger()

    # ---- loop

    def start(self) -> None:
        for sol in self.problem.initial_solutions():
            if self.problem.key(sol) not in self._keys:
                self._add(sol, -1)
        self.best_per_step = [self.best().value]

    def done(self) -> bool:
        hit = self.config.stop_at_optimum and self.steps_to_optimum is not None
        cap = self.config.max_evaluations
        spent = cap is not None and self.evaluations >= cap
        return hit or spent or self.step_index >= self.config.steps

    def step(self) -> dict[str, Any]:
        """One optimisation step; returns its trajectory record."""
        t = self.step_index
        prop = self.proposer.propose(self.problem, self.history, t)
        new: dict[Hashable, Solution] = {}
        for sol in prop.solutions:  # official: np.unique on the step's proposals
            k = self.problem.key(sol)
            if k not in self._keys:
                new.setdefault(k, sol)
        todo = list(new.values())
        if self.config.max_evaluations is not None:
            todo = todo[: max(0, self.config.max_evaluations - self.evaluations)]
        scored = []
        for sol in todo:
            scored.append(self._add(sol, t))
            self.evaluations += 1
        if hasattr(self.problem, "after_step"):
            self.problem.after_step(t, scored)
        self.samples += prop.samples
        self.parsed += len(prop.solutions)
        self.reply_tokens += prop.reply_tokens
        self.replies_capped += prop.capped
        self.best_per_step.append(self.best().value)
        self.step_index += 1
        return {
            "step": t,
            "proposer": self.proposer.name,
            "samples": prop.samples,
            "parsed": len(prop.solutions),
            "new": [{"solution": s.solution, "value": s.value} for s in scored],
            "raw_outputs": prop.raw,
            "reply_tokens": prop.reply_tokens,
            "best_value": self.best_per_step[-1],
            "usage": self.usage(),
        }

    def run(
        self,
        out_dir: str | Path | None = None,
        *,
        resume: bool = False,
        time_budget_s: float | None = None,
        on_step: Callable[[dict[str, Any]], None] | None = None,
        checkpoint_every_s: float = 1.0,
    ) -> OPROResult:
        """Run until the step budget, the optimum, or ``time_budget_s`` seconds (checked
        between steps); with ``out_dir``, append every step to ``trajectory.jsonl`` and write
        ``checkpoint.json`` after a step once ``checkpoint_every_s`` seconds have passed since
        the last write, and when the run stops; ``resume`` continues from that checkpoint.

        Every step is checkpointed where a step takes longer than ``checkpoint_every_s`` (an
        LLM's); fast steps (the searches') are checkpointed about once a second, not once
        each: a search that keeps proposing explored solutions runs up to ``steps`` empty
        steps, and a checkpoint per step made the run quadratic in its history (11 minutes
        in one TSP run-on). Nothing is lost: a step's proposals depend only on the history
        and the step's seed, so a resume replays the steps after its checkpoint exactly (the
        trajectory is cut back to the checkpoint first)."""
        t0 = time.perf_counter()
        out = Path(out_dir) if out_dir is not None else None
        ckpt = out / "checkpoint.json" if out else None
        traj = out / "trajectory.jsonl" if out else None
        if resume and ckpt is not None and ckpt.exists():
            self.load_state_dict(json.loads(ckpt.read_text()))
            _truncate_jsonl(traj, self.step_index)
        else:
            self.start()
            if traj is not None:
                traj.parent.mkdir(parents=True, exist_ok=True)
                traj.write_text("")
        written, pending = time.perf_counter(), False
        while not self.done():
            if time_budget_s is not None and time.perf_counter() - t0 > time_budget_s:
                break
            rec = self.step()
            if out is not None:
                with traj.open("a", encoding="utf-8") as f:
                    f.write(json.dumps(rec) + "\n")
                pending = True
                if time.perf_counter() - written >= checkpoint_every_s:
                    atomic_write_json(ckpt, self.state_dict())
                    written, pending = time.perf_counter(), False
            if on_step is not None:
                on_step(rec)
        if pending:
            atomic_write_json(ckpt, self.state_dict())
        return self.result()

    def result(self) -> OPROResult:
        return OPROResult(
            history=list(self.history),
            best=self.best(),
            best_per_step=list(self.best_per_step),
            steps_run=self.step_index,
            steps_to_optimum=self.steps_to_optimum,
            evaluations_to_optimum=self.evaluations_to_optimum,
            evaluations=self.evaluations,
            samples=self.samples,
            parsed=self.parsed,
            usage=self.usage(),
            reply_tokens=list(self.reply_tokens),
            replies_capped=self.replies_capped,
        )


def _truncate_jsonl(path: Path | None, n_lines: int) -> None:
    """Drop trajectory lines written after the checkpoint (a crash between the two writes)."""
    if path is None or not path.exists():
        return
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(lines[:n_lines]), encoding="utf-8")


@dataclass
class TextProblem:
    """A generic problem from three functions: ``score(solution)``, ``format(solution) -> str``,
    ``parse(text) -> solution | None``; its meta-prompt follows the official regression
    format (solutions and values, worst first, then the request)."""

    score_fn: Callable[[Solution], float]
    format_fn: Callable[[Solution], str]
    parse_fn: Callable[[str], Solution | None]
    description: str
    """One sentence saying what the solutions are, e.g. 'a Python expression for ...'."""
    starts: list[Solution]
    minimize: bool = True
    random_fn: Callable[[np.random.Generator], Solution] | None = None
    perturb_fn: Callable[[Solution, np.random.Generator], Solution] | None = None

    def initial_solutions(self) -> list[Solution]:
        return list(self.starts)

    def score(self, solution: Solution) -> float:
        return float(self.score_fn(solution))

    def key(self, solution: Solution) -> Hashable:
        return self.format_fn(solution)

    def meta_prompt(self, shown: Sequence[Scored]) -> str:
        order = "descending" if self.minimize else "ascending"
        better = "lower" if self.minimize else "higher"
        pairs = "".join(
            f"\nsolution:\n{self.format_fn(s.solution)}\nvalue:\n{s.value:g}\n" for s in shown
        )
        return (
            f"Now you will help me optimize a function. {self.description} I have some "
            f"solutions and their values. The solutions are arranged in {order} order based "
            f"on their values, where {better} values are better.\n\n{pairs.strip()}\n\n"
            f"Give me a new solution that is different from all solutions above, and has a "
            f"value {better} than any of the above."
        )

    def parse(self, text: str) -> Solution | None:
        return self.parse_fn(text)

    def is_optimal(self, solution: Solution, value: float) -> bool:
        return False

    def random_solution(self, rng: np.random.Generator) -> Solution:
        if self.random_fn is None:
            raise NotImplementedError("give random_fn to use the random-search baseline")
        return self.random_fn(rng)

    def perturb(self, solution: Solution, rng: np.random.Generator) -> Solution:
        if self.perturb_fn is None:
            raise NotImplementedError("give perturb_fn to use the local-perturbation baseline")
        return self.perturb_fn(solution, rng)
