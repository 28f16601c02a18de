"""The language-model API every package codes against: `Completion`, the `LLM` protocol,
the usage ledger, and a disk cache of responses.

A prompt is a string or a list of chat messages (``{"role": ..., "content": ...}``).
Nothing here imports torch or transformers.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from iclr24_common.io import atomic_write_json

Message = Mapping[str, str]
Prompt = str | Sequence[Message]


class LLMError(RuntimeError):
    """A backend could not answer (server error after retries, timeout, bad response)."""


@dataclass(frozen=True)
class Completion:
    """One sampled continuation of a prompt."""

    text: str
    """The generated text, without the prompt and cut before the first stop string."""
    prompt_tokens: int
    """Tokens in the prompt as the model saw it (after the chat template)."""
    completion_tokens: int
    """Tokens generated (for a server: its `usage`, or the local tokenizer's count)."""
    finish_reason: str
    """"stop" (end of turn or a stop string) or "length" (hit max_new_tokens)."""


@runtime_checkable
class LLM(Protocol):
    """What every backend offers. Generation is greedy at ``temperature=0``."""

    name: str
    usage: UsageLedger

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
        """``n`` completions for each prompt: ``out[i][j]`` is sample ``j`` of prompt ``i``."""
        ...

    def score_choices(self, prompt: Prompt, choices: Sequence[str]) -> list[float]:
        """Summed log-probability of each choice as the text continuation of ``prompt``.

        One definition for every backend: a string prompt is raw text (no chat template),
        ``prompt + choice`` is tokenized as one text, and the log-probs of the tokens that
        start at or after the end of ``prompt`` are summed (what ``/v1/completions`` with
        ``echo`` returns). The local backend also takes chat messages (rendered with the
        chat template); an HTTP backend needs a string."""
        ...

    def count_tokens(self, prompt: Prompt) -> int:
        """Tokens in ``prompt`` as the model sees it."""
        ...


# ---------------------------------------------------------------------------- helpers


def as_messages(prompt: Prompt, system: str | None = None) -> list[dict[str, str]]:
    """A prompt as chat messages; a plain string becomes one user turn after ``system``."""
    if isinstance(prompt, str):
        msgs = [{"role": "user", "content": prompt}]
    else:
        msgs = [{"role": str(m["role"]), "content": str(m["content"])} for m in prompt]
        if not msgs:
            raise ValueError("a chat prompt needs at least one message")
    if system is not None and msgs[0]["role"] != "system":
        msgs.insert(0, {"role": "system", "content": system})
    return msgs


def normalise_prompts(prompts: Prompt | Sequence[Prompt]) -> list[Prompt]:
    """Accept one prompt or a list of prompts (a list of dicts is one chat prompt)."""
    if isinstance(prompts, str):
        return [prompts]
    prompts = list(prompts)
    if prompts and isinstance(prompts[0], Mapping):
        return [prompts]  # a single chat prompt
    return prompts


def cut_at_stop(text: str, stop: Sequence[str] | None) -> tuple[str, bool]:
    """``text`` up to the earliest stop string, and whether one was found."""
    if not stop:
        return text, False
    cuts = [i for i in (text.find(s) for s in stop if s) if i >= 0]
    return (text[: min(cuts)], True) if cuts else (text, False)


def check_sampling(n: int, temperature: float, top_p: float, max_new_tokens: int) -> None:
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    if temperature < 0:
        raise ValueError(f"temperature must be >= 0, got {temperature}")
    if not 0 < top_p <= 1:
        raise ValueError(f"top_p must be in (0, 1], got {top_p}")
    if max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be >= 1, got {max_new_tokens}")


# ---------------------------------------------------------------------------- usage ledger


@dataclass
class Usage:
    """Totals over a backend's life (or since the last reset)."""

    calls: int = 0
    """Model calls: one per prompt and sample for generation, one per prompt for scoring."""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cache_hits: int = 0
    """Answers served from the disk cache (not counted in calls or tokens)."""

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class UsageLedger:
    """Thread-safe counters of calls and tokens; every package reports ``as_dict()``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._usage = Usage()

    def record(self, calls: int = 0, prompt_tokens: int = 0, completion_tokens: int = 0) -> None:
        with self._lock:
            self._usage.calls += calls
            self._usage.prompt_tokens += prompt_tokens
            self._usage.completion_tokens += completion_tokens

    def record_completions(self, completions: Sequence[Sequence[Completion]]) -> None:
        """One call per completion; prompt tokens once per prompt (as a server bills n>1)."""
        for group in completions:
            if group:
                self.record(
                    calls=len(group),
                    prompt_tokens=group[0].prompt_tokens,
                    completion_tokens=sum(c.completion_tokens for c in group),
                )

    def record_cache_hit(self, k: int = 1) -> None:
        with self._lock:
            self._usage.cache_hits += k

    def snapshot(self) -> Usage:
        with self._lock:
            return Usage(**asdict(self._usage))

    def as_dict(self) -> dict[str, int]:
        u = self.snapshot()
        return {**asdict(u), "total_tokens": u.total_tokens}

    def reset(self) -> Usage:
        """Zero the counters; returns what they held."""
        with self._lock:
            old, self._usage = self._usage, Usage()
        return old

    def __repr__(self) -> str:
        return f"UsageLedger({self.as_dict()})"


# ---------------------------------------------------------------------------- disk cache


def _key(parts: Mapping[str, Any]) -> str:
    blob = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class CachedLLM:
    """Wraps a backend with a disk cache of its answers.

    The key is (backend class, model name, prompt, every sampling parameter, seed); each
    answer is one JSON file under ``cache_dir``, written atomically, so concurrent runs may
    share a directory. Sampling without a seed (``temperature > 0``, ``seed=None``) is
    never cached: a cache would freeze a draw the caller asked to be fresh.
    """

    def __init__(self, llm: LLM, cache_dir: str | Path):
        self.llm = llm
        self.cache_dir = Path(cache_dir)
        self.name = llm.name
        self.usage = llm.usage

    def __getattr__(self, attr: str) -> Any:  # pick_label, tokenizer, ... of the backend
        return getattr(self.llm, attr)

    def _ident(self) -> dict[str, str]:
        return {"backend": type(self.llm).__name__, "model": self.llm.name}

    def _path(self, key: str) -> Path:
        return self.cache_dir / key[:2] / f"{key}.json"

    def _get(self, key: str) -> Any | None:
        try:
            return json.loads(self._path(key).read_text(encoding="utf-8"))["value"]
        except (FileNotFoundError, json.JSONDecodeError, KeyError):
            return None

    def _put(self, key: str, parts: Mapping[str, Any], value: Any) -> None:
        atomic_write_json(self._path(key), {"key": parts, "value": value})

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
        prompts = normalise_prompts(prompts)
        params = dict(
            n=n,
            temperature=temperature,
            top_p=top_p,
            max_new_tokens=max_new_tokens,
            stop=list(stop) if stop else None,
            seed=seed,
        )
        if temperature > 0 and seed is None:
            return self.llm.generate(prompts, **params)
        parts = [
            {**self._ident(), "op": "generate", "prompt": _jsonable_prompt(p), **params}
            for p in prompts
        ]
        keys = [_key(p) for p in parts]
        out: list[list[Completion] | None] = []
        for k in keys:
            hit = self._get(k)
            out.append([Completion(**c) for c in hit] if hit is not None else None)
        missing = [i for i, o in enumerate(out) if o is None]
        self.usage.record_cache_hit(len(prompts) - len(missing))
        if missing:
            fresh = self.llm.generate([prompts[i] for i in missing], **params)
            for i, group in zip(missing, fresh, strict=True):
                out[i] = group
                self._put(keys[i], parts[i], [asdict(c) for c in group])
        return out  # type: ignore[return-value]

    def score_choices(self, prompt: Prompt, choices: Sequence[str]) -> list[float]:
        parts = {
            **self._ident(),
            "op": "score_choices",
            "prompt": _jsonable_prompt(prompt),
            "choices": list(choices),
        }
        key = _key(parts)
        hit = self._get(key)
        if hit is not None:
            self.usage.record_cache_hit()
            return [float(x) for x in hit]
        scores = self.llm.score_choices(prompt, choices)
        self._put(key, parts, list(scores))
        return scores

    def count_tokens(self, prompt: Prompt) -> int:
        return self.llm.count_tokens(prompt)


def _jsonable_prompt(prompt: Prompt) -> Any:
    return prompt if isinstance(prompt, str) else [dict(m) for m in prompt]
