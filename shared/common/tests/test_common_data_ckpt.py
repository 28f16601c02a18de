import random
from pathlib import Path

import numpy as np
import pytest
import torch

from iclr24_common import (
    MissingDataError,
    data_dir,
    load_checkpoint,
    require_files,
    save_checkpoint,
)


def test_data_dir_precedence(tmp_path, monkeypatch):
    monkeypatch.setenv("ICLR24_DATA", str(tmp_path / "env"))
    assert data_dir(tmp_path / "explicit") == tmp_path / "explicit"
    assert data_dir() == tmp_path / "env"
    monkeypatch.delenv("ICLR24_DATA")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert data_dir() == tmp_path / "home" / ".cache" / "iclr24"
    assert (tmp_path / "home" / ".cache" / "iclr24").is_dir()


def test_missing_data_error_says_what_where_how(tmp_path):
    with pytest.raises(MissingDataError) as e:
        require_files(
            tmp_path, ["cifar/data_batch_1"], what="CIFAR-10", how_to_get="run with --download"
        )
    msg = str(e.value)
    assert "CIFAR-10" in msg and str(tmp_path / "cifar" / "data_batch_1") in msg
    assert "--download" in msg and "--data-dir" in msg
    assert isinstance(e.value, FileNotFoundError)


def _train(model, opt, sched, steps):
    losses = []
    for _ in range(steps):
        x = torch.randn(8, 3)
        noise = float(np.random.rand()) + random.random()
        loss = ((model(x) - noise) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.item())
    return losses


def _fresh():
    torch.manual_seed(0)
    np.random.seed(0)
    random.seed(0)
    model = torch.nn.Linear(3, 1)
    opt = torch.optim.Adam(model.parameters(), lr=0.1)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    return model, opt, sched


def test_resume_equals_straight_through(tmp_path: Path):
    model, opt, sched = _fresh()
    straight = _train(model, opt, sched, 6)

    model, opt, sched = _fresh()
    first = _train(model, opt, sched, 3)
    save_checkpoint(
        tmp_path / "ckpt.pt", step=3, model=model, optimizer=opt, scheduler=sched, extra={"a": 1}
    )
    _train(model, opt, sched, 5)  # wander off, then restore

    model2 = torch.nn.Linear(3, 1)
    opt2 = torch.optim.Adam(model2.parameters(), lr=0.1)
    sched2 = torch.optim.lr_scheduler.StepLR(opt2, step_size=2, gamma=0.5)
    state = load_checkpoint(tmp_path / "ckpt.pt", model=model2, optimizer=opt2, scheduler=sched2)
    assert state == {"step": 3, "extra": {"a": 1}}
    rest = _train(model2, opt2, sched2, 3)
    np.testing.assert_allclose(first + rest, straight, rtol=0, atol=1e-7)


def test_missing_checkpoint_is_clear(tmp_path):
    with pytest.raises(FileNotFoundError, match="without --resume"):
        load_checkpoint(tmp_path / "nope.pt")
