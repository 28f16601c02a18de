"""BatchPrompt: Accomplish more with less (Lin, Diesendruck, Du & Abraham, ICLR 2024),
https://arxiv.org/abs/2309.00384

Batch prompts in the official format, a label parser aligned by item number, batch
permutation and ensembling (BPE, self-weighted), self-reflection-guided early stopping (SEAS),
honest call/token accounting, and a restricted label decoder for a small local model.
"""

import iclr24_common  # noqa: F401  (first: it sets the OpenMP wait policy before torch loads)

from .batchprompt import (
    ALPHA,
    CONFIDENT,
    NOT_CONFIDENT,
    Answer,
    BatchResult,
    Ledger,
    Parsed,
    Task,
    TokenTerms,
    Vote,
    ask,
    batch_text,
    build_messages,
    formula_tokens,
    llm_answerer,
    majority,
    official_tokens,
    parse_answer,
    parse_number,
    planned_calls,
    run_batches,
)
from .data import (
    BOOLQ,
    GSM8K,
    PAPER_TASKS,
    QQP,
    RTE,
    SENTIMENT,
    load_paper_task,
    make_sentiment,
)
from .decoder import restricted_answerer

__version__ = "0.1.0"

__all__ = [
    "ALPHA", "BOOLQ", "CONFIDENT", "GSM8K", "NOT_CONFIDENT", "PAPER_TASKS", "QQP", "RTE", "SENTIMENT",
    "Answer", "BatchResult", "Ledger", "Parsed", "Task", "TokenTerms", "Vote", "ask", "batch_text",
    "build_messages", "formula_tokens", "llm_answerer", "load_paper_task", "majority",
    "make_sentiment", "official_tokens", "parse_answer", "parse_number", "planned_calls", "restricted_answerer",
    "run_batches",
]  # fmt: skip
