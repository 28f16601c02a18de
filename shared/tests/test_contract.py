"""The command-line contract, once for every folder under packages/.

Each package's ``iclr24-<slug> reproduce`` must: print its help, turn bad input into one line
and exit 2, stop with a MissingDataError before any work when the paper preset's data is
absent, refuse --download where it has nothing to fetch, run its paper preset in a test of
its own, finish the smoke preset with a complete results.json, and reuse every finished unit
with --resume.

No test here compares a wall time with a budget: what else runs on the machine would decide
it. The smoke's speed is a benchmark (``make bench-smoke``); the tests only guard against a
gross regression, on CPU seconds and several times the budget (``SMOKE_CPU_GUARD_S``).

``ICLR24_PACKAGES="deer smnn"`` restricts the packages (a CI leg tests the one it installed);
by default every folder under packages/ is tested and must be installed.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from iclr24_common import ExperimentApp, is_timing_metric, load_results
from iclr24_common.context import PARALLEL_FILE, _escape
from iclr24_common.results import VERDICTS_VERSION, contract_problems

ROOT = Path(__file__).resolve().parents[2]
ALL = sorted(p.name for p in (ROOT / "packages").iterdir() if (p / "pyproject.toml").exists())
SELECTED = os.environ.get("ICLR24_PACKAGES", "").replace(",", " ").split() or ALL
# A gross-regression guard, not a budget: the smoke's budget is 60 s wall on 2 cores (timed
# alone by `make bench-smoke`); its CPU seconds (all threads, this machine's load aside) may
# not pass 5x that.
SMOKE_CPU_GUARD_S = 300.0


def assert_v4(slug: str, res: dict) -> None:
    """Every claim says what it can tell about the paper (CONTRIBUTING.md, "What a verdict can
    tell"): its regime (and what the paper's effect needs below it), a source for every margin,
    premises apart, a no-op control on every non-inferiority, item-level SE on a shared test
    set."""
    assert res.get("verdicts_version") == VERDICTS_VERSION, f"{slug}: claims predate verdicts v4"
    problems = contract_problems(res, v4=True)
    assert not problems, f"{slug}: " + "; ".join(problems)


def module_name(slug: str) -> str:
    return f"iclr24_{slug.replace('-', '_')}.experiment"


def load_app(slug: str) -> ExperimentApp:
    try:
        mod = importlib.import_module(module_name(slug))
    except ModuleNotFoundError as e:
        pytest.fail(f"iclr24-{slug} is not installed here ({e}); sync it, or set ICLR24_PACKAGES")
    app = getattr(mod, "app", None)
    assert isinstance(app, ExperimentApp), f"{module_name(slug)} must define app = ExperimentApp..."
    assert mod.main == app.main, "the console script target `main` must be app.main"
    return app


@pytest.fixture(params=SELECTED, scope="module")
def slug(request) -> str:
    return request.param


def run_main(app: ExperimentApp, argv: list[str], capsys) -> tuple[int, str, str]:
    try:
        code = app.main(argv)
    except SystemExit as e:  # argparse: --help, bad choices
        code = e.code
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def test_layout_and_presets(slug):
    app = load_app(slug)
    assert {"smoke", "default", "paper"} <= set(app.presets)
    assert app.paper.title and app.paper.authors and (app.paper.arxiv or app.paper.openreview)
    pkg = ROOT / "packages" / slug
    src = pkg / "src" / f"iclr24_{slug.replace('-', '_')}"
    for role in ("__init__.py", "experiment.py", "claims.py", f"{slug.replace('-', '_')}.py"):
        assert (src / role).exists(), f"{slug}: missing {role} (see CONTRIBUTING.md, layout)"
    assert not (src / "cli.py").exists(), f"{slug}: the CLI is experiment.app, not cli.py"
    scripts = (pkg / "pyproject.toml").read_text()
    assert f'iclr24-{slug} = "{module_name(slug)}:main"' in scripts


def test_help_names_the_paper(slug, capsys):
    app = load_app(slug)
    code, out, _ = run_main(app, ["reproduce", "--help"], capsys)
    assert code == 0 and "--preset" in out and "--threads" in out and "--resume" in out
    code, out, _ = run_main(app, ["--help"], capsys)
    assert code == 0 and app.paper.title.split()[0] in out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--preset", "huge"], "invalid choice"),
        (["--device", "tpu"], "device"),
        (["--seeds", "-1"], "seeds"),
        (["--seeds", "0", "0"], "duplicates"),
        (["--threads", "0"], "threads"),
        (["--set", "no_such_field=1"], "unknown preset field"),
        (["--set", "seeds"], "FIELD=VALUE"),
    ],
    ids=["preset", "device", "seeds", "dup-seeds", "threads", "set-field", "set-syntax"],
)
def test_bad_input_is_one_line_and_exit_2(slug, argv, message, tmp_path, capsys):
    app = load_app(slug)
    code, _, err = run_main(app, ["reproduce", *argv, "--out", str(tmp_path / "r")], capsys)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2, err
    assert len(lines) == 1 and message in lines[0], err
    assert not (tmp_path / "r" / "results.json").exists()


def test_download_is_refused_or_paper_only(slug, tmp_path, capsys):
    app = load_app(slug)
    code, _, err = run_main(app, ["reproduce", "--preset", "smoke", "--download",
                                  "--out", str(tmp_path)], capsys)  # fmt: skip
    assert code == 2 and "--download" in err


def test_paper_preset_without_data_stops_at_once(slug, tmp_path, capsys):
    app = load_app(slug)
    if not app.paper_needs_data:
        # the package generates the paper preset's data: its config must still resolve
        code, out, _ = run_main(app, ["reproduce", "--preset", "paper", "--print-config"], capsys)
        assert code == 0 and json.loads(out)["preset"] == "paper"
        return
    code, _, err = run_main(app, ["reproduce", "--preset", "paper", "--device", "cpu",
                                  "--data-dir", str(tmp_path / "empty"),
                                  "--out", str(tmp_path / "run")], capsys)  # fmt: skip
    assert code == 2 and "missing data" in err and "how to get it" in err, err
    assert not (tmp_path / "run" / "results.json").exists()
    units = tmp_path / "run" / "units"
    assert not list(units.glob("*.pkl")) if units.exists() else True, (
        "the paper preset must check its data before any unit of work"
    )


def test_the_paper_path_runs_in_a_test(slug):
    """Every package runs its paper preset on a miniature of its real data formats
    (CONTRIBUTING, "The paper path runs in a test"): a test file that calls run_paper_preset."""
    module = slug.replace("-", "_")
    path = ROOT / "packages" / slug / "tests" / f"test_{module}_paper_path.py"
    assert path.exists(), f"{path.relative_to(ROOT)} is missing"
    assert "run_paper_preset(" in path.read_text(), f"{path.name} must call run_paper_preset"


def child_cpu_seconds() -> float:
    """CPU seconds (user + system) of this process's finished children so far."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


@pytest.fixture(scope="module")
def smoke_run(slug, tmp_path_factory):
    """One real smoke reproduction through the console script, with its CPU seconds."""
    out = tmp_path_factory.mktemp(f"smoke-{slug}")
    exe = Path(sys.executable).parent / f"iclr24-{slug}"
    assert exe.exists(), f"console script {exe} is not installed"
    cpu0 = child_cpu_seconds()
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}  # as a user's shell
    proc = subprocess.run([str(exe), "reproduce", "--preset", "smoke", "--out", str(out)],
                          capture_output=True, text=True, timeout=1800, env=env)  # fmt: skip
    return out, child_cpu_seconds() - cpu0, proc


def test_the_smoke_set_the_wait_policy_before_torch(slug, smoke_run):
    """OpenMP reads OMP_WAIT_POLICY once, when torch loads it; importing iclr24_common sets it
    to PASSIVE (unless the user set it), so the console script must load iclr24_common before
    torch (CONTRIBUTING, Threads). The smoke ran without the variable, as from a user's shell."""
    out, _, proc = smoke_run
    assert proc.returncode == 0, proc.stderr[-2000:]
    env = load_results(out)["environment"]
    assert env["omp_wait_policy"] == "PASSIVE" and env["wait_policy_before_torch"] is True, env


def test_smoke_is_complete(slug, smoke_run):
    out, cpu, proc = smoke_run
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = load_results(out)
    assert res["preset"] == "smoke" and res["package"] == f"iclr24-{slug}"
    assert res["config"]["seeds"] == res["seeds"]
    assert res["threads"] >= 1 and res["environment"]["python"]
    assert res["units"]["computed"] >= 1, "finished work must go through ctx.cached"
    assert (out / "results.md").exists() and (out / "log.txt").exists()
    assert "claims: " in proc.stdout and " inconclusive (of " in proc.stdout
    assert_v4(slug, res)
    assert cpu < SMOKE_CPU_GUARD_S, f"smoke took {cpu:.0f} CPU seconds: a gross regression"


def test_resume_of_a_finished_run_recomputes_nothing(slug, smoke_run):
    out, _, proc = smoke_run
    assert proc.returncode == 0
    if HAS_RAY and (out / "units" / PARALLEL_FILE).exists():
        # the Ray test below resumes this run with some executor units removed and checks that
        # exactly those are recomputed and nothing else changes: one resume per leg, not two
        # (a CLI start and the run's claims and figures again, ~10 s a leg)
        pytest.skip(f"{slug}: resumed by the Ray contract test (executor units declared)")
    before = load_results(out)
    exe = Path(sys.executable).parent / f"iclr24-{slug}"
    again = subprocess.run([str(exe), "reproduce", "--preset", "smoke", "--out", str(out),
                            "--resume"], capture_output=True, text=True, timeout=600)  # fmt: skip
    assert again.returncode == 0, again.stderr[-3000:]
    after = load_results(out)
    assert after["units"] == {"reused": before["units"]["computed"], "computed": 0}
    # every number comes from a reused unit, timings included: nothing may change
    assert after["metrics"] == before["metrics"]
    assert after["claims"] == before["claims"] and after["checks"] == before["checks"]
    assert after.get("premises") == before.get("premises")


HAS_RAY = importlib.util.find_spec("ray") is not None


def non_timing(metrics: dict) -> dict:
    # a results file writes a non-finite value (a diverged run's loss) as null: NaN here
    return {k: np.asarray(v["per_seed"], dtype=float) for k, v in metrics.items()
            if not is_timing_metric(k)}  # fmt: skip


RAY_UNITS = 2
"""Executor units the Ray contract recomputes per package (more than one; few keep a leg short)."""


@pytest.mark.skipif(not HAS_RAY, reason="ray is not installed (the test group installs it)")
def test_ray_recomputes_units_and_gives_the_local_smoke(slug, smoke_run, tmp_path, monkeypatch,
                                                        capsys):
    """The package's independent units (``ctx.cached_parallel``) run as Ray tasks and give
    the local run's numbers. A copy of the finished local smoke loses its last ``RAY_UNITS``
    executor units (``units/parallel.json``; the slowest are declared first), and
    ``--resume --executor ray`` on a local Ray instance recomputes exactly those on Ray: its
    non-timing metrics and verdicts must equal the local run's, and the run records the
    executor and where its units ran. Every unit is a pure function of its inputs (it seeds
    itself), so recomputing some of them on Ray tests what recomputing all would, in a
    fraction of a smoke."""
    out, _, proc = smoke_run
    assert proc.returncode == 0
    local = load_results(out)
    on_ray_dir = tmp_path / "ray"
    shutil.copytree(out, on_ray_dir)
    manifest = on_ray_dir / "units" / PARALLEL_FILE
    declared = json.loads(manifest.read_text()) if manifest.exists() else []
    assert declared, f"{slug}: no unit goes through ctx.cached_parallel (the executor's units)"
    dropped = declared[-RAY_UNITS:]
    for key in dropped:
        (on_ray_dir / "units" / f"{_escape(key)}.pkl").unlink()
    monkeypatch.delenv("RAY_ADDRESS", raising=False)  # a local instance, never a cluster
    monkeypatch.setenv("RAY_USAGE_STATS_ENABLED", "0")
    # in this process (the smoke above ran as the console script): a fresh interpreter would
    # import torch, the package and Ray again, 3-7 s of a leg's one core; the Ray workers are
    # processes of their own either way
    code, _, err = run_main(load_app(slug), ["reproduce", "--preset", "smoke", "--executor",
                                             "ray", "--resume", "--out", str(on_ray_dir)], capsys)  # fmt: skip
    assert code == 0, err[-3000:]
    on_ray = load_results(on_ray_dir)
    assert on_ray["executor"] == "ray" and on_ray["runs"][-1]["executor"] == "ray"
    assert on_ray["ray_cluster"]["address"] == "local"
    assert on_ray["units_ran"] == {"driver": 0, "local-pool": 0, "ray": len(dropped)}, (
        f"{slug}: the removed executor units must be recomputed on Ray, and only they"
    )
    # --resume: every other finished unit is reused, none recomputed
    total = local["units"]["computed"] + local["units"]["reused"]
    assert on_ray["units"] == {"reused": total - len(dropped), "computed": len(dropped)}
    a, b = non_timing(local["metrics"]), non_timing(on_ray["metrics"])
    assert a.keys() == b.keys()
    for k in a:
        assert np.allclose(a[k], b[k], rtol=1e-6, atol=1e-9, equal_nan=True), (k, a[k], b[k])
    for part in ("claims", "premises", "checks"):
        assert [c.get("verdict", c.get("holds")) for c in on_ray.get(part, [])] == [
            c.get("verdict", c.get("holds")) for c in local.get(part, [])
        ], part


def test_results_on_file(slug):
    """The README reports a real default run: its results file is committed, keeps the
    contract (a verdict and a test on every claim, checks that say why) and is this package's."""
    path = ROOT / "packages" / slug / "results" / "default.json"
    assert path.exists(), (
        f"{slug}: no results/default.json (make reproduce-{slug}; make keep-results SLUG={slug})"
    )
    res = load_results(path)
    assert res["package"] == f"iclr24-{slug}" and res["preset"] == "default"
    assert_v4(slug, res)
    readme = (ROOT / "packages" / slug / "README.md").read_text()
    assert "<!-- results:begin" in readme, f"{slug}: README lacks the generated results block"
