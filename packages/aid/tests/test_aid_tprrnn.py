"""The TPR-RNN backbone: its update rule, shapes, the decomposition switch, and learning a toy
binding task (who is where) in a few steps."""

from pathlib import Path

import numpy as np
import pytest
import torch
from iclr24_aid import TPRRNN, tpr_update

# Fixture (provenance: tests/fixtures/make_official_tprrnn.py, which wrote it): the logits of the
# official TPR-RNN + AID (taewonpark/AID @ 1ca659e, bAbItask/AID_with_TPRRNN/models/AID.py,
# TprRnn) and of the TPR-RNN port it builds on (APodolskiy/TPR-RNN-Torch @ 81cfdca,
# tpr_rnn/model/tpr_rnn.py, TprRnn), each at its own initialisation (seed 0), eval mode, the
# official train.py config (entity 90, role 20, hidden 40, LN), vocabulary 16, 6 words a
# sentence, stories (3, 4, 6) without PAD; with every parameter.
FIXTURE = Path(__file__).parent / "fixtures" / "official_tprrnn.npz"


def official_state(f, variant: str) -> dict:
    """The official parameters of ``variant`` under our names (transposed where the official
    code multiplies x @ W)."""
    head = f"{variant}/w:"
    w = {k.removeprefix(head): torch.from_numpy(f[k]) for k in f.files if k.startswith(head)}
    state = {"embedding.weight": w["input_module.word_embed.weight"],
             "position": w["input_module.pos_embed"]}  # fmt: skip
    for i in range(3):
        state[f"norms.{i}.weight"] = w[f"inference_module.l{i + 1}.layer.gain"]
        state[f"norms.{i}.bias"] = w[f"inference_module.l{i + 1}.layer.bias"]
    if variant == "linear":  # MLPs x @ W1, W2; Z frozen and without bias
        story = ["e.0", "e.1", "r.0", "r.1", "r.2"]
        query = ["e.0", "r.0", "r.1", "r.2"]  # the query's second entity net is unused
        for nets, names, module in (("story_nets", story, "update_module"),
                                    ("query_nets", query, "inference_module")):  # fmt: skip
            for i, name in enumerate(names):
                for j, layer in ((1, 0), (2, 2)):
                    state[f"{nets}.{i}.{layer}.weight"] = w[f"{module}.{name}.W{j}"].T
                    state[f"{nets}.{i}.{layer}.bias"] = w[f"{module}.{name}.b{j}"]
        state["output.weight"] = w["inference_module.Z"].T
        state["output.bias"] = torch.zeros(w["inference_module.Z"].shape[1])
        return state
    for i, name in enumerate(["e1", "e2", "r1", "r2", "r3"]):
        for p in ("weight", "bias"):
            state[f"story_nets.{i}.{p}"] = w[f"update_module.{name}_linear.{p}"]
    for i, name in enumerate(["e1", "r1", "r2", "r3"]):
        for p in ("weight", "bias"):
            state[f"query_nets.{i}.{p}"] = w[f"inference_module.{name}_linear.{p}"]
    names = {"output": "inference_module.Z", "reconstruction": "reconstruction_linear",
             "aid.initial.init.0": "decomposition_module.binding_linear",
             "aid.initial.init.1": "decomposition_module.reasoning_linear",
             "aid.norm": "decomposition_module.norm_pre_ff",
             "aid.mlp.0": "decomposition_module.to_linear.0",
             "aid.mlp.2": "decomposition_module.to_linear.2",
             "aid.out": "decomposition_module.slot_proj_linear"}  # fmt: skip
    names.update({f"aid.{n}": f"decomposition_module.{n}" for n in ("to_q", "to_k", "to_v")})
    for ours, theirs in names.items():
        for p in ("weight", "bias"):
            state[f"{ours}.{p}"] = w[f"{theirs}.{p}"]
    return state


@pytest.mark.parametrize("variant", ["aid", "linear"])
def test_matches_the_official_tprrnn_on_the_same_weights(variant):
    """Our TPR-RNN (+ AID), loaded with the official module's weights, gives its logits. The
    remaining difference is the official 1e-6 mixing of each component's slot with the others
    (AID). With torch's LayerNorm eps (1e-5) instead of the official 1e-12 the logits move by
    ~0.9: the fixture is sensitive to it."""
    f = np.load(FIXTURE)
    story, query = (torch.from_numpy(f[f"{variant}/{k}"]) for k in ("story", "query"))
    model = TPRRNN(16, 6, variant).eval()  # the official train.py sizes
    model.load_state_dict(official_state(f, variant))  # strict: every parameter is official
    with torch.no_grad():
        logits = model(story, query).numpy()
        for norm in model.norms:
            norm.eps = 1e-5
        wrong_eps = model(story, query).numpy()
    np.testing.assert_allclose(logits, f[f"{variant}/logits"], rtol=0, atol=5e-5)
    assert np.abs(wrong_eps - f[f"{variant}/logits"]).max() > 0.1


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
