"""--executor local|ray: the units of ctx.cached_parallel in a local process pool or as Ray
tasks (here on a local Ray instance of 2 CPUs that the run starts itself)."""

import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent


@pytest.fixture
def demo(monkeypatch):
    """The demo app, importable by name in spawned processes (sys.path) and Ray workers
    (PYTHONPATH, inherited from the driver when it starts the local instance)."""
    monkeypatch.syspath_prepend(str(HERE))
    path = os.environ.get("PYTHONPATH")
    monkeypatch.setenv("PYTHONPATH", str(HERE) + (os.pathsep + path if path else ""))
    monkeypatch.delenv("RAY_ADDRESS", raising=False)  # a local instance, never a cluster
    monkeypatch.setenv("RAY_USAGE_STATS_ENABLED", "0")  # no usage report from the test
    import ray_demo

    def reproduce(out, *argv, threads=2):
        code = ray_demo.app.main(["reproduce", "--device", "cpu", "--threads", str(threads),
                                  "--out", str(out), *argv])  # fmt: skip
        return code, (json.loads((out / "results.json").read_text()) if code == 0 else None)

    return reproduce


def test_the_local_executor_is_the_default_and_is_recorded(demo, tmp_path):
    code, res = demo(tmp_path, "--preset", "smoke", threads=1)  # one core: units run here
    assert code == 0 and res["executor"] == "local" and "ray_cluster" not in res
    assert res["runs"][-1]["executor"] == "local" and res["unit_pids"] == [res["driver_pid"]]


def test_workers_share_the_threads_and_the_run_records_where_units_ran(demo, tmp_path):
    # 2 threads: 2 workers x 1 thread (the default) or 1 worker x 2 threads (in the driver)
    code, pool = demo(tmp_path / "pool", threads=2)
    assert code == 0 and pool["workers"] == 2 and pool["unit_threads"] == 1
    assert pool["units_ran"] == {"driver": 0, "local-pool": 6, "ray": 0}
    assert pool["unit_thread_counts"] == [1] and pool["driver_pid"] not in pool["unit_pids"]
    code, one = demo(tmp_path / "one", "--workers", "1", threads=2)
    assert code == 0 and one["workers"] == 1 and one["unit_threads"] == 2
    assert one["units_ran"] == {"driver": 6, "local-pool": 0, "ray": 0}
    assert one["unit_thread_counts"] == [2] and one["unit_pids"] == [one["driver_pid"]]
    assert one["metrics"] == pool["metrics"] and one["claims"] == pool["claims"]


@pytest.mark.parametrize("threads", [1, 2], ids=["driver", "pool"])
def test_a_unit_that_raises_is_one_line_and_keeps_the_finished_units(demo, tmp_path, capsys,
                                                                      threads):  # fmt: skip
    code, _ = demo(tmp_path, "--set", "fail_unit=seed1/w16", threads=threads)
    err = capsys.readouterr().err
    last = err.strip().splitlines()[-1]  # after the run's log lines: the one error line
    assert code == 1 and "Traceback" not in err, err
    assert last.startswith("iclr24-raydemo: error: unit 'seed1/w16' failed: ZeroDivisionError: "
                           "unit 1/16 divided by zero")  # fmt: skip
    assert "continue with --resume" in last and not (tmp_path / "results.json").exists()
    log = (tmp_path / "log.txt").read_text()
    assert "Traceback" in log and "divided by zero" in log  # the whole story is in the log
    kept = {p.stem for p in (tmp_path / "units").glob("*.pkl")}
    assert kept and "seed1%2fw16" not in kept  # the finished units stay, the failed one is not
    # --resume reuses every finished unit (and here meets the same error again)
    code, _ = demo(tmp_path, "--resume", "--set", "fail_unit=seed1/w16", threads=threads)
    assert code == 1 and (tmp_path / "log.txt").read_text().count("resume: reusing") >= len(kept)


def test_executor_ray_without_ray_is_one_line_exit_2(demo, tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails as if not installed
    code, _ = demo(tmp_path, "--executor", "ray")
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1, err
    assert "pip install 'iclr24-common[ray]'" in err and "Traceback" not in err
    assert not (tmp_path / "results.json").exists()  # refused before any work


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("ray") is None,
                    reason="ray is not installed (pip install 'iclr24-common[ray]')")  # fmt: skip
def test_ray_gives_the_local_results_and_resumes(demo, tmp_path):
    import ray

    # the reference: one thread, in order (what cached_parallel's units must equal anywhere;
    # the local process pool is held to it in test_common_experiment)
    code, local = demo(tmp_path / "local", threads=1)
    assert code == 0
    code, on_ray = demo(tmp_path / "ray", "--executor", "ray")
    assert code == 0 and not ray.is_initialized()  # the instance it started is stopped
    assert on_ray["executor"] == "ray" and on_ray["runs"][-1]["executor"] == "ray"
    assert on_ray["ray_cluster"]["address"] == "local" and on_ray["ray_cluster"]["cpus"] == 2
    assert on_ray["driver_pid"] not in on_ray["unit_pids"]  # the units ran in Ray workers
    assert on_ray["units"] == {"reused": 0, "computed": 6} == local["units"]
    assert on_ray["units_ran"] == {"driver": 0, "local-pool": 0, "ray": 6}
    assert on_ray["unit_thread_counts"] == [1]  # num_cpus = threads / workers = 1
    assert on_ray["metrics"] == local["metrics"] and on_ray["claims"] == local["claims"]
    assert on_ray["checks"] == local["checks"]
    log = (tmp_path / "ray" / "log.txt").read_text()
    assert "ray: units run on a local Ray instance of 2 CPUs" in log

    code, resumed = demo(tmp_path / "ray", "--executor", "ray", "--resume")
    assert code == 0 and resumed["units"] == {"reused": 6, "computed": 0}
    assert "ray_cluster" not in resumed  # nothing left to run: no Ray instance was started
    assert resumed["metrics"] == local["metrics"] and resumed["claims"] == local["claims"]
    assert [r["executor"] for r in resumed["runs"]] == ["ray", "ray"]


@pytest.mark.skipif(importlib.util.find_spec("ray") is None,
                    reason="ray is not installed (pip install 'iclr24-common[ray]')")  # fmt: skip
def test_a_user_error_in_a_ray_unit_stays_one_line():
    import pickle
    import types

    import ray

    from iclr24_common import MissingDataError, UnitError
    from iclr24_common.executors import _result

    def raising(cause):
        def get(ref):
            raise ray.exceptions.RayTaskError("measure", "Traceback (remote) ...", cause)

        return types.SimpleNamespace(get=get, exceptions=ray.exceptions)

    missing = pickle.loads(pickle.dumps(MissingDataError("the demo set", "/x", "make it")))
    assert (missing.what, missing.looked_in, missing.how_to_get) == (
        "the demo set",
        ["/x"],
        "make it",
    )
    with pytest.raises(MissingDataError, match="^missing data: the demo set"):
        _result(raising(missing), None, "seed0")
    # a bug is the unit's one-line error; the remote traceback is kept for log.txt
    with pytest.raises(UnitError, match="^unit 'seed0' failed: ZeroDivisionError: division") as e:
        _result(raising(ZeroDivisionError("division by zero")), None, "seed0")
    assert "Traceback (remote)" in e.value.detail


@pytest.mark.skipif(importlib.util.find_spec("ray") is None,
                    reason="ray is not installed (pip install 'iclr24-common[ray]')")  # fmt: skip
@pytest.mark.parametrize("address", [None, "127.0.0.1:1"])
def test_ray_that_cannot_start_or_connect_is_one_line_exit_2(demo, tmp_path, monkeypatch, capsys,
                                                            address):  # fmt: skip
    import ray

    calls = []

    def init(**kw):  # what Ray raises when its node misses the 30 s to register, or no cluster
        calls.append(kw)
        raise (ConnectionError if address else Exception)("it did not work\nmore detail")

    monkeypatch.setattr(ray, "init", init)
    if address:
        monkeypatch.setenv("RAY_ADDRESS", address)
    code, _ = demo(tmp_path, "--executor", "ray")
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert code == 2 and "Traceback" not in last and "it did not work" in last
    if address:  # a cluster is tried once; a local instance once more
        assert calls == [{"address": address}] and f"RAY_ADDRESS={address}" in last
    else:
        assert len(calls) == 2 and calls[0] == {
            "address": "local",
            "num_cpus": 2,
            "include_dashboard": False,
        }
        assert "could not start a local Ray instance" in last


def test_a_presets_workers_never_exceed_the_threads(demo, tmp_path, monkeypatch):
    # a preset measured on 2 cores asks for 2 workers: on a 1-thread run (a pinned CI leg)
    # one process runs the units; an explicit --workers is still obeyed
    import ray_demo  # importable once the demo fixture has put its folder on sys.path

    monkeypatch.setattr(ray_demo.Preset, "workers", 2, raising=False)
    code, capped = demo(tmp_path / "capped", threads=1)
    assert code == 0 and capped["workers"] == 1 and capped["unit_threads"] == 1
    assert capped["units_ran"] == {"driver": 6, "local-pool": 0, "ray": 0}
    code, forced = demo(tmp_path / "forced", "--workers", "2", threads=1)
    assert code == 0 and forced["workers"] == 2 and forced["units_ran"]["local-pool"] == 6
