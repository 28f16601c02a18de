"""SupConLoss against a loop-based re-derivation and against outputs of the reference code
(HobbitLong/SupContrast); the paper's per-batch loss; invariances; gradients."""

import itertools
import json
import math
from pathlib import Path

import pytest
import torch
from iclr24_scl_relu import SupConLoss, scl_loss, supcon_loss

FIXTURE = Path(__file__).parent / "fixtures" / "supcon_reference.json"


def unit(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(*shape, generator=g, dtype=torch.float64)
    return x / x.norm(dim=-1, keepdim=True)


def loop_supcon(features, pos, temperature, base, mode):
    """Khosla et al. (2020) eq. 2 written out: anchors are views (all, or view 0 only); the
    positives of anchor (i, v) are the views (j, w) != (i, v) with pos[i][j]; an anchor
    without positives adds 0 to the mean over anchors."""
    bsz, n_views, _ = features.shape
    views = [(i, v) for v in range(n_views) for i in range(bsz)]
    anchors = views if mode == "all" else [(i, 0) for i in range(bsz)]
    total = 0.0
    for i, v in anchors:
        a = features[i, v]
        others = [(j, w) for j, w in views if (j, w) != (i, v)]
        denom = math.log(sum(math.exp(float(a @ features[j, w]) / temperature) for j, w in others))
        weights = [(float(pos[i][j]), features[j, w]) for j, w in others]
        wsum = sum(w for w, _ in weights)
        s = sum(w * (float(a @ f) / temperature - denom) for w, f in weights)
        total += s / wsum if wsum > 1e-6 else 0.0
    return -(temperature / base) * total / len(anchors)


@pytest.mark.parametrize("n_views, mode, kind", list(itertools.product(
    [1, 2, 3], ["all", "one"], ["labels", "none", "mask"])))  # fmt: skip
def test_supcon_equals_the_loop_reference(n_views, mode, kind):
    feats = unit(7, n_views, 5, seed=n_views)
    labels = torch.tensor([0, 1, 0, 2, 1, 0, 3])  # class 2 and 3 have one example
    if kind == "labels":
        pos, kw = (labels[:, None] == labels[None]).tolist(), {"labels": labels}
    elif kind == "none":
        pos, kw = torch.eye(7).tolist(), {}
    else:
        mask = (torch.rand(7, 7, generator=torch.Generator().manual_seed(1)) < 0.4).double()
        pos, kw = mask.tolist(), {"mask": mask}
    got = supcon_loss(feats, **kw, temperature=0.3, base_temperature=0.07, contrast_mode=mode)
    want = loop_supcon(feats, pos, 0.3, 0.07, mode)
    assert float(got) == pytest.approx(want, rel=1e-10, abs=1e-12)


def test_supcon_matches_the_reference_code_outputs():
    data = json.loads(FIXTURE.read_text())
    assert "HobbitLong/SupContrast" in data["provenance"] and len(data["cases"]) >= 5
    for case in data["cases"]:
        f = torch.tensor(case["features"], dtype=torch.float64, requires_grad=True)
        kw = {}
        if "labels" in case:
            kw["labels"] = torch.tensor(case["labels"])
        if "mask" in case:
            kw["mask"] = torch.tensor(case["mask"], dtype=torch.float64)
        crit = SupConLoss(case["temperature"], case["contrast_mode"], case["base_temperature"])
        loss = crit(f, **kw)
        loss.backward()
        assert float(loss.detach()) == pytest.approx(case["loss"], rel=1e-12)
        torch.testing.assert_close(f.grad, torch.tensor(case["grad"], dtype=torch.float64))


def test_supcon_rejects_bad_input():
    with pytest.raises(ValueError, match="3 dimensions"):
        supcon_loss(unit(4, 3))
    with pytest.raises(ValueError, match="not both"):
        supcon_loss(unit(4, 1, 3), labels=torch.zeros(4), mask=torch.eye(4))
    with pytest.raises(ValueError, match="labels"):
        supcon_loss(unit(4, 1, 3), labels=torch.zeros(5))
    with pytest.raises(ValueError, match="contrast_mode"):
        supcon_loss(unit(4, 1, 3), labels=torch.zeros(4), contrast_mode="two")


def loop_scl(h, labels, tau):
    """Eq. (1) of the paper written out: sum over anchors with >= 1 positive."""
    n, total = len(labels), 0.0
    for i in range(n):
        pos = [j for j in range(n) if j != i and labels[j] == labels[i]]
        if not pos:
            continue
        denom = math.log(sum(math.exp(float(h[i] @ h[l]) / tau) for l in range(n) if l != i))
        total += sum(denom - float(h[i] @ h[j]) / tau for j in pos) / len(pos)
    return total


def test_paper_loss_equals_its_definition_and_skips_lonely_anchors():
    h, labels = unit(9, 4, seed=3), torch.tensor([0, 0, 1, 1, 1, 2, 3, 3, 4])
    assert float(scl_loss(h, labels, 0.2)) == pytest.approx(loop_scl(h, labels, 0.2), rel=1e-12)
    anchors = 7  # classes 2 and 4 have a single example
    mean = scl_loss(h, labels, 0.2, reduction="mean")
    assert float(mean) == pytest.approx(loop_scl(h, labels, 0.2) / anchors, rel=1e-12)


def test_paper_loss_is_the_single_view_supcon_when_every_anchor_has_a_positive():
    h, labels = unit(8, 5, seed=4), torch.tensor([0, 1, 2, 0, 1, 2, 0, 1])
    ref = supcon_loss(h[:, None], labels, temperature=0.5, base_temperature=0.5)
    assert float(scl_loss(h, labels, 0.5, reduction="mean")) == pytest.approx(float(ref), rel=1e-12)


def test_stacked_padded_batches_sum_their_losses():
    h, labels = unit(10, 4, seed=5), torch.tensor([0, 1, 0, 1, 2, 2, 0, 1, 2, 0])
    batches = [[0, 1, 2, 3], [4, 5, 6], [7, 8, 9, 0]]
    want = sum(float(scl_loss(h[b], labels[b], 0.3)) for b in batches)
    index = torch.tensor([[0, 1, 2, 3], [4, 5, 6, 0], [7, 8, 9, 0]])
    valid = torch.tensor([[1, 1, 1, 1], [1, 1, 1, 0], [1, 1, 1, 1]], dtype=torch.bool)
    got = scl_loss(h[index], labels[index], 0.3, valid=valid)
    assert float(got) == pytest.approx(want, rel=1e-12)


def test_losses_are_invariant_to_permuting_the_batch():
    feats, labels = unit(12, 2, 6, seed=6), torch.randint(0, 3, (12,))
    perm = torch.randperm(12, generator=torch.Generator().manual_seed(0))
    a, b = supcon_loss(feats, labels), supcon_loss(feats[perm], labels[perm])
    assert float(a) == pytest.approx(float(b), rel=1e-12)
    h = feats[:, 0]
    assert float(scl_loss(h, labels, 0.1)) == pytest.approx(
        float(scl_loss(h[perm], labels[perm], 0.1)), rel=1e-12
    )


def test_paper_loss_gradient():
    h = unit(6, 3, seed=7).requires_grad_(True)
    labels = torch.tensor([0, 0, 1, 1, 2, 0])
    assert torch.autograd.gradcheck(lambda x: scl_loss(x, labels, 0.4), (h,))
