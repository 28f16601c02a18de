"""all-MiniLM-L6-v2 embeddings equal sentence-transformers' (fixture), and retrieval finds
labelled exemplars of the test problem's own family."""

import json
from pathlib import Path

import numpy as np
import pytest
from iclr24_analogical import MiniLMEmbedder, Retriever, make_split, retrieved_cot_prompts

FIXTURE = Path(__file__).parent / "fixtures" / "minilm_sentence_transformers.json"


@pytest.fixture(scope="module")
def embed():
    return MiniLMEmbedder()


def test_embeddings_agree_with_sentence_transformers(embed):
    ref = json.loads(FIXTURE.read_text())  # provenance inside the file
    ours = embed(ref["sentences"])
    assert ours.shape == (4, 384)
    np.testing.assert_allclose(ours, np.array(ref["embeddings"]), atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)


def test_retrieval_picks_same_family(embed):
    pool, test = make_split(6, 16, seed=1)
    top = Retriever(pool, embed).top_k([p.question for p in test], k=5)
    same = np.mean([[e.family == p.family for e in ex] for p, ex in zip(test, top)])
    assert same >= 0.8  # chance: 1/8
    prompts = retrieved_cot_prompts([test[0].question], Retriever(pool, embed), k=5)
    # the most similar exemplar sits right before the question
    assert prompts[0].count("Q: ") == 6 and prompts[0].endswith(f"Q: {test[0].question}\nA:")
    assert top[0][0].question in prompts[0].split(f"Q: {test[0].question}")[0].split("Q: ")[-1]


def test_retriever_with_given_keys_matches_fresh(embed):
    pool, test = make_split(2, 4, seed=2)
    keys = embed([p.question for p in pool])
    a = Retriever(pool, embed, keys).top_k([test[0].question], 3)
    b = Retriever(pool, embed).top_k([test[0].question], 3)
    assert a == b
