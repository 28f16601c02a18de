"""``iclr24-llm serve``: a local backend behind the OpenAI HTTP protocol on 127.0.0.1, so
the HTTP path (``OpenAICompatBackend``, the official ``openai`` client, any tool that speaks
the protocol) runs end to end offline.

Endpoints: ``GET /v1/models``, ``GET /health``, ``POST /v1/chat/completions`` (messages, n,
temperature, top_p, max_tokens / max_completion_tokens, stop, seed, stream) and
``POST /v1/completions`` (a string or a list of strings, the same parameters; with ``echo``
and ``logprobs`` it returns the prompt tokens' log-probs and generates nothing, which is
what ``score_choices`` asks for).

- ``stream=true``: server-sent events (``chat.completion.chunk`` / ``text_completion``
  chunks, ``data: [DONE]`` last; ``stream_options.include_usage`` adds a usage chunk). The
  text is sent once the completion is computed, in word-sized pieces.
- Concurrent requests are **batched**: requests that arrive within ``window_s`` of each
  other and share their sampling parameters run as one batched generation (up to
  ``max_batch`` prompts); seeded sampling runs alone, so a seed gives the same samples as
  the direct backend.
- Bad requests get HTTP 400 with a message: n < 1, max_tokens < 1, an empty prompt, a
  message with an unknown role or without string content, temperature outside [0, 2],
  top_p outside (0, 1], and log-probs of generated tokens (only prompt log-probs through
  ``echo`` are implemented).
"""

from __future__ import annotations

import json
import queue
import re
import threading
import time
import uuid
from concurrent.futures import Future
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from iclr24_common.logs import get_logger

from .base import Completion

log = get_logger("llm.serve")
ROLES = {"system", "user", "assistant", "developer"}


class BadRequest(ValueError):
    pass


# ------------------------------------------------------------------ request parsing


def _int(body: dict, names: tuple[str, ...], default: int, what: str) -> int:
    for name in names:
        if body.get(name) is not None:
            v = body[name]
            if isinstance(v, bool) or not isinstance(v, int):
                raise BadRequest(f"'{name}' must be an integer, got {v!r}")
            if v < 1:
                raise BadRequest(f"'{name}' must be >= 1 ({what}), got {v}")
            return v
    return default


def _sampling(body: dict[str, Any]) -> dict[str, Any]:
    try:
        temperature = float(body.get("temperature", 1.0))  # the OpenAI API's default
        top_p = float(body.get("top_p", 1.0))
        seed = None if body.get("seed") is None else int(body["seed"])
    except (TypeError, ValueError) as e:
        raise BadRequest(f"bad sampling parameter: {e}") from None
    if not 0.0 <= temperature <= 2.0:
        raise BadRequest(f"'temperature' must be in [0, 2], got {temperature}")
    if not 0.0 < top_p <= 1.0:
        raise BadRequest(f"'top_p' must be in (0, 1], got {top_p}")
    stop = body.get("stop")
    if stop is not None:
        stop = [stop] if isinstance(stop, str) else stop
        if not isinstance(stop, list) or not all(isinstance(s, str) for s in stop):
            raise BadRequest("'stop' must be a string or a list of strings")
    return dict(
        n=_int(body, ("n",), 1, "completions per prompt"),
        temperature=temperature,
        top_p=top_p,
        max_new_tokens=_int(body, ("max_tokens", "max_completion_tokens"), 256, "new tokens"),
        stop=stop or None,
        seed=seed,
    )


def _messages(body: dict[str, Any]) -> list[dict[str, str]]:
    msgs = body.get("messages")
    if not isinstance(msgs, list) or not msgs:
        raise BadRequest("'messages' must be a non-empty list")
    out = []
    for i, m in enumerate(msgs):
        if not isinstance(m, dict) or m.get("role") not in ROLES:
            role = m.get("role") if isinstance(m, dict) else m
            raise BadRequest(f"messages[{i}]: unknown role {role!r} (one of {sorted(ROLES)})")
        content = m.get("content")
        if isinstance(content, list):  # content parts: text only
            if not all(isinstance(p, dict) and p.get("type") == "text" for p in content):
                raise BadRequest(f"messages[{i}]: only text content parts are supported")
            content = "".join(str(p.get("text", "")) for p in content)
        if not isinstance(content, str):
            raise BadRequest(f"messages[{i}]: 'content' must be a string, got {content!r}")
        role = "system" if m["role"] == "developer" else m["role"]
        out.append({"role": role, "content": content})
    return out


def _no_generated_logprobs(body: dict[str, Any], chat: bool) -> None:
    asked = body.get("logprobs") or body.get("top_logprobs") if chat else body.get("logprobs")
    if asked:
        raise BadRequest(
            "log-probs of generated tokens are not implemented; /v1/completions with echo=true "
            "and logprobs returns the prompt's token log-probs (used to score choices)"
        )


def _usage(groups: list[list[Completion]]) -> dict[str, int]:
    p = sum(g[0].prompt_tokens for g in groups if g)
    c = sum(x.completion_tokens for g in groups for x in g)
    return {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}


# ------------------------------------------------------------------ batching


class Batcher:
    """Runs concurrent generation requests as batches on one backend (one thread)."""

    def __init__(self, llm: Any, *, window_s: float = 0.02, max_batch: int = 16):
        self.llm, self.window_s, self.max_batch = llm, float(window_s), max(1, int(max_batch))
        self._q: queue.Queue = queue.Queue()
        self.batches: list[int] = []  # prompts per backend call (for tests and the log)
        threading.Thread(target=self._loop, daemon=True, name="iclr24-llm-batcher").start()

    def submit(self, texts: list[str], params: dict[str, Any]) -> list[list[Completion]]:
        """The completions of ``texts`` (already rendered) with ``params``; blocks."""
        fut: Future = Future()
        sampled_with_seed = params["temperature"] > 0 and params["seed"] is not None
        key = (uuid.uuid4().hex if sampled_with_seed else
               json.dumps({k: v for k, v in params.items() if not (k == "seed" and params["temperature"] == 0)},
                          sort_keys=True))  # fmt: skip
        self._q.put((key, texts, params, fut))
        return fut.result()

    def _loop(self) -> None:
        while True:
            batch = [self._q.get()]
            deadline = time.monotonic() + self.window_s
            while sum(len(b[1]) for b in batch) < self.max_batch:
                try:
                    batch.append(self._q.get(timeout=max(0.0, deadline - time.monotonic())))
                except queue.Empty:
                    break
            groups: dict[str, list] = {}
            for item in batch:
                groups.setdefault(item[0], []).append(item)
            for items in groups.values():
                self._run(items)

    def _run(self, items: list) -> None:
        texts = [t for _, ts, _, _ in items for t in ts]
        self.batches.append(len(texts))
        try:
            out = self.llm.generate_raw(texts, **items[0][2])
        except Exception as e:  # every waiting request gets the error
            for *_, fut in items:
                fut.set_exception(e)
            return
        k = 0
        for _, ts, _, fut in items:
            fut.set_result(out[k : k + len(ts)])
            k += len(ts)


# ------------------------------------------------------------------ the handler


class OpenAIHandler(BaseHTTPRequestHandler):
    server_version = "iclr24-llm"
    llm: Any = None  # set by make_server
    batcher: Batcher | None = None

    def log_message(self, fmt, *args):  # through our logger, quietly
        log.debug("%s %s", self.address_string(), fmt % args)

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str) -> None:
        self._send(status, {"error": {"message": message, "type": "invalid_request_error"}})

    def _stream(self, chunks: list[dict[str, Any]]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        for c in chunks:
            self.wfile.write(f"data: {json.dumps(c)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()

    def do_GET(self):
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            self._send(200, {"object": "list", "data": [
                {"id": self.llm.name, "object": "model", "owned_by": "iclr24"}]})  # fmt: skip
        elif self.path.rstrip("/") == "/health":
            self._send(200, {"status": "ok", "model": self.llm.name})
        else:
            self._error(404, f"no route {self.path}")

    def do_POST(self):
        try:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            if not isinstance(body, dict):
                raise BadRequest("the request body must be a JSON object")
            path = self.path.rstrip("/")
            if path in ("/v1/chat/completions", "/chat/completions"):
                kind, payload = self._chat(body)
            elif path in ("/v1/completions", "/completions"):
                kind, payload = self._completions(body)
            else:
                return self._error(404, f"no route {self.path}")
        except (BadRequest, json.JSONDecodeError, ValueError) as e:
            return self._error(400, str(e))
        except Exception as e:  # the client deserves an answer, the log the traceback
            log.exception("request failed")
            return self._error(500, f"{type(e).__name__}: {e}")
        if body.get("stream"):
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            return self._stream(_chunks(kind, payload, include_usage))
        self._send(200, payload)

    def _generate(self, texts: list[str], params: dict[str, Any]) -> list[list[Completion]]:
        if self.batcher is not None:
            return self.batcher.submit(texts, params)
        return self.llm.generate_raw(texts, **params)

    def _envelope(self, kind: str, choices: list, groups: list[list[Completion]]) -> dict:
        return {
            "id": f"{kind}-{uuid.uuid4().hex[:12]}",
            "object": "chat.completion" if kind == "chatcmpl" else "text_completion",
            "created": int(time.time()),
            "model": self.llm.name,
            "choices": choices,
            "usage": _usage(groups),
        }

    def _chat(self, body: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        msgs = _messages(body)
        _no_generated_logprobs(body, chat=True)
        [group] = self._generate([self.llm.render(msgs)], _sampling(body))
        choices = [
            {"index": i, "message": {"role": "assistant", "content": c.text},
             "finish_reason": c.finish_reason}
            for i, c in enumerate(group)
        ]  # fmt: skip
        return "chat", self._envelope("chatcmpl", choices, [group])

    def _completions(self, body: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        prompt = body.get("prompt")
        prompts = [prompt] if isinstance(prompt, str) else prompt
        if (
            not isinstance(prompts, list)
            or not prompts
            or not all(isinstance(p, str) for p in prompts)
        ):
            raise BadRequest("'prompt' must be a non-empty string or list of strings")
        if not all(prompts):
            raise BadRequest("'prompt' must not be empty")
        if body.get("echo") and body.get("logprobs") is not None:
            return "completions", self._echo(prompts)
        _no_generated_logprobs(body, chat=False)
        if body.get("echo"):
            raise BadRequest("echo is only supported with logprobs (prompt scoring)")
        groups = self._generate(prompts, _sampling(body))
        choices, k = [], 0
        for group in groups:
            for c in group:
                choices.append({"index": k, "text": c.text, "logprobs": None,
                                "finish_reason": c.finish_reason})  # fmt: skip
                k += 1
        return "completions", self._envelope("cmpl", choices, groups)

    def _echo(self, prompts: list[str]) -> dict[str, Any]:
        choices, n_tok = [], 0
        for i, text in enumerate(prompts):
            toks, offs, lps = self.llm.prompt_logprobs(text)
            n_tok += len(toks)
            choices.append({
                "index": i, "text": text, "finish_reason": "length",
                "logprobs": {"tokens": toks, "token_logprobs": lps, "text_offset": offs,
                             "top_logprobs": None},
            })  # fmt: skip
        out = self._envelope("cmpl", choices, [])
        out["usage"] = {"prompt_tokens": n_tok, "completion_tokens": 0, "total_tokens": n_tok}
        return out


def _pieces(text: str) -> list[str]:
    return [p for p in re.findall(r"\s*\S+\s*|\s+", text)] or [""]


def _chunks(kind: str, payload: dict[str, Any], include_usage: bool) -> list[dict[str, Any]]:
    """A finished response as the OpenAI streaming protocol's chunks."""
    base = {"id": payload["id"], "created": payload["created"], "model": payload["model"]}
    out: list[dict[str, Any]] = []
    for c in payload["choices"]:
        i = c["index"]
        if kind == "chat":
            obj = {**base, "object": "chat.completion.chunk"}
            out.append({**obj, "choices": [{"index": i, "delta": {"role": "assistant", "content": ""},
                                            "finish_reason": None}]})  # fmt: skip
            for piece in _pieces(c["message"]["content"]):
                out.append({**obj, "choices": [{"index": i, "delta": {"content": piece},
                                                "finish_reason": None}]})  # fmt: skip
            out.append({**obj, "choices": [{"index": i, "delta": {},
                                            "finish_reason": c["finish_reason"]}]})  # fmt: skip
        else:
            obj = {**base, "object": "text_completion"}
            for piece in _pieces(c["text"]):
                out.append({**obj, "choices": [{"index": i, "text": piece, "logprobs": None,
                                                "finish_reason": None}]})  # fmt: skip
            out.append({**obj, "choices": [{"index": i, "text": "", "logprobs": None,
                                            "finish_reason": c["finish_reason"]}]})  # fmt: skip
    if include_usage:
        obj = {**base, "object": "chat.completion.chunk" if kind == "chat" else "text_completion"}
        out.append({**obj, "choices": [], "usage": payload["usage"]})
    return out


def make_server(
    llm: Any, host: str = "127.0.0.1", port: int = 0, *, batch: bool = True,
    window_s: float = 0.02, max_batch: int = 16,
) -> ThreadingHTTPServer:  # fmt: skip
    """An HTTP server for ``llm`` (a TransformersBackend); port 0 picks a free port. With
    ``batch`` (default) concurrent requests share batched generations (``Batcher``). Run it
    with ``serve_forever()``; its address is ``server.server_address``."""
    batcher = Batcher(llm, window_s=window_s, max_batch=max_batch) if batch else None
    handler = type("Handler", (OpenAIHandler,), {"llm": llm, "batcher": batcher})
    httpd = ThreadingHTTPServer((host, port), handler)
    httpd.daemon_threads = True
    httpd.batcher = batcher  # type: ignore[attr-defined]
    return httpd


def start_in_thread(llm: Any, host: str = "127.0.0.1", port: int = 0, **kw: Any):
    """Start a server on a daemon thread; returns ``(server, base_url)``."""
    httpd = make_server(llm, host, port, **kw)
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True).start()
    h, p = httpd.server_address[:2]
    return httpd, f"http://{h}:{p}/v1"
