"""Test helpers shared by the packages: run the ``paper`` preset on a miniature of its data.

A paper-path test writes a few rows of each dataset the ``paper`` preset reads, in the exact
on-disk format its loader expects, and runs the real ``reproduce --preset paper`` on it with
``--set`` capping only sizes (steps, examples, seeds, widths), never a code branch the real run
would not take::

    from iclr24_common.testing import run_paper_preset

    def test_paper_path_runs_on_miniature_data(tmp_path):
        write_miniature_cifar10(tmp_path / "data" / "cifar-10-batches-py")
        res = run_paper_preset(app, tmp_path / "data", tmp_path / "run",
                               sets={"epochs": 1, "seeds": "0,1"})
        assert {c["id"] for c in res["claims"]} == {...}

The run must reach ``results.json`` with every claim computed (a verdict from a test) and
every check evaluated; the results contract is enforced by :func:`load_results`.
"""

from __future__ import annotations

import contextlib
import io
import os
import pickle
import struct
import threading
from collections.abc import Iterator, Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np

from .experiment import ExperimentApp
from .results import load_results

TEST_DEVICE_ENV = "ICLR24_TEST_DEVICE"


@contextlib.contextmanager
def serve_files(served: Mapping[str, bytes], hits: list[str] | None = None) -> Iterator[str]:
    """A local HTTP server on 127.0.0.1 (no network) for ``--download`` tests: ``served`` maps a
    path (``/good.csv``) to its bytes, any other path is a 404; each requested path is appended
    to ``hits`` where given. Yields the base URL (``http://127.0.0.1:<port>``)."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            if hits is not None:
                hits.append(self.path)
            body = served.get(self.path)
            if body is None:
                self.send_error(404, "Not Found")
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_device() -> str:
    """The device the paper-path and torchrun tests run on: ``cpu``, unless
    ``$ICLR24_TEST_DEVICE`` names another (``make gpu-check`` sets ``cuda``)."""
    return os.environ.get(TEST_DEVICE_ENV, "cpu")


test_device.__test__ = False  # a helper, not a test, for pytest's collection


def run_paper_preset(
    app: ExperimentApp,
    data_dir: str | Path,
    out_dir: str | Path,
    *,
    sets: Mapping[str, Any] | None = None,
    extra: Sequence[str] = (),
    threads: int = 1,
    preset: str = "paper",
) -> dict[str, Any]:
    """Run ``reproduce --preset paper --data-dir DATA --out OUT --set K=V ...`` in-process on
    the test device (:func:`test_device`: the CPU unless ``ICLR24_TEST_DEVICE`` says
    otherwise, as ``make gpu-check`` does) and return the checked results dict. Fails
    (AssertionError) on a non-zero exit, and names the log's tail so the failing line is in
    the test report."""
    argv = ["reproduce", "--preset", preset, "--data-dir", str(data_dir), "--out", str(out_dir),
            "--device", test_device(), "--threads", str(threads)]  # fmt: skip
    for key, value in (sets or {}).items():
        if isinstance(value, (list, tuple)):
            value = ",".join(str(v) for v in value)
        argv += ["--set", f"{key}={value}"]
    argv += list(extra)
    try:
        code = app.main(argv)
    except SystemExit as e:  # argparse errors
        code = e.code
    if code != 0:
        log = Path(out_dir) / "log.txt"
        tail = log.read_text().splitlines()[-15:] if log.exists() else ["(no log.txt)"]
        raise AssertionError(f"paper preset exited {code}: {' '.join(argv)}\n" + "\n".join(tail))
    res = load_results(out_dir)
    if res.get("preset") not in (None, preset):
        raise AssertionError(f"results.json is for preset {res.get('preset')!r}, not {preset!r}")
    for claim in res["claims"]:
        if claim.get("verdict") not in ("holds", "fails", "inconclusive"):
            raise AssertionError(f"claim {claim.get('id')!r} was not computed: {claim}")
    return res


# ---------------------------------------------------------------- miniature datasets


class _Py2Pickler(pickle._Pickler):
    """Protocol 2 as Python 2's cPickle wrote the CIFAR files: every str is a py2 ``str``
    (SHORT_BINSTRING / BINSTRING), so ``pickle.load(f, encoding="bytes")`` gives bytes keys and
    ``encoding="latin1"`` str keys, as on the real files; numpy's reconstructor is named by its
    Python 2 module (``numpy.core.multiarray``)."""

    def save(self, obj, save_persistent_id=True):
        if type(obj) in (str, bytes):
            data = obj.encode("latin1") if isinstance(obj, str) else obj
            n = len(data)
            self.write(b"U" + bytes([n]) + data if n < 256 else b"T" + struct.pack("<i", n) + data)
            return
        super().save(obj, save_persistent_id)

    def save_global(self, obj, name=None):
        module = getattr(obj, "__module__", "")
        if module.startswith("numpy._core"):
            name = (name or obj.__qualname__).encode()
            self.write(b"c" + module.replace("numpy._core", "numpy.core").encode() + b"\n" + name
                       + b"\n")  # fmt: skip
            self.memoize(obj)
            return
        super().save_global(obj, name)


def _dump_py2(obj, path) -> None:
    buf = io.BytesIO()
    _Py2Pickler(buf, protocol=2).dump(obj)
    path.write_bytes(buf.getvalue())


def write_cifar10(folder, n_per_batch, n_test=10, seed=0):
    """A miniature CIFAR-10 in its real on-disk format (the "python version" pickles).
    ``folder`` = ``.../cifar-10-batches-py``: five training batches and the test batch
    (dict: batch_label, labels (list of int), data (n, 3072) uint8 row-major R, G, B planes,
    filenames), and batches.meta (label_names, num_cases_per_batch, num_vis)."""
    folder.mkdir(parents=True)
    rng = np.random.default_rng(seed)
    names = [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]
    for b, name in enumerate(names):
        n = n_test if name == "test_batch" else n_per_batch
        labels = [int(c) for c in (np.arange(n) + b * n_per_batch) % 10]  # classes in turn
        label = "testing batch 1 of 1" if name == "test_batch" else f"training batch {b + 1} of 5"
        _dump_py2({"batch_label": label, "labels": labels,
                   "data": rng.integers(0, 256, (n, 3072), dtype=np.uint8),
                   "filenames": [f"img_{b}_{i}.png" for i in range(n)]}, folder / name)  # fmt: skip
    _dump_py2({"num_cases_per_batch": n_per_batch, "num_vis": 3072,
               "label_names": ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog",
                               "horse", "ship", "truck"]}, folder / "batches.meta")  # fmt: skip


def write_cifar100(folder, n_train=200, n_test=100, seed=0):
    """A miniature CIFAR-100 in its real on-disk format. ``folder`` =
    ``.../cifar-100-python``: train, test (dict: filenames, batch_label,
    fine_labels, coarse_labels, data) and meta (fine_label_names, coarse_label_names)."""
    folder.mkdir(parents=True)
    rng = np.random.default_rng(seed)
    for name, n in (("train", n_train), ("test", n_test)):
        fine = [int(c) for c in np.arange(n) % 100]
        _dump_py2({"filenames": [f"{name}_{i}.png" for i in range(n)],
                   "batch_label": f"{name}ing batch 1 of 1", "fine_labels": fine,
                   "coarse_labels": [c // 5 for c in fine],
                   "data": rng.integers(0, 256, (n, 3072), dtype=np.uint8)}, folder / name)  # fmt: skip
    _dump_py2(
        {
            "fine_label_names": [f"c{i}" for i in range(100)],
            "coarse_label_names": [f"s{i}" for i in range(20)],
        },
        folder / "meta",
    )
