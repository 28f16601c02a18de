"""Tasks and data: generated binary tasks (the default, offline, exact labels) and loaders
for the paper's BoolQ, RTE and QQP validation sets and GSM8K's test set (local JSONL or
Hugging Face parquet).

The paper's tasks keep the official prompt files' text (microsoft/BatchPrompt, MIT:
``boolq/``, ``rte/``, ``qqp/`` ``system_prompt.txt``, ``prompt_template.txt``,
``few_shot.txt``) and its label convention ``[class 0]`` / ``[class 1]``: BoolQ class 1 =
yes; RTE class 0 = entailment (SuperGLUE label 0); QQP class 1 = duplicate (GLUE label 1).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from iclr24_common import MissingDataError, MissingDependencyError

from .batchprompt import Task, parse_number

Item = dict[str, str]
"""A data point: its template fields (lower-case keys) and ``label`` (the class id, as text)."""

_OUTPUT_FORMAT = (
    '\n\nBelow are the outputs you need to generate. "X" can be {choices}. \n============\n'
    "Label for {unit} 0: [{x}]\nLabel for {unit} 1: [{x}]\n......\n============\n"
    "Please make sure each generated label is in format of [{x}].\n"
    "Please make sure to generate [BATCH_SIZE] labels."
)

# ------------------------------------------------------------------ the paper's tasks
# official BatchGPT/rte/system_prompt.txt (typo "Entaliment" kept), rte/prompt_template.txt,
# rte/few_shot.txt
RTE = Task(
    name="rte",
    system=(
        "You are a professional NLP expert at sentence pair relationship annotation. You will "
        "be given [BATCH_SIZE] sentence pairs from Textual Entaliment Recognition dataset each "
        'time, as input. Each data includes a sentence pair, "Premise" and "Hypothesis". '
        "Your goal is to classify the sentence pair into two classes as below:\n[class 0]: the "
        "given Hypothesis and Premise are logical and following (entailment) to each other.\n"
        "[class 1]: the given Hypothesis and Premise are NOT following (entailment) to each "
        "other.\n\nYou will be given [BATCH_SIZE] sentence pairs each time, and the below is "
        "the format of sentence pairs which will be given:\n============\nSentence pair 0:\n"
        "Premise: xxxxx\nHypothesis: xxxxx\n\nSentence pair 1:\nPremise: xxxxx\nHypothesis: "
        "xxxxx\n......\n============"
        + _OUTPUT_FORMAT.format(choices="'1' or '0'", unit="Sentence pair", x="class X")
    ),
    template="Sentence pair [INPUT_INDEX]: \nPremise: [PREMISE]\nHypothesis: [HYPOTHESIS]",
    unit="Sentence pair",
    labels=("class 0", "class 1"),
    fewshot=(
        "Sentence pair 0:\nPremise: Herceptin was already approved to treat the sickest breast "
        "cancer patients, and the company said, Monday, it will discuss with federal regulators "
        "the possibility of prescribing the drug for more breast cancer patients.\nHypothesis: "
        "Herceptin can be used to treat breast cancer.\n\nSentence pair 1:\nPremise: Nearly 4 "
        "million children who have at least one parent who entered the U.S. illegally were born "
        "in the United States and are U.S. citizens as a result, according to the study "
        "conducted by the Pew Hispanic Center. That's about three quarters of the estimated 5.5 "
        "million children of illegal immigrants inside the United States, according to the "
        "study. About 1.8 million children of undocumented immigrants live in poverty, the "
        "study found.\nHypothesis: Three quarters of U.S. illegal immigrants have children.\n",
        "\nLabel for Sentence pair 0: [class 0]\nLabel for Sentence pair 1: [class 1]\n",
    ),
)

# official BatchGPT/boolq/system_prompt.txt (its trailing space kept), boolq/prompt_template.txt;
# the official few-shot has 4 long Wikipedia passages: ours keeps its first two, shortened
BOOLQ = Task(
    name="boolq",
    system=(
        "You are a professional NLP expert at Question Answering annotation. You will be given "
        "[BATCH_SIZE] pairs of data from boolq dataset each time, as input. Each data includes "
        'a pair data, "Passage" and "Question". Your goal to determine whether the answer to '
        "the question is yes or no and classify, as below:\n[class 0]: if the answer is 'No'.\n"
        "[class 1]: if the answer is 'Yes'.\n\nYou will be given [BATCH_SIZE] sentence pairs "
        "each time, and the below is the format of sentence pairs which will be given:\n"
        "============\nInput 0: xxxxx\nInput 1: xxxxx\n......\n============"
        + _OUTPUT_FORMAT.format(choices="'0' or '1'", unit="Input", x="class X")
        + " "
    ),
    template="Input [INPUT_INDEX]: \nPassage: [PASSAGE]\nQuestion: [QUESTION]",
    unit="Input",
    labels=("class 0", "class 1"),
    fewshot=(
        "Input 0: \nPassage: Property tax -- Property tax or 'house tax' is a local tax on "
        "buildings, along with appurtenant land. \nQuestion: is house tax and property tax are "
        "same\n\nInput 1: \nPassage: Pardon -- The pardon power of the President extends only "
        "to an offense recognizable under federal law. \nQuestion: can the president pardon "
        "someone convicted of a state crime\n",
        "\nLabel for Input 0: [class 1]\nLabel for Input 1: [class 0]",
    ),
)

# official BatchGPT/qqp/system_prompt.txt and prompt_template.txt (few-shot: two of ours)
QQP = Task(
    name="qqp",
    system=(
        "You are a professional NLP expert at duplicate question detection. You will be given "
        "[BATCH_SIZE] pairs of data from Quora Question Pairs (QQP) dataset each time, as "
        'input. Each data includes a pair data, "Question1" and "Question2". Your goal to '
        "determine whether two questions are duplicates of each other. You need to classify "
        "into below two classes:\n[class 1]: if they have the same meaning (semantically "
        "equivalent).\n[class 0]: if they do NOT have the same meaning.\n\nYou will be given "
        "[BATCH_SIZE] question pairs each time, and the below is the format of question pairs "
        "which will be given:\n============\nQuestion pair 0:\nQuestion1: xxxxx\nQuestion2: "
        "xxxxx\n\nQuestion pair 1:\nQuestion1: xxxxx\nQuestion2: xxxxx\n......\n============"
        + _OUTPUT_FORMAT.format(choices="'1' or '0'", unit="Question pair", x="class X")
    ),
    template="Question pair [INPUT_INDEX]: \nQuestion1: [QUESTION1]\nQuestion2: [QUESTION2]",
    unit="Question pair",
    labels=("class 0", "class 1"),
    fewshot=(
        "Question pair 0: \nQuestion1: How do I learn Python quickly?\nQuestion2: What is the "
        "fastest way to learn Python?\n\nQuestion pair 1: \nQuestion1: Why is the sky blue?\n"
        "Question2: How far away is the Moon?\n",
        "\nLabel for Question pair 0: [class 1]\nLabel for Question pair 1: [class 0]\n",
    ),
)

# GSM8K: the paper lists it among its tasks, but the official repository has prompt files for
# boolq, rte and qqp only: this prompt is ours, in the same shape (batch-size statement, the
# input format, the numbered output format) with the answer a number in the brackets and one
# short line of working allowed before each label line; the two demonstrations are ours.
GSM8K = Task(
    name="gsm8k",
    system=(
        "You are a professional math teacher at solving grade school math word problems. You "
        "will be given [BATCH_SIZE] questions from the GSM8K dataset each time, as input. "
        "Your goal is to solve each question and give its final answer as a number.\n\n"
        "You will be given [BATCH_SIZE] questions each time, and the below is the format of "
        "questions which will be given:\n============\nQuestion 0: xxxxx\nQuestion 1: xxxxx\n"
        "......\n============\n\nFor each question you may first write one short line "
        '"Working for Question i: ..." with the calculation.'
        + _OUTPUT_FORMAT.format(
            choices="a number (digits only, no units)", unit="Question", x="X"
        )  # fmt: skip
    ),
    template="Question [INPUT_INDEX]: [QUESTION]",
    unit="Question",
    labels=(),
    numeric=True,
    answer_tokens=64,
    fewshot=(
        "Question 0: A baker makes 24 muffins and sells 3 boxes of 6 muffins. How many "
        "muffins are left?\n\nQuestion 1: Tom reads 15 pages a day. How many pages does he "
        "read in two weeks?\n\n",
        "Working for Question 0: 3 x 6 = 18 sold, 24 - 18 = 6.\nLabel for Question 0: [6]\n"
        "Working for Question 1: two weeks = 14 days, 15 x 14 = 210.\n"
        "Label for Question 1: [210]",
    ),
)

PAPER_TASKS = {"boolq": BOOLQ, "rte": RTE, "qqp": QQP, "gsm8k": GSM8K}

# ------------------------------------------------------------------ generated tasks
# Label words instead of "class 0/1", and "good"/"bad" rather than "positive"/"negative":
# with the latter SmolLM2-135M answered "positive" for every sentence one at a time (accuracy
# 0.5 on 24 points), with good/bad and four demonstrations 0.92 (2026-12-03, our probe).
SENTIMENT = Task(
    name="sentiment",
    system=(
        "You are a professional NLP expert at sentiment annotation. You will be given "
        "[BATCH_SIZE] sentences each time, as input. Your goal is to classify each sentence "
        "into two classes as below:\n[good]: the sentence is positive.\n"
        "[bad]: the sentence is negative.\n\nYou will be given [BATCH_SIZE] "
        "sentences each time, and the below is the format of sentences which will be given:\n"
        "============\nInput 0: xxxxx\nInput 1: xxxxx\n......\n============"
        + _OUTPUT_FORMAT.format(choices="'good' or 'bad'", unit="Input", x="X")
    ),
    template="Input [INPUT_INDEX]: [SENTENCE]",
    unit="Input",
    labels=("bad", "good"),
    fewshot=(
        "Input 0: The dessert was wonderful.\n\nInput 1: The bus was filthy.\n\n"
        "Input 2: The concert was boring.\n\nInput 3: The beach is beautiful.\n\n",
        "Label for Input 0: [good]\nLabel for Input 1: [bad]\nLabel for Input 2: [bad]\n"
        "Label for Input 3: [good]",
    ),
)

_GOOD = ["wonderful", "excellent", "fantastic", "amazing", "superb", "lovely", "delightful",
         "great", "brilliant", "perfect"]  # fmt: skip
_BAD = ["terrible", "awful", "horrible", "dreadful", "disgusting", "miserable", "bad",
        "nasty", "rotten", "painful"]  # fmt: skip
_THINGS = ["The meal", "The film", "The trip", "The song", "The party", "The garden",
           "The game", "The show", "The coffee", "The story", "The service", "The lesson",
           "The holiday", "The hotel", "The cake", "The room"]  # fmt: skip
_FRAMES = ["{t} was {a}.", "{t} is {a}.", "{t} was really {a}.", "{t} felt {a}.",
           "Overall, {tl} was {a}."]  # fmt: skip


def make_sentiment(n: int, seed: int = 0) -> list[Item]:
    """``n`` templated review sentences with exact labels (balanced, shuffled): a subject, a
    frame and one adjective from a good or a bad list. Label 1 = positive."""
    rng = random.Random(seed)
    out = []
    for k in range(n):
        y = k % 2
        t, a, f = rng.choice(_THINGS), rng.choice(_GOOD if y else _BAD), rng.choice(_FRAMES)
        out.append({"sentence": f.format(t=t, tl=t.lower(), a=a), "label": str(y)})
    rng.shuffle(out)
    return out


GENERATED = {"sentiment": (SENTIMENT, make_sentiment)}


# ------------------------------------------------------------------ the paper's data


_SPLIT = {"boolq": "validation", "rte": "validation", "qqp": "validation", "gsm8k": "test"}
"""The split each task is evaluated on (official ``DataLoader``; GSM8K has no validation)."""


def paper_paths(data_dir: str | Path, task: str) -> list[Path]:
    """Where a paper task's split is looked for (first found wins)."""
    root, split = Path(data_dir) / "batchprompt" / task, _SPLIT[task]
    alt = ["val", "dev"] if split == "validation" else []
    # Hugging Face parquet: <split>-*.parquet, for gsm8k in its config's folder main/
    # GLUE's own release (RTE/dev.tsv, QQP/dev.tsv): the GLUE layout, read by _read_glue_tsv
    tsv = [root / "dev.tsv"] if task in _GLUE_TSV else []
    return [root / f"{split}.jsonl", *(root / f"{a}.jsonl" for a in alt),
            *sorted(root.glob(f"{split}-*.parquet")), root / f"{split}.parquet",
            *sorted(root.glob(f"main/{split}-*.parquet")), *tsv]  # fmt: skip


_GLUE_TSV = {
    # task: (the tsv's text columns -> our fields, its label column, label value -> class id)
    "rte": ({"sentence1": "premise", "sentence2": "hypothesis"}, "label",
            {"entailment": 0, "not_entailment": 1}),  # SuperGLUE's ids: 0 = entailment
    "qqp": ({"question1": "question1", "question2": "question2"}, "is_duplicate",
            {"0": 0, "1": 1}),
}  # fmt: skip


def _read_glue_tsv(path: Path, task: str) -> list[dict]:
    """GLUE's ``dev.tsv`` (a header row, tab-separated, unquoted): RTE ``index sentence1
    sentence2 label`` (entailment / not_entailment), QQP ``id qid1 qid2 question1 question2
    is_duplicate``; rows as this loader's records (SuperGLUE field names and label ids)."""
    columns, label_col, ids = _GLUE_TSV[task]
    lines = path.read_text(encoding="utf-8").splitlines()
    header = lines[0].split("\t")
    records = []
    for line in lines[1:]:
        if not line.strip():
            continue
        row = dict(zip(header, line.split("\t")))
        if row.get(label_col) not in ids:
            raise ValueError(f"{path}: a row without a known {label_col}: {line[:80]!r}")
        records.append({**{ours: row[theirs] for theirs, ours in columns.items()},
                        "label": ids[row[label_col]]})  # fmt: skip
    return records


_FIELDS = {"boolq": ("passage", "question"), "rte": ("premise", "hypothesis"),
           "qqp": ("question1", "question2"), "gsm8k": ("question",)}  # fmt: skip


def gsm8k_answer(answer: str) -> str:
    """The final answer of a GSM8K solution: the number after ``####``, commas dropped."""
    if "####" not in str(answer):
        raise ValueError(f"a GSM8K answer ends with '#### <number>', got {str(answer)[-40:]!r}")
    number = parse_number(str(answer).split("####")[-1])
    if number is None:
        raise ValueError(f"no number after '####' in {str(answer)[-40:]!r}")
    return str(number)


def _to_item(task: str, row: dict) -> Item:
    if task == "gsm8k":
        label = gsm8k_answer(row["answer"])
    else:
        label = row["label"]
        if isinstance(label, bool) or str(label).lower() in ("true", "false"):  # BoolQ answer
            label = int(str(label).lower() == "true")
        label = str(int(label))
    return {**{f: str(row[f]) for f in _FIELDS[task]}, "label": label}


def load_paper_task(data_dir: str | Path, task: str, n: int | None = None) -> list[Item]:
    """The validation split of ``boolq`` (SuperGLUE: passage, question, label 1 = yes; or
    the original BoolQ's ``answer`` true/false), ``rte`` (SuperGLUE: premise, hypothesis,
    label 0 = entailment) or ``qqp`` (GLUE: question1, question2, label 1 = duplicate), or
    the test split of ``gsm8k`` (question, answer ending ``#### <number>``: the label is that
    number), from ``<data_dir>/batchprompt/<task>/<split>.jsonl``, Hugging Face parquet
    files or (rte, qqp) GLUE's ``dev.tsv``; MissingDataError otherwise. Rows with label -1
    (GLUE test) are dropped."""
    if task not in PAPER_TASKS:
        raise ValueError(f"paper task must be one of {', '.join(PAPER_TASKS)}, got {task!r}")
    paths = [p for p in paper_paths(data_dir, task) if p.exists()]
    if not paths:
        hub = {"qqp": "'glue', 'qqp'", "gsm8k": "'gsm8k', 'main'"}.get(
            task, f"'super_glue', '{task}'"
        )
        fields = ", ".join(_FIELDS[task]) + (", answer" if task == "gsm8k" else ", label")
        raise MissingDataError(
            f"{task} {_SPLIT[task]} split", paper_paths(data_dir, task)[:2],
            f"save it as JSONL (one object per line with {fields}), e.g. "
            f"datasets.load_dataset({hub})['{_SPLIT[task]}'].to_json(...)",
        )  # fmt: skip
    p = paths[0]
    if p.suffix == ".parquet":
        try:
            import pandas as pd
        except ImportError:
            raise MissingDependencyError(
                "reading parquet needs pandas: pip install pandas pyarrow"
            ) from None

        rows = pd.concat([pd.read_parquet(q) for q in paths
                          if q.suffix == ".parquet" and q.parent == p.parent])  # fmt: skip
        records = rows.to_dict("records")
    elif p.suffix == ".tsv":
        records = _read_glue_tsv(p, task)
    else:
        records = [json.loads(line) for line in p.read_text().splitlines() if line.strip()]
    items = []
    for r in records:
        if task != "gsm8k" and "label" not in r and "answer" in r:
            r = {**r, "label": r["answer"]}
        if str(r.get("label")) == "-1":
            continue
        items.append(_to_item(task, r))
    return items[:n] if n else items
