"""The reproduction end to end (in process, a reduced smoke): an interrupted run resumes to
the same numbers."""

from iclr24_aug_rkhs.experiment import app

from iclr24_common import is_timing_metric, load_results

SMALL = ["--set", "length=4", "--set", "text_lengths=4,6,8", "--set", "n_windows=100"]


def reproduce(out, *extra):
    return app.main(["reproduce", "--preset", "smoke", "--out", str(out), *SMALL, *extra])


def test_interrupted_run_resumes_to_the_same_numbers(tmp_path, monkeypatch):
    assert reproduce(tmp_path / "straight") == 0
    monkeypatch.setenv("ICLR24_INTERRUPT_AFTER_UNITS", "2")
    assert reproduce(tmp_path / "cut") == 130
    assert len(list((tmp_path / "cut" / "units").glob("*.pkl"))) == 2
    monkeypatch.delenv("ICLR24_INTERRUPT_AFTER_UNITS")
    assert reproduce(tmp_path / "cut", "--resume") == 0
    a, b = load_results(tmp_path / "straight"), load_results(tmp_path / "cut")
    assert b["units"]["reused"] == 2 and b["units"]["computed"] == a["units"]["computed"] - 2
    for name, m in a["metrics"].items():
        if not is_timing_metric(name):
            assert b["metrics"][name]["per_seed"] == m["per_seed"], name
    assert [c["holds"] for c in b["claims"]] == [c["holds"] for c in a["claims"]]
