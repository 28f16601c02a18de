"""bAbI / sys-bAbI loader on tiny files the test writes, and one training epoch."""

import numpy as np
import pytest
import torch
from iclr24_aid import TPRRNN, load_babi
from iclr24_aid.tasks import BabiTrain, babi_accuracy, babi_correct, babi_items, train_babi

from iclr24_common import MissingDataError

STORY = """1 Daniel went to the kitchen.
2 John moved to the garden.
3 Where is Daniel?\tkitchen\t1
4 Sandra went to the office.
5 Where is Sandra?\toffice\t4
1 Mary went to the hallway.
2 Where is Mary?\thallway\t1
"""


def write(root, tasks=(1, 5)):
    folder = root / "aid" / "babi" / "en-valid-10k"
    folder.mkdir(parents=True, exist_ok=True)
    for t in tasks:
        for split in ("train", "valid", "test"):
            (folder / f"qa{t}_{split}.txt").write_text(STORY)
    return folder


def test_missing_babi_says_where_it_comes_from(tmp_path):
    with pytest.raises(MissingDataError, match="tasks_1-20_v1-2"):
        load_babi(tmp_path, tasks=(1,))


def test_parse_vectorise_and_sys_renaming(tmp_path):
    write(tmp_path)
    data = load_babi(tmp_path, tasks=(1, 5))
    words = {w: i for i, w in enumerate(data.vocab)}
    train = data.tasks[1]["train"]
    assert len(train) == 3 and train.story.shape == (3, 3, 6)  # 3 questions, <= 3 sentences
    assert data.vocab[0] == "<pad>"
    # the second question sees both earlier sentences and Sandra's, not the first question
    second = [[data.vocab[i] for i in s if i] for s in train.story[1].tolist()]
    assert second == [["daniel", "went", "to", "the", "kitchen", "."],
                      ["john", "moved", "to", "the", "garden", "."],
                      ["sandra", "went", "to", "the", "office", "."]]  # fmt: skip
    assert [data.vocab[i] for i in train.query[1].tolist() if i] == ["where", "is", "sandra", "?"]
    assert data.vocab[int(train.answer[1])] == "office"
    # sys-bAbI: task 1's test renames daniel -> bill, task 5's renames bill -> daniel
    test1 = data.tasks[1]["test"]
    assert words["bill"] in test1.story[0].flatten().tolist()
    assert words["daniel"] not in test1.story.flatten().tolist()
    assert words["fred"] in test1.story.flatten().tolist()
    assert torch.equal(data.tasks[5]["test"].story, data.tasks[5]["train"].story)  # no bill
    plain = load_babi(tmp_path, tasks=(1,), systematic=False)
    assert torch.equal(plain.tasks[1]["test"].story, plain.tasks[1]["train"].story)


def test_one_epoch_of_training_runs(tmp_path):
    write(tmp_path)
    data = load_babi(tmp_path, tasks=(1, 5))
    torch.manual_seed(0)
    model = TPRRNN(len(data.vocab), data.max_words, "aid", entity_size=6, role_size=3,
                   slot_size=8, mlp_hidden=8)  # fmt: skip
    model, history = train_babi(model, data, BabiTrain(epochs=2, batch_size=2), seed=0)
    accs, loss = babi_accuracy(model, data, "test")
    assert len(history) == 2 and set(accs) == {1, 5} and loss > 0
    right, same_loss = babi_correct(model, data, "test")
    assert same_loss == loss and {t: r.mean() for t, r in right.items()} == pytest.approx(accs)
    assert babi_items(right).mean() == pytest.approx(np.mean(list(accs.values())))


def test_item_scores_average_to_the_mean_over_tasks():
    # 4 questions in task 1 (3 right), 2 in task 2 (0 right): mean over tasks 0.375, not the
    # 3 / 6 of all questions pooled
    right = {1: np.array([1, 1, 1, 0], np.uint8), 2: np.array([0, 0], np.uint8)}
    items = babi_items(right)
    assert items.shape == (6,) and items.mean() == pytest.approx(0.375)
    assert items.tolist() == pytest.approx([0.75, 0.75, 0.75, 0, 0, 0])  # 6 / (2 x 4) each
