"""README tables are generated from the committed results files, and never drift from them."""

import json
import shutil
from pathlib import Path

import pytest

from iclr24_common import Metrics, superiority, write_results
from iclr24_common.results import Claim
from iclr24_common.tables import expected_readmes, main, package_block, papers_block, read_results

ROOT = Path(__file__).resolve().parents[3]


def test_every_readme_table_matches_its_results_file():
    stale = [str(p.relative_to(ROOT)) for p, text in expected_readmes(ROOT).items()
             if p.read_text() != text]  # fmt: skip
    assert not stale, f"README tables differ from their results files (run `make tables`): {stale}"
    assert "<!-- results:begin" in (ROOT / "README.md").read_text()


def fake_repo(tmp_path: Path) -> Path:
    for slug in ("good", "broken", "missing"):
        pkg = tmp_path / "packages" / slug
        (pkg / "results").mkdir(parents=True)
        (pkg / "pyproject.toml").write_text("")
        (pkg / "README.md").write_text("# x\n\n<!-- results:begin old -->\nold\n<!-- results:end -->\n")
    m = Metrics()
    for s, (a, b) in enumerate([(2.0, 1.0), (2.1, 1.0), (1.9, 1.1)]):
        m.add("a", s, a)
        m.add("b", s, b)
    claim = Claim(id="better", statement="s", paper="Table 1", measured="m",
                  test=superiority(m.by_seed("a"), m.by_seed("b"), margin=0.5))  # fmt: skip
    write_results(tmp_path / "run", package="iclr24-good", version="0", paper={"title": "T", "arxiv": "1"},
                  preset="default", seeds=[0, 1, 2], device="cpu", wall_seconds=12.0, metrics=m,
                  claims=[claim])  # fmt: skip
    shutil.copyfile(tmp_path / "run" / "results.json", tmp_path / "packages/good/results/default.json")
    (tmp_path / "packages/broken/results/default.json").write_text('{"claims": []}')
    (tmp_path / "README.md").write_text("top\n<!-- results:begin -->\n<!-- results:end -->\ntail\n")
    return tmp_path


def test_tables_write_then_check_and_survive_bad_files(tmp_path):
    root = fake_repo(tmp_path)
    assert main(["--root", str(root), "--check"]) == 1
    assert main(["--root", str(root)]) == 0
    assert main(["--root", str(root), "--check"]) == 0
    top = (root / "README.md").read_text()
    assert "| [good](packages/good) | T (arXiv 1) | 1 | 0 | 0 | 12 s" in top and top.endswith("tail\n")
    assert "malformed results file" in top and "no results file" in top
    good = (root / "packages/good/README.md").read_text()
    assert "| better | holds |" in good and "wall time **12 s**" in good and "\nold\n" not in good
    assert "malformed" in (root / "packages/broken/README.md").read_text()


def test_keep_copies_a_default_run_and_refuses_others(tmp_path):
    root = fake_repo(tmp_path)
    (root / "run" / "fig.png").write_bytes(b"png")
    assert main(["--root", str(root), "--keep", "good", "--run", str(root / "run")]) == 0
    assert (root / "packages/good/results/figures/fig.png").read_bytes() == b"png"
    res = json.loads((root / "run" / "results.json").read_text())
    res["preset"] = "smoke"
    (root / "run" / "results.json").write_text(json.dumps(res))
    assert main(["--root", str(root), "--keep", "good", "--run", str(root / "run")]) == 2
    assert main(["--root", str(root), "--keep", "nope"]) == 2


def test_blocks_say_what_is_missing():
    assert "no results file" in package_block(*read_results(Path("/nonexistent.json")))
    with pytest.raises(FileNotFoundError):
        papers_block(Path("/nonexistent"))
