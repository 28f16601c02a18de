"""OpenAICompatBackend against a small stdlib HTTP server on 127.0.0.1 (no network)."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from iclr24_llm import CachedLLM, LLMError, OpenAICompatBackend, load_llm


class FakeServer:
    """Answers each POST with ``respond(path, body, attempt) -> (status, headers, json)``."""

    def __init__(self, respond):
        self.respond = respond
        self.requests: list[tuple[str, dict, dict]] = []
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with fake._lock:
                    fake.requests.append((self.path, body, dict(self.headers)))
                    attempt = len(fake.requests)
                status, headers, payload = fake.respond(self.path, body, attempt)
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client timed out
                    pass

            def log_message(self, *a):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def chat_reply(texts, usage=None, finish="stop"):
    out = {
        "choices": [
            {"index": i, "message": {"role": "assistant", "content": t}, "finish_reason": finish}
            for i, t in enumerate(texts)
        ]
    }
    if usage is not None:
        out["usage"] = usage
    return out


def words(s: str) -> int:
    return len(s.split())


def client(url, **kw):
    kw.setdefault("count_text_tokens", words)
    kw.setdefault("backoff", 0.01)
    return OpenAICompatBackend(url, "test-model", **kw)


def test_n3_in_one_request_with_usage_headers_and_extra_fields(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    usage = {"prompt_tokens": 11, "completion_tokens": 6, "total_tokens": 17}

    def respond(path, body, attempt):
        return 200, {}, chat_reply([f"sample {i}" for i in range(body["n"])], usage)

    with FakeServer(respond) as srv:
        llm = client(srv.url, extra_body={"top_k": 20}, system="Be brief.")
        [group] = llm.generate(["Hi?"], n=3, temperature=0.7, max_new_tokens=9, seed=5)
    assert [c.text for c in group] == ["sample 0", "sample 1", "sample 2"]
    assert all(c.prompt_tokens == 11 and c.finish_reason == "stop" for c in group)
    path, body, headers = srv.requests[0]
    assert len(srv.requests) == 1 and path == "/v1/chat/completions"
    assert body["n"] == 3 and body["model"] == "test-model" and body["max_tokens"] == 9
    assert body["temperature"] == 0.7 and body["seed"] == 5 and body["top_k"] == 20
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi?"},
    ]
    assert headers["Authorization"] == "Bearer sk-test"
    assert llm.usage.as_dict() == {
        "calls": 3, "prompt_tokens": 11, "completion_tokens": 6, "cache_hits": 0,
        "total_tokens": 17,
    }  # fmt: skip


def test_a_server_that_ignores_n_is_asked_again_with_new_seeds():
    def respond(path, body, attempt):
        return 200, {}, chat_reply([f"draw {body['seed']}"], {"prompt_tokens": 4,
                                                              "completion_tokens": 2})  # fmt: skip

    with FakeServer(respond) as srv:
        [group] = client(srv.url).generate(["q"], n=3, temperature=1.0, seed=10)
    assert [c.text for c in group] == ["draw 10", "draw 11", "draw 12"]
    assert [r[1]["n"] for r in srv.requests] == [3, 2, 1]
    assert all(c.completion_tokens == 2 for c in group)


def test_429_then_200_honours_retry_after():
    def respond(path, body, attempt):
        if attempt == 1:
            return 429, {"Retry-After": "0.5"}, {"error": {"message": "rate limited"}}
        return 200, {}, chat_reply(["ok"], {"prompt_tokens": 3, "completion_tokens": 1})

    arrived = []

    def timed(path, body, attempt):
        arrived.append(time.monotonic())
        return respond(path, body, attempt)

    with FakeServer(timed) as srv:
        [[c]] = client(srv.url, max_retries=2).generate(["q"])
    assert c.text == "ok" and len(srv.requests) == 2
    # the retry came after the server's Retry-After (the backoff, 0.01 s, alone would not wait)
    assert arrived[1] - arrived[0] >= 0.5


def test_5xx_retries_with_backoff_then_gives_up_with_the_servers_message():
    def respond(path, body, attempt):
        return 503, {}, {"error": {"message": "overloaded"}}

    with FakeServer(respond) as srv:
        with pytest.raises(LLMError, match=r"HTTP 503.*overloaded.*3 attempts"):
            client(srv.url, max_retries=2).generate(["q"])
    assert len(srv.requests) == 3


def test_a_client_error_is_not_retried():
    def respond(path, body, attempt):
        return 400, {}, {"error": {"message": "unknown model"}}

    with FakeServer(respond) as srv:
        with pytest.raises(LLMError, match="HTTP 400.*unknown model"):
            client(srv.url, max_retries=3).generate(["q"])
    assert len(srv.requests) == 1


def test_missing_usage_falls_back_to_the_local_counter():
    def respond(path, body, attempt):
        return 200, {}, chat_reply(["one two three", "four five"], usage=None, finish="length")

    with FakeServer(respond) as srv:
        llm = client(srv.url)
        [group] = llm.generate(["alpha beta"], n=2)
    # prompt counted over "user: alpha beta"; completions word by word
    assert [(c.prompt_tokens, c.completion_tokens, c.finish_reason) for c in group] == [
        (3, 3, "length"),
        (3, 2, "length"),
    ]
    assert llm.usage.snapshot().completion_tokens == 5


def test_timeout_gives_a_clear_error():
    release = threading.Event()  # the server answers only once the client has given up

    def respond(path, body, attempt):
        release.wait(60)
        return 200, {}, chat_reply(["late"])

    with FakeServer(respond) as srv:
        try:
            with pytest.raises(LLMError, match=r"within the timeout of 0.3 s.*2 attempts"):
                client(srv.url, timeout=0.3, max_retries=1).generate(["q"])
        finally:
            release.set()
    assert len(srv.requests) == 2  # both attempts were sent and both timed out


def test_an_unreachable_server_is_a_clear_error():
    with FakeServer(lambda *a: (200, {}, {})) as srv:
        url = srv.url
    with pytest.raises(LLMError, match="cannot reach"):
        client(url, max_retries=0).generate(["q"])


def test_requests_run_concurrently():
    # every request waits until all four are in the server at once: sent one after another,
    # the first would wait alone and fail
    together = threading.Barrier(4, timeout=30)

    def respond(path, body, attempt):
        try:
            together.wait()
        except threading.BrokenBarrierError:
            return 400, {}, {"error": {"message": "requests were not sent concurrently"}}
        return 200, {}, chat_reply([body["messages"][-1]["content"].upper()])

    with FakeServer(respond) as srv:
        out = client(srv.url, max_concurrency=4, max_retries=0).generate(["a", "b", "c", "d"])
    assert [g[0].text for g in out] == ["A", "B", "C", "D"]  # order kept


def test_completions_endpoint_and_scoring_by_echo():
    """A fake model where each character is a token with log-prob -1 (-0.5 for vowels)."""

    def respond(path, body, attempt):
        if body.get("echo"):
            choices = []
            for i, text in enumerate(body["prompt"]):
                lps = [None] + [-0.5 if ch in "aeiou" else -1.0 for ch in text[1:]]
                choices.append({"index": i, "text": text + "!", "logprobs": {
                    "tokens": list(text), "token_logprobs": lps,
                    "text_offset": list(range(len(text)))}})  # fmt: skip
            return 200, {}, {"choices": choices, "usage": {"prompt_tokens": 9}}
        return 200, {}, {"choices": [{"index": 0, "text": body["prompt"][::-1],
                                      "finish_reason": "stop"}]}  # fmt: skip

    with FakeServer(respond) as srv:
        llm = client(srv.url, endpoint="completions")
        [[c]] = llm.generate(["abc"])
        scores = llm.score_choices("Q: ", ["ae", "xyz", ""])
        with pytest.raises(LLMError, match="string prompt"):
            llm.score_choices([{"role": "user", "content": "x"}], ["a"])
    assert c.text == "cba" and srv.requests[0][0] == "/v1/completions"
    assert scores == [-1.0, -3.0, 0.0]
    assert len(srv.requests) == 2  # all choices in one scoring request


def test_cache_answers_without_a_request(tmp_path):
    def respond(path, body, attempt):
        return 200, {}, chat_reply([f"answer {attempt}"], {"prompt_tokens": 2,
                                                           "completion_tokens": 2})  # fmt: skip

    with FakeServer(respond) as srv:
        llm = load_llm(f"openai:test-model@{srv.url}", cache_dir=tmp_path, count_text_tokens=words)
        first = llm.generate(["q1", "q2"])
        second = llm.generate(["q1", "q2"])
    assert first == second and len(srv.requests) == 2
    assert isinstance(llm, CachedLLM) and llm.usage.snapshot().cache_hits == 2


def test_open_llm_probes_a_server_once_and_turns_a_refusal_into_one_usage_line(tmp_path):
    from iclr24_common.errors import UsageError
    from iclr24_llm import open_llm

    def respond(path, body, attempt):
        if body["model"] != "served":
            return 404, {}, {"error": {"message": "The model does not exist",
                                       "code": "model_not_found"}}  # fmt: skip
        return 200, {}, chat_reply(["OK"])

    with FakeServer(respond) as srv:
        llm = open_llm(f"openai:served@{srv.url}", threads=1, backoff=0.01, count_text_tokens=words)
        assert llm.name == "served" and len(srv.requests) == 1  # the probe, nothing else
        assert srv.requests[0][1]["max_tokens"] == 4
        with pytest.raises(UsageError, match=r"^--scorer openai:gpt-4o@.*404"):
            open_llm(
                f"openai:gpt-4o@{srv.url}",
                threads=1,
                what="--scorer",
                backoff=0.01,
                count_text_tokens=words,
            )
    with pytest.raises(UsageError, match="bad LLM spec"):
        open_llm("no-such-model-or-path", threads=1)
    with pytest.raises(UsageError, match="does not answer"):  # nothing listens on port 9
        open_llm("openai:m@http://127.0.0.1:9/v1", threads=1, backoff=0.01, timeout=2)
