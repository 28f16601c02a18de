"""Invariants of the OPRO machinery: meta-prompts, parsers on adversarial replies, exact and
heuristic TSP solvers (farthest insertion as the official code, from its outputs), the loop,
its baselines at equal evaluations and checkpoint/resume."""

import itertools
import json
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from iclr24_opro import (
    OPRO,
    TSP,
    LinearRegression,
    LocalPerturbation,
    OPROConfig,
    RandomSearch,
    Scored,
    TextProblem,
    brute_force,
    farthest_insertion,
    format_linreg_meta_prompt,
    format_tsp_meta_prompt,
    held_karp,
    nearest_neighbour,
    parse_linreg,
    parse_tsp,
    scripted_linreg_optimizer,
    scripted_tsp_optimizer,
    tour_length,
    two_opt,
)
from iclr24_opro.linreg import linreg_data, linreg_starts
from iclr24_opro.official import fixtures
from iclr24_opro.opro import shown_in_prompt
from iclr24_opro.tsp import distance_matrix, extract_trace, tsp_instance

from iclr24_llm import ScriptedBackend

# ---------------------------------------------------------------- meta-prompts


@pytest.mark.parametrize(
    "case", fixtures()["linreg_meta_prompts"], ids=lambda c: str(len(c["pairs"]))
)
def test_linreg_meta_prompt_equals_the_official_output(case):
    shown = sorted(map(tuple, case["pairs"]), key=lambda p: -p[2])[-20:]  # official: 20 best
    assert format_linreg_meta_prompt(shown) == case["official"]


@pytest.mark.parametrize("case", fixtures()["tsp_meta_prompts"], ids=lambda c: str(len(c["x"])))
def test_tsp_meta_prompt_equals_the_official_output(case):
    shown = sorted(map(tuple, case["pairs"]), key=lambda p: -p[1])[-10:]  # official: 10 best
    traces = [([int(c) for c in t.split(",")], d) for t, d in shown]
    assert format_tsp_meta_prompt(np.stack([case["x"], case["y"]], 1), traces) == case["official"]


def test_linreg_meta_prompt_one_pair_literal():
    got = format_linreg_meta_prompt([(3, -2, 7.99)])
    assert got.endswith(
        "lower values are better.\n\ninput:\nw=3, b=-2\nvalue:\n7\n\nGive me a new (w, b) pair"
        " that is different from all pairs above, and has a function value lower than any of"
        " the above. Do not write code. The output must end with a pair [w, b], where w and b"
        " are numerical values."
    )
    assert got.startswith("Now you will help me minimize a function with two input variables")


def test_tsp_meta_prompt_structure():
    pts = np.array([[1, -2], [3, 4], [0, 0]])
    got = format_tsp_meta_prompt(pts, [([0, 2, 1], 20.4)])
    assert got.startswith(
        "You are given a list of points with coordinates below:\n(0): (1, -2), (1): (3, 4), "
        "(2): (0, 0).\n\nBelow are some previous traces"
    )
    assert "\n\n<trace> 0,2,1 </trace>\nlength:\n20\n\nGive me a new trace" in got


def test_meta_prompt_shows_best_k_worst_first():
    prob = LinearRegression()
    hist = [Scored([i, i], v, 0) for i, v in enumerate([5.0, 1.0, 9.0, 3.0, 7.0])]
    shown = shown_in_prompt(prob, hist, 3)
    assert [s.value for s in shown] == [5.0, 3.0, 1.0]
    text = prob.meta_prompt(shown)
    assert text.index("value:\n5") < text.index("value:\n3") < text.index("value:\n1\n")


# ---------------------------------------------------------------- parsers


@pytest.mark.parametrize(
    "text, expected",
    [
        ("So the answer is [15, 14]", [15, 14]),
        ("[w=15, b=14]", [15, 14]),
        ("first [1, 2] then the format [w, b]", [1, 2]),  # the template is skipped
        ("[3, 4] ... [10.5, 13.5]", [10, 14]),  # last bracket, rounded half to even
        ("[[17, 15], [12, 16]]", [12, 16]),
        ("[1, 2, 3]", None),
        ("[a, 2]", None),
        ("[inf, 2]", None),
        ("[1,\n2]", None),  # the official regex does not cross lines
        ("no pair at all", None),
        ("[]", None),
        ("[-3, 7e0]", [-3, 7]),
    ],
)
def test_parse_linreg(text, expected):
    assert parse_linreg(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("<trace> 0,2,1,3 </trace>", [0, 2, 1, 3]),
        ("Here: <trace> 0, 3, x, 1, 2 </trace> and <trace> 0,1,2,3 </trace>", [0, 3, 1, 2]),
        ("<trace> 0,2,1,3", None),  # not closed
        ("<trace> 1,0,2,3 </trace>", None),  # must start at 0
        ("<trace> 0,1,1,3 </trace>", None),  # a city twice
        ("<trace> 0,1,2 </trace>", None),  # a city missing
        ("<trace> 0,1,2,-1 </trace>", None),  # out of range
        ("<trace> 0,1,2,3,4 </trace>", None),
    ],
)
def test_parse_tsp(text, expected):
    assert parse_tsp(text, 4) == expected


def test_extract_trace_skips_non_integers():
    assert extract_trace("<trace>0, 1.5, 2,  3 </trace>") == [0, 2, 3]
    assert extract_trace("nothing") == []


# ---------------------------------------------------------------- data, as the official code


def test_linreg_data_and_starts_follow_official_seeding():
    X, y = linreg_data(15, 14, rep=2)
    np.testing.assert_array_equal(X, np.arange(1, 51))
    np.testing.assert_allclose(y, X * 15 + 14 + np.random.RandomState(3).randn(50))
    w = np.round(np.random.RandomState(30).uniform(10, 20, 5))
    b = np.round(np.random.RandomState(300).uniform(10, 20, 5))
    assert sorted(map(tuple, linreg_starts(2))) == sorted({(int(p), int(q)) for p, q in zip(w, b)})
    prob = LinearRegression(rep=2)
    assert prob.score([15, 14]) == pytest.approx(float(np.sum((y - X * 15 - 14) ** 2)))


def test_no_official_regression_start_is_the_optimum():
    # the no-op arm (no step taken) can never find (15, 14): check no-op-never-optimal
    for rep in range(10):
        assert [15, 14] not in linreg_starts(rep)
        assert LinearRegression(rep=rep).initial_solutions() == linreg_starts(rep)


def test_tsp_instance_integer_coordinates():
    pts = tsp_instance(50, seed=3)
    assert pts.shape == (50, 2) and pts.dtype.kind == "i"
    assert pts.min() >= -99 and pts.max() <= 99


# ---------------------------------------------------------------- TSP solvers


@pytest.mark.parametrize("n, seed", [(n, s) for n in range(3, 9) for s in range(3)])
def test_held_karp_equals_brute_force(n, seed):
    dist = distance_matrix(tsp_instance(n, seed))
    tour, length = held_karp(dist)
    assert sorted(tour) == list(range(n)) and tour[0] == 0
    assert length == pytest.approx(tour_length(dist, tour))
    assert length == pytest.approx(brute_force(dist)[1])


def test_nearest_neighbour_known_instance():
    pts = np.array([[0, 0], [3, 0], [1, 0], [7, 0]])  # from 0: 2 (x=1), 1 (x=3), 3 (x=7)
    assert nearest_neighbour(distance_matrix(pts)) == [0, 2, 1, 3]


@pytest.mark.parametrize("case", fixtures()["tsp_solvers"], ids=lambda c: str(len(c["x"])))
def test_heuristics_equal_the_official_solve_tsp(case):
    """Official optimize_tsp.solve_tsp outputs: farthest insertion compares integer-truncated
    tour lengths (num_decimals = 0), whose ties decide the tour."""
    dist = distance_matrix(np.stack([case["x"], case["y"]], 1))
    assert farthest_insertion(dist) == case["farthest_insertion"]
    assert nearest_neighbour(dist) == case["nearest_neighbor"]
    assert int(tour_length(dist, case["farthest_insertion"])) == case["farthest_insertion_length"]


def test_farthest_insertion_known_instance():
    # a square: the opposite corner first, then the ties go to the first city / place
    pts = np.array([[0, 0], [0, 10], [10, 10], [10, 0]])
    assert farthest_insertion(distance_matrix(pts)) == [0, 1, 2, 3]
    # integer truncation ties two places of city 3 (tour lengths 200.42 and 200.24 both
    # truncate to 200): the official code keeps the first place, not the shorter tour
    pts = np.array([[0, 0], [1, 0], [100, 0], [2, 1]])
    dist = distance_matrix(pts)
    assert farthest_insertion(dist) == [0, 1, 3, 2]
    assert tour_length(dist, [0, 1, 3, 2]) > held_karp(dist)[1] + 0.1


@pytest.mark.parametrize("seed", range(4))
def test_heuristics_valid_and_two_opt_locally_optimal(seed):
    dist = distance_matrix(tsp_instance(12, seed))
    opt = held_karp(dist)[1]
    for tour in (nearest_neighbour(dist), farthest_insertion(dist), two_opt(dist)):
        assert sorted(tour) == list(range(12)) and tour[0] == 0
        assert tour_length(dist, tour) >= opt - 1e-9
    t = two_opt(dist)
    base = tour_length(dist, t)
    for i, j in itertools.combinations(range(1, 12), 2):
        assert tour_length(dist, t[:i] + t[i : j + 1][::-1] + t[j + 1 :]) >= base - 1e-9


# ---------------------------------------------------------------- the loop


def test_scripted_optimizer_solves_linear_regression():
    res = OPRO(
        LinearRegression(17, 17, rep=1),
        ScriptedBackend(scripted_linreg_optimizer),
        config=OPROConfig(steps=100),
    ).run()
    assert res.best.solution == [17, 17] and res.steps_to_optimum is not None
    assert res.parse_rate == 1.0 and res.usage["calls"] == res.samples


def test_history_is_deduplicated():
    llm = ScriptedBackend(lambda p: "[15, 14]")  # the same pair, every sample
    opt = OPRO(LinearRegression(rep=0), llm, config=OPROConfig(steps=3, stop_at_optimum=False))
    res = opt.run()
    keys = [tuple(s.solution) for s in res.history]
    assert len(keys) == len(set(keys)) and keys.count((15, 14)) == 1
    # (15, 14) is new once; then it is in the history and is neither scored nor counted
    assert res.evaluations == 1 and res.samples == 24


def test_resampling_is_capped():
    cfg = OPROConfig(steps=2, resample_invalid=True, max_samples_per_step=20)
    res = OPRO(TSP(n=6, seed=0), ScriptedBackend(lambda p: "no trace"), config=cfg).run()
    assert res.samples == 40 and res.parsed == 0 and len(res.history) == 5


@pytest.mark.parametrize("per_call, calls", [(None, 2), (1, 16), (3, 6)])
def test_samples_per_call_splits_the_calls_and_records_reply_lengths(per_call, calls):
    """A step's 8 samples in one call, one at a time or in threes (8 = 3 + 3 + 2); every
    reply's length is recorded and the replies cut at the decoding cap are counted."""
    asked = []

    def reply(prompt):  # the scripted backend asks once per call
        asked.append(prompt)
        return "[11, 12] and then some more words"  # 7 words (the scripted backend's tokens)

    cfg = OPROConfig(steps=2, max_new_tokens=5, samples_per_call=per_call, stop_at_optimum=False)
    res = OPRO(LinearRegression(rep=0), ScriptedBackend(reply), config=cfg).run()
    assert len(asked) == calls and res.samples == 16
    assert res.reply_tokens == [5] * 16 and res.replies_capped == 16  # all cut at 5 tokens
    short = replace(cfg, max_new_tokens=1024)
    res = OPRO(LinearRegression(rep=0), ScriptedBackend(reply), config=short).run()
    assert res.reply_tokens == [7] * 16 and res.replies_capped == 0  # each ends on its own


def test_resume_continues_the_same_trajectory(tmp_path):
    def make(steps):
        cfg = OPROConfig(steps=steps, max_shown=10, resample_invalid=True, stop_at_optimum=False)
        return OPRO(TSP(n=9, seed=4), ScriptedBackend(scripted_tsp_optimizer), config=cfg)

    straight = make(6).run(tmp_path / "a")
    make(3).run(tmp_path / "b")
    resumed = make(6).run(tmp_path / "b", resume=True)
    assert [s.solution for s in resumed.history] == [s.solution for s in straight.history]
    assert resumed.best_per_step == straight.best_per_step
    lines = [json.loads(x) for x in (tmp_path / "b" / "trajectory.jsonl").read_text().splitlines()]
    assert [r["step"] for r in lines] == list(range(6))
    assert (tmp_path / "a" / "trajectory.jsonl").read_text() == (
        tmp_path / "b" / "trajectory.jsonl"
    ).read_text()  # usage included: the ledger is carried across the resume
    assert resumed.usage == straight.usage and straight.usage["calls"] == 48


def test_fast_steps_share_a_checkpoint_and_a_resume_replays_them(tmp_path, monkeypatch):
    import iclr24_opro.opro as loop

    writes = []
    write = loop.atomic_write_json
    monkeypatch.setattr(loop, "atomic_write_json", lambda p, d: (writes.append(p), write(p, d)))
    q = TSP(n=9, seed=4)
    cfg = OPROConfig(steps=40, stop_at_optimum=False)

    def run(out, steps=40, **kw):
        c = replace(cfg, steps=steps)
        return OPRO(q, proposer=LocalPerturbation(c), config=c).run(out, **kw)

    straight = run(tmp_path / "a", checkpoint_every_s=0.0)  # every step
    assert len(writes) == 40
    writes.clear()
    once = run(tmp_path / "b")  # 40 search steps in well under a second: one write, at the end
    assert len(writes) == 1 and once.history == straight.history
    assert (tmp_path / "a" / "checkpoint.json").read_text() == (
        tmp_path / "b" / "checkpoint.json"
    ).read_text()
    # a run stopped after steps that were not checkpointed: its resume replays them exactly
    run(tmp_path / "c", steps=10)

    def stop(rec):
        if rec["step"] == 25:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run(tmp_path / "c", resume=True, on_step=stop)
    assert json.loads((tmp_path / "c" / "checkpoint.json").read_text())["step_index"] == 10
    assert len((tmp_path / "c" / "trajectory.jsonl").read_text().splitlines()) == 26
    resumed = run(tmp_path / "c", resume=True)
    assert resumed.history == straight.history
    assert (tmp_path / "c" / "trajectory.jsonl").read_text() == (
        tmp_path / "a" / "trajectory.jsonl"
    ).read_text()


def test_baselines_stop_at_exactly_the_evaluation_budget():
    q = TSP(n=8, seed=2)
    cfg = OPROConfig(steps=100, stop_at_optimum=False, max_evaluations=13)
    for proposer in (RandomSearch(cfg), LocalPerturbation(cfg)):
        res = OPRO(q, proposer=proposer, config=cfg).run()
        assert res.evaluations == 13 and len(res.history) == 13 + 5  # 5 starting traces
        for s in res.history:
            assert sorted(s.solution) == list(range(8)) and s.solution[0] == 0
        assert all(np.diff(res.best_per_step) <= 0)  # the best never gets worse


def test_text_problem_readme_example():
    # maximise -(x - 7)^2 over integers, answers like "x = 5"
    prob = TextProblem(
        score_fn=lambda x: -((x - 7) ** 2),
        format_fn=str,
        parse_fn=lambda t: int(t.split("=")[-1]) if "=" in t else None,
        description="The solution is an integer x.",
        starts=[0, 1],
        minimize=False,
    )

    def step_up(prompt):  # the best shown is last
        best = int(prompt.split("solution:\n")[-1].split("\n")[0])
        return f"x = {best + 1}"

    res = OPRO(prob, ScriptedBackend(step_up), config=OPROConfig(steps=10)).run()
    assert res.best.solution == 7 and res.best.value == 0
    text = prob.meta_prompt(shown_in_prompt(prob, res.history, 2))
    assert "ascending order" in text and text.index("value:\n-1") < text.index("solution:\n7")


# ---------------------------------------------------------------- properties


@settings(max_examples=60, deadline=None)
@given(st.integers(-(10**6), 10**6), st.integers(-(10**6), 10**6), st.text(max_size=30))
def test_parse_linreg_roundtrip(w, b, prefix):
    prefix = prefix.replace("[", "(").replace("]", ")")
    assert parse_linreg(f"{prefix} so the pair is [{w}, {b}]") == [w, b]


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 12).flatmap(lambda n: st.permutations(list(range(1, n)))))
def test_parse_tsp_roundtrip_and_scored_length(perm):
    t = [0, *perm]
    n = len(t)
    assert parse_tsp(f"ok <trace> {', '.join(map(str, t))} </trace>", n) == t
    q = TSP(n=n, seed=n) if n >= 4 else None
    if q is not None:
        pts = q.points.astype(float)
        manual = sum(np.linalg.norm(pts[t[i]] - pts[t[(i + 1) % n]]) for i in range(n))
        assert q.score(t) == pytest.approx(manual)
