"""The ``paper`` preset end to end on a miniature corpus (issue 41): ``<data-dir>/aug-rkhs/
corpus.txt`` is plain UTF-8 text, as a Simple English Wikipedia dump exported to text (one
article after another: a title line, then paragraphs). ``--set`` caps only sizes: one seed,
windows and Monte-Carlo masks, the finite space's input length (3^5 instead of 3^7 inputs,
named below), three of the eleven masked-LM rates, masked-LM steps and probe windows. The
masked LM is built at the paper preset's width (hidden 256, 4 layers, 4 heads, 128 tokens)."""

import numpy as np
from iclr24_aug_rkhs.experiment import PRESETS, app

from iclr24_common.testing import run_paper_preset

TOPICS = {
    "River": "water flows from the mountains to the sea and fish swim in it near the town",
    "Volcano": "hot rock comes up from under the ground and the ash falls on the fields",
    "Piano": "a musical instrument with keys that people play with their fingers in a hall",
    "Football": "two teams kick a ball on a field and the players try to score a goal",
    "Moon": "the moon goes around the earth once a month and reflects the light of the sun",
    "Bread": "people bake bread from flour water and yeast in an oven every morning",
    "Train": "a long vehicle that runs on rails and carries people between the cities",
    "Forest": "many trees grow close together and birds and deer live under them",
}


def write_corpus(root):
    """Eight articles, ~26 k characters: a title, then sentences drawn from its topic's
    words and common words (every character frequent enough to get its own token)."""
    rng = np.random.default_rng(0)
    common = "the of and a to in is it that was for on are with as by he she they".split()
    articles = []
    for title, words in TOPICS.items():
        vocab, paras = words.split() + common, []
        for _ in range(6):
            sentences = [" ".join(rng.choice(vocab, size=int(rng.integers(6, 14)))).capitalize()
                         + "." for _ in range(6)]  # fmt: skip
            paras.append(" ".join(sentences))
        articles.append(f"{title}\n\n" + "\n\n".join(paras))
    path = root / "aug-rkhs" / "corpus.txt"
    path.parent.mkdir(parents=True)
    path.write_text("\n\n\n".join(articles) + "\n", encoding="utf-8")
    return path


SIZE_CAPS = {
    "seeds": "0",  # one seed (paper preset: 5)
    "length": 5,  # reduced: 3^5 = 243 inputs of the finite space (paper preset: 3^7 = 2187)
    "n_pretrain": 100,  # (preset: 200)
    "n_windows": 200,  # text windows per length (paper preset: 20,000)
    "mc_windows": 10,  # (preset: 100)
    "mc_masks": 50,  # (preset: 400)
    "mlm_rates": "0.05,0.3,0.8",  # three of the paper preset's eleven rates
    "mlm_steps": 2,  # (paper preset: 20,000)
    "mlm_batch": 4,  # (paper preset: 128)
    "mlm_probe_train": 24,  # (paper preset: 20,000)
    "mlm_probe_val": 8,  # (paper preset: 5,000)
    "mlm_probe_test": 24,  # (paper preset: 20,000)
}


def test_aug_rkhs_paper_path_reads_a_text_corpus(tmp_path):
    paper = PRESETS["paper"]
    assert (paper.corpus, paper.mlm_hidden, paper.mlm_layers, paper.mlm_length) == (
        "file", 256, 4, 128)  # fmt: skip
    corpus = write_corpus(tmp_path / "data")
    res = run_paper_preset(app, tmp_path / "data", tmp_path / "run", sets=SIZE_CAPS)
    ids = {c["id"] for c in res["claims"]}
    assert any("mlm" in i for i in ids), ids  # the masked-LM claim is computed
    log = (tmp_path / "run" / "log.txt").read_text()
    assert str(corpus) in log  # the text part read the file, not the bundled pydoc text
