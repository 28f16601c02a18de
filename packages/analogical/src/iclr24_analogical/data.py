"""Problems: generated grade-school word problems and toy programming problems (default), and
the paper's datasets from local files (``paper`` preset).

Generated arithmetic problems come in template *families* (a discount, change from a bill,
boxes minus given away, ...), each with exact integer answers and a worked rationale ending in
"The answer is N." in the style of GSM8K's solutions; a labelled training pool of the same
families is what few-shot CoT draws its fixed exemplars from and retrieved CoT its nearest
neighbours (so that relevant labelled exemplars exist, as GSM8K's training set gives them).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from iclr24_common import MissingDataError


@dataclass(frozen=True)
class Problem:
    question: str
    answer: str
    rationale: str = ""
    """Worked solution ending in "The answer is ..." (labelled exemplars only)."""
    family: str = ""
    kind: str = "number"
    """How the answer is checked: number, latex or option (answers.CHECKERS)."""


@dataclass(frozen=True)
class CodeProblem:
    name: str
    statement: str
    tests: tuple[tuple[str, str], ...] = field(default_factory=tuple)
    """(stdin, expected stdout) pairs."""
    reference: str = ""
    """A correct program (checks the tests, and is the scripted backend's answer)."""


NAMES = ("Ava", "Ben", "Chloe", "Dev", "Emma", "Finn", "Grace", "Hugo", "Iris", "Jack", "Lena",
         "Omar", "Priya", "Sam", "Tara", "Yusuf")  # fmt: skip


def _pick(rng, seq):
    return seq[int(rng.integers(len(seq)))]


def _discount(rng):
    name, item = _pick(rng, NAMES), _pick(rng, ("jacket", "lamp", "bike", "watch", "backpack"))
    p = int(_pick(rng, (10, 20, 25, 50)))
    original = int(rng.integers(2, 16)) * 20
    sale = original * (100 - p) // 100
    q = (f"{name} bought a {item} for ${sale}. This is with a {p}% discount from the original "
         f"price. What was the original price of the {item}?")  # fmt: skip
    r = (
        f"The {item} cost {100 - p}% of the original price, so the original price is "
        f"{sale} / {(100 - p) / 100:g} = {original}. The answer is {original}."
    )
    return q, original, r


def _change(rng):
    name, item = _pick(rng, NAMES), _pick(rng, ("notebooks", "pens", "mugs", "tickets", "plants"))
    n, price = int(rng.integers(2, 7)), int(rng.integers(2, 9))
    bill = _pick(rng, (50, 100)) if n * price > 20 else int(_pick(rng, (20, 50)))
    q = (
        f"{name} buys {n} {item} at ${price} each and pays with a ${bill} bill. How much "
        f"change does {name} get back?"
    )
    r = (
        f"The {item} cost {n} x {price} = {n * price} dollars. The change is {bill} - "
        f"{n * price} = {bill - n * price}. The answer is {bill - n * price}."
    )
    return q, bill - n * price, r


def _boxes(rng):
    name, thing = _pick(rng, NAMES), _pick(rng, ("apples", "crayons", "marbles", "cookies"))
    a, b = int(rng.integers(3, 9)), int(rng.integers(4, 13))
    c = int(rng.integers(1, a * b // 2))
    q = (
        f"{name} has {a} boxes with {b} {thing} in each box. {name} gives away {c} {thing}. "
        f"How many {thing} does {name} have left?"
    )
    r = (
        f"{name} has {a} x {b} = {a * b} {thing}. After giving away {c}, {a * b} - {c} = "
        f"{a * b - c} are left. The answer is {a * b - c}."
    )
    return q, a * b - c, r


def _distance(rng):
    vehicle = _pick(rng, ("train", "car", "bus", "truck"))
    v, t, d = int(rng.integers(3, 13)) * 10, int(rng.integers(2, 6)), int(rng.integers(5, 60))
    q = (
        f"A {vehicle} travels at {v} miles per hour for {t} hours, and then {d} more miles. "
        f"How many miles does the {vehicle} travel in total?"
    )
    r = (
        f"In {t} hours it travels {v} x {t} = {v * t} miles. Adding {d} miles gives "
        f"{v * t} + {d} = {v * t + d}. The answer is {v * t + d}."
    )
    return q, v * t + d, r


def _ages(rng):
    name, sib = _pick(rng, NAMES), _pick(rng, ("brother", "sister", "cousin"))
    a, b, c = int(rng.integers(5, 30)), int(rng.integers(2, 12)), int(rng.integers(2, 10))
    q = (
        f"{name} is {a} years old. {name}'s {sib} is {b} years older. How old will the {sib} "
        f"be in {c} years?"
    )
    r = (
        f"The {sib} is {a} + {b} = {a + b} years old now. In {c} years the {sib} will be "
        f"{a + b} + {c} = {a + b + c}. The answer is {a + b + c}."
    )
    return q, a + b + c, r


def _sharing(rng):
    name, food = _pick(rng, NAMES), _pick(rng, ("cookies", "muffins", "dumplings", "tarts"))
    k = int(rng.integers(2, 7))
    each = int(rng.integers(2, 9))
    trays = int(_pick(rng, [t for t in range(2, 7) if (k * each) % t == 0] or [1]))
    per_tray = k * each // trays
    q = (
        f"{name} bakes {trays} trays of {per_tray} {food} and shares them equally among {k} "
        f"friends. How many {food} does each friend get?"
    )
    r = (
        f"There are {trays} x {per_tray} = {trays * per_tray} {food}. Each of the {k} friends "
        f"gets {trays * per_tray} / {k} = {each}. The answer is {each}."
    )
    return q, each, r


def _wages(rng):
    name = _pick(rng, NAMES)
    w, h, d = int(rng.integers(8, 21)), int(rng.integers(2, 9)), int(rng.integers(2, 6))
    q = (
        f"{name} earns ${w} per hour and works {h} hours a day for {d} days. How many dollars "
        f"does {name} earn in total?"
    )
    r = (
        f"In one day {name} earns {w} x {h} = {w * h} dollars. In {d} days that is {w * h} x "
        f"{d} = {w * h * d}. The answer is {w * h * d}."
    )
    return q, w * h * d, r


def _increase(rng):
    shop = _pick(rng, ("bakery", "bookshop", "florist", "toy shop"))
    a, p = int(rng.integers(2, 11)) * 20, int(_pick(rng, (10, 25, 50)))
    b = a * (100 + p) // 100
    q = (
        f"A {shop} sold {a} items on Monday and {p}% more items on Tuesday than on Monday. How "
        f"many items did it sell on the two days together?"
    )
    r = (
        f"On Tuesday it sold {a} + {p}% of {a} = {a} + {a * p // 100} = {b}. Together that is "
        f"{a} + {b} = {a + b}. The answer is {a + b}."
    )
    return q, a + b, r


def _more(rng):
    name, thing = _pick(rng, NAMES), _pick(rng, ("apples", "stickers", "shells", "books"))
    a, b = int(rng.integers(3, 40)), int(rng.integers(2, 30))
    q = f"{name} has {a} {thing}. {name} gets {b} more {thing}. How many {thing} does {name} have now?"
    return q, a + b, f"{name} has {a} + {b} = {a + b} {thing}. The answer is {a + b}."


def _spent(rng):
    name = _pick(rng, NAMES)
    a = int(rng.integers(20, 100))
    b = int(rng.integers(2, a - 1))
    q = f"{name} had ${a} and spent ${b} on lunch. How many dollars does {name} have left?"
    return q, a - b, f"{name} has {a} - {b} = {a - b} dollars left. The answer is {a - b}."


def _rows(rng):
    place = _pick(rng, (("hall", "chairs"), ("garden", "tulips"), ("class", "desks")))
    r, c = int(rng.integers(2, 10)), int(rng.integers(2, 10))
    q = (f"A {place[0]} has {r} rows of {place[1]} with {c} {place[1]} in each row. How many "
         f"{place[1]} are there in total?")  # fmt: skip
    return q, r * c, f"There are {r} x {c} = {r * c} {place[1]}. The answer is {r * c}."


def _split(rng):
    name, thing = _pick(rng, NAMES), _pick(rng, ("candies", "cards", "grapes", "coins"))
    k, each = int(rng.integers(2, 9)), int(rng.integers(2, 10))
    q = (
        f"{name} shares {k * each} {thing} equally among {k} friends. How many {thing} does "
        "each friend get?"
    )
    return q, each, f"Each friend gets {k * each} / {k} = {each} {thing}. The answer is {each}."


ONE_STEP = ("more", "spent", "rows", "split")
"""One-operation families (the default: what a 135M model can sometimes solve)."""
TWO_STEP = ("discount", "change", "boxes", "distance", "ages", "sharing", "wages", "increase")
"""Two-operation families, GSM8K-like."""

FAMILIES = {"more": _more, "spent": _spent, "rows": _rows, "split": _split,
            "discount": _discount, "change": _change, "boxes": _boxes, "distance": _distance,
            "ages": _ages, "sharing": _sharing, "wages": _wages, "increase": _increase}  # fmt: skip


def make_word_problems(n: int, seed: int, families=tuple(FAMILIES)) -> list[Problem]:
    """n problems, the families in turn (round robin), numbers and names drawn with ``seed``."""
    if not families or any(f not in FAMILIES for f in families):
        raise ValueError(f"families must be among {', '.join(FAMILIES)}")
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        fam = families[i % len(families)]
        q, a, r = FAMILIES[fam](rng)
        out.append(Problem(q, str(a), r, fam))
    return out


def make_split(n_train_per_family: int, n_test: int, seed: int, families=tuple(FAMILIES)):
    """(labelled training pool, test problems): disjoint draws, no test question in the pool."""
    pool = make_word_problems(n_train_per_family * len(families), 10_000 + seed, families)
    test = make_word_problems(n_test, seed, families)
    seen = {p.question for p in pool}
    return pool, [p for p in test if p.question not in seen]


# ---------------------------------------------------------------- toy code problems


def _case(*lines) -> str:
    return "\n".join(str(x) for x in lines) + "\n"


CODE_PROBLEMS = (
    CodeProblem(
        "sum_list",
        "Given n integers, print their sum.\n\nInput\nThe first line contains n (1 <= n <= 100)."
        "\nThe second line contains n integers a_1, ..., a_n (-1000 <= a_i <= 1000).\n\nOutput"
        "\nPrint the sum of the integers.",
        ((_case(3, "1 2 3"), "6"), (_case(1, "-5"), "-5"), (_case(4, "10 -10 7 0"), "7")),
        "n = int(input())\nprint(sum(map(int, input().split())))",
    ),
    CodeProblem(
        "reverse_words",
        "Given a line of words separated by single spaces, print the words in reverse order."
        "\n\nInput\nOne line with at most 100 words of lowercase letters.\n\nOutput\nThe "
        "same words in reverse order, separated by single spaces.",
        ((_case("hello world"), "world hello"), (_case("a b c"), "c b a"), (_case("one"), "one")),
        "print(' '.join(input().split()[::-1]))",
    ),
    CodeProblem(
        "count_vowels",
        "Given a string of lowercase letters, print how many of its letters are vowels (a, e, "
        "i, o, u).\n\nInput\nOne line with a string s (1 <= |s| <= 1000).\n\nOutput\nThe "
        "number of vowels in s.",
        ((_case("banana"), "3"), (_case("rhythm"), "0"), (_case("aeiou"), "5")),
        "print(sum(ch in 'aeiou' for ch in input().strip()))",
    ),
    CodeProblem(
        "max_minus_min",
        "Given n integers, print the difference between the largest and the smallest.\n\n"
        "Input\nThe first line contains n (1 <= n <= 100). The second line contains n integers "
        "(0 <= a_i <= 10^9).\n\nOutput\nPrint max(a) - min(a).",
        ((_case(3, "4 9 1"), "8"), (_case(1, "7"), "0"), (_case(5, "5 5 5 5 6"), "1")),
        "input()\na = list(map(int, input().split()))\nprint(max(a) - min(a))",
    ),
    CodeProblem(
        "even_count",
        "Each test contains multiple test cases. The first line contains t (1 <= t <= 100). "
        "Each test case is one line with n integers preceded by n (1 <= n <= 50).\n\nOutput\n"
        "For each test case print how many of its n integers are even.",
        ((_case(2, "3 1 2 4", "2 5 7"), "2\n0"), (_case(1, "1 0"), "1")),
        "for _ in range(int(input())):\n    n, *a = map(int, input().split())\n    print(sum(x % 2 == 0 for x in a))",
    ),
    CodeProblem(
        "palindrome",
        "Given a string, print YES if it reads the same forwards and backwards, otherwise NO."
        "\n\nInput\nOne line with a string s of lowercase letters (1 <= |s| <= 1000).\n\n"
        "Output\nYES or NO.",
        ((_case("abba"), "YES"), (_case("abc"), "NO"), (_case("x"), "YES")),
        "s = input().strip()\nprint('YES' if s == s[::-1] else 'NO')",
    ),
    CodeProblem(
        "second_largest",
        "Given n distinct integers, print the second largest.\n\nInput\nThe first line contains "
        "n (2 <= n <= 100). The second line contains n distinct integers (|a_i| <= 10^9).\n\n"
        "Output\nThe second largest integer.",
        ((_case(3, "1 5 3"), "3"), (_case(2, "-1 -2"), "-2"), (_case(4, "10 40 30 20"), "30")),
        "input()\nprint(sorted(map(int, input().split()))[-2])",
    ),
    CodeProblem(
        "factorial",
        "Given n, print n! (the product 1 * 2 * ... * n; 0! = 1).\n\nInput\nOne integer n "
        "(0 <= n <= 20).\n\nOutput\nThe value of n!.",
        ((_case(5), "120"), (_case(0), "1"), (_case(20), "2432902008176640000")),
        "import math\nprint(math.factorial(int(input())))",
    ),
    CodeProblem(
        "fizzbuzz",
        "Print the numbers from 1 to n, one per line, but print Fizz for multiples of 3, Buzz "
        "for multiples of 5 and FizzBuzz for multiples of both.\n\nInput\nOne integer n "
        "(1 <= n <= 100).\n\nOutput\nn lines.",
        (
            (_case(5), "1\n2\nFizz\n4\nBuzz"),
            (_case(15), "1\n2\nFizz\n4\nBuzz\nFizz\n7\n8\nFizz\nBuzz\n11\nFizz\n13\n14\nFizzBuzz"),
        ),
        "for i in range(1, int(input()) + 1):\n    print('FizzBuzz' if i % 15 == 0 else 'Fizz' "
        "if i % 3 == 0 else 'Buzz' if i % 5 == 0 else i)",
    ),
    CodeProblem(
        "digit_sum",
        "Given a non-negative integer, print the sum of its decimal digits.\n\nInput\nOne "
        "integer n (0 <= n <= 10^18).\n\nOutput\nThe sum of the digits of n.",
        ((_case(1234), "10"), (_case(0), "0"), (_case(999999999999999999), "162")),
        "print(sum(int(d) for d in input().strip()))",
    ),
    CodeProblem(
        "gcd_two",
        "Given two positive integers a and b, print their greatest common divisor.\n\nInput\n"
        "One line with a and b (1 <= a, b <= 10^9).\n\nOutput\nThe greatest common divisor.",
        ((_case("12 18"), "6"), (_case("7 13"), "1"), (_case("100 100"), "100")),
        "import math\na, b = map(int, input().split())\nprint(math.gcd(a, b))",
    ),
    CodeProblem(
        "count_char",
        "Given a string s and a letter c, print how many times c occurs in s.\n\nInput\nThe "
        "first line contains s (1 <= |s| <= 1000, lowercase letters). The second line contains "
        "the letter c.\n\nOutput\nThe number of occurrences of c in s.",
        ((_case("banana", "a"), "3"), (_case("abc", "z"), "0"), (_case("zzzz", "z"), "4")),
        "s = input().strip()\nc = input().strip()\nprint(s.count(c))",
    ),
    CodeProblem(
        "sort_numbers",
        "Given n integers, print them in non-decreasing order.\n\nInput\nThe first line "
        "contains n (1 <= n <= 100). The second line contains n integers (|a_i| <= 1000).\n\n"
        "Output\nThe n integers sorted, separated by spaces.",
        ((_case(4, "3 1 2 1"), "1 1 2 3"), (_case(1, "5"), "5"), (_case(3, "0 -1 -5"), "-5 -1 0")),
        "input()\nprint(*sorted(map(int, input().split())))",
    ),
    CodeProblem(
        "is_prime",
        "Given an integer n, print YES if n is a prime number, otherwise NO.\n\nInput\nOne "
        "integer n (1 <= n <= 10^6).\n\nOutput\nYES or NO.",
        ((_case(7), "YES"), (_case(1), "NO"), (_case(91), "NO"), (_case(997), "YES")),
        "n = int(input())\nprint('YES' if n > 1 and all(n % d for d in range(2, int(n**0.5) + 1)) "
        "else 'NO')",
    ),
    CodeProblem(
        "max_in_list",
        "Given n integers, print the largest of them.\n\nInput\nThe first line contains n "
        "(1 <= n <= 100). The second line contains n integers (|a_i| <= 10^9).\n\nOutput\nThe "
        "largest integer.",
        ((_case(3, "1 5 3"), "5"), (_case(2, "-7 -3"), "-3"), (_case(1, "0"), "0")),
        "input()\nprint(max(map(int, input().split())))",
    ),
    CodeProblem(
        "uppercase",
        "Given a line of lowercase letters and spaces, print it in uppercase.\n\nInput\nOne line "
        "of at most 100 characters.\n\nOutput\nThe same line in uppercase.",
        ((_case("hello world"), "HELLO WORLD"), (_case("abc"), "ABC"), (_case("x y z"), "X Y Z")),
        "print(input().upper())",
    ),
    CodeProblem(
        "count_distinct",
        "Given n integers, print how many different values there are among them.\n\nInput\nThe "
        "first line contains n (1 <= n <= 100). The second line contains n integers (|a_i| <= "
        "1000).\n\nOutput\nThe number of distinct values.",
        ((_case(5, "1 2 2 3 3"), "3"), (_case(1, "4"), "1"), (_case(4, "7 7 7 7"), "1")),
        "input()\nprint(len(set(input().split())))",
    ),
    CodeProblem(
        "average_floor",
        "Given n integers, print their average rounded down to an integer.\n\nInput\nThe first "
        "line contains n (1 <= n <= 100). The second line contains n integers (0 <= a_i <= "
        "1000).\n\nOutput\nThe sum divided by n, rounded down.",
        ((_case(3, "1 2 4"), "2"), (_case(2, "5 5"), "5"), (_case(4, "0 0 0 3"), "0")),
        "n = int(input())\nprint(sum(map(int, input().split())) // n)",
    ),
    CodeProblem(
        "multiplication_row",
        "Given n, print the first ten multiples of n (n, 2n, ..., 10n) on one line.\n\nInput\n"
        "One integer n (1 <= n <= 1000).\n\nOutput\nTen integers separated by spaces.",
        ((_case(3), "3 6 9 12 15 18 21 24 27 30"), (_case(1), "1 2 3 4 5 6 7 8 9 10")),
        "n = int(input())\nprint(*[n * i for i in range(1, 11)])",
    ),
    CodeProblem(
        "count_positive",
        "Given n integers, print how many of them are strictly positive.\n\nInput\nThe first "
        "line contains n (1 <= n <= 100). The second line contains n integers (|a_i| <= 1000)."
        "\n\nOutput\nThe number of positive integers.",
        ((_case(5, "1 -2 0 3 4"), "3"), (_case(2, "-1 -1"), "0"), (_case(1, "9"), "1")),
        "input()\nprint(sum(int(x) > 0 for x in input().split()))",
    ),
    CodeProblem(
        "longest_word",
        "Given a line of words separated by single spaces, print the length of the longest "
        "word.\n\nInput\nOne line with at most 100 words of lowercase letters.\n\nOutput\nThe "
        "length of the longest word.",
        ((_case("a bb ccc"), "3"), (_case("hello"), "5"), (_case("xy z"), "2")),
        "print(max(len(w) for w in input().split()))",
    ),
    CodeProblem(
        "power_of_two",
        "Given a positive integer n, print YES if n is a power of two (1, 2, 4, 8, ...), "
        "otherwise NO.\n\nInput\nOne integer n (1 <= n <= 10^18).\n\nOutput\nYES or NO.",
        ((_case(8), "YES"), (_case(1), "YES"), (_case(12), "NO"), (_case(1 << 60), "YES")),
        "n = int(input())\nprint('YES' if n & (n - 1) == 0 else 'NO')",
    ),
    CodeProblem(
        "sum_of_squares",
        "Given n, print 1^2 + 2^2 + ... + n^2.\n\nInput\nOne integer n (1 <= n <= 10^4).\n\n"
        "Output\nThe sum of the squares.",
        ((_case(3), "14"), (_case(1), "1"), (_case(10), "385")),
        "n = int(input())\nprint(sum(i * i for i in range(1, n + 1)))",
    ),
    CodeProblem(
        "odd_positions",
        "Given a string, print the characters at odd positions (the 1st, 3rd, 5th, ...).\n\n"
        "Input\nOne line with a string s of lowercase letters (1 <= |s| <= 1000).\n\nOutput\n"
        "The characters of s at positions 1, 3, 5, ... (counting from 1), as one string.",
        ((_case("abcdef"), "ace"), (_case("x"), "x"), (_case("hello"), "hlo")),
        "print(input().strip()[::2])",
    ),
)


# ---------------------------------------------------------------- the paper's data (local)

PAPER_TASKS = ("gsm8k", "math", "bbh_word_sorting", "bbh_logical_deduction_five_objects",
               "bbh_temporal_sequences", "bbh_reasoning_about_colored_objects",
               "bbh_formal_fallacies", "code")  # fmt: skip
"""The paper's tasks (Sec. 5.1): GSM8K, MATH, five BIG-Bench Hard tasks, Codeforces."""


def _read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _find(data_dir: Path, names: list[str], what: str, how: str) -> Path:
    for name in names:
        if (data_dir / name).exists():
            return data_dir / name
    raise MissingDataError(what, [data_dir / n for n in names], how)


def load_task(data_dir, task: str, split: str = "test") -> list[Problem] | list[CodeProblem]:
    """The paper's data from local JSONL under ``<data-dir>/analogical/``:

    - ``gsm8k/{split}.jsonl``: {question, answer} with GSM8K's "#### N" final line;
    - ``math/{split}.jsonl``: {problem, solution} (the answer is the solution's last boxed);
    - ``bbh/<task>.jsonl``: {input, target} (BIG-Bench Hard's files, one per task);
    - ``code/{split}.jsonl``: {statement, tests: [[stdin, stdout], ...]}.
    """
    root = Path(data_dir) / "analogical"
    how = (
        "write the JSONL files named here (formats: iclr24_analogical.load_task, README "
        "'paper preset'), e.g. from the GSM8K / MATH / BIG-Bench Hard releases"
    )
    if task == "gsm8k":
        path = _find(root / "gsm8k", [f"{split}.jsonl"], "GSM8K", how)
        out = []
        for row in _read_jsonl(path):
            rationale, _, final = row["answer"].rpartition("####")
            final = final.strip().replace(",", "")
            out.append(Problem(row["question"], final,
                               f"{rationale.strip()} The answer is {final}.", "gsm8k"))  # fmt: skip
        return out
    if task == "math":
        from .answers import boxed_contents

        path = _find(root / "math", [f"{split}.jsonl"], "MATH", how)
        rows = _read_jsonl(path)
        return [Problem(r["problem"], (boxed_contents(r["solution"]) or [""])[-1],
                        r["solution"], r.get("type", "math"), "latex") for r in rows]  # fmt: skip
    if task.startswith("bbh_"):
        name = task[4:]
        path = _find(root / "bbh", [f"{name}.jsonl", f"{name}.json"], f"BIG-Bench Hard {name}", how)
        rows = (json.loads(path.read_text())["examples"] if path.suffix == ".json"
                else _read_jsonl(path))  # fmt: skip
        return [Problem(r["input"], r["target"], "", name, "option") for r in rows]
    if task == "code":
        path = _find(root / "code", [f"{split}.jsonl"], "code problems", how)
        return [CodeProblem(r.get("name", f"p{i}"), r["statement"],
                            tuple((a, b) for a, b in r["tests"]))
                for i, r in enumerate(_read_jsonl(path))]  # fmt: skip
    raise ValueError(f"task must be one of {', '.join(PAPER_TASKS)}")
