"""The sandboxed runner's paths and Acc@k; the paper's own Codeforces output, run."""

import importlib.util
from pathlib import Path

import pytest
from iclr24_analogical import CODE_PROBLEMS, acc_at_k, extract_code, run_code_method, run_program

from iclr24_llm import ScriptedBackend

_spec = importlib.util.spec_from_file_location(
    "analogical_paper_appendix", Path(__file__).with_name("analogical_paper_appendix.py")
)
D = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(D)


def test_runner_paths():
    tests = [("2 3\n", "5\n")]
    assert run_program("a, b = map(int, input().split())\nprint(a + b)", tests).ok
    assert run_program("print(6)", tests).status == "wrong_answer"
    assert run_program("while True:\n    pass", tests, seconds=0.5).status == "timeout"
    err = run_program("raise SystemExit(3)", tests)
    assert err.status == "runtime_error"
    assert run_program(None, tests).status == "no_code"
    mem = run_program("x = bytearray(2 * 1024**3)\nprint(5)", tests, memory_mb=128)
    assert mem.status == "runtime_error" and "MemoryError" in mem.detail
    net = run_program("import socket\nsocket.create_connection(('127.0.0.1', 9))", tests)
    assert net.status == "runtime_error"


def test_reference_programs_pass_their_tests():
    for p in CODE_PROBLEMS:
        assert run_program(p.reference, list(p.tests)).ok, p.name


def test_the_papers_output_extracted_and_run():
    code = extract_code(D.CODE_OUTPUT)
    assert code.startswith("# Read the number of test cases") and "def smallest_k" not in code
    tests = [("2\n6\n2 2 1 2 1 2\n3\n1 2 1\n", "2\n-1\n"), ("1\n4\n1 1 1 1\n", "1\n")]
    assert run_program(code, tests).ok


def test_extract_code_fenced_after_marker():
    text = ("## Example Problems:\n```python\nprint(1)\n```\n## Python3 code to solve the "
            "original problem:\n- Explanation\n```python\nprint(2)\n```")  # fmt: skip
    assert extract_code(text) == "print(2)"
    assert extract_code("Just words here.") is None


def test_acc_at_k():
    assert acc_at_k(10, 0, 1) == 0.0 and acc_at_k(10, 10, 1) == 1.0
    assert acc_at_k(10, 3, 1) == pytest.approx(0.3)
    assert acc_at_k(10, 1, 10) == 1.0  # at least one of the 10 is correct
    assert acc_at_k(4, 2, 2) == pytest.approx(1 - 1 / 6)
    with pytest.raises(ValueError):
        acc_at_k(3, 1, 4)


def test_the_analogical_program_is_read_only_after_its_heading():
    # issue 49: as on the math path, an analogical completion without the "Python3 code to
    # solve the original problem" heading is not extracted (scored wrong), not read whole
    p = CODE_PROBLEMS[0]
    bare = f"```python\n{p.reference}\n```"
    headed = ("## Example Problems:\n```python\nprint(1)\n```\n## Python3 code to solve the "
              "original problem:\n" + bare)  # fmt: skip
    assert extract_code(bare, require_marker=True) is None and extract_code(bare) == p.reference
    assert extract_code(headed, require_marker=True) == p.reference
    kw = dict(samples=1, k=1, temperature=0.0, max_new_tokens=200, seed=0, seconds=2.0)
    s, records = run_code_method(ScriptedBackend(lambda _: bare), "analogical", [p], **kw)
    assert (s["acc1"], s["no_code_rate"], s["no_marker_rate"]) == (0.0, 1.0, 1.0)
    assert records[0]["statuses"] == ["no_marker"]
    s, _ = run_code_method(ScriptedBackend(lambda _: bare), "zero_shot", [p], **kw)
    assert (s["acc1"], s["no_code_rate"], s["truncated_rate"]) == (1.0, 0.0, 0.0)
    s, _ = run_code_method(ScriptedBackend(lambda _: headed), "analogical", [p], **kw)
    assert (s["acc1"], s["no_marker_rate"], s["truncated_rate"]) == (1.0, 0.0, 0.0)
    # a program stopped by the budget is counted as cut (the premise within-budget/code_*)
    s, records = run_code_method(ScriptedBackend(lambda _: headed), "analogical", [p],
                                 **{**kw, "max_new_tokens": 5})  # fmt: skip
    assert s["truncated_rate"] == 1.0 and records[0]["truncated"] == [True]
