import numpy as np
import pytest
import torch
from iclr24_gadam import (
    GADAM,
    CitationGraphSpec,
    GADAMConfig,
    citation_graph,
    degree_score,
    derangement,
    detection_metrics,
    feature_inconsistency_score,
    inject_anomalies,
    neighbour_mean,
    pre_attention,
    recall_at_k,
)
from iclr24_gadam.gadam import neighbour_abs_diff, prepare_edges
from torch_geometric.data import Data


@pytest.fixture(scope="module")
def graph():
    return inject_anomalies(
        citation_graph(CitationGraphSpec(num_nodes=400, vocab=120), 3),
        clique_size=8,
        num_cliques=2,
        num_contextual=10,
        seed=3,
    )


def test_injection_counts_labels_and_cliques(graph):
    base = citation_graph(CitationGraphSpec(num_nodes=400, vocab=120), 3)
    t = graph.anomaly_type.numpy()
    assert (t == 2).sum() == 16 and (t == 1).sum() == 10
    assert torch.equal(graph.label, (graph.anomaly_type > 0).long())
    adj = torch.zeros(400, 400, dtype=torch.bool)
    adj[graph.edge_index[0], graph.edge_index[1]] = True
    assert torch.equal(adj, adj.T) and not adj.diagonal().any()
    assert graph.cliques.shape == (2, 8)
    for clique in graph.cliques:
        sub = adj[clique][:, clique]
        assert sub.sum() == 8 * 7  # fully connected
    ctx = np.flatnonzero(t == 1)
    changed = (graph.x != base.x).any(1).numpy()
    assert not changed[t != 1].any()  # only contextual anomalies change features
    for i in ctx:  # each contextual anomaly took another node's original features
        assert (base.x == graph.x[i]).all(1).any()


def test_injection_rejects_impossible_requests():
    g = citation_graph(CitationGraphSpec(num_nodes=50, vocab=20), 0)
    with pytest.raises(ValueError, match="cannot inject"):
        inject_anomalies(g, clique_size=15, num_cliques=3)


@pytest.mark.parametrize("n", [2, 3, 10, 1000])
def test_derangement_has_no_fixed_point(n):
    gen = torch.Generator().manual_seed(n)
    for _ in range(20):
        p = derangement(n, gen)
        assert (p != torch.arange(n)).all() and p.min() >= 0 and p.max() < n


def _dense_reference(h, ei, n):
    a = torch.zeros(n, n, dtype=h.dtype)
    a[ei[1], ei[0]] = 1.0  # row i: incoming edges j -> i
    deg = a.sum(1, keepdim=True)
    return torch.where(deg > 0, a @ h / deg.clamp(min=1), torch.zeros_like(h)), a


def test_message_passing_equals_dense_reference():
    torch.manual_seed(0)
    n = 30
    ei = prepare_edges(torch.randint(0, n, (2, 80)), n)
    h = torch.randn(n, 5, dtype=torch.float64)
    ref, a = _dense_reference(h, ei, n)
    torch.testing.assert_close(neighbour_mean(h, ei), ref)
    # summed in blocks of 3 edges (BlogCatalog's wide features: blocks of ~4,000 edges)
    assert torch.equal(neighbour_mean(h, ei, block=15), neighbour_mean(h, ei))
    pos = torch.randn(n, dtype=torch.float64)
    d_ref = (a * (pos[None, :] - pos[:, None]).abs()).sum(1) / a.sum(1).clamp(min=1)
    torch.testing.assert_close(neighbour_abs_diff(pos, ei), d_ref)
    normal = torch.arange(10)
    z = (d_ref - d_ref[normal].mean()) / d_ref[normal].std()
    torch.testing.assert_close(pre_attention(pos, ei, normal)[:, 0], 1 - torch.sigmoid(z))


def test_isolated_nodes_and_duplicate_edges():
    ei = torch.tensor([[0, 0, 1, 2, 2], [1, 1, 0, 2, 0]])  # duplicate 0->1, self-loop 2->2
    clean = prepare_edges(ei, 4)
    assert clean.tolist() == [[0, 1, 2], [1, 0, 0]]
    h = torch.ones(4, 2)
    assert neighbour_mean(h, clean)[3].tolist() == [0.0, 0.0]  # node 3 is isolated
    data = Data(x=torch.rand(4, 3), edge_index=ei)
    det = GADAM(local_epochs=3, global_epochs=2, seed=0, contamination=0.25).fit(data)
    assert np.isfinite(det.decision_score_).all()


def test_fit_api_and_scores(graph):
    det = GADAM(local_epochs=20, global_epochs=10, seed=0, contamination=0.05).fit(graph)
    n = graph.num_nodes
    assert det.decision_score_.shape == (n,) and det.label_.shape == (n,)
    assert det.label_.sum() == pytest.approx(0.05 * n, abs=2)
    np.testing.assert_allclose(
        det.decision_score_, det.local_score_ + det.global_score_, rtol=1e-5, atol=1e-6
    )
    label, score = det.predict(return_score=True)
    assert np.array_equal(label, det.label_) and np.array_equal(score, det.decision_score_)
    assert len(det.local_losses_) == 20 and len(det.global_losses_) == 10
    again = GADAM(local_epochs=20, global_epochs=10, seed=0, contamination=0.05).fit(graph)
    np.testing.assert_allclose(
        det.decision_score_, again.decision_score_, rtol=1e-5
    )  # seeded (index_add_ may differ by an ulp)


def test_scores_are_equivariant_to_node_relabelling(graph):
    det = GADAM(local_epochs=10, global_epochs=5, seed=1, official_quirks=False).fit(graph)
    perm = torch.randperm(graph.num_nodes, generator=torch.Generator().manual_seed(0))
    inv = torch.argsort(perm)
    relabelled = Data(x=graph.x[perm], edge_index=inv[graph.edge_index])
    s = det.decision_function(graph)
    s_perm = det.decision_function(relabelled)
    np.testing.assert_allclose(s_perm, s[perm.numpy()], rtol=1e-5, atol=1e-6)


def test_bad_input_is_explained():
    with pytest.raises(ValueError, match="edge_index"):
        GADAM().fit(Data(x=torch.rand(5, 2)))
    with pytest.raises(ValueError, match="outside"):
        GADAM().fit(Data(x=torch.rand(5, 2), edge_index=torch.tensor([[0], [9]])))
    with pytest.raises(ValueError, match="contamination"):
        GADAM(contamination=0.9)
    with pytest.raises(RuntimeError, match="fit"):
        GADAM().predict()


def test_metrics_known_values():
    label = np.array([0, 0, 1, 1, 0])
    score = np.array([0.1, 0.9, 0.8, 0.7, 0.2])
    assert recall_at_k(label, score) == 0.5  # top-2: nodes 1 and 2
    out = detection_metrics(label, score, anomaly_type=np.array([0, 0, 1, 2, 0]))
    assert out["auc"] == pytest.approx(4 / 6)
    assert out["auc_contextual"] == pytest.approx(2 / 3) and out["auc_structural"] == pytest.approx(
        2 / 3
    )


def test_simple_baselines_detect_their_anomaly_type(graph):
    t = graph.anomaly_type.numpy()
    deg = detection_metrics(graph.label.numpy(), degree_score(graph), t)
    feat = detection_metrics(graph.label.numpy(), feature_inconsistency_score(graph), t)
    assert deg["auc_structural"] > 0.9  # cliques add 7 edges to every member
    assert feat["auc_contextual"] > 0.6


def test_readme_python_blocks_run():
    import re
    from pathlib import Path

    readme = Path(__file__).resolve().parents[1] / "README.md"
    blocks = re.findall(r"```python\n(.*?)```", readme.read_text(), flags=re.S)
    assert blocks, "the README has no python example"
    for code in blocks:
        exec(compile(code, str(readme), "exec"), {})


def test_block_forward_equals_full_forward_on_the_batch(graph):
    from iclr24_gadam.gadam import LIMEncoder, in_csr

    torch.manual_seed(0)
    enc = LIMEncoder(graph.x.shape[1], 16)
    ei = prepare_edges(graph.edge_index, graph.num_nodes)
    h_full, m_full = enc(graph.x, ei)
    nodes = torch.tensor([5, 0, 399, 17, 17 + 100])
    h, m = enc(graph.x, ei, nodes, in_csr(ei, graph.num_nodes))
    torch.testing.assert_close(h, h_full[nodes])
    torch.testing.assert_close(m, m_full[nodes])


def test_minibatch_variant_official_settings_and_fit(graph):
    cfg = GADAMConfig.minibatch(batch_size=64, global_epochs=3)
    assert (cfg.local_lr, cfg.global_lr, cfg.local_epochs, cfg.k_ano, cfg.neighbour_weight) == (
        1e-4,
        1e-4,
        1,
        0.01,
        0.2,
    )
    det = GADAM(cfg, seed=0, contamination=0.05).fit(graph)
    assert (
        det.decision_score_.shape == (graph.num_nodes,) and np.isfinite(det.decision_score_).all()
    )
    assert len(det.local_losses_) == 1 and len(det.global_losses_) == 3
    # the scores come from an evaluation pass over all nodes in batches: with one local
    # epoch (best = last checkpoint) they equal the full-graph forward of the fitted encoders
    np.testing.assert_allclose(
        det.decision_function(graph), det.decision_score_, rtol=1e-4, atol=1e-5
    )
    clean = GADAM(cfg, seed=0, official_quirks=False).fit(graph)
    np.testing.assert_allclose(
        clean.decision_function(graph), clean.decision_score_, rtol=1e-4, atol=1e-5
    )


def test_random_pseudo_labels_keep_the_local_stage_and_change_the_global_one(graph):
    """The global stage's no-op control: the same local stage (same seed, same code before the
    pseudo-labels are drawn), pseudo-labels drawn at random in the same numbers."""
    cfg = GADAMConfig(local_epochs=5, global_epochs=4)
    full = GADAM(cfg, contamination=0.05, seed=1).fit(graph)
    ctl = GADAM(cfg, contamination=0.05, seed=1, pseudo_labels="random").fit(graph)
    np.testing.assert_array_equal(full.local_score_, ctl.local_score_)
    assert not np.allclose(full.global_score_, ctl.global_score_)
    n = graph.num_nodes
    assert len(ctl._state["ano_idx"]) == int(n * 0.05) and len(ctl._state["nor_idx"]) == int(
        n * 0.3
    )
    kth = np.sort(full.local_score_)[-int(n * 0.05)]  # the local stage's 5 % cut
    assert (full.local_score_[full._state["ano_idx"].numpy()] >= kth).all()  # the method: its top
    assert (ctl.local_score_[ctl._state["ano_idx"].numpy()] < kth).any()
    assert not set(ctl._state["ano_idx"].tolist()) & set(ctl._state["nor_idx"].tolist())
    with pytest.raises(ValueError, match="pseudo_labels"):
        GADAMConfig(pseudo_labels="oracle")
