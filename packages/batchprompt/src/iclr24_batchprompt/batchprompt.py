"""BatchPrompt: Accomplish more with less (Lin, Diesendruck, Du & Abraham, ICLR 2024),
https://arxiv.org/abs/2309.00384 ; official code https://github.com/microsoft/BatchPrompt.

Several data points go into one prompt (a *batch prompt*); the answer is one numbered label
line per point. Batching divides the instruction and few-shot tokens by the batch size, but
the answers of a point depend on its position in the batch. Two remedies:

- **BPE** (batch permutation and ensembling): K voting rounds, round 1 in the original order
  and round k > 1 with the batch permuted; each point's label is the majority vote of its K
  answers. Self-weighted BPE weights a vote by the model's own confidence: 1 for
  "confident", alpha = 0.2 for "not confident" (paper Sec. 3.3).
- **SEAS** (self-reflection-guided early stopping, paper Algorithm 1): the model also says
  "(confident)" or "(not confident)" after each label; a point leaves its batch once two
  consecutive rounds give the same label, both confident (``seas="paper"``). The paper's
  pseudo-code never updates the remembered previous confidence; here it is updated every
  round. The released script (``adaptive_batch_run.py`` at microsoft/BatchPrompt ac3c354)
  stops a point on agreement alone: two consecutive equal labels, confidence ignored (its
  confident-and-equal test is commented out): ``seas="official"``. Its ``post_process``
  then prints ceil(N / b) * K calls whatever SEAS saved; the calls here are the ones made.

Costs (paper App. F, with the instruction and few-shot counted on *every* call, as a server
bills them; the official ``post_process`` counts them once per batch whatever the votes):

    calls  = sum over rounds of the batches still non-empty    (= ceil(N / b) * K without SEAS)
    tokens = calls * T_prompt + sum_i r_i * T_i                  (r_i: rounds point i was asked)

with T_prompt the tokens of the system prompt and few-shot turns, T_i the tokens of point i.
On a real tokenizer the formula is not exact: ``TokenTerms`` measures its terms and the three
things it leaves out (the batch size stated by a shorter batch, the points' numbers, the joins
between points), so that booked tokens = formula + those, call by call.

Answers are aligned by the number on each label line, never by position: a missing number is
asked again in a smaller batch of only the missing points (``max_reask`` times), a number
outside the batch is ignored (``extra``), a repeated number keeps its first label when the
repeats agree and is asked again when they disagree (``duplicate``).
"""

from __future__ import annotations

import math
import random
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from iclr24_llm import LLM

CONFIDENT, NOT_CONFIDENT = "confident", "not confident"
ALPHA = 0.2
"""Weight of a "not confident" vote in self-weighted BPE (paper Sec. 3.3)."""


# ------------------------------------------------------------------ the prompt


@dataclass(frozen=True)
class Task:
    """A classification task in the official prompt files' shape.

    ``system`` holds ``[BATCH_SIZE]`` (official ``system_prompt.txt``); ``template`` is one
    point with ``[INPUT_INDEX]`` and upper-case field names (official ``prompt_template.txt``);
    ``unit`` is what the label lines name (``Input``, ``Sentence pair``, ``Question pair``);
    ``labels[y]`` is the text inside the brackets for class y (official: ``class 0``, ...).
    ``fewshot``: the demonstration as (user, assistant) texts (official ``few_shot.txt``
    split at ``====Answer====``). ``numeric``: the answer is a number written in the brackets
    (GSM8K), not one of ``labels``; ``answer_tokens``: the free-generation budget per point.
    """

    name: str
    system: str
    template: str
    unit: str
    labels: tuple[str, ...]
    fewshot: tuple[str, str] | None = None
    numeric: bool = False
    answer_tokens: int = 24

    def item_text(self, fields: dict[str, str], index: int) -> str:
        """One point, as the official ``prompt_gen`` fills the template."""
        text = self.template.replace("[INPUT_INDEX]", str(index))
        for key, value in fields.items():
            text = text.replace(f"[{key.upper()}]", str(value))
        return text

    def label_line(self, index: int, label: int, confidence: str | None = None) -> str:
        line = f"Label for {self.unit} {index}: [{label if self.numeric else self.labels[label]}]"
        return line + (f" ({confidence})" if confidence else "")


CONFIDENCE_INSTRUCTION = (
    "\nAfter each label, say how sure you are: write (confident) or (not confident), e.g. "
    '"Label for {unit} 0: [{label}] (confident)".'
)
"""Our wording of the SEAS self-reflection request (the official SEAS prompts are not public)."""


def point_text(task: Task, fields: dict[str, str], index: int) -> str:
    """One point of a batch and its blank line (official ``prompt_gen``)."""
    return task.item_text(fields, index) + "\n\n"


def batch_text(task: Task, items: Sequence[dict[str, str]]) -> str:
    """The user turn of a batch: the points numbered from 0 (official ``prompt_gen``)."""
    return "".join(point_text(task, f, i) for i, f in enumerate(items))


def system_text(task: Task, n: int, confidence: bool = False) -> str:
    text = task.system.replace("[BATCH_SIZE]", str(n))
    if confidence:
        example = task.labels[0] if task.labels else "42"  # a numeric task: any number
        text += CONFIDENCE_INSTRUCTION.format(unit=task.unit, label=example)
    return text


def build_messages(
    task: Task,
    items: Sequence[dict[str, str]] | str,
    *,
    confidence: bool = False,
    n: int | None = None,
) -> list[dict[str, str]]:
    """System prompt, few-shot user/assistant pair, then the batch (official ``GPT_Model``).
    ``items`` may be the batch turn's text itself, with ``n`` the batch size it states."""
    if isinstance(items, str) and n is None:
        raise ValueError("build_messages: a batch given as text needs n, its batch size")
    text = items if isinstance(items, str) else batch_text(task, items)
    n = len(items) if n is None else n
    msgs = [{"role": "system", "content": system_text(task, n, confidence)}]
    if task.fewshot is not None:
        msgs += [{"role": "user", "content": task.fewshot[0]},
                 {"role": "assistant", "content": task.fewshot[1]}]  # fmt: skip
    msgs.append({"role": "user", "content": text})
    return msgs


# ------------------------------------------------------------------ parsing


@dataclass
class Parsed:
    """Labels aligned by item number: ``labels[i]`` (class id) and ``confidence[i]``."""

    labels: dict[int, int] = field(default_factory=dict)
    confidence: dict[int, str | None] = field(default_factory=dict)
    missing: list[int] = field(default_factory=list)
    extra: list[int] = field(default_factory=list)
    duplicate: list[int] = field(default_factory=list)


_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?|-?\.\d+")


def parse_number(text: str) -> int | float | None:
    """The last number in ``text`` ("$1,200." -> 1200, "3.50 dollars" -> 3.5), an int when
    it is whole; None without one (GSM8K answers: the official evaluation's number after
    ``####``, commas dropped)."""
    found = _NUMBER.findall(text)
    if not found:
        return None
    x = float(found[-1].replace(",", ""))
    return int(x) if x.is_integer() else x


def _label_id(task: Task, text: str) -> int | float | None:
    if task.numeric:
        return parse_number(text)
    t = " ".join(text.lower().split())
    names = [lab.lower() for lab in task.labels]
    if t in names:
        return names.index(t)
    # "class 1" inside a longer bracket (official label_gen: substring test); the longest
    # name wins so that "class 1" does not match "class 10"
    hits = [k for k, name in enumerate(names) if re.search(rf"\b{re.escape(name)}\b", t)]
    return max(hits, key=lambda k: len(names[k])) if hits else None


def parse_answer(task: Task, text: str, n: int) -> Parsed:
    """Label lines ``Label for <unit> <i>: [<label>] (confidence)`` aligned by ``i``."""
    pattern = re.compile(
        rf"label\s+for\s+{re.escape(task.unit)}\s*(\d+)\s*:?\s*\[([^\]]*)\]"
        rf"(?:\s*\((not\s+confident|confident)\))?",
        re.IGNORECASE,
    )
    out, seen, clash = Parsed(), Counter(), set()
    for m in pattern.finditer(text):
        i, label = int(m.group(1)), _label_id(task, m.group(2))
        conf = " ".join(m.group(3).lower().split()) if m.group(3) else None
        if not 0 <= i < n:
            out.extra.append(i)
            continue
        seen[i] += 1
        if label is None:
            continue
        if i in out.labels:
            if out.labels[i] != label:
                clash.add(i)
            continue
        out.labels[i], out.confidence[i] = label, conf
    out.duplicate = sorted(i for i, c in seen.items() if c > 1)
    for i in clash:  # repeats that disagree: no answer, ask again
        del out.labels[i], out.confidence[i]
    out.missing = [i for i in range(n) if i not in out.labels]
    return out


# ------------------------------------------------------------------ asking


@dataclass(frozen=True)
class Answer:
    label: int
    confidence: str | None


Answerer = Callable[[Task, Sequence[dict[str, str]], bool], tuple[list[Answer | None], dict]]
"""(task, items, confidence) -> (one answer per item or None, {"prompt_tokens", "completion_tokens",
"text", "missing", "extra", "duplicate"}) for one LLM call."""


def llm_answerer(llm: LLM, *, max_new_tokens: int | None = None) -> Answerer:
    """Free generation (greedy) then the number-aligned parser: the HTTP / scripted path."""

    def answer(task, items, confidence):
        budget = max_new_tokens or task.answer_tokens * len(items) + 16
        [[c]] = llm.generate([build_messages(task, items, confidence=confidence)],
                             max_new_tokens=budget, temperature=0.0)  # fmt: skip
        p = parse_answer(task, c.text, len(items))
        got = [Answer(p.labels[i], p.confidence[i]) if i in p.labels else None
               for i in range(len(items))]  # fmt: skip
        return got, {"prompt_tokens": c.prompt_tokens, "completion_tokens": c.completion_tokens,
                     "text": c.text, "missing": len(p.missing), "extra": len(p.extra),
                     "duplicate": len(p.duplicate)}  # fmt: skip

    return answer


@dataclass
class Ledger:
    """Honest accounting: every call, and every token it was billed."""

    calls: int = 0
    reasks: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    missing: int = 0
    extra: int = 0
    duplicate: int = 0
    unanswered: int = 0
    asked: list[list[int]] = field(default_factory=list)
    """The points (ids) of each call, in call order."""
    round_of: list[int] = field(default_factory=list)
    """The voting round of each call."""
    call_tokens: list[tuple[int, int]] = field(default_factory=list)
    """(prompt, completion) tokens of each call."""
    is_reask: list[bool] = field(default_factory=list)

    def book(self, info: dict, ids: Sequence[int], reask: bool, round: int = 0) -> None:
        self.round_of.append(round)
        self.is_reask.append(reask)
        self.call_tokens.append((int(info["prompt_tokens"]), int(info["completion_tokens"])))
        self.calls += 1
        self.reasks += int(reask)
        self.prompt_tokens += int(info["prompt_tokens"])
        self.completion_tokens += int(info["completion_tokens"])
        for k in ("missing", "extra", "duplicate"):
            setattr(self, k, getattr(self, k) + int(info.get(k, 0)))
        self.asked.append(list(ids))

    def upto(self, rounds: int) -> dict[str, int]:
        """Calls and tokens of the first ``rounds`` voting rounds (BPE with fewer votes is
        the same run stopped earlier, as the official ``post_process``)."""
        keep = [c for c, r in enumerate(self.round_of) if r < rounds]
        return {"calls": len(keep), "reasks": sum(self.is_reask[c] for c in keep),
                "prompt_tokens": sum(self.call_tokens[c][0] for c in keep),
                "completion_tokens": sum(self.call_tokens[c][1] for c in keep)}  # fmt: skip


def ask(answerer: Answerer, task: Task, items: Sequence[dict[str, str]], ids: Sequence[int],
        confidence: bool, ledger: Ledger, max_reask: int = 2, round: int = 0,
        ) -> list[Answer | None]:  # fmt: skip
    """One call for the batch, then calls for only the points still missing (renumbered from
    0 in a smaller batch), at most ``max_reask`` times. ``ids``: the points' ids, for the ledger."""
    got, info = answerer(task, items, confidence)
    ledger.book(info, ids, reask=False, round=round)
    for _ in range(max_reask):
        todo = [i for i, a in enumerate(got) if a is None]
        if not todo:
            break
        again, info = answerer(task, [items[i] for i in todo], confidence)
        ledger.book(info, [ids[i] for i in todo], reask=True, round=round)
        for i, a in zip(todo, again):
            got[i] = a
    ledger.unanswered += sum(a is None for a in got)
    return got


# ------------------------------------------------------------------ voting


@dataclass(frozen=True)
class Vote:
    round: int
    position: int
    """Position of the point in that round's batch (0-based)."""
    label: int | None
    confidence: str | None


def weight(confidence: str | None, alpha: float = ALPHA) -> float:
    return alpha if confidence == NOT_CONFIDENT else 1.0


def majority(votes: Sequence[Vote], *, weighted: bool = False, alpha: float = ALPHA,
             rounds: int | None = None) -> int | None:  # fmt: skip
    """The (weighted) majority label of the first ``rounds`` votes; ties go to the label voted
    first (the official ``Counter.most_common`` keeps first-seen order)."""
    score: dict[int, float] = {}
    for v in votes if rounds is None else [v for v in votes if v.round < rounds]:
        if v.label is not None:
            score[v.label] = score.get(v.label, 0.0) + (
                weight(v.confidence, alpha) if weighted else 1.0
            )
    if not score:
        return None
    top = max(score.values())
    return next(lab for lab, s in score.items() if s >= top - 1e-12)


@dataclass
class BatchResult:
    """Per point: its votes; and the ledger of the whole run."""

    votes: list[list[Vote]]
    ledger: Ledger
    rounds: int
    batch_size: int

    def predictions(self, *, weighted: bool = False, alpha: float = ALPHA,
                    rounds: int | None = None) -> list[int | None]:  # fmt: skip
        return [majority(v, weighted=weighted, alpha=alpha, rounds=rounds) for v in self.votes]


def run_batches(
    answerer: Answerer,
    task: Task,
    items: Sequence[dict[str, str]],
    *,
    batch_size: int,
    rounds: int = 1,
    seas: bool | str = False,
    confidence: bool | None = None,
    seed: int = 0,
    max_reask: int = 2,
) -> BatchResult:
    """BatchPrompt with BPE (``rounds`` > 1) and optionally SEAS.

    Points are split in order into batches of ``batch_size`` (the official ``batched_data``);
    each batch is asked ``rounds`` times, round 0 in order and later rounds in a permutation
    drawn from ``random.Random(seed)``. With ``seas`` (``True`` or ``"paper"``) a point leaves
    its batch after two consecutive confident, equal answers (Algorithm 1, with the previous
    confidence updated every round); with ``seas="official"`` after two consecutive equal
    answers (the released ``adaptive_batch_run.py``). ``confidence`` asks for verbal
    confidence (default: with ``seas``).
    """
    if batch_size < 1 or rounds < 1:
        raise ValueError("batch_size and rounds must be >= 1")
    rule = {False: None, True: "paper", "paper": "paper", "official": "official"}.get(seas, "?")
    if rule == "?":
        raise ValueError(f"seas must be False, True, 'paper' or 'official', got {seas!r}")
    confidence = rule is not None if confidence is None else confidence
    rng = random.Random(seed)
    ledger = Ledger()
    votes: list[list[Vote]] = [[] for _ in items]
    for start in range(0, len(items), batch_size):
        active = list(range(start, min(start + batch_size, len(items))))
        last: dict[int, Answer | None] = {}
        for k in range(rounds):
            if not active:
                break
            order = list(active)
            if k > 0:
                rng.shuffle(order)
            got = ask(answerer, task, [items[i] for i in order], order, confidence, ledger,
                      max_reask, round=k)  # fmt: skip
            stop = []
            for pos, (i, a) in enumerate(zip(order, got)):
                votes[i].append(Vote(k, pos, a.label if a else None, a.confidence if a else None))
                prev = last.get(i)
                agree = (
                    rule is not None
                    and a is not None
                    and prev is not None
                    and (a.label == prev.label)
                )
                if agree and (rule == "official" or a.confidence == prev.confidence == CONFIDENT):
                    stop.append(i)
                last[i] = a  # the paper's Algorithm 1 omits this update of the confidence
            active = [i for i in active if i not in stop]
    return BatchResult(votes, ledger, rounds, batch_size)


# ------------------------------------------------------------------ costs (App. F)


def planned_calls(n: int, batch_size: int, rounds: int) -> int:
    """LLM calls of BatchPrompt without SEAS or re-asks: ceil(N / b) * K."""
    return math.ceil(n / batch_size) * rounds


def formula_tokens(asked: Sequence[Sequence[int]], prompt_tokens: int,
                   item_tokens: Sequence[int]) -> int:  # fmt: skip
    """App. F input tokens: every call pays ``prompt_tokens`` (instruction + few-shot) plus
    the tokens of the points it carries. ``asked[c]``: the points of call c."""
    return sum(prompt_tokens + sum(item_tokens[i] for i in call) for call in asked)


def official_tokens(n_batches: int, prompt_tokens: int, item_tokens: Sequence[int],
                    rounds_asked: Sequence[int]) -> int:  # fmt: skip
    """The official ``post_process`` count: instruction once per batch, whatever the votes."""
    return n_batches * prompt_tokens + sum(t * r for t, r in zip(item_tokens, rounds_asked))


class TokenTerms:
    """The terms of the App. F formula measured with one token counter, and what it omits.

    ``count`` is a backend's ``count_tokens`` (chat messages -> tokens, chat template
    included), ``items`` the points of a run (ids index them). The formula's terms:

    - ``prompt(n)``: T_prompt, a call with no point in it: system prompt stating batch size
      ``n``, few-shot turns, chat-template tokens (the official ``prompt_length`` is the
      system prompt at the run's batch size plus the few-shot texts);
    - ``item(i, j)``: T_i, point i numbered j with its blank line, as the only point of a call
      (official ``num_token``: the point's text, counted once).

    A real tokenizer is not additive across the points of a batch prompt. ``overheads`` books
    what the formula leaves out, per call c with n_c points at positions j = 0..n_c-1:

    - ``batch_size``: T_prompt(n_c) - T_prompt(b): a re-ask or a SEAS-shrunk batch states a
      smaller batch size in its system prompt;
    - ``numbers``: sum_j T_i(j) - T_i(0): a point's number is its position in this call's
      batch (SmolLM2 writes digits one token each: "Input 12" costs one token more than
      "Input 0");
    - ``joins``: ``join`` x (n_c - 1): SmolLM2 merges the blank line that ends a turn into
      one token but splits it in two before the next point.

    ``join`` is measured on the first two points; the check that booked tokens equal
    ``paper + sum(overheads)`` on every call tests it on all the others.
    """

    def __init__(self, count: Callable, task: Task, items: Sequence[dict[str, str]],
                 confidence: bool = False):  # fmt: skip
        self.count, self.task, self.items, self.confidence = count, task, items, confidence
        self._prompt: dict[int, int] = {}
        self._item: dict[tuple[int, int], int] = {}

    def _tokens(self, n: int, content: str) -> int:
        return self.count(build_messages(self.task, content, confidence=self.confidence, n=n))

    def prompt(self, n: int) -> int:
        if n not in self._prompt:
            self._prompt[n] = self._tokens(n, "")
        return self._prompt[n]

    def item(self, i: int, j: int = 0) -> int:
        if (i, j) not in self._item:
            text = point_text(self.task, self.items[i], j)
            self._item[i, j] = self._tokens(1, text) - self.prompt(1)
        return self._item[i, j]

    @cached_property
    def join(self) -> int:
        if len(self.items) < 2:
            return 0
        two = point_text(self.task, self.items[0], 0) + point_text(self.task, self.items[1], 1)
        return self._tokens(2, two) - self.prompt(2) - self.item(0, 0) - self.item(1, 1)

    def paper(self, asked: Sequence[Sequence[int]], batch_size: int) -> int:
        """App. F: calls x T_prompt(b) + sum_i r_i T_i(0) (r_i: the calls point i was in)."""
        return formula_tokens(asked, self.prompt(batch_size),
                              [self.item(i) for i in range(len(self.items))])  # fmt: skip

    def overheads(self, asked: Sequence[Sequence[int]], batch_size: int) -> dict[str, int]:
        """The tokens App. F leaves out (see the class), summed over the calls ``asked``."""
        out = {"batch_size": 0, "numbers": 0, "joins": 0}
        for call in asked:
            out["batch_size"] += self.prompt(len(call)) - self.prompt(batch_size)
            out["numbers"] += sum(self.item(i, j) - self.item(i) for j, i in enumerate(call))
            out["joins"] += self.join * (len(call) - 1)
        return out
