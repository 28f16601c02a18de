"""`ScriptedBackend`: an `LLM` whose answers come from a Python function, for tests and
simulations that must run without a model. Tokens are whitespace-separated words."""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence

from .base import (
    Completion,
    Prompt,
    UsageLedger,
    as_messages,
    check_sampling,
    cut_at_stop,
    normalise_prompts,
)

ScriptFn = Callable[[Prompt], "str | Sequence[str]"]
ScoreFn = Callable[[Prompt, str], float]


def prompt_text(prompt: Prompt) -> str:
    """The prompt flattened to text (chat messages joined as ``role: content`` lines)."""
    if isinstance(prompt, str):
        return prompt
    return "\n".join(f"{m['role']}: {m['content']}" for m in as_messages(prompt))


def _words(text: str) -> list[str]:
    return text.split()


class ScriptedBackend:
    """Answers ``fn(prompt)``.

    ``fn`` returns one string, or a list of candidate strings: greedy decoding
    (``temperature=0``) returns the first for every sample, sampling draws among them
    with a ``random.Random(seed)``. ``score_choices`` uses ``scorer(prompt, choice)`` when
    given, else log(1) = 0 for a choice the scripted answer starts with and log(1e-6)
    per word otherwise, so the scripted answer is the most likely choice.
    """

    def __init__(self, fn: ScriptFn, *, name: str = "scripted", scorer: ScoreFn | None = None):
        self.fn, self.scorer, self.name = fn, scorer, name
        self.usage = UsageLedger()

    def _candidates(self, prompt: Prompt) -> list[str]:
        out = self.fn(prompt)
        cands = [out] if isinstance(out, str) else list(out)
        if not cands:
            raise ValueError("the scripted function returned no candidates")
        return cands

    def generate(
        self,
        prompts: Sequence[Prompt],
        *,
        n: int = 1,
        temperature: float = 0.0,
        top_p: float = 1.0,
        max_new_tokens: int = 256,
        stop: Sequence[str] | None = None,
        seed: int | None = None,
    ) -> list[list[Completion]]:
        check_sampling(n, temperature, top_p, max_new_tokens)
        rng = random.Random(seed)
        out = []
        for prompt in normalise_prompts(prompts):
            cands = self._candidates(prompt)
            p_tok = self.count_tokens(prompt)
            group = []
            for _ in range(n):
                text = cands[0] if temperature == 0 else rng.choice(cands)
                text, stopped = cut_at_stop(text, stop)
                words = _words(text)
                finish = "stop"
                if len(words) > max_new_tokens:
                    words, finish = words[:max_new_tokens], "length"
                    text = " ".join(words)
                group.append(Completion(text, p_tok, len(words), finish))
            out.append(group)
        self.usage.record_completions(out)
        return out

    def score_choices(self, prompt: Prompt, choices: Sequence[str]) -> list[float]:
        self.usage.record(calls=1, prompt_tokens=self.count_tokens(prompt))
        if self.scorer is not None:
            return [float(self.scorer(prompt, c)) for c in choices]
        answer = self._candidates(prompt)[0].strip()
        return [
            0.0
            if c.strip() and answer.startswith(c.strip())
            else math.log(1e-6) * max(1, len(_words(c)))
            for c in choices
        ]

    def count_tokens(self, prompt: Prompt) -> int:
        return len(_words(prompt_text(prompt)))
