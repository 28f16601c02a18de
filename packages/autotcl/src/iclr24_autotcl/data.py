"""Data: a generated ETT-like hourly series with a known conditional mean and the real hourly
Seattle temperatures bundled in the ``vega_datasets`` wheel (forecasting, default); the small
UEA sets bundled in the ``sktime`` wheel (classification, default); the loaders of the paper's
forecasting CSVs and of UEA archive folders (paper preset). Nothing here touches the network:
the bundled files are read from the installed wheels' folders.

Every series comes as TS2Vec's ``load_forecast_csv`` returns it: ``data`` (N, T, n + K) with the
standardised time covariates (the paper's data: all 7, minute, hour, day of week, day, day of
year, month, week of year; the generated and Seattle series: those whose validation and test
values the training split saw) first and the standardised target(s) last, the train / valid / test slices, and the
scaler (mean, std) fitted on the train slice only. The paper's ETTh1 and ETTh2 files are
pinned by SHA-256 (``PINNED``: what ``--download`` fetches).
"""

from __future__ import annotations

import csv
import datetime as dt
import importlib.util
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from iclr24_common import MissingDataError, MissingDependencyError, RemoteFile

N_COVARIATES = 7
# univariate targets of the TS2Vec / AutoTCL loaders
TARGETS = {"ETTh1": "OT", "ETTh2": "OT", "ETTm1": "OT", "electricity": "MT_001",
           "WTH": "WetBulbCelsius"}  # fmt: skip
SOURCES = {
    "ETTh1": "https://github.com/zhouhaoyi/ETDataset (ETT-small/ETTh1.csv)",
    "ETTh2": "https://github.com/zhouhaoyi/ETDataset (ETT-small/ETTh2.csv)",
    "ETTm1": "https://github.com/zhouhaoyi/ETDataset (ETT-small/ETTm1.csv)",
    "electricity": "the TS2Vec README's electricity.csv (UCI ElectricityLoadDiagrams, hourly)",
    "WTH": "the Informer repository's WTH.csv (https://github.com/zhouhaoyi/Informer2020)",
}

# the paper's forecasting files with pinned checksums (what --download fetches and the paper
# preset checks): zhouhaoyi/ETDataset at a fixed commit, read through GitHub's raw addresses
ETT_COMMIT = "1d16c8f4f943005d613b5bc962e9eeb06058cf07"
ETT_RAW = f"https://raw.githubusercontent.com/zhouhaoyi/ETDataset/{ETT_COMMIT}/ETT-small"
PINNED = {
    "ETTh1": RemoteFile(f"{ETT_RAW}/ETTh1.csv", "ETTh1.csv",
                        "f18de3ad269cef59bb07b5438d79bb3042d3be49bdeecf01c1cd6d29695ee066",
                        size=2_589_657),
    "ETTh2": RemoteFile(f"{ETT_RAW}/ETTh2.csv", "ETTh2.csv",
                        "a3dc2c597b9218c7ce1cd55eb77b283fd459a1d09d753063f944967dd6b9218b",
                        size=2_417_960),
}  # fmt: skip
"""Paths relative to ``<data-dir>/autotcl/`` (where :func:`load_forecast_csv` reads them)."""


@dataclass
class Forecasting:
    """One forecasting task in the TS2Vec layout."""

    data: np.ndarray
    """(N, T, n_covariates + K): covariates then standardised targets."""
    train: slice
    valid: slice
    test: slice
    mean: np.ndarray
    std: np.ndarray
    horizons: tuple[int, ...]
    n_covariates: int = N_COVARIATES
    oracle: dict[int, np.ndarray] | None = None
    """Generated data only: H -> (T, H) standardised E[y_{t+1..t+H} | hidden state at t]."""
    spikes: np.ndarray | None = None
    """Generated data only: (T,) bool, where a task-irrelevant spike was added."""

    @property
    def target(self) -> np.ndarray:  # (N, T, K)
        return self.data[..., self.n_covariates :]


def time_features(stamps: np.ndarray) -> np.ndarray:
    """TS2Vec's ``_get_time_features``: (T,) datetime64 -> (T, 7) float."""
    stamps = stamps.astype("datetime64[m]")
    days = stamps.astype("datetime64[D]")
    minute = (stamps - stamps.astype("datetime64[h]")).astype(int)
    hour = (stamps.astype("datetime64[h]") - days).astype(int)
    dow = (days.astype(int) + 3) % 7  # Monday = 0 (1970-01-01 was a Thursday)
    day = (days - days.astype("datetime64[M]")).astype(int) + 1
    doy = (days - days.astype("datetime64[Y]")).astype(int) + 1
    month = days.astype("datetime64[M]").astype(int) % 12 + 1
    week = np.array([dt.date.fromisoformat(str(d)).isocalendar()[1] for d in days])
    return np.stack([minute, hour, dow, day, doy, month, week], axis=1).astype(float)


def _standardise(x: np.ndarray, train: slice):
    mean, std = x[train].mean(0), x[train].std(0)
    std = np.where(std > 0, std, 1.0)  # a constant covariate (minute in hourly data) -> 0
    return (x - mean) / std, mean, std


COVARIATE_NAMES = ("minute", "hour", "day of week", "day", "day of year", "month", "week of year")


def seen_covariates(features: np.ndarray, train: slice) -> np.ndarray:
    """Which calendar covariates (columns of the raw integer ``features``, (T, 7)) take on the
    validation and test splits only values the training split saw: one that takes others (day
    of year, month and week of year on a series shorter than a year) makes every nonlinear
    representation extrapolate from inputs it never saw in training, so it is dropped."""
    return np.array([np.isin(col, col[train]).all() for col in features.T])


def assemble(stamps, values, train, valid, test, horizons,
             drop_unseen: bool = False) -> Forecasting:  # fmt: skip
    """Covariates + target, both standardised on the train slice. values: (T, K). With
    ``drop_unseen`` the covariates that take values the training split never saw are dropped
    (:func:`seen_covariates`); TS2Vec's pipeline (the paper's data) keeps all seven."""
    features = time_features(stamps)
    if drop_unseen:
        features = features[:, seen_covariates(features, train)]
    cov, _, _ = _standardise(features, train)
    target, mean, std = _standardise(np.asarray(values, dtype=float), train)
    data = np.concatenate([cov, target], axis=1)[None].astype(np.float32)
    return Forecasting(data, train, valid, test, mean, std, tuple(horizons),
                       n_covariates=cov.shape[1])  # fmt: skip


def make_ett_like(n_hours: int = 3024, seed: int = 0, horizons=(24, 48, 168),
                  spike_rate: float = 0.01) -> Forecasting:  # fmt: skip
    """An hourly series with the structure of ETT's oil temperature, fully known (its time
    covariates: those whose test values training saw, :func:`seen_covariates`):

    y_t = trend_t + a[s_t] * daily_t + weekly_t + r_t + spike_t

    a slow trend, a daily cycle whose amplitude a[s_t] in {0.6, 1.6} follows a hidden two-state
    Markov chain (stay probability 0.995), a weekly cycle, AR(1) noise r_t = 0.9 r_{t-1} + 0.25 e_t,
    and at ``spike_rate`` of the hours a large spike (+-4 to 8) that carries no information on
    the future. Splits 60/20/20. The oracle forecast is E[y_{t+h} | s_t, r_t], a lower bound
    for any forecaster that sees the past only."""
    rng = np.random.default_rng(seed)
    t = np.arange(n_hours)
    stamps = np.datetime64("2016-07-01T00") + t.astype("timedelta64[h]")
    amps, stay, phi = np.array([0.6, 1.6]), 0.995, 0.9
    trend = 1.5 * np.sin(2 * np.pi * t / (1.7 * n_hours) + rng.uniform(0, 2 * np.pi))
    hour = t % 24
    daily = np.sin(2 * np.pi * hour / 24) + 0.4 * np.sin(4 * np.pi * hour / 24 + 1.0)
    weekly = 0.7 * np.sin(2 * np.pi * t / 168) - 0.5 * ((t // 24 + 4) % 7 >= 5)
    flips = rng.random(n_hours) > stay
    state = np.cumsum(flips) % 2
    if rng.random() < 0.5:
        state = 1 - state
    noise = np.empty(n_hours)
    noise[0] = 0.0
    eps = 0.25 * rng.standard_normal(n_hours)
    for i in range(1, n_hours):
        noise[i] = phi * noise[i - 1] + eps[i]
    spikes = rng.random(n_hours) < spike_rate
    spike = spikes * rng.choice([-1, 1], n_hours) * rng.uniform(4, 8, n_hours)
    y = trend + amps[state] * daily + weekly + noise + spike
    n_tr, n_va = int(0.6 * n_hours), int(0.2 * n_hours)
    task = assemble(stamps, y[:, None], slice(0, n_tr), slice(n_tr, n_tr + n_va),
                    slice(n_tr + n_va, n_hours), horizons, drop_unseen=True)  # fmt: skip
    # E[a[s_{t+h}] | s_t] for the symmetric chain: mean + (+-half gap) * (2 stay - 1)^h
    oracle = {}
    for H in horizons:
        h = np.arange(1, H + 1)
        idx = np.minimum(t[:, None] + h, n_hours - 1)  # (T, H); past the end is never scored
        sign = np.where(state == 1, 1.0, -1.0)[:, None]
        amp = amps.mean() + sign * (amps[1] - amps[0]) / 2 * (2 * stay - 1) ** h
        mean = trend[idx] + amp * daily[idx] + weekly[idx] + phi**h * noise[:, None]
        oracle[H] = ((mean - task.mean[0]) / task.std[0]).astype(np.float32)
    task.oracle, task.spikes = oracle, spikes
    return task


def read_csv(path: Path, target: str | None) -> tuple[np.ndarray, np.ndarray]:
    """A forecasting CSV with a ``date`` column -> (stamps (T,), values (T, K))."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], [r for r in rows[1:] if r]
    if "date" not in header:
        raise MissingDataError(f"a 'date' column in {path.name}", [path], "the TS2Vec CSV format")
    d = header.index("date")
    stamps = np.array([np.datetime64(r[d].strip().replace(" ", "T").replace("/", "-"))
                       for r in body])  # fmt: skip
    cols = [header.index(target)] if target else [i for i in range(len(header)) if i != d]
    values = np.array([[float(r[i]) for i in cols] for r in body])
    return stamps, values


def load_forecast_csv(root: str | Path, name: str = "ETTh1", univar: bool = True) -> Forecasting:
    """``<root>/autotcl/<name>.csv`` with TS2Vec's splits: ETTh 12/4/4 months, ETTm the same
    in 15-minute steps, the others 60/20/20; horizons as in TS2Vec's ``load_forecast_csv``."""
    if name not in TARGETS:
        raise ValueError(f"unknown dataset {name!r}; known: {', '.join(TARGETS)}")
    path = Path(root) / "autotcl" / f"{name}.csv"
    if not path.exists():
        raise MissingDataError(f"the {name} forecasting table", [path], SOURCES[name])
    stamps, values = read_csv(path, TARGETS[name] if univar else None)
    T = len(stamps)
    if name in ("ETTh1", "ETTh2"):
        a, b, c = 12 * 30 * 24, 16 * 30 * 24, 20 * 30 * 24
    elif name == "ETTm1":
        a, b, c = 12 * 30 * 24 * 4, 16 * 30 * 24 * 4, 20 * 30 * 24 * 4
    else:
        a, b, c = int(0.6 * T), int(0.8 * T), T
    hourly = name != "ETTm1"
    horizons = (24, 48, 168, 336, 720) if hourly else (24, 48, 96, 288, 672)
    return assemble(stamps, values, slice(0, a), slice(a, b), slice(b, c), horizons)


# ----------------------------------------------------------------------------- bundled files
def wheel_file(package: str, *parts: str) -> Path:
    """A data file shipped inside an installed wheel, located without importing the package
    (importing sktime or vega_datasets would cost seconds and could reach for the network)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise MissingDependencyError(f"the {package} wheel (its bundled data)", f"pip install {package}")  # fmt: skip
    path = Path(next(iter(spec.submodule_search_locations)), *parts)
    if not path.exists():
        raise MissingDataError(f"{'/'.join(parts)} in the {package} wheel", [path],
                               f"pip install --force-reinstall {package}")  # fmt: skip
    return path


def load_seattle(horizons=(24, 48, 168), hours: int | None = None, start: int = 0) -> Forecasting:
    """The hourly Seattle temperatures of 2010 (8,759 hourly readings, degrees F) bundled in the
    ``vega_datasets`` wheel (``data.seattle_temps()`` reads the same local file), in the TS2Vec
    layout: the time covariates whose test values training saw (:func:`seen_covariates`:
    part of a year gives day of year, month and week of year test values training never saw)
    and the standardised temperature, splits 60/20/20 (TS2Vec's rule for datasets other than
    ETT). ``hours`` keeps ``hours`` hours from hour ``start`` (0: 1 January) only; ``None``:
    to the end of the year."""
    stamps, values = read_csv(wheel_file("vega_datasets", "_data", "seattle-temps.csv"), "temp")
    if not 0 <= start < len(stamps):
        raise ValueError(f"start must be within the year's {len(stamps)} hours")
    end = None if hours is None else start + hours
    stamps, values = stamps[start:end], values[start:end]
    T = len(stamps)
    a, b = int(0.6 * T), int(0.8 * T)
    return assemble(stamps, values, slice(0, a), slice(a, b), slice(b, T), horizons,
                    drop_unseen=True)  # fmt: skip


def out_of_range_count(task: Forecasting) -> tuple[int, int]:
    """How many validation and test target values lie outside the training split's range (min
    to max), and of how many: a nonlinear representation fitted on the training range must
    extrapolate there, while a ridge on raw lags extrapolates linearly. -> (outside, values)"""
    y = task.target[0]
    train, rest = y[task.train], y[task.valid.start : task.test.stop]
    return int(((rest > train.max(0)) | (rest < train.min(0))).sum()), int(rest.size)


def first_in_range_start(hours: int, step: int = 168) -> int:
    """The first start (in whole weeks, ``step`` hours, from 1 January) of a ``hours``-hour cut
    of the Seattle year whose validation and test temperatures all lie within its training
    range (:func:`out_of_range_count` 0): the rule that picks the default's cut. The first
    3,024 hours (January to April) put 28 % of the validation and test values outside the
    training range (41 % of the test values above its maximum: spring warms past winter), and
    every encoder was ~36x worse than raw lags there."""
    _, values = read_csv(wheel_file("vega_datasets", "_data", "seattle-temps.csv"), "temp")
    a = int(0.6 * hours)
    for start in range(0, len(values) - hours + 1, step):
        y = values[start : start + hours, 0]
        if not ((y[a:] > y[:a].max()) | (y[a:] < y[:a].min())).any():
            return start
    raise ValueError(
        f"no {hours}-hour cut of the Seattle year keeps its test within training range"
    )


# ----------------------------------------------------------------------------- classification
# the UEA sets the sktime wheel bundles (sktime/datasets/data/<name>/<name>_{TRAIN,TEST}.ts;
# its UCR sets ArrowHead, GunPoint, ItalyPowerDemand, OSULeaf load the same way)
BUNDLED_UEA = ("BasicMotions", "JapaneseVowels")
# the 30 UEA sets of the paper's (and TS2Vec's) classification benchmark
UEA30 = ("ArticularyWordRecognition", "AtrialFibrillation", "BasicMotions",
         "CharacterTrajectories", "Cricket", "DuckDuckGeese", "EigenWorms", "Epilepsy", "ERing",
         "EthanolConcentration", "FaceDetection", "FingerMovements", "HandMovementDirection",
         "Handwriting", "Heartbeat", "InsectWingbeat", "JapaneseVowels", "Libras", "LSST",
         "MotorImagery", "NATOPS", "PEMS-SF", "PenDigits", "PhonemeSpectra", "RacketSports",
         "SelfRegulationSCP1", "SelfRegulationSCP2", "SpokenArabicDigits", "StandWalkJump",
         "UWaveGestureLibrary")  # fmt: skip


@dataclass
class Classification:
    """One classification task: series (N, T, C), NaN after the end of shorter series,
    standardised per channel on the training set; labels 0..K-1 (sorted training labels)."""

    name: str
    train_x: np.ndarray
    train_y: np.ndarray
    test_x: np.ndarray
    test_y: np.ndarray
    classes: tuple[str, ...]


def read_ts(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """A ``.ts`` file (the sktime / UEA text format: ``@`` header lines, then one case per line,
    channels separated by ``:``, values by ``,``, ``?`` missing, the class label last)
    -> (X (N, T_max, C) float, NaN-padded at the end; labels (N,) str)."""
    cases, labels, in_data = [], [], False
    for line in Path(path).read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if not in_data:
            in_data = line.lower() == "@data"
            continue
        *channels, label = line.split(":")
        cases.append([np.array([float("nan") if v == "?" else float(v)
                                for v in ch.split(",")]) for ch in channels])  # fmt: skip
        labels.append(label.strip())
    if not cases:
        raise ValueError(f"{path}: no @data section with cases")
    T, C = max(len(ch) for case in cases for ch in case), len(cases[0])
    X = np.full((len(cases), T, C), np.nan)
    for i, case in enumerate(cases):
        for c, ch in enumerate(case):
            X[i, : len(ch), c] = ch
    return X, np.array(labels)


def load_classification(name: str, root: str | Path | None = None) -> Classification:
    """A UEA set as TS2Vec's ``load_UEA`` prepares it (per-channel standardisation fitted on
    the training set, NaNs ignored; labels mapped to the sorted training labels). ``root=None``
    reads the copy bundled in the sktime wheel; otherwise ``<root>/autotcl/UEA/<name>/
    <name>_TRAIN.ts`` and ``_TEST.ts`` (the UEA archive's .ts files)."""
    files = []
    for split in ("TRAIN", "TEST"):
        if root is None:
            files.append(wheel_file("sktime", "datasets", "data", name, f"{name}_{split}.ts"))
        else:
            path = Path(root) / "autotcl" / "UEA" / name / f"{name}_{split}.ts"
            if not path.exists():
                raise MissingDataError(f"the UEA set {name}", [path],
                                       "https://www.timeseriesclassification.com (Multivariate_ts.zip)")  # fmt: skip
            files.append(path)
    (train_x, train_l), (test_x, test_l) = read_ts(files[0]), read_ts(files[1])
    mean = np.nanmean(train_x.reshape(-1, train_x.shape[-1]), axis=0)
    std = np.nanstd(train_x.reshape(-1, train_x.shape[-1]), axis=0)
    std = np.where(std > 0, std, 1.0)
    classes = tuple(np.unique(train_l))
    index = {c: i for i, c in enumerate(classes)}
    return Classification(
        name,
        ((train_x - mean) / std).astype(np.float32),
        np.array([index[c] for c in train_l]),
        ((test_x - mean) / std).astype(np.float32),
        np.array([index[c] for c in test_l]),
        classes,
    )
