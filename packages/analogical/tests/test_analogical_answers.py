"""Numeric, LaTeX and option normalisation."""

import pytest
from iclr24_analogical import (
    boxed_contents,
    latex_equal,
    normalize_latex,
    numeric_equal,
    option_equal,
    to_number,
)


@pytest.mark.parametrize(
    "answer, target",
    [("$1,234", 1234), ("26.", 26), ("\\$19.50", "19.5"), ("x = 26 dollars", 26),
     ("\\frac{5}{14}", "5/14"), ("3/4", 0.75), ("-7", -7), ("50\\%", 50),
     ("\\text{26 apples}", 26), ("0.5", "\\dfrac{1}{2}")],
)  # fmt: skip
def test_numeric_equal(answer, target):
    assert numeric_equal(answer, target)


@pytest.mark.parametrize("answer, target", [("27", 26), (None, 26), ("none", 3), ("1/0", 0)])
def test_numeric_not_equal(answer, target):
    assert not numeric_equal(answer, target)


def test_to_number_exact():
    assert to_number("1,000,000") == 1_000_000
    assert to_number("\\frac{-2}{4}") * 2 == -1


@pytest.mark.parametrize(
    "answer, target",
    [("\\dfrac{1}{2}", "\\frac12"), ("0.5", "\\frac{1}{2}"), ("\\left( 3, 4 \\right)", "(3,4)"),
     ("90^\\circ", "90"), ("x = 5", "5"), ("\\text{(A)}", "(A)"), ("1/72", "\\frac{1}{72}"),
     ("\\$ 10", "10"), (".5", "\\frac{1}{2}"), ("\\frac{24}{91}.", "\\frac{24}{91}")],
)  # fmt: skip
def test_latex_equal(answer, target):
    assert latex_equal(answer, target)


@pytest.mark.parametrize(
    "answer, target",
    [("\\frac{1}{3}", "\\frac{1}{2}"), ("x^2", "x^3"), ("(3,4)", "(4,3)"), (None, "1")],
)
def test_latex_not_equal(answer, target):
    assert not latex_equal(answer, target)


def test_normalize_latex_idempotent():
    for s in ("\\frac{1}{2}", "(3,4)", "\\sqrt{2}", "5"):
        assert normalize_latex(normalize_latex(s)) == normalize_latex(s)


@pytest.mark.parametrize(
    "answer, target, same",
    [("(A)", "(A)", True), ("A", "(A)", True), ("a)", "(A)", True), ("(B)", "(A)", False),
     ("valid", "valid", True), ("Invalid.", "invalid", True), ("invalid", "valid", False),
     ("\\text{valid}", "valid", True), ("", "valid", False)],
)  # fmt: skip
def test_option_equal(answer, target, same):
    assert option_equal(answer, target) is same


def test_boxed_contents_balanced():
    assert boxed_contents("\\boxed{a{b}c} x \\fbox{2} \\boxed{open") == ["a{b}c", "2"]
