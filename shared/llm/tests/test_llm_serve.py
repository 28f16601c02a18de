"""`iclr24-llm serve` with the local SmolLM2, through OpenAICompatBackend and through the
official `openai` client: the same answers as the backend itself, streaming (SSE), clear
400s, the one score_choices definition round-tripped, and concurrent requests batched
with nothing lost or mixed up (slow: loads the model)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import urllib.request

import pytest

from iclr24_common.data import MissingDataError

pytestmark = pytest.mark.slow

pytest.importorskip("transformers", reason="the local backend needs transformers")
pytest.importorskip("gguf", reason="reading the SmolLM2 GGUF needs gguf")
openai = pytest.importorskip("openai", reason="the official client is in the test group")

from iclr24_llm import LLMError, OpenAICompatBackend, load_llm  # noqa: E402
from iclr24_llm.local import smollm2_gguf_path  # noqa: E402
from iclr24_llm.server import start_in_thread  # noqa: E402

try:
    smollm2_gguf_path()
except MissingDataError as e:  # pragma: no cover - depends on the environment
    pytest.skip(
        f"the offline model is not installed (iclr24-llm fetch): {e}", allow_module_level=True
    )

QUESTION = "What is the capital of France?"


@pytest.fixture(scope="module")
def local():
    return load_llm("local")


@pytest.fixture(scope="module")
def server(local):
    httpd, url = start_in_thread(local)
    yield url, httpd
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def client(server):
    return openai.OpenAI(base_url=server[0], api_key="unused", max_retries=0, timeout=60)


def test_chat_round_trip_equals_the_local_backend(local, server):
    remote = OpenAICompatBackend(server[0], local.name, max_retries=0)
    prompts = [QUESTION, "Name a fruit."]
    via_http = remote.generate(prompts, max_new_tokens=12)
    direct = local.generate(prompts, max_new_tokens=12)
    assert via_http == direct  # text, token counts (from usage) and finish reasons
    assert "Paris" in via_http[0][0].text


def test_seeded_samples_and_stop_strings_survive_the_round_trip(local, server):
    remote = OpenAICompatBackend(server[0], local.name, max_retries=0)
    kw = dict(n=3, temperature=1.0, max_new_tokens=10, seed=7)
    via_http = remote.generate(["Tell me a story."], **kw)[0]
    direct = local.generate(["Tell me a story."], **kw)[0]
    assert [(c.text, c.finish_reason) for c in via_http] == [
        (c.text, c.finish_reason) for c in direct
    ]
    assert len({c.text for c in direct}) > 1
    assert remote.usage.snapshot().completion_tokens == sum(c.completion_tokens for c in direct)
    [[c]] = remote.generate([QUESTION], max_new_tokens=20, stop=["Paris"])
    assert c.finish_reason == "stop" and "Paris" not in c.text


def test_score_choices_is_one_definition_across_backends(local, server):
    """The same numbers from the local backend and over HTTP (/v1/completions echo)."""
    remote = OpenAICompatBackend(server[0], local.name, endpoint="completions", max_retries=0)
    prompt = "The capital of France is"
    choices = [" Paris", " London", " a banana"]
    scores = remote.score_choices(prompt, choices)
    assert scores == pytest.approx(local.score_choices(prompt, choices), abs=1e-3)
    assert scores[0] > scores[1] > scores[2]
    local.chat = False
    try:
        [[raw]] = local.generate([prompt], max_new_tokens=8)
    finally:
        local.chat = True
    [[c]] = remote.generate([prompt], max_new_tokens=8)
    assert c.text == raw.text


def test_official_client_chat_completions_and_completion_streaming(local, client):
    [[direct]] = local.generate([QUESTION], max_new_tokens=12)
    r = client.chat.completions.create(model=local.name, max_tokens=12, temperature=0,
                                       messages=[{"role": "user", "content": QUESTION}])  # fmt: skip
    assert r.choices[0].message.content == direct.text
    assert r.usage.completion_tokens == direct.completion_tokens
    comp = client.completions.create(model=local.name, prompt="The capital of France is",
                                     max_tokens=8, temperature=0, stream=True)  # fmt: skip
    streamed = "".join(c.choices[0].text for c in comp)
    whole = client.completions.create(model=local.name, prompt="The capital of France is",
                                      max_tokens=8, temperature=0)  # fmt: skip
    assert streamed == whole.choices[0].text


def test_generated_token_logprobs_chat_and_completions(local, client):
    """Chat: content[k] = {token, logprob, bytes, top_logprobs}; completions: tokens,
    token_logprobs, top_logprobs (k alternatives + the chosen), text_offset; the same
    numbers as the backend's generate_tokens (itself tested against a separate forward)."""
    msgs = [{"role": "user", "content": QUESTION}]
    r = client.chat.completions.create(model=local.name, max_tokens=6, temperature=0,
                                       messages=msgs, logprobs=True, top_logprobs=2)  # fmt: skip
    (ref,), lps = local.generate_tokens([local.render(QUESTION)], max_new_tokens=6, logprobs=2)
    content = r.choices[0].logprobs.content
    assert r.choices[0].message.content == ref[0].text
    assert [(x.token, list(x.bytes)) for x in content] == [
        (e.token, list(e.bytes)) for e in lps[0][0]
    ]
    assert [x.logprob for x in content] == pytest.approx([e.logprob for e in lps[0][0]], abs=1e-5)
    assert bytes(b for x in content for b in x.bytes).decode() == ref[0].text
    for x in content:  # greedy: the chosen token is the most likely one
        assert len(x.top_logprobs) == 2 and x.top_logprobs[0].token == x.token
        assert x.top_logprobs[0].logprob == pytest.approx(x.logprob)
        assert x.logprob >= x.top_logprobs[1].logprob
    prompt = "The capital of France is"
    c = client.completions.create(model=local.name, prompt=prompt, max_tokens=6, temperature=0,
                                  logprobs=1)  # fmt: skip
    lp = c.choices[0].logprobs
    (raw,), raw_lps = local.generate_tokens([prompt], max_new_tokens=6, logprobs=1)
    assert "".join(lp.tokens) == c.choices[0].text == raw[0].text
    assert lp.token_logprobs == pytest.approx([e.logprob for e in raw_lps[0][0]], abs=1e-5)
    assert lp.text_offset == [len("".join(lp.tokens[:k])) for k in range(len(lp.tokens))]
    assert all(t in top and len(top) == 1 for t, top in zip(lp.tokens, lp.top_logprobs))


def test_streams_token_by_token_as_generated(local, client, monkeypatch):
    """The first text chunk arrives before the generation has finished; the chunks join to
    the non-streamed answer (greedy), their log-probs too; a stop string is never shown."""
    finished = []
    real = local.generate_tokens

    def timed(*a, **kw):
        out = real(*a, **kw)
        finished.append(time.perf_counter())
        return out

    monkeypatch.setattr(local, "generate_tokens", timed)
    msgs = [{"role": "user", "content": "Count from 1 to 30, separated by commas."}]
    kw = dict(model=local.name, max_tokens=16, temperature=0, messages=msgs, logprobs=True)
    whole = client.chat.completions.create(**kw)
    first, chunks = None, []
    stream = client.chat.completions.create(
        **kw, stream=True, stream_options={"include_usage": True}
    )
    for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content and first is None:
            first = time.perf_counter()
        chunks.append(chunk)
    assert first is not None and first < finished[-1], "the first chunk waited for the end"
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == whole.choices[0].message.content and len(chunks) > 10
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "length"
    assert chunks[-1].usage.completion_tokens == whole.usage.completion_tokens == 16
    streamed = [x.logprob for c in chunks if c.choices and c.choices[0].logprobs
                for x in c.choices[0].logprobs.content]  # fmt: skip
    assert streamed == pytest.approx([x.logprob for x in whole.choices[0].logprobs.content])
    stop = dict(model=local.name, max_tokens=10, temperature=0, stop=["Paris."],
                messages=[{"role": "user", "content": QUESTION}])  # fmt: skip
    cut = client.chat.completions.create(**stop).choices[0].message.content
    pieces = [c.choices[0].delta.content or "" for c in client.chat.completions.create(**stop, stream=True)
              if c.choices]  # fmt: skip
    assert "".join(pieces) == cut and "Paris" not in "".join(pieces)


@pytest.mark.parametrize(
    "kind, body, message",
    [
        ("chat", {"n": 0}, "'n' must be >= 1"),
        ("chat", {"max_tokens": 0}, "'max_tokens' must be >= 1"),
        ("chat", {"messages": [{"role": "wizard", "content": "hi"}]}, "unknown role"),
        ("chat", {"messages": [{"role": "user", "content": None}]}, "must be a string"),
        ("chat", {"messages": []}, "non-empty list"),
        ("chat", {"top_logprobs": 2}, "needs 'logprobs': true"),
        ("chat", {"logprobs": True, "top_logprobs": 21}, r"in \[0, 20\]"),
        ("chat", {"temperature": 3}, "temperature"),
        ("completions", {"prompt": ""}, "must not be empty"),
        ("completions", {"prompt": []}, "non-empty"),
        ("completions", {"prompt": "Hi", "logprobs": -1}, r"in \[0, 20\]"),
        ("completions", {"prompt": "Hi", "max_tokens": 0}, "'max_tokens' must be >= 1"),
    ],
)
def test_bad_requests_are_400_for_the_official_client(client, local, kind, body, message):
    with pytest.raises(openai.BadRequestError, match=message):
        if kind == "chat":
            client.chat.completions.create(**{"model": local.name, "max_tokens": 4,
                                              "messages": [{"role": "user", "content": "Hi"}], **body})  # fmt: skip
        else:
            client.completions.create(**{"model": local.name, "max_tokens": 4, **body})


def test_an_unknown_model_is_404_model_not_found_and_a_missing_one_400(client, local):
    msgs = [{"role": "user", "content": "Hi"}]
    with pytest.raises(openai.NotFoundError) as e:
        client.chat.completions.create(model="gpt-4o", max_tokens=4, messages=msgs)
    assert e.value.code == "model_not_found" and "gpt-4o" in str(e.value)
    with pytest.raises(openai.NotFoundError):
        client.completions.create(model="local", max_tokens=4, prompt="Hi")  # no alias given
    with pytest.raises(openai.BadRequestError, match="model parameter"):
        client.chat.completions.create(model="", max_tokens=4, messages=msgs)
    assert [m.id for m in client.models.list()] == [local.name]


def test_unknown_route_and_backend_errors(local, server):
    remote = OpenAICompatBackend(server[0], local.name, max_retries=0)
    with pytest.raises(LLMError, match="HTTP 404"):
        remote.post("embeddings", {"input": "x"})


def test_concurrent_requests_are_batched_and_none_is_mixed_up(local, server):
    """8 clients at once: each gets exactly the answer of a request sent alone."""
    url, httpd = server
    prompts = [f"Name one animal whose name starts with the letter {c}." for c in "ABCDEFGH"]
    alone = {p: local.generate([p], max_new_tokens=10)[0][0].text for p in prompts}
    remote = OpenAICompatBackend(url, local.name, max_retries=0)
    got, before = {}, len(httpd.batcher.batches)

    def ask(p):
        got[p] = remote.generate([p], max_new_tokens=10)[0][0].text

    threads = [threading.Thread(target=ask, args=(p,)) for p in prompts]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == alone, "every client must get its own prompt's answer"
    sizes = httpd.batcher.batches[before:]
    assert sum(sizes) == len(prompts) and max(sizes) > 1, sizes  # batched, nothing lost


def test_cli_serve_subprocess(tmp_path):
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "iclr24_llm.cli", "serve", "--port", "0", "--threads", "1",
         "--served-model-name", "local"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
    )  # fmt: skip
    try:
        line = proc.stdout.readline()
        assert line.startswith("serving SmolLM2-135M-Instruct at http://127.0.0.1:"), line
        url = line.split(" at ")[1].split()[0]
        assert "(model names: SmolLM2-135M-Instruct, local)" in line, line
        with urllib.request.urlopen(f"{url}/models", timeout=10) as r:
            assert [m["id"] for m in json.load(r)["data"]] == ["SmolLM2-135M-Instruct", "local"]
        for name in ("SmolLM2-135M-Instruct", "local"):  # the alias answers the same
            llm = load_llm(f"openai:{name}@{url}", max_retries=0)
            [[c]] = llm.generate([QUESTION], max_new_tokens=8)
            assert "Paris" in c.text and c.prompt_tokens > 0 and c.completion_tokens > 0
        with pytest.raises(LLMError, match="404"):
            load_llm(f"openai:gpt-4o@{url}", max_retries=0).generate(["Hi"], max_new_tokens=2)
    finally:
        proc.terminate()
        proc.wait(timeout=20)
