"""The generated series, the time covariates, and the real loader on a small CSV."""

import numpy as np
import pytest
from iclr24_autotcl import load_forecast_csv, make_ett_like, time_features

from iclr24_common import MissingDataError


def test_time_features_of_a_known_date():
    stamps = np.array(["2016-07-01T00:00", "2016-07-04T13:15"], dtype="datetime64[m]")
    # minute, hour, day of week (Mon = 0), day, day of year, month, ISO week
    np.testing.assert_array_equal(time_features(stamps), [[0, 0, 4, 1, 183, 7, 26],
                                                          [15, 13, 0, 4, 186, 7, 27]])  # fmt: skip


def test_generated_series_layout_and_oracle():
    task = make_ett_like(1200, seed=0, horizons=(24,))
    assert task.data.shape == (1, 1200, 8)
    assert (task.train, task.valid, task.test) == (slice(0, 720), slice(720, 960), slice(960, 1200))
    y = task.target[0, task.train, 0]
    assert abs(y.mean()) < 1e-5 and abs(y.std() - 1) < 1e-5  # standardised on train only
    assert task.oracle[24].shape == (1200, 24)
    assert 0.003 < task.spikes.mean() < 0.03
    # the oracle beats predicting the last value
    t = np.arange(960, 1200 - 24)
    truth = np.stack([task.target[0, t + h, 0] for h in range(1, 25)], 1)
    naive = np.repeat(task.target[0, t, 0][:, None], 24, 1)
    assert ((task.oracle[24][t] - truth) ** 2).mean() < ((naive - truth) ** 2).mean()


def test_generated_series_depends_on_the_seed_only():
    np.testing.assert_array_equal(make_ett_like(600, 1).data, make_ett_like(600, 1).data)
    assert not np.array_equal(make_ett_like(600, 1).data, make_ett_like(600, 2).data)


def test_load_forecast_csv_reads_a_small_file(tmp_path):
    folder = tmp_path / "autotcl"
    folder.mkdir()
    stamps = np.datetime64("2020-01-01T00") + np.arange(100).astype("timedelta64[h]")
    rows = ["date,p,WetBulbCelsius"] + [f"{str(s).replace('T', ' ')}:00:00,{i},{i % 7}"
                                         for i, s in enumerate(stamps)]  # fmt: skip
    (folder / "WTH.csv").write_text("\n".join(rows) + "\n")
    task = load_forecast_csv(tmp_path, "WTH")
    assert task.data.shape == (1, 100, 8)
    assert (task.train, task.valid, task.test) == (slice(0, 60), slice(60, 80), slice(80, 100))
    raw = np.arange(100) % 7
    np.testing.assert_allclose(
        task.target[0, :, 0], (raw - raw[:60].mean()) / raw[:60].std(), atol=1e-5
    )
    assert task.horizons == (24, 48, 168, 336, 720)


def test_missing_file_says_where_and_how(tmp_path):
    with pytest.raises(MissingDataError, match="ETTh1.csv"):
        load_forecast_csv(tmp_path, "ETTh1")
