"""The ``paper`` preset end to end on miniature paper data (issue 41), in the exact layout
``load_task`` reads under ``<data-dir>/analogical/``:

- GSM8K ``gsm8k/{train,test}.jsonl``: the release's lines ``{"question", "answer"}``, the
  answer a rationale with ``<<calculator>>`` annotations and a final ``#### N`` line;
- MATH ``math/{train,test}.jsonl``: ``{"problem", "level", "type", "solution"}`` (the
  solution's last ``\\boxed{}`` is the answer);
- BIG-Bench Hard ``bbh/<task>.json``: the release's ``{"examples": [{"input", "target"}]}``.

The paper preset (GSM8K) runs with the offline SmolLM2 (its real LLM branch) on one problem
with an 8-token budget (paper: 1319 problems, 1024 tokens); MATH and a BBH task, which the
paper also reports, run through the same preset with the package's scripted capable model
(the ``llm=scripted`` stub of the existing tests), so the model loads once.
"""

import json

import pytest
from iclr24_analogical.experiment import PRESETS, app

from iclr24_common.testing import run_paper_preset

GSM8K = [  # (question, rationale lines, answer), in the release's style
    ("Natalia sold clips to {a} of her friends in April, and then she sold half as many "
     "clips in May. How many clips did Natalia sell altogether in April and May?",
     ["Natalia sold {a}/2 = <<{a}/2={h}>>{h} clips in May.",
      "Natalia sold {a}+{h} = <<{a}+{h}={t}>>{t} clips altogether in April and May."]),
    ("Weng earns ${a} an hour for babysitting. Yesterday, she just did 2 hours of babysitting."
     " How much did she earn?",
     ["Weng earns {a} * 2 = $<<{a}*2={d}>>{d} for 2 hours.", "So she earned ${d}."]),
]  # fmt: skip


def write_gsm8k(folder, n_train=8, n_test=4):
    folder.mkdir(parents=True)
    for split, n, offset in (("train", n_train, 10), ("test", n_test, 40)):
        rows = []
        for i in range(n):
            q, lines = GSM8K[i % len(GSM8K)]
            a = 2 * (offset + i)
            v = {"a": a, "h": a // 2, "t": a + a // 2, "d": 2 * a}
            answer = v["t"] if i % len(GSM8K) == 0 else v["d"]
            rationale = "\n".join(line.format(**v) for line in lines)
            rows.append({"question": q.format(**v), "answer": f"{rationale}\n#### {answer:,}"})
        (folder / f"{split}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def write_math(folder, n=6):
    folder.mkdir(parents=True)
    for split in ("train", "test"):
        rows = [{"problem": f"What is the value of ${k} + {k}^2$?", "level": "Level 1",
                 "type": "Algebra", "solution": f"We have ${k} + {k}^2 = {k} + {k * k} = "
                 f"\\boxed{{{k + k * k}}}$."} for k in range(2, 2 + n)]  # fmt: skip
        rows[0] = {"problem": "Simplify $\\frac{3}{6}$.", "level": "Level 1", "type": "Prealgebra",
                   "solution": "Divide by 3: $\\frac{3}{6} = \\boxed{\\frac{1}{2}}$."}  # fmt: skip
        (folder / f"{split}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def write_bbh(folder, task="word_sorting", n=4):
    folder.mkdir(parents=True)
    words = ["pear", "apple", "fig", "banana", "kiwi", "cherry", "date", "grape"]
    examples = [{"input": "Sort the following words alphabetically: List: "
                 + " ".join(words[i : i + 4]), "target": " ".join(sorted(words[i : i + 4]))}
                for i in range(n)]  # fmt: skip
    (folder / f"{task}.json").write_text(json.dumps({"canary": "miniature", "examples": examples}))


@pytest.fixture
def data_dir(tmp_path):
    root = tmp_path / "data"
    write_gsm8k(root / "analogical" / "gsm8k")
    write_math(root / "analogical" / "math")
    write_bbh(root / "analogical" / "bbh")
    return root


def test_analogical_paper_path_gsm8k_with_the_offline_model(data_dir, tmp_path):
    paper = PRESETS["paper"]
    assert (paper.task, paper.llm) == ("gsm8k", "local")
    res = run_paper_preset(app, data_dir, tmp_path / "run",
                           sets={"n_test": 1, "max_new_tokens": 8})  # fmt: skip
    assert res["claims"]
    assert res["llm_name"] != "scripted"  # the real local-model branch answered
    for method in paper.methods:
        assert f"llm/{method}/acc" in res["metrics"]
    # the scripted capable model is judged right on the answer read from "#### N" (its
    # chain-of-thought answers do not fit the 8-token cap)
    assert res["metrics"]["scripted/zero_shot/acc"]["mean"] == 1.0


@pytest.mark.parametrize(
    "task, methods",
    [("math", None), ("bbh_word_sorting", "zero_shot,zero_shot_cot,analogical,analogical_random")],
)
def test_analogical_paper_path_math_and_bbh_files(data_dir, tmp_path, task, methods):
    sets = {"task": task, "llm": "scripted", "n_test": 6}
    if methods:  # BBH has no labelled training split (no few-shot / retrieved CoT)
        sets["methods"] = methods
    res = run_paper_preset(app, data_dir, tmp_path / "run", sets=sets)
    assert res["claims"]
    assert res["metrics"]["scripted/analogical/acc"]["mean"] == 1.0
