"""Prompt optimisation with OPRO (paper Sections 4-5; official opt_utils.py, eval_utils.py,
metrics.py), on the generic loop of opro.py.

One step: the meta-prompt shows the 20 best instructions so far (ascending by training
accuracy, scores as integers 0-100) and 3 training exemplars drawn afresh each step with
the slot ``<INS>`` where the instruction goes; the optimizer LLM (temperature 1.0) proposes
8 instructions; each is polished, de-duplicated by md5, filtered (too long, digits on GSM8K,
'INS'), and scored by the scorer LLM (temperature 0) as its accuracy on the training split.
After optimisation the best instruction and the starting one are evaluated on the test split.

The scorer answers either by restricted label decoding (a classification task with a label
set: ``iclr24_llm.pick_label``) or by greedy generation; both answers go through the
official answer normalisation (`normalize_prediction`) before being compared with the target.
"""

from __future__ import annotations

import hashlib
import json
import re
import string
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from iclr24_common import MissingDataError
from iclr24_llm import LLM, pick_label

from .opro import LLMProposer, Proposal, Scored

POSITIONS = ("before_Q", "Q_begin", "Q_end", "A_begin")
INITIAL_INSTRUCTION = "Let's solve the problem."
"""The official optimize_instructions.py starting instruction (paper Section 5.1)."""

# ------------------------------------------------------------------ scorer prompt


def scorer_prompt(
    question: str, instruction: str, position: str = "Q_begin", *, include_qa: bool = False
) -> str:
    """The prompt the scorer LLM sees (official eval_utils.gen_prompt). The official GPT and
    text-bison settings use ``include_qa=False``, which allows only Q_begin and Q_end."""
    if position not in POSITIONS:
        raise ValueError(f"instruction position must be one of {POSITIONS}, got {position!r}")
    if not include_qa:
        if position == "Q_begin":
            return (f"{instruction}\n" if instruction else "") + question
        if position == "Q_end":
            return question + (f"\n{instruction}" if instruction else "")
        raise ValueError("without Q:/A: the instruction position must be Q_begin or Q_end")
    if position == "before_Q":
        return (f"{instruction}\n" if instruction else "") + f"Q: {question}\n\nA:"
    if position == "Q_begin":
        return (f"Q: {instruction}\n" if instruction else "Q: ") + f"{question}\n\nA:"
    if position == "Q_end":
        return f"Q: {question}" + (f"\n{instruction}\n\nA:" if instruction else "\n\nA:")
    return f"Q: {question}\n\nA:" + (f" {instruction}" if instruction else "")


# ------------------------------------------------------------------ meta-prompt


def _bucket(score: float, n_buckets: int | None) -> str:
    """Score as shown: round(score * n_buckets) (official `_bucketize_float`), or round(., 3)."""
    if n_buckets is None:
        return str(round(score, 3))
    if not 0.0 <= score <= 1.0:
        raise ValueError(f"score must be in [0, 1], got {score}")
    return str(round(score * n_buckets))


def instruction_meta_prompt(
    instructions: Sequence[tuple[str, float]],
    exemplars: Sequence[tuple[str, str]],
    *,
    position: str = "Q_begin",
    optimizer: str = "gpt",
    include_qa: bool = False,
    threshold: float = 0.0,
    max_instructions: int = 20,
    num_score_buckets: int | None = 100,
) -> str:
    """The official `gen_meta_prompt` (meta_prompt_type "both_instructions_and_exemplars",
    instructions before exemplars). ``instructions``: (instruction, accuracy in [0, 1]) in any
    order; the ``max_instructions`` best are shown ascending, those below ``threshold`` left
    out. ``exemplars``: (question, answer). ``optimizer``: "gpt" (gpt-3.5-turbo / gpt-4
    wording, answers in <INS> tags) or "text-bison" (answers in square brackets)."""
    if position not in POSITIONS:
        raise ValueError(f"instruction position must be one of {POSITIONS}, got {position!r}")
    if optimizer not in ("gpt", "text-bison"):
        raise ValueError(f"optimizer style must be 'gpt' or 'text-bison', got {optimizer!r}")
    gpt = optimizer == "gpt"
    if gpt and position == "A_begin":
        head = (
            "Your task is to generate the answer starting sentence <Start>. Below are some "
            "previous starting sentences with their scores. The score ranges from 0 to 100.\n"
        )
    elif gpt:
        head = (
            "Your task is to generate the instruction <INS>. Below are some previous "
            "instructions with their scores. The score ranges from 0 to 100.\n"
        )
    else:
        head = (
            "I have some texts along with their corresponding scores. The texts are arranged "
            "in ascending order based on their scores, where higher scores indicate better "
            "quality.\n\n"
        )
    shown = sorted(instructions, key=lambda p: p[1])[-max_instructions:]
    for ins, score in shown:
        if not threshold or score >= threshold:
            head += f"\ntext:\n{ins}\nscore:\n{_bucket(score, num_score_buckets)}\n"
    if gpt:
        ex = "Below are some problems.\n"
    else:
        ex = (
            "The following exemplars show how to apply your text: you replace <INS> in each "
            "input with your text, then read the input and give an output. We say your output "
            "is wrong if your output is different from the given output, and we say your "
            "output is correct if they are the same. When replacing <INS> with an old piece "
            "of text above, we get wrong outputs on the following inputs.\n\n"
        )
    for q, a in exemplars:
        if include_qa:
            if position == "before_Q":
                ex += f"\ninput:\n<INS>\nQ: {q}\nA:"
            elif position == "Q_begin":
                ex += f"\ninput:\nQ: <INS>\n{q}\nA:"
            elif position == "Q_end":
                ex += f"\ninput:\nQ: {q}\n<INS>\nA:"
            else:
                ex += f"\nQ: {q}\nA: <Start>" if gpt else f"\ninput:\nQ: {q}\nA: <INS>"
        else:
            if position not in ("Q_begin", "Q_end"):
                raise ValueError("without Q:/A: the instruction position must be Q_begin or Q_end")
            body = f"<INS>\n{q}" if position == "Q_begin" else f"{q}\n<INS>"
            ex += f"\nProblem:\n{body}\n" if gpt else f"\ninput:\n{body}\n"
        ex += f"\nGround truth answer:\n{a}\n" if gpt else f"\noutput:\n{a}\n"
    prompt = head + "\n\n" + ex if exemplars else head
    if gpt and position == "A_begin":
        return prompt + (
            "\n\nGenerate a starting sentence that is different from all the <Start> sentences "
            "above, and has a higher score than all the <Start> sentences above. The starting "
            "sentence should begin with <Start> and end with </Start>. The starting sentence "
            "should be concise, effective, and generally applicable to all QA pairs above."
        )
    if gpt:
        return prompt + (
            "\n\nGenerate an instruction that is different from all the instructions <INS> "
            "above, and has a higher score than all the instructions <INS> above. The "
            "instruction should begin with <INS> and end with </INS>. The instruction should "
            "be concise, effective, and generally applicable to all problems above."
        )
    return prompt + (
        "\n\nWrite your new text that is different from the old ones and has a score as high "
        "as possible. Write the text in square brackets."
    )


# ------------------------------------------------------------------ optimizer output


def extract_instruction(text: str, *, position: str = "Q_begin", optimizer: str = "gpt") -> str:
    """The instruction in an optimizer reply, as the official loop extracts it: gpt style,
    between <INS> and </INS> (<Start>/</Start> for A_begin), from the start / to the end when
    a tag is missing; text-bison style, the first [...] (empty string if none)."""
    if optimizer != "gpt":
        found = re.findall(r"\[.*?\]", text)
        return found[0][1:-1] if found else ""
    start, end = ("<Start>", "</Start>") if position == "A_begin" else ("<INS>", "</INS>")
    i = text.index(start) + len(start) if start in text else 0
    j = text.index(end) if end in text else len(text)
    return text[i:j].strip()


def polish_sentence(sentence: str, add_ending_punc: bool = False) -> str:
    """Official eval_utils.polish_sentence: strip, drop '**', capitalise the first letter."""
    sentence = sentence.strip()
    if sentence:
        sentence = sentence.replace("**", "")
        if len(sentence) > 1:
            sentence = sentence[0].upper() + sentence[1:]
        if add_ending_punc and not sentence.endswith((".", "?", "!")):
            sentence += "."
    return sentence


def instruction_md5(instruction: str) -> str:
    """The md5 the official loop de-duplicates instructions by (UTF-8 here; official: ASCII,
    which raises on non-ASCII text)."""
    return hashlib.md5(instruction.encode("utf-8")).hexdigest()


def instruction_filter(instruction: str, dataset: str = "") -> str | None:
    """Why the official loop skips a generated instruction, or None if it is kept."""
    if len(instruction) > 500:
        return "too long"
    if dataset == "gsm8k" and any(c.isdigit() for c in instruction):
        return "contains numbers"
    if "INS" in instruction:
        return "contains 'INS'"
    return None


# ------------------------------------------------------------------ answer normalisation

_WORD_TO_NUM = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
    "seventy": 70, "eighty": 80, "ninety": 90,
}  # fmt: skip
_BEHIND_PRIMARY = ["answer is ", "answer: ", "answer is: "]
_BEHIND_SECONDARY = ["is: ", "are: "]
_AHEAD = [
    " is the correct answer",
    " is the right answer",
    " is the final answer",
    " is the answer",
]
_GSM8K_ANSWER = "#### "
BOOLEAN_SYMBOLS = [["false", "true"], ["no", "yes"], ["invalid", "valid"]]
# English question / step-by-step delimiters of the official multilingual table (the other
# languages' strings only matter for MGSM-style outputs).
_NEXT_QUESTION = ["Question: ", "Q:"]
_ANSWER_BEHIND_LANG = ["Step-by-Step Answer: "]
_BRACKETED = {f"({c})" for c in string.ascii_lowercase}


def _is_float(s: str) -> bool:
    try:
        float(s)
        return True
    except ValueError:
        return False


def _no_punct(s: str) -> str:
    return s.translate(str.maketrans("", "", string.punctuation))


def normalize_prediction(
    prediction: str, *, treat_as_number: bool, num_decimals: int = 0, treat_as_bool: bool = False
) -> str:
    """Official metrics.get_normalized_prediction: cut a following question, take the text
    after 'answer is' / '####' (or before 'is the answer'), drop trailing periods, extract a
    single bracketed choice; numbers: last numeric token (first after an answer cue), units,
    '$', ',' and number words handled, rounded to ``num_decimals``; booleans: 0/1 mapped."""
    p = prediction.lower().strip()
    behind = _BEHIND_PRIMARY if any(x in prediction for x in _BEHIND_PRIMARY) else _BEHIND_SECONDARY
    for d in _NEXT_QUESTION:
        p = p.split(d.strip().lower())[0]
    indicated = False
    for d in _ANSWER_BEHIND_LANG + [_GSM8K_ANSWER] + behind:
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
        s = parts[0]
        for part in parts:
            if not part.isalpha():
                s = part
                break
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
    """Official metrics.get_normalized_target_and_prediction, target half: strip answer cues
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


def is_correct(target: str, prediction: str, *, treat_as_bool: bool = False) -> bool:
    """Official `number_included_accuracy_list` for one pair (numbers compared within 1e-5
    after rounding, text by exact match), with the Boolean treatment of BBH's Boolean tasks
    (the prediction normalised with ``treat_as_bool``, compared by meaning: yes = true = valid)."""
    t, as_number, decimals = normalize_target(str(target))
    if treat_as_bool:
        p = normalize_prediction(prediction, treat_as_number=False, treat_as_bool=True)
        t = _no_punct(t).strip()
        for group in BOOLEAN_SYMBOLS:
            if t in group and p in {g for grp in BOOLEAN_SYMBOLS for g in grp}:
                pi = next(g.index(p) for g in BOOLEAN_SYMBOLS if p in g)
                return group.index(t) == pi
        return p == t
    p = normalize_prediction(prediction, treat_as_number=as_number, num_decimals=decimals)
    if not as_number:
        return t == p
    try:
        return abs(round(float(p), decimals) - float(t)) <= 1e-5
    except ValueError:
        return False


# ------------------------------------------------------------------ data


@dataclass(frozen=True)
class Example:
    question: str
    target: str


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


def split_train_test(
    examples: Sequence[Example], train_ratio: float, seed: int = 0, max_test: int | None = None
) -> tuple[list[Example], list[Example]]:
    """Official split: ``int(train_ratio * n)`` training indices drawn without replacement
    (sorted), the rest is the test split (official: np.random.seed(0); here a seeded
    default_rng); ``max_test`` keeps the first test examples only."""
    n = len(examples)
    rng = np.random.default_rng(seed)
    train_idx = np.sort(rng.choice(n, size=int(train_ratio * n), replace=False))
    rest = np.setdiff1d(np.arange(n), train_idx)
    test = [examples[i] for i in rest]
    return [examples[i] for i in train_idx], test[:max_test] if max_test else test


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


def load_gsm8k(root: str | Path, split: str = "test") -> list[Example]:
    """GSM8K from ``root/gsm8k/gsm_<split>.tsv`` or ``root/gsm8k/<split>.jsonl``."""
    base = Path(root) / "gsm8k"
    tsv, jsonl = base / f"gsm_{split}.tsv", base / f"{split}.jsonl"
    if tsv.exists():
        rows = [line.split("\t") for line in tsv.read_text(encoding="utf-8").splitlines()]
        return [Example(r[0], r[1].strip()) for r in rows if len(r) >= 2]
    if jsonl.exists():
        out = []
        for line in jsonl.read_text(encoding="utf-8").splitlines():
            if line.strip():
                d = json.loads(line)
                out.append(Example(d["question"], d["answer"].split(_GSM8K_ANSWER)[-1].strip()))
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


# ------------------------------------------------------------------ the problem


@dataclass
class PromptOptimizationProblem:
    """Instruction optimisation as an OPRO `Problem` (maximise training accuracy).

    ``labels``: the label set of a classification task (scored by restricted decoding,
    ``pick_label``), or None (the scorer generates greedily, ``max_new_tokens``)."""

    scorer: LLM
    train: list[Example]
    labels: Sequence[str] | None = None
    position: str = "Q_begin"
    include_qa: bool = False
    optimizer_style: str = "gpt"
    dataset: str = ""
    """'gsm8k' turns on the official digits filter."""
    initial: Sequence[str] = (INITIAL_INSTRUCTION,)
    num_exemplars: int = 3
    threshold: float = 0.0
    num_score_buckets: int | None = 100
    treat_as_bool: bool = False
    max_new_tokens: int = 256
    seed: int = 0
    minimize: bool = False
    current_step: int = 0
    filtered: dict[str, int] = field(default_factory=dict)
    _cache: dict[str, float] = field(default_factory=dict, repr=False)

    def prompt(self, question: str, instruction: str) -> str:
        return scorer_prompt(question, instruction, self.position, include_qa=self.include_qa)

    def answers(self, instruction: str, examples: Sequence[Example]) -> list[str]:
        """The scorer's answers at temperature 0."""
        prompts = [self.prompt(e.question, instruction) for e in examples]
        if self.labels is not None:
            return [pick_label(self.scorer, p, list(self.labels)) for p in prompts]
        outs = self.scorer.generate(prompts, temperature=0.0, max_new_tokens=self.max_new_tokens)
        return [o[0].text for o in outs]

    def evaluate(self, instruction: str, examples: Sequence[Example]) -> float:
        """Accuracy in [0, 1] of the scorer with this instruction on ``examples``."""
        if not examples:
            return float("nan")
        got = self.answers(instruction, examples)
        ok = [
            is_correct(e.target, a, treat_as_bool=self.treat_as_bool) for e, a in zip(examples, got)
        ]
        return float(np.mean(ok))

    # ---- Problem protocol

    def initial_solutions(self) -> list[str]:
        return list(self.initial)

    def score(self, solution: str) -> float:
        k = instruction_md5(solution)
        if k not in self._cache:  # the official loop never re-evaluates an instruction
            self._cache[k] = self.evaluate(solution, self.train)
        return self._cache[k]

    def key(self, solution: str) -> Hashable:
        return instruction_md5(solution)

    def exemplars(self, step: int) -> list[Example]:
        """3 training exemplars, drawn afresh each step (official: 'random' selection,
        np.random.seed(i_step); here a generator seeded by (seed, step))."""
        rng = np.random.default_rng([self.seed, step, 7])
        k = min(self.num_exemplars, len(self.train))
        return [self.train[i] for i in np.sort(rng.choice(len(self.train), k, replace=False))]

    def meta_prompt(self, shown: Sequence[Scored]) -> str:
        ex = self.exemplars(self.current_step)
        return instruction_meta_prompt(
            [(s.solution, s.value) for s in shown],
            [(e.question, e.target) for e in ex],
            position=self.position,
            optimizer=self.optimizer_style,
            include_qa=self.include_qa,
            threshold=self.threshold,
            num_score_buckets=self.num_score_buckets,
        )

    def parse(self, text: str) -> str | None:
        ins = polish_sentence(
            extract_instruction(text, position=self.position, optimizer=self.optimizer_style)
        )
        why = instruction_filter(ins, self.dataset) or ("empty" if not ins else None)
        if why is not None:
            self.filtered[why] = self.filtered.get(why, 0) + 1
            return None
        return ins

    def is_optimal(self, solution: str, value: float) -> bool:
        return False

    def random_solution(self, rng: np.random.Generator) -> str:
        raise NotImplementedError("prompt optimisation has no random-search baseline here")

    def perturb(self, solution: str, rng: np.random.Generator) -> str:
        raise NotImplementedError("prompt optimisation has no local-perturbation baseline here")


@dataclass
class PromptProposer(LLMProposer):
    """`LLMProposer` that tells the problem which step it is (the exemplars are resampled
    per step, seeded by the step, so a resumed run shows the same exemplars)."""

    name: str = "opro-prompt"

    def propose(self, problem: Any, history: list[Scored], step: int) -> Proposal:
        problem.current_step = step
        return super().propose(problem, history, step)


# ------------------------------------------------------------------ scripted stand-ins

SCRIPTED_PHRASES = [
    "Read the review and decide its sentiment.",
    "Classify the sentiment of the review as positive or negative.",
    "Answer with the sentiment of the review.",
    "Think about whether the review is positive or negative.",
    "Focus on the adjective that describes the subject.",
    "Let's think step by step.",
]


def scripted_instruction_optimizer(prompt: Any) -> list[str]:
    """A scripted optimizer for tests: candidate replies that put a fixed phrase, or the best
    shown instruction followed by one, in <INS> tags (``ScriptedBackend`` samples one)."""
    text = prompt if isinstance(prompt, str) else prompt[-1]["content"]
    shown = re.findall(r"\ntext:\n(.*?)\nscore:\n", text)
    best = shown[-1] if shown else ""
    return [f"<INS>{p}</INS>" for p in SCRIPTED_PHRASES] + [
        f"<INS>{best} {p}</INS>" for p in SCRIPTED_PHRASES[:3]
    ]


def scripted_sentiment_scorer(prompt: Any, choice: str) -> float:
    """A scripted scorer for tests (``ScriptedBackend(..., scorer=...)``): it knows the
    adjective lists, and answers right only when the prompt mentions 'sentiment'; otherwise
    it prefers 'positive'. A stand-in so the loop runs without a model, not a result."""
    text = prompt if isinstance(prompt, str) else prompt[-1]["content"]
    truth = "negative" if any(w in text for w in NEGATIVE) else "positive"
    want = truth if "sentiment" in text.lower() else "positive"
    return 0.0 if choice == want else -5.0
