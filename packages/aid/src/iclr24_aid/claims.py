"""The paper's claims and the code's checks, computed from the metrics.

Paper numbers: none found. The paper reports SAR as accuracy plots for p in {0, 0.5, 1}; the
arXiv abstract pages, the official README (github.com/taewonpark/AID) and its SARtask folder
(scripts only, no logs) give no number, so no SAR figure is quoted here. The sys-bAbI and
WikiText-103 tables of the paper were not reachable either (the arXiv HTML page's opening only).
For Sort-of-CLEVR, a third-party listing of the paper's results (wizwand.com, "Related
benchmarks" of arXiv 2406.01012) gives AID's unary accuracy, 98.9 %; nothing else was found.
"""

from __future__ import annotations

from iclr24_common import Check, Claim, Metrics, superiority

from .clevr import N_QUESTIONS

PAPER_SAR = "paper (SAR plots, official scale): FWM+AID above FWM; no number found"
PAPER_BABI = "paper (sys-bAbI table): TPR-RNN+AID above TPR-RNN; number not found here"
PAPER_CLEVR = (
    "paper (Sort-of-CLEVR table, dim 256, 100 epochs): AID above the linear Transformer; "
    "AID unary 98.9 % (a third-party listing of the paper's results, wizwand.com); "
    "binary, ternary and the baseline's figures not found"
)
PAPER_LM = "paper (WikiText-103 table): AID lowers the linear Transformer's perplexity; number not found here"


# Margins. The paper's SAR, Sort-of-CLEVR, sys-bAbI and WikiText-103 figures give no size for
# AID's gain that could be read here (plots, or tables not reached; see above): every
# comparison is a superiority with margin 0 (stated), i.e. a gain beyond 2 SE of the paired
# per-seed differences, as before the verdict API.
MARGIN = 0.0
# sys-gap: FWM's unseen accuracy at p = 0 below 0.30 (the premise; v1 asked train - unseen
# > 0.30, which also needs FWM to have learned the training task, not true by construction).
SYS_GAP = 0.30
UNTRAINED = "FWM + AID untrained"


def make_claims(metrics: Metrics, preset) -> list[Claim]:
    claims = other_claims(metrics, preset)
    if "sar" not in preset.experiments:
        return claims
    r0 = f"p{min(preset.ratios):g}"
    if set(preset.methods) != {"linear", "aid"}:
        return claims
    for ratio in preset.ratios:
        r = f"p{ratio:g}"
        claims.append(Claim(
            id=f"aid-generalises/{r}",
            statement="AID improves systematic generalisation: FWM+AID recalls more unseen "
            "combinations than FWM",
            paper=PAPER_SAR,
            measured=f"unseen acc AID {metrics.fmt(f'{r}/aid/test_acc', 3)}, FWM "
            f"{metrics.fmt(f'{r}/linear/test_acc', 3)}",
            criterion="FWM+AID's accuracy on the unseen X2 x Y2 combinations vs FWM's, "
            "checkpoints chosen on validation",
            test=superiority(metrics.by_seed(f"{r}/aid/test_acc"),
                             metrics.by_seed(f"{r}/linear/test_acc"), margin=MARGIN),
        ))  # fmt: skip
    cos = f"{r0}/aid_untrained/role_cos_cross_key"
    control = metrics.by_seed(cos) if cos in metrics else None
    claims.append(Claim(
        id=f"roles-disentangled/{r0}",
        statement="AID's roles are more disentangled: the roles of different keys are closer "
        "to orthogonal than FWM's",
        paper="paper (analysis of the representations): AID more orthogonal; "
        "no SAR number found",
        measured=f"mean |cos| between keys' roles on the test set: AID "
        f"{metrics.fmt(f'{r0}/aid/role_cos_cross_key', 3)}, FWM "
        f"{metrics.fmt(f'{r0}/linear/role_cos_cross_key', 3)}"
        + (f", untrained FWM + AID {metrics.fmt(cos, 3)}" if control else ""),
        criterion="FWM+AID's mean |cos| between keys' roles vs FWM's (lower: more orthogonal)"
        + (f"; control: {UNTRAINED} (its initial weights)" if control else ""),
        test=superiority(metrics.by_seed(f"{r0}/aid/role_cos_cross_key"),
                         metrics.by_seed(f"{r0}/linear/role_cos_cross_key"), margin=MARGIN,
                         higher_is_better=False, control=control, control_name=UNTRAINED),
    ))  # fmt: skip
    return claims


def other_claims(metrics: Metrics, preset) -> list[Claim]:
    """sys-bAbI (TPR-RNN) and language modelling (linear Transformer), when they ran."""
    claims = []
    if set(preset.methods) != {"linear", "aid"}:
        return claims
    if "clevr" in preset.experiments:
        per_kind = ", ".join(
            f"{k} {metrics.fmt(f'clevr/aid/test_acc/{k}', 3)} vs {metrics.fmt(f'clevr/linear/test_acc/{k}', 3)}"
            for k in ("unary", "binary", "ternary")
        )
        claims.append(Claim(
            id="aid-sort-of-clevr",
            statement="AID improves the linear Transformer on Sort-of-CLEVR: higher test accuracy, "
            "mean over unary, binary and ternary questions",
            paper=PAPER_CLEVR,
            measured=f"test acc AID vs linear: {per_kind}; mean "
            f"{metrics.fmt('clevr/aid/test_acc/mean', 3)} vs "
            f"{metrics.fmt('clevr/linear/test_acc/mean', 3)}",
            criterion="AID's mean test accuracy vs the linear Transformer's; per kind, the test "
            "accuracy at the epoch best on that kind's validation accuracy (official protocol)",
            test=superiority(metrics.by_seed("clevr/aid/test_acc/mean"),
                             metrics.by_seed("clevr/linear/test_acc/mean"), margin=MARGIN),
        ))  # fmt: skip
    if "sys-babi" in preset.experiments:
        claims.append(Claim(
            id="aid-sys-babi",
            statement="AID improves TPR-RNN on sys-bAbI: higher mean accuracy over the 20 tasks "
            "on test stories whose entities take roles never seen in training",
            paper=PAPER_BABI,
            measured=f"sys-bAbI acc TPR-RNN+AID {metrics.fmt('babi/aid/sys_test_acc', 3)}, "
            f"TPR-RNN {metrics.fmt('babi/linear/sys_test_acc', 3)}",
            criterion="TPR-RNN+AID's sys-bAbI accuracy vs TPR-RNN's, checkpoints chosen on "
            "validation",
            test=superiority(metrics.by_seed("babi/aid/sys_test_acc"),
                             metrics.by_seed("babi/linear/sys_test_acc"), margin=MARGIN),
        ))  # fmt: skip
    if "lm" in preset.experiments:
        demo = preset.lm.corpus != "wikitext-103"
        claims.append(Claim(
            id="aid-lm-demo" if demo else "aid-lm",
            statement="AID lowers the perplexity of the linear Transformer"
            + (" (CPU demo: characters of CPython's help texts, a toy scale)" if demo else ""),
            paper=PAPER_LM,
            measured=f"test ppl linear+AID {metrics.fmt('lm/aid/test_ppl', 3)}, linear "
            f"{metrics.fmt('lm/linear/test_ppl', 3)}",
            criterion="linear+AID's test perplexity vs the linear Transformer's, checkpoints "
            "chosen on validation",
            test=superiority(metrics.by_seed("lm/aid/test_ppl"),
                             metrics.by_seed("lm/linear/test_ppl"), margin=MARGIN,
                             higher_is_better=False),
        ))  # fmt: skip
    return claims


def clevr_steps(preset) -> int:
    """Adam steps of one Sort-of-CLEVR run: epochs x batch indices x 3 kinds (official loop)."""
    c = preset.clevr
    batches = c.train_images * N_QUESTIONS // c.train.batch_size
    if c.train.max_batches:
        batches = min(batches, c.train.max_batches)
    return c.train.epochs * batches * 3


def make_checks(metrics: Metrics, preset) -> list[Check]:
    checks = []
    if "clevr" in preset.experiments:
        want = clevr_steps(preset)
        for m in preset.methods:
            run = metrics.values(f"clevr/{m}/steps_run")
            checks.append(Check(
                id=f"budget/clevr/{m}",
                statement="every Sort-of-CLEVR run takes the same Adam steps (epochs x batch "
                "indices x 3 question kinds)",
                measured=f"Adam steps taken per seed {sorted(set(run))}, expected {want}",
                criterion=f"== {want} on every seed (counted by the optimizer)",
                holds=all(s == want for s in run),
                why="train_clevr runs epochs x batches x 3 kinds with one Adam step each; the "
                "count is Adam's own per-parameter step counter, read after training",
            ))  # fmt: skip
    if "sar" not in preset.experiments:
        return checks
    seen = max(metrics.values("data/test_pairs_seen_in_training"))
    cover = min(metrics.values("data/test_pair_coverage"))
    checks.append(Check(
        id="sar-split",
        statement="the test holds every X2 x Y2 combination and none of them is a training pair",
        measured=f"test pairs seen in training: {seen:g}; coverage {cover:.3f}",
        criterion="0 seen and coverage 1.0 on every seed (largest ratio)",
        holds=seen == 0 and cover == 1.0,
        why="SAR pairs X2 keys with Y1 values only in training, and its test stores each X2 key "
        "with each Y2 value once (official get_test_samples)",
    ))  # fmt: skip
    r0 = f"p{min(preset.ratios):g}"
    if "linear" in preset.methods and min(preset.ratios) == 0.0:
        unseen = metrics.values(f"{r0}/linear/test_acc")
        checks.append(Check(
            id=f"sys-gap/{r0}",
            statement="the task's premise: FWM's decomposition does not generalise "
            "systematically at p = 0, it recalls almost none of the unseen X2 x Y2 combinations",
            paper="paper (SAR plots): FWM fails on unseen combinations; no number found",
            measured=f"FWM train {metrics.fmt(f'{r0}/linear/train_acc', 3)}, unseen "
            f"{metrics.fmt(f'{r0}/linear/test_acc', 3)}; gap {metrics.fmt(f'{r0}/linear/gap', 3)}",
            criterion=f"mean unseen accuracy < {SYS_GAP:g}",
            holds=sum(unseen) / len(unseen) < SYS_GAP,
            why="by construction of the split: X2 keys are trained with Y1 values only and, at "
            "p = 0, no key is trained with values of both groups, so nothing in the data shows "
            "a key taking another group's value (sar-split) and FWM answers an X2 query from "
            "Y1; its failure there is the setting the paper starts from",
        ))  # fmt: skip
    for ratio in preset.ratios:
        r = f"p{ratio:g}"
        for m in preset.methods:
            run = metrics.values(f"{r}/{m}/steps_run")
            chosen = max(metrics.values(f"{r}/{m}/chosen_step"))
            checks.append(Check(
                id=f"budget/{r}/{m}",
                statement="every run trains the same steps and picks its checkpoint on validation",
                measured=f"Adam steps taken per seed {sorted(set(run))} of {preset.train.steps}; "
                f"latest chosen step {chosen:g}",
                criterion="steps taken == steps on every seed (counted by the optimizer) and the "
                "chosen step in [1, steps]",
                holds=all(s == preset.train.steps for s in run) and 1 <= chosen <= preset.train.steps,
                why="train() takes one Adam step per iteration for train.steps iterations; the "
                "count is Adam's own per-parameter step counter, read after training",
            ))  # fmt: skip
    return checks
