"""The reproduction: PAPER, the presets, the measurements and ``run``; the command line is
``app`` at the bottom (``iclr24-opro reproduce --help``).

Measurements (each a resumable unit, all independent: one ``ctx.cached_parallel`` call; an
optimisation's steps depend on each other and stay serial inside its unit; no timing is a
claim):

- ``official``: our meta-prompts, answer scoring and TSP heuristics against outputs of the
  official functions (a check);
- ``seed<k>/scripted``: the machinery with a scripted capable optimizer (regression, the
  paper's settings; TSP to the Held-Karp optimum) and the reference TSP heuristics (checks);
- ``seed<k>/linreg``: the ``--llm`` optimizer on linear regression (w, b) = (15, 14), then
  random search and local perturbation at the same number of evaluations (a claim);
- ``seed<k>/tsp``: the same on TSP (a claim);
- ``seed<k>/prompt``: prompt optimisation (``--llm`` proposes, ``--scorer`` scores), the best
  instruction against the human-written ones on the test split (a claim), with the starting
  instruction (no step) as the no-op arm and every arm's per-example scores (the item-level SE
  where the seeds share the GSM8K / BBH test split).

The regression and TSP units also score the no-op arm: the best starting solution, no step
taken.
"""

from __future__ import annotations

import argparse
import functools
import time
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path

import numpy as np

from iclr24_common import ExperimentApp, Metrics, Paper, Report, RunContext, UsageError
from iclr24_common import preset_option as option
from iclr24_common.logs import get_logger
from iclr24_llm import LLM, SPEC_HELP, LLMError, ScriptedBackend, open_llm

from .baselines import HUMAN_INSTRUCTIONS, LocalPerturbation, RandomSearch
from .claims import make_checks, make_claims
from .data import (
    SENTIMENT_LABELS,
    gsm8k_paths,
    load_bbh,
    load_gsm8k,
    make_sentiment_task,
    split_examples,
    task_kind,
)
from .figures import plot_curves, plot_paper_vs_ours
from .linreg import PAPER_SETTINGS, LinearRegression, linreg_loss, scripted_linreg_optimizer
from .official import agreement
from .opro import OPRO, OPROConfig, OPROResult
from .prompts import (
    EXEMPLAR_SELECTIONS,
    INITIAL_INSTRUCTION,
    META_PROMPT_TYPES,
    SCORER_THRESHOLD,
    PromptOptimizationProblem,
    PromptProposer,
    scripted_instruction_optimizer,
    scripted_sentiment_scorer,
)
from .scoring import SCORINGS
from .tsp import (
    TSP,
    farthest_insertion,
    nearest_neighbour,
    scripted_tsp_optimizer,
    tour_length,
    two_opt,
)

PAPER = Paper(
    title="Large Language Models as Optimizers",
    authors="Yang, Wang, Lu, Liu, Le, Zhou & Chen",
    arxiv="2309.03409",
    code="https://github.com/google-deepmind/opro",
)
USES_TORCH = True  # the local model runs on torch (--device cuda puts it on a GPU)
LOG = get_logger("opro")
CHECK_PROMPT = "Does the sun rise from the north? Just answer yes or no."
"""The request the official scripts send first to check the servers."""


@dataclass(frozen=True)
class Preset:
    """One reproduction preset; defaults are the `default` preset's (official values cited)."""

    seeds: tuple[int, ...] = (0, 1, 2)
    """Repetitions: each seeds the regression data and starts as the official loop
    (np.random.seed(rep + 1)), the TSP instance and the generated prompt task."""
    llm: str = "local"
    """Optimizer LLM spec (--llm); 'scripted' = scripted optimizers (tests only)."""
    scorer: str = "local"
    """Scorer LLM spec of prompt optimisation (--scorer)."""
    llm_max_new_tokens: int = 1024
    """Decoding cap per optimizer reply on regression and TSP: the official max_decode_steps
    1024 for every optimizer (google-deepmind/opro@e81b2f5
    opro/optimization/optimize_linear_regression.py lines 112 and 144, optimize_tsp.py lines
    115 and 147). SmolLM2-135M stops at its end of turn well before it in most replies
    (README, "Decoding budget"); the run records the reply lengths."""
    samples_per_call: int | None = 1
    """Optimizer samples per LLM call (None: a step's samples in one batched call). 1 on a
    CPU: a batch decodes until its longest reply, so one reply that runs to the 1024-token
    cap makes the short ones wait (measured under the CPU lock, 2026-12-05: the 8 regression
    replies of one step, batched, 185 s on 2 threads; one at a time, 67 s on 1 thread)."""
    llm_seconds: float | None = None
    """Optional wall-time cap per LLM optimisation (None: the step budget alone)."""
    linreg_steps: int = 1
    """LLM steps on regression (official: max_num_steps 500, stop at the optimum; the paper's
    LLMs needed 4-8 on average for (15, 14), Table 2). 1 (8 before the official decoding
    budget): at 1024 tokens a reply the default must stay within ~10 minutes on 2 cores."""
    linreg_per_step: int = 2
    """Proposals asked for per regression step (official: num_generated_points_in_each_step
    8). 2 in the default: its regression replies are the largest cost of the default (4 a
    seed: 312, 3291 and 4096 tokens, 24-299 s a seed, 583 of ~1150 process-seconds; the
    default at 4 took 613 s on 2 quiet cores, over the 10 minutes; README, "Default wall
    time")."""
    tsp_n: int = 10
    """TSP cities (paper Table 3: 10, 15, 20, 50)."""
    tsp_steps: int = 1
    """LLM steps on TSP (official: num_steps 500)."""
    tsp_per_step: int = 2
    """Valid traces asked for per TSP step (official: num_decode_per_step 8). 2 (4 before, 16
    at 64 tokens): the model's TSP replies run long (a third to the 1024-token cap) and it
    parsed none of 60 (README, "Default wall time"); while nothing parses the meta-prompt
    never changes, so more samples are more draws from the same prompt."""
    tsp_max_samples: int = 2
    """Samples per TSP step at most (official: resample until 8 valid traces, no cap)."""
    scripted_settings: tuple[tuple[int, int], ...] = PAPER_SETTINGS
    """(w_true, b_true) of the scripted regression check (paper Table 2 has seven)."""
    scripted_steps: int = 100
    """Step cap of the scripted regression runs."""
    scripted_tsp_steps: int = 150
    """Step cap of the scripted TSP run."""
    baseline_max_evaluations: int = 2000
    """Cap for random search / local perturbation run to the optimum (evaluations needed)."""
    prompt_task: str = "sentiment"
    """Prompt optimisation task: sentiment (generated), gsm8k or bbh:<task> (--data-dir)."""
    prompt_examples: int = 36
    """Examples of the generated sentiment task (train + test): every scored instruction
    costs one scorer forward pass per example, the bulk of the default run's time."""
    prompt_train_ratio: float = 1 / 3
    """Training fraction (official: 0.035 for GSM8K, 0.2 for BBH)."""
    prompt_eval_ratio: float = 0.0
    """Validation fraction for periodic validation (official: 0 for GSM8K and BBH)."""
    prompt_max_test: int | None = None
    """Test examples evaluated (None: all)."""
    prompt_steps: int = 1
    """Instruction-optimisation steps (official: num_search_steps 200; 2 before the official
    decoding budget)."""
    prompt_per_step: int = 4
    """Instructions asked for per step (official: 8)."""
    scorer_max_new_tokens: int = 256
    """Decoding cap per scorer answer on a generated-answer task (GSM8K, BBH); official
    max_decode_steps 1024 for both scorers (optimize_instructions.py at e81b2f57)."""
    prompt_max_new_tokens: int = 1024
    """Decoding cap per optimizer reply of prompt optimisation (official: 1024 for the PaLM
    optimizers, 512 for GPT; optimize_instructions.py lines 305 and 340 at e81b2f5)."""
    scorer_style: str = "palm"
    """palm or gpt: the official score threshold of the meta-prompt (0.0 or 0.3)."""
    scoring: str = "official"
    """official (the loop's _get_accuracy rule) or strict (number_included_accuracy)."""
    meta_prompt_type: str = "both_instructions_and_exemplars"
    """Official meta_prompt_type: both_instructions_and_exemplars or instructions_only."""
    exemplar_selection: str = "random"
    """Official few_shot_selection_criteria (random, constant, accumulative/current_most_frequent)."""
    position: str = "Q_begin"
    """Instruction position (official GPT/text-bison scorers: Q_begin or Q_end)."""
    workers: int | None = 2
    """Processes for the units on the local executor (``--workers`` overrides; None: one per
    thread). 2 x 1 thread: the smoke took 27.0 s at 1 x 2 and 28.1 s at 2 x 1 under the CPU
    lock (2026-12-05, a tie: loading and 16-token replies), but the default decodes one reply
    at a time, and one process decoded no faster on 2 threads than on 1 (~15 tokens/s: seed
    0's first TSP step, 2780 tokens, 189 s at 1 x 2 and ~180 s at 2 x 1), so two processes
    decode twice the tokens (README, "Decoding budget and units")."""

    def __post_init__(self):
        for name in ("linreg_steps", "linreg_per_step", "tsp_steps", "scripted_steps", "scripted_tsp_steps",
                     "prompt_steps", "prompt_per_step", "llm_max_new_tokens", "tsp_per_step",
                     "prompt_max_new_tokens", "scorer_max_new_tokens",
                     "baseline_max_evaluations"):  # fmt: skip
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1")
        if self.tsp_n < 4:
            raise ValueError("tsp_n must be >= 4")
        if self.tsp_max_samples < self.tsp_per_step:
            raise ValueError("tsp_max_samples must be >= tsp_per_step (traces asked per step)")
        if self.samples_per_call is not None and self.samples_per_call < 1:
            raise ValueError("samples_per_call must be >= 1 (or None: one call per step)")
        if self.workers is not None and self.workers < 1:
            raise ValueError("workers must be >= 1 (or None: one per thread)")
        if self.llm_seconds is not None and not self.llm_seconds > 0:
            raise ValueError("llm_seconds must be > 0 (or None)")
        if not 0 < self.prompt_train_ratio < 1 or not 0 <= self.prompt_eval_ratio < 1:
            raise ValueError("prompt_train_ratio must be in (0, 1), prompt_eval_ratio in [0, 1)")
        if self.prompt_train_ratio + self.prompt_eval_ratio >= 1:
            raise ValueError("prompt_train_ratio + prompt_eval_ratio must be < 1")
        if not self.llm.strip() or not self.scorer.strip():
            raise ValueError("llm and scorer need a spec")
        task_kind(self.prompt_task)  # raises ValueError on a bad name
        checks = {"scorer_style": tuple(SCORER_THRESHOLD), "scoring": SCORINGS,
                  "meta_prompt_type": META_PROMPT_TYPES, "exemplar_selection": EXEMPLAR_SELECTIONS,
                  "position": ("Q_begin", "Q_end")}  # fmt: skip
        for name, allowed in checks.items():
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {', '.join(allowed)}")


PRESETS = {
    "smoke": Preset(
        seeds=(0,),
        llm_max_new_tokens=16,
        linreg_steps=1,
        linreg_per_step=2,  # the default's per-step counts (CI time: decoding is the smoke's cost)
        samples_per_call=None,  # 16-token caps: a batch waits little for its longest reply
        tsp_n=8,
        tsp_steps=1,
        tsp_per_step=2,
        tsp_max_samples=2,
        scripted_settings=((15, 14), (3, 5)),
        scripted_steps=60,
        scripted_tsp_steps=80,
        baseline_max_evaluations=500,
        prompt_examples=12,
        prompt_steps=1,
        prompt_per_step=2,
        prompt_max_new_tokens=16,
    ),
    "default": Preset(),
    # the official scale: 5 repetitions, 500 steps, GSM8K with a text-bison-style scorer
    "paper": Preset(
        seeds=(0, 1, 2, 3, 4),
        samples_per_call=None,  # a step's 8 samples in one call (a server, or a GPU's batch)
        linreg_steps=500,
        linreg_per_step=8,
        tsp_steps=500,
        tsp_per_step=8,
        tsp_max_samples=64,
        scripted_steps=500,
        scripted_tsp_steps=500,
        prompt_task="gsm8k",
        prompt_train_ratio=0.035,
        prompt_steps=200,
        prompt_per_step=8,
        prompt_max_new_tokens=1024,
        scorer_max_new_tokens=1024,
    ),  # fmt: skip
}


def add_arguments(p: argparse.ArgumentParser) -> None:
    option(p, "--llm", field="llm", help=f"optimizer LLM. {SPEC_HELP}; 'scripted' for tests")
    option(p, "--scorer", field="scorer", help="scorer LLM of prompt optimisation (same syntax)")
    option(p, "--prompt-task", field="prompt_task",
           help="sentiment (generated), gsm8k or bbh:<task> (files under --data-dir)")  # fmt: skip
    option(p, "--llm-steps", field="linreg_steps", type=int, help="LLM steps on regression")
    option(p, "--tsp-steps", field="tsp_steps", type=int, help="LLM steps on TSP")
    option(p, "--prompt-steps", field="prompt_steps", type=int, help="prompt-optimisation steps")
    option(p, "--llm-seconds", field="llm_seconds", type=float,
           help="wall-time cap per LLM optimisation")  # fmt: skip
    option(p, "--scoring", field="scoring", choices=SCORINGS, help="answer-checking rule")
    option(p, "--scorer-style", field="scorer_style", choices=tuple(SCORER_THRESHOLD),
           help="palm (threshold 0.0) or gpt (0.3), as the official loop")  # fmt: skip


# ------------------------------------------------------------------ models


def scripted_optimizer() -> ScriptedBackend:
    """One scripted backend for every meta-prompt (tests, and --llm scripted)."""

    def answer(prompt):
        text = prompt if isinstance(prompt, str) else prompt[-1]["content"]
        if "<INS>" in text:
            return scripted_instruction_optimizer(text)
        if "<trace>" in text:
            return scripted_tsp_optimizer(text)
        if text == CHECK_PROMPT:
            return "No."
        return scripted_linreg_optimizer(text)

    return ScriptedBackend(answer, name="scripted", scorer=scripted_sentiment_scorer)


@dataclass(frozen=True)
class UnitEnv:
    """What a unit needs besides its seed, in a form that pickles (never the run's ``ctx``):
    the preset, the data and trajectory folders, ``--resume``, and the threads and device its
    models run with."""

    preset: Preset
    data_dir: str
    trajectories: str
    resume: bool
    threads: int
    device: str

    @classmethod
    def of(cls, ctx: RunContext) -> UnitEnv:
        return cls(ctx.preset, str(ctx.data_dir), str(ctx.out_dir / "trajectories"),
                   bool(ctx.resume), ctx.unit_threads, str(ctx.device))  # fmt: skip


@functools.lru_cache(maxsize=4)
def open_model(spec: str, threads: int, device: str) -> LLM:
    """An optimizer or scorer, opened once per process (a worker loads its own model; models
    are never pickled); an HTTP backend is checked with one request."""
    if spec == "scripted":
        return scripted_optimizer()
    return open_llm(spec, threads=threads, device=device, probe=CHECK_PROMPT,
                    what="--llm/--scorer", log=LOG)  # fmt: skip


class Models:
    """The optimizer and scorer of a unit, opened on first use (a resumed finished run opens
    none)."""

    def __init__(self, env: UnitEnv):
        self.env = env

    def get(self, spec: str) -> LLM:
        return open_model(spec, self.env.threads, self.env.device)

    @cached_property
    def llm(self) -> LLM:
        return self.get(self.env.preset.llm)

    @cached_property
    def scorer(self) -> LLM:
        return self.get(self.env.preset.scorer)


# ------------------------------------------------------------------ measurements


def _log_steps(what: str):
    def on_step(rec):
        LOG.info("%s step %d: %d samples, %d parsed, %d new, best %.4g", what, rec["step"],
                     rec["samples"], rec["parsed"], len(rec["new"]), rec["best_value"])  # fmt: skip

    return on_step


def _run(
    env: UnitEnv, name, problem, cfg, llm=None, proposer=None, seconds=None
) -> tuple[OPROResult, float]:
    t0 = time.perf_counter()
    opt = OPRO(problem, llm, config=cfg, proposer=proposer)
    res = opt.run(Path(env.trajectories) / name, resume=env.resume, time_budget_s=seconds,
                  on_step=_log_steps(name) if llm is not None else None)  # fmt: skip
    return res, time.perf_counter() - t0


def _curve(res: OPROResult, shift: float = 0.0) -> list[tuple[int, float]]:
    """(evaluations so far, best value - shift): the best starting solution at 0, then after
    each new solution scored."""
    starts = [s.value for s in res.history if s.step < 0]
    best = min(starts)
    out = [(0, best - shift)]
    for k, s in enumerate([s for s in res.history if s.step >= 0], start=1):
        best = min(best, s.value)
        out.append((k, best - shift))
    return out


def scripted_unit(env: UnitEnv, seed: int) -> dict:
    """The machinery with scripted capable optimizers, and the reference TSP heuristics."""
    preset, v, t0 = env.preset, {}, time.perf_counter()
    found, steps = [], []
    for w, b in preset.scripted_settings:
        cfg = OPROConfig(steps=preset.scripted_steps, seed=seed)
        res, _ = _run(env, f"seed{seed}/scripted-linreg-w{w}-b{b}", LinearRegression(w, b, rep=seed),
                      cfg, ScriptedBackend(scripted_linreg_optimizer))  # fmt: skip
        found.append(res.steps_to_optimum is not None)
        if (w, b) == (15, 14):
            v["scripted/linreg/found_15_14"] = float(found[-1])
        steps += [res.steps_to_optimum] if found[-1] else []
    v["scripted/linreg/success_rate"] = float(np.mean(found))
    v["scripted/linreg/steps"] = float(np.mean(steps)) if steps else float(preset.scripted_steps)
    q = TSP(n=preset.tsp_n, seed=seed)
    v["tsp/nn/gap"] = q.gap(tour_length(q.dist, nearest_neighbour(q.dist)))
    v["tsp/fi/gap"] = q.gap(tour_length(q.dist, farthest_insertion(q.dist)))
    v["tsp/two_opt/gap"] = q.gap(tour_length(q.dist, two_opt(q.dist)))
    # official optimize_tsp.py: max_num_pairs = 10, loop until 8 valid traces
    cfg = OPROConfig(
        steps=preset.scripted_tsp_steps, max_shown=10, resample_invalid=True, seed=seed
    )
    res, _ = _run(env, f"seed{seed}/scripted-tsp", q, cfg, ScriptedBackend(scripted_tsp_optimizer))
    v["scripted/tsp/optimal"] = float(res.steps_to_optimum is not None)
    v["scripted/tsp/gap"] = q.gap(res.best.value)
    v["scripted/seconds"] = time.perf_counter() - t0  # reported (where the time goes), no claim
    return v


def reply_metrics(res: OPROResult, prefix: str) -> dict[str, float]:
    """The reply-length distribution of an LLM optimisation: median, 90th percentile and
    largest number of tokens per reply, and the fraction of replies cut at the cap."""
    t = np.asarray(res.reply_tokens or [0], dtype=float)
    n = max(1, len(res.reply_tokens))
    return {f"{prefix}/reply_tokens_median": float(np.median(t)),
            f"{prefix}/reply_tokens_p90": float(np.percentile(t, 90)),
            f"{prefix}/reply_tokens_max": float(t.max()),
            f"{prefix}/replies_capped": res.replies_capped / n}  # fmt: skip


SEARCH_PER_STEP = 8
"""Solutions random search and local perturbation propose per step (official
num_generated_points_in_each_step / num_decode_per_step = 8)."""


def versus_unit(env: UnitEnv, models: Models, problem, task: str, seed: int, cfg: OPROConfig,
                floor: float, value: str) -> tuple[dict, dict]:  # fmt: skip
    """The --llm optimizer, then random search and local perturbation at the same number of
    evaluations, and each baseline run on to the optimum (evaluations it needs)."""
    preset = env.preset
    res, dt = _run(env, f"seed{seed}/{task}-llm", problem, cfg, models.llm,
                   seconds=preset.llm_seconds)  # fmt: skip
    usage = res.usage
    v = {f"{task}/llm/{value}": res.best.value - floor, f"{task}/llm/found": float(res.steps_to_optimum is not None),
         f"{task}/llm/evaluations": res.evaluations, f"{task}/llm/steps": res.steps_run,
         f"{task}/llm/samples": res.samples, f"{task}/llm/parse_rate": res.parse_rate if res.samples else 0.0,
         f"{task}/llm/seconds": dt, f"{task}/llm/usage_calls": usage.get("calls", 0),
         f"{task}/llm/completion_tokens": usage.get("completion_tokens", 0),
         **reply_metrics(res, f"{task}/llm")}  # fmt: skip
    if res.evaluations_to_optimum is not None:
        v[f"{task}/llm/evaluations_to_optimum"] = res.evaluations_to_optimum
    # the no-op arm: the best starting solution, no step taken (every optimizer starts there)
    v[f"{task}/no_step/{value}"] = res.best_per_step[0] - floor
    curves = {"llm": _curve(res, floor)}
    # the step cap only stops a search that keeps proposing explored solutions; the searches
    # propose 8 per step (the official step size) whatever the LLM's (tsp_per_step): the
    # comparison is at equal evaluations, a step only batches them
    budget = replace(cfg, steps=20 * res.evaluations + 10, max_evaluations=res.evaluations,
                     proposals_per_step=SEARCH_PER_STEP, resample_invalid=False)  # fmt: skip
    cap = preset.baseline_max_evaluations
    free = replace(budget, steps=20 * cap + 10, max_evaluations=cap)
    t0 = time.perf_counter()
    for name, make in (("random", RandomSearch), ("local", LocalPerturbation)):
        base, _ = _run(env, f"seed{seed}/{task}-{name}", problem, budget, proposer=make(budget))
        v[f"{task}/{name}/{value}"] = base.best.value - floor
        v[f"{task}/{name}/found"] = float(base.steps_to_optimum is not None)
        v[f"{task}/{name}/evaluations"] = base.evaluations
        curves[name] = _curve(base, floor)
        run_on, _ = _run(
            env, f"seed{seed}/{task}-{name}-to-optimum", problem, free, proposer=make(free)
        )
        v[f"{task}/{name}/evaluations_to_optimum"] = (
            run_on.evaluations_to_optimum or preset.baseline_max_evaluations + 1
        )
    v[f"{task}/searches/seconds"] = time.perf_counter() - t0  # the four search runs, reported
    LOG.info("seed %d %s: %s %d evaluations (%d steps, parse rate %.2f, %.0f s): %s %.4g; "
                 "random %.4g, local %.4g", seed, task, models.llm.name, res.evaluations,
                 res.steps_run, v[f"{task}/llm/parse_rate"], dt, value, v[f"{task}/llm/{value}"],
                 v[f"{task}/random/{value}"], v[f"{task}/local/{value}"])  # fmt: skip
    return v, {"curves": curves, "reply_tokens": list(res.reply_tokens)}


def linreg_unit(env: UnitEnv, models: Models, seed: int) -> tuple[dict, dict]:
    prob = LinearRegression(15, 14, rep=seed)
    cfg = OPROConfig(steps=env.preset.linreg_steps, proposals_per_step=env.preset.linreg_per_step,
                     max_new_tokens=env.preset.llm_max_new_tokens,
                     samples_per_call=env.preset.samples_per_call, seed=seed)  # fmt: skip
    return versus_unit(env, models, prob, "linreg", seed, cfg, linreg_loss(prob.X, prob.y, 15, 14),
                       "excess_loss")  # fmt: skip


def tsp_unit(env: UnitEnv, models: Models, seed: int) -> tuple[dict, dict]:
    preset = env.preset
    q = TSP(n=preset.tsp_n, seed=seed)
    cfg = OPROConfig(steps=preset.tsp_steps, proposals_per_step=preset.tsp_per_step, max_shown=10,
                     resample_invalid=True, max_samples_per_step=preset.tsp_max_samples,
                     max_new_tokens=preset.llm_max_new_tokens,
                     samples_per_call=preset.samples_per_call, seed=seed)  # fmt: skip
    v, extra = versus_unit(env, models, q, "tsp", seed, cfg, q.optimum, "excess_length")
    for name in ("llm", "random", "local", "no_step"):
        v[f"tsp/{name}/gap"] = 100 * v[f"tsp/{name}/excess_length"] / q.optimum
    curves = {k: [(e, 100 * x / q.optimum) for e, x in c] for k, c in extra["curves"].items()}
    return v, {**extra, "curves": curves}


def load_prompt_data(preset: Preset, data_dir, seed: int):
    """(train, validation, test, labels) of the prompt task; MissingDataError first."""
    kind = task_kind(preset.prompt_task)
    if kind.dataset == "gsm8k":  # official: 3.5% of GSM8K train to optimise, the test file to test
        train, evals, _ = split_examples(load_gsm8k(data_dir, "train"), preset.prompt_train_ratio,
                                         preset.prompt_eval_ratio)  # fmt: skip
        test = load_gsm8k(data_dir, "test")[: preset.prompt_max_test]
        return train, evals, test, None
    if kind.dataset == "bbh":  # official: 20% of the task to optimise, the rest to test
        data = load_bbh(data_dir, kind.task)
        return (*split_examples(data, preset.prompt_train_ratio, preset.prompt_eval_ratio,
                                max_test=preset.prompt_max_test), None)  # fmt: skip
    data = make_sentiment_task(preset.prompt_examples, seed)
    return (*split_examples(data, preset.prompt_train_ratio, preset.prompt_eval_ratio,
                            max_test=preset.prompt_max_test), SENTIMENT_LABELS)  # fmt: skip


def prompt_unit(env: UnitEnv, models: Models, seed: int) -> tuple[dict, dict]:
    """Instruction optimisation on the training split; then the best instruction (by training
    accuracy) and the human-written ones (the best of them by training accuracy) on test."""
    preset = env.preset
    train, evals, test, labels = load_prompt_data(preset, Path(env.data_dir), seed)
    prob = PromptOptimizationProblem(
        models.scorer, train, labels=labels, kind=task_kind(preset.prompt_task),
        scoring=preset.scoring, position=preset.position,
        meta_prompt_type=preset.meta_prompt_type, exemplar_selection=preset.exemplar_selection,
        threshold=SCORER_THRESHOLD[preset.scorer_style], eval_examples=evals,
        max_new_tokens=preset.scorer_max_new_tokens,
    )  # fmt: skip
    only = preset.meta_prompt_type == "instructions_only"
    cfg = OPROConfig(steps=preset.prompt_steps, proposals_per_step=preset.prompt_per_step,
                     max_shown=10**6 if only else 20, max_new_tokens=preset.prompt_max_new_tokens,
                     samples_per_call=preset.samples_per_call, stop_at_optimum=False,
                     seed=seed)  # fmt: skip
    optimizer = models.llm
    res, dt = _run(env, f"seed{seed}/prompt", prob, cfg, optimizer,
                   PromptProposer(optimizer, cfg), preset.llm_seconds)  # fmt: skip
    t0 = time.perf_counter()
    humans = {"start": INITIAL_INSTRUCTION, **HUMAN_INSTRUCTIONS}
    train_acc = {k: prob.score(ins) for k, ins in humans.items()}
    human = max(humans, key=lambda k: (train_acc[k], k == "start"))  # chosen on training data
    # per test example, kept for the item-level SE of a test split every seed shares
    correct = {k: [float(c) for c in prob.correct(ins, test)] for k, ins in humans.items()}
    best = res.best
    correct["opro"] = [float(c) for c in prob.correct(best.solution, test)]
    acc = {k: float(np.mean(c)) if c else float("nan") for k, c in correct.items()}
    test_acc, opro_test = {k: acc[k] for k in humans}, acc["opro"]
    v = {"prompt/opro/train_acc": best.value, "prompt/opro/test_acc": opro_test,
         "prompt/opro/changed": float(best.solution != INITIAL_INSTRUCTION),
         "prompt/human/train_acc": train_acc[human], "prompt/human/test_acc": test_acc[human],
         "prompt/opro/steps": res.steps_run, "prompt/opro/instructions_scored": res.evaluations,
         "prompt/opro/parse_rate": res.parse_rate if res.samples else 0.0,
         "prompt/opro/seconds": dt, "prompt/n_test": len(test),
         "prompt/evaluation/seconds": time.perf_counter() - t0,  # scoring after the search
         **reply_metrics(res, "prompt/opro")}  # fmt: skip
    for k in humans:
        v[f"prompt/{k}/test_acc"] = test_acc[k]
    info = {"task": preset.prompt_task, "optimizer": optimizer.name, "scorer": models.scorer.name,
            "train": len(train), "validation": len(evals), "test": len(test),
            "best": best.solution, "best_human": humans[human], "filtered": dict(prob.filtered),
            "eval_results": [list(r) for r in prob.eval_results],
            "instructions": [[s.solution, s.value, s.step] for s in res.history],
            "test_correct": {"opro": correct["opro"], "human": correct[human],
                             "start": correct["start"]},
            "curve": [float(x) for x in res.best_per_step],
            "reply_tokens": list(res.reply_tokens)}  # fmt: skip
    LOG.info("seed %d prompt: best %r train %.3f test %.3f; best human %r test %.3f", seed,
                 best.solution, best.value, opro_test, humans[human], test_acc[human])  # fmt: skip
    return v, info


# ------------------------------------------------------------------ run


def check_data(preset: Preset, data_dir) -> None:
    """Stop at once when the paper's data is missing (before any model is loaded)."""
    kind = task_kind(preset.prompt_task)
    if kind.dataset == "gsm8k":
        for split in ("train", "test"):
            if not any(p.exists() for p in gsm8k_paths(data_dir, split)):
                load_gsm8k(data_dir, split)  # raises MissingDataError
    elif kind.dataset == "bbh":
        load_bbh(data_dir, kind.task)


LLM_UNITS = {"linreg": linreg_unit, "tsp": tsp_unit, "prompt": prompt_unit}


def llm_unit(task: str, env: UnitEnv, seed: int) -> tuple[dict, dict]:
    """One LLM optimisation with its baselines (a unit of the executor): the trajectory's
    steps depend on each other and stay serial inside it; the model is opened in the process
    that runs it."""
    t0 = time.perf_counter()
    try:
        v, extra = LLM_UNITS[task](env, Models(env), seed)
        # the whole unit (opening the models in a fresh process included), reported only
        return {**v, f"{task}/unit/seconds": time.perf_counter() - t0}, extra
    except LLMError as e:  # one line in the run's error, not a traceback of the backend
        raise UsageError(f"LLM backend failed: {e}") from None


def run(ctx: RunContext) -> Report:
    preset = ctx.preset
    check_data(preset, ctx.data_dir)
    for spec in {preset.llm, preset.scorer}:
        if spec.startswith("openai:"):  # one request each, before any work
            open_model(spec, ctx.threads, str(ctx.device))
    env = UnitEnv.of(ctx)
    # Every unit is independent: a seed's regression, TSP and prompt optimisations (each a
    # serial trajectory of steps), its scripted checks, and the official agreement. The LLM
    # units go first, the costliest first (the default's: regression, 4 replies a seed, then
    # prompts, 4 replies and the scoring, then TSP, 2 replies), the short scripted checks
    # last to fill the tail; no timing is a claim (the seconds beside each optimisation are
    # reported, not tested).
    jobs = {f"seed{s}/{task}": functools.partial(llm_unit, task, env, s)
            for task in ("linreg", "prompt", "tsp") for s in ctx.seeds}  # fmt: skip
    jobs |= {f"seed{s}/scripted": functools.partial(scripted_unit, env, s) for s in ctx.seeds}
    jobs["official"] = agreement
    done = ctx.cached_parallel(jobs, desc="optimisations")
    official = done["official"]
    ctx.log.info("agreement with the official functions: %s", official)
    metrics, curves, prompt_info = Metrics(), {}, {}
    replies: dict[str, dict[str, list[int]]] = {task: {} for task in LLM_UNITS}
    for seed in ctx.seeds:
        metrics.update(seed, done[f"seed{seed}/scripted"])
        for task in LLM_UNITS:
            values, extra = done[f"seed{seed}/{task}"]
            metrics.update(seed, values)
            replies[task][f"seed{seed}"] = extra["reply_tokens"]
            if seed == ctx.seeds[0] and task != "prompt":
                curves[task] = extra["curves"]
            if task == "prompt":
                prompt_info[f"seed{seed}"] = extra
    ctx.save_partial(metrics)
    ctx.save_figure(plot_curves(curves["linreg"], "linear regression (15, 14), seed "
                                f"{ctx.seeds[0]}", "best loss - loss(15, 14)"), "linreg_best.png")  # fmt: skip
    ctx.save_figure(plot_curves(curves["tsp"], f"TSP n = {preset.tsp_n}, seed {ctx.seeds[0]}",
                                "optimality gap (%)"), "tsp_best.png")  # fmt: skip
    ctx.save_figure(plot_paper_vs_ours(metrics, preset), "paper_vs_ours.png")
    llm_name = prompt_info[f"seed{ctx.seeds[0]}"]["optimizer"]
    extra = {"llm": preset.llm, "llm_name": llm_name, "scorer": preset.scorer,
             "official_agreement": official, "prompt_optimisation": prompt_info,
             "reply_tokens": replies}  # fmt: skip
    items = {arm: {int(k.removeprefix("seed")): info["test_correct"][arm]
                   for k, info in prompt_info.items()} for arm in ("opro", "human", "start")}  # fmt: skip
    return Report(metrics, make_claims(metrics, preset, items),
                  make_checks(metrics, preset, official), extra)  # fmt: skip


app = ExperimentApp.from_module(__name__)
main = app.main

if __name__ == "__main__":
    raise SystemExit(main())
