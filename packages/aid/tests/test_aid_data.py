"""The SAR generator: the official split, layouts and the paper's word list loader."""

import numpy as np
import pytest
from iclr24_aid import SAR, load_words

from iclr24_common import MissingDataError


@pytest.mark.parametrize("ratio", [0.0, 0.5, 1.0])
def test_training_never_holds_an_unseen_combination(ratio):
    task = SAR(6, ratio, seed=3)
    X2, Y2 = set(task.X2.tolist()), set(task.Y2.tolist())
    assert not {(k, v) for k, v in task.train_pairs() if k in X2 and v in Y2}
    batch = task.sample(500, 8, np.random.default_rng(0))
    keys, values = batch.keys[:, 1:9].numpy(), batch.values[:, 1:9].numpy()
    unseen = np.isin(keys, list(X2)) & np.isin(values, list(Y2))
    assert not unseen.any()
    # the ratio: int(K * p) X1 keys take Y1 values too (official split)
    x1_with_y1 = {k for k, v in task.train_pairs() if k in task.X1 and v in task.Y1}
    assert len(x1_with_y1) == int(6 * ratio)
    # every pair stored once per sequence, every query asks a stored key
    assert all(len(set(row)) == 8 for row in keys)
    queries = batch.keys[:, 10:].numpy()
    assert all(set(q) == set(k) for q, k in zip(queries, keys))


def test_test_set_covers_every_unseen_combination_once():
    task = SAR(7, 0.0, seed=1)
    t = task.test()
    assert t.keys.shape == (7, 16)
    pairs = list(zip(t.keys[:, 1:8].flatten().tolist(), t.values[:, 1:8].flatten().tolist()))
    assert len(set(pairs)) == 49 == len(pairs)
    assert set(pairs) == {(k, v) for k in task.X2.tolist() for v in task.Y2.tolist()}
    # targets are the stored values of the queried keys, in order
    assert (t.targets[:, 1:] == t.values[:, 1:8]).all() and (t.targets[:, 0] == 0).all()
    assert (t.values[:, 8:] == 0).all()  # values hidden on the query steps
    assert t.flags[:, 0, 0].all() and t.flags[:, 8, 1].all() and t.flags.sum() == 14


def test_word_list_loader(tmp_path):
    with pytest.raises(MissingDataError, match="words.txt"):
        load_words(tmp_path)
    (tmp_path / "aid").mkdir()
    (tmp_path / "aid" / "words.txt").write_text("\n".join(f"w{i}" for i in range(1000)))
    assert len(load_words(tmp_path)) == 1000
