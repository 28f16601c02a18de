import json
import subprocess
import sys
import textwrap

import pytest

from iclr24_common import Claim, Metrics, Report, ReproduceApp, UsageError


def make_app(run=None, **kw):
    def default_run(ctx):
        m = Metrics()
        for s in ctx.seeds:
            m.add("demo/value", s, 0.5 + s)
            ctx.save_partial(m)
        threshold = ctx.args.threshold
        return Report(
            m,
            [
                Claim(
                    "big",
                    "value is big",
                    "n/a",
                    m.fmt("demo/value"),
                    f"mean >= {threshold}",
                    m.mean("demo/value") >= threshold,
                )
            ],
        )

    def add_arguments(p):
        p.add_argument("--threshold", type=float, default=0.0)

    return ReproduceApp(
        package="iclr24-demo",
        version="0.1.0",
        paper={"title": "Demo", "arxiv": "0"},
        presets=["smoke", "default", "paper"],
        run=run or default_run,
        add_arguments=add_arguments,
        **kw,
    )


def test_reproduce_writes_results_and_prints_claims(tmp_path, capsys):
    out = tmp_path / "run"
    assert (
        make_app().main(
            [
                "reproduce",
                "--preset",
                "smoke",
                "--seeds",
                "0",
                "1",
                "--device",
                "cpu",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    res = json.loads((out / "results.json").read_text())
    assert res["seeds"] == [0, 1] and res["preset"] == "smoke" and res["device"] == "cpu"
    assert res["metrics"]["demo/value"]["mean"] == 1.0
    assert (out / "results.md").exists() and (out / "log.txt").read_text()
    assert (out / "partial_results.json").exists()
    assert "big" in capsys.readouterr().out


def test_strict_exit_1_only_when_a_claim_fails(tmp_path):
    args = ["reproduce", "--device", "cpu", "--seeds", "0", "--out", str(tmp_path)]
    assert make_app().main(args + ["--threshold", "100"]) == 0
    assert make_app().main(args + ["--threshold", "100", "--strict"]) == 1
    assert make_app().main(args + ["--threshold", "0", "--strict"]) == 0


def test_preset_default_seeds(tmp_path):
    app = make_app(default_seeds={"smoke": [0], "default": [0, 1, 2, 3, 4]})
    app.main(["reproduce", "--preset", "smoke", "--device", "cpu", "--out", str(tmp_path / "a")])
    assert json.loads((tmp_path / "a" / "results.json").read_text())["seeds"] == [0]
    app.main(["reproduce", "--device", "cpu", "--out", str(tmp_path / "b")])
    assert json.loads((tmp_path / "b" / "results.json").read_text())["seeds"] == [0, 1, 2, 3, 4]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["reproduce", "--preset", "huge"], "invalid choice"),
        (["reproduce", "--seeds", "x"], "seeds must be non-negative integers"),
        (["reproduce", "--seeds", "-3"], "seeds must be non-negative integers"),
        (["reproduce", "--seeds", "1", "1"], "duplicates"),
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

    assert make_app(run).main(["reproduce", "--device", "cpu", "--out", str(tmp_path)]) == 2
    assert "--foo must be positive" in capsys.readouterr().err


def test_interrupt_keeps_partial_results(tmp_path):
    def run(ctx):
        m = Metrics()
        m.add("demo/value", 0, 1.0)
        ctx.save_partial(m)
        raise KeyboardInterrupt

    assert make_app(run).main(["reproduce", "--device", "cpu", "--out", str(tmp_path)]) == 130
    partial = json.loads((tmp_path / "partial_results.json").read_text())
    assert partial["metrics"]["demo/value"]["per_seed"] == [1.0]
    assert "reproduce" in (tmp_path / "log.txt").read_text()


def test_cpu_only_package_rejects_cuda(tmp_path, capsys):
    app = make_app(uses_torch=False)
    assert app.main(["reproduce", "--device", "cuda", "--out", str(tmp_path)]) == 2
    assert "CPU only" in capsys.readouterr().err


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
