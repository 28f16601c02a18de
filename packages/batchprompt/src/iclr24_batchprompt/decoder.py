"""The restricted label decoder: BatchPrompt's answer format on a small local model.

SmolLM2-135M cannot be trusted to write ``Label for Input 7: [positive]`` sixteen times in a
row. Here the format is *forced* and only the label is the model's: after the prompt (chat
template, as ``generate`` renders it), the decoder feeds ``Label for <unit> 0: [``, lets the
model choose among the allowed labels' tokens (greedy over a token trie, on the KV cache),
feeds ``]`` and the next line's prefix, and so on item by item. Every label line is present,
in order, once: the parser's missing/extra/duplicate cases cannot happen on this path.

Confidence: the label's probability within the allowed labels (the product over the steps
where labels still compete); "confident" when it is at least ``threshold``. The prompt then
carries no verbal confidence request (the HTTP path asks for one instead).

The ledger books what a server would bill for the same text: the rendered prompt's tokens
and the answer's tokens (forced and chosen alike).
"""

from __future__ import annotations

from collections.abc import Sequence

from .batchprompt import CONFIDENT, NOT_CONFIDENT, Answer, Answerer, Task, build_messages

DEFAULT_THRESHOLD = 0.8
"""Probability of the chosen label (among the allowed ones) above which it is "confident"
(ours: the paper asks the LLM in words; see the README)."""


def restricted_answerer(
    backend, *, threshold: float = DEFAULT_THRESHOLD, share_prefix: bool = True
) -> Answerer:
    """An :data:`Answerer` for a ``TransformersBackend`` (``iclr24_llm``).

    ``share_prefix``: the prompt up to the batch (system prompt, few-shot turns, the opening
    of the last user turn) is the same for every call of a batch size; its KV cache is
    computed once, extended by each call and cropped back to the prefix after it (the tokens are still booked on every call, as a
    server bills them). The split is at a chat-template boundary, where the tokenizer splits
    anyway."""
    import copy

    import torch

    from iclr24_llm.local import _output_cache

    tok_cache: dict[str, list[int]] = {}

    def ids(text: str) -> list[int]:
        if text not in tok_cache:
            tok_cache[text] = backend._ids(text)
        return tok_cache[text]

    def forward(tokens: list[int], past):
        t = torch.tensor([tokens], device=backend.device)
        out = backend.model(input_ids=t, use_cache=True, logits_to_keep=1,
                            **{backend._cache_kw: past})  # fmt: skip
        return torch.log_softmax(out.logits[0, -1].float(), dim=-1), _output_cache(out)

    prefixes: dict[str, tuple[int, object]] = {}

    def start(task: Task, items) -> tuple[list[int], list[int], object]:
        """(prompt ids, ids still to feed, KV cache of the rest)."""
        text = backend.render(build_messages(task, items, confidence=False))
        if not share_prefix:
            ctx = backend._ids(text)
            return ctx, ctx, None
        empty = backend.render(build_messages(task, [{}], confidence=False)[:-1]
                               + [{"role": "user", "content": ""}])  # fmt: skip
        cut = next((k for k, (a, b) in enumerate(zip(text, empty)) if a != b), len(empty))
        head, tail = text[:cut], backend._ids(text[cut:])
        if head not in prefixes:
            head_ids = backend._ids(head)
            _, past = forward(head_ids, None)
            prefixes[head] = (head_ids, past)
        head_ids, past = prefixes[head]
        if hasattr(past, "crop"):  # a transformers cache: used in place, cropped back after
            return head_ids + tail, tail, past
        return head_ids + tail, tail, copy.deepcopy(past)

    def firsts(task: Task) -> list[list[int]]:
        seqs = [ids(lab) for lab in task.labels]
        if len({s[0] for s in seqs if s}) != len(seqs):
            raise ValueError(f"task {task.name}: the labels must start with different tokens "
                             f"for the restricted decoder, got {seqs}")  # fmt: skip
        return seqs

    def answer(task: Task, items: Sequence[dict[str, str]], confidence: bool):
        seqs = firsts(task)
        options = [s[0] for s in seqs]
        out: list[Answer | None] = []
        completion = 0
        with backend._lock, torch.inference_mode():
            ctx, rest, past = start(task, items)
            shared = past
            pending = rest + ids(f"Label for {task.unit} 0: [")
            completion -= len(rest)
            try:
                for i in range(len(items)):
                    logp, past = forward(pending, past)
                    completion += len(pending)
                    p = torch.softmax(logp[options], dim=-1)  # the label distribution
                    label = int(p.argmax())
                    conf = CONFIDENT if float(p[label]) >= threshold else NOT_CONFIDENT
                    out.append(Answer(label, conf))
                    nxt = f"]\nLabel for {task.unit} {i + 1}: [" if i + 1 < len(items) else "]"
                    pending = seqs[label] + ids(nxt)
            finally:
                extra = (
                    shared.get_seq_length() - (len(ctx) - len(rest))
                    if hasattr(shared, "crop")
                    else 0
                )
                if extra > 0:  # negative: remove that many (transformers 4.x and 5.x alike)
                    shared.crop(-extra)
            completion += len(pending)  # the last label and "]" (never fed back)
        backend.usage.record(calls=1, prompt_tokens=len(ctx), completion_tokens=completion)
        text = "\n".join(task.label_line(i, a.label) for i, a in enumerate(out) if a)
        return out, {"prompt_tokens": len(ctx), "completion_tokens": completion, "text": text}

    return answer
