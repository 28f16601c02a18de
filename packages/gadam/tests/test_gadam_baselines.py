"""The baselines: CoLA's official sampling and pairing, DOMINANT / AnomalyDAE / GAE against
PyGOD's own modules, and same-seed determinism of every detector on 2 threads."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from iclr24_gadam import (
    DOMINANT,
    GADAM,
    GAE,
    AnomalyDAE,
    CitationGraphSpec,
    CoLA,
    ColaConfig,
    citation_graph,
    inject_anomalies,
    normalize_features,
)
from iclr24_gadam.baselines import dense_adjacency, reconstruction_error
from iclr24_gadam.cola import RWRSampler, _Adjacency, _negatives, out_csr
from sklearn.metrics import roc_auc_score
from torch_geometric.data import Data


@pytest.fixture(scope="module")
def graph():
    g = normalize_features(citation_graph(CitationGraphSpec(num_nodes=300, vocab=80), 1))
    return inject_anomalies(g, clique_size=10, num_cliques=2, num_contextual=10, seed=1)


def _structural_auc(g, score):
    t = g.anomaly_type.numpy()
    keep = (t == 0) | (t == 2)
    return roc_auc_score(t[keep] == 2, score[keep])


def test_dominant_structure_error_varies_and_finds_the_cliques(graph):
    """PyGOD's inner-product decoder: the structure error differs between nodes and is
    largest on clique members (a ReLU-then-sigmoid decoder gives every node the same error)."""
    det = DOMINANT(weight=0.0, epochs=30, seed=0).fit(graph)  # weight 0: structure error only
    s = det.decision_score_
    assert s.std() / s.mean() > 0.05
    assert _structural_auc(graph, s) > 0.85


def _pygod(name, n, f, s):
    """PyGOD 1.1's own module for ``name`` and its per-node score (detector.forward_model)."""
    pygod_nn = pytest.importorskip("pygod.nn")
    from pygod.nn.functional import double_recon_loss

    def recon(x, out, *weights):
        return double_recon_loss(x, out[0], s, out[1], *weights)

    return {
        "gae": (pygod_nn.GAEBase(f, 64, num_layers=4),
                lambda net, x, ei: F.mse_loss(net(x, ei), x, reduction="none").mean(1)),
        "dominant": (pygod_nn.DOMINANTBase(f, 64, num_layers=4),
                     lambda net, x, ei: recon(x, net(x, ei), 0.5)),
        "anomalydae": (pygod_nn.AnomalyDAEBase(f, n, 64, 64, 0.0, torch.relu),  # eta = theta = 1
                       lambda net, x, ei: recon(x, net(x, ei, n), 0.5, 0.5, 0.5)),
    }[name]  # fmt: skip


@pytest.mark.parametrize("detector", [GAE, DOMINANT, AnomalyDAE], ids=lambda d: d.__name__)
def test_ports_equal_pygod(graph, detector):
    """Our fit against PyGOD's module, from the same initial weights, trained with PyGOD's
    full-batch Adam loop (DeepDetector.fit) on its loss: the scores after 3 epochs agree."""
    n, f = graph.num_nodes, graph.x.shape[1]
    theirs, score_fn = _pygod(detector.__name__.lower(), n, f, dense_adjacency(graph.edge_index, n))
    det = detector(epochs=3, seed=0).fit(graph)
    torch.manual_seed(0)  # the initial weights of that fit
    ours = detector(seed=0)._model(n, f)
    ps, qs = list(ours.parameters()), list(theirs.parameters())
    assert [p.shape for p in ps] == [q.shape for q in qs]  # the same layers in the same order
    with torch.no_grad():
        for p, q in zip(ps, qs):
            q.copy_(p)
    opt = torch.optim.Adam(theirs.parameters(), lr=4e-3)
    for _ in range(3):
        score = score_fn(theirs, graph.x, graph.edge_index)
        opt.zero_grad()
        score.mean().backward()
        opt.step()
    np.testing.assert_allclose(det.decision_score_, score.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_reconstruction_error_weights():
    x, x_ = torch.tensor([[1.0, 0.0]]), torch.tensor([[0.0, 2.0]])
    s, s_ = torch.tensor([[0.0, 1.0]]), torch.tensor([[0.0, 0.0]])
    score, attr, struct = reconstruction_error(x, x_, s, s_, weight=0.25)
    assert attr.item() == pytest.approx(math.sqrt(5)) and struct.item() == pytest.approx(1.0)
    assert score.item() == pytest.approx(0.25 * math.sqrt(5) + 0.75)
    _, attr, _ = reconstruction_error(x, x_, s, s_, pos_weight_a=0.75)  # non-zero x weighted .75
    assert attr.item() == pytest.approx(math.sqrt(0.75 * 1 + 0.25 * 4))


# ---------------------------------------------------------------- CoLA


def _path_and_star():
    """0-1-2-3 path, a star 4 -> 5..9, and the isolated node 10."""
    edges = [(0, 1), (1, 2), (2, 3)] + [(4, j) for j in range(5, 10)]
    ei = torch.tensor(edges).T
    return torch.cat([ei, ei.flip(0)], 1), 11


def test_cola_sampler_draws_rwr_subgraphs_of_the_official_size():
    ei, n = _path_and_star()
    sampler = RWRSampler(ei, n, 4)
    hubs = torch.tensor([4])
    for seed in range(20):
        sub = sampler(torch.Generator().manual_seed(seed))
        assert sub.shape == (n, 4) and torch.equal(sub[:, -1], torch.arange(n))  # target last
        # a node with >= 3 neighbours: 3 distinct neighbours (one-step walks, restart 1)
        ctx = sub[hubs, :3]
        assert len(set(ctx[0].tolist())) == 3 and set(ctx[0].tolist()) <= set(range(5, 10))
        # fewer neighbours: the retries walk further (restart 0.9), still inside the component
        assert set(sub[0, :3].tolist()) <= {0, 1, 2, 3}
        assert set(sub[5, :3].tolist()) <= set(range(4, 10))
        assert sub[10].tolist() == [10, 10, 10, 10]  # isolated: its own context


def test_cola_sampler_does_not_depend_on_edge_order():
    g = citation_graph(CitationGraphSpec(num_nodes=200, vocab=20), 0)
    perm = torch.randperm(g.edge_index.shape[1], generator=torch.Generator().manual_seed(0))
    a = RWRSampler(g.edge_index, 200, 4)(torch.Generator().manual_seed(3))
    b = RWRSampler(g.edge_index[:, perm], 200, 4)(torch.Generator().manual_seed(3))
    assert torch.equal(a, b)


def test_cola_adjacency_is_the_official_normalised_adjacency_plus_identity():
    ei, n = _path_and_star()
    a = dense_adjacency(ei, n)
    d = a.sum(1)
    dinv = torch.where(d > 0, d.rsqrt(), torch.zeros_like(d))
    official = dinv[:, None] * a * dinv[None, :] + torch.eye(n)  # normalize_adj(adj) + sp.eye
    sub = torch.tensor([[0, 1, 2, 1], [4, 5, 10, 4]])  # duplicates included
    torch.testing.assert_close(
        _Adjacency(*out_csr(ei, n), n)(sub), official[sub[:, :, None], sub[:, None, :]]
    )


def test_cola_negative_pairing_is_the_official_shift():
    for sizes in ([5], [3, 4], [300, 300, 8], [1]):
        c = torch.arange(sum(sizes))
        expected, start = [], 0
        for b in sizes:  # model.Discriminator: c_mi = torch.cat((c_mi[-2:-1, :], c_mi[:-1, :]), 0)
            cb = c[start : start + b]
            expected.append(torch.cat((cb[-2:-1], cb[:-1])) if b > 1 else cb)
            start += b
        assert torch.equal(c[_negatives(sizes)], torch.cat(expected))


def test_cola_official_budget_and_scores(graph):
    cfg = ColaConfig()
    assert (cfg.subgraph_size, cfg.batch_size, cfg.lr, cfg.epochs, cfg.test_rounds) == (
        4,
        300,
        1e-3,
        100,
        256,
    )
    assert ColaConfig.for_dataset("ACM").lr == 5e-4 and ColaConfig.for_dataset("ACM").epochs == 400
    det = CoLA(epochs=3, test_rounds=4, seed=0).fit(graph)
    assert len(det.losses_) == 3 and det.steps_ == 3 * math.ceil(graph.num_nodes / 300)
    assert (
        det.decision_score_.shape == (graph.num_nodes,) and np.isfinite(det.decision_score_).all()
    )


# ---------------------------------------------------------------- same seed, same numbers


@pytest.mark.parametrize("make", [
    lambda: CoLA(epochs=6, test_rounds=3, batch_size=64, seed=0),
    lambda: DOMINANT(epochs=5, seed=0),
    lambda: AnomalyDAE(epochs=5, seed=0),
    lambda: GAE(epochs=5, seed=0),
    lambda: GADAM(local_epochs=10, global_epochs=5, seed=0),
], ids=["cola", "dominant", "anomalydae", "gae", "gadam"])  # fmt: skip
def test_same_seed_same_scores_on_two_threads(graph, make):
    """Bit-identical scores from two fits with the same seed on 2 CPU threads (the backward
    of a 2-D advanced index, ``h[sub]``, accumulates in a thread-dependent order on CPU)."""
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        runs = [make().fit(graph).decision_score_ for _ in range(3)]
    finally:
        torch.set_num_threads(before)
    for r in runs[1:]:
        assert np.array_equal(runs[0], r)


def test_detectors_reject_nothing_they_can_score():
    g = Data(x=torch.rand(12, 4), edge_index=torch.tensor([[0, 1, 2], [1, 2, 0]]))
    for det in (CoLA(epochs=1, test_rounds=1, seed=0), DOMINANT(epochs=1), GAE(epochs=1)):
        assert np.isfinite(det.fit(g).decision_score_).all()
