"""The paper's claims, the premises they rest on and the code's checks, computed from the
measured metrics.

Paper numbers (arXiv 2310.01714, ICLR 2024): the GSM8K accuracy of analogical prompting with
GPT-3.5-turbo, 77.8 (Table 1, as quoted in the issue and by public benchmark listings); the
tables' other cells were not found in the text reachable from here (searched: the paper's
text in public repositories, arxiv-vanity / ar5iv pages); the qualitative findings quoted below
are from the paper's Sec. 6.3-6.4 and Sec. 8 text.

Claims are tests on paired per-seed values (:mod:`iclr24_common.verdicts`): accuracy claims
need a gap of more than one accuracy point and more than 2 SE, the SE the larger of the seeds'
and the problems' (``items=``, each problem's correctness). What each verdict can tell
(CONTRIBUTING.md): every claim names its ``regime`` (the paper states most of its effects for
GPT-3.5-turbo, GPT-4, PaLM 2-L and text-davinci-003, and says it works with larger models; it
states "labelled exemplars win" for its smaller models, the one claim our 135M model is in the
regime of). Premises, not claims of the paper: every compared method keeps fewer than
``CUT_MAX`` of its answers cut at the token budget (issue 39: a cut analogical answer usually
ends inside its self-generated exemplars, so its accuracy measures the budget), and the
retriever finds the test problem's family (the retrieved-CoT baseline is what the paper's is).
The programs of the code claim keep the same budget rule (``within-budget/code_<method>``,
issue 49), the analogical program is read only after its solution heading (as the math
answers after the solve marker) and the claim's SE covers the problems (8 per seed).
Self-generated exemplars from a random domain (biology) are ``beats-zero-shot``'s no-op arm:
the relevance the paper credits, switched off at the same budget.
"""

from __future__ import annotations

from dataclasses import replace

from iclr24_common import Check, Claim, Metrics, Premise, Source, all_of, superiority, threshold
from iclr24_common.verdicts import Verdict

from .data import FAMILIES, ONE_STEP, TWO_STEP

ACC_POINT = 0.01
"""One accuracy point: the unit in which the paper reports accuracy (Table 1: 77.8); the
margin of every 'more accurate' claim (a tie never passes)."""
ACC_SOURCE = Source.ours("one accuracy point, the unit in which the paper reports accuracy "
                         "(Table 1: 77.8): a tie never passes", commit="28fce39")  # fmt: skip
CUT_MAX = 0.05
"""Share of a method's answers cut at the token budget (finish_reason "length") below which the
method can be compared: issue 39's bound ("fewer than 5 % of any method's answers cut"). A
cut analogical answer usually ends inside its self-generated exemplars, before the solve part,
so its accuracy measures the budget, not the method."""
CUT_SOURCE = Source.ours("issue 39's bound: fewer than 5 % of any method's answers cut at the "
                         "token budget", commit="53b3c54")  # fmt: skip
COST_RATIO = 1.5
"""'costs more output tokens': the claim's own figure since the first run (the paper gives no
ratio, Sec. 8); five self-generated exemplars before the answer."""
COST_SOURCE = Source.ours("the claim's figure since the first run; the paper gives no ratio "
                          "(Sec. 8), five self-generated exemplars come before the answer",
                          commit="a0daed0")  # fmt: skip
SAME_FAMILY = 0.8
"""Share of retrieved exemplars from the test problem's own family that makes the retriever
'find' them: the criterion since the first run (chance: 1 / number of families)."""
FAMILY_SOURCE = Source.ours("the criterion since the first run: most of the top-K from the "
                            "problem's own family (chance: 1 / number of families)",
                            commit="a0daed0")  # fmt: skip
PAPER_RETRIEVAL = ("Sec. 5.3 / Table 4: few-shot retrieved CoT takes the top-K training "
                   "exemplars by Sentence-BERT similarity; no retrieval precision reported")  # fmt: skip
PAPER_COST = ("Sec. 8 (limitations): analogical prompting generates more tokens than 0-shot "
              "and 0-shot CoT (exemplars count as output); no ratio given")  # fmt: skip
PAPER_SCALE = ("Table 4 / Sec. 6.3-6.4 (GSM8K, text-curie-001 ... text-davinci-003): with "
               "smaller LLMs few-shot (retrieved) CoT with labelled exemplars beats ours; with "
               "text-davinci-002/003 ours wins; numbers not found in the reachable text")  # fmt: skip
PAPER_ZERO = ("Table 4 / Sec. 6.4: ours surpasses vanilla 0-shot and 0-shot CoT at every scale "
              "(text-curie-001 to text-davinci-003)")  # fmt: skip
PAPER_LARGE = "Table 1: GSM8K, GPT-3.5-turbo: ours 77.8 (0-shot CoT and 5-shot CoT lower)"
PAPER_CODE = ("Table 2 (Codeforces, 50 level-A problems): ours (knowledge + exemplars) above "
              "0-shot with GPT-3.5-turbo and GPT-4; GPT-3.5-turbo 15% Acc@1 with ours (Sec. 6.1)")  # fmt: skip
PAPER_MODELS = ("gpt-3.5", "gpt-4", "palm", "text-davinci")
"""The paper's large LLMs (Sec. 5: GPT-3.5-turbo, GPT-4, PaLM 2-L; Table 4: text-davinci-003)."""
PAPER_LARGE_NEEDS = ("GPT-3.5-turbo, GPT-4 or PaLM 2-L on the full GSM8K test set (1319 "
                     "problems), greedy, answers written to the end (paper Table 1, Sec. 5; no "
                     "official code)")  # fmt: skip


def small_model(preset) -> bool:
    """The offline 135M model is the 'small LLM' regime of Table 4."""
    return preset.llm == "local"


def model_name(preset) -> str:
    return {"local": "SmolLM2-135M-Instruct", "scripted": "a scripted model"}.get(preset.llm,
                                                                                 preset.llm)  # fmt: skip


def paper_class(preset) -> bool:
    """Whether --llm names one of the paper's large LLMs (served over the OpenAI protocol)."""
    spec = preset.llm.strip()
    name = spec.removeprefix("openai:").split("@")[0].lower()
    return spec.startswith("openai:") and any(m in name for m in PAPER_MODELS)


def _ours(preset) -> str:
    where = ("generated one-step word problems" if preset.task == "generated"
             else preset.task)  # fmt: skip
    return (f"ours {model_name(preset)} on {where}, {preset.n_test} per seed x "
            f"{len(preset.seeds)} seeds, {preset.max_new_tokens} new tokens")  # fmt: skip


def regime(preset, what: str) -> tuple[str, str]:
    """(``paper`` or ``below``, what the paper's effect needs) of one claim: ``small`` (labelled
    exemplars win with small models: the paper's regime for our 135M model), ``large`` (the
    paper's large-model effects on GSM8K), ``code``."""
    if what == "small":
        return ("paper", "") if small_model(preset) else ("below", "a small LLM (Table 4)")
    if what == "code":
        needs = ("GPT-3.5-turbo-16k or GPT-4 on 50 Codeforces level-A problems, 10 programs at "
                 "temperature 0.7 each (paper Table 2, Sec. 5.1); ours "
                 f"{model_name(preset)} on {preset.code_problems} toy problem(s) per seed, "
                 f"{preset.code_samples} program(s) of up to {preset.code_max_new_tokens} "
                 "tokens")  # fmt: skip
        return ("paper", "") if paper_class(preset) and preset.code_problems >= 50 else (
            "below", needs)  # fmt: skip
    if paper_class(preset) and preset.task == "gsm8k" and preset.n_test >= 1319:
        return "paper", ""
    return "below", f"{PAPER_LARGE_NEEDS}; {_ours(preset)}"


def _acc(m: Metrics, method: str) -> str:
    marker = (f", after the solve marker {m.mean(f'llm/{method}/marker_rate'):.2f}"
              if method.startswith("analogical") else "")  # fmt: skip
    return (
        f"{method} {m.fmt(f'llm/{method}/acc', 3)} (extracted "
        f"{m.mean(f'llm/{method}/extraction_rate'):.2f}{marker}, cut "
        f"{m.mean(f'llm/{method}/truncated_rate'):.2f})"
    )


def cut_rates(m: Metrics, methods) -> dict[str, float]:
    """Each method's mean share of answers cut at the token budget."""
    return {x: m.mean(f"llm/{x}/truncated_rate") for x in methods}


def cut_guard(v: Verdict, m: Metrics, methods, *, lower_bound_ok: tuple[str, ...] = ()) -> Verdict:
    """``v``, or ``inconclusive`` when a compared method has ``CUT_MAX`` or more of its answers
    cut at the budget (the reason names them). ``lower_bound_ok``: methods whose cut only makes
    the measured quantity a lower bound, so that a ``holds`` stands (the cost claim's
    numerator; the other methods' cuts are premises, ``within-budget/<method>``)."""
    over = {x: r for x, r in cut_rates(m, methods).items() if r >= CUT_MAX}
    if not over or (v.holds and set(over) <= set(lower_bound_ok)):
        return v
    why = ("cut at the token budget: " + ", ".join(f"{x} {r:.2f}" for x, r in over.items())
           + f" of answers (>= {CUT_MAX:g})")  # fmt: skip
    return replace(v, outcome="inconclusive", reason="; ".join(x for x in (why, v.reason) if x))


def _scored(items: dict | None, arm: str) -> bool:
    """Whether ``items`` has ``arm``'s per-problem scores on >= 2 problems per seed (the
    item-level SE needs two; a one-problem run is judged on its seeds)."""
    return bool(items) and arm in items and all(len(r) >= 2 for r in items[arm].values())


def _budget(method: str) -> str:
    return f"within-budget/{method}"


def _acc_test(m: Metrics, a: str, b: str, items: dict | None, control: str | None = None,
              control_name: str = "") -> Verdict:  # fmt: skip
    """``a`` more accurate than ``b`` by more than one point and 2 SE (over seeds and problems
    where ``items`` has each method's per-problem correctness); ``control`` in ``a``'s place."""
    arms = (a, b) + ((control,) if control else ())
    per = tuple(items[x] for x in arms) if all(_scored(items, x) for x in arms) else None
    ctl = {} if control is None else {"control": m.by_seed(f"llm/{control}/acc"),
                                      "control_name": control_name}  # fmt: skip
    return superiority(m.by_seed(f"llm/{a}/acc"), m.by_seed(f"llm/{b}/acc"), margin=ACC_POINT,
                       source=ACC_SOURCE, items=per, **ctl)  # fmt: skip


def make_premises(m: Metrics, preset, items: dict | None = None) -> list[Premise]:
    """What the claims rest on: each compared method's answers fit the token budget, and the
    retriever finds the test problem's family (``items["retrieval"]``: per seed, each test
    problem's share of same-family exemplars)."""
    methods = [x for x in preset.methods if f"llm/{x}/acc" in m]
    out = [Premise(
        id=_budget(x),
        statement=f"{x}'s answers fit the token budget (fewer than {CUT_MAX:g} of them cut)",
        paper="none: a budget rule of ours (issue 39); the paper states no budget",
        measured=f"{m.mean(f'llm/{x}/truncated_rate'):.3f} of {x}'s answers cut at "
        f"{preset.max_new_tokens} tokens (per seed "
        f"{', '.join(f'{r:.2f}' for r in m.values(f'llm/{x}/truncated_rate'))})",
        criterion="the share of answers cut over every seed (1 value), below the bound",
        test=threshold([m.mean(f"llm/{x}/truncated_rate")], threshold=CUT_MAX,
                       higher_is_better=False, source=CUT_SOURCE),
    ) for x in methods]  # fmt: skip
    # the code path: the same rule for the programs (issue 49: every program of the first
    # default run stopped at the 160-token budget, and a cut program is not a wrong one)
    for x in (x for x in ("zero_shot", "analogical") if f"code/{x}/truncated_rate" in m):
        rates = m.values(f"code/{x}/truncated_rate")
        out.append(Premise(
            id=_budget(f"code_{x}"),
            statement=f"code {x}'s programs fit the token budget (fewer than {CUT_MAX:g} of "
            "them cut)",
            paper="none: a budget rule of ours (issue 39, for the programs issue 49); the paper "
            "states no budget",
            measured=f"{m.mean(f'code/{x}/truncated_rate'):.3f} of code {x}'s programs cut at "
            f"{preset.code_max_new_tokens} tokens (per seed {', '.join(f'{r:.2f}' for r in rates)})",
            criterion="the share of programs cut over every seed (1 value), below the bound",
            test=threshold([m.mean(f"code/{x}/truncated_rate")], threshold=CUT_MAX,
                           higher_is_better=False, source=CUT_SOURCE),
        ))  # fmt: skip
    if "retrieval/same_family_rate" in m:
        n_fam = len(preset_families(preset))
        per = items["retrieval"] if _scored(items, "retrieval") else None
        out.append(Premise(
            id="retrieval-same-family",
            statement="all-MiniLM-L6-v2 retrieval finds labelled exemplars of the test "
            "problem's own template family (the retrieved-CoT baseline retrieves as the "
            "paper's does)",
            paper=PAPER_RETRIEVAL,
            measured=f"{m.mean('retrieval/same_family_rate'):.2f} of the top-{preset.k_exemplars} "
            f"exemplars share the family ({m.fmt('retrieval/same_family_rate', 3)}; chance "
            f"1/{n_fam} = {1 / n_fam:.2f})",
            criterion=f"the share of retrieved exemplars from the test problem's family, above "
            f"{SAME_FAMILY:g} by more than 2 SE over seeds and test problems",
            test=threshold(m.by_seed("retrieval/same_family_rate"), threshold=SAME_FAMILY,
                           source=FAMILY_SOURCE, items=per),
        ))  # fmt: skip
    return out


def make_claims(m: Metrics, preset, items: dict | None = None, shared: bool = False) -> list[Claim]:
    """The paper's claims. ``items``: per method, per seed, each test problem's correctness
    (1.0 / 0.0, in one problem order across seeds); ``shared``: every seed was scored on the
    same problems (then ``items`` is required)."""
    methods = [x for x in preset.methods if f"llm/{x}/acc" in m]
    if "analogical" not in methods:
        return []
    if shared and not all(_scored(items, x) for x in methods):
        raise ValueError("a shared test set needs each method's per-problem scores (items=)")
    test_set = "shared" if shared else "per-seed"
    retrieval = ("retrieval-same-family",) if "retrieval/same_family_rate" in m else ()
    claims = []
    n = int(m.mean("llm/analogical/n"))
    table = "; ".join(_acc(m, x) for x in methods)
    where = f"{preset.task} problems, {n} per seed x {len(preset.seeds)} seeds, {preset.llm}"
    large, large_needs = regime(preset, "large")
    if "zero_shot_cot" in methods:
        ana, cot = (
            m.by_seed("llm/analogical/output_tokens"),
            m.by_seed("llm/zero_shot_cot/output_tokens"),
        )
        ratio = {
            s: (ana[s] / cot[s] if cot[s] > 0 else float("inf"))
            for s in sorted(set(ana) & set(cot))
        }
        mean_ratio = m.mean("llm/analogical/output_tokens") / max(
            m.mean("llm/zero_shot_cot/output_tokens"), 1e-12
        )
        claims.append(Claim(
            id="cost-output-tokens",
            statement="Analogical prompting costs more output tokens than 0-shot CoT: at least "
            f"{COST_RATIO:g}x its mean output tokens",
            paper=PAPER_COST,
            measured=f"{where}: mean output tokens analogical {m.fmt('llm/analogical/output_tokens', 4)} "
            f"vs 0-shot CoT {m.fmt('llm/zero_shot_cot/output_tokens', 4)} (ratio {mean_ratio:.2f}); "
            f"cut at the budget of {preset.max_new_tokens}: analogical "
            f"{m.mean('llm/analogical/truncated_rate'):.2f}, 0-shot CoT "
            f"{m.mean('llm/zero_shot_cot/truncated_rate'):.2f} of answers",
            criterion="per-seed ratio of analogical's mean output tokens to 0-shot CoT's, above "
            f"{COST_RATIO:g}; rests on 0-shot CoT's answers fitting the budget, and is "
            f"inconclusive when {CUT_MAX:g} or more of analogical's are cut, unless it holds (a "
            "cut analogical answer only lowers the ratio, so a pass stands)",
            test=cut_guard(threshold(ratio, threshold=COST_RATIO, source=COST_SOURCE), m,
                           ("analogical",), lower_bound_ok=("analogical",)),
            regime=large, needs=large_needs, test_set="per-seed",
            rests_on=(_budget("zero_shot_cot"),),
        ))  # fmt: skip
    labelled = [x for x in ("few_shot_cot", "retrieved_cot") if x in methods]
    if labelled and small_model(preset):
        best = max(labelled, key=lambda x: m.mean(f"llm/{x}/acc"))
        gap = m.gap(f"llm/{best}/acc", "llm/analogical/acc")
        reg, needs = regime(preset, "small")
        claims.append(Claim(
            id="small-model-labelled-win",
            statement="With a small model, labelled exemplars (the stronger of few-shot CoT and "
            "few-shot retrieved CoT) are more accurate than self-generated exemplars",
            paper=PAPER_SCALE,
            measured=f"{where}: {table}; {best} - analogical {gap}",
            criterion=f"accuracy of {best} (the stronger labelled method) vs analogical's, "
            "margin 1 accuracy point",
            test=_acc_test(m, best, "analogical", items),
            regime=reg, needs=needs, test_set=test_set,
            rests_on=(*(_budget(x) for x in (*labelled, "analogical")),
                      *(retrieval if "retrieved_cot" in labelled else ())),
        ))  # fmt: skip
    elif labelled or "zero_shot_cot" in methods:
        rivals = [x for x in ("zero_shot_cot", *labelled) if x in methods]
        gaps = {x: m.gap("llm/analogical/acc", f"llm/{x}/acc") for x in rivals}
        claims.append(Claim(
            id="capable-model-analogical-wins",
            statement="With a capable model, analogical prompting is more accurate than 0-shot "
            "CoT and few-shot CoT",
            paper=PAPER_LARGE,
            measured=f"{where}: {table}; analogical - " + ", ".join(f"{x} {g}" for x, g in gaps.items()),
            criterion="all of: analogical's accuracy vs each rival's (" + ", ".join(rivals)
            + "), paired gap > 1 accuracy point and > 2 SE",
            test=all_of(*(_acc_test(m, "analogical", x, items) for x in rivals)),
            regime=large, needs=large_needs, test_set=test_set,
            rests_on=(*(_budget(x) for x in ("analogical", *rivals)),
                      *(retrieval if "retrieved_cot" in rivals else ())),
        ))  # fmt: skip
    zero = [x for x in ("zero_shot", "zero_shot_cot") if x in methods]
    if zero:
        best = max(zero, key=lambda x: m.mean(f"llm/{x}/acc"))
        gap = m.gap("llm/analogical/acc", f"llm/{best}/acc")
        rnd = "analogical_random" if "analogical_random" in methods else None
        relevance = (f"; random-domain exemplars {m.fmt('llm/analogical_random/acc', 3)}, "
                     f"analogical - them {m.gap('llm/analogical/acc', 'llm/analogical_random/acc')}"
                     if rnd else "")  # fmt: skip
        claims.append(Claim(
            id="beats-zero-shot",
            statement="Analogical prompting is more accurate than vanilla 0-shot and 0-shot CoT "
            "(at every model scale)" + (", where self-generated exemplars from a random domain "
                                        "(relevance switched off) are not" if rnd else ""),
            paper=PAPER_ZERO,
            measured=f"{where}: {table}; analogical - {best} (the stronger) {gap}{relevance}",
            criterion=f"analogical's accuracy vs {best}'s (the stronger of the two), margin 1 "
            "accuracy point"
            + (", with random-domain self-generated exemplars through the same test" if rnd
               else ""),
            test=_acc_test(m, "analogical", best, items, rnd,
                           "self-generated exemplars from a random domain (biology)"),
            regime=large, needs=f"{large_needs} (the paper: every scale from text-curie-001 to "
            "text-davinci-003, Table 4)" if large == "below" else "",
            test_set=test_set,
            rests_on=tuple(_budget(x) for x in ("analogical", best, *([rnd] if rnd else []))),
            moved=f"the analogical answers reached the solve part in "
            f"{m.mean('llm/analogical/marker_rate'):.2f} of problems, the random-domain ones in "
            f"{m.mean('llm/analogical_random/marker_rate'):.2f}" if rnd else "",
        ))  # fmt: skip
    if "code/analogical/acc1" in m:
        gap = m.gap("code/analogical/acc1", "code/zero_shot/acc1")
        k = preset.code_samples
        reg, needs = regime(preset, "code")
        arms = ("code_analogical", "code_zero_shot")
        per = tuple(items[x] for x in arms) if all(_scored(items, x) for x in arms) else None
        claims.append(Claim(
            id="code-knowledge-exemplars",
            statement="On programming problems, self-generated knowledge + exemplars give a "
            "higher Acc@1 than 0-shot",
            paper=PAPER_CODE,
            measured=f"{int(m.mean('code/analogical/n'))} toy problems per seed x "
            f"{len(preset.seeds)} seeds, {k} program(s) each: Acc@1 analogical "
            f"{m.fmt('code/analogical/acc1', 3)} vs 0-shot {m.fmt('code/zero_shot/acc1', 3)} "
            f"(Acc@{k} {m.mean('code/analogical/acck'):.2f} vs "
            f"{m.mean('code/zero_shot/acck'):.2f}); not extracted: analogical "
            f"{m.mean('code/analogical/no_code_rate'):.2f} (of which without its solution "
            f"heading {m.mean('code/analogical/no_marker_rate'):.2f}), 0-shot "
            f"{m.mean('code/zero_shot/no_code_rate'):.2f}; cut at the budget of "
            f"{preset.code_max_new_tokens}: analogical "
            f"{m.mean('code/analogical/truncated_rate'):.2f}, 0-shot "
            f"{m.mean('code/zero_shot/truncated_rate'):.2f} of programs; gap {gap}",
            criterion="analogical's Acc@1 vs 0-shot's, margin 1 accuracy point (the analogical "
            "program read only after its solution heading); rests on both methods' programs "
            "fitting the token budget",
            test=superiority(m.by_seed("code/analogical/acc1"), m.by_seed("code/zero_shot/acc1"),
                             margin=ACC_POINT, source=ACC_SOURCE, items=per),
            regime=reg, needs=needs, test_set="per-seed",
            rests_on=(_budget("code_analogical"), _budget("code_zero_shot")),
        ))  # fmt: skip
    return claims


def preset_families(preset) -> tuple[str, ...]:
    """The generated families the preset draws from (chance of a same-family exemplar is one
    over their number)."""
    return {"one_step": ONE_STEP, "two_step": TWO_STEP}.get(preset.families, tuple(FAMILIES))


def make_checks(m: Metrics, preset) -> list[Check]:
    scripted = [n for n in m.names() if n.startswith("scripted/")]
    worst = min(m.mean(n) for n in scripted)
    checks = [
        Check(
            id="scripted-pipeline",
            statement="With a scripted model that answers correctly in each method's style "
            "(boxed after wrong boxed exemplars, 'The answer is', a bare last number, code in "
            "a fence after exemplar code), every method is judged correct",
            measured=", ".join(f"{n.split('/')[1]} {m.mean(n):.2f}" for n in scripted),
            criterion="accuracy 1.0 for every method on every seed",
            holds=worst == 1.0,
            why="the scripted model knows every answer and writes it in each method's asked-for "
            "format (scripted.py), so the extraction rules must find it",
        ),
        Check(
            id="code-runner",
            statement="The sandboxed runner passes every reference program and catches a wrong "
            "answer and an endless loop",
            measured=f"references passed {m.mean('runner/reference_pass_rate'):.2f}, wrong "
            f"answer caught {m.mean('runner/wrong_detected'):.0f}, timeout caught "
            f"{m.mean('runner/timeout_detected'):.0f}",
            criterion="all 1",
            why="the references are the problems' own solutions; print(0) against an expected "
            "1 is wrong and while True never ends, by construction",
            holds=min(
                m.mean(x)
                for x in (
                    "runner/reference_pass_rate",
                    "runner/wrong_detected",
                    "runner/timeout_detected",
                )
            )
            == 1.0,  # fmt: skip
        ),
    ]
    return checks
