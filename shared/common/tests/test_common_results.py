import json
import os

import numpy as np
import pytest

from iclr24_common import Check, Claim, Metrics, aggregate, atomic_write_text, write_results


def claim(id="c", holds=True):
    return Claim(id=id, statement="s", paper="p", measured="m", criterion="k", holds=holds)


def test_aggregate_mean_std_per_seed():
    a = aggregate([1.0, 2.0, 4.0])
    assert a["mean"] == pytest.approx(7 / 3)
    assert a["std"] == pytest.approx(np.std([1, 2, 4], ddof=1))
    assert a["per_seed"] == [1.0, 2.0, 4.0]
    assert aggregate([3.0])["std"] == 0.0


def test_metrics_orders_by_seed_and_reports_unknown_names():
    m = Metrics()
    m.add("a/x", 2, 20.0)
    m.add("a/x", 0, 0.0)
    m.update(1, {"x": 10.0}, prefix="a/")
    assert m.values("a/x") == [0.0, 10.0, 20.0]
    assert m.summary()["a/x"]["seeds"] == [0, 1, 2]
    assert m.mean("a/x") == 10.0
    with pytest.raises(KeyError, match="have: a/x"):
        m.values("nope")


def test_claim_holds_must_be_computed_bool_and_keywords_only():
    assert claim(holds=np.float64(1) > 0).holds is True
    with pytest.raises(TypeError):
        claim(holds="yes")
    with pytest.raises(TypeError):
        Claim("c", "s", "p", "m", "k", True)  # positional fields are a TypeError


def test_gap_is_paired_over_common_seeds():
    m = Metrics()
    for s, (a, b) in enumerate([(1.0, 0.5), (2.0, 1.0), (3.0, 2.5), (9.0, 0.0)]):
        m.add("a", s, a)
        if s < 3:
            m.add("b", s, b)
    g = m.gap("a", "b")  # seeds 0..2 only: diffs 0.5, 1.0, 0.5
    assert g.n == 3 and g.mean == pytest.approx(2 / 3)
    assert g.se == pytest.approx(np.std([0.5, 1.0, 0.5], ddof=1) / np.sqrt(3))
    assert g.beyond_noise(2.0) and not m.gap("b", "a").beyond_noise()
    assert "SE (3 seeds)" in str(g)
    assert m.se("a") == pytest.approx(np.std([1, 2, 3, 9], ddof=1) / 2)


def test_checks_are_kept_apart_from_claims(tmp_path):
    m = Metrics()
    m.add("x", 0, 1.0)
    chk = Check(
        id="budget", statement="equal budgets", measured="1 = 1", criterion="==", holds=True
    )
    kw = dict(package="iclr24-demo", version="0", paper={"title": "T"}, preset="smoke",
              seeds=[0], device="cpu", wall_seconds=0.1, metrics=m)  # fmt: skip
    with pytest.raises(TypeError, match="is a Check"):
        write_results(tmp_path, claims=[chk], **kw)
    res = write_results(tmp_path, claims=[claim()], checks=[chk], **kw)
    assert res["checks"][0]["paper"] == "" and [c["id"] for c in res["claims"]] == ["c"]


def test_write_results_shape_and_markdown(tmp_path):
    m = Metrics()
    for s, v in enumerate([0.9, 0.8]):
        m.add("method/acc", s, v)
    claims = [
        Claim(
            id="acc",
            statement="accurate",
            paper="Table 1: 0.9",
            measured=m.fmt("method/acc"),
            criterion="mean >= 0.8",
            holds=m.mean("method/acc") >= 0.8,
        )
    ]
    res = write_results(
        tmp_path,
        package="iclr24-demo",
        version="0.1.0",
        paper={"title": "T", "arxiv": "1"},
        preset="smoke",
        seeds=[0, 1],
        device="cpu",
        wall_seconds=1.5,
        metrics=m,
        claims=claims,
        extra={"note": np.float32(2.0)},
    )
    on_disk = json.loads((tmp_path / "results.json").read_text())
    assert on_disk == res
    for key in [
        "package",
        "version",
        "paper",
        "preset",
        "seeds",
        "device",
        "threads",
        "wall_seconds",
        "environment",
        "config",
        "metrics",
        "claims",
        "checks",
    ]:
        assert key in on_disk
    assert on_disk["metrics"]["method/acc"]["per_seed"] == [0.9, 0.8]
    assert on_disk["claims"][0]["holds"] is True
    assert on_disk["note"] == 2.0
    env = on_disk["environment"]
    assert env["python"] and env["numpy"] and env["device"] == "cpu"
    md = (tmp_path / "results.md").read_text()
    assert "| acc | yes |" in md and "method/acc" in md
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


def test_atomic_write_leaves_old_file_on_failure(tmp_path, monkeypatch):
    target = tmp_path / "f.txt"
    atomic_write_text(target, "old")

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        atomic_write_text(target, "new")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["f.txt"]


def test_load_results_checks_the_contract(tmp_path):
    from iclr24_common import load_results

    m = Metrics()
    m.add("a/x", 0, 1.0)
    write_results(
        tmp_path,
        package="iclr24-demo",
        version="0.1.0",
        paper={"title": "T"},
        preset="smoke",
        seeds=[0],
        device="cpu",
        wall_seconds=0.1,
        metrics=m,
        claims=[claim()],
    )
    assert load_results(tmp_path)["claims"][0]["id"] == "c"
    broken = json.loads((tmp_path / "results.json").read_text())
    del broken["environment"]
    broken["claims"][0]["holds"] = "yes"
    (tmp_path / "results.json").write_text(json.dumps(broken))
    with pytest.raises(ValueError, match="missing key 'environment'.*non-bool holds"):
        load_results(tmp_path)
