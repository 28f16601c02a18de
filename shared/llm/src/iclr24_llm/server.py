"""``iclr24-llm serve``: a local backend behind the OpenAI HTTP protocol on 127.0.0.1, so
the HTTP path (``OpenAICompatBackend``) runs end to end offline.

Endpoints: ``GET /v1/models``, ``GET /health``, ``POST /v1/chat/completions`` (messages,
n, temperature, top_p, max_tokens, stop, seed) and ``POST /v1/completions`` (a string or
a list of strings; with ``echo`` and ``logprobs`` it returns the prompt tokens' log-probs
and generates nothing, which is what ``score_choices`` asks for). Requests are served one
at a time by the model (threads only overlap the I/O).
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from iclr24_common.logs import get_logger

from .base import Completion

log = get_logger("llm.serve")


class BadRequest(ValueError):
    pass


def _stop(body: dict[str, Any]) -> list[str] | None:
    stop = body.get("stop")
    if stop is None:
        return None
    return [stop] if isinstance(stop, str) else [str(s) for s in stop]


def _sampling(body: dict[str, Any]) -> dict[str, Any]:
    try:
        return dict(
            n=int(body.get("n") or 1),
            temperature=float(body.get("temperature", 1.0)),  # the OpenAI API's default
            top_p=float(body.get("top_p", 1.0)),
            max_new_tokens=int(body.get("max_tokens") or body.get("max_completion_tokens") or 256),
            stop=_stop(body),
            seed=None if body.get("seed") is None else int(body["seed"]),
        )
    except (TypeError, ValueError) as e:
        raise BadRequest(f"bad sampling parameter: {e}") from None


def _usage(groups: list[list[Completion]]) -> dict[str, int]:
    p = sum(g[0].prompt_tokens for g in groups if g)
    c = sum(x.completion_tokens for g in groups for x in g)
    return {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}


class OpenAIHandler(BaseHTTPRequestHandler):
    server_version = "iclr24-llm"
    llm: Any = None  # set by make_server

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
                payload = self._chat(body)
            elif path in ("/v1/completions", "/completions"):
                payload = self._completions(body)
            else:
                return self._error(404, f"no route {self.path}")
        except (BadRequest, json.JSONDecodeError, ValueError) as e:
            return self._error(400, str(e))
        except Exception as e:  # the client deserves an answer, the log the traceback
            log.exception("request failed")
            return self._error(500, f"{type(e).__name__}: {e}")
        self._send(200, payload)

    def _envelope(self, kind: str, choices: list, groups: list[list[Completion]]) -> dict:
        return {
            "id": f"{kind}-{uuid.uuid4().hex[:12]}",
            "object": "chat.completion" if kind == "chatcmpl" else "text_completion",
            "created": int(time.time()),
            "model": self.llm.name,
            "choices": choices,
            "usage": _usage(groups),
        }

    def _chat(self, body: dict[str, Any]) -> dict[str, Any]:
        msgs = body.get("messages")
        if not isinstance(msgs, list) or not msgs:
            raise BadRequest("'messages' must be a non-empty list")
        if any(not isinstance(m, dict) or "role" not in m or "content" not in m for m in msgs):
            raise BadRequest("each message needs 'role' and 'content'")
        [group] = self.llm.generate([msgs], **_sampling(body))
        choices = [
            {"index": i, "message": {"role": "assistant", "content": c.text},
             "finish_reason": c.finish_reason}
            for i, c in enumerate(group)
        ]  # fmt: skip
        return self._envelope("chatcmpl", choices, [group])

    def _completions(self, body: dict[str, Any]) -> dict[str, Any]:
        prompt = body.get("prompt")
        prompts = [prompt] if isinstance(prompt, str) else prompt
        if not isinstance(prompts, list) or not all(isinstance(p, str) for p in prompts):
            raise BadRequest("'prompt' must be a string or a list of strings")
        if body.get("echo") and body.get("logprobs") is not None:
            return self._echo(prompts)
        groups = self.llm.generate_raw(prompts, **_sampling(body))
        choices, k = [], 0
        for group in groups:
            for c in group:
                choices.append({"index": k, "text": c.text, "logprobs": None,
                                "finish_reason": c.finish_reason})  # fmt: skip
                k += 1
        return self._envelope("cmpl", choices, groups)

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


def make_server(llm: Any, host: str = "127.0.0.1", port: int = 0) -> ThreadingHTTPServer:
    """An HTTP server for ``llm`` (a TransformersBackend); port 0 picks a free port.
    Run it with ``serve_forever()``; its address is ``server.server_address``."""
    handler = type("Handler", (OpenAIHandler,), {"llm": llm})
    httpd = ThreadingHTTPServer((host, port), handler)
    httpd.daemon_threads = True
    return httpd


def start_in_thread(llm: Any, host: str = "127.0.0.1", port: int = 0):
    """Start a server on a daemon thread; returns ``(server, base_url)``."""
    httpd = make_server(llm, host, port)
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True).start()
    h, p = httpd.server_address[:2]
    return httpd, f"http://{h}:{p}/v1"
