"""Running generated Python against tests: a sandboxed subprocess, and Acc@k.

Each test is (stdin, expected stdout), as Codeforces problems are judged (paper Sec. 5.1: a
program is correct when it passes every test). The child runs ``python -I`` (no user site, no
environment) in an empty temporary folder with limits on CPU time, address space, file size and
processes; the network is cut with a new network namespace where the kernel allows it, and
otherwise by disabling ``socket`` before the program runs. It is a guard against accidents of
generated code, not a security boundary against a hostile program.
"""

from __future__ import annotations

import ctypes
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from math import comb

from .analogical import CODE_MARKERS
from .answers import answer_region

_NO_NET_PRELUDE = (
    "import socket as _s\n"
    "def _no_net(*a, **k):\n    raise OSError('network disabled in the sandbox')\n"
    "_s.socket = _s.create_connection = _s.getaddrinfo = _no_net\n"
    "del _s, _no_net\n"
)


@dataclass(frozen=True)
class RunResult:
    status: str
    """passed, wrong_answer, runtime_error, timeout, no_code, or no_marker (the analogical
    program without its solution heading: not extracted, scored wrong)."""
    passed: int
    """Tests passed."""
    total: int
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "passed"


def extract_code(text: str, *, require_marker: bool = False) -> str | None:
    """The program in a completion: after the "Python3 code to solve the original problem"
    heading when present (the exemplars before it carry code of their own), the last fenced
    block, else the lines from the first one that looks like code to the end. With
    ``require_marker`` (the analogical prompt, as its math path) a completion without that
    heading has no program at all (``None``, "not extracted"): its code is an exemplar's or the
    model skipped the asked-for knowledge and exemplars, and reading it would credit the
    method with a program it did not write in its own format."""
    region, found = answer_region(text, CODE_MARKERS)
    if require_marker and not found:
        return None
    blocks = re.findall(r"```(?:python3?|py)?[ \t]*\n(.*?)```", region, flags=re.S)
    if blocks:
        return blocks[-1].strip("\n") or None
    lines = region.split("\n")
    start = re.compile(r"^(import |from |def |class |for |while |if |print\(|[A-Za-z_]\w*\s*=|#)")
    for i, line in enumerate(lines):
        if start.match(line):
            return "\n".join(lines[i:]).split("```")[0].strip("\n") or None
    return None


def _limits(seconds: float, memory_mb: int):
    def apply():  # runs in the child, before exec
        import resource

        cpu = max(1, int(seconds) + 1)
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
        mem = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))
        os.setsid()
        try:  # CLONE_NEWNET: an empty network namespace (needs privileges; else the prelude)
            ctypes.CDLL(None, use_errno=True).unshare(0x40000000)
        except Exception:
            pass

    return apply


def _same_output(got: str, want: str) -> bool:
    """Judge's comparison: tokens equal, ignoring trailing spaces and blank lines."""
    return got.split() == want.split()


def run_program(
    code: str | None,
    tests: list[tuple[str, str]],
    *,
    seconds: float = 2.0,
    memory_mb: int = 256,
) -> RunResult:
    """Run ``code`` on each test's stdin; passed when every stdout matches."""
    if not code or not code.strip():
        return RunResult("no_code", 0, len(tests))
    passed = 0
    with tempfile.TemporaryDirectory(prefix="analogical-run-") as tmp:
        path = os.path.join(tmp, "main.py")
        with open(path, "w") as f:
            f.write(_NO_NET_PRELUDE + code + "\n")
        for stdin, want in tests:
            try:
                proc = subprocess.run([sys.executable, "-I", path], input=stdin, text=True,
                                      capture_output=True, timeout=seconds, cwd=tmp, env={},
                                      preexec_fn=_limits(seconds, memory_mb))  # fmt: skip
            except subprocess.TimeoutExpired:
                return RunResult("timeout", passed, len(tests), f"over {seconds} s")
            if proc.returncode != 0:
                err = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
                return RunResult("runtime_error", passed, len(tests), err[:200])
            if not _same_output(proc.stdout, want):
                return RunResult("wrong_answer", passed, len(tests), proc.stdout[:200])
            passed += 1
    return RunResult("passed", passed, len(tests))


def acc_at_k(n: int, c: int, k: int) -> float:
    """Acc@k of a problem with c correct among n samples: the chance that at least one of k
    samples drawn from the n is correct (the unbiased pass@k of Chen et al. 2021; with k = n,
    "at least one of the k sampled outputs is correct", the paper's definition)."""
    if not 1 <= k <= n:
        raise ValueError(f"need 1 <= k <= n, got k={k}, n={n}")
    return 1.0 - (comb(n - c, k) / comb(n, k) if n - c >= k else 0.0)
