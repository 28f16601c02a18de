"""Activation patching in a feature basis (the paper's IOI experiment, Sec. 5).

The task: indirect object identification (IOI, Wang et al. 2022). In "When Mary and John
went to the store, John gave a drink to", a model that solves the task prefers " Mary" (the
indirect object, IO) to " John" (the subject, S): the logit difference IO - S is positive.
The corrupted prompt repeats the other name ("..., Mary gave a drink to"), which flips the
answer. Patching the hooked layer's activations of the clean prompts towards the corrupted
ones along ``k`` features of a basis moves the logit difference part of the way; the fewer
features a basis needs for a given share of the clean-to-corrupted change, the more finely
it localises the behaviour.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from .harvest import run_to_hook, splice

# Templates in the style of the IOI paper's (BABA / ABBA orders via the name draw); {S} is the
# repeated name. Common first names; pairs are kept only when their tokenisations align.
TEMPLATES = (
    "When{A} and{B} went to the store,{S} gave a drink to",
    "When{A} and{B} went to the park,{S} gave a ball to",
    "After{A} and{B} went to the office,{S} gave a book to",
    "When{A} and{B} got a snack at the cafe,{S} decided to give it to",
    "While{A} and{B} were working at the school,{S} gave a bag to",
    "Then,{A} and{B} had a long argument, and afterwards{S} said to",
)
NAMES = ("Mary", "John", "Tom", "James", "Anna", "Sarah", "David", "Michael", "Paul", "Mark",
         "Peter", "Alice", "Bob", "Jack", "Robert", "Daniel", "George", "Chris", "Adam", "Emma",
         "Kate", "Lisa", "Lucy", "Ryan", "Jane", "Alex", "Sam", "Ben")  # fmt: skip


@dataclass
class PromptPairs:
    """Clean and corrupted prompts of one token length, with the answer tokens."""

    clean: torch.Tensor
    """``(n, seq)`` token ids; the answer is ``io``."""
    corrupt: torch.Tensor
    """``(n, seq)``, the same prompts with the subject's repetition swapped for the IO."""
    io: torch.Tensor
    """``(n,)`` the indirect object's (first distinguishing) token."""
    s: torch.Tensor
    """``(n,)`` the subject's token."""

    def logit_diff(self, logits: torch.Tensor) -> torch.Tensor:
        """``logit(IO) - logit(S)`` at the last position, ``(n,)``."""
        last = logits[:, -1]
        return last.gather(1, self.io[:, None])[:, 0] - last.gather(1, self.s[:, None])[:, 0]


def ioi_prompts(encode: Callable[[str], list[int]], n: int, seed: int = 0) -> list[PromptPairs]:
    """``n`` IOI prompt pairs drawn with ``seed``, grouped by token length.

    A name pair is used only when both names (with their leading space) have the same number
    of tokens, so the clean and corrupted prompts align position by position; the answer
    tokens are the first tokens where the two names differ (the whole name for the
    single-token names of a real tokenizer)."""
    rng = random.Random(seed)
    coded = {name: encode(" " + name) for name in NAMES}
    groups: dict[int, list] = {}
    made = 0
    for _ in range(50 * n):
        if made == n:
            break
        a, b = rng.sample(NAMES, 2)
        ea, eb = coded[a], coded[b]
        if len(ea) != len(eb) or ea == eb:
            continue
        i = next(j for j in range(len(ea)) if ea[j] != eb[j])
        template = TEMPLATES[made % len(TEMPLATES)]
        clean = encode(template.format(A=" " + a, B=" " + b, S=" " + b))  # answer: a
        corrupt = encode(template.format(A=" " + a, B=" " + b, S=" " + a))  # answer: b
        if len(clean) != len(corrupt):
            continue
        groups.setdefault(len(clean), []).append((clean, corrupt, ea[i], eb[i]))
        made += 1
    if made < n:
        raise ValueError(f"could only build {made} of {n} aligned IOI prompt pairs")
    return [PromptPairs(*(torch.tensor(col) for col in zip(*rows)))
            for _, rows in sorted(groups.items())]  # fmt: skip


@torch.no_grad()
def _logit_diff(model: torch.nn.Module, ids: torch.Tensor, pairs: PromptPairs) -> torch.Tensor:
    return pairs.logit_diff(model(input_ids=ids, use_cache=False, logits_to_keep=1).logits)


@torch.no_grad()
def task_logit_diffs(model: torch.nn.Module, pairs: Sequence[PromptPairs]) -> tuple:
    """The logit differences IO - S on the clean and on the corrupted prompts, each ``(n,)``."""
    clean = torch.cat([_logit_diff(model, p.clean, p) for p in pairs])
    corrupt = torch.cat([_logit_diff(model, p.corrupt, p) for p in pairs])
    return clean, corrupt


@torch.no_grad()
def patching_curve(
    model: torch.nn.Module,
    module: torch.nn.Module,
    pairs: Sequence[PromptPairs],
    encode: Callable[[torch.Tensor], torch.Tensor],
    directions: torch.Tensor,
    ks: Sequence[int],
    error: Callable[[torch.Tensor], torch.Tensor] | None = None,
) -> list[float]:
    """Share of the clean-to-corrupted change of the logit difference brought by patching
    ``k`` features at every position, for every ``k`` in ``ks``.

    ``error(h) -> h - reconstruction(h)`` ``(n, d)``: a basis that reconstructs only part of
    ``h`` (an SAE) has an error node, patched with every ``k`` (``k = 0``: the error alone),
    as sparse feature circuits do (Marks et al. 2024, arXiv:2403.19647, Sec. 2: the SAE
    error is a node of the graph); patching every feature and the error then moves ``h``
    all the way to the corrupted activations. Without it the error stays clean.

    ``encode(h) -> codes`` ``(n, m)`` and ``directions`` ``(m, d)`` are a linear read-out of
    the basis: moving the codes by ``delta`` moves ``h`` by ``delta @ directions`` (an SAE:
    its encoder and its dictionary, the reconstruction error left in place; neurons:
    identity and ``eye(d)``). One set of ``k`` features serves every prompt: those whose
    codes change most between clean and corrupted prompts (mean over prompts of the summed
    absolute change over positions). The share is a ratio of means over prompts:
    ``(mean patched - mean clean) / (mean corrupted - mean clean)``."""
    deltas, err_deltas, base, target = [], [], [], []
    for p in pairs:
        h_clean, h_corrupt = (
            run_to_hook(model, module, p.clean),
            run_to_hook(model, module, p.corrupt),
        )
        n, seq, d = h_clean.shape
        flat_clean, flat_corrupt = h_clean.reshape(-1, d).float(), h_corrupt.reshape(-1, d).float()
        delta = encode(flat_corrupt) - encode(flat_clean)
        deltas.append(delta.reshape(n, seq, -1))
        err_deltas.append(0 if error is None else
                          (error(flat_corrupt) - error(flat_clean)).reshape(n, seq, d))  # fmt: skip
        base.append(_logit_diff(model, p.clean, p))
        target.append(_logit_diff(model, p.corrupt, p))
    importance = sum(dl.abs().sum((0, 1)) for dl in deltas) / sum(len(p.io) for p in pairs)
    order = importance.argsort(descending=True)
    base_mean, effect = torch.cat(base).mean(), (torch.cat(target) - torch.cat(base)).mean()
    shares = []
    for k in ks:
        mask = torch.zeros(len(order), dtype=deltas[0].dtype)
        mask[order[:k]] = 1
        out = []
        for p, delta, err in zip(pairs, deltas, err_deltas):
            shift = (delta * mask) @ directions + err  # (n, seq, d)
            with splice(module, lambda h, shift=shift: h + shift.to(h.dtype)):
                out.append(_logit_diff(model, p.clean, p))
        shares.append(float((torch.cat(out).mean() - base_mean) / effect))
    return shares


def features_needed(ks: Sequence[int], shares: Sequence[float], share: float = 0.5) -> float:
    """The number of features at which the curve first reaches ``share`` of the effect:
    interpolated geometrically between the grid points around the crossing (``ks[0]`` if the
    first already does; inf if none does)."""
    prev_k, prev_s = None, None
    for k, s in zip(ks, shares):
        if s >= share:
            if prev_k is None or s == prev_s:
                return float(k)
            t = (share - prev_s) / (s - prev_s)
            return float(prev_k * (k / prev_k) ** t if prev_k > 0 else t * k)
        prev_k, prev_s = k, s
    return float("inf")
