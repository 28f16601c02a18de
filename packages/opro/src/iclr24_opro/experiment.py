"""Presets, the reproduction runs and the claims of `iclr24-opro reproduce`.

Per seed: (1) the meta-prompt machinery against golden strings; (2) the scripted capable
optimizer ("best +/- 1") on the paper's linear-regression settings and on TSP with the
reference solvers; (3) the `--llm` optimizer (default: offline SmolLM2-135M) against random
search and local perturbation on linear regression (15, 14) at the same evaluation budget.
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import dataclass, replace

import numpy as np

from iclr24_common import Claim, Metrics, Report, RunContext, UsageError, seed_everything
from iclr24_common.llm import LLM, SPEC_HELP, ScriptedBackend, load_llm

from .golden import check_golden
from .linreg import PAPER_SETTINGS, LinearRegression, linreg_loss, scripted_linreg_optimizer
from .opro import OPRO, LocalPerturbation, OPROConfig, RandomSearch, plot_best
from .tsp import (
    TSP,
    farthest_insertion,
    nearest_neighbour,
    scripted_tsp_optimizer,
    tour_length,
    two_opt,
)

PAPER = {"title": "Large Language Models as Optimizers", "arxiv": "2309.03409"}


@dataclass(frozen=True)
class Preset:
    """Sizes of one reproduction preset."""

    linreg_settings: tuple[tuple[int, int], ...]
    """(w_true, b_true) settings for the scripted optimizer (paper Table 2 has seven)."""
    scripted_steps: int
    """Step cap of the scripted runs (official: 500)."""
    tsp_n: int
    """Cities of the TSP instance (paper Table 3: 10 is the size all LLMs solve)."""
    tsp_steps: int
    """Step cap of the TSP runs (official: 500)."""
    llm_steps: int
    """Step cap of the `--llm` optimizer on linear regression (official: 500)."""
    llm_seconds: float
    """Wall-time budget per seed of the `--llm` optimizer (ours: CPU time is the limit)."""
    llm_max_new_tokens: int
    """Decoding cap per proposal (official: 1024; shorter here to fit on 2 CPU cores)."""


PRESETS = {
    "smoke": Preset(((15, 14), (3, 5)), 60, 8, 80, 2, 30.0, 32),
    "default": Preset(PAPER_SETTINGS, 100, 10, 150, 40, 120.0, 64),
    "paper": Preset(PAPER_SETTINGS, 500, 10, 500, 500, math.inf, 1024),
}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--llm",
        default="local",
        help=f"optimizer LLM for the LLM-vs-random comparison; 'scripted' = the scripted "
        f"best +/- 1 optimizer. {SPEC_HELP}",
    )
    p.add_argument("--llm-steps", type=int, default=None, help="override the preset's step cap")
    p.add_argument(
        "--llm-seconds", type=float, default=None, help="override the per-seed time budget"
    )


def make_llm(spec: str) -> LLM:
    if spec == "scripted":
        return ScriptedBackend(scripted_linreg_optimizer, name="scripted-best+-1")
    try:
        return load_llm(spec)
    except ValueError as e:
        raise UsageError(str(e)) from None


def _check_args(args: argparse.Namespace) -> None:
    if args.llm_steps is not None and args.llm_steps < 1:
        raise UsageError(f"--llm-steps must be >= 1, got {args.llm_steps}")
    if args.llm_seconds is not None and not args.llm_seconds > 0:
        raise UsageError(f"--llm-seconds must be > 0, got {args.llm_seconds}")


def run(ctx: RunContext) -> Report:
    args = ctx.args
    _check_args(args)
    pre = PRESETS[ctx.preset]
    llm_steps = args.llm_steps or pre.llm_steps
    llm_seconds = args.llm_seconds or pre.llm_seconds
    traj = ctx.out_dir / "trajectories"
    m = Metrics()
    golden = check_golden()
    ctx.log.info("golden meta-prompts: %s", golden)
    t0 = time.perf_counter()
    llm = make_llm(args.llm)
    ctx.log.info("optimizer LLM %s ready in %.1f s", llm.name, time.perf_counter() - t0)
    curves_lr: dict[str, list[float]] = {}
    curves_tsp: dict[str, list[float]] = {}
    for seed in ctx.seeds:
        seed_everything(seed)
        # ---- (2a) scripted capable optimizer on the paper's regression settings
        found, steps = [], []
        for w, b in pre.linreg_settings:
            prob = LinearRegression(w, b, rep=seed)
            cfg = OPROConfig(steps=pre.scripted_steps, seed=seed)
            res = OPRO(prob, ScriptedBackend(scripted_linreg_optimizer), config=cfg).run(
                traj / f"scripted-linreg-w{w}-b{b}-seed{seed}", resume=ctx.resume
            )
            found.append(res.steps_to_optimum is not None)
            if res.steps_to_optimum is not None:
                steps.append(res.steps_to_optimum)
        m.add("scripted/linreg_success_rate", seed, np.mean(found))
        m.add(
            "scripted/linreg_found_15_14", seed, float(found[pre.linreg_settings.index((15, 14))])
        )
        m.add("scripted/linreg_steps", seed, np.mean(steps) if steps else np.nan)
        # ---- (2b) TSP: scripted optimizer, baselines, reference solvers
        q = TSP(n=pre.tsp_n, seed=seed)
        for name, solver in (("nn", nearest_neighbour), ("fi", farthest_insertion)):
            m.add(f"tsp/{name}_gap", seed, q.gap(tour_length(q.dist, solver(q.dist))))
        m.add("tsp/two_opt_gap", seed, q.gap(tour_length(q.dist, two_opt(q.dist))))
        cfg = OPROConfig(
            steps=pre.tsp_steps, max_shown=10, resample_invalid=True, seed=seed
        )  # official optimize_tsp.py: max_num_pairs = 10, loop until 8 valid traces
        runs = {
            "scripted": OPRO(q, ScriptedBackend(scripted_tsp_optimizer), config=cfg),
            "random": OPRO(q, proposer=RandomSearch(cfg), config=cfg),
            "local": OPRO(q, proposer=LocalPerturbation(cfg), config=cfg),
        }
        for name, opt in runs.items():
            res = opt.run(traj / f"tsp-{name}-seed{seed}", resume=ctx.resume)
            m.add(f"tsp/{name}_gap", seed, q.gap(res.best.value))
            m.add(f"tsp/{name}_optimal", seed, float(res.steps_to_optimum is not None))
            m.add(f"tsp/{name}_steps", seed, res.steps_run)
            if seed == ctx.seeds[0]:
                curves_tsp[name] = [q.gap(v) for v in res.best_per_step]
        ctx.log.info(
            "seed %d: scripted regression success %.2f; TSP n=%d gap scripted %.2f%%",
            seed, np.mean(found), pre.tsp_n, m.values("tsp/scripted_gap")[-1],
        )  # fmt: skip
        # ---- (3) the --llm optimizer vs random search vs local perturbation, equal budget
        prob = LinearRegression(15, 14, rep=seed)
        floor = linreg_loss(prob.X, prob.y, 15, 14)
        cfg = OPROConfig(steps=llm_steps, max_new_tokens=pre.llm_max_new_tokens, seed=seed)
        t1 = time.perf_counter()
        res_llm = OPRO(prob, llm, config=cfg).run(
            traj / f"llm-linreg-seed{seed}", resume=ctx.resume, time_budget_s=llm_seconds
        )
        dt = time.perf_counter() - t1
        budget = replace(cfg, steps=res_llm.steps_run)  # the same number of steps and samples
        res_base = {
            "random": OPRO(prob, proposer=RandomSearch(budget), config=budget).run(
                traj / f"random-linreg-seed{seed}", resume=ctx.resume
            ),
            "local": OPRO(prob, proposer=LocalPerturbation(budget), config=budget).run(
                traj / f"local-linreg-seed{seed}", resume=ctx.resume
            ),
        }
        for name, res in (("llm", res_llm), *res_base.items()):
            m.add(f"{name}/linreg_found", seed, float(res.steps_to_optimum is not None))
            m.add(f"{name}/linreg_excess_loss", seed, res.best.value - floor)
            m.add(f"{name}/linreg_evaluations", seed, res.evaluations)
            if seed == ctx.seeds[0]:
                curves_lr[name] = [v - floor for v in res.best_per_step]
        m.add("llm/linreg_steps", seed, res_llm.steps_run)
        m.add("llm/parse_rate", seed, res_llm.parse_rate)
        m.add("llm/seconds_per_step", seed, dt / max(res_llm.steps_run, 1))
        for k in ("calls", "prompt_tokens", "completion_tokens"):
            m.add(f"llm/usage_{k}", seed, res_llm.usage.get(k, 0))
        ctx.log.info(
            "seed %d: %s %d steps in %.0f s, parse rate %.2f, excess loss %.1f "
            "(random %.1f, local %.1f)",
            seed, llm.name, res_llm.steps_run, dt, res_llm.parse_rate,
            m.values("llm/linreg_excess_loss")[-1], m.values("random/linreg_excess_loss")[-1],
            m.values("local/linreg_excess_loss")[-1],
        )  # fmt: skip
        ctx.save_partial(m, usage=llm.usage.as_dict())
    ctx.save_figure(plot_best(curves_lr, ylabel="best loss - loss(15, 14)"), "linreg_best.png")
    ctx.save_figure(plot_best(curves_tsp, ylabel="optimality gap (%)"), "tsp_best.png")
    claims = make_claims(m, golden, llm.name, pre, llm_seconds)
    return Report(m, claims, {"llm": llm.name, "usage": llm.usage.as_dict(), "golden": golden})


def make_claims(
    m: Metrics, golden: dict[str, bool], llm_name: str, pre: Preset, llm_seconds: float
) -> list[Claim]:
    lr_ok = m.mean("scripted/linreg_success_rate")
    tsp_ok = m.mean("tsp/scripted_optimal")
    llm_x, rnd_x = m.mean("llm/linreg_excess_loss"), m.mean("random/linreg_excess_loss")
    return [
        Claim(
            "protocol",
            "Our meta-prompts are the official code's, character for character; the "
            "optimizer's replies are parsed as the official code parses them.",
            "official optimize_linear_regression.py / optimize_tsp.py formats",
            f"golden regression: {golden['linreg']}, TSP: {golden['tsp']}; parse rate of "
            f"{llm_name}: {m.fmt('llm/parse_rate', 3)}",
            "both golden strings match exactly",
            all(golden.values()),
        ),
        Claim(
            "capable-linreg",
            "A capable optimizer reaches (w_true, b_true) = (15, 14) from the OPRO meta-prompt.",
            "Table 2: text-bison, gpt-3.5-turbo and gpt-4 reach (15, 14) in every repetition",
            f"scripted best +/- 1: (15, 14) found in {m.mean('scripted/linreg_found_15_14'):.2f}"
            f" of seeds; all {len(pre.linreg_settings)} settings: success {lr_ok:.2f}, "
            f"{m.fmt('scripted/linreg_steps', 3)} steps when found",
            f"(15, 14) found in every seed within {pre.scripted_steps} steps",
            m.mean("scripted/linreg_found_15_14") == 1.0,
        ),
        Claim(
            "capable-tsp",
            f"A capable optimizer reaches the optimum of TSP with n = {pre.tsp_n}.",
            "Table 3: n = 10, 0.0% optimality gap for text-bison, gpt-3.5-turbo and gpt-4",
            f"scripted: optimal in {tsp_ok:.2f} of seeds, gap {m.fmt('tsp/scripted_gap', 3)}%"
            f" (NN {m.fmt('tsp/nn_gap', 3)}%, FI {m.fmt('tsp/fi_gap', 3)}%, random search "
            f"{m.fmt('tsp/random_gap', 3)}%)",
            f"optimum (Held-Karp) reached in every seed within {pre.tsp_steps} steps",
            tsp_ok == 1.0,
        ),
        Claim(
            "llm-vs-random",
            f"The LLM optimizer ({llm_name}) beats random search at the same evaluation budget.",
            "Section 3.1: LLMs find (15, 14) in a few steps, exploring far fewer points than "
            "exhaustive search",
            f"excess loss {m.fmt('llm/linreg_excess_loss', 4)} vs random "
            f"{m.fmt('random/linreg_excess_loss', 4)} (local perturbation "
            f"{m.fmt('local/linreg_excess_loss', 4)}); found (15, 14): "
            f"{m.mean('llm/linreg_found'):.2f} vs {m.mean('random/linreg_found'):.2f}; "
            f"{m.fmt('llm/linreg_steps', 3)} steps of 8 samples "
            f"(budget {pre.llm_steps} steps / {llm_seconds:g} s per seed)",
            "mean excess loss of the LLM < that of random search",
            llm_x < rnd_x,
        ),
    ]
