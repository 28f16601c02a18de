"""The TPR-RNN backbone: its update rule, shapes, the decomposition switch, and learning a toy
binding task (who is where) in a few steps."""

import numpy as np
import pytest
import torch
from iclr24_aid import TPRRNN, tpr_update


def test_update_binds_and_backlinks_at_orthogonal_vectors():
    ent, role = torch.eye(4), torch.eye(3)
    tpr = torch.zeros(1, 4, 3, 4)
    e1, e2, r1, r2, r3 = ent[:1], ent[1:2], role[:1], role[1:2], role[2:3]
    tpr = tpr_update(tpr, e1, e2, r1, r2, r3)
    read = lambda e, r: torch.einsum("be,br,berf->bf", e, r, tpr)  # noqa: E731
    torch.testing.assert_close(read(e1, r1), e2)  # write: e1 under r1 -> e2
    torch.testing.assert_close(read(e2, r3), e1)  # backlink: e2 under r3 -> e1
    torch.testing.assert_close(read(e1, r2), torch.zeros(1, 4))  # nothing moved yet
    # a second write of e1 under r1 replaces e2 by e3 and moves the old binding to r2
    tpr = tpr_update(tpr, e1, ent[2:3], r1, r2, r3)
    torch.testing.assert_close(read(e1, r1), ent[2:3])
    torch.testing.assert_close(read(e1, r2), e2)


def test_update_clamp():
    big = torch.ones(2, 3, 2, 3)
    out = tpr_update(torch.zeros(2, 3, 2, 3), big[:, :, 0, 0] * 5, big[:, :, 0, 0] * 5,
                     big[:, 0, :, 0] * 5, big[:, 0, :, 0] * 5, big[:, 0, :, 0] * 5, clamp=True)  # fmt: skip
    assert out.abs().max() <= 1.0


@pytest.mark.parametrize("decomposition", ["linear", "aid"])
def test_shapes_and_padding(decomposition):
    torch.manual_seed(0)
    model = TPRRNN(20, 5, decomposition, entity_size=6, role_size=3, hidden_size=5,
                   slot_size=8, mlp_hidden=8).eval()  # fmt: skip
    story = torch.randint(1, 20, (3, 4, 5))
    story[:, :, 4] = 0  # padded word position
    story[:, 3] = 0  # a fully padded sentence
    query = torch.randint(1, 20, (3, 5))
    logits = model(story, query)
    assert logits.shape == (3, 20) and torch.isfinite(logits).all()
    (e1, e2, r1, r2, r3), (qe, *qr) = model.components(story, query)
    assert e1.shape == (3, 4, 6) and r3.shape == (3, 4, 3) and qe.shape == (3, 6)
    assert all(x.shape == (3, 3) for x in qr)
    aux = model.auxiliary_loss(story, query)
    assert (float(aux) > 0) == (decomposition == "aid")


@pytest.mark.parametrize("decomposition", ["linear", "aid"])
def test_padded_words_do_not_matter(decomposition):
    torch.manual_seed(0)
    model = TPRRNN(20, 6, decomposition, entity_size=6, role_size=3, slot_size=8,
                   mlp_hidden=8).eval()  # fmt: skip
    story = torch.randint(1, 20, (2, 3, 6))
    story[..., 4:] = 0
    before = model(story, story[:, 0])
    with torch.no_grad():
        model.embedding.weight[0] += 5.0  # another PAD vector: masked out of sums and attention
    torch.testing.assert_close(model(story, story[:, 0]), before)


def test_unknown_decomposition_is_refused():
    with pytest.raises(ValueError, match="decomposition"):
        TPRRNN(10, 3, "mlp")


def toy_binding(n, rng):
    """Stories of 3 sentences '<person> went <place>' (distinct people), then 'where <person>':
    ids 1-4 people, 5-8 places, 9 'went', 10 'where'; answer the person's place."""
    people = np.argsort(rng.random((n, 4)), axis=1)[:, :3] + 1
    places = rng.integers(5, 9, (n, 3))
    story = np.stack([people, np.full((n, 3), 9), places], axis=-1)  # (n, 3, 3)
    ask = rng.integers(0, 3, n)
    query = np.stack([np.full(n, 10), people[np.arange(n), ask], np.zeros(n, int)], axis=-1)
    return (torch.from_numpy(story), torch.from_numpy(query),
            torch.from_numpy(places[np.arange(n), ask]))  # fmt: skip


@pytest.mark.parametrize("decomposition", ["linear", "aid"])
def test_overfits_a_toy_binding_task(decomposition):
    """32 fixed stories; the question alone does not give the answer (a person is in different
    places in different stories), so fitting them needs the bindings written to the TPR."""
    torch.manual_seed(0)
    story, query, answer = toy_binding(32, np.random.default_rng(0))
    by_person = {}
    for p, a in zip(query[:, 1].tolist(), answer.tolist()):
        by_person.setdefault(p, set()).add(a)
    assert max(len(v) for v in by_person.values()) >= 3  # query-only accuracy is far below 1
    model = TPRRNN(11, 3, decomposition, entity_size=12, role_size=4, hidden_size=24,
                   slot_size=16, mlp_hidden=16)  # fmt: skip
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    for _ in range(100):
        loss = torch.nn.functional.cross_entropy(model(story, query), answer)
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    with torch.no_grad():
        acc = float((model(story, query).argmax(-1) == answer).float().mean())
    assert acc >= 0.96, acc  # at most one of 32 wrong
