"""The replay of the logged PC curves: the official CSV (both layouts; epoch 1's 0 is missing)
and the (window, patience) grid."""

import numpy as np
import pytest
from iclr24_labelwave import label_wave_stop, read_official_csv
from iclr24_labelwave.sensitivity import replay_cell, replay_grid

PCS = [0, 60, 70, 80, 50, 40, 45, 60, 70, 80]  # as main.py writes it: 0 at epoch 1
ACC = [30.0, 50.0, 60.0, 70.0, 75.0, 80.0, 79.0, 76.0, 72.0, 70.0]


def write(path, header, extra):
    rows = [",".join(header)] + [
        ",".join(map(str, [e + 1, pc, *extra, a])) for e, (pc, a) in enumerate(zip(PCS, ACC))
    ]
    path.write_text("\n".join(rows) + "\n")


@pytest.mark.parametrize("layout", ["178a761", "cf3e9eb"])
def test_official_csv_epoch_one_is_missing_not_zero(tmp_path, layout):
    f = tmp_path / "Results.csv"
    if layout == "178a761":
        write(f, ["Epoch", "LabelWave", "ValAcc", "TestAcc"], [55.0])
    else:
        write(f, ["Epoch", "LabelWave", "TestAcc"], [])
    pcs, acc = read_official_csv(f)
    assert pcs[0] is None and pcs[1:] == PCS[1:] and acc == ACC
    # MA_4 = mean(60, 70, 80) = 70 ... the minimum mean(50, 40, 45) = 45 ends at epoch 7; read
    # as a count of 0, epoch 1 would make MA_3 = mean(0, 60, 70) = 43.3 a false minimum
    assert label_wave_stop(pcs, window=3, patience=2) == (7, 9)
    assert label_wave_stop(PCS, window=3, patience=2) == (3, 5)


def test_not_an_official_csv_is_one_clear_error(tmp_path):
    f = tmp_path / "x.csv"
    f.write_text("a,b\n1,2\n")
    with pytest.raises(ValueError, match="not an official"):
        read_official_csv(f)


def run(pcs, acc):
    return {"pc": np.array([np.nan if p is None else p for p in pcs], dtype=float),
            "test_acc": np.array(acc)}  # fmt: skip


def test_grid_cell_is_the_replay_of_each_run():
    r = run([None, *PCS[1:]], ACC)  # oracle: epoch 6 (80.0)
    cell = replay_cell([r], window=3, patience=2)  # selects epoch 7 (79.0), stops at 9
    assert cell == {"gap": -1.0, "gap_min": -1.0, "epochs_from_oracle": 1.0, "stop_rate": 1.0}
    never = replay_cell([r], window=3, patience=20)  # patience never runs out
    assert never["stop_rate"] == 0.0 and never["gap"] == -1.0


def test_grid_shape_rows_windows_columns_patiences():
    r = run([None, *PCS[1:]], ACC)
    g = replay_grid({"sym0.4": [r, r]}, windows=(1, 3), patiences=(2, 5, 20))
    m = g["groups"]["sym0.4"]
    assert np.shape(m["gap"]) == (2, 3) and np.shape(m["stop_rate"]) == (2, 3)
    assert m["gap"][1][0] == -1.0 and m["stop_rate"][1][2] == 0.0
