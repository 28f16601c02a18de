import json
import os

import numpy as np
import pytest

from iclr24_common import (
    Check,
    Claim,
    Metrics,
    aggregate,
    atomic_write_text,
    bound_check,
    superiority,
    threshold,
    write_results,
)


def claim(id="c", holds=True):
    test = superiority([2.0, 2.1, 1.9], [1.0, 1.0, 1.0]) if holds else superiority([1, 1], [2, 2])
    return Claim(id=id, statement="s", paper="p", measured="m", criterion="k", test=test)


def check(id="budget", holds=True):
    return Check(id=id, statement="equal budgets", measured="1 = 1", criterion="==",
                 holds=holds, why="both loops run the same step count")  # fmt: skip


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


def test_claim_verdict_comes_from_a_test_and_keywords_only():
    c = claim()
    assert c.verdict == "holds" and c.holds is True and "2 SE" in c.criterion
    assert c.criterion.startswith("k; superiority")
    assert claim(holds=False).verdict == "fails" and claim(holds=False).holds is False
    with pytest.raises(TypeError, match="must be a Verdict"):
        Claim(id="c", statement="s", paper="p", measured="m", test=True)
    with pytest.raises(TypeError):
        Claim("c", "s", "p", "m", "k", True)  # positional fields are a TypeError
    with pytest.raises(ValueError, match="why it holds"):
        Check(id="x", statement="s", measured="m", criterion="k", holds=True, why=" ")


def test_bound_check_reports_slack_and_vacuous():
    tight = bound_check(id="b", statement="s", measured=0.5, bound=2.0, rederived=False, why="thm")
    assert tight.holds and tight.slack == 4.0 and tight.label == "tight" and tight.kind == "bound"
    loose = bound_check(id="b", statement="s", measured=1e-3, bound=1.0, rederived=True, why="t")
    assert (
        loose.label == "vacuous"
        and loose.kind == "bound (re-derived)"
        and "1e+03x" in loose.measured
    )
    assert not bound_check(
        id="b", statement="s", measured=3, bound=2, rederived=True, why="t"
    ).holds


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
    chk = check()
    kw = dict(package="iclr24-demo", version="0", paper={"title": "T"}, preset="smoke",
              seeds=[0], device="cpu", wall_seconds=0.1, metrics=m)  # fmt: skip
    with pytest.raises(TypeError, match="is not a Claim"):
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
            criterion="accuracy past 0.8",
            test=threshold(m.by_seed("method/acc"), threshold=0.5),
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
    assert on_disk["claims"][0]["holds"] is True and on_disk["claims"][0]["verdict"] == "holds"
    assert (
        on_disk["claims"][0]["test"]["kind"] == "threshold"
        and on_disk["claims"][0]["test"]["n"] == 2
    )
    assert on_disk["note"] == 2.0
    env = on_disk["environment"]
    assert env["python"] and env["numpy"] and env["device"] == "cpu"
    md = (tmp_path / "results.md").read_text()
    assert "| acc | holds |" in md and "method/acc" in md and "1 hold, 0 fail, 0 inconclusive" in md
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
    with pytest.raises(
        ValueError, match="missing key 'environment'.*verdict 'holds' / holds 'yes'"
    ):
        load_results(tmp_path)


def test_contract_refuses_bare_criteria_and_checks_without_why(tmp_path):
    from iclr24_common.results import contract_problems

    m = Metrics()
    m.add("a/x", 0, 1.0)
    res = write_results(tmp_path, package="iclr24-demo", version="0", paper={"title": "T"},
                        preset="smoke", seeds=[0], device="cpu", wall_seconds=0.1, metrics=m,
                        claims=[claim()], checks=[check()])  # fmt: skip
    assert contract_problems(res) == []
    res["claims"][0]["criterion"] = "mean >= 0"
    res["checks"][0]["why"] = ""
    res["claims"][0]["test"]["se"] = None
    problems = "; ".join(contract_problems(res))
    assert "has no margin or SE" in problems and "no why" in problems
    assert "without a paired SE" in problems


def _v4(**kw):
    """A claim that keeps "What a verdict can tell" (override one field to break it)."""
    from iclr24_common import Source

    src = Source.ours("a gap a user notices", commit="abc1234")
    args = dict(id="c", statement="s", paper="p", measured="m", regime="paper", test_set="per-seed",
                test=superiority([2.0, 2.1, 1.9], [1.0, 1.0, 1.0], margin=0.1, source=src))  # fmt: skip
    args.update(kw)
    return Claim(**args)


def _write(tmp_path, claims, premises=()):
    m = Metrics()
    m.add("a/x", 0, 1.0)
    return write_results(tmp_path, package="iclr24-demo", version="0", paper={"title": "T"},
                         preset="smoke", seeds=[0, 1, 2], device="cpu", wall_seconds=0.1,
                         metrics=m, claims=claims, premises=premises)  # fmt: skip


def test_v4_contract_needs_regime_sources_controls_and_item_se(tmp_path):
    from iclr24_common import Source, non_inferiority
    from iclr24_common.results import contract_problems

    res = _write(tmp_path, [_v4()])
    assert res["verdicts_version"] == 4 and contract_problems(res) == []
    assert "source, ours: a gap a user notices" in res["claims"][0]["criterion"]
    # a claim below the paper's regime says what the paper's effect needs
    with pytest.raises(ValueError, match="needs"):
        _v4(regime="below")
    with pytest.raises(ValueError, match="regime is one of"):
        _v4(regime="small")

    def broken(edit):
        bad = json.loads(json.dumps(res))
        edit(bad["claims"][0])
        return "; ".join(contract_problems(bad))

    assert "without a source" in broken(lambda c: c["test"].update(source=None))
    assert "without what it needs" in broken(lambda c: c.update(regime="below", needs=""))
    assert "missing ['regime']" in broken(lambda c: c.pop("regime"))
    assert "without item-level SE" in broken(lambda c: c.update(test_set="shared"))
    assert "unknown premise" in broken(lambda c: c.update(rests_on=["converged"]))
    # a non-inferiority runs its no-op arm through the same test
    src = Source.paper("comparable", "Table 3")
    ni = non_inferiority([1.0, 1.1, 0.9], [1.0, 1.0, 1.0], tolerance=0.5, source=src)
    with pytest.raises(ValueError, match="without a no-op control"):
        _write(tmp_path, [_v4(test=ni)])
    ni_ctl = non_inferiority([1.0, 1.1, 0.9], [1.0, 1.0, 1.0], tolerance=0.05, source=src,
                             control=[0.2, 0.3, 0.1], control_name="untrained")  # fmt: skip
    assert _write(tmp_path, [_v4(test=ni_ctl)])["claims"][0]["test"]["control"]["moved"] > 0
    # a file from before v4 is checked as it declares itself (the contract test requires 4)
    old = json.loads(json.dumps(res))
    old["verdicts_version"] = 3
    old["claims"][0]["test"]["source"] = None
    assert contract_problems(old) == [] and contract_problems(old, v4=True)


def test_a_premise_that_does_not_hold_makes_its_claims_inconclusive(tmp_path):
    from iclr24_common import Premise, none_of
    from iclr24_common.results import contract_problems, results_markdown

    ok = Premise(id="solvable", statement="the task is solvable", measured="30/32",
                 test=none_of([0, 0, 0]))  # fmt: skip
    capped = Premise(id="converged", statement="every fit converged", measured="1 of 9 capped",
                     test=none_of([0, 1, 0]))  # fmt: skip
    claims = [_v4(id="a", rests_on=("solvable",)), _v4(id="b", rests_on=("solvable", "converged")),
              _v4(id="c")]  # fmt: skip
    res = _write(tmp_path, claims, premises=[ok, capped])
    by = {c["id"]: c for c in res["claims"]}
    assert by["a"]["verdict"] == "holds" and by["c"]["verdict"] == "holds"
    assert by["b"]["verdict"] == "inconclusive" and by["b"]["holds"] is False
    assert by["b"]["premise"] == "premise converged fails: 1 of 9 capped"
    assert by["b"]["test"]["outcome"] == "holds"  # the test itself is kept
    assert [p["id"] for p in res["premises"]] == ["solvable", "converged"]
    md = results_markdown(res)
    assert "## Premises (1 of 2 hold; not claims of the paper)" in md
    assert "inconclusive (premise converged fails" in md
    bad = json.loads(json.dumps(res))
    bad["claims"][1].update(verdict="holds", holds=True)
    assert "did not hold, yet the claim holds" in "; ".join(contract_problems(bad))
    with pytest.raises(ValueError, match="unknown premise"):
        _write(tmp_path, [_v4(rests_on=("nope",))])
