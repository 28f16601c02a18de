"""Presets, the reproduction runs and the claims of `iclr24-opro reproduce`.

Per seed: (1) the meta-prompt machinery against golden strings; (2) the scripted capable
optimizer ("best +/- 1") on the paper's linear-regression settings and on TSP with the
reference solvers; (3) the `--llm` optimizer (default: offline SmolLM2-135M) against random
search and local perturbation on linear regression (15, 14) at the same evaluation budget.
Once, on the first seed: (4) prompt optimisation (prompts.py): the `--llm` optimizer proposes
instructions, the `--scorer` LLM scores them on the training split; the best instruction and
the starting one are evaluated on the held-out test split.
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import dataclass, replace

import numpy as np

from iclr24_common import Claim, Metrics, Report, RunContext, UsageError, seed_everything
from iclr24_llm import LLM, SPEC_HELP, ScriptedBackend, load_llm

from .golden import check_golden
from .linreg import PAPER_SETTINGS, LinearRegression, linreg_loss, scripted_linreg_optimizer
from .opro import OPRO, LocalPerturbation, OPROConfig, RandomSearch, plot_best
from .prompts import (
    INITIAL_INSTRUCTION,
    SENTIMENT_LABELS,
    PromptOptimizationProblem,
    PromptProposer,
    load_bbh,
    load_gsm8k,
    make_sentiment_task,
    scripted_instruction_optimizer,
    scripted_sentiment_scorer,
    split_train_test,
)
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
    prompt_task: str
    """Prompt optimisation task: 'sentiment' (generated, label log-probs) or 'gsm8k'."""
    prompt_examples: int
    """Generated examples (train + test) of the sentiment task."""
    prompt_train_ratio: float
    """Training fraction (official: 0.035 for GSM8K, 0.2 for BBH)."""
    prompt_max_test: int | None
    """Test examples evaluated after optimisation (None: all)."""
    prompt_steps: int
    """Instruction-optimisation steps (official: 200)."""
    prompt_per_step: int
    """Instructions asked for per step (official: 8)."""
    prompt_seconds: float
    """Wall-time budget of the optimisation steps (checked between steps)."""
    prompt_max_new_tokens: int
    """Decoding cap per optimizer reply."""


PRESETS = {
    "smoke": Preset(((15, 14), (3, 5)), 60, 8, 80, 2, 30.0, 32,
                    "sentiment", 60, 0.2, 24, 2, 4, math.inf, 32),
    "default": Preset(PAPER_SETTINGS, 100, 10, 150, 40, 120.0, 64,
                      "sentiment", 60, 1 / 3, 40, 3, 4, 90.0, 48),
    "paper": Preset(PAPER_SETTINGS, 500, 10, 500, 500, math.inf, 1024,
                    "gsm8k", 0, 0.035, None, 200, 8, math.inf, 1024),
}  # fmt: skip


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--llm",
        default="local",
        help=f"optimizer LLM for the LLM-vs-random comparison; 'scripted' = the scripted "
        f"best +/- 1 optimizer. {SPEC_HELP}",
    )
    p.add_argument(
        "--scorer",
        default="local",
        help="scorer LLM of the prompt-optimisation phase (temperature 0); 'scripted' = a "
        "scripted stand-in for tests. Same spec syntax as --llm",
    )
    p.add_argument(
        "--prompt-task",
        default=None,
        help="task of the prompt-optimisation phase: gsm8k, or bbh:<task> (BIG-Bench Hard, "
        "files under --data-dir/bbh/<task>.json[l]); default: the preset's",
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


def make_scorer(spec: str, llm: LLM, llm_spec: str) -> LLM:
    if spec == "scripted":
        return ScriptedBackend(lambda p: "positive", name="scripted-scorer",
                               scorer=scripted_sentiment_scorer)  # fmt: skip
    if spec == llm_spec:
        return llm  # one model, loaded once
    return make_llm(spec)


# BIG-Bench Hard tasks whose targets are yes/no, true/false or valid/invalid, whose answers
# the official evaluation compares as booleans
BBH_BOOLEAN_TASKS = {
    "boolean_expressions", "causal_judgement", "formal_fallacies", "navigate",
    "sports_understanding", "web_of_lies",
}  # fmt: skip


def load_prompt_task(pre: Preset, ctx: RunContext, seed: int):
    """(train, test, labels, dataset) of the prompt-optimisation phase."""
    task = getattr(ctx.args, "prompt_task", None) or pre.prompt_task
    if task.startswith("bbh:"):
        name = task.removeprefix("bbh:")
        if not name:
            raise UsageError("--prompt-task bbh:<task> needs a task name, e.g. bbh:navigate")
        # official BBH protocol: 20% of the task for training, the rest for testing
        train, test = split_train_test(load_bbh(ctx.data_dir, name), 0.2, 0, pre.prompt_max_test)
        return train, test, None, task
    if task not in ("gsm8k", pre.prompt_task):
        raise UsageError(f"--prompt-task must be gsm8k or bbh:<task>, got {task!r}")
    if task == "gsm8k":
        train, _ = split_train_test(load_gsm8k(ctx.data_dir, "train"), pre.prompt_train_ratio)
        test = load_gsm8k(ctx.data_dir, "test")
        return train, test[: pre.prompt_max_test] if pre.prompt_max_test else test, None, "gsm8k"
    data = make_sentiment_task(pre.prompt_examples, seed)
    train, test = split_train_test(data, pre.prompt_train_ratio, seed, pre.prompt_max_test)
    return train, test, SENTIMENT_LABELS, "sentiment"


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
    prompt_data = load_prompt_task(pre, ctx, ctx.seeds[0])  # MissingDataError before any work
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
    # ---- (4) prompt optimisation, once (first seed)
    prompt_info, curve_prompt = run_prompt_phase(ctx, pre, m, llm, prompt_data)
    ctx.save_partial(m, usage=llm.usage.as_dict())
    ctx.save_figure(
        plot_best({"opro": curve_prompt}, ylabel="best training accuracy"), "prompt_best.png"
    )
    ctx.save_figure(plot_best(curves_lr, ylabel="best loss - loss(15, 14)"), "linreg_best.png")
    ctx.save_figure(plot_best(curves_tsp, ylabel="optimality gap (%)"), "tsp_best.png")
    claims = make_claims(m, golden, llm.name, pre, llm_seconds, prompt_info)
    extra = {"llm": llm.name, "usage": llm.usage.as_dict(), "golden": golden}
    return Report(m, claims, {**extra, "prompt_optimisation": prompt_info})


def run_prompt_phase(ctx: RunContext, pre: Preset, m: Metrics, llm: LLM, data) -> tuple:
    """Instruction optimisation on the training split, then test accuracy of the best
    instruction (by training accuracy) and of the starting instruction."""
    args, seed = ctx.args, ctx.seeds[0]
    train, test, labels, dataset = data
    scorer = make_scorer(args.scorer, llm, args.llm)
    optimizer = (
        ScriptedBackend(scripted_instruction_optimizer, name="scripted-instructions")
        if args.llm == "scripted"
        else llm
    )
    prob = PromptOptimizationProblem(
        scorer, train, labels=labels, dataset=dataset, seed=seed,
        threshold=0.0 if dataset != "gsm8k" else 0.3,
        treat_as_bool=dataset.removeprefix("bbh:") in BBH_BOOLEAN_TASKS,
    )  # fmt: skip
    cfg = OPROConfig(
        steps=pre.prompt_steps, proposals_per_step=pre.prompt_per_step, max_shown=20,
        max_new_tokens=pre.prompt_max_new_tokens, stop_at_optimum=False, seed=seed,
    )  # fmt: skip
    t0 = time.perf_counter()
    opt = OPRO(prob, optimizer, config=cfg, proposer=PromptProposer(optimizer, cfg))
    res = opt.run(
        ctx.out_dir / "trajectories" / f"prompt-seed{seed}",
        resume=ctx.resume,
        time_budget_s=pre.prompt_seconds,
    )
    t_opt = time.perf_counter() - t0
    start = next(s for s in res.history if s.solution == INITIAL_INSTRUCTION)
    best = res.best
    start_test = prob.evaluate(INITIAL_INSTRUCTION, test)
    best_test = (
        start_test if best.solution == INITIAL_INSTRUCTION else prob.evaluate(best.solution, test)
    )
    dt = time.perf_counter() - t0
    for k, v in {
        "start_train_acc": start.value, "best_train_acc": best.value,
        "start_test_acc": start_test, "best_test_acc": best_test,
        "test_gain_points": 100 * (best_test - start_test), "steps": res.steps_run,
        "parse_rate": res.parse_rate, "instructions_scored": len(res.history),
        "seconds": dt, "optimisation_seconds": t_opt,
    }.items():  # fmt: skip
        m.add(f"prompt/{k}", seed, v)
    info = {
        "task": dataset, "optimizer": optimizer.name, "scorer": scorer.name,
        "train": len(train), "test": len(test), "start": INITIAL_INSTRUCTION,
        "best": best.solution, "filtered": dict(prob.filtered),
        "instructions": [[s.solution, s.value, s.step] for s in res.history],
    }  # fmt: skip
    ctx.log.info(
        "prompt optimisation (%s, scorer %s): %d steps in %.0f s; best %r train %.3f test %.3f"
        " vs start train %.3f test %.3f",
        optimizer.name, scorer.name, res.steps_run, dt, best.solution, best.value, best_test,
        start.value, start_test,
    )  # fmt: skip
    return info, [float(v) for v in res.best_per_step]


def make_claims(
    m: Metrics,
    golden: dict[str, bool],
    llm_name: str,
    pre: Preset,
    llm_seconds: float,
    prompt_info: dict | None = None,
) -> list[Claim]:
    lr_ok = m.mean("scripted/linreg_success_rate")
    tsp_ok = m.mean("tsp/scripted_optimal")
    llm_x, rnd_x = m.mean("llm/linreg_excess_loss"), m.mean("random/linreg_excess_loss")
    return [
        Claim(
            "protocol",
            "Our meta-prompts are the official code's, character for character; the "
            "optimizer's replies are parsed as the official code parses them.",
            "official optimize_linear_regression.py / optimize_tsp.py / opt_utils.py formats",
            f"golden regression: {golden['linreg']}, TSP: {golden['tsp']}, instruction "
            f"meta-prompt: {golden['instruction']}; parse rate of "
            f"{llm_name}: {m.fmt('llm/parse_rate', 3)}",
            "all three golden strings match exactly",
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
        _prompt_claim(m, pre, prompt_info or {}),
    ]


def _prompt_claim(m: Metrics, pre: Preset, info: dict) -> Claim:
    start, best = m.mean("prompt/start_test_acc"), m.mean("prompt/best_test_acc")
    # a gain on a few dozen test questions is noisy: ask for 2 standard errors of the
    # difference of two proportions measured on the same n test examples
    n = max(int(info.get("test") or 1), 1)
    se = ((best * (1 - best) + start * (1 - start)) / n) ** 0.5
    return Claim(
        "prompt-opt",
        "The instruction found by OPRO has a higher test accuracy than the starting "
        f"instruction {INITIAL_INSTRUCTION!r}.",
        "abstract: the best OPRO instructions beat human-designed ones by up to 8% on GSM8K",
        f"{info.get('task')} ({info.get('train')} train / {info.get('test')} test), "
        f"optimizer {info.get('optimizer')}, scorer {info.get('scorer')}: best "
        f"{info.get('best')!r} test {100 * best:.1f}% (train "
        f"{100 * m.mean('prompt/best_train_acc'):.1f}%) vs start test {100 * start:.1f}% "
        f"(train {100 * m.mean('prompt/start_train_acc'):.1f}%): "
        f"{m.mean('prompt/test_gain_points'):+.1f} points; "
        f"{m.mean('prompt/steps'):.0f} steps x {pre.prompt_per_step} instructions, parse rate "
        f"{m.mean('prompt/parse_rate'):.2f}, {m.mean('prompt/instructions_scored'):.0f} "
        f"instructions scored; 2 SE of the gain = {200 * se:.1f} points",
        "test accuracy gain of the best instruction > 2 standard errors of the difference",
        bool(best - start > 2 * se),
    )
