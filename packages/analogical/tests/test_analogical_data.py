"""Generated problems (exact answers, worked rationales) and the paper's local loaders."""

import json
import re

import pytest
from iclr24_analogical import FAMILIES, load_task, make_split, make_word_problems, numeric_equal

from iclr24_common import MissingDataError


def test_families_have_exact_answers_and_rationales():
    probs = make_word_problems(8 * 25, seed=3)
    assert {p.family for p in probs} == set(FAMILIES)
    for p in probs:
        assert re.fullmatch(r"\d+", p.answer), p  # positive integers
        assert p.rationale.endswith(f"The answer is {p.answer}.")
        # every product / sum the rationale states is right
        for a, op, b, c in re.findall(r"(\d+) ([x+\-/]) (\d+) = (\d+)", p.rationale):
            a, b, c = int(a), int(b), int(c)
            assert {"x": a * b, "+": a + b, "-": a - b, "/": a / b}[op] == c, p.rationale


def test_generation_is_seeded_and_split_disjoint():
    assert make_word_problems(10, 1) == make_word_problems(10, 1)
    assert make_word_problems(10, 1) != make_word_problems(10, 2)
    pool, test = make_split(5, 16, seed=0)
    assert len(pool) == 5 * len(FAMILIES) and 0 < len(test) <= 16
    assert not {p.question for p in pool} & {p.question for p in test}
    with pytest.raises(ValueError):
        make_word_problems(3, 0, families=("nope",))


def test_paper_loaders(tmp_path):
    root = tmp_path / "analogical"
    (root / "gsm8k").mkdir(parents=True)
    (root / "gsm8k" / "test.jsonl").write_text(json.dumps(
        {"question": "2+2?", "answer": "2+2=<<2+2=4>>4\n#### 1,004"}) + "\n")  # fmt: skip
    g = load_task(tmp_path, "gsm8k")
    assert g[0].answer == "1004" and numeric_equal("1,004", g[0].answer)
    (root / "math").mkdir()
    (root / "math" / "test.jsonl").write_text(json.dumps(
        {"problem": "p", "solution": "so \\boxed{\\frac{1}{2}}.", "type": "Algebra"}) + "\n")  # fmt: skip
    m = load_task(tmp_path, "math")
    assert (m[0].answer, m[0].kind) == ("\\frac{1}{2}", "latex")
    (root / "bbh").mkdir()
    (root / "bbh" / "formal_fallacies.json").write_text(json.dumps(
        {"examples": [{"input": "arg", "target": "valid"}]}))  # fmt: skip
    b = load_task(tmp_path, "bbh_formal_fallacies")
    assert (b[0].answer, b[0].kind) == ("valid", "option")
    (root / "code").mkdir()
    (root / "code" / "test.jsonl").write_text(json.dumps(
        {"statement": "s", "tests": [["1\n", "1\n"]]}) + "\n")  # fmt: skip
    assert load_task(tmp_path, "code")[0].tests == (("1\n", "1\n"),)
    with pytest.raises(MissingDataError, match="BIG-Bench Hard word_sorting"):
        load_task(tmp_path, "bbh_word_sorting")
    with pytest.raises(MissingDataError, match="MATH"):
        load_task(tmp_path, "math", "train")
