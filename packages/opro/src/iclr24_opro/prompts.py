"""Prompt optimisation with OPRO (paper Sections 4-5; official opt_utils.py, eval_utils.py),
on the generic loop of opro.py.

One step: the meta-prompt shows the 20 best instructions so far (ascending by training
accuracy, scores as integers 0-100, those under the scorer's threshold left out) and 3
training exemplars with the slot ``<INS>`` where the instruction goes; the optimizer LLM
(temperature 1.0) proposes 8 instructions; each is polished, de-duplicated by md5, filtered
(too long, digits on GSM8K, 'INS'), and scored by the scorer LLM (temperature 0) as its
accuracy on the training split (scoring.py). Every ``eval_interval`` steps the step's new
instructions are also scored on the validation split (official: empty for GSM8K and BBH).

The scorer answers either by restricted label decoding (a classification task with a label
set: ``iclr24_llm.pick_label``) or by greedy generation.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from iclr24_llm import LLM, pick_labels

from .data import NEGATIVE, Example, TaskKind
from .opro import LLMProposer, Proposal, Scored
from .scoring import Scoring, is_correct

POSITIONS = ("before_Q", "Q_begin", "Q_end", "A_begin")
INITIAL_INSTRUCTION = "Let's solve the problem."
"""The official optimize_instructions.py starting instruction (paper Section 5.1)."""
META_PROMPT_TYPES = ("both_instructions_and_exemplars", "instructions_only")
EXEMPLAR_SELECTIONS = ("random", "constant", "accumulative_most_frequent", "current_most_frequent")
SCORER_THRESHOLD = {"palm": 0.0, "gpt": 0.3}
"""Official old_instruction_score_threshold: 0.0 for text-bison scorers, 0.3 for GPT ones."""

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


# ------------------------------------------------------------------ meta-prompts


def _shown_score(score: float, n_buckets: int | None, digits: int = 3) -> str:
    """Score as shown: round(score * n_buckets) (official `_bucketize_float`), else rounded."""
    if n_buckets is None:
        return str(round(score, digits))
    if not 0.0 <= score <= 1.0:
        raise ValueError(f"score must be in [0, 1], got {score}")
    return str(round(score * n_buckets))


def _exemplar_text(q: str, a: str, position: str, gpt: bool, include_qa: bool) -> str:
    if include_qa:
        if position == "before_Q":
            ex = f"\ninput:\n<INS>\nQ: {q}\nA:"
        elif position == "Q_begin":
            ex = f"\ninput:\nQ: <INS>\n{q}\nA:"
        elif position == "Q_end":
            ex = f"\ninput:\nQ: {q}\n<INS>\nA:"
        else:
            ex = f"\nQ: {q}\nA: <Start>" if gpt else f"\ninput:\nQ: {q}\nA: <INS>"
    else:
        if position not in ("Q_begin", "Q_end"):
            raise ValueError("without Q:/A: the instruction position must be Q_begin or Q_end")
        body = f"<INS>\n{q}" if position == "Q_begin" else f"{q}\n<INS>"
        ex = f"\nProblem:\n{body}\n" if gpt else f"\ninput:\n{body}\n"
    return ex + (f"\nGround truth answer:\n{a}\n" if gpt else f"\noutput:\n{a}\n")


def instruction_meta_prompt(
    instructions: Sequence[tuple[str, float]],
    exemplars: Sequence[tuple[str, str]] | None,
    *,
    position: str = "Q_begin",
    optimizer: str = "gpt",
    include_qa: bool = False,
    threshold: float = 0.0,
    max_instructions: int = 20,
    num_score_buckets: int | None = 100,
    instructions_before_exemplars: bool = True,
) -> str:
    """The official `gen_meta_prompt`, meta_prompt_type "both_instructions_and_exemplars".
    ``instructions``: (instruction, accuracy in [0, 1]) in any order; the ``max_instructions``
    best are shown ascending, those below ``threshold`` left out. ``exemplars``: (question,
    answer) pairs, or None for no exemplar part. ``optimizer``: "gpt" (gpt-3.5-turbo / gpt-4
    wording, answers in <INS> tags) or "text-bison" (answers in square brackets)."""
    if position not in POSITIONS:
        raise ValueError(f"instruction position must be one of {POSITIONS}, got {position!r}")
    if optimizer not in ("gpt", "text-bison"):
        raise ValueError(f"optimizer style must be 'gpt' or 'text-bison', got {optimizer!r}")
    gpt = optimizer == "gpt"
    if gpt and position == "A_begin":
        head = ("Your task is to generate the answer starting sentence <Start>. Below are some "
                "previous starting sentences with their scores. The score ranges from 0 to 100.\n")  # fmt: skip
    elif gpt:
        head = ("Your task is to generate the instruction <INS>. Below are some previous "
                "instructions with their scores. The score ranges from 0 to 100.\n")  # fmt: skip
    else:
        head = ("I have some texts along with their corresponding scores. The texts are arranged "
                "in ascending order based on their scores, where higher scores indicate better "
                "quality.\n\n")  # fmt: skip
    for ins, score in sorted(instructions, key=lambda p: p[1])[-max_instructions:]:
        if not threshold or score >= threshold:
            head += f"\ntext:\n{ins}\nscore:\n{_shown_score(score, num_score_buckets)}\n"
    prompt = head
    if exemplars is not None:
        ex = "Below are some problems.\n" if gpt else (
            "The following exemplars show how to apply your text: you replace <INS> in each "
            "input with your text, then read the input and give an output. We say your output "
            "is wrong if your output is different from the given output, and we say your "
            "output is correct if they are the same. When replacing <INS> with an old piece "
            "of text above, we get wrong outputs on the following inputs.\n\n")  # fmt: skip
        ex += "".join(_exemplar_text(q, a, position, gpt, include_qa) for q, a in exemplars)
        prompt = head + "\n\n" + ex if instructions_before_exemplars else ex + "\n\n" + head
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


def instructions_only_meta_prompt(
    instructions: Sequence[tuple[str, float]],
    *,
    position: str = "Q_begin",
    dataset: str = "gsm8k",
    task: str = "",
    num_score_buckets: int | None = 100,
) -> str:
    """The official `gen_meta_prompt`, meta_prompt_type "instructions_only" (for pre-trained,
    not instruction-tuned, optimizers): a task description, then every instruction ascending
    as ``Precision: <score> <TEXT>...</TEXT>``; replies are read from the first <TEXT> tag."""
    where = {"Q_begin": "at the beginning of the question", "Q_end": "at the end of the question",
             "A_begin": "at the beginning of the answer"}  # fmt: skip
    if position not in where:
        raise ValueError("instructions_only needs the position Q_begin, Q_end or A_begin")
    what = {"gsm8k": "grade school math", "mmlu": task}.get(dataset, " ".join(task.split("_")))
    text = (f"Create a piece of text {where[position]} to enhance the precision in solving "
            f"diverse {what.strip()} problems.")  # fmt: skip
    for ins, score in sorted(instructions, key=lambda p: p[1]):
        text += f"\n\nPrecision: {_shown_score(score, num_score_buckets, 2)} <TEXT>{ins}</TEXT>"
    return text


# ------------------------------------------------------------------ optimizer output


def extract_instruction(
    text: str, *, position: str = "Q_begin", optimizer: str = "gpt", meta_prompt_type: str = ""
) -> str:
    """The instruction in an optimizer reply, as the official loop extracts it: gpt style,
    between <INS> and </INS> (<Start>/</Start> for A_begin), from the start / to the end when
    a tag is missing; text-bison style, the first [...]; instructions_only, the first
    <TEXT>...</TEXT> (empty string if none)."""
    if meta_prompt_type == "instructions_only":
        found = re.findall(r"<TEXT>(.*?)</TEXT>", text, re.DOTALL)
        return found[0] if found else ""
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


# ------------------------------------------------------------------ the problem


@dataclass
class PromptOptimizationProblem:
    """Instruction optimisation as an OPRO `Problem` (maximise training accuracy).

    ``labels``: the label set of a classification task (scored by restricted decoding,
    ``pick_label``), or None (the scorer generates greedily, ``max_new_tokens``).
    ``kind``: how answers are compared (official per-task flags, data.task_kind);
    ``scoring``: "official" (the loop's rule) or "strict" (scoring.py)."""

    scorer: LLM
    train: list[Example]
    labels: Sequence[str] | None = None
    kind: TaskKind = field(default_factory=lambda: TaskKind("sentiment"))
    scoring: Scoring = "official"
    position: str = "Q_begin"
    include_qa: bool = False
    optimizer_style: str = "gpt"
    meta_prompt_type: str = "both_instructions_and_exemplars"
    initial: Sequence[str] = (INITIAL_INSTRUCTION,)
    num_exemplars: int = 3
    exemplar_selection: str = "random"
    threshold: float = 0.0
    max_instructions: int = 20
    num_score_buckets: int | None = 100
    max_new_tokens: int = 256
    eval_examples: list[Example] = field(default_factory=list)
    """The validation split (official eval_ratio: 0 for GSM8K and BBH, 0.2 for MMLU)."""
    eval_interval: int = 3
    """Every this many steps, the step's new instructions are scored on ``eval_examples``."""
    minimize: bool = False
    current_step: int = 0
    filtered: dict[str, int] = field(default_factory=dict)
    eval_results: list[tuple[int, str, float]] = field(default_factory=list)
    _scores: dict[str, float] = field(default_factory=dict, repr=False)
    _wrong: dict[str, list[int]] = field(default_factory=dict, repr=False)
    _eval: dict[str, float] = field(default_factory=dict, repr=False)

    def __post_init__(self):
        if self.meta_prompt_type not in META_PROMPT_TYPES:
            raise ValueError(f"meta_prompt_type must be one of {META_PROMPT_TYPES}")
        if self.exemplar_selection not in EXEMPLAR_SELECTIONS:
            raise ValueError(f"exemplar_selection must be one of {EXEMPLAR_SELECTIONS}")

    def prompt(self, question: str, instruction: str) -> str:
        return scorer_prompt(question, instruction, self.position, include_qa=self.include_qa)

    def answers(self, instruction: str, examples: Sequence[Example]) -> list[str]:
        """The scorer's answers at temperature 0."""
        prompts = [self.prompt(e.question, instruction) for e in examples]
        if self.labels is not None:
            return pick_labels(self.scorer, prompts, list(self.labels))
        outs = self.scorer.generate(prompts, temperature=0.0, max_new_tokens=self.max_new_tokens)
        return [o[0].text for o in outs]

    def correct(self, instruction: str, examples: Sequence[Example]) -> list[bool]:
        """Per example: is the scorer right with this instruction?"""
        got = self.answers(instruction, examples)
        k = self.kind
        return [
            is_correct(
                e.target, a, scoring=self.scoring, treat_as_number=k.treat_as_number,
                treat_as_bool=k.treat_as_bool,
                question=self.prompt(e.question, instruction) if k.multiple_choice else "",
            )
            for e, a in zip(examples, got)
        ]  # fmt: skip

    def evaluate(self, instruction: str, examples: Sequence[Example]) -> float:
        """Accuracy in [0, 1] of the scorer with this instruction on ``examples``."""
        return float(np.mean(self.correct(instruction, examples))) if examples else float("nan")

    # ---- Problem protocol

    def initial_solutions(self) -> list[str]:
        return list(self.initial)

    def score(self, solution: str) -> float:
        k = instruction_md5(solution)
        if k not in self._scores:  # the official loop never re-evaluates an instruction
            ok = self.correct(solution, self.train)
            self._scores[k] = float(np.mean(ok)) if ok else float("nan")
            self._wrong[k] = [i for i, c in enumerate(ok) if not c]
        return self._scores[k]

    def key(self, solution: str) -> Hashable:
        return instruction_md5(solution)

    def exemplar_indices(self, step: int, shown: Sequence[Scored] = ()) -> list[int]:
        """Training exemplars of step ``step`` (official few_shot_selection_criteria):
        'random' = ``np.random.seed(step)`` draw (official default), 'constant' = the seed-0
        draw every step, 'accumulative_most_frequent' = among the questions answered wrong
        most often so far, 'current_most_frequent' = those most often wrong under the
        instructions ``shown`` in the meta-prompt."""
        n, k = len(self.train), min(self.num_exemplars, len(self.train))
        how = self.exemplar_selection
        if how in ("random", "constant"):
            rs = np.random.RandomState(step if how == "random" else 0)
            return sorted(rs.choice(n, k, replace=False).tolist())
        counts: Counter[int] = Counter()
        pool = self._wrong.values() if how == "accumulative_most_frequent" else [
            self._wrong.get(instruction_md5(s.solution), []) for s in shown]  # fmt: skip
        for wrong in pool:
            counts.update(wrong)
        order = sorted(counts, key=lambda i: (-counts[i], i))  # ties: lower index first
        if how == "current_most_frequent":
            top = [i for i in order if counts[i] == counts[order[0]]] if order else []
            if len(top) < k:
                return order[:k]
            order = top
        if len(order) <= k:
            return sorted(order)
        return sorted(np.random.RandomState(step).choice(order, k, replace=False).tolist())

    def exemplars(self, step: int, shown: Sequence[Scored] = ()) -> list[Example]:
        return [self.train[i] for i in self.exemplar_indices(step, shown)]

    def meta_prompt(self, shown: Sequence[Scored]) -> str:
        pairs = [(s.solution, s.value) for s in shown]
        if self.meta_prompt_type == "instructions_only":
            return instructions_only_meta_prompt(
                pairs, position=self.position, dataset=self.kind.dataset, task=self.kind.task,
                num_score_buckets=self.num_score_buckets,
            )  # fmt: skip
        step = self.current_step
        # official current_most_frequent: the threshold applies from step 1 on
        visible = [s for s in shown if step == 0 or not self.threshold or s.value >= self.threshold]
        ex = self.exemplars(step, visible) if self.num_exemplars else None
        return instruction_meta_prompt(
            pairs, [(e.question, e.target) for e in ex] if ex is not None else None,
            position=self.position, optimizer=self.optimizer_style, include_qa=self.include_qa,
            threshold=self.threshold, max_instructions=self.max_instructions,
            num_score_buckets=self.num_score_buckets,
        )  # fmt: skip

    def parse(self, text: str) -> str | None:
        ins = polish_sentence(extract_instruction(
            text, position=self.position, optimizer=self.optimizer_style,
            meta_prompt_type=self.meta_prompt_type))  # fmt: skip
        why = instruction_filter(ins, self.kind.dataset) or ("empty" if not ins else None)
        if why is not None:
            self.filtered[why] = self.filtered.get(why, 0) + 1
            return None
        return ins

    def is_optimal(self, solution: str, value: float) -> bool:
        return False

    def after_step(self, step: int, new: Sequence[Scored]) -> None:
        """Periodic validation (official eval_interval): score this step's instructions on
        the validation split every ``eval_interval`` steps."""
        if not self.eval_examples or step % self.eval_interval:
            return
        for s in new:
            k = instruction_md5(s.solution)
            if k not in self._eval:
                self._eval[k] = self.evaluate(s.solution, self.eval_examples)
            self.eval_results.append((step, s.solution, self._eval[k]))

    def state_dict(self) -> dict[str, Any]:
        return {"scores": self._scores, "wrong": self._wrong, "eval": self._eval,
                "eval_results": [list(r) for r in self.eval_results], "filtered": self.filtered}  # fmt: skip

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self._scores, self._wrong = dict(state["scores"]), dict(state["wrong"])
        self._eval, self.filtered = dict(state["eval"]), dict(state["filtered"])
        self.eval_results = [tuple(r) for r in state["eval_results"]]

    def random_solution(self, rng: np.random.Generator) -> str:
        raise NotImplementedError("prompt optimisation has no random-search baseline here")

    def perturb(self, solution: str, rng: np.random.Generator) -> str:
        raise NotImplementedError("prompt optimisation has no local-perturbation baseline here")


@dataclass
class PromptProposer(LLMProposer):
    """`LLMProposer` that tells the problem which step it is (the exemplars depend on it)."""

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


def _text(prompt: Any) -> str:
    return prompt if isinstance(prompt, str) else prompt[-1]["content"]


def scripted_instruction_optimizer(prompt: Any) -> list[str]:
    """A scripted optimizer for tests: candidate replies that put a fixed phrase, or the best
    shown instruction followed by one, in <INS> tags (``ScriptedBackend`` samples one)."""
    shown = re.findall(r"\ntext:\n(.*?)\nscore:\n", _text(prompt))
    best = shown[-1] if shown else ""
    return [f"<INS>{p}</INS>" for p in SCRIPTED_PHRASES] + [
        f"<INS>{best} {p}</INS>" for p in SCRIPTED_PHRASES[:3]
    ]


def scripted_sentiment_scorer(prompt: Any, choice: str) -> float:
    """A scripted scorer for tests (``ScriptedBackend(..., scorer=...)``): it knows the
    adjective lists, and answers right only when the prompt mentions 'sentiment'; otherwise
    it prefers 'positive'. A stand-in so the loop runs without a model, not a result."""
    text = _text(prompt)
    truth = "negative" if any(w in text for w in NEGATIVE) else "positive"
    want = truth if "sentiment" in text.lower() else "positive"
    return 0.0 if choice == want else -5.0
