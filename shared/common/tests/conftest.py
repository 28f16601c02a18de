"""Shared fixtures of the iclr24-common tests."""

import shutil
from pathlib import Path

import pytest

from iclr24_common import Claim, Metrics, Premise, Source, none_of, superiority, write_results

ROOT = Path(__file__).resolve().parents[3]


def make_fake_repo(tmp_path: Path) -> Path:
    """A repository with three packages: one with a valid default results file, one with a
    malformed file, one with none; each README and the top-level one carry a results block."""
    for slug in ("good", "broken", "missing"):
        pkg = tmp_path / "packages" / slug
        (pkg / "results").mkdir(parents=True)
        (pkg / "pyproject.toml").write_text("")
        (pkg / "README.md").write_text(
            "# x\n\n<!-- results:begin old -->\nold\n<!-- results:end -->\n"
        )
    m = Metrics()
    for s, (a, b) in enumerate([(2.0, 1.0), (2.1, 1.0), (1.9, 1.1)]):
        m.add("a", s, a)
        m.add("b", s, b)
    src = Source.paper("better by half a point", "Table 1")
    claim = Claim(id="better", statement="s", paper="Table 1", measured="m", regime="paper",
                  test_set="per-seed", rests_on=("trained",),
                  test=superiority(m.by_seed("a"), m.by_seed("b"), margin=0.5, source=src))  # fmt: skip
    small = Claim(id="scale", statement="s", paper="Table 2", measured="m", regime="below",
                  needs="1B params (paper Sec. 4); ours 1M", test_set="none",
                  test=superiority(m.by_seed("b"), m.by_seed("a"), source=src))  # fmt: skip
    trained = Premise(id="trained", statement="every fit converged", measured="0 capped",
                      test=none_of([0, 0, 0]))  # fmt: skip
    write_results(tmp_path / "run", package="iclr24-good", version="0", paper={"title": "T", "arxiv": "1"},
                  preset="default", seeds=[0, 1, 2], device="cpu", wall_seconds=12.0, metrics=m,
                  claims=[claim, small], premises=[trained])  # fmt: skip
    shutil.copyfile(
        tmp_path / "run" / "results.json", tmp_path / "packages/good/results/default.json"
    )
    (tmp_path / "packages/broken/results/default.json").write_text('{"claims": []}')
    (tmp_path / "README.md").write_text("top\n<!-- results:begin -->\n<!-- results:end -->\ntail\n")
    return tmp_path


@pytest.fixture
def fake_repo():
    return make_fake_repo


@pytest.fixture
def repo_root():
    return ROOT
