"""README tables are generated from the committed results files, and never drift from them."""

import json
from pathlib import Path

import pytest

from iclr24_common.tables import expected_readmes, main, package_block, papers_block, read_results

ROOT = Path(__file__).resolve().parents[3]


def test_every_readme_table_matches_its_results_file():
    stale = [str(p.relative_to(ROOT)) for p, text in expected_readmes(ROOT).items()
             if p.read_text() != text]  # fmt: skip
    assert not stale, f"README tables differ from their results files (run `make tables`): {stale}"
    assert "<!-- results:begin" in (ROOT / "README.md").read_text()


def test_tables_write_then_check_and_survive_bad_files(tmp_path, fake_repo):
    root = fake_repo(tmp_path)
    assert main(["--root", str(root), "--check"]) == 1
    assert main(["--root", str(root)]) == 0
    assert main(["--root", str(root), "--check"]) == 0
    top = (root / "README.md").read_text()
    # the paper's regime and our scale are counted apart, per package and over all
    assert "| [good](packages/good) | T (arXiv 1) | 1 / 0 / 0 | 0 / 1 / 0 | 12 s" in top
    assert "| **all** | | **1 / 0 / 0** | **0 / 1 / 0** | |" in top and top.endswith("tail\n")
    assert "malformed results file" in top and "no results file" in top
    good = (root / "packages/good/README.md").read_text()
    assert "| better | holds |" in good and "wall time **12 s**" in good and "\nold\n" not in good
    # the block opens with the two regime lines; a verdict below the regime reads "at our scale"
    assert good.split("-->\n", 1)[1].startswith("**In the paper's regime: 1 hold, 0 fail, 0 inc")
    assert (
        "**At our scale (below the paper's regime; not a verdict on the paper): 0 hold, 1 fail"
        in good
    )
    assert "| scale | **fails** at our scale |" in good and "below: 1B params" in good
    assert "| trained | holds | 0 capped |" in good and "source, paper:" in good
    assert "malformed" in (root / "packages/broken/README.md").read_text()


def test_keep_copies_a_default_run_and_refuses_others(tmp_path, fake_repo):
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


def test_a_run_on_the_papers_data_has_its_own_block_and_column(tmp_path, fake_repo):
    root = fake_repo(tmp_path)
    good = root / "packages/good"
    res = json.loads((good / "results/default.json").read_text())
    res["preset"] = "paper"
    (root / "paper-run").mkdir()
    (root / "paper-run/results.json").write_text(json.dumps(res))
    (root / "paper-run/results.md").write_text("md")
    (root / "paper-run/fig.png").write_bytes(b"png")
    # a paper-preset run is refused as the default, kept under its own name
    assert main(["--root", str(root), "--keep", "good", "--run", str(root / "paper-run")]) == 2
    assert main(["--root", str(root), "--keep", "good", "--run", str(root / "paper-run"),
                 "--name", "paper-cpu"]) == 0  # fmt: skip
    assert (good / "results/paper-cpu.json").exists()
    assert (good / "results/figures/paper-cpu/fig.png").read_bytes() == b"png"
    readme = good / "README.md"
    readme.write_text(readme.read_text() + "\n## On the paper's data\n\n<!-- results:begin (generated "
                      "by `make tables` from results/paper-cpu.json; do not edit by hand) -->\n"
                      "<!-- results:end -->\n")  # fmt: skip
    assert main(["--root", str(root)]) == 0 and main(["--root", str(root), "--check"]) == 0
    text = readme.read_text()
    assert text.count("`paper` preset") == 1 and text.count("`default` preset") == 1
    top = (root / "README.md").read_text()
    assert "[paper-cpu](packages/good/results/paper-cpu.md): 1 / 0 / 0" in top
    # another kept run (a size sweep on generated data) has its block but no place in the
    # column of runs on the paper's data
    assert main(["--root", str(root), "--keep", "good", "--run", str(root / "paper-run"),
                 "--name", "size-sweep"]) == 0  # fmt: skip
    assert main(["--root", str(root)]) == 0
    top = (root / "README.md").read_text()
    assert "paper-cpu.md): 1 / 0 / 0 |" in top and "size-sweep" not in top
