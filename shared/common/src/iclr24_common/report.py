"""One page of results: ``iclr24-report`` (``make report``) writes a static site of every paper.

It reads each package's committed results file (``packages/<slug>/results/default.json`` and
its figures under ``results/figures/``) and, where the user has produced one, the local run
``runs/<slug>/default/results.json``, which then takes precedence and is marked as local. It
writes ``report/index.html`` (one row per paper: verdict counts, wall time, machine, date,
commit) and ``report/<slug>.html`` (each claim with its verdict, the paper's number beside
ours, the criterion, the paired test and the control; the checks; the figures; the preset
and environment). Plain HTML and CSS: no JavaScript, no network; the folder opens from disk
(images are copied beside the pages) and reads on a phone as on a laptop. A results file
that is missing or malformed gives a row that says so, never a crash.
"""

from __future__ import annotations

import argparse
import html
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .results import count_verdicts, test_summary
from .tables import RESULTS, extra_runs, machine, on_paper_data, packages, read_results
from .verdicts import sources_of

COLOURS = {"holds": "#1a7f37", "fails": "#cf222e", "inconclusive": "#9a6700"}
CSS = """
:root { color-scheme: light; --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; --bg: #f6f8fa; }
* { box-sizing: border-box; }
body { font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg);
       margin: 0 auto; padding: 1rem; max-width: 72rem; }
h1 { font-size: 1.6rem; margin: .2rem 0 .5rem; } h2 { font-size: 1.25rem; margin-top: 2rem; }
a { color: #0969da; } .muted { color: var(--muted); font-size: .9rem; }
.wrap { overflow-x: auto; } table { border-collapse: collapse; width: 100%; font-size: .92rem; }
th, td { border-bottom: 1px solid var(--line); padding: .45rem .5rem; text-align: left;
         vertical-align: top; } th { background: var(--bg); }
td.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.badge { display: inline-block; border-radius: 1rem; padding: .05rem .6rem; color: #fff;
         font-weight: 600; font-size: .85rem; white-space: nowrap; }
.holds { background: #1a7f37; } .fails { background: #cf222e; }
.inconclusive { background: #9a6700; } .missing { background: #6e7781; } .local { background: #8250df; }
.scale { background: #fff; color: #57606a; border: 1px dashed #57606a; }
.scale.holds { color: #1a7f37; border-color: #1a7f37; } .scale.fails { color: #8c959f; border-color: #8c959f; }
.scale.inconclusive { color: #9a6700; border-color: #9a6700; } .regime { color: var(--muted); font-size: .85rem; }
.claim { border: 1px solid var(--line); border-left: .4rem solid var(--c); border-radius: .4rem;
         padding: .6rem .9rem; margin: .8rem 0; }
.claim h3 { margin: 0 0 .3rem; font-size: 1.05rem; display: flex; gap: .5rem; flex-wrap: wrap;
            align-items: center; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .2rem .8rem; margin: .3rem 0; }
dt { color: var(--muted); } dd { margin: 0; overflow-wrap: anywhere; }
@media (max-width: 40rem) { dl { grid-template-columns: 1fr; } dt { margin-top: .4rem; }
  body { padding: .6rem; } th.wide, td.wide { display: none; } }
figure { margin: 1rem 0; } figure img { max-width: 100%; height: auto; border: 1px solid var(--line); }
.counts { display: flex; gap: .4rem; flex-wrap: wrap; }
"""


@dataclass
class Entry:
    """One paper in the report: its results (or what is wrong with them) and figures."""

    slug: str
    results: dict[str, Any] | None
    problem: str = ""
    source: str = "committed"
    """``committed`` (packages/<slug>/results) or ``local`` (runs/<slug>/default)."""
    figures: list[Path] = field(default_factory=list)
    extras: list[Extra] = field(default_factory=list)
    """The package's runs on the paper's own data (``results/<name>.json``), shown beside."""


@dataclass
class Extra:
    """A committed run on the paper's own data: its name, results (or what is wrong) and
    figures (``results/figures/<name>/``)."""

    name: str
    results: dict[str, Any] | None
    problem: str = ""
    figures: list[Path] = field(default_factory=list)


def collect(root: Path, runs: Path | None = None) -> list[Entry]:
    """Every package's results: a valid local default run first, else the committed file."""
    runs = runs if runs is not None else root / "runs"
    entries = []
    for pkg in packages(root):
        local = runs / pkg.name / "default"
        extras = [Extra(p.stem, *read_results(p),
                        sorted((pkg / "results" / "figures" / p.stem).glob("*.png")))
                  for p in extra_runs(pkg)]  # fmt: skip
        res, problem = read_results(local / "results.json")
        if res is not None:
            entries.append(Entry(pkg.name, res, "", "local", sorted(local.glob("*.png")), extras))
            continue
        res, problem = read_results(pkg / RESULTS)
        figures = sorted((pkg / "results" / "figures").glob("*.png"))
        entries.append(Entry(pkg.name, res, problem, "committed", figures, extras))
    return entries


def _e(x: Any) -> str:
    return html.escape(str(x), quote=True)


def _num(x: Any, fmt: str = ".4g") -> str:
    """A number for a table cell; anything else (null, text) as it is."""
    return format(x, fmt) if isinstance(x, int | float) else _e("-" if x is None else x)


def _badge(word: str, cls: str | None = None) -> str:
    return f'<span class="badge {cls or word}">{_e(word)}</span>'


def _page(title: str, body: str) -> str:
    return ("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{_e(title)}</title><style>{CSS}</style></head>\n<body>\n{body}\n</body></html>\n")  # fmt: skip


def _paper_link(paper: dict[str, Any]) -> str:
    if paper.get("arxiv"):
        return (
            f'<a href="https://arxiv.org/abs/{_e(paper["arxiv"])}">arXiv {_e(paper["arxiv"])}</a>'
        )
    if paper.get("openreview"):
        return f'<a href="https://openreview.net/forum?id={_e(paper["openreview"])}">OpenReview</a>'
    return ""


def _counts(claims: list[dict[str, Any]], regime: str) -> str:
    """The badges of one regime: solid in the paper's regime, outlined at our scale."""
    n = count_verdicts(claims, regime)
    cls = "" if regime == "paper" else "scale "
    return " ".join(_badge(f"{n[k]} {k}", cls + k) for k in COLOURS)


def _extras_cell(en: Entry) -> str:
    """The index cell of a paper's runs on its own data: a link and the paper-regime badges."""
    cells = [f'<a href="{_e(en.slug)}.html#{_e(x.name)}">{_e(x.name)}</a> '
             + (f'<div class="counts">{_counts(x.results["claims"], "paper")}</div>'
                if x.results else _badge("missing"))
             for x in en.extras if on_paper_data(x.name)]  # fmt: skip
    return "<br>".join(cells) or '<span class="muted">none</span>'


def index_html(entries: list[Entry]) -> str:
    total = {r: dict.fromkeys(COLOURS, 0) for r in ("paper", "below")}
    rows = []
    for en in entries:
        link = f'<a href="{_e(en.slug)}.html">{_e(en.slug)}</a>'
        if en.results is None:
            rows.append(f'<tr><td>{link}</td><td colspan="5">{_badge("missing")} {_e(en.problem)}'
                        '</td><td class="wide" colspan="3"></td></tr>')  # fmt: skip
            continue
        res = en.results
        for r in total:
            n = count_verdicts(res["claims"], r)
            for k in total[r]:
                total[r][k] += n[k]
        local = " " + _badge("local run", "local") if en.source == "local" else ""
        commit = ((res.get("environment") or {}).get("git_commit") or "?")[:7]
        rows.append(
            f"<tr><td>{link}{local}<br><span class=\"muted\">{_e(res['paper'].get('title', ''))}</span></td>"
            f"<td><div class=\"counts\">{_counts(res['claims'], 'paper')}</div></td>"
            f"<td><div class=\"counts\">{_counts(res['claims'], 'below')}</div></td>"
            f"<td>{_extras_cell(en)}</td>"
            f"<td class=\"n\">{res['wall_seconds']:.0f} s</td><td class=\"n wide\">{_e(str(res.get('date', ''))[:16])}</td>"
            f"<td class=\"wide\">{_e(machine(res))}</td><td class=\"wide\"><code>{_e(commit)}</code></td></tr>"
        )  # fmt: skip
    said = {r: ", ".join(f"{total[r][k]} {k}" for k in COLOURS) for r in total}
    body = (
        "<h1>iclr24: results of every paper</h1>"
        f"<p>{len(entries)} papers. Claims in the paper's regime (our setting is one in which the "
        f"paper states the effect): {said['paper']}. At our scale (below the paper's regime: a "
        f"verdict about our CPU setting, not about the paper): {said['below']}. Each row is the "
        "<code>default</code> run its README reports (or your own local run, marked). A claim's "
        "verdict comes from paired per-seed values against the strongest baseline, with a "
        "sourced margin and 2 SE; premises and checks are listed apart on each paper's page. A "
        "run on the paper's own data (where a CPU can run the paper's experiment) is listed beside "
        "its default run, with its verdicts in the paper's regime.</p>"
        '<div class="wrap"><table id="papers"><thead><tr><th>paper</th><th>paper\'s regime</th>'
        "<th>at our scale</th><th>on the paper's data</th><th>wall time</th>"
        '<th class="wide">date</th>'
        '<th class="wide">machine</th><th class="wide">commit</th>'
        "</tr></thead><tbody>\n" + "\n".join(rows) + "\n</tbody></table></div>"
    )
    return _page("iclr24 results", body)


def _claim_card(c: dict[str, Any]) -> str:
    v = c["verdict"]
    scale = c.get("regime") == "below"
    reason = c.get("premise") or (c.get("test") or {}).get("reason") or ""
    t = c.get("test") or {}
    sources = [f"{d['kind']}: {d['text']}" for d in sources_of(t) if d] if t else []
    items = [("statement", c["statement"]), ("paper", c["paper"] or "none quoted"),
             ("ours", c["measured"]), ("criterion", c["criterion"]),
             ("paired test", test_summary(c))]  # fmt: skip
    if sources:
        items.append(("margin source", "; ".join(dict.fromkeys(sources))))
    if scale:
        items.append(
            ("regime", f"below the paper's regime; the paper's effect needs {c.get('needs', '')}")
        )
    if c.get("rests_on"):
        items.append(("rests on", ", ".join(c["rests_on"])))
    dl = "".join(f"<dt>{_e(k)}</dt><dd>{_e(val)}</dd>" for k, val in items)
    why = f' <span class="muted">({_e(reason)})</span>' if reason else ""
    badge = _badge(f"{v} at our scale", f"scale {v}") if scale else _badge(v)
    colour = "#8c959f" if scale else COLOURS.get(v, "#6e7781")
    return (f'<div class="claim" style="--c:{colour}"><h3>{badge} '
            f"<code>{_e(c['id'])}</code>{why}</h3><dl>{dl}</dl></div>")  # fmt: skip


def _premises_table(premises: list[dict[str, Any]]) -> str:
    ok = sum(p["holds"] for p in premises)
    rows = "".join(
        f"<tr><td><code>{_e(p['id'])}</code></td><td>{_badge(p['verdict'])}</td>"
        f"<td>{_e(p['measured'])}</td><td class=\"wide\">{_e(p['criterion'])}</td></tr>"
        for p in premises)  # fmt: skip
    return (f"<h2>Premises ({ok} of {len(premises)} hold)</h2><p class=\"muted\">Preconditions "
            "the claims rest on (converged, solvable), not claims of the paper: one that does not "
            "hold makes its claims inconclusive.</p><div class=\"wrap\"><table><thead><tr>"
            "<th>premise</th><th></th><th>measured</th><th class=\"wide\">criterion</th></tr>"
            f"</thead><tbody>{rows}</tbody></table></div>")  # fmt: skip


def _extra_section(x: Extra, figures: list[str]) -> str:
    """A kept run beside the default (on the paper's own data, or another experiment such as a
    size sweep): its verdicts, data files, claims, premises, figures."""
    where = "On the paper's data" if on_paper_data(x.name) else "Another run"
    head = f'<h2 id="{_e(x.name)}">{where}: <code>{_e(x.name)}</code></h2>'
    if x.results is None:
        return f"{head}<p>{_badge('missing')} {_e(x.problem)}</p>"
    r = x.results
    info = [("preset", r["preset"]), ("seeds", r["seeds"]), ("machine", machine(r)),
            ("wall time", f"{r['wall_seconds']:.1f} s"), ("date", r.get("date", ""))]  # fmt: skip
    info += [(f"data {k}", f"SHA-256 {v}") for k, v in (r.get("data_files") or {}).items()]
    parts = [head,
             f'<p>In the paper\'s regime: </p><div class="counts">{_counts(r["claims"], "paper")}</div>'
             f'<p>At our scale: </p><div class="counts">{_counts(r["claims"], "below")}</div>',
             "<dl>" + "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in info) + "</dl>",
             *(_claim_card(c) for c in r["claims"])]  # fmt: skip
    if r.get("premises"):
        parts.append(_premises_table(r["premises"]))
    parts += [f'<figure><img src="{_e(f)}" alt="{_e(Path(f).stem)}" loading="lazy">'
              f'<figcaption class="muted">{_e(Path(f).name)}</figcaption></figure>' for f in figures]  # fmt: skip
    return "\n".join(parts)


def paper_html(en: Entry, figures: list[str], extra_figures: list[list[str]] | None = None) -> str:
    back = '<p><a href="index.html">&larr; all papers</a></p>'
    if en.results is None:
        return _page(
            en.slug, f"{back}<h1>{_e(en.slug)}</h1><p>{_badge('missing')} {_e(en.problem)}</p>"
        )
    res = en.results
    p = res["paper"]
    env = res.get("environment") or {}
    head = (f"{back}<h1>{_e(p.get('title', en.slug))}</h1><p class=\"muted\">{_e(p.get('authors', ''))} "
            f"{_paper_link(p)} &middot; package <code>{_e(res['package'])}</code> {_e(res.get('version', ''))}"
            + (" &middot; " + _badge("local run", "local") if en.source == "local" else "") + "</p>"
            f"<p>In the paper's regime: </p><div class=\"counts\">{_counts(res['claims'], 'paper')}</div>"
            f"<p>At our scale (below the paper's regime): </p><div class=\"counts\">"
            f"{_counts(res['claims'], 'below')}</div>")  # fmt: skip
    run = [("preset", res["preset"]), ("seeds", res["seeds"]), ("device", res["device"]),
           ("machine", machine(res)), ("wall time", f"{res['wall_seconds']:.1f} s"),
           ("date", res.get("date", "")), ("commit", env.get("git_commit") or "?"),
           ("python / torch / numpy", f"{env.get('python')} / {env.get('torch')} / {env.get('numpy')}"),
           ("platform", env.get("platform", "?"))]  # fmt: skip
    parts = [head, "<h2>Claims</h2>", *(_claim_card(c) for c in res["claims"])]
    if res.get("premises"):
        parts.append(_premises_table(res["premises"]))
    if res.get("checks"):
        ok = sum(c["holds"] for c in res["checks"])
        rows = "".join(
            f"<tr><td><code>{_e(c['id'])}</code><br><span class=\"muted\">{_e(c.get('kind', 'invariant'))}"
            f"{(', ' + _e(c['label'])) if c.get('label') else ''}</span></td>"
            f"<td>{_badge('passes', 'holds') if c['holds'] else _badge('fails')}</td>"
            f"<td>{_e(c['measured'])}</td><td class=\"wide\">{_e(c.get('why', ''))}</td></tr>"
            for c in res["checks"])  # fmt: skip
        parts += [f"<h2>Checks ({ok} of {len(res['checks'])} pass)</h2><p class=\"muted\">Invariants "
                  "of the code that hold by construction; not counted as claims.</p>"
                  "<div class=\"wrap\"><table><thead><tr><th>check</th><th></th><th>measured</th>"
                  f"<th class=\"wide\">why it holds</th></tr></thead><tbody>{rows}</tbody></table></div>"]  # fmt: skip
    if figures:
        parts += ["<h2>Figures</h2>", *(f'<figure><img src="{_e(f)}" alt="{_e(Path(f).stem)}" loading="lazy">'
                                         f"<figcaption class=\"muted\">{_e(Path(f).name)}</figcaption></figure>"
                                         for f in figures)]  # fmt: skip
    parts += [
        "<h2>Run</h2><dl>" + "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in run) + "</dl>"
    ]
    for i, x in enumerate(en.extras):
        parts.append(_extra_section(x, (extra_figures or [])[i] if extra_figures else []))
    metrics = "".join(
        f"<tr><td><code>{_e(k)}</code></td><td class=\"n\">{_num(m.get('mean'))}</td>"
        f"<td class=\"n\">{_num(m.get('std'), '.2g')}</td>"
        f"<td class=\"wide\">{_e(', '.join(_num(x) for x in m.get('per_seed') or []))}</td></tr>"
        for k, m in res.get("metrics", {}).items() if isinstance(m, dict))  # fmt: skip
    parts += [f"<details><summary>All metrics ({len(res.get('metrics', {}))})</summary><div class=\"wrap\">"
              "<table><thead><tr><th>metric</th><th>mean</th><th>std</th><th class=\"wide\">per seed</th>"
              f"</tr></thead><tbody>{metrics}</tbody></table></div></details>"]  # fmt: skip
    return _page(f"{en.slug}: {p.get('title', '')}", "\n".join(parts))


def write_report(root: Path, out: Path, runs: Path | None = None) -> list[Entry]:
    """Write the site into ``out`` (replaced whole); return the entries it shows."""
    entries = collect(root, runs)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for en in entries:
        names = []
        if en.figures:
            (out / en.slug).mkdir()
            for fig in en.figures:
                shutil.copyfile(fig, out / en.slug / fig.name)
                names.append(f"{en.slug}/{fig.name}")
        extra_names = []
        for x in en.extras:
            (out / en.slug / x.name).mkdir(parents=True, exist_ok=True)
            for fig in x.figures:
                shutil.copyfile(fig, out / en.slug / x.name / fig.name)
            extra_names.append([f"{en.slug}/{x.name}/{f.name}" for f in x.figures])
        try:
            page = paper_html(en, names, extra_names)
        except (
            KeyError,
            TypeError,
            ValueError,
            AttributeError,
        ) as e:  # a file that breaks the page
            en.results, en.problem = (
                None,
                f"results file could not be shown ({type(e).__name__}: {e})",
            )
            page = paper_html(en, names, extra_names)
        (out / f"{en.slug}.html").write_text(page)
    (out / "index.html").write_text(index_html(entries))
    return entries


BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_browser() -> str | None:
    """A headless-capable Chromium on PATH (Debian's ``chromium``), or ``None``."""
    return next((b for b in map(shutil.which, BROWSERS) if b), None)


def browser_check(index: Path, screenshot: Path, width: int = 1280, height: int = 1600,
                  browser: str | None = None) -> dict[str, Any]:  # fmt: skip
    """Render ``index`` in headless Chromium: save a screenshot and return what a reader sees:
    the number of paper rows in the rendered DOM and the screenshot's pixel spread (0 for a
    blank page). Raises ``RuntimeError`` when no browser is installed or it fails."""
    import re
    import subprocess

    browser = browser or find_browser()
    if browser is None:
        raise RuntimeError("no Chromium on PATH (Debian: apt-get install chromium)")
    flags = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             "--allow-file-access-from-files", f"--window-size={width},{height}"]  # fmt: skip
    url = index.resolve().as_uri()
    dom = subprocess.run([*flags, "--dump-dom", url], capture_output=True, text=True, timeout=120)
    shot = subprocess.run([*flags, f"--screenshot={screenshot.resolve()}", url],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    if dom.returncode or shot.returncode or not screenshot.exists():
        raise RuntimeError(f"{browser} failed: {(dom.stderr or shot.stderr)[-500:]}")
    body = re.search(r'<table id="papers">.*?<tbody>(.*?)</tbody>', dom.stdout, re.S)
    rows = body.group(1).count("<tr>") if body else 0
    return {"rows": rows, "pixel_std": _png_spread(screenshot), "screenshot": str(screenshot)}


def _png_spread(path: Path) -> float:
    """Standard deviation of a PNG's grey levels (needs matplotlib's reader; 0 = blank)."""
    from matplotlib import image

    img = image.imread(str(path))
    grey = img[..., :3].mean(axis=-1) if img.ndim == 3 else img
    return float(grey.std())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="iclr24-report", description=__doc__.split("\n")[0])
    ap.add_argument("--root", type=Path, default=Path("."), help="the repository root")
    ap.add_argument("--out", type=Path, default=Path("report"), help="the site's folder (replaced)")
    ap.add_argument("--runs", type=Path, help="local runs (default: ROOT/runs)")
    ap.add_argument("--browser-check", action="store_true",
                    help="then render it in headless Chromium: screenshot, rows, not blank")  # fmt: skip
    args = ap.parse_args(argv)
    if not (args.root / "packages").is_dir():
        print(f"iclr24-report: {args.root} has no packages/ folder; pass --root", file=sys.stderr)
        return 2
    entries = write_report(args.root, args.out, args.runs)
    local = sum(e.source == "local" for e in entries)
    bad = sum(e.results is None for e in entries)
    print(
        f"wrote {args.out / 'index.html'}: {len(entries)} papers ({local} from local runs, "
        f"{bad} without a usable results file)"
    )
    if args.browser_check:
        if find_browser() is None:
            print("iclr24-report: --browser-check skipped: no Chromium on PATH "
                  "(as root: apt-get install chromium)", file=sys.stderr)  # fmt: skip
            return 0
        seen = browser_check(args.out / "index.html", args.out / "screenshot.png")
        ok = seen["rows"] == len(entries) and seen["pixel_std"] > 0.02
        print(
            f"browser: {seen['rows']} paper rows rendered, screenshot pixel spread "
            f"{seen['pixel_std']:.3f} ({seen['screenshot']}): {'ok' if ok else 'FAILED'}"
        )
        return 0 if ok else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
