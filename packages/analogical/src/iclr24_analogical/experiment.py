"""The reproduction: PAPER, the presets, the measurements and ``run``; the command line is
``app`` at the bottom (``iclr24-analogical reproduce --help``).

Per seed, every unit independent of the others and handed to ``ctx.cached_parallel`` (issue
52: a process pool here, Ray tasks with ``--executor ray``); each unit rebuilds its seed's
problems from the preset (and ``--data-dir``), and loads the LLM and the sentence embedder
itself, once per process (``functools.lru_cache``), never from ``ctx``:

- ``seed<k>/scripted``: every method with a scripted capable model (checks the machinery:
  prompts, the three extraction rules, code extraction and the runner);
- ``seed<k>/retrieval``: how often the retriever's top-K exemplars share the test problem's
  family, per test problem (a premise of the retrieved-CoT baseline);
- ``seed<k>/<method>``: the ``--llm`` model on the same test problems with every method,
  greedy, one token budget for all (the claims; each problem's record, with its correctness,
  gives the item-level SE);
- ``seed<k>/code-<method>``: the toy programming problems, 0-shot vs self-generated knowledge +
  exemplars, run in the sandbox (Acc@1, Acc@k).

No timing is a claim here (the cost claim counts output tokens), so nothing stays serial.
"""

from __future__ import annotations

import argparse
import functools
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from iclr24_common import ExperimentApp, Metrics, Paper, Report, RunContext, UsageError
from iclr24_common import preset_option as option
from iclr24_common.logs import get_logger
from iclr24_llm import SPEC_HELP, LLMError, open_llm

from .baselines import K_FEW_SHOT, MiniLMEmbedder, Retriever
from .claims import make_checks, make_claims, make_premises
from .coderun import run_program
from .data import CODE_PROBLEMS, FAMILIES, ONE_STEP, PAPER_TASKS, TWO_STEP, load_task, make_split
from .figures import plot_methods
from .methods import CODE_METHODS, MATH_METHODS, MathContext, run_code_method, run_method
from .scripted import scripted_solver

FAMILY_SETS = {"one_step": ONE_STEP, "two_step": TWO_STEP, "all": tuple(FAMILIES)}

PAPER = Paper(
    title="Large Language Models as Analogical Reasoners",
    authors="Yasunaga, Chen, Li, Pasupat, Leskovec, Liang, Chi & Zhou",
    arxiv="2310.01714",
    code=None,  # no official code is public
)
USES_TORCH = True  # the local model and the sentence embedder run on torch


@dataclass(frozen=True)
class Preset:
    """One reproduction preset; defaults are the `default` preset's (paper values cited)."""

    seeds: tuple[int, ...] = (0, 1, 2)
    """Seeds: each draws its own test problems, training pool and fixed few-shot set."""
    llm: str = "local"
    """LLM spec (--llm): local = SmolLM2-135M-Instruct offline; 'scripted' = the scripted
    capable model only (tests, smoke)."""
    task: str = "generated"
    """generated (word-problem families), or a paper task read from --data-dir: gsm8k, math,
    bbh_<task> (the paper's five BIG-Bench Hard tasks)."""
    families: str = "one_step"
    """Generated problem families: one_step (default: what a 135M model can sometimes solve),
    two_step (GSM8K-like) or all."""
    n_test: int = 8
    """Test problems per seed (paper: the full GSM8K test set, 1319)."""
    n_train_per_family: int = 12
    """Labelled training problems per family (the retrieval pool; GSM8K's train set: 7473)."""
    k_exemplars: int = K_FEW_SHOT
    """K of few-shot and retrieved CoT (paper Sec. 5.3: 5 for GSM8K)."""
    methods: tuple[str, ...] = MATH_METHODS
    """Methods run on the math problems."""
    max_new_tokens: int = 320
    """Decoding budget, the same for every method (paper: not stated; the paper preset: 1024).
    The default's is the largest the run affords on 2 CPU cores at 1 thread (about 20 min):
    the batch of 8 decodes until its longest answer stops, so the rambling methods cost ~0.23 s
    a token a seed each. At 128 tokens 83 % of analogical answers were cut before the solve
    part (issue 39); the cut rate per method is measured (``truncated_rate``) and a claim that
    compares a method with more than 5 % of its answers cut is inconclusive (claims.CUT_MAX)."""
    code_problems: int = 8
    """Toy programming problems per seed (0: none; paper: 50 Codeforces level-A problems): 8,
    each seed its own 8 of the 24 (issue 49: one problem per seed could not show a
    difference)."""
    code_samples: int = 1
    """Programs per problem: 1 = greedy (Acc@1); paper: 10 at temperature 0.7 (Acc@1, Acc@10)."""
    code_temperature: float = 0.7
    """Sampling temperature when code_samples > 1 (paper Sec. 5.1: 0.7)."""
    code_max_new_tokens: int = 320
    """Decoding budget per program: the math budget (was 160, at which every program of the
    first default run was cut, issue 49); the share cut is measured (``code/<method>/
    truncated_rate``) and the code claim rests on it (premise ``within-budget/code_<method>``)."""
    code_seconds: float = 2.0
    """Time limit per test run of a generated program."""
    batch_size: int = 8
    """Sequences per batched generation of the local model."""
    workers: int | None = 2
    """Processes for the units on the local executor (``--workers`` overrides; None: one per
    thread). The smoke took 8.2 s wall at 1 process x 2 threads against 12.1 s at 2 x 1
    (2026-12-05, under the CPU lock: its units are tiny scripted ones, so a second process's
    start and imports cost more than it saves), hence the smoke's 1. The default's units are
    decoding batches of SmolLM2 for minutes each, and its second thread is worth little (the
    serial default took 717 s at 1 thread, 605 s at 2), so two 1-thread processes: 2; its wall
    time is in the README."""

    def __post_init__(self):
        for name in ("n_test", "n_train_per_family", "k_exemplars", "max_new_tokens",
                     "code_samples", "code_max_new_tokens", "batch_size"):  # fmt: skip
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1")
        if self.workers is not None and self.workers < 1:
            raise ValueError("workers must be >= 1 (or None: one per thread)")
        if self.code_problems < 0:
            raise ValueError("code_problems must be >= 0")
        if not self.code_seconds > 0 or not 0 <= self.code_temperature <= 2:
            raise ValueError("code_seconds must be > 0 and code_temperature in [0, 2]")
        if not self.methods or any(m not in MATH_METHODS for m in self.methods):
            raise ValueError(f"methods must be among {', '.join(MATH_METHODS)}")
        if self.task != "generated" and self.task not in PAPER_TASKS[:-1]:
            raise ValueError(f"task must be generated or one of {', '.join(PAPER_TASKS[:-1])}")
        if self.families not in FAMILY_SETS:
            raise ValueError(f"families must be one of {', '.join(FAMILY_SETS)}")
        if not self.llm.strip():
            raise ValueError("llm needs a spec")


PRESETS = {
    # the scripted capable model on a few problems: the whole machinery in seconds
    "smoke": Preset(
        seeds=(0,),
        llm="scripted",
        families="all",
        n_test=12,
        n_train_per_family=6,
        code_problems=3,
        workers=1,
    ),  # fmt: skip
    "default": Preset(),
    # the paper's GSM8K protocol, meant for a capable model through --llm
    "paper": Preset(
        seeds=(0,),
        task="gsm8k",
        n_test=1319,
        max_new_tokens=1024,
        code_problems=0,
        code_samples=10,
        code_max_new_tokens=2048,
    ),  # fmt: skip
}
PAPER_NEEDS_DATA = True


def add_arguments(p: argparse.ArgumentParser) -> None:
    option(p, "--llm", field="llm", help=f"the model. {SPEC_HELP}; 'scripted' for tests")
    option(p, "--task", field="task", help="generated, gsm8k, math or bbh_<task> (--data-dir)")
    option(p, "--n-test", field="n_test", type=int, help="test problems per seed")
    option(p, "--max-new-tokens", field="max_new_tokens", type=int, help="decoding budget")


# ------------------------------------------------------------------ models (per process)


@functools.lru_cache(maxsize=2)
def load_model(spec: str, threads: int, device: str, batch_size: int):
    """The --llm model, opened the one way every package does (``open_llm``: a local model on
    the run's device with the unit's threads and the preset's batch size; a server asked once
    first; any failure one usage line), once per process: the units of a worker share it."""
    local = {} if spec.strip().startswith("openai:") else {"batch_size": batch_size}
    return open_llm(spec, threads=threads, device=device, log=get_logger("analogical"), **local)


@functools.lru_cache(maxsize=2)
def load_embedder(device: str) -> MiniLMEmbedder:
    return MiniLMEmbedder(device=device)


# ------------------------------------------------------------------ measurements


def problems_for(preset: Preset, data_dir, seed: int):
    """(training pool, test problems) of one seed."""
    if preset.task == "generated":
        return make_split(
            preset.n_train_per_family, preset.n_test, seed, FAMILY_SETS[preset.families]
        )
    pool = load_task(data_dir, preset.task, "train") if preset.task in ("gsm8k", "math") else []
    test = load_task(data_dir, preset.task, "test" if preset.task in ("gsm8k", "math") else "")
    rng = np.random.default_rng(seed)
    test = [test[int(i)] for i in rng.permutation(len(test))[: preset.n_test]]
    if not pool and any(m in ("few_shot_cot", "retrieved_cot") for m in preset.methods):
        raise UsageError(f"{preset.task} has no labelled training split here: run it with "
                         "--set methods=zero_shot,zero_shot_cot,analogical,analogical_random")  # fmt: skip
    return pool, test


def code_problems_for(preset: Preset, seed: int):
    """The toy programming problems of one seed: the next ``code_problems`` of the list, in
    turn (seed k starts at k * code_problems), so that the seeds cover different problems."""
    n = len(CODE_PROBLEMS)
    return [
        CODE_PROBLEMS[(seed * preset.code_problems + i) % n]
        for i in range(min(preset.code_problems, n))
    ]


def analogical_task(task: str) -> str:
    return {"generated": "gsm8k", "gsm8k": "gsm8k", "math": "math"}.get(task, "bbh")


@functools.lru_cache(maxsize=4)
def seed_inputs(preset: Preset, data_dir: Path | None, seed: int, device: str):
    """(pool, test problems, retriever or None) of one seed, rebuilt in the unit's process
    (the problems from the preset and the seed; the pool's embeddings by the process's
    embedder), and cached there for the seed's other units."""
    pool, test = problems_for(preset, data_dir, seed)
    retriever = None
    if "retrieved_cot" in preset.methods and pool:
        embed = load_embedder(device)
        retriever = Retriever(pool, embed, embed([x.question for x in pool]))
    return pool, test, retriever


def scripted_unit(preset: Preset, data_dir, seed: int, device: str) -> dict[str, float]:
    """Every method and the code path with the scripted capable model (a check)."""
    pool, test, retriever = seed_inputs(preset, data_dir, seed, device)
    code = code_problems_for(preset, seed)
    llm = scripted_solver(list(test) + list(pool), code)
    mc = MathContext(pool, retriever, seed, preset.k_exemplars, analogical_task(preset.task))
    out = {}
    for method in preset.methods:
        summary, _ = run_method(llm, method, test, mc, max_new_tokens=preset.max_new_tokens)
        out[f"scripted/{method}/acc"] = summary["acc"]
    if code:
        for method in CODE_METHODS:
            s, _ = run_code_method(llm, method, code, samples=1, k=1, temperature=0.0,
                                   max_new_tokens=preset.code_max_new_tokens, seed=seed,
                                   seconds=preset.code_seconds)  # fmt: skip
            out[f"scripted/code_{method}/acc1"] = s["acc1"]
    # the runner's own paths: references pass, a wrong and an endless program do not
    refs = [run_program(p.reference, list(p.tests)).ok for p in code]
    out["runner/reference_pass_rate"] = float(np.mean(refs)) if refs else 1.0
    out["runner/wrong_detected"] = float(
        run_program("print(0)", [("", "1\n")]).status == "wrong_answer"
    )
    out["runner/timeout_detected"] = float(
        run_program("while True:\n    pass", [("", "")], seconds=0.5).status == "timeout"
    )
    return out


def retrieval_unit(preset: Preset, data_dir, seed: int, device: str
                   ) -> tuple[dict[str, float], list[float]]:  # fmt: skip
    """Share of retrieved exemplars from the test problem's own family: the mean, and per test
    problem (the item-level SE of the premise)."""
    _, test, retriever = seed_inputs(preset, data_dir, seed, device)
    top = retriever.top_k([p.question for p in test], preset.k_exemplars)
    same = [float(np.mean([e.family == p.family for e in ex])) for p, ex in zip(test, top)]
    return {"retrieval/same_family_rate": float(np.mean(same))}, same


def _model(preset: Preset, pool, test, seed: int, threads: int, device: str):
    if preset.llm == "scripted":  # the smoke run: the scripted model answers
        return scripted_solver(list(test) + list(pool), code_problems_for(preset, seed))
    return load_model(preset.llm, threads, device, preset.batch_size)


def method_unit(preset: Preset, data_dir, seed: int, method: str, threads: int, device: str
                ) -> tuple[dict, list, str]:  # fmt: skip
    """One method on one seed's test problems: (metrics, per-problem records, model name)."""
    pool, test, retriever = seed_inputs(preset, data_dir, seed, device)
    llm = _model(preset, pool, test, seed, threads, device)
    mc = MathContext(pool, retriever, seed, preset.k_exemplars, analogical_task(preset.task))
    t0 = time.perf_counter()
    summary, records = run_method(llm, method, test, mc, max_new_tokens=preset.max_new_tokens)
    summary["seconds"] = time.perf_counter() - t0
    get_logger("analogical").info(
        "seed %d %-17s acc %.3f extracted %.2f after-marker %.2f boxed/answer-is %.2f "
        "tokens %.0f cut %.2f (%.0f s)", seed, method, summary["acc"],
        summary["extraction_rate"], summary["marker_rate"], summary["format_rate"],
        summary["output_tokens"], summary["truncated_rate"], summary["seconds"])  # fmt: skip
    return {f"llm/{method}/{k}": v for k, v in summary.items()}, records, llm.name


def code_unit(preset: Preset, data_dir, seed: int, method: str, threads: int, device: str
              ) -> tuple[dict, list]:  # fmt: skip
    """One code method on one seed's toy problems: (metrics, per-problem records)."""
    llm = _model(preset, (), (), seed, threads, device)  # the scripted one knows the programs
    t0 = time.perf_counter()
    summary, records = run_code_method(
        llm, method, code_problems_for(preset, seed), samples=preset.code_samples,
        k=preset.code_samples, temperature=preset.code_temperature,
        max_new_tokens=preset.code_max_new_tokens, seed=seed, seconds=preset.code_seconds)  # fmt: skip
    summary["seconds"] = time.perf_counter() - t0
    get_logger("analogical").info(
        "seed %d code %-10s Acc@1 %.2f Acc@%d %.2f cut %.2f (%.0f s)", seed, method,
        summary["acc1"], preset.code_samples, summary["acck"], summary["truncated_rate"],
        summary["seconds"])  # fmt: skip
    return {f"code/{method}/{k}": v for k, v in summary.items()}, records


def check_data(preset: Preset, data_dir) -> None:
    """Stop at once when the paper's data is missing (before any model is loaded)."""
    if preset.task != "generated":
        problems_for(preset, data_dir, preset.seeds[0])


# the slow units first (the rambling methods decode to the budget), so that the workers end
# together; the scripted and retrieval checks fill in at the end
ORDER = ("analogical", "analogical_random", "code-analogical", "zero_shot_cot", "zero_shot",
         "code-zero_shot", "few_shot_cot", "retrieved_cot")  # fmt: skip


def jobs_for(preset: Preset, data_dir, seeds, threads: int, device: str) -> dict:
    """Every independent unit of the run, ``{key: picklable job}``, the slowest first."""
    P = functools.partial
    jobs: dict = {}
    names = [x for x in ORDER if x in preset.methods or (
        x.startswith("code-") and preset.code_problems)]  # fmt: skip
    for name in names:
        for seed in seeds:
            if name.startswith("code-"):
                jobs[f"seed{seed}/{name}"] = P(
                    code_unit, preset, data_dir, seed, name.removeprefix("code-"), threads, device
                )
            else:
                jobs[f"seed{seed}/{name}"] = P(
                    method_unit, preset, data_dir, seed, name, threads, device
                )
    for seed in seeds:
        jobs[f"seed{seed}/scripted"] = P(scripted_unit, preset, data_dir, seed, device)
        if "retrieved_cot" in preset.methods and preset.task == "generated":
            jobs[f"seed{seed}/retrieval"] = P(retrieval_unit, preset, data_dir, seed, device)
    return jobs


def run(ctx: RunContext) -> Report:
    preset = ctx.preset
    check_data(preset, ctx.data_dir)
    if preset.llm.strip().startswith("openai:"):  # a server is asked once, before the units
        load_model(preset.llm, ctx.unit_threads, ctx.device, preset.batch_size)
    jobs = jobs_for(preset, ctx.data_dir, ctx.seeds, ctx.unit_threads, ctx.device)
    try:
        done = ctx.cached_parallel(jobs)
    except LLMError as e:
        raise UsageError(f"LLM backend failed: {e}") from None
    metrics, samples, items, asked, llm_name = Metrics(), {}, {}, {}, preset.llm
    for seed in ctx.seeds:  # in the serial run's order (the metrics' and files' order)
        if f"seed{seed}/retrieval" in done:
            values, same = done[f"seed{seed}/retrieval"]
            metrics.update(seed, values)
            items.setdefault("retrieval", {})[seed] = same
        metrics.update(seed, done[f"seed{seed}/scripted"])
        for method in preset.methods:
            values, records, llm_name = done[f"seed{seed}/{method}"]
            metrics.update(seed, values)
            samples[f"seed{seed}/{method}"] = records
            # each problem's correctness, in one order for every seed (by question)
            ranked = sorted(records, key=lambda r: r["question"])
            items.setdefault(method, {})[seed] = [float(r["correct"]) for r in ranked]
            asked[seed] = [r["question"] for r in ranked]
        for method in CODE_METHODS if preset.code_problems else ():
            values, records = done[f"seed{seed}/code-{method}"]
            metrics.update(seed, values)
            samples[f"seed{seed}/code-{method}"] = records
            # each problem's Acc@1, in the seed's problem order (the code claim's item SE)
            items.setdefault(f"code_{method}", {})[seed] = [float(r["acc1"]) for r in records]
    ctx.save_partial(metrics)
    if samples:
        ctx.save_json("completions.json", samples)
        ctx.save_figure(plot_methods(metrics, preset), "methods.png")
    extra = {"llm": preset.llm, "llm_name": llm_name}
    # every seed scored on the same problems (a paper task's whole test set): a shared test set
    shared = len(ctx.seeds) > 1 and all(q == asked[ctx.seeds[0]] for q in asked.values())
    return Report(metrics, make_claims(metrics, preset, items, shared),
                  make_checks(metrics, preset), extra,
                  premises=make_premises(metrics, preset, items))  # fmt: skip


app = ExperimentApp.from_module(__name__)
main = app.main

if __name__ == "__main__":
    raise SystemExit(main())
