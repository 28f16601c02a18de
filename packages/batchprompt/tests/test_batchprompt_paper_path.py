"""The ``paper`` preset end to end on miniature paper data (issue 41), through its real LLM
branch: an OpenAI-compatible HTTP model (``--llm openai:gpt-4o-mini@<url>``), free generation
with verbal confidence and the answer parser. The model behind the URL is a local stand-in
server answering with the package's position-biased simulator (the stub of the existing
tests), so the run takes seconds offline. Data, in the exact layouts the loader reads:

- BoolQ (the paper preset's task): ``batchprompt/boolq/validation.jsonl``, Hugging Face
  ``super_glue/boolq`` validation saved with ``to_json`` (question, passage, idx, label);
- RTE: ``batchprompt/rte/dev.tsv``, GLUE's own ``RTE/dev.tsv`` (header ``index sentence1
  sentence2 label``, labels entailment / not_entailment).

``--set`` caps only sizes: 8 points instead of 320, 32 simulator points instead of 320; the
batch sizes (1, 16, 32, 64), 9 votes and SEAS at 32 and 64 stay the paper preset's.
"""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from iclr24_batchprompt.data import BOOLQ, RTE, load_paper_task
from iclr24_batchprompt.experiment import PRESETS, app
from iclr24_batchprompt.simulate import PositionBias, simulated_llm

from iclr24_common.testing import run_paper_preset

N = 12
BOOLQ_ROWS = [{"question": f"is the river number {k} longer than the lake",
               "passage": f"River {k} is a river in the north. It is {10 + k} km long and "
                          f"the lake beside it is {20 - 2 * k} km long.",
               "idx": k, "label": int(10 + k > 20 - 2 * k)} for k in range(N)]  # fmt: skip
RTE_ROWS = [(k, f"The company {k} hired {k + 3} engineers in {2000 + k}.",
             f"The company {k} hired engineers." if k % 2 == 0
             else f"The company {k} fired all its engineers.",
             "entailment" if k % 2 == 0 else "not_entailment") for k in range(N)]  # fmt: skip


def write_data(root):
    boolq = root / "batchprompt" / "boolq" / "validation.jsonl"
    boolq.parent.mkdir(parents=True)
    boolq.write_text("".join(json.dumps(r) + "\n" for r in BOOLQ_ROWS))
    rte = root / "batchprompt" / "rte" / "dev.tsv"
    rte.parent.mkdir(parents=True)
    rte.write_text("index\tsentence1\tsentence2\tlabel\n"
                   + "".join("\t".join(map(str, r)) + "\n" for r in RTE_ROWS))  # fmt: skip


def stand_in_server():
    """A chat-completions endpoint whose answers come from the position-biased simulator
    for every BoolQ and RTE point written above (labels read back through the loader's
    conventions: BoolQ 1 = yes, RTE 0 = entailment)."""
    sims = [
        simulated_llm(BOOLQ, {r["passage"]: r["label"] for r in BOOLQ_ROWS}, PositionBias(),
                      key="passage"),
        simulated_llm(RTE, {r[1]: int(r[3] != "entailment") for r in RTE_ROWS}, PositionBias(),
                      key="premise"),
    ]  # fmt: skip

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            messages = body["messages"]
            texts = [s.generate([messages], max_new_tokens=body.get("max_tokens", 256))[0][0].text
                     for s in sims]  # fmt: skip
            text = next((t for t in texts if t), "OK")
            words = sum(len(m["content"].split()) for m in messages)
            out = {"id": "x", "object": "chat.completion", "model": body["model"],
                   "choices": [{"index": 0, "finish_reason": "stop",
                                "message": {"role": "assistant", "content": text}}],
                   "usage": {"prompt_tokens": words, "completion_tokens": len(text.split())}}  # fmt: skip
            data = json.dumps(out).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    ).start()
    return httpd, f"http://127.0.0.1:{httpd.server_address[1]}/v1"


@pytest.fixture
def server():
    httpd, url = stand_in_server()
    yield url
    httpd.shutdown()
    httpd.server_close()


def test_glue_rte_tsv_is_read_with_superglue_label_ids(tmp_path):
    write_data(tmp_path)
    items = load_paper_task(tmp_path, "rte")
    assert [it["label"] for it in items[:2]] == ["0", "1"]  # entailment = class 0
    assert items[0]["premise"] == RTE_ROWS[0][1] and items[1]["hypothesis"] == RTE_ROWS[1][2]


@pytest.mark.parametrize("task", ["boolq", "rte"])
def test_batchprompt_paper_path_over_http(tmp_path, server, task):
    paper = PRESETS["paper"]
    assert paper.task == "boolq" and paper.llm.startswith("openai:gpt-4o-mini@")
    write_data(tmp_path / "data")
    sets = {"llm": f"openai:gpt-4o-mini@{server}", "n_items": 8, "sim_items": 32}
    if task != paper.task:
        sets["task"] = task  # the paper's RTE runs (--set task=rte)
    res = run_paper_preset(app, tmp_path / "data", tmp_path / "run", sets=sets)
    assert res["claims"]
    m = res["metrics"]
    for b in paper.batch_sizes:
        assert f"llm/bs{b}/v1/acc" in m
    # the stand-in answers through the real parser: SinglePrompt is right on most points
    assert m["llm/bs1/v1/acc"]["mean"] >= 0.5
