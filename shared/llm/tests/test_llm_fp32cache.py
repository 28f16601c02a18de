"""The de-quantised fp32 folder: built once per GGUF sha256, renamed into place atomically,
and a process that loses a race keeps the winner's folder. transformers' loaders are
replaced by fakes here (the real de-quantisation is covered by test_common_llm_local)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace

import pytest

transformers = pytest.importorskip(
    "transformers", reason="the fp32 cache needs the extra iclr24-common[llm]"
)

from iclr24_llm import local  # noqa: E402


class FakeModel:
    loads = 0

    def __init__(self):
        self.config = SimpleNamespace(quantization_config={"quant_method": "gguf"})
        self.hf_quantizer = object()

    @classmethod
    def from_pretrained(cls, folder, gguf_file=None, dtype=None):
        cls.loads += 1
        return cls()

    def save_pretrained(self, path):
        assert not hasattr(self.config, "quantization_config") and self.hf_quantizer is None
        (Path(path) / "model.safetensors").write_bytes(b"weights")


class FakeTokenizer:
    @classmethod
    def from_pretrained(cls, folder, gguf_file=None):
        return cls()

    def save_pretrained(self, path):
        (Path(path) / "tokenizer.json").write_text("{}")


@pytest.fixture
def fakes(monkeypatch, tmp_path):
    FakeModel.loads = 0
    monkeypatch.setattr(transformers, "AutoModelForCausalLM", FakeModel)
    monkeypatch.setattr(transformers, "AutoTokenizer", FakeTokenizer)
    gguf = tmp_path / "tiny.Q4.gguf"
    gguf.write_bytes(b"GGUF fake")
    return gguf, tmp_path / "cache"


def test_built_once_keyed_by_content(fakes):
    gguf, root = fakes
    assert local.dequantised_dir(gguf, root, build=False) is None
    folder = local.dequantised_dir(gguf, root)
    assert folder.name == f"tiny.Q4-{local.file_sha256(gguf)[:16]}"
    assert json.loads((folder / "source.json").read_text())["sha256"] == local.file_sha256(gguf)
    assert local.dequantised_dir(gguf, root) == folder and FakeModel.loads == 1
    assert sorted(p.name for p in root.iterdir()) == [folder.name]  # no temporary folder left
    gguf.write_bytes(b"GGUF other content")
    assert local.dequantised_dir(gguf, root) != folder and FakeModel.loads == 2


def test_losing_a_race_keeps_the_winners_folder(fakes, monkeypatch):
    gguf, root = fakes
    real_rename = os.rename

    def rename_after_another_process_won(src, dst):
        Path(dst).mkdir(parents=True)
        (Path(dst) / "source.json").write_text('{"winner": true}')
        real_rename(src, dst)  # fails: the target is a non-empty folder

    monkeypatch.setattr(local.os, "rename", rename_after_another_process_won)
    folder = local.dequantised_dir(gguf, root)
    assert json.loads((folder / "source.json").read_text()) == {"winner": True}
    assert sorted(p.name for p in root.iterdir()) == [folder.name]


def test_a_failed_build_leaves_nothing_behind(fakes, monkeypatch):
    gguf, root = fakes

    def broken(*a, **k):
        raise RuntimeError("disk full")

    monkeypatch.setattr(FakeModel, "save_pretrained", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        local.dequantised_dir(gguf, root)
    assert list(root.iterdir()) == []
    assert local.dequantised_dir(gguf, root, build=False) is None
