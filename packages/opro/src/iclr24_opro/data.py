"""Prompt-optimisation data: a generated sentiment task (the default, offline), the official
train/eval/test split, and loaders for the paper's GSM8K and BIG-Bench Hard files."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from iclr24_common import MissingDataError


@dataclass(frozen=True)
class Example:
    question: str
    target: str


# ------------------------------------------------------------------ task properties
# official optimize_instructions.py: how answers of each BIG-Bench Hard task are compared
BBH_NUMERIC = {"object_counting", "multistep_arithmetic_two"}
BBH_MULTIPLE_CHOICE = {
    "date_understanding", "disambiguation_qa", "geometric_shapes", "hyperbaton",
    "logical_deduction_five_objects", "logical_deduction_seven_objects",
    "logical_deduction_three_objects", "movie_recommendation", "penguins_in_a_table",
    "reasoning_about_colored_objects", "ruin_names", "salient_translation_error_detection",
    "snarks", "temporal_sequences", "tracking_shuffled_objects_five_objects",
    "tracking_shuffled_objects_seven_objects", "tracking_shuffled_objects_three_objects",
}  # fmt: skip
BBH_BOOLEAN = {"boolean_expressions", "causal_judgement", "formal_fallacies", "navigate",
               "sports_understanding", "web_of_lies"}  # fmt: skip
BBH_TASKS = sorted(
    BBH_NUMERIC | BBH_MULTIPLE_CHOICE | BBH_BOOLEAN | {"dyck_languages", "word_sorting"}
)


@dataclass(frozen=True)
class TaskKind:
    """How the official loop reads a task's answers."""

    dataset: str
    """'gsm8k', 'bbh' or 'sentiment' (ours)."""
    task: str = ""
    treat_as_number: bool = False
    treat_as_bool: bool = False
    multiple_choice: bool = False


def task_kind(name: str) -> TaskKind:
    """'gsm8k', 'sentiment' or 'bbh:<task>' -> its TaskKind (official flags)."""
    if name == "gsm8k":
        return TaskKind("gsm8k", "train", treat_as_number=True)
    if name == "sentiment":
        return TaskKind("sentiment", "sentiment")
    if name.startswith("bbh:") and name[4:] in BBH_TASKS:
        t = name[4:]
        return TaskKind("bbh", t, t in BBH_NUMERIC, t in BBH_BOOLEAN, t in BBH_MULTIPLE_CHOICE)
    raise ValueError(f"prompt task must be sentiment, gsm8k or bbh:<task> (one of "
                     f"{', '.join(BBH_TASKS)}), got {name!r}")  # fmt: skip


# ------------------------------------------------------------------ the generated task
POSITIVE = ["wonderful", "delicious", "excellent", "lovely", "great", "friendly", "superb",
            "delightful", "charming", "fantastic"]  # fmt: skip
NEGATIVE = ["terrible", "awful", "disgusting", "rude", "boring", "horrible", "dreadful",
            "broken", "dirty", "disappointing"]  # fmt: skip
SUBJECTS = ["The soup", "The movie", "The hotel room", "The waiter", "The concert", "The book",
            "The weather", "The new phone", "The museum", "The pizza", "The train ride",
            "The teacher"]  # fmt: skip
TEMPLATES = ["{s} was {a}.", "{s} is really {a}.", "Honestly, {s_l} was {a}.",
             "I think {s_l} is {a}.", "{s} turned out {a}."]  # fmt: skip
SENTIMENT_LABELS = ("positive", "negative")


def make_sentiment_task(n: int, seed: int = 0) -> list[Example]:
    """A generated classification task: the sentiment of a short review sentence built from
    a template, a subject and one adjective from a positive or a negative list (balanced)."""
    rng = np.random.default_rng([seed, 2309])
    out = []
    for i in range(n):
        label = SENTIMENT_LABELS[i % 2]
        adj = rng.choice(POSITIVE if label == "positive" else NEGATIVE)
        subj = str(rng.choice(SUBJECTS))
        tpl = str(rng.choice(TEMPLATES))
        sent = tpl.format(s=subj, s_l=subj[0].lower() + subj[1:], a=adj)
        out.append(Example(f"Review: {sent}\nIs this review positive or negative?", label))
    order = rng.permutation(n)
    return [out[i] for i in order]


# ------------------------------------------------------------------ the split


def official_split(
    n: int, train_ratio: float, eval_ratio: float = 0.0, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(train, eval, test) indices as optimize_instructions.py draws them with
    ``np.random.seed(0)``: ``int(train_ratio n)`` training indices, then ``int(eval_ratio n)``
    validation indices from the rest, the remainder is the test split; all sorted.
    ``seed`` = 0 reproduces the official split exactly."""
    rs = np.random.RandomState(seed)
    train = np.sort(rs.choice(n, size=int(train_ratio * n), replace=False))
    rest = np.sort(np.array(sorted(set(range(n)) - set(train.tolist())), dtype=int))
    evals = np.sort(rs.choice(rest, size=int(eval_ratio * n), replace=False))
    test = np.setdiff1d(rest, evals)
    return train, evals, test


def split_examples(
    examples: Sequence[Example],
    train_ratio: float,
    eval_ratio: float = 0.0,
    seed: int = 0,
    max_test: int | None = None,
) -> tuple[list[Example], list[Example], list[Example]]:
    """``official_split`` applied to ``examples``; ``max_test`` keeps the first test examples."""
    tr, ev, te = official_split(len(examples), train_ratio, eval_ratio, seed)
    test = [examples[i] for i in te]
    return (
        [examples[i] for i in tr],
        [examples[i] for i in ev],
        test[:max_test] if max_test else test,
    )


# ------------------------------------------------------------------ the paper's data
GSM8K_HOW = (
    "put GSM8K under <data-dir>/gsm8k as the official repository's gsm_data/gsm_{train,test}"
    ".tsv (question<TAB>answer, no header) or as HF-style {train,test}.jsonl (question, "
    "answer ending in '#### N')"
)
BBH_HOW = (
    "put BIG-Bench Hard task files under <data-dir>/bbh as <task>.json "
    '({"examples": [{"input", "target"}]}, github.com/suzgunmirac/BIG-Bench-Hard) or '
    "<task>.jsonl (one {input, target} per line)"
)


def gsm8k_paths(root: str | Path, split: str) -> tuple[Path, Path]:
    base = Path(root) / "gsm8k"
    return base / f"gsm_{split}.tsv", base / f"{split}.jsonl"


def load_gsm8k(root: str | Path, split: str = "test") -> list[Example]:
    """GSM8K from ``root/gsm8k/gsm_<split>.tsv`` or ``root/gsm8k/<split>.jsonl``."""
    tsv, jsonl = gsm8k_paths(root, split)
    if tsv.exists():
        rows = [line.split("\t") for line in tsv.read_text(encoding="utf-8").splitlines()]
        return [Example(r[0], r[1].strip()) for r in rows if len(r) >= 2]
    if jsonl.exists():
        out = []
        for line in jsonl.read_text(encoding="utf-8").splitlines():
            if line.strip():
                d = json.loads(line)
                out.append(Example(d["question"], d["answer"].split("#### ")[-1].strip()))
        return out
    raise MissingDataError(f"GSM8K ({split})", [tsv, jsonl], GSM8K_HOW)


def load_bbh(root: str | Path, task: str) -> list[Example]:
    """A BIG-Bench Hard task from ``root/bbh/<task>.json`` or ``root/bbh/<task>.jsonl``."""
    base = Path(root) / "bbh"
    js, jsonl = base / f"{task}.json", base / f"{task}.jsonl"
    if js.exists():
        rows = json.loads(js.read_text(encoding="utf-8"))["examples"]
    elif jsonl.exists():
        lines = jsonl.read_text(encoding="utf-8").splitlines()
        rows = [json.loads(line) for line in lines if line.strip()]
    else:
        raise MissingDataError(f"BIG-Bench Hard task {task}", [js, jsonl], BBH_HOW)
    return [Example(r["input"], str(r["target"])) for r in rows]
