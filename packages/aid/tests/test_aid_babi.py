"""bAbI / sys-bAbI loader on tiny files the test writes, and one training epoch."""

import pytest
import torch
from iclr24_aid import TPRRNN, load_babi
from iclr24_aid.tasks import BabiTrain, babi_accuracy, train_babi

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
