"""Device selection: "auto" picks CUDA, then MPS, then CPU; an unavailable device is an error."""

from __future__ import annotations

import logging

log = logging.getLogger("iclr24.device")


class DeviceError(ValueError):
    """The requested device does not exist on this machine."""


def available_devices() -> list[str]:
    """Names of the devices torch can use here, e.g. ``["cpu", "cuda:0", "cuda:1"]``."""
    try:
        import torch
    except ImportError:
        return ["cpu"]
    names = ["cpu"]
    if torch.cuda.is_available():
        names += [f"cuda:{i}" for i in range(torch.cuda.device_count())]
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        names.append("mps")
    return names


def resolve_device(spec: str = "auto", *, quiet: bool = False):
    """Turn "auto" | "cpu" | "cuda" | "cuda:N" | "mps" into a ``torch.device``.

    "auto" picks CUDA, then MPS, then CPU and logs the choice. Asking for a device that
    is not there raises :class:`DeviceError` naming the devices that are.
    """
    import torch

    spec = (spec or "auto").strip().lower()
    avail = available_devices()
    if spec == "auto":
        if torch.cuda.is_available():
            dev = torch.device("cuda", torch.cuda.current_device())
        elif "mps" in avail:
            dev = torch.device("mps")
        else:
            dev = torch.device("cpu")
        if not quiet:
            extra = f" ({torch.cuda.get_device_name(dev)})" if dev.type == "cuda" else ""
            log.info("device: auto -> %s%s", dev, extra)
        return dev
    try:
        dev = torch.device(spec)
    except RuntimeError as e:
        raise DeviceError(
            f"unknown device {spec!r}: use auto, cpu, cuda, cuda:N or mps "
            f"(available here: {', '.join(avail)})"
        ) from e
    name = f"{dev.type}:{dev.index}" if dev.index is not None else dev.type
    ok = (
        dev.type == "cpu"
        or (
            dev.type == "cuda"
            and any(a.startswith("cuda") for a in avail)
            and (dev.index is None or name in avail)
        )
        or (dev.type == "mps" and "mps" in avail)
    )
    if not ok:
        raise DeviceError(f"device {spec!r} is not available here; available: {', '.join(avail)}")
    if not quiet:
        log.info("device: %s", dev)
    return dev
