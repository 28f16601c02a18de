"""Sort-of-CLEVR: the generator and the relational layers against the official code."""

from pathlib import Path

import numpy as np
import pytest
import torch
from iclr24_aid.clevr import (
    ANSWERS,
    KINDS,
    ClevrTrain,
    RelationalLayer,
    SortOfClevrModel,
    best_on_validation,
    clevr_accuracy,
    generate,
    train_clevr,
)

# Fixture (provenance): taewonpark/AID at commit 1ca659e, Sort-of-CLEVR/.
# generator/*: the official sort_of_clevr_generator.py (its build_dataset, cv2 4.x for the
#   drawing, seed 1, test / val / train sizes shrunk to 12 / 4 / 8, generated in its order);
#   images as the official main.py feeds them (np.swapaxes(img, 0, 2)) x 255, uint8.
# layer/*: the official model.py's AID and Linear_Attention (dim 32, 4 heads, eval mode,
#   torch.manual_seed(1234), default init plus 0.1 N(0, 1) on every parameter): their weights,
#   an input x (3, 26, 32), the output y of one application and y4 of four (the model applies
#   its one layer `iterations` = 4 times).
FIXTURE = Path(__file__).parent / "fixtures" / "official_sort_of_clevr.npz"
# official parameter name -> ours
NAMES = {
    "query_net": "q", "key_net": "k", "value_net": "v", "final": "o", "res.0": "ff.0",
    "res.3": "ff.3", "norm1": "norm1", "norm2": "norm2", "input_proj_linear": "inputs",
    "to_q": "aid.to_q", "to_k": "aid.to_k", "to_v": "aid.to_v", "norm_pre_ff": "aid.norm",
    "to_linear.0": "aid.mlp.0", "to_linear.2": "aid.mlp.2", "slot_proj_linear": "aid.out",
}  # fmt: skip


def test_generator_reproduces_the_official_dataset_exactly():
    """Same seed -> the official questions, answers and pixels (cv2's radius-5 disc is the
    set dx^2 + dy^2 <= 25, which ours draws)."""
    f = np.load(FIXTURE)
    ours = generate(n_train=8, n_val=4, n_test=12, seed=1)
    for split in ("test", "val", "train"):
        np.testing.assert_array_equal(ours[split].images, f[f"generator/{split}/images"])
        for kind in KINDS:
            np.testing.assert_array_equal(
                ours[split].questions[kind], f[f"generator/{split}/{kind}/questions"]
            )
            np.testing.assert_array_equal(
                ours[split].answers[kind], f[f"generator/{split}/{kind}/answers"]
            )


@pytest.mark.parametrize("kind", ["aid", "linear"])
def test_layer_matches_the_official_layer_on_the_same_weights(kind):
    f = np.load(FIXTURE)
    layer = RelationalLayer(32, 4, aid=kind == "aid").eval()
    state = {}
    for key in f.files:
        prefix = f"layer/{kind}/"
        if key.startswith(prefix) and key[len(prefix) :] not in ("y", "y4"):
            name, _, param = key[len(prefix) :].rpartition(".")
            state[f"{NAMES[name]}.{param}"] = torch.from_numpy(f[key])
    layer.load_state_dict(state)  # strict: one to one
    x = torch.from_numpy(f["layer/x"])
    with torch.no_grad():
        y = layer(x)
        y4 = x
        for _ in range(4):
            y4 = layer(y4)
    np.testing.assert_allclose(y.numpy(), f[f"layer/{kind}/y"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(y4.numpy(), f[f"layer/{kind}/y4"], rtol=1e-5, atol=1e-5)


def test_questions_and_answers_are_well_formed():
    d = generate(n_train=30, n_val=0, n_test=0, seed=3)["train"]
    assert d.images.shape == (30, 3, 75, 75) and d.images.dtype == np.uint8
    for t, kind in enumerate(KINDS):
        q, a = d.questions[kind], d.answers[kind]
        assert q.shape == (30, 10, 18) and a.shape == (30, 10)
        assert (q[..., 12 + t] == 1).all() and (q[..., 12:15].sum(-1) == 1).all()
        assert (q[..., 15:18].sum(-1) == 1).all()
        assert (q[..., :6].sum(-1) == 1).all()  # one colour, two for ternary questions
        assert (q[..., 6:12].sum(-1) == (1 if kind == "ternary" else 0)).all()
        assert a.min() >= 0 and a.max() < len(ANSWERS)
    # every image holds the 6 colours (white background elsewhere)
    colours = {tuple(c) for c in d.images[0].reshape(3, -1).T.tolist()}
    assert len(colours) == 7


def test_model_shapes_attention_maps_and_training_loop():
    torch.manual_seed(0)
    data = generate(n_train=8, n_val=3, n_test=3, seed=0)
    for dec in ("linear", "aid"):
        model = SortOfClevrModel(dec, dim=16, n_head=2, iterations=2)
        images = torch.from_numpy(data["val"].images[:2]).float() / 255
        questions = torch.from_numpy(data["val"].questions["binary"][:2, 0])
        assert model(images, questions).shape == (2, 10)
        maps = model.attention_maps(images, questions)
        if dec == "aid":  # per iteration: 26 positions, 2H inputs x 2H slots, over inputs sum 1
            assert len(maps) == 2 and maps[0].shape == (2, 26, 4, 4)
            torch.testing.assert_close(maps[0].sum(-2), torch.ones(2, 26, 4))
        else:
            assert maps == []
        model, hist = train_clevr(model, data, ClevrTrain(epochs=2, batch_size=8, lr=1e-3), 0)
        assert hist["epoch"] == [1, 2] and set(clevr_accuracy(model, data["val"])) == set(KINDS)
        best, right = best_on_validation(hist), best_on_validation(hist, "test_correct")
        assert set(best) == set(KINDS)  # the test questions' scores at the same epochs:
        assert {k: float(r.mean()) for k, r in right.items()} == pytest.approx(best)
        assert all(len(r) == 10 * len(data["test"]) for r in right.values())


def test_best_on_validation_uses_validation_not_test():
    hist = {"val/unary": [0.1, 0.9, 0.5], "test/unary": [0.8, 0.2, 1.0],
            "val/binary": [0.3, 0.3, 0.1], "test/binary": [0.4, 0.9, 0.9],
            "val/ternary": [0.0, 0.0, 0.7], "test/ternary": [1.0, 1.0, 0.3]}  # fmt: skip
    assert best_on_validation(hist) == {"unary": 0.2, "binary": 0.4, "ternary": 0.3}


def test_bad_configuration_is_refused():
    with pytest.raises(ValueError, match="decomposition"):
        SortOfClevrModel("mlp")
    with pytest.raises(ValueError, match="multiple"):
        RelationalLayer(30, 4)
