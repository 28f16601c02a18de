"""The disentanglement measure on components with known geometry."""

import torch
from iclr24_aid import SAR, role_cosines


class Stub:
    """Returns given binding components (T, B, 3, m) in place of a trained model's."""

    def __init__(self, binding):
        self.binding = binding

    def eval(self):
        return self

    def parameters(self):  # where the batch goes (the model's device)
        return iter([self.binding])

    def components(self, keys, values, flags):
        return None, self.binding, None


def test_orthogonal_roles_score_zero_and_shared_roles_score_one():
    task = SAR(4, 0.0, 0)
    test = task.test()  # 4 sequences of 4 stored keys, 10 steps
    T, B, m = test.keys.shape[1], test.keys.shape[0], 4
    binding = torch.zeros(T, B, 3, m)
    eye = torch.eye(m)
    for i in range(4):  # key i gets role e_i x e_i in every sequence
        binding[1 + i, :, 0] = eye[i]
        binding[1 + i, :, 1] = eye[i]
    out = role_cosines(Stub(binding), test)
    assert abs(out["cross_key"]) < 1e-6 and abs(out["same_key"] - 1) < 1e-6
    binding[1:5, :, :2] = 1.0  # every key the same role
    assert abs(role_cosines(Stub(binding), test)["cross_key"] - 1) < 1e-6
