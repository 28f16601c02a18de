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


@pytest.mark.slow
def test_paper_preset_on_small_files(tmp_path):
    """The paper preset's whole path on small files in the real formats (.mat and PyGOD .pt)."""
    from iclr24_common import load_results

    rng = np.random.default_rng(0)
    root = tmp_path / "data" / "gadam"
    root.mkdir(parents=True)
    n = 120
    a = sp.random(n, n, density=0.05, random_state=0, data_rvs=np.ones)
    label = np.zeros((n, 1))
    label[:8] = 1
    sio.savemat(root / "ACM.mat", {"Network": a + a.T, "Attributes": sp.csr_matrix(
        (rng.random((n, 30)) < 0.1).astype(float)), "Label": label})  # fmt: skip
    ei = torch.from_numpy(rng.integers(0, 90, (2, 400)))
    torch.save(Data(x=torch.rand(90, 12), edge_index=ei, y=torch.arange(90) < 6), root / "books.pt")
    out = tmp_path / "run"
    budgets = ["gadam.local_epochs=3", "gadam.global_epochs=2", "gae.epochs=2", "dominant.epochs=2",
               "anomalydae.epochs=2", "cola.epochs=2", "cola.test_rounds=2", "seeds=0,1"]  # fmt: skip
    argv = ["reproduce", "--preset", "paper", "--datasets", "acm", "books", "--device", "cpu",
            "--data-dir", str(tmp_path / "data"), "--out", str(out)]  # fmt: skip
    assert main([*argv, *(x for b in budgets for x in ("--set", b))]) == 0
    res = load_results(out)
    assert {c["id"] for c in res["claims"]} == {
        "beats-baselines-acm", "global-stage-acm", "beats-baselines-books", "global-stage-books"}  # fmt: skip
    for d in ("acm", "books"):
        assert res["metrics"][f"{d}/cola/epochs"]["per_seed"] == [2.0, 2.0]  # user's --set wins
        assert 0 <= res["metrics"][f"{d}/gadam/auc"]["mean"] <= 1
    assert {c["id"]: c["holds"] for c in res["checks"]}["baseline-budgets"]
