"""How a scorer's answer is judged right or wrong (official ``metrics.py`` and
``eval_utils.py`` of google-deepmind/opro).

The official optimisation loop (``eval_utils.evaluate_single_instruction``, called by
``opt_utils.run_evolution`` with ``prediction_num_decimals=0``) judges one answer in three
steps, which :func:`official_correct` follows:

1. normalise the raw answer (:func:`normalize_prediction`, ``metrics.get_normalized_prediction``):
   cut a following question (any language of the multilingual table), keep the text after an
   answer cue ("answer is", "####", "Step-by-Step Answer:" ...), drop trailing periods, pick a
   single bracketed choice; numbers: the first/last numeric token, units and separators
   dropped, rounded to **0 decimals**; Booleans: a bare 0/1 becomes false/true;
2. keep its first line before any "Q:" (the loop's ``_extract_second_round_answer_for_parsing``);
3. compare with the raw target (:func:`official_accuracy`, ``eval_utils._get_accuracy``) with
   ``treat_include_as_correct = not treat_as_number``: exact match (also without
   punctuation), the option text of a multiple-choice question, the Boolean meaning of the
   target (a "yes" target accepts "true", but a "true" target does not accept "yes"), and,
   for non-numeric targets, **the target as a substring** of the answer ("5" counts inside
   "-5", "no" inside "i do not know").

The stricter rule of ``metrics.number_included_accuracy`` (:func:`strict_correct`): the target
is normalised too, numbers are compared within 1e-5 at the target's own decimals, text must
match exactly, and Booleans match by meaning across the three vocabularies (yes = true =
valid). The paper's numbers come from the official rule, which is the default here.
"""

from __future__ import annotations

import re
import string
from typing import Literal

import numpy as np

Scoring = Literal["official", "strict"]
SCORINGS = ("official", "strict")

_WORD_TO_NUM = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
}  # fmt: skip  (insertion order matters: "seventy" is rewritten after "seven")
_BEHIND_PRIMARY = ["answer is ", "answer: ", "answer is: "]
_BEHIND_SECONDARY = ["is: ", "are: "]
_AHEAD = [" is the correct answer", " is the right answer", " is the final answer",
          " is the answer"]  # fmt: skip
_GSM8K_ANSWER = "#### "
BOOLEAN_SYMBOLS = [["false", "true"], ["no", "yes"], ["invalid", "valid"]]

# The official MULTILINGUAL_QUESTION_DELIMITER (MGSM's languages): "Q" starts a new question,
# "A" precedes a step-by-step answer. Every language's strings are applied to every answer,
# so the French "Question : " also cuts an English one ("The question : ... answer is 8" -> "").
MULTILINGUAL_DELIMITERS: dict[str, dict[str, str]] = {
    "bn": {"Q": "\u09aa\u09cd\u09b0\u09b6\u09cd\u09a8: ",
           "A": "\u09a7\u09be\u09aa\u09c7 \u09a7\u09be\u09aa\u09c7 \u0989\u09a4\u09cd\u09a4\u09b0: ",
           "Direct A": "\u0989\u09a4\u09cd\u09a4\u09b0: "},
    "de": {"Q": "Frage: ", "A": "Schritt-f\u00fcr-Schritt-Antwort: ", "Direct A": "Antwort: "},
    "en": {"Q": "Question: ", "A": "Step-by-Step Answer: ", "Direct A": "Answer: "},
    "es": {"Q": "Pregunta: ", "A": "Respuesta paso a paso: ", "Direct A": "Respuesta: "},
    "fr": {"Q": "Question : ", "A": "R\u00e9ponse \u00e9tape par \u00e9tape : ",
           "Direct A": "R\u00e9ponse : "},
    "ja": {"Q": "\u554f\u984c\uff1a", "A": "\u30b9\u30c6\u30c3\u30d7\u3054\u3068\u306e\u7b54\u3048\uff1a",
           "Direct A": "\u7b54\u3048\uff1a"},
    "ru": {"Q": "\u0417\u0430\u0434\u0430\u0447\u0430: ",
           "A": "\u041f\u043e\u0448\u0430\u0433\u043e\u0432\u043e\u0435 \u0440\u0435\u0448\u0435\u043d\u0438\u0435: ",
           "Direct A": "\u0440\u0435\u0448\u0435\u043d\u0438\u0435: "},
    "sw": {"Q": "Swali: ", "A": "Jibu la Hatua kwa Hatua: ", "Direct A": "Jibu: "},
    "te": {"Q": "\u0c2a\u0c4d\u0c30\u0c36\u0c4d\u0c28: ",
           "A": "\u0c26\u0c36\u0c32\u0c35\u0c3e\u0c30\u0c40\u0c17\u0c3e \u0c38\u0c2e\u0c3e\u0c27\u0c3e\u0c28\u0c02: ",
           "Direct A": "\u0c38\u0c2e\u0c3e\u0c27\u0c3e\u0c28\u0c02: "},
    "th": {"Q": "\u0e42\u0e08\u0e17\u0e22\u0e4c: ",
           "A": "\u0e04\u0e33\u0e15\u0e2d\u0e1a\u0e17\u0e35\u0e25\u0e30\u0e02\u0e31\u0e49\u0e19\u0e15\u0e2d\u0e19: ",
           "Direct A": "\u0e04\u0e33\u0e15\u0e2d\u0e1a\u0e17\u0e35: "},
    "zh": {"Q": "\u95ee\u9898\uff1a", "A": "\u9010\u6b65\u89e3\u7b54\uff1a", "Direct A": "\u89e3\u7b54\uff1a"},
}  # fmt: skip
# the official table also has "<lang>-en" copies of "en": the same strings, so not repeated
NEXT_QUESTION = [d["Q"] for d in MULTILINGUAL_DELIMITERS.values()] + ["Q:"]
ANSWER_BEHIND = [d["A"] for d in MULTILINGUAL_DELIMITERS.values()]
_LETTERS = string.ascii_lowercase
_BRACKETED = {f"({c})" for c in _LETTERS}
_BRACKETED_UPPER = sorted(f"({c.upper()})" for c in _LETTERS)


def _is_float(s: str) -> bool:
    try:
        float(s)
        return True
    except ValueError:
        return False


def _no_punct(s: str) -> str:
    return s.translate(str.maketrans("", "", string.punctuation))


def _no_punct_filename(s: str) -> str:
    """eval_utils.remove_punctuation_from_string(is_filename=True): '!?.' become tags."""
    keep = string.punctuation.replace("!", "").replace("?", "").replace(".", "")
    s = s.translate(str.maketrans("", "", keep))
    return s.replace("!", "<EXCLAMATION>").replace("?", "<QUESTION>").replace(".", "<PERIOD>")


# ------------------------------------------------------------------ normalisation


def normalize_prediction(
    prediction: str, *, treat_as_number: bool, num_decimals: int = 0, treat_as_bool: bool = False
) -> str:
    """Official ``metrics.get_normalized_prediction``."""
    p = prediction.lower().strip()
    behind = _BEHIND_PRIMARY if any(x in prediction for x in _BEHIND_PRIMARY) else _BEHIND_SECONDARY
    for d in NEXT_QUESTION:
        p = p.split(d.strip().lower())[0]
    indicated = False
    for d in ANSWER_BEHIND + [_GSM8K_ANSWER] + behind:
        if d.lower() in p:
            p, indicated = p.split(d.lower())[-1], True
    for d in _AHEAD:
        if d in p:
            p, indicated = p.split(d)[0], True
    p = p.strip().split("this is the solution:")[0]
    p = p.rstrip(".").rstrip("'")
    if sum(b in p for b in _BRACKETED) == 1:
        p = re.findall(r"\(.*?\)", p)[0]

    def as_text(s: str) -> str:
        return s.split(".")[0]

    def as_number(s: str) -> str:
        s = s.split("=")[-1]
        for c in ("$", ",", "%", "€", "£"):
            s = s.replace(c, "")
        s = s.split(":")[0].strip()
        for word, num in _WORD_TO_NUM.items():
            if word in s:
                s = s.replace(word, str(num))
        parts = s.split(" ") if indicated else list(reversed(s.split(" ")))
        s = next((part for part in parts if not part.isalpha()), parts[0])
        while s and s[-1].isalpha():
            s = s[:-1]
        if s and s[-1] == "-":
            s = s[:-1]
        if _is_float(s):
            return f"{round(float(s), num_decimals):.{num_decimals}f}"
        m = re.search(r"(\d+)(?!.*\d)", s)
        return m[0] if m else s

    if not treat_as_bool:
        return as_number(p) if treat_as_number else as_text(p)
    text, num = as_text(p), as_number(p)
    if not any(text in group for group in BOOLEAN_SYMBOLS):
        if num in {"0", "1"}:
            p = str(bool(int(num))).lower()
        if text in {"0", "1"}:
            p = str(bool(int(text))).lower()
    else:
        p = text
    return _no_punct(p).strip()


def normalize_target(target: str) -> tuple[str, bool, int]:
    """Target half of ``metrics.get_normalized_target_and_prediction``: strip answer cues
    and '#### '; returns (target, treat_as_number, num_decimals)."""
    primary = any(x in target for x in _BEHIND_PRIMARY)
    secondary = any(x in target for x in _BEHIND_SECONDARY)
    t = target.lower()
    if primary or secondary or any(x in t for x in _AHEAD) or _GSM8K_ANSWER in t:
        if primary:
            t = re.split("|".join(_BEHIND_PRIMARY), t)[-1]
        elif secondary:
            t = re.split("|".join(_BEHIND_SECONDARY), t)[-1]
        t = re.split("|".join(_AHEAD), t)[0]
        t = t.split(_GSM8K_ANSWER)[-1]
        if t and t[-1] in ";,." and _is_float(t[:-1]):
            t = t[:-1]
    as_number = _is_float(t)
    decimals = len(t.split(".")[-1]) if as_number and "." in t else 0
    return t, as_number, decimals


# ------------------------------------------------------------------ the official rule


def _symbol_index(symbol: str) -> int:
    s = symbol.lower()
    return ord(s[1] if s in _BRACKETED else s) - ord("a")


def option_texts(question: str) -> list[str]:
    """The option texts of a multiple-choice question, lower-cased, in order: what follows
    "(A)", "(B)", ... up to the line end (official ``_get_answer_text``; an "A:" also splits)."""
    parts = re.split("".join(rf"\({c.upper()}\)|" for c in _LETTERS) + "A:", question)
    return [p.strip().lower().split("\n")[0] for p in parts[1:]]


def official_accuracy(
    target: str, answer: str, question: str = "", *, include_as_correct: bool = False
) -> bool:
    """Official ``eval_utils._get_accuracy`` on an already normalised ``answer``.

    ``question``: the prompt of a multiple-choice question (its "(A) ... (B) ..." options let
    the answer be the option's text), else "". ``include_as_correct``: a target contained in
    the answer counts (the loop sets it for every non-numeric task). An answer symbol beyond
    the question's options counts as wrong (the official code raises IndexError there)."""
    t, p = str(target).lower(), str(answer).lower()
    included = t in p
    t_text, others = "", []
    if question:
        if t in _LETTERS:  # official: substring of "abc...z" ("" and "ab" too)
            t = f"({t})"
        if p in _LETTERS:
            p = f"({p})"
        if t not in _BRACKETED:
            return False
        texts = option_texts(question)
        present = set(re.findall(r"\([A-Z]\)", question))
        symbols = []
        for s in _BRACKETED_UPPER:  # consecutive from (A)
            if s not in present:
                break
            symbols.append(s)
        try:
            t_text = texts[_symbol_index(t)]
            others = [
                texts[_symbol_index(s)] for s in symbols if _symbol_index(s) != _symbol_index(t)
            ]
        except IndexError:
            return False
    if t in _BRACKETED:
        t = t[1]
    if p in _BRACKETED:
        p = p[1]
    exact = p == t or _no_punct(p).strip() == _no_punct(t).strip()
    option_exact = bool(question) and (p == t_text or _no_punct_filename(p).strip() == t_text)
    if all(t_text not in o for o in others):
        rest_clean = all(o not in p.replace(t_text, "") for o in others)
    else:
        rest_clean = all(o not in p for o in others)
    option_included = bool(question) and t_text in p and rest_clean
    boolean = False
    group = next((g for g in BOOLEAN_SYMBOLS if t in g), None)
    if group is not None:
        meaning = str(bool(group.index(t))).lower()
        if p in {"0", "1"}:
            p = str(bool(int(p))).lower()
        boolean = p.strip() == meaning
    ok = exact or option_exact or option_included or boolean
    return bool(ok or (include_as_correct and included))


def official_correct(
    target: str,
    raw_answer: str,
    *,
    treat_as_number: bool,
    treat_as_bool: bool = False,
    question: str = "",
) -> bool:
    """One example as the official optimisation loop judges it (see the module docstring):
    ``treat_as_number`` / ``treat_as_bool`` are the task's (GSM8K: number; BBH: its numeric or
    Boolean task lists), ``question`` the prompt when the task is multiple choice."""
    choice = normalize_prediction(
        raw_answer, treat_as_number=treat_as_number, num_decimals=0, treat_as_bool=treat_as_bool
    )
    choice = choice.strip(":").strip().split("\n")[0].split("Q:")[0]
    return official_accuracy(target, choice, question, include_as_correct=not treat_as_number)


# ------------------------------------------------------------------ the stricter rule


def strict_correct(target: str, raw_answer: str, *, treat_as_bool: bool = False) -> bool:
    """``metrics.number_included_accuracy`` for one pair (numbers within 1e-5 at the target's
    decimals, text exactly), with Booleans compared by meaning across vocabularies."""
    t, as_number, decimals = normalize_target(str(target))
    if treat_as_bool:
        p = normalize_prediction(raw_answer, treat_as_number=False, treat_as_bool=True)
        t = _no_punct(t).strip()
        vocab = {w: g.index(w) for g in BOOLEAN_SYMBOLS for w in g}
        if t in vocab and p in vocab:
            return vocab[t] == vocab[p]
        return p == t
    p = normalize_prediction(raw_answer, treat_as_number=as_number, num_decimals=decimals)
    if not as_number:
        return t == p
    try:
        return abs(round(float(p), decimals) - float(t)) <= 1e-5
    except ValueError:
        return False


def is_correct(
    target: str,
    raw_answer: str,
    *,
    scoring: Scoring = "official",
    treat_as_number: bool | None = None,
    treat_as_bool: bool = False,
    question: str = "",
) -> bool:
    """Whether ``raw_answer`` answers ``target``: the official loop's rule (default) or the
    stricter one. ``treat_as_number`` None: whether the target is a number."""
    if scoring == "strict":
        return strict_correct(target, raw_answer, treat_as_bool=treat_as_bool)
    if scoring != "official":
        raise ValueError(f"scoring must be one of {SCORINGS}, got {scoring!r}")
    if treat_as_number is None:
        treat_as_number = normalize_target(str(target))[1]
    return official_correct(
        target, raw_answer, treat_as_number=treat_as_number, treat_as_bool=treat_as_bool,
        question=question,
    )  # fmt: skip


def accuracy(flags) -> float:
    return float(np.mean(flags)) if len(flags) else float("nan")
