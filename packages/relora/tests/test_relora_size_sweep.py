"""The size sweep (issue 50): the ``size-sweep`` preset runs the default protocol at several
model shapes, each at the default run's chosen points; a sweep of one shape gives the plain
run's numbers; the CPU-reach extrapolation inverts its own fit."""

import json
from pathlib import Path

import pytest
from iclr24_relora.experiment import PRESETS, Preset, _grid, app, cpu_reach

RESULTS = Path(__file__).resolve().parents[1] / "results" / "default.json"
TINY = ["--set", "steps=12", "--set", "warm_start=3", "--set", "relora_steps=3", "--set",
        "warmup=1", "--set", "batch_size=4", "--set", "seq_len=16", "--set", "eval_batches=1",
        "--set", "val_batches=1", "--device", "cpu", "--threads", "1", "--workers", "1"]  # fmt: skip


def test_the_sweep_runs_every_size_at_the_default_runs_choice():
    sweep = PRESETS["size-sweep"]
    chosen = json.loads(RESULTS.read_text())["tuning"]["chosen"]
    for method, label in chosen.items():  # e.g. "lr 0.003, alpha/r 4"
        lr, *scale = (float(part.split(" ")[-1]) for part in label.split(", "))
        assert _grid(sweep, method) == [(lr, scale[0] if scale else sweep.tune_lora_scale[0])]
    # the official shapes (configs/llama_9m, 20m, 35m) and one below them
    assert sweep.sweep[1:] == ("128x352x4x4", "256x688x4x4", "384x1024x6x8")
    # everything else is the default protocol
    assert {k: v for k, v in vars(sweep).items() if k not in ("seeds", "sweep", "points")} == {
        k: v for k, v in vars(PRESETS["default"]).items() if k not in ("seeds", "sweep", "points")
    }


@pytest.mark.parametrize("field, value", [
    ("points", ("full:0.001", "lora:0.003:0.25", "relora:0.003:4")),  # lora_warm missing
    ("points", ("full:0.001:4", "lora:0.003:0.25", "lora_warm:0.003:4", "relora:0.003:4")),
    ("sweep", ("64x176x2",)),
    ("sweep", ("64x176x2x3",)),  # 64 does not divide by 3 heads
])  # fmt: skip
def test_malformed_points_and_shapes_are_refused(field, value):
    with pytest.raises(ValueError):
        Preset(**{field: value})


def test_a_sweep_of_one_shape_gives_the_plain_runs_numbers(tmp_path):
    points = ["--set", "points=" + ",".join(PRESETS["size-sweep"].points)]
    base = ["reproduce", "--preset", "default", "--seeds", "0", *TINY, *points]
    shape = ["--set", "hidden=32", "--set", "intermediate=48", "--set", "layers=1",
             "--set", "heads=2"]  # fmt: skip
    assert app.main([*base, *shape, "--out", str(tmp_path / "plain")]) == 0
    assert app.main([*base, "--set", "sweep=32x48x1x2", "--out", str(tmp_path / "sweep")]) == 0
    plain = json.loads((tmp_path / "plain" / "results.json").read_text())
    sweep = json.loads((tmp_path / "sweep" / "results.json").read_text())
    for name, value in plain["metrics"].items():
        if "seconds" not in name:
            assert sweep["metrics"][f"h32l1/{name}"]["per_seed"] == value["per_seed"], name
    assert [c["id"] for c in sweep["claims"]] == [f"{c['id']}/h32l1" for c in plain["claims"]]
    assert [c["verdict"] for c in sweep["claims"]] == [c["verdict"] for c in plain["claims"]]
    row = sweep["sizes"]["h32l1"]
    assert row["params"] == plain["metrics"]["full/trainable_params"]["mean"]
    assert sorted(row["ordering"].split(" < ")) == ["full", "lora", "lora_warm", "relora"]
    assert (tmp_path / "sweep" / "size_sweep.png").exists()
    assert "tuning" in plain and "sizes" not in plain  # the plain run is as before


def test_the_cpu_reach_scales_the_largest_shape_by_its_parameters():
    # 1 us per token at 1M parameters, 2 us at 4M (overheads at the small end): the reach
    # follows the largest shape in proportion to the parameters; the fit is reported only
    sizes = {f"s{n}": {"params": n * 1e6, "full_tokens_per_second": 1 / t,
                       "core_seconds_per_seed": 4 * 240 * 1024 * t}
             for n, t in ((1, 1e-6), (4, 2e-6))}  # fmt: skip
    reach = cpu_reach(sizes, PRESETS["default"], cores=2, hours=1.0)
    assert reach["measured_exponent"] == pytest.approx(0.5)
    # 7200 core-seconds / (240 steps x 1024 tokens) = 29.3 us per token: 4M x 29.3 / 2
    assert reach["largest_params_at_our_steps"] == pytest.approx(7200 / (240 * 1024) / 2e-6 * 4e6)
    assert reach["largest_params_for_the_protocol"] == pytest.approx(
        7200 / (4 * 240 * 1024 * 2e-6) * 4e6
    )
    assert reach["steps_in_budget"]["4M"] == pytest.approx(7200 / (1024 * 2e-6))
    assert reach["largest_params_at_20k_steps"] == pytest.approx(
        7200 / (20_000 * 1024) / 2e-6 * 4e6
    )
    # the paper's 60M at its 20k steps of 600 x 512 tokens: 15x the 4M shape's seconds per token
    want = 2e-6 * 15 * 20_000 * 600 * 512 / 3600
    assert reach["paper_60m_20k_steps_of_600x512_tokens_core_hours"] == pytest.approx(want)
