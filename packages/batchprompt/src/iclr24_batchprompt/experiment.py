"""The reproduction: PAPER, the presets, the measurements and ``run``; the command line is
``app`` at the bottom (``iclr24-batchprompt reproduce --help``).

Measurements: independent units (each seeds itself and stores its result for ``--resume``),
handed together to ``ctx.cached_parallel`` (local processes or Ray tasks; issue 52); the
driver only joins them (the per-seed agreement of an arm with its no-op) and judges:

- ``seed<k>/sim``: the position-biased simulated LLM (``simulate.py``) on ``sim_items``
  points: SinglePrompt, BPE at ``sim_batch_size`` with 1..K votes (plain and self-weighted),
  BPE + SEAS, and the binomial prediction of BPE's accuracy;
- ``seed<k>/llm/bs<b>``: the ``--llm`` model (default: SmolLM2-135M with the restricted
  label decoder) on ``n_items`` generated points at batch size b (b = 1 is SinglePrompt),
  K permuted votes; ``seed<k>/llm/bs<b>/seas``: the same with SEAS. Each keeps its per-point
  predictions and their correctness (the item-level SE of the claims), and the two no-op
  answerers on the same batches: the position-only answerer (a label read off the point's
  position alone) and the majority label (the seed's most frequent answer for every point).

Tokens and calls are counted inside each unit, exactly, on the backend's own tokenizer (not
timings: they do not depend on where a unit runs); no timing is a claim of this package, so
nothing has to stay serial in the driver.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache, partial

import numpy as np

from iclr24_common import ExperimentApp, Metrics, Paper, Report, RunContext, UsageError
from iclr24_common import preset_option as option
from iclr24_common.logs import get_logger
from iclr24_llm import SPEC_HELP, LLMError, open_llm

from .batchprompt import (
    Answerer,
    BatchResult,
    Task,
    TokenTerms,
    llm_answerer,
    official_tokens,
    parse_number,
    planned_calls,
    run_batches,
)
from .claims import make_checks, make_claims, make_premises
from .data import GENERATED, PAPER_TASKS, SENTIMENT, load_paper_task
from .decoder import DEFAULT_THRESHOLD, restricted_answerer
from .figures import plot_accuracy_vs_tokens, plot_position
from .simulate import PositionBias, predicted_accuracy, simulated_llm

PAPER = Paper(
    title="BatchPrompt: Accomplish more with less",
    authors="Lin, Diesendruck, Du & Abraham",
    arxiv="2309.00384",
    code="https://github.com/microsoft/BatchPrompt",
)
USES_TORCH = True  # the local model runs on torch (--device cuda puts it on a GPU)


@dataclass(frozen=True)
class Preset:
    """One reproduction preset; defaults are the `default` preset's (sources cited)."""

    seeds: tuple[int, ...] = (0, 1, 2)
    """Repetitions: each draws the generated points, the permutations and the simulator."""
    llm: str = "local"
    """LLM spec (--llm): local (SmolLM2-135M, restricted decoder), a model path,
    openai:<model>@<url> (free generation + the parser), or simulated (the position-biased
    simulator, also for this part: tests and smoke)."""
    task: str = "sentiment"
    """sentiment (generated) or a paper task: boolq, rte, qqp, gsm8k (files under --data-dir;
    gsm8k answers are numbers: free generation and the parser, on any --llm)."""
    n_items: int = 32
    """Points per seed for the --llm part (official: 320 per configuration; 32 x 3 seeds
    fit the 2-core budget: the local model takes ~0.1-0.25 s per label on the shared box)."""
    batch_sizes: tuple[int, ...] = (1, 4, 16)
    """Batch sizes (1 = SinglePrompt; paper: 1, 16, 32, 64 on RTE, Table 1)."""
    votes: int = 5
    """Voting rounds of BPE; 1..votes are reported (official default num_vote 9; paper
    figures use 1, 3, 5, 7, 9)."""
    seas_batch_sizes: tuple[int, ...] = (16,)
    """Batch sizes also run with SEAS (paper: 32 and 64)."""
    seas_rules: tuple[str, ...] = ("paper", "official")
    """SEAS stopping rules run at each SEAS batch size: "paper" (Algorithm 1: two equal,
    confident answers; the claims use it) and "official" (the released adaptive_batch_run.py
    at ac3c354: two equal answers, confidence ignored), reported beside it."""
    threshold: float = DEFAULT_THRESHOLD
    """Local model: label probability above which an answer counts as "confident"."""
    alpha: float = 0.2
    """Weight of a "not confident" vote (paper Sec. 3.3)."""
    max_reask: int = 2
    """Re-asks of missing labels per call (ours; the official code aligns by position)."""
    sim_items: int = 320
    """Points per seed for the simulated LLM (official runs 320 points per configuration)."""
    sim_batch_size: int = 16
    """Batch size of the simulated runs."""
    sim_votes: int = 5
    """Voting rounds of the simulated runs."""
    bias: PositionBias = field(default_factory=PositionBias)
    """The simulated LLM's error and format-error rates."""
    workers: int = 0
    """Local processes for the units (0: one per thread). Smoke: 1, measured on 2 cores
    (simulator units of milliseconds: 1 x 2 threads 5.3 / 5.6 s wall, 2 x 1 thread 7.2 /
    5.7 s, two runs each, 2026-12-05); default: one per thread (2 x 1 thread, README)."""

    def __post_init__(self):
        if self.workers < 0:
            raise ValueError("workers must be >= 0 (0: one per thread)")
        for name in ("n_items", "votes", "sim_items", "sim_batch_size", "sim_votes"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1")
        if self.max_reask < 0:
            raise ValueError("max_reask must be >= 0")
        if not self.batch_sizes or min(self.batch_sizes) < 1 or 1 not in self.batch_sizes:
            raise ValueError("batch_sizes must be >= 1 and include 1 (SinglePrompt)")
        if any(b not in self.batch_sizes for b in self.seas_batch_sizes):
            raise ValueError("seas_batch_sizes must be among batch_sizes")
        if not self.seas_rules or not set(self.seas_rules) <= {"paper", "official"}:
            raise ValueError("seas_rules must be among paper, official")
        if not 0 < self.threshold <= 1 or not 0 <= self.alpha <= 1:
            raise ValueError("threshold must be in (0, 1], alpha in [0, 1]")
        if self.task not in GENERATED and self.task not in PAPER_TASKS:
            raise ValueError(f"task must be one of {', '.join([*GENERATED, *PAPER_TASKS])}")
        if not self.llm.strip():
            raise ValueError("llm needs a spec")


PRESETS = {
    "smoke": Preset(
        seeds=(0, 1),
        llm="simulated",
        n_items=32,
        batch_sizes=(1, 4, 16),
        votes=3,
        seas_batch_sizes=(16,),
        sim_items=96,
        sim_votes=3,
        workers=1,
    ),  # fmt: skip
    "default": Preset(),
    # the paper's scale: 320 points of BoolQ (also rte, qqp with --set task=...) through a
    # real LLM (--llm openai:<model>@<url>), batch sizes up to 64, 9 votes (official run.py)
    "paper": Preset(
        seeds=(0,),
        llm="openai:gpt-4o-mini@https://api.openai.com/v1",
        task="boolq",
        n_items=320,
        batch_sizes=(1, 16, 32, 64),
        votes=9,
        seas_batch_sizes=(32, 64),
        sim_items=320,
    ),  # fmt: skip
}


def add_arguments(p: argparse.ArgumentParser) -> None:
    option(p, "--llm", field="llm", help=f"{SPEC_HELP}; 'simulated' for the simulator")
    option(p, "--task", field="task", help="sentiment (generated), boolq, rte, qqp or gsm8k")
    option(p, "--n-items", field="n_items", type=int, help="points per seed for --llm")
    option(p, "--votes", field="votes", type=int, help="BPE voting rounds")


# ------------------------------------------------------------------ models


@lru_cache(maxsize=2)
def open_answerer(spec: str, task: str, threshold: float,
                  device: str) -> tuple[Answerer, object, str, bool]:  # fmt: skip
    """(answerer, token counter, model name, verbal confidence) of the --llm model, opened once
    per process (the driver, a pool worker or a Ray worker: never pickled) on the process's
    threads (the driver's --threads, a worker's share of them). Free generation (asked for
    verbal confidence) on an HTTP model and for numeric answers; the restricted label decoder
    (label probability) on a local model."""
    http = spec.startswith("openai:")
    free = http or PAPER_TASKS.get(task, SENTIMENT).numeric
    options = {"max_retries": 2} if http else {}
    llm = open_llm(spec, threads=None, device=device, log=get_logger("batchprompt"), **options)
    ans = llm_answerer(llm) if free else restricted_answerer(llm, threshold=threshold)
    return ans, llm.count_tokens, llm.name, free


def task_and_items(preset: Preset, data_dir, seed: int) -> tuple[Task, list[dict]]:
    if preset.task in PAPER_TASKS:
        items = load_paper_task(data_dir, preset.task)
        order = np.random.default_rng(seed).permutation(len(items))[: preset.n_items]
        return PAPER_TASKS[preset.task], [items[i] for i in order]
    task, make = GENERATED[preset.task]
    return task, make(preset.n_items, seed)


def _key(task: Task) -> str:
    return task.template.split("[")[2].split("]")[0].lower()


# ------------------------------------------------------------------ measurements


def truth(item) -> int | float:
    """A point's answer: its class id, or the number of a numeric task (GSM8K)."""
    return parse_number(item["label"])


def correct(pred, items) -> list[float]:
    """Per point: 1.0 when its prediction is its answer (an unanswered point is wrong)."""
    return [float(p is not None and p == truth(it)) for p, it in zip(pred, items)]


def accuracy(pred, items) -> float:
    return float(np.mean(correct(pred, items)))


def position_only(task: Task, positions) -> list[int]:
    """The no-op answerer: a label read off each point's position in its round-1 batch alone
    (class ``position mod the number of classes``; the position itself on a numeric task),
    never the point: what a model that cannot read a batch can still score."""
    return [p % len(task.labels) if task.labels else p for p in positions]


def majority_label(items) -> int | float:
    """The other no-op answer: the seed's most frequent answer, given to every point (an
    oracle's constant: its counts come from the points' own labels, so no constant rule scores
    more; ties go to the first label seen). Chance on the balanced generated task; the majority
    class on a paper task (BoolQ's "yes" is ~62% of its validation set)."""
    return Counter(truth(it) for it in items).most_common(1)[0][0]


def cost_metrics(res: BatchResult, terms: TokenTerms, b: int, k: int,
                 prefix: str) -> dict[str, float]:  # fmt: skip
    """Calls and tokens of the first k rounds; the App. F formula, what it leaves out
    (``TokenTerms.overheads``) and the official count."""
    led = res.ledger
    used = led.upto(k)
    asked = [led.asked[c] for c, r in enumerate(led.round_of) if r < k]
    paper = terms.paper(asked, b)
    over = terms.overheads(asked, b)
    n = len(res.votes)
    rounds_asked = [sum(v.round < k for v in votes) for votes in res.votes]
    out = {f"{prefix}/calls": used["calls"], f"{prefix}/reasks": used["reasks"],
           f"{prefix}/prompt_tokens": used["prompt_tokens"],
           f"{prefix}/completion_tokens": used["completion_tokens"],
           f"{prefix}/planned_calls": planned_calls(n, b, k),
           f"{prefix}/formula_tokens": paper,
           # signed: > 0 when the formula undercounts what was billed
           f"{prefix}/formula_gap": (used["prompt_tokens"] - paper) / max(1, paper),
           f"{prefix}/exact_tokens": paper + sum(over.values()),
           f"{prefix}/official_tokens": official_tokens(
               -(-n // b), terms.prompt(b), [terms.item(i) for i in range(n)], rounds_asked)}  # fmt: skip
    out.update({f"{prefix}/overhead_{name}": t for name, t in over.items()})
    return out


def measure(answerer: Answerer, count, task: Task, items, preset: Preset, b: int, k: int,
            seas: bool, seed: int, confidence: bool, prefix: str) -> tuple[dict, dict]:  # fmt: skip
    t0 = time.perf_counter()
    res = run_batches(answerer, task, items, batch_size=b, rounds=k, seas=seas,
                      confidence=confidence, seed=seed, max_reask=preset.max_reask)  # fmt: skip
    seconds = time.perf_counter() - t0
    terms = TokenTerms(count, task, items, confidence)
    v: dict[str, float] = {f"{prefix}/seconds": seconds}
    led = res.ledger
    v.update({f"{prefix}/missing": led.missing, f"{prefix}/extra": led.extra,
              f"{prefix}/duplicate": led.duplicate, f"{prefix}/reasks": led.reasks,
              f"{prefix}/unanswered": led.unanswered})  # fmt: skip
    if seas:
        v.update({f"{prefix}/acc": accuracy(res.predictions(), items),
                  f"{prefix}/acc_weighted": accuracy(res.predictions(weighted=True, alpha=preset.alpha), items),
                  **cost_metrics(res, terms, b, k, prefix),
                  f"{prefix}/mean_rounds": float(np.mean([len(x) for x in res.votes]))})  # fmt: skip
    else:
        for r in range(1, k + 1):
            p = f"{prefix}/v{r}"
            v[f"{p}/acc"] = accuracy(res.predictions(rounds=r), items)
            v[f"{p}/acc_weighted"] = accuracy(
                res.predictions(weighted=True, alpha=preset.alpha, rounds=r), items
            )
            v.update(cost_metrics(res, terms, b, r, p))
    # accuracy by position in round 1 (naive batching)
    right = np.zeros(b)
    seen = np.zeros(b)
    for votes, it in zip(res.votes, items):
        first = votes[0]
        seen[first.position] += 1
        right[first.position] += first.label == truth(it)
    extra = {"position_acc": (right / np.maximum(seen, 1)).tolist(), "position_n": seen.tolist()}
    # per point, for the item-level SE and the fraction of decisions an arm changed
    if seas:
        extra["pred"] = {"seas": res.predictions()}
    else:
        extra["pred"] = {f"v{r}": res.predictions(rounds=r) for r in range(1, k + 1)}
        extra["pred"]["position_only"] = position_only(task, [v[0].position for v in res.votes])
        extra["pred"]["majority"] = [majority_label(items)] * len(items)
        for noop in ("position_only", "majority"):
            v[f"{prefix}/{noop}/acc"] = accuracy(extra["pred"][noop], items)
    extra["correct"] = {name: correct(pred, items) for name, pred in extra["pred"].items()}
    if b > 1 and not seas:
        half = b // 2
        v[f"{prefix}/first_half_acc"] = float(right[:half].sum() / max(1, seen[:half].sum()))
        v[f"{prefix}/second_half_acc"] = float(right[half:].sum() / max(1, seen[half:].sum()))
    return v, extra


def sim_unit(preset: Preset, seed: int) -> tuple[dict, dict]:
    """SinglePrompt, BPE 1..K votes and BPE + SEAS on the position-biased simulator."""
    items = [{"sentence": f"Review number {k} of the set.", "label": str(y)}
             for k, y in enumerate(np.random.default_rng(seed).integers(0, 2, preset.sim_items))]  # fmt: skip
    answers = {it["sentence"]: int(it["label"]) for it in items}
    v: dict[str, float] = {}
    extra = {}
    b, k = preset.sim_batch_size, preset.sim_votes
    for name, bs, rounds, seas in (("single", 1, 1, False), (f"bs{b}", b, k, False),
                                   (f"bs{b}/seas", b, k, True)):  # fmt: skip
        llm = simulated_llm(SENTIMENT, answers, preset.bias, seed=seed)
        ans = llm_answerer(llm)
        vals, ex = measure(ans, llm.count_tokens, SENTIMENT, items, preset, bs, rounds, seas,
                           seed, confidence=True, prefix=f"sim/{name}")  # fmt: skip
        v.update(vals)
        extra[name] = ex
        v[f"sim/{name}/usage_calls"] = llm.usage.as_dict()["calls"]
        v[f"sim/{name}/usage_prompt_tokens"] = llm.usage.as_dict()["prompt_tokens"]
    for r in range(1, k + 1):
        v[f"sim/bs{b}/v{r}/predicted_acc"] = predicted_accuracy(preset.bias, len(items), b, r)
    v["sim/single/predicted_acc"] = 1 - preset.bias.error(0)
    return v, extra


def sim_official_unit(preset: Preset, seed: int) -> dict:
    """SEAS with the released script's rule (agreement alone) on the same simulated points."""
    items = [{"sentence": f"Review number {k} of the set.", "label": str(y)}
             for k, y in enumerate(np.random.default_rng(seed).integers(0, 2, preset.sim_items))]  # fmt: skip
    answers = {it["sentence"]: int(it["label"]) for it in items}
    llm = simulated_llm(SENTIMENT, answers, preset.bias, seed=seed)
    b, k = preset.sim_batch_size, preset.sim_votes
    vals, _ = measure(llm_answerer(llm), llm.count_tokens, SENTIMENT, items, preset, b, k,
                      "official", seed, confidence=True, prefix=f"sim/bs{b}/seas-official")  # fmt: skip
    return vals


def seas_prefix(b: int, seas: bool | str) -> str:
    """Metric prefix: llm/bs<b> (BPE), llm/bs<b>/seas (the paper's SEAS), .../seas-official."""
    return f"llm/bs{b}" + {False: "", True: "/seas", "paper": "/seas"}.get(seas, f"/seas-{seas}")


def llm_unit(preset: Preset, data_dir, seed: int, b: int, seas: bool | str,
             device: str = "cpu") -> tuple[dict, dict]:  # fmt: skip
    """One unit of the --llm part: ``seed``'s points at batch size ``b`` (b = 1 is
    SinglePrompt), K permuted votes, or SEAS by rule ``seas``; it reads its points from
    ``data_dir`` (paper tasks) or generates them, and opens the model in its own process."""
    task, items = task_and_items(preset, data_dir, seed)
    k = 1 if b == 1 else preset.votes
    if preset.llm == "simulated":  # simulated stand-in for the LLM part (smoke, tests)
        answers = {it[_key(task)]: truth(it) for it in items}
        llm = simulated_llm(task, answers, preset.bias, seed=seed + 1000 * b, key=_key(task))
        answerer, count, confidence = llm_answerer(llm), llm.count_tokens, True
    else:
        answerer, count, _, confidence = open_answerer(preset.llm, preset.task,
                                                       preset.threshold, device)  # fmt: skip
    return measure(answerer, count, task, items, preset, b, k, seas, seed, confidence,
                   seas_prefix(b, seas))  # fmt: skip


def unit_jobs(preset: Preset, data_dir, seeds, device: str) -> dict[str, partial]:
    """Every unit of a run, independent of each other (each seeds itself), the slowest first
    (default, 2 threads: BPE at bs 4 ~42 s, at bs 16 ~31 s, SEAS ~20 s, SinglePrompt ~5 s,
    the simulator < 1 s per seed): BPE at each batch size > 1, then SEAS, then SinglePrompt,
    then the simulator. Token counts and calls are counted inside each unit (exact, on the
    backend's tokenizer); no timing is a claim here."""
    rules = tuple(r if r != "paper" else True for r in preset.seas_rules)
    llm = [(b, False) for b in sorted(preset.batch_sizes) if b > 1]
    llm += [(b, e) for b in sorted(preset.seas_batch_sizes, reverse=True) for e in rules]
    llm += [(1, False)]
    jobs = {f"seed{s}/" + seas_prefix(b, e): partial(llm_unit, preset, data_dir, s, b, e, device)
            for b, e in llm for s in seeds}  # fmt: skip
    jobs |= {f"seed{s}/sim": partial(sim_unit, preset, s) for s in seeds}
    if "official" in preset.seas_rules:
        jobs |= {f"seed{s}/sim/seas-official": partial(sim_official_unit, preset, s)
                 for s in seeds}  # fmt: skip
    return jobs


# ------------------------------------------------------------------ run


def run(ctx: RunContext) -> Report:
    preset = ctx.preset
    if preset.task in PAPER_TASKS:
        load_paper_task(ctx.data_dir, preset.task, 1)  # MissingDataError before any work
    if preset.llm.startswith("openai:") and not ctx.resume:
        # a server is probed here, so a wrong URL, key or model stops the run at once (exit 2)
        # rather than inside a worker; the units open their own client
        open_answerer(preset.llm, preset.task, preset.threshold, ctx.device)
    jobs = unit_jobs(preset, ctx.data_dir, ctx.seeds, ctx.device)
    try:
        units = ctx.cached_parallel(jobs, desc="batch-size x seed units")
    except LLMError as e:
        raise UsageError(f"LLM backend failed: {e}") from None
    metrics, positions, per_point = Metrics(), {}, {}
    rules = tuple(r if r != "paper" else True for r in preset.seas_rules)
    for seed in ctx.seeds:
        sv, sx = units[f"seed{seed}/sim"]
        metrics.update(seed, sv)
        positions.setdefault("sim", []).append(sx[f"bs{preset.sim_batch_size}"]["position_acc"])
        if "official" in preset.seas_rules:
            metrics.update(seed, units[f"seed{seed}/sim/seas-official"])
        for b in preset.batch_sizes:
            for seas in (False, *rules) if b in preset.seas_batch_sizes else (False,):
                prefix = seas_prefix(b, seas)
                lv, lx = units[f"seed{seed}/{prefix}"]
                ctx.log.info("seed %d %s (%s): %s", seed, prefix, preset.llm,
                             {m: round(x, 3) for m, x in lv.items() if m.endswith("acc")})  # fmt: skip
                metrics.update(seed, lv)
                per_point.setdefault(prefix, {})[seed] = lx
                if not seas:
                    positions.setdefault(f"llm/bs{b}", []).append(lx["position_acc"])
                    # how far naive batching moved from its no-op: labels it shares with the
                    # position-only answerer
                    pred = lx["pred"]
                    metrics.add(f"llm/bs{b}/v1/same_as_position_only", seed,
                                float(np.mean([x == y for x, y in
                                               zip(pred["v1"], pred["position_only"])])))  # fmt: skip
                else:  # the decisions SEAS changed against its no-op, 1 vote at this size
                    got, naive = lx["pred"]["seas"], per_point[f"llm/bs{b}"][seed]["pred"]["v1"]
                    metrics.add(f"{prefix}/changed_vs_v1", seed,
                                float(np.mean([x != y for x, y in zip(got, naive)])))  # fmt: skip
    ctx.save_figure(plot_accuracy_vs_tokens(metrics, preset), "accuracy_vs_tokens.png")
    ctx.save_figure(plot_position(positions), "accuracy_by_position.png")
    extra = {"llm": preset.llm, "task": preset.task,
             "position_accuracy": {k: np.mean(v, axis=0).tolist() for k, v in positions.items()},
             "predicted_bpe": [predicted_accuracy(preset.bias, preset.sim_items,
                                                  preset.sim_batch_size, r)
                               for r in range(1, preset.sim_votes + 1)]}  # fmt: skip
    # per-point correctness by arm: "llm/bs16/v1", "llm/bs16/position_only", "llm/bs16/seas"
    items = {prefix if arm == "seas" else f"{prefix}/{arm}":
             {seed: x["correct"][arm] for seed, x in by_seed.items()}
             for prefix, by_seed in per_point.items() for arm in next(iter(by_seed.values()))["correct"]}  # fmt: skip
    return Report(metrics, make_claims(metrics, preset, items), make_checks(metrics, preset),
                  extra, premises=make_premises(metrics, preset, items))  # fmt: skip


app = ExperimentApp.from_module(__name__)
main = app.main

if __name__ == "__main__":
    raise SystemExit(main())
