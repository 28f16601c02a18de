"""Explain-then-simulate autointerpretability (Bills et al. 2023, the paper's Sec. 3) through
the project's LLM layer (``iclr24_llm``): the ``--llm`` option of the reproduction.

1. **Explain**: the explainer LLM reads a feature's top-activating windows (from the
   explanation half of the text), each token shown with its activation scaled to 0-10, and
   completes "This feature fires on".
2. **Simulate**: for every token of other windows (the feature's top windows and random
   windows of the simulation half, as OpenAI's top-and-random scoring), the simulator reads
   the explanation and the text up to that token and rates the activation 0-10; the
   prediction is the expected rating under the simulator's probabilities of " 0" ... " 10"
   (``score_choices``: OpenAI also takes the expected value of the simulator's 0-10 logprobs,
   though its simulator rates every token of a window in one "all at once" prompt).
3. **Score**: the Pearson correlation between predicted and true activations over all
   simulated tokens (0 where either is constant).

Simplification: our simulator prompt is one per token (no "all at once" layout), and the
default LLM is the offline SmolLM2-135M-Instruct, far weaker than GPT-4 / GPT-3.5.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

RATINGS = tuple(f" {i}" for i in range(11))


def _windows(act: np.ndarray, n_top: int, n_random: int, width: int, rng) -> list[int]:
    """Start indices of ``n_top`` non-overlapping windows around the top activations (the
    top token third from the end) and ``n_random`` random windows."""
    starts: list[int] = []
    for i in np.argsort(-act):
        if len(starts) == n_top or act[i] <= 0:
            break
        s = int(min(max(i - width + 3, 0), len(act) - width))
        if all(abs(s - t) >= width for t in starts):
            starts.append(s)
    return starts + [int(s) for s in rng.integers(0, len(act) - width, n_random)]


def explain_prompt(windows: Sequence[tuple[list[str], np.ndarray]]) -> str:
    """The explainer's prompt: each window's text, then its tokens with ratings > 0."""
    lines = ["We study a feature of a language model. Each example shows a text, then the "
             "tokens where the feature fires with a rating from 0 to 10.", ""]  # fmt: skip
    for j, (toks, rating) in enumerate(windows, 1):
        lines.append(f"Example {j}: {''.join(toks)!r}")
        fired = [f"{t!r} {r}" for t, r in zip(toks, rating) if r > 0]
        lines.append("Fires on: " + (", ".join(fired) if fired else "nothing"))
    lines += ["", "In a few words, what does this feature respond to?",
              "This feature fires on"]  # fmt: skip
    return "\n".join(lines)


def simulate_prompt(explanation: str, prefix: str, token: str) -> str:
    return (f"A feature of a language model fires on{explanation}\n"
            f"Text: {prefix!r}\nOn a scale of 0 to 10, how strongly does it fire on the last "
            f"token {token!r}? Rating:")  # fmt: skip


def _rating(act: np.ndarray, top: float) -> np.ndarray:
    return np.clip(np.round(10 * act / top), 0, 10).astype(int) if top > 0 else 0 * act.astype(int)


def _pearson(a: np.ndarray, b: np.ndarray) -> float:
    if a.std() == 0 or b.std() == 0:
        return 0.0
    return float(np.corrcoef(a, b)[0, 1])


def explain_then_simulate(
    llm,
    act: np.ndarray,
    tokens: np.ndarray,
    explain: np.ndarray,
    decode: Callable[[list[int]], str],
    *,
    width: int = 12,
    n_explain: int = 4,
    n_top: int = 2,
    n_random: int = 2,
    seed: int = 0,
) -> tuple[float, str]:
    """Score one feature: ``act`` ``(n,)`` its activations on ``tokens`` ``(n,)``; ``explain``
    ``(n,)`` marks the explanation half (the rest is simulated). Returns (score, explanation)."""
    rng = np.random.default_rng(seed)
    idx_e, idx_s = np.flatnonzero(explain), np.flatnonzero(~explain)
    top = float(act[idx_e].max())
    shown = []
    for s in _windows(act[idx_e], n_explain, 0, width, rng):
        win = idx_e[s : s + width]
        shown.append(([decode([int(t)]) for t in tokens[win]], _rating(act[win], top)))
    explanation = llm.generate(explain_prompt(shown), max_new_tokens=24, stop=["\n"])[0][0].text
    explanation = " " + explanation.strip()
    true, pred = [], []
    for s in _windows(act[idx_s], n_top, n_random, width, rng):
        win = idx_s[s : s + width]
        for j in range(len(win)):
            logp = np.array(llm.score_choices(simulate_prompt(
                explanation, decode(tokens[win[: j + 1]].tolist()), decode([int(tokens[win[j]])])),
                list(RATINGS)))  # fmt: skip
            p = np.exp(logp - logp.max())
            pred.append(float((p / p.sum()) @ np.arange(11)))
            true.append(float(act[win[j]]))
    return _pearson(np.array(true), np.array(pred)), explanation


def autointerp_scores(llm, feats: np.ndarray, tokens: np.ndarray, explain: np.ndarray, decode,
                      n_features: int, seed: int = 0, **kw) -> dict:  # fmt: skip
    """Explain-then-simulate scores of ``n_features`` features drawn at random among those
    that fire in both halves (never cherry-picked): mean score and the explanations."""
    fires = ((feats[explain] > 0).any(0)) & ((feats[~explain] > 0).any(0))
    pick = np.random.default_rng(seed).permutation(np.flatnonzero(fires))[:n_features]
    scores, notes = [], {}
    for f in np.sort(pick):
        score, text = explain_then_simulate(llm, feats[:, f], tokens, explain, decode,
                                            seed=seed + int(f), **kw)  # fmt: skip
        scores.append(score)
        notes[int(f)] = {"score": score, "explanation": text}
    return {"score": float(np.mean(scores)) if scores else 0.0, "features": notes}


def scripted_llm():
    """A deterministic stand-in for tests (``--llm scripted``): the explainer lists the tokens
    shown as firing; the simulator rates 10 a last token named in the explanation, else 0.
    With it the protocol reduces to a token-lookup simulation, so its score is checkable."""
    import re

    from iclr24_llm import ScriptedBackend

    def explainer(prompt) -> str:
        text = prompt if isinstance(prompt, str) else prompt[-1]["content"]
        fired = re.findall(r"^Fires on: (.*)$", text, flags=re.M)
        toks = {t for line in fired for t in re.findall(r"'((?:[^'\\]|\\.)*)' \d+", line)}
        return " " + " | ".join(sorted(toks))

    def scorer(prompt: str, choice: str) -> float:
        expl = re.search(r"fires on(.*)\nText:", prompt, flags=re.S).group(1)
        token = re.search(r"last token '((?:[^'\\]|\\.)*)'\? Rating:$", prompt).group(1)
        named = token.strip() in {t.strip() for t in expl.split(" | ")} and token.strip() != ""
        return 0.0 if choice == (" 10" if named else " 0") else -20.0

    return ScriptedBackend(explainer, scorer=scorer)
