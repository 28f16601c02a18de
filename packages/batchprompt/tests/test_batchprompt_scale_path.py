"""The scale path: a paper's run through `--llm openai:<model>@<url>` against a server, the
same path a vLLM or Ollama server takes. The test starts `iclr24-llm serve` (SmolLM2, one
thread) and runs a capped smoke through it (slow: loads the model)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow
pytest.importorskip("transformers", reason="serve needs the local backend")

from iclr24_batchprompt.experiment import app  # noqa: E402

from iclr24_common.data import MissingDataError  # noqa: E402
from iclr24_common.testing import run_paper_preset  # noqa: E402


@pytest.fixture(scope="module")
def server():
    from iclr24_llm.local import smollm2_gguf_path

    try:
        smollm2_gguf_path()
    except MissingDataError as e:  # pragma: no cover - depends on the environment
        pytest.skip(f"the offline model is not installed (iclr24-llm fetch): {e}")
    proc = subprocess.Popen(
        [sys.executable, "-m", "iclr24_llm.cli", "serve", "--port", "0", "--threads", "1",
         "--served-model-name", "local"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        line = proc.stdout.readline()
        assert " at http://127.0.0.1:" in line, line
        yield line.split(" at ")[1].split()[0]
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_smoke_through_a_served_model(server, tmp_path):
    spec = f"openai:local@{server}"
    res = run_paper_preset(app, tmp_path / "data", tmp_path / "run", preset="smoke",
                           sets={"seeds": 0, "llm": spec, "n_items": 2, "seas_batch_sizes": 1,
                                 "batch_sizes": (1, 2), "votes": 1, "sim_items": 16},
                           extra=["--set", "seas_batch_sizes=2"])  # fmt: skip
    assert res["llm"] == spec and res["config"]["llm"] == spec
    m = res["metrics"]
    # every call went to the server and was booked with the server's own token counts
    for p, planned in (("llm/bs1/v1", 2), ("llm/bs2/v1", 1)):  # + the re-asks of lost labels
        assert m[f"{p}/calls"]["mean"] - m[f"{p}/reasks"]["mean"] == planned
    assert m["llm/bs2/seas/calls"]["mean"] >= 1 and m["llm/bs2/seas-official/calls"]["mean"] >= 1
    assert m["llm/bs1/v1/prompt_tokens"]["mean"] > 100  # the chat-rendered prompt
    assert {c["id"] for c in res["claims"]} >= {"naive-batching-costs-accuracy",
                                                 "bpe-seas-vs-single"}  # fmt: skip
    checks = {c["id"]: c for c in res["checks"]}
    assert "batching-saves-tokens" not in checks  # a batch of 2 cannot halve the tokens
    assert checks["tokens-app-f-formula"]["holds"], checks["tokens-app-f-formula"]["measured"]
    assert json.loads((tmp_path / "run" / "run_config.json").read_text())


def test_an_unknown_model_name_stops_the_run_at_once(server, tmp_path, capsys):
    code = app.main(["reproduce", "--preset", "smoke", "--llm", f"openai:gpt-4o@{server}",
                     "--out", str(tmp_path / "run"), "--seeds", "0"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "404" in err and "gpt-4o" in err
