"""The experiment protocol: presets and their overrides, the run directory, resume, exit codes."""

import json
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field
from typing import Literal

import pytest

from iclr24_common import (
    Check,
    Claim,
    ExperimentApp,
    Metrics,
    Paper,
    Report,
    UsageError,
    available_cores,
    preset_option,
    threshold,
)
from iclr24_common.experiment import coerce

PAPER = Paper(title="Demo paper", authors="A & B", arxiv="0000.00000")


@dataclass(frozen=True)
class Train:
    epochs: int = 3
    lr: float = 0.1


@dataclass(frozen=True)
class Preset:
    seeds: tuple[int, ...] = (0,)
    threshold: float = -1.0
    widths: tuple[int, ...] = (4, 8)
    mode: Literal["fast", "slow"] = "fast"
    limit: int | None = None
    flag: bool = False
    datasets: tuple[str, ...] = ("a",)
    train: Train = field(default_factory=Train)

    def __post_init__(self):
        if self.train.epochs < 1:
            raise ValueError("train.epochs must be >= 1")
        if self.limit is not None and self.limit < self.train.epochs:
            raise ValueError("limit must be >= train.epochs")


PRESETS = {"smoke": Preset(), "default": Preset(seeds=(0, 1, 2, 3, 4)), "paper": Preset()}


def default_run(ctx):
    m = Metrics()
    for s in ctx.seeds:
        m.add("demo/value", s, ctx.cached(f"seed{s}", lambda s=s: 0.5 + s))
        ctx.save_partial(m)
    p = ctx.preset
    claim = Claim(id="big", statement="value is big", paper="n/a", measured=m.fmt("demo/value"),
                  test=threshold(m.by_seed("demo/value"), threshold=p.threshold))  # fmt: skip
    check = Check(id="config-read", statement="the run read the overridden preset",
                  measured=str(p.train.epochs), criterion="epochs >= 1", holds=p.train.epochs >= 1,
                  why="__post_init__ refuses epochs < 1")  # fmt: skip
    return Report(m, [claim], [check])


def add_arguments(parser):
    preset_option(parser, "--threshold", field="threshold", type=float)
    preset_option(parser, "--epochs", field="train.epochs", type=int)


def make_app(run=None, **kw):
    return ExperimentApp(package="iclr24-demo", version="0.1.0", paper=PAPER, presets=PRESETS,
                         run=run or default_run, add_arguments=add_arguments, **kw)  # fmt: skip


def reproduce(app, tmp_path, *argv):
    return app.main(["reproduce", "--device", "cpu", "--out", str(tmp_path), *argv])


def test_reproduce_writes_results_config_and_checks(tmp_path, capsys):
    assert reproduce(make_app(), tmp_path, "--preset", "smoke", "--seeds", "0", "1") == 0
    res = json.loads((tmp_path / "results.json").read_text())
    assert res["seeds"] == [0, 1] and res["preset"] == "smoke" and res["device"] == "cpu"
    assert res["config"]["seeds"] == [0, 1] and res["config"]["train"] == {"epochs": 3, "lr": 0.1}
    assert res["threads"] == available_cores()
    assert res["metrics"]["demo/value"]["mean"] == 1.0
    assert [c["id"] for c in res["claims"]] == ["big"] and res["checks"][0]["id"] == "config-read"
    assert res["paper"]["title"] == "Demo paper" and res["units"] == {"reused": 0, "computed": 2}
    md = (tmp_path / "results.md").read_text()
    assert (
        "## Claims (1 hold, 0 fail, 0 inconclusive (of 1))" in md
        and "## Checks (1 of 1 pass)" in md
    )
    assert (tmp_path / "log.txt").read_text() and (tmp_path / "partial_results.json").exists()
    out = capsys.readouterr().out
    assert "claims: 1 hold, 0 fail, 0 inconclusive (of 1)" in out and "config-read" in out


def test_preset_options_reach_the_run(tmp_path):
    seen = {}

    def run(ctx):
        seen["preset"] = ctx.preset
        return default_run(ctx)

    app = make_app(run)
    argv = ["--epochs", "7", "--threshold", "2", "--set", "widths=1,2,3", "--set", "mode=slow",
            "--set", "limit=none", "--set", "flag=yes", "--set", "train.lr=0.5"]  # fmt: skip
    assert reproduce(app, tmp_path, *argv) == 0
    p = seen["preset"]
    assert (p.train.epochs, p.train.lr, p.threshold) == (7, 0.5, 2.0)
    assert (p.widths, p.mode, p.limit, p.flag) == ((1, 2, 3), "slow", None, True)
    res = json.loads((tmp_path / "results.json").read_text())
    assert res["config"]["train"]["epochs"] == 7 and res["config"]["threshold"] == 2.0


def test_print_config_shows_the_resolved_preset(capsys):
    app = make_app()
    assert app.main(["reproduce", "--preset", "default", "--epochs", "9", "--print-config"]) == 0
    cfg = json.loads(capsys.readouterr().out)
    assert cfg["preset"] == "default" and cfg["seeds"] == [0, 1, 2, 3, 4]
    assert cfg["train"]["epochs"] == 9


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--epochs", "0"], "train.epochs must be >= 1"),
        (["--set", "widths=a"], "not a int"),
        (["--set", "mode=medium"], "must be one of fast, slow"),
        (["--set", "flag=maybe"], "not a boolean"),
        (["--set", "train=3"], "group of fields"),
        (["--set", "train.nope=3"], "unknown preset field"),
        (["--download", "--preset", "paper"], "--download"),
    ],
)
def test_bad_overrides_are_one_line_exit_2(argv, message, tmp_path, capsys):
    assert reproduce(make_app(), tmp_path, *argv) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1, err


def test_overrides_are_validated_once_after_all_of_them(tmp_path, capsys):
    # limit=2 alone breaks "limit >= train.epochs" (3); with train.epochs=1 it is valid, in
    # either order. The final values are still checked, naming what was applied.
    app = make_app()
    for argv in (["--set", "limit=2", "--set", "train.epochs=1"],
                 ["--set", "train.epochs=1", "--set", "limit=2"]):  # fmt: skip
        assert app.main(["reproduce", *argv, "--print-config"]) == 0
        assert json.loads(capsys.readouterr().out)["limit"] == 2
    assert reproduce(app, tmp_path, "--set", "limit=2") == 2
    err = capsys.readouterr().err
    assert "limit must be >= train.epochs" in err and "--set limit=2" in err, err


def test_download_only_with_the_paper_preset(tmp_path, capsys):
    app = make_app(download="the demo set through a library")
    assert reproduce(app, tmp_path, "--download") == 2
    assert "use it with --preset paper" in capsys.readouterr().err
    assert reproduce(app, tmp_path, "--download", "--preset", "paper") == 0


def test_coerce_types():
    assert coerce("3", int) == 3 and coerce("0.5", float) == 0.5 and coerce("x", str) == "x"
    assert coerce("1,2", tuple[int, ...]) == (1, 2) and coerce("1 2", list[float]) == [1.0, 2.0]
    assert coerce("none", int | None) is None and coerce("4", int | None) == 4
    assert coerce("3,x", tuple[int, str]) == (3, "x")
    with pytest.raises(ValueError):
        coerce("1", tuple[int, str])


def test_strict_exit_1_only_when_a_claim_fails(tmp_path):
    assert reproduce(make_app(), tmp_path, "--threshold", "100") == 0
    assert reproduce(make_app(), tmp_path, "--threshold", "100", "--strict") == 1
    assert reproduce(make_app(), tmp_path, "--threshold", "0", "--strict") == 0


def test_preset_seeds_are_the_default(tmp_path):
    reproduce(make_app(), tmp_path / "a", "--preset", "smoke")
    assert json.loads((tmp_path / "a" / "results.json").read_text())["seeds"] == [0]
    reproduce(make_app(), tmp_path / "b")
    assert json.loads((tmp_path / "b" / "results.json").read_text())["seeds"] == [0, 1, 2, 3, 4]


def test_resume_reuses_units_and_a_fresh_run_forgets_them(tmp_path, monkeypatch):
    calls = []

    def run(ctx):
        m = Metrics()
        for s in ctx.seeds:
            m.add("v", s, ctx.cached(f"seed{s}", lambda s=s: calls.append(s) or float(s)))
        return Report(m, [Claim(id="c", statement="", paper="", measured="",
                                test=threshold(m.by_seed("v"), threshold=-1.0))])  # fmt: skip

    app = make_app(run)
    monkeypatch.setenv("ICLR24_INTERRUPT_AFTER_UNITS", "2")
    assert reproduce(app, tmp_path) == 130  # Ctrl-C after two finished seeds
    monkeypatch.delenv("ICLR24_INTERRUPT_AFTER_UNITS")
    assert calls == [0, 1]
    assert reproduce(app, tmp_path, "--resume") == 0
    assert calls == [0, 1, 2, 3, 4]  # seeds 0 and 1 were read back
    res = json.loads((tmp_path / "results.json").read_text())
    assert res["units"] == {"reused": 2, "computed": 3} and res["metrics"]["v"]["mean"] == 2.0
    assert reproduce(app, tmp_path) == 0  # without --resume everything runs again
    assert calls[5:] == [0, 1, 2, 3, 4]


def test_resume_refuses_a_changed_configuration(tmp_path, capsys):
    assert reproduce(make_app(), tmp_path, "--epochs", "3") == 0
    assert reproduce(make_app(), tmp_path, "--epochs", "4", "--resume") == 2
    err = capsys.readouterr().err
    assert "another configuration" in err and "train" in err
    assert reproduce(make_app(), tmp_path, "--resume", "--seeds", "0", "9") == 0  # seeds may change
    assert reproduce(make_app(), tmp_path, "--resume", "--set", "datasets=a,b") == 0  # datasets too
    assert reproduce(make_app(), tmp_path, "--resume", "--set", "widths=4") == 2


@pytest.mark.parametrize(
    "argv, message",
    [
        (["reproduce", "--preset", "huge"], "invalid choice"),
        (["reproduce", "--seeds", "x"], "seeds must be non-negative integers"),
        (["reproduce", "--seeds", "-3"], "seeds must be non-negative integers"),
        (["reproduce", "--seeds", "1", "1"], "duplicates"),
        (["reproduce", "--threads", "0"], "must be an integer >= 1"),
        (["reproduce", "--device", "quantum"], "unknown device"),
        (["reproduce", "--out", "/proc/no/such/dir"], "cannot write to --out"),
        ([], "required"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(argv, message, capsys):
    with pytest.raises(SystemExit) as e:
        code = make_app().main(argv)
        raise SystemExit(code)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_usage_error_from_run_is_exit_2(tmp_path, capsys):
    def run(ctx):
        raise UsageError("--foo must be positive")

    assert reproduce(make_app(run), tmp_path) == 2
    assert "--foo must be positive" in capsys.readouterr().err


def test_interrupt_keeps_partial_results(tmp_path):
    def run(ctx):
        m = Metrics()
        m.add("demo/value", 0, 1.0)
        ctx.save_partial(m)
        raise KeyboardInterrupt

    assert reproduce(make_app(run), tmp_path) == 130
    partial = json.loads((tmp_path / "partial_results.json").read_text())
    assert partial["metrics"]["demo/value"]["per_seed"] == [1.0]
    assert "reproduce" in (tmp_path / "log.txt").read_text()


def test_cpu_only_package_rejects_cuda(tmp_path, capsys):
    app = make_app(uses_torch=False)
    assert app.main(["reproduce", "--device", "cuda", "--out", str(tmp_path)]) == 2
    assert "CPU only" in capsys.readouterr().err


def test_threads_are_applied_to_torch_and_blas(tmp_path):
    script = textwrap.dedent(f"""
        import json, torch
        from threadpoolctl import threadpool_info
        import iclr24_common.experiment as e
        from test_common_experiment import make_app
        assert make_app().main(["reproduce", "--device", "cpu", "--threads", "1",
                                "--out", {str(tmp_path)!r}]) == 0
        print(json.dumps([torch.get_num_threads(), [i["num_threads"] for i in threadpool_info()]]))
        """)  # fmt: skip
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120, cwd=str(__import__("pathlib").Path(__file__).parent))  # fmt: skip
    assert out.returncode == 0, out.stderr
    torch_threads, blas = json.loads(out.stdout.strip().splitlines()[-1])
    assert torch_threads == 1 and set(blas) == {1}
    assert json.loads((tmp_path / "results.json").read_text())["threads"] == 1


def test_preset_threads_cap_applies_unless_threads_given(tmp_path, monkeypatch):
    import iclr24_common.app as e  # where the reproduce command applies the thread count

    asked = []
    monkeypatch.setattr(e, "set_threads", lambda n=None: asked.append(n) or (n or 2))

    @dataclass(frozen=True)
    class OneThread(Preset):
        threads: int | None = 1

    app = ExperimentApp(package="iclr24-demo", version="0.1.0", paper=PAPER,
                        presets={**PRESETS, "default": OneThread()}, run=default_run,
                        add_arguments=add_arguments)  # fmt: skip
    assert reproduce(app, tmp_path / "a") == 0
    assert json.loads((tmp_path / "a" / "results.json").read_text())["threads"] == 1
    assert reproduce(app, tmp_path / "b", "--threads", "2") == 0
    assert reproduce(app, tmp_path / "c", "--preset", "smoke") == 0
    assert asked == [1, 2, None]


def test_progress_without_tty_logs_lines(tmp_path):
    script = textwrap.dedent(
        """
        import time
        from iclr24_common import progress
        for _ in progress(range(3), desc="work", every_s=0.0):
            time.sleep(0.01)
        bar = progress(desc="manual", total=2, every_s=0.0)
        bar.update(); bar.set_postfix(loss=0.25); bar.update(); bar.close()
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "work: 3/3" in out.stderr
    assert "manual: 2/2" in out.stderr and "loss=0.25" in out.stderr


def test_progress_logs_the_final_count_once():
    script = "from iclr24_common import progress\nfor _ in progress(range(2), desc='once', every_s=0.0): pass\n"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.stderr.count("once: 2/2") == 1, out.stderr


def test_log_lines_follow_the_current_stderr(capsys):
    from iclr24_common import get_logger

    get_logger("demo").info("first")
    assert "first" in capsys.readouterr().err
    get_logger("demo").info("second")  # a new capture stream: still reached, no logging error
    err = capsys.readouterr().err
    assert "second" in err and "Logging error" not in err


def test_cached_parallel_runs_units_in_processes_and_resumes(tmp_path):
    import functools
    import logging
    import os

    from iclr24_common.experiment import RunContext

    def context(resume):
        return RunContext(package="iclr24-demo", preset_name="smoke", preset=Preset(),
                          device="cpu", threads=2, out_dir=tmp_path, data_dir=tmp_path,
                          download=False, resume=resume, strict=False, args=None,
                          log=logging.getLogger("test"))  # fmt: skip

    jobs = {f"u{k}": functools.partial(pow, 2, k) for k in range(4)}
    first = context(False)
    assert first.cached_parallel(jobs) == {"u0": 1, "u1": 2, "u2": 4, "u3": 8}
    assert (first.units_computed, first.units_reused) == (4, 0)
    pids = context(False).cached_parallel({"a": os.getpid, "b": os.getpid})
    assert os.getpid() not in pids.values()  # the units ran in worker processes
    again = context(True)
    assert again.cached_parallel(jobs) == {"u0": 1, "u1": 2, "u2": 4, "u3": 8}
    assert (again.units_computed, again.units_reused) == (0, 4)
    serial = context(False)
    serial.threads = 1  # one core: the units run here, in order
    assert serial.cached_parallel({"a": os.getpid}) == {"a": os.getpid()}


def test_torch_threads_is_scoped():
    import torch

    from iclr24_common import torch_threads

    before = torch.get_num_threads()
    with torch_threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    with pytest.raises(RuntimeError), torch_threads(1):
        raise RuntimeError("the count is restored on errors too")
    assert torch.get_num_threads() == before


def test_the_protocol_names_stay_importable_from_experiment():
    """experiment.py is split by role (context, overrides, app, executors, errors) and
    re-exports every name it had before the split."""
    import iclr24_common
    import iclr24_common.experiment as e

    names = ("Check Claim Command DeviceError ExperimentApp INTERRUPT_ENV Metrics "
             "MissingDataError MissingDependencyError PRESET_DEST Paper RUNS_FILE Report "
             "RunContext UsageError _Parser _check_writable _escape _positive_int _record_run "
             "_seed_list atomic_write_bytes atomic_write_json available_cores claims_table coerce "
             "count_verdicts data_dir field_type get_logger git_commit is_main_process "
             "log_to_file preset_option progress replace_field resolve_device save_figure "
             "set_threads to_jsonable write_results").split()  # fmt: skip
    assert [n for n in names if not hasattr(e, n)] == []
    for n in ("Command", "ExperimentApp", "MissingDependencyError", "Paper", "Report",
              "RunContext", "UsageError", "preset_option"):  # fmt: skip
        assert getattr(iclr24_common, n) is getattr(e, n)
