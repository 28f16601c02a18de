"""The tuning grid (issue 50): every method the same grid, chosen on validation, never on the
test batches; and the default preset's schedule lengths in the official proportions."""

from iclr24_relora.experiment import PRESETS, WARM_ARMS, _best, _grid, _key


def _done(method, val, test):
    """Fake unit results: {key: (metrics, items)} with the given validation and test loss."""
    preset = PRESETS["default"]
    keys = {p: _key(0, method, p) for p in _grid(preset, method)}
    done = {k: ({f"{method}/val_loss": v, f"{method}/eval_loss": t}, [])
            for k, v, t in zip(keys.values(), val, test)}  # fmt: skip
    return done, keys


def test_the_choice_reads_the_validation_loss_and_never_the_test_loss():
    # validation prefers the first point, the test batches the last: the first is chosen
    done, keys = _done("relora", val=[2.0, 2.1, 2.2, 2.3], test=[2.4, 2.3, 2.2, 1.0])
    assert _best(done, keys, "relora") == (1e-3, 0.25)
    # the other way round: the test loss is lowest at the first point, validation at the last
    done, keys = _done("relora", val=[2.3, 2.2, 2.1, 2.0], test=[1.0, 2.2, 2.3, 2.4])
    assert _best(done, keys, "relora") == (3e-3, 4.0)
    # a tie goes to the first point in grid order
    done, keys = _done("lora", val=[2.0, 2.0, 2.1, 2.1], test=[2.0, 1.0, 2.0, 2.0])
    assert _best(done, keys, "lora") == (1e-3, 0.25)


def test_every_method_gets_the_same_grid():
    preset = PRESETS["default"]
    lora = _grid(preset, "lora")
    assert lora == [(lr, s) for lr in (1e-3, 3e-3) for s in (0.25, 4.0)]
    assert all(_grid(preset, m) == lora for m in WARM_ARMS)
    # full rank has no LoRA scale: the same learning rates, nothing else
    assert [lr for lr, _ in _grid(preset, "full")] == list(preset.tune_lr)
    # the paper preset's grid is the official point alone
    assert _grid(PRESETS["paper"], "relora") == [(1e-3, 0.25)]
    # unit keys name the grid point (and the warm start's lr for the warm-started arms)
    assert _key(1, "relora", (3e-3, 4.0), 1e-3) == "seed1/relora/lr0.003_s4_ws0.001"
    assert _key(0, "full", (1e-3, 0.25)) == "seed0/full/lr0.001"


def test_default_schedule_lengths_keep_the_official_proportions():
    """Official README at 176f376 (250M recipe): 20000 steps, warm start 5000, --relora 5000
    --cycle_length 5000, --restart_warmup_steps 100, --warmup_steps 500."""
    preset = PRESETS["default"]
    official = {"warm_start": 5000, "relora_steps": 5000, "restart_warmup": 100, "warmup": 500}
    for field, steps in official.items():
        assert getattr(preset, field) == max(1, round(steps / 20_000 * preset.steps)), field
    # 3 cycles after the warm start (2 merges), as the official 15k ReLoRA steps of 5k cycles
    assert (preset.steps - preset.warm_start) // preset.relora_steps == 3
