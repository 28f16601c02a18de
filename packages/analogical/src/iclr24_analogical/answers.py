"""Reading the answer out of a completion, and deciding whether it is right.

Extraction (``extract_answer``), in this order, inside the part after the last "Solve the
Initial Problem" / "Let's solve the following" (the whole text when there is none):
1. the last brace-balanced ``\\boxed{...}`` (or ``\\fbox{...}``),
2. the last "The answer is X",
3. the last number.
Self-generated exemplars carry boxed answers of their own, hence the region. For the analogical
methods (``require_marker=True``) a completion without the marker has no answer at all (rule
``no_marker``, scored wrong): the only numbers in it are the exemplars' own, and reading one of
them would credit the model with an exemplar's answer. Which rule fired is returned, so that a
run reports how often the answer came out in the asked-for format.

Equivalence: numbers for GSM8K (``numeric_equal``), LaTeX-normalised strings for MATH
(``latex_equal``, after the MATH benchmark's usual normalisation, written here anew), option
letters or words for BIG-Bench Hard (``option_equal``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from .analogical import SOLVE_MARKERS

_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?|-?\.\d+")
_ANSWER_IS = re.compile(r"answer is[:\s]*(.+?)(?:\.\s|\.$|\n|$)", re.I)


@dataclass(frozen=True)
class Extraction:
    answer: str | None
    """The extracted answer text (None: nothing found)."""
    rule: str
    """boxed, answer_is, last_number, none, or no_marker (a marker was required, none found)."""
    after_marker: bool
    """Whether the completion reached the "solve the initial problem" part."""


def boxed_contents(text: str) -> list[str]:
    """Every brace-balanced ``\\boxed{...}`` / ``\\fbox{...}`` argument, in order."""
    out = []
    for m in re.finditer(r"\\(?:boxed|fbox)\s*\{", text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        if depth == 0:
            out.append(text[m.end() : i - 1])
    return out


def answer_region(text: str, markers=SOLVE_MARKERS) -> tuple[str, bool]:
    """The text after the last solve marker (case-insensitive), and whether there was one."""
    low = text.lower()
    at = max((low.rfind(m) + len(m) for m in markers if m in low), default=-1)
    return (text[at:], True) if at >= 0 else (text, False)


def extract_answer(text: str, markers=SOLVE_MARKERS, *, require_marker: bool = False) -> Extraction:
    """The answer after the last solve marker (the whole text when there is none); with
    ``require_marker`` a completion without a marker yields no answer (rule ``no_marker``)."""
    region, found = answer_region(text, markers)
    if require_marker and not found:
        return Extraction(None, "no_marker", False)
    boxed = boxed_contents(region)
    if boxed:
        return Extraction(boxed[-1].strip(), "boxed", found)
    said = _ANSWER_IS.findall(region)
    if said:
        return Extraction(said[-1].strip(), "answer_is", found)
    nums = _NUMBER.findall(region)
    if nums:
        return Extraction(nums[-1], "last_number", found)
    return Extraction(None, "none", found)


# ---------------------------------------------------------------- numbers (GSM8K)


def to_number(answer: str | None) -> Fraction | None:
    """The number an answer states: ``$1,234.50``, ``26.``, ``\\frac{5}{14}``, ``3/4``, ``50%``,
    ``x = 26 dollars`` (the last number when words surround it); None when there is none."""
    if answer is None:
        return None
    s = answer.replace("\\!", "").replace("\\,", "").replace("\\$", "").replace("$", "")
    s = re.sub(r"\\text\{([^}]*)\}", r" \1 ", s).replace("\\%", "%")
    frac = re.search(r"(-?)\\[dt]?frac\{(-?\d+)\}\{(-?\d+)\}", s)
    if frac:
        sign, a, b = frac.groups()
        return None if int(b) == 0 else Fraction(int(a), int(b)) * (-1 if sign else 1)
    slash = re.fullmatch(r"\s*(-?\d+)\s*/\s*(-?\d+)\s*", s)
    if slash:
        a, b = map(int, slash.groups())
        return None if b == 0 else Fraction(a, b)
    nums = _NUMBER.findall(s)
    if not nums:
        return None
    try:
        return Fraction(nums[-1].replace(",", ""))
    except ValueError:
        return None


def numeric_equal(answer: str | None, target: float | int | str, tol: float = 1e-6) -> bool:
    """GSM8K's rule: the stated number equals the target (to ``tol``)."""
    a, t = to_number(answer), to_number(str(target))
    return a is not None and t is not None and abs(float(a - t)) <= tol


# ---------------------------------------------------------------- LaTeX (MATH)


def _fix_fracs(s: str) -> str:
    # \frac12 -> \frac{1}{2}, \frac1{72} -> \frac{1}{72}
    return re.sub(r"\\frac(\d|\{[^{}]*\})(\d|\{[^{}]*\})",
                  lambda m: "\\frac" + "".join(g if g.startswith("{") else "{" + g + "}"
                                               for g in m.groups()), s)  # fmt: skip


def normalize_latex(s: str | None) -> str | None:
    """The MATH benchmark's answer normalisation: no spaces, \\left/\\right, units, degrees,
    dollars, \\text, trailing periods; dfrac/tfrac -> frac; 0.5 -> 0.5 with a leading zero;
    a/b with integers -> \\frac{a}{b}; "x = 5" -> "5"."""
    if s is None:
        return None
    s = s.strip().replace("\n", "").rstrip(".")
    s = s.replace("\\!", "").replace("\\\\", "\\").replace("tfrac", "frac").replace("dfrac", "frac")
    s = s.replace("\\left", "").replace("\\right", "")
    s = s.replace("^{\\circ}", "").replace("^\\circ", "").replace("\\$", "").replace("$", "")
    s = re.sub(r"\\text\{\s*([^}]*)\}", r"\1", s).replace("\\mbox", "")
    s = s.replace("\\%", "").replace("%", "")
    s = re.sub(r"(^|[^\d])\.(\d)", r"\g<1>0.\2", s)
    if "=" in s and len(s.split("=")[0].strip()) <= 2:
        s = s.split("=", 1)[1]
    s = _fix_fracs(s.replace(" ", ""))
    if re.fullmatch(r"-?\d+/\d+", s):
        a, b = s.split("/")
        s = f"\\frac{{{a}}}{{{b}}}"
    if s == "0.5":
        s = "\\frac{1}{2}"
    return s


def latex_equal(answer: str | None, target: str) -> bool:
    """MATH's rule: equal after ``normalize_latex``, or equal as numbers."""
    a, t = normalize_latex(answer), normalize_latex(target)
    if a is None or t is None:
        return False
    if a == t:
        return True
    na, nt = to_number(a), to_number(t)
    plain = re.compile(r"-?[\d,.]+|-?\\frac\{-?\d+\}\{-?\d+\}")
    return bool(na is not None and nt is not None and plain.fullmatch(a) and plain.fullmatch(t)
                and na == nt)  # fmt: skip


# ---------------------------------------------------------------- options (BIG-Bench Hard)


def normalize_option(s: str | None) -> str | None:
    """ "(A)", "A", "A)", "option (a)" -> "a"; words lower-cased without punctuation."""
    if s is None:
        return None
    s = re.sub(r"\\text\{([^}]*)\}", r"\1", s).strip().lower()
    s = re.sub(r"^(option|answer)\s*", "", s)
    m = re.fullmatch(r"\(?([a-z])\)?[.:]?(?:\s.*)?", s)
    if m and (s.startswith("(") or len(s.split()[0].strip("().:")) == 1):
        return m.group(1)
    return re.sub(r"[^\w\s-]", "", s).strip()


def option_equal(answer: str | None, target: str) -> bool:
    """BIG-Bench Hard's rule: the same option letter, or the same word(s) ("valid")."""
    a, t = normalize_option(answer), normalize_option(target)
    return a is not None and a != "" and a == t


CHECKERS = {"number": numeric_equal, "latex": latex_equal, "option": option_equal}
