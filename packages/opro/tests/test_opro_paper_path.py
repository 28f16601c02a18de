"""The ``paper`` preset end to end on a miniature GSM8K (issue 41), in both layouts the loader
reads under ``<data-dir>/gsm8k/``: the official repository's ``gsm_data/gsm_train.tsv``
(``question<TAB>answer``, no header, the answer a bare number) for the training split and
the Hugging Face release's ``test.jsonl`` (question / answer with ``<<calculator>>``
annotations and a final ``#### N`` line) for the test split. The optimizer and the scorer are
the paper preset's offline SmolLM2 (its real ``llm=local`` branch, loaded once). ``--set``
caps only sizes: one repetition (paper preset: 5), one LLM step on regression, TSP and
prompts (paper preset: 500 / 500 / 200), 2 proposals per step on regression and TSP and one
instruction on prompts (8), 2 TSP samples (64),
8 new tokens per optimizer and scorer reply (1024), 2 test questions, 40 scripted steps and
baseline evaluations. GSM8K's official 3.5 % training split of the 40 training questions
is the one question scored.
"""

import json

from iclr24_opro.data import load_gsm8k
from iclr24_opro.experiment import PRESETS, app

from iclr24_common.testing import run_paper_preset


def problem(k: int) -> tuple[str, str, int]:
    a, b = 3 + k, 2 + k % 5
    q = (f"Tom has {a} boxes with {b} apples in each box. He eats 1 apple. "
         "How many apples are left?")  # fmt: skip
    rationale = f"Tom has {a}*{b} = <<{a}*{b}={a * b}>>{a * b} apples.\n{a * b}-1 = <<{a * b}-1={a * b - 1}>>{a * b - 1} are left."
    return q, rationale, a * b - 1


def write_gsm8k(folder, n_train=40, n_test=6):
    folder.mkdir(parents=True)
    lines = [f"{q}\t{ans}" for q, _, ans in map(problem, range(n_train))]
    (folder / "gsm_train.tsv").write_text("\n".join(lines) + "\n")
    rows = [{"question": q, "answer": f"{r}\n#### {ans}"}
            for q, r, ans in map(problem, range(100, 100 + n_test))]  # fmt: skip
    (folder / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


SIZE_CAPS = {
    "seeds": "0",
    "linreg_steps": 1,
    "tsp_steps": 1,
    "linreg_per_step": 2,
    "tsp_per_step": 2,
    "tsp_max_samples": 2,
    "llm_max_new_tokens": 8,
    "scripted_steps": 40,
    "scripted_tsp_steps": 40,
    "baseline_max_evaluations": 40,
    "prompt_steps": 1,
    "prompt_per_step": 1,
    "prompt_max_new_tokens": 8,
    "scorer_max_new_tokens": 8,
    "prompt_max_test": 2,
}


def test_opro_paper_path_gsm8k_with_the_offline_model(tmp_path):
    paper = PRESETS["paper"]
    assert (paper.prompt_task, paper.llm, paper.scorer) == ("gsm8k", "local", "local")
    write_gsm8k(tmp_path / "data" / "gsm8k")
    train, test = load_gsm8k(tmp_path / "data", "train"), load_gsm8k(tmp_path / "data", "test")
    assert (len(train), len(test)) == (40, 6) and test[0].target == str(problem(100)[2])
    res = run_paper_preset(app, tmp_path / "data", tmp_path / "run", sets=SIZE_CAPS)
    assert res["claims"]
    assert res["llm_name"] != "scripted"
    info = res["prompt_optimisation"]["seed0"]
    assert (info["task"], info["train"], info["test"]) == ("gsm8k", 1, 2)
