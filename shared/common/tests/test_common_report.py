"""The results site: every paper a row, local runs first, bad files a row that says so, and
the page seen in a real browser (headless Chromium, skipped with a message where absent)."""

import json
import shutil

import pytest

from iclr24_common.report import browser_check, find_browser, main, write_report


def test_site_has_a_row_per_paper_and_survives_bad_files(tmp_path, fake_repo):
    root = fake_repo(tmp_path)
    (root / "packages/good/results/figures").mkdir()
    (root / "packages/good/results/figures/curve.png").write_bytes(b"png")
    out = tmp_path / "site"
    assert main(["--root", str(root), "--out", str(out)]) == 0
    index = (out / "index.html").read_text()
    assert index.count("<tr><td>") == 3 and "malformed results file" in index
    assert "no results file" in index and "1 holds" in index and "<script" not in index
    # counted apart: the below-regime fail is an outlined "at our scale" badge, not a red one
    assert 'class="badge scale fails">1 fails' in index and "0 holds" in index
    assert "in the paper's regime" in index.lower() and "at our scale" in index
    good = (out / "good.html").read_text()
    assert 'src="good/curve.png"' in good and (out / "good/curve.png").read_bytes() == b"png"
    assert "paired gap &gt; 0.5 and &gt; 2 SE" in good and "Table 1" in good
    assert "fails at our scale" in good and "1B params" in good and "margin source" in good
    assert "Premises (1 of 1 hold)" in good
    assert "missing" in (out / "broken.html").read_text()


def test_a_local_run_takes_precedence_and_is_marked(tmp_path, fake_repo):
    root = fake_repo(tmp_path)
    local = root / "runs/broken/default"
    local.mkdir(parents=True)
    res = json.loads((root / "packages/good/results/default.json").read_text())
    res["package"], res["paper"]["title"] = "iclr24-broken", "Local title"
    (local / "results.json").write_text(json.dumps(res))
    entries = write_report(root, tmp_path / "site")
    broken = next(e for e in entries if e.slug == "broken")
    assert broken.source == "local" and broken.results["paper"]["title"] == "Local title"
    assert "local run" in (tmp_path / "site/index.html").read_text()


def test_the_repository_report_lists_every_paper(tmp_path, repo_root):
    ROOT = repo_root
    entries = write_report(ROOT, tmp_path / "site", runs=tmp_path / "no-runs")
    slugs = sorted(p.name for p in (ROOT / "packages").iterdir() if (p / "pyproject.toml").exists())
    assert [e.slug for e in entries] == slugs
    bad = [f"{e.slug}: {e.problem}" for e in entries if e.results is None]
    assert not bad, bad


@pytest.mark.skipif(find_browser() is None, reason="no Chromium on PATH (apt-get install chromium)")
def test_report_renders_in_a_real_browser(tmp_path, repo_root):
    ROOT = repo_root
    entries = write_report(ROOT, tmp_path / "site", runs=tmp_path / "no-runs")
    for width in (1280, 390):  # a laptop and a phone
        seen = browser_check(
            tmp_path / "site/index.html", tmp_path / f"shot{width}.png", width=width
        )
        assert (
            seen["rows"] == len(entries) == len(list((ROOT / "packages").glob("*/pyproject.toml")))
        )
        assert seen["pixel_std"] > 0.02, "the screenshot is blank"
    shutil.rmtree(tmp_path / "site")


def test_a_run_on_the_papers_data_is_shown_beside_the_default(tmp_path, fake_repo):
    root = fake_repo(tmp_path)
    good = root / "packages/good/results"
    res = json.loads((good / "default.json").read_text())
    res["preset"], res["data_files"] = "paper", {"cora/ind.cora.x": "ab" * 32}
    (good / "paper-cpu.json").write_text(json.dumps(res))
    (good / "figures/paper-cpu").mkdir(parents=True)
    (good / "figures/paper-cpu/auc.png").write_bytes(b"png")
    out = tmp_path / "site"
    write_report(root, out)
    index = (out / "index.html").read_text()
    assert 'href="good.html#paper-cpu">paper-cpu</a>' in index and "none" in index
    page = (out / "good.html").read_text()
    assert 'id="paper-cpu"' in page and "SHA-256 " + "ab" * 32 in page
    assert 'src="good/paper-cpu/auc.png"' in page and (out / "good/paper-cpu/auc.png").exists()
