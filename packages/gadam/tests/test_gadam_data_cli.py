import logging

import numpy as np
import pytest
import scipy.io as sio
import scipy.sparse as sp
import torch
from iclr24_gadam import load_dataset, load_mat, load_pygod
from iclr24_gadam.experiment import main
from torch_geometric.data import Data

from iclr24_common import MissingDataError


def test_mat_loader_on_small_file(tmp_path):
    adj = sp.csr_matrix(np.array([[0, 1, 0], [1, 0, 1], [0, 1, 1]]))
    feats = sp.csr_matrix(np.eye(3))
    sio.savemat(
        tmp_path / "ACM.mat",
        {"Network": adj, "Attributes": feats, "Label": np.array([[0], [1], [0]])},
    )
    g = load_dataset("acm", tmp_path)
    assert g.x.shape == (3, 3) and g.label.tolist() == [0, 1, 0]
    assert sorted(map(tuple, g.edge_index.T.tolist())) == [
        (0, 1),
        (1, 0),
        (1, 2),
        (2, 1),
    ]  # self-loop dropped
    sio.savemat(tmp_path / "bad.mat", {"Network": adj})
    with pytest.raises(ValueError, match="Attributes"):
        load_mat(tmp_path / "bad.mat")


def test_pygod_loader_on_small_file(tmp_path):
    data = Data(
        x=torch.rand(4, 2), edge_index=torch.tensor([[0, 1], [1, 0]]), y=torch.tensor([0, 1, 0, 1])
    )
    torch.save(data, tmp_path / "books.pt")
    g = load_pygod(tmp_path / "books.pt")
    assert g.label.tolist() == [0, 1, 0, 1]


def test_missing_datasets_say_what_to_get(tmp_path):
    with pytest.raises(MissingDataError, match="Planetoid"):
        load_dataset("cora", tmp_path)
    with pytest.raises(MissingDataError, match="BlogCatalog"):
        load_dataset("blogcatalog", tmp_path)
    with pytest.raises(ValueError, match="unknown dataset"):
        load_dataset("imagenet", tmp_path)


def test_ogb_raw_loader_on_small_files(tmp_path):
    import gzip

    raw = tmp_path / "ogbn_arxiv" / "raw"
    raw.mkdir(parents=True)
    with gzip.open(raw / "node-feat.csv.gz", "wt") as f:
        f.write("\n".join(",".join(str(i + j / 10) for j in range(3)) for i in range(4)))
    with gzip.open(raw / "edge.csv.gz", "wt") as f:
        f.write("0,1\n1,2\n2,2\n")  # directed citations and a self-loop
    from iclr24_gadam.data import load_ogb_raw

    g = load_ogb_raw(tmp_path)
    assert g.x.shape == (4, 3) and g.x[2, 1] == pytest.approx(2.1)
    assert sorted(map(tuple, g.edge_index.T.tolist())) == [(0, 1), (1, 0), (1, 2), (2, 1)]
    with pytest.raises(MissingDataError, match="ogbn_arxiv"):
        load_dataset("ogbn-arxiv", tmp_path / "nowhere")


def test_paper_preset_names_every_missing_dataset(tmp_path, capsys):
    code = main(["reproduce", "--preset", "paper", "--datasets", "cora", "acm",
                 "--data-dir", str(tmp_path), "--out", str(tmp_path / "o")])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "missing data" in err
    assert str(tmp_path / "gadam" / "Cora" / "raw") in err and "ACM.mat" in err
    assert "--download" in err  # Planetoid can be fetched by PyG


def test_preset_options_reach_the_preset(tmp_path, capsys):
    import json

    code = main(["reproduce", "--preset", "smoke", "--faithful-quirks", "off", "--print-config"])
    config = json.loads(capsys.readouterr().out)
    assert code == 0 and config["gadam"]["official_quirks"] is False
    with pytest.raises(SystemExit) as e:
        main(["reproduce", "--faithful-quirks", "maybe"])
    assert e.value.code == 2
    assert main(["reproduce", "--preset", "paper", "--datasets", "imagenet",
                 "--out", str(tmp_path)]) == 2  # fmt: skip
    assert "unknown datasets" in capsys.readouterr().err


def test_efficiency_fits_each_detector_in_a_fresh_process():
    """The efficiency unit: every fit in its own process (the peak is the fit's own, so
    GADAM's is not hidden in memory an earlier fit left behind: it read 0 MB in-process),
    one thread, the detectors alternating over the repeats."""
    from dataclasses import replace

    from iclr24_gadam.experiment import PRESETS, efficiency_unit

    preset = replace(PRESETS["smoke"], efficiency_repeats=2)
    setting = preset.graphs[1]  # 1000 nodes
    out = efficiency_unit(setting, preset, 0, logging.getLogger("test"))
    for m in ("gadam", "dominant"):
        assert len(out[f"{m}/seconds"]) == 2 and min(out[f"{m}/seconds"]) > 0
        assert min(out[f"{m}/peak_mb"]) > 1.0, out  # a fresh process grows for every fit
    # DOMINANT's dense N x N adjacency and its reconstruction (4 MB each) come on top
    assert min(out["dominant/peak_mb"]) > min(out["gadam/peak_mb"]) + 4.0, out
    assert out["memory_source"] in ("VmHWM after clear_refs", "ru_maxrss")
    assert len(out["dominant/scores"]) == setting.num_nodes
