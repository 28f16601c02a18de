"""Write a new paper package from tools/template: `make new-package SLUG=<slug>`.

The package has the layout, presets, claims/checks split and tests of CONTRIBUTING.md, and
its tests and smoke run pass at once: a worked example (ridge vs least squares on generated
data) stands where the paper's method goes. Replace it file by file.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = Path(__file__).resolve().parent / "template"


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not re.fullmatch(r"[a-z][a-z0-9]*(-[a-z0-9]+)*", argv[0]):
        print("usage: new_package.py <slug>  (lower case, digits and single dashes, e.g. scl-relu)",
              file=sys.stderr)  # fmt: skip
        return 2
    slug = argv[0]
    module = slug.replace("-", "_")
    dest = ROOT / "packages" / slug
    if dest.exists():
        print(f"packages/{slug} exists already", file=sys.stderr)
        return 2
    for src in sorted(TEMPLATE.rglob("*")):
        if src.is_dir() or "__pycache__" in src.parts:
            continue
        rel = str(src.relative_to(TEMPLATE)).replace("MODULE", module)
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        text = src.read_text().replace("{{slug}}", slug).replace("{{module}}", module)
        target.write_text(text)
        print(f"wrote packages/{slug}/{rel}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
