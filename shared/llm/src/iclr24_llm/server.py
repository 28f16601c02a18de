"""``iclr24-llm serve``: a local backend behind the OpenAI HTTP protocol on 127.0.0.1, so
the HTTP path (``OpenAICompatBackend``, the official ``openai`` client, any tool that speaks
the protocol) runs end to end offline.

Endpoints: ``GET /v1/models``, ``GET /health``, ``POST /v1/chat/completions`` (messages, n,
temperature, top_p, max_tokens / max_completion_tokens, stop, seed, stream) and
``POST /v1/completions`` (a string or a list of strings, the same parameters; with ``echo``
and ``logprobs`` it returns the prompt tokens' log-probs and generates nothing, which is
what ``score_choices`` asks for).

- ``stream=true``: server-sent events (``chat.completion.chunk`` / ``text_completion``
  chunks, ``data: [DONE]`` last; ``stream_options.include_usage`` adds a usage chunk), sent
  **as the tokens are generated**: a chunk per token that releases text (text that could be
  the start of a stop string, or half a UTF-8 character, waits for the next token).
- ``logprobs``: per generated token its log-prob, bytes and the most likely alternatives,
  from the model's scores during generation (before temperature and top_p): chat
  ``logprobs: true`` + ``top_logprobs`` (0-20), completions ``logprobs`` (0-20; OpenAI caps
  it at 5), streamed or not.
- Concurrent requests are **batched**: requests that arrive within ``window_s`` of each
  other and share their sampling parameters run as one batched generation (up to
  ``max_batch`` prompts); seeded sampling runs alone, so a seed gives the same samples as
  the direct backend. Streams are batched like the rest.
- The model: a request names one of the served names (the model's own name and the aliases
  given to ``serve --served-model-name``, as vLLM does); an unknown name is HTTP 404 with
  code ``model_not_found`` and a missing one HTTP 400, as the OpenAI API answers.
- Bad requests get HTTP 400 with a message: n < 1, max_tokens < 1, an empty prompt, a
  message with an unknown role or without string content, temperature outside [0, 2],
  top_p outside (0, 1], top_logprobs without logprobs, log-prob counts outside [0, 20].
"""

from __future__ import annotations

import json
import queue
import threading
import time
import uuid
from concurrent.futures import Future
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from iclr24_common.logs import get_logger

from .base import Completion
from .local import OnToken, TokenLogprob

log = get_logger("llm.serve")
ROLES = {"system", "user", "assistant", "developer"}
ROUTES = {"/v1/chat/completions", "/chat/completions", "/v1/completions", "/completions"}


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


MAX_LOGPROBS = 20


def _top_logprobs(body: dict[str, Any], chat: bool) -> int | None:
    """How many alternatives per generated token the request asks for; None: no log-probs.
    Chat: ``logprobs`` (bool) and ``top_logprobs``; completions: ``logprobs`` (an int)."""
    name = "top_logprobs" if chat else "logprobs"
    k = body.get(name)
    if chat:
        on = body.get("logprobs")
        if on is not None and not isinstance(on, bool):
            raise BadRequest(f"'logprobs' must be a boolean on chat completions, got {on!r}")
        if k is not None and not on:
            raise BadRequest("'top_logprobs' needs 'logprobs': true")
        if not on:
            return None
        k = 0 if k is None else k
    elif k is None:
        return None
    if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k <= MAX_LOGPROBS:
        raise BadRequest(f"'{name}' must be an integer in [0, {MAX_LOGPROBS}], got {k!r}")
    return k


def _chat_lp(e: TokenLogprob) -> dict[str, Any]:
    return {"token": e.token, "logprob": e.logprob, "bytes": list(e.bytes),
            "top_logprobs": [{"token": t, "logprob": lp, "bytes": list(b)} for t, lp, b in e.top]}  # fmt: skip


def _chat_logprobs(entries: list[TokenLogprob]) -> dict[str, Any]:
    return {"content": [_chat_lp(e) for e in entries], "refusal": None}


def _completion_logprobs(entries: list[TokenLogprob]) -> dict[str, Any]:
    """The legacy format: the top alternatives plus the chosen token (up to k + 1)."""
    return {
        "tokens": [e.token for e in entries],
        "token_logprobs": [e.logprob for e in entries],
        "top_logprobs": [{**{t: lp for t, lp, _ in e.top}, e.token: e.logprob} for e in entries],
        "text_offset": [e.offset for e in entries],
    }


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

    def submit(self, texts: list[str], params: dict[str, Any], on_token: OnToken | None = None):
        """``(completions, logprobs)`` of ``texts`` (already rendered) with ``params``
        (`TransformersBackend.generate_tokens`'s keywords); blocks."""
        return self.submit_async(texts, params, on_token).result()

    def submit_async(
        self, texts: list[str], params: dict[str, Any], on_token: OnToken | None = None
    ) -> Future:
        """Queue a request; ``on_token(i, j, delta, logprob)`` is called as its tokens come."""
        fut: Future = Future()
        sampled_with_seed = params["temperature"] > 0 and params["seed"] is not None
        key = (uuid.uuid4().hex if sampled_with_seed else
               json.dumps({k: v for k, v in params.items() if not (k == "seed" and params["temperature"] == 0)},
                          sort_keys=True))  # fmt: skip
        self._q.put((key, texts, params, on_token, fut))
        return fut

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
        texts = [t for _, ts, *_ in items for t in ts]
        owners = [(cb, k) for _, ts, _, cb, _ in items for k in range(len(ts))]

        def on_token(i: int, j: int, delta: str, lp: Any) -> None:  # to the request's own callback
            cb, k = owners[i]
            if cb is not None:
                cb(k, j, delta, lp)

        streamed = any(cb is not None for _, _, _, cb, _ in items)
        self.batches.append(len(texts))
        try:
            out, lps = self.llm.generate_tokens(texts, **items[0][2],
                                                on_token=on_token if streamed else None)  # fmt: skip
        except Exception as e:  # every waiting request gets the error
            for *_, fut in items:
                fut.set_exception(e)
            return
        k = 0
        for _, ts, _, _, fut in items:
            fut.set_result((out[k : k + len(ts)], None if lps is None else lps[k : k + len(ts)]))
            k += len(ts)


# ------------------------------------------------------------------ the handler


class OpenAIHandler(BaseHTTPRequestHandler):
    server_version = "iclr24-llm"
    llm: Any = None  # set by make_server
    batcher: Batcher | None = None
    served_names: tuple[str, ...] = ()  # set by make_server: the names a request may use

    def log_message(self, fmt, *args):  # through our logger, quietly
        log.debug("%s %s", self.address_string(), fmt % args)

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str, code: str | None = None) -> None:
        self._send(status, {"error": {"message": message, "type": "invalid_request_error",
                                      "param": "model" if code else None, "code": code}})  # fmt: skip

    def _unknown_model(self, body: dict) -> tuple[int, str, str | None] | None:
        """An error for a request whose model is missing or not served, else None."""
        model = body.get("model")
        if not isinstance(model, str) or not model:
            return 400, "you must provide a model parameter (a string)", None
        if model not in self.served_names:
            served = ", ".join(self.served_names)
            return 404, (f"The model '{model}' does not exist: this server serves {served} "
                         "(serve --served-model-name adds aliases)"), "model_not_found"  # fmt: skip
        return None

    def do_GET(self):
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            self._send(200, {"object": "list", "data": [
                {"id": name, "object": "model", "owned_by": "iclr24"}
                for name in self.served_names]})  # fmt: skip
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
            if path not in ROUTES:
                return self._error(404, f"no route {self.path}")
            if (bad := self._unknown_model(body)) is not None:
                return self._error(*bad)
            if path in ("/v1/chat/completions", "/chat/completions"):
                chat, texts = True, [self.llm.render(_messages(body))]
            elif path in ("/v1/completions", "/completions"):
                chat, texts = False, _prompts(body)
                if body.get("echo") and body.get("logprobs") is not None:
                    return self._send(200, self._echo(texts))
                if body.get("echo"):
                    raise BadRequest("echo is only supported with logprobs (prompt scoring)")
            else:
                return self._error(404, f"no route {self.path}")
            params = {**_sampling(body), "logprobs": _top_logprobs(body, chat)}
            if body.get("stream"):
                include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
                return self._stream(chat, texts, params, include_usage)
            groups, lps = self._generate(texts, params).result()
        except (BadRequest, json.JSONDecodeError, ValueError) as e:
            return self._error(400, str(e))
        except Exception as e:  # the client deserves an answer, the log the traceback
            log.exception("request failed")
            return self._error(500, f"{type(e).__name__}: {e}")
        choices, k = [], 0
        for i, group in enumerate(groups):
            for j, c in enumerate(group):
                lp = None if lps is None else lps[i][j]
                if chat:
                    choices.append({"index": k, "message": {"role": "assistant", "content": c.text},
                                    "logprobs": None if lp is None else _chat_logprobs(lp),
                                    "finish_reason": c.finish_reason})  # fmt: skip
                else:
                    choices.append({"index": k, "text": c.text,
                                    "logprobs": None if lp is None else _completion_logprobs(lp),
                                    "finish_reason": c.finish_reason})  # fmt: skip
                k += 1
        self._send(200, {**self._head(chat), "choices": choices, "usage": _usage(groups)})

    def _generate(
        self, texts: list[str], params: dict[str, Any], on_token: OnToken | None = None
    ) -> Future:
        """A future of ``(completions, logprobs)``: through the batcher, else on a thread."""
        if self.batcher is not None:
            return self.batcher.submit_async(texts, params, on_token)
        fut: Future = Future()

        def run() -> None:
            try:
                fut.set_result(self.llm.generate_tokens(texts, **params, on_token=on_token))
            except Exception as e:
                fut.set_exception(e)

        threading.Thread(target=run, daemon=True).start()
        return fut

    def _head(self, chat: bool, chunk: bool = False) -> dict[str, Any]:
        obj = (
            ("chat.completion.chunk" if chunk else "chat.completion") if chat else "text_completion"
        )
        return {"id": f"{'chatcmpl' if chat else 'cmpl'}-{uuid.uuid4().hex[:12]}", "object": obj,
                "created": int(time.time()), "model": self.llm.name}  # fmt: skip

    def _stream(self, chat: bool, texts: list[str], params: dict[str, Any], usage: bool) -> None:
        """Server-sent events as the tokens are generated: a chunk per token that releases
        text (or carries a log-prob), then each choice's last piece and finish reason."""
        events: queue.Queue = queue.Queue()
        fut = self._generate(texts, params, lambda i, j, d, lp: events.put((i, j, d, lp)))
        fut.add_done_callback(lambda _: events.put(None))
        n, head = params["n"], self._head(chat, chunk=True)

        def piece(index: int, text: str, lp: Any = None, finish: str | None = None) -> dict:
            if chat:
                delta = {"content": text} if text or finish is None else {}
                lps = None if lp is None else {"content": [_chat_lp(lp)], "refusal": None}
                return {"index": index, "delta": delta, "logprobs": lps, "finish_reason": finish}
            lps = None if lp is None else _completion_logprobs([lp])
            return {"index": index, "text": text, "logprobs": lps, "finish_reason": finish}

        def send(choices: list[dict], **extra: Any) -> None:
            data = json.dumps({**head, "choices": choices, **extra})
            self.wfile.write(f"data: {data}\n\n".encode())
            self.wfile.flush()

        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        try:
            if chat:
                for k in range(len(texts) * n):
                    send([{"index": k, "delta": {"role": "assistant", "content": ""},
                           "logprobs": None, "finish_reason": None}])  # fmt: skip
            sent: dict[int, str] = {}
            while (item := events.get()) is not None:
                i, j, delta, lp = item
                if delta or lp is not None:
                    sent[i * n + j] = sent.get(i * n + j, "") + delta
                    send([piece(i * n + j, delta, lp)])
            try:
                groups, _ = fut.result()
            except Exception as e:  # headers are out: the error goes in the stream
                log.exception("streamed request failed")
                send([], error={"message": f"{type(e).__name__}: {e}", "type": "server_error"})
                groups = []
            for i, group in enumerate(groups):
                for j, c in enumerate(group):
                    done = sent.get(i * n + j, "")
                    if not c.text.startswith(done):  # cannot happen with prefix-stable decoding
                        log.warning("streamed text %r is not a prefix of %r", done, c.text)
                    rest = c.text[len(done) :] if c.text.startswith(done) else ""
                    send([piece(i * n + j, rest, finish=c.finish_reason)])
            if usage and groups:
                send([], usage=_usage(groups))
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            log.debug("the client closed the stream")

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
        usage = {"prompt_tokens": n_tok, "completion_tokens": 0, "total_tokens": n_tok}
        return {**self._head(False), "choices": choices, "usage": usage}


def _prompts(body: dict[str, Any]) -> list[str]:
    prompt = body.get("prompt")
    prompts = [prompt] if isinstance(prompt, str) else prompt
    if not isinstance(prompts, list) or not prompts or not all(isinstance(p, str) for p in prompts):
        raise BadRequest("'prompt' must be a non-empty string or list of strings")
    if not all(prompts):
        raise BadRequest("'prompt' must not be empty")
    return prompts


def make_server(
    llm: Any, host: str = "127.0.0.1", port: int = 0, *, batch: bool = True,
    window_s: float = 0.02, max_batch: int = 16, served_names: tuple[str, ...] = (),
) -> ThreadingHTTPServer:  # fmt: skip
    """An HTTP server for ``llm`` (a TransformersBackend); port 0 picks a free port. With
    ``batch`` (default) concurrent requests share batched generations (``Batcher``). Requests
    must name ``llm.name`` or one of ``served_names`` (else 404 ``model_not_found``). Run it
    with ``serve_forever()``; its address is ``server.server_address``."""
    batcher = Batcher(llm, window_s=window_s, max_batch=max_batch) if batch else None
    names = tuple(dict.fromkeys((llm.name, *served_names)))
    handler = type("Handler", (OpenAIHandler,),
                   {"llm": llm, "batcher": batcher, "served_names": names})  # fmt: skip
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
