"""Batch-binding: the sampler, ``bind``, and the batch-graph checker on hand-made batches."""

import numpy as np
import pytest
from iclr24_scl_relu import (
    BatchBindingSampler,
    batch_graph_condition,
    bind,
    binding_examples,
    random_batches,
)

LABELS = np.array([0, 0, 0, 1, 1, 1, 2, 2])


def test_connected_batches_meet_the_condition():
    batches = [[0, 1, 3, 4, 6, 7], [1, 2, 4, 5, 6]]
    graph = batch_graph_condition(batches, LABELS)
    assert graph.components == {0: 1, 1: 1, 2: 1}
    assert graph.pairs_missing == 0 and graph.unbatched == 0 and graph.holds


def test_a_split_class_breaks_the_condition():
    batches = [[0, 1, 3, 4, 6, 7], [2, 5, 6]]  # 2 and 5 never meet another of their class
    graph = batch_graph_condition(batches, LABELS)
    assert graph.components == {0: 2, 1: 2, 2: 1} and not graph.connected and not graph.holds


def test_classes_that_never_contrast_break_the_condition():
    batches = [[0, 1, 2, 3, 4, 5], [6, 7]]  # class 2 never meets 0 or 1
    graph = batch_graph_condition(batches, LABELS)
    assert graph.connected and graph.pairs_missing == 2 and not graph.holds


def test_unbatched_examples_are_isolated_vertices():
    graph = batch_graph_condition([[0, 1, 3, 4, 6, 7]], LABELS)
    assert graph.unbatched == 2 and graph.components[0] == 2 and graph.components[1] == 2


def test_binding_repairs_random_small_batches():
    labels = np.repeat(np.arange(5), [40, 40, 4, 4, 4])
    batches = random_batches(len(labels), 4, seed=0)
    assert not batch_graph_condition(batches, labels).holds
    binding = binding_examples(labels, seed=0)
    bound = bind(batches, binding)
    assert batch_graph_condition(bound, labels).holds
    for plain, b in zip(batches, bound):
        assert b[: len(plain)] == plain and set(binding) <= set(b) and len(set(b)) == len(b)


def test_sampler_appends_exactly_the_binding_examples():
    labels = np.repeat(np.arange(4), [30, 20, 5, 3])
    sampler = BatchBindingSampler(labels, 8, seed=3)
    k = 4
    assert sorted(labels[sampler.binding]) == [0, 1, 2, 3]
    for _ in range(2):
        batches = list(sampler)
        assert len(batches) == len(sampler) == int(np.ceil((len(labels) - k) / 8))
        drawn = [i for b in batches for i in b[:-k]]
        assert all(b[-k:] == sampler.binding for b in batches)
        assert sorted(drawn) == sorted(set(range(len(labels))) - set(sampler.binding))
    first, second = list(sampler), list(sampler)
    assert first != second  # reshuffled every epoch
    fixed = BatchBindingSampler(labels, 8, seed=3, shuffle=False, drop_last=True)
    assert list(fixed) == list(fixed) and all(len(b) == 8 + k for b in fixed)


def test_sampler_rejects_a_bad_binding_set():
    with pytest.raises(ValueError, match="one example of every class"):
        BatchBindingSampler(LABELS, 4, binding=[0, 1, 3])
    with pytest.raises(ValueError, match="batch_size"):
        BatchBindingSampler(LABELS, 0)
