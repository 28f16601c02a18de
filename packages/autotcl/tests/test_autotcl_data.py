"""The generated series, the time covariates, the real loaders on small files the tests write,
and the bundled sets (sktime's UEA files, vega_datasets' Seattle series) read offline."""

import json
import socket
from pathlib import Path

import numpy as np
import pytest
from iclr24_autotcl import load_forecast_csv, make_ett_like, time_features
from iclr24_autotcl.data import load_classification, load_seattle, read_ts, wheel_file

from iclr24_common import MissingDataError


def test_time_features_of_a_known_date():
    stamps = np.array(["2016-07-01T00:00", "2016-07-04T13:15"], dtype="datetime64[m]")
    # minute, hour, day of week (Mon = 0), day, day of year, month, ISO week
    np.testing.assert_array_equal(time_features(stamps), [[0, 0, 4, 1, 183, 7, 26],
                                                          [15, 13, 0, 4, 186, 7, 27]])  # fmt: skip


def test_generated_series_layout_and_oracle():
    task = make_ett_like(1200, seed=0, horizons=(24,))
    # 50 days from 1 July: day of month, day of year, month and week leave their training
    # range on the test split (dropped); minute, hour and day of week stay
    assert task.n_covariates == 3 and task.data.shape == (1, 1200, 4)
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
    assert task.data.shape == (1, 100, 8)  # TS2Vec's pipeline: all seven covariates
    assert (task.train, task.valid, task.test) == (slice(0, 60), slice(60, 80), slice(80, 100))
    raw = np.arange(100) % 7
    np.testing.assert_allclose(
        task.target[0, :, 0], (raw - raw[:60].mean()) / raw[:60].std(), atol=1e-5
    )
    assert task.horizons == (24, 48, 168, 336, 720)


def test_missing_file_says_where_and_how(tmp_path):
    with pytest.raises(MissingDataError, match="ETTh1.csv"):
        load_forecast_csv(tmp_path, "ETTh1")


# ----------------------------------------------------------------------------- bundled data
@pytest.fixture
def offline(monkeypatch):
    """Any attempt to open a network connection fails the test."""

    def refuse(*args, **kwargs):
        raise AssertionError("a loader tried to reach the network")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def test_read_ts_pads_unequal_lengths_and_reads_missing_values(tmp_path):
    path = tmp_path / "x.ts"
    path.write_text("# a comment\n@problemName x\n@classLabel true a b\n@data\n"
                    "1,2,3:4,5,6:a\n7,?:8,9:b\n")  # fmt: skip
    X, y = read_ts(path)
    assert X.shape == (2, 3, 2) and list(y) == ["a", "b"]
    np.testing.assert_array_equal(X[0], [[1, 4], [2, 5], [3, 6]])
    np.testing.assert_array_equal(X[1, :2, 1], [8, 9])
    assert np.isnan(X[1, 1, 0]) and np.isnan(X[1, 2]).all()


def test_uea_archive_folder_and_missing_data(tmp_path):
    folder = tmp_path / "autotcl" / "UEA" / "Toy"
    folder.mkdir(parents=True)
    (folder / "Toy_TRAIN.ts").write_text("@data\n0,2:1,1:up\n2,4:3,3:down\n")
    with pytest.raises(MissingDataError, match="Toy_TEST.ts"):
        load_classification("Toy", tmp_path)
    (folder / "Toy_TEST.ts").write_text("@data\n1,1,1:2,2,2:up\n")
    task = load_classification("Toy", tmp_path)
    assert task.classes == ("down", "up") and list(task.train_y) == [1, 0]
    # standardised per channel on the training values only (channel 0: mean 2, std sqrt 2)
    np.testing.assert_allclose(task.train_x[0, :, 0], [-2 / np.sqrt(2), 0], atol=1e-6)
    assert task.test_x.shape == (1, 3, 2) and list(task.test_y) == [1]


def test_bundled_uea_sets_load_offline(offline):
    basic = load_classification("BasicMotions")
    assert basic.train_x.shape == (40, 100, 6) and basic.test_x.shape == (40, 100, 6)
    assert len(basic.classes) == 4 and np.bincount(basic.train_y).tolist() == [10] * 4
    vowels = load_classification("JapaneseVowels")  # variable length 7..29, 12 channels
    assert vowels.train_x.shape[::2] == (270, 12) and vowels.test_x.shape[::2] == (370, 12)
    assert len(vowels.classes) == 9 and np.isnan(vowels.train_x).any()
    flat = vowels.train_x.reshape(-1, 12)
    np.testing.assert_allclose(np.nanmean(flat, 0), 0, atol=1e-5)
    np.testing.assert_allclose(np.nanstd(flat, 0), 1, atol=1e-4)


def test_covariates_whose_values_training_never_saw_are_dropped():
    from iclr24_autotcl.data import COVARIATE_NAMES, seen_covariates

    stamps = np.datetime64("2010-01-01T00") + np.arange(3024).astype("timedelta64[h]")
    keep = seen_covariates(time_features(stamps), slice(0, 1814))  # Jan 1 - Mar 17 trains
    # ISO week 53 (1 Jan 2010) puts April's weeks 15-18 inside the training range, unseen
    assert [n for n, k in zip(COVARIATE_NAMES, keep) if k] == ["minute", "hour", "day of week",
                                                             "day"]  # fmt: skip
    for task in (load_seattle(hours=3024), load_seattle(), make_ett_like(3024, 0)):
        raw = task.data[0, :, : task.n_covariates]
        assert task.n_covariates == 4
        for col in raw.T:  # every covariate value off the training split was seen in it
            assert np.isin(col, col[task.train]).all()


def test_seattle_loads_offline_and_matches_vega_datasets(offline):
    task = load_seattle()
    # the whole year: the test months (Oct-Dec) put day of year, month and week outside the
    # training months' range (dropped)
    assert task.n_covariates == 4 and task.data.shape == (1, 8759, 5)
    assert (task.train, task.valid, task.test) == (
        slice(0, 5255),
        slice(5255, 7007),
        slice(7007, 8759),
    )
    from vega_datasets import data  # the package's own reader of the same local file

    ref = data.seattle_temps()  # use_local=True by default: no network (the fixture checks)
    raw = task.target[0, :, 0] * task.std[0] + task.mean[0]
    np.testing.assert_allclose(raw, ref["temp"].to_numpy(), atol=1e-3)
    # hour-of-day covariate follows the timestamps
    hours = ref["date"].dt.hour.to_numpy()
    assert np.corrcoef(task.data[0, :, 1], hours)[0, 1] > 0.999


def test_the_default_seattle_cut_keeps_its_test_within_the_training_range():
    from iclr24_autotcl.data import first_in_range_start, out_of_range_count
    from iclr24_autotcl.experiment import PRESETS

    # January to April: spring warms past winter, 28 % of validation and test values outside
    outside, n = out_of_range_count(load_seattle(hours=3024))
    assert n == 1210 and outside == 338
    # the rule's cut (21 May to 23 September) is the default's, and none is outside there
    preset = PRESETS["default"]
    assert first_in_range_start(3024) == preset.seattle_start == 3360
    task = load_seattle(hours=preset.seattle_hours, start=preset.seattle_start)
    assert out_of_range_count(task) == (0, 1210)
    assert str(np.datetime64("2010-01-01T00") + np.timedelta64(3360, "h")) == "2010-05-21T00"
    assert task.data.shape == (1, 3024, 5) and task.n_covariates == 4


@pytest.mark.parametrize("name", ["JapaneseVowels", "BasicMotions"])
def test_read_ts_agrees_with_sktimes_loader(name):
    """Our parser against sktime's ``load_from_tsfile`` on the bundled files (a fixture of its
    outputs: lengths, sums, labels; see its provenance field)."""
    ref = json.loads((Path(__file__).parent / "fixtures" / "sktime_uea.json").read_text())
    for split in ("TRAIN", "TEST"):
        X, y = read_ts(wheel_file("sktime", "datasets", "data", name, f"{name}_{split}.ts"))
        expected = ref[f"{name}_{split}"]
        assert [v.lower() for v in y] == expected["labels"]  # sktime lower-cases the labels
        assert (~np.isnan(X).all(axis=-1)).sum(axis=1).tolist() == expected["lengths"]
        np.testing.assert_allclose(np.nansum(X, axis=(0, 1)), expected["channel_sums"], atol=1e-4)
        np.testing.assert_allclose(np.nansum(X, axis=(1, 2)), expected["series_sums"], atol=1e-4)
