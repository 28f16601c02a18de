"""Invariants of the DEER method: scan, Newton, equivalence with torch RNNs, gradients."""

import pytest
import torch
from iclr24_deer import (
    DEERGRU,
    DEERLSTM,
    ElmanCellFn,
    GRUCellFn,
    LSTMCellFn,
    cell_value_and_jacobian,
    deer_rnn,
    linear_recurrence,
    linear_recurrence_sequential,
    reverse_linear_recurrence,
    sequential_rnn,
)

torch.set_num_threads(1)
D64 = torch.float64


@pytest.mark.parametrize("n", [4, 6])  # 6: the batched-matmul products (n > 4)
@pytest.mark.parametrize("diag", [False, True])
@pytest.mark.parametrize("T", [1, 2, 3, 7, 16, 33, 257])
def test_scan_equals_loop(diag, T, n):
    g = torch.Generator().manual_seed(T)
    B = 3
    shape = (B, T, n) if diag else (B, T, n, n)
    A = torch.randn(*shape, generator=g, dtype=D64) * (1.0 if diag else 0.5)
    b, h0 = torch.randn(B, T, n, generator=g, dtype=D64), torch.randn(B, n, generator=g, dtype=D64)
    fast, slow = linear_recurrence(A, b, h0), linear_recurrence_sequential(A, b, h0)
    torch.testing.assert_close(fast, slow, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("diag", [False, True])
def test_reverse_scan_is_the_adjoint_recursion(diag):
    g = torch.Generator().manual_seed(1)
    B, T, n = 2, 29, 3
    J = (
        torch.randn(B, T, n, generator=g, dtype=D64)
        if diag
        else 0.5 * torch.randn(B, T, n, n, generator=g, dtype=D64)
    )
    gr = torch.randn(B, T, n, generator=g, dtype=D64)
    lam = reverse_linear_recurrence(J, gr)
    ref, nxt = torch.empty_like(gr), torch.zeros(B, n, dtype=D64)
    for t in reversed(range(T)):  # lambda_t = g_t + J_{t+1}^T lambda_{t+1}
        if t < T - 1:
            Jn = J[:, t + 1]
            nxt = Jn * nxt if diag else (Jn.transpose(-1, -2) @ nxt.unsqueeze(-1)).squeeze(-1)
        ref[:, t] = gr[:, t] + (nxt if t < T - 1 else 0)
        nxt = ref[:, t]
    torch.testing.assert_close(lam, ref, rtol=1e-10, atol=1e-10)


def test_newton_is_exact_in_one_step_for_a_linear_cell():
    g = torch.Generator().manual_seed(0)
    A = 0.9 * torch.linalg.qr(torch.randn(5, 5, generator=g, dtype=D64))[0]
    cell = lambda h, x: h @ A.T + x  # noqa: E731
    h0, xs = torch.randn(2, 5, dtype=D64), torch.randn(2, 300, 5, dtype=D64)
    one = deer_rnn(cell, h0, xs, max_iter=1)
    torch.testing.assert_close(one.y, sequential_rnn(cell, h0, xs), rtol=1e-11, atol=1e-11)
    full = deer_rnn(cell, h0, xs)
    assert full.converged and full.iterations == 2  # the 2nd iteration only confirms


@pytest.mark.parametrize("cls", [GRUCellFn, LSTMCellFn, ElmanCellFn])
@pytest.mark.parametrize("diag", [False, True])
def test_analytic_jacobians_equal_torch_func(cls, diag):
    torch.manual_seed(0)
    m = {GRUCellFn: torch.nn.GRU, LSTMCellFn: torch.nn.LSTM, ElmanCellFn: torch.nn.RNN}[cls](3, 5)
    cell = cls.from_module(m.double())
    n = 10 if cls is LSTMCellFn else 5
    h, x = torch.randn(4, 6, n, dtype=D64), torch.randn(4, 6, 3, dtype=D64)
    gi = cell.prepare(x)
    f1, J1 = cell.value_and_jacobian(h, gi, diag=diag)
    f2, J2 = cell_value_and_jacobian(lambda hh, xx: cell(hh, xx), h, gi, diag)  # generic path
    torch.testing.assert_close(f1, f2)
    torch.testing.assert_close(J1, J2)


@pytest.mark.parametrize("jacobian", ["full", "diag"])
@pytest.mark.parametrize("batch_first", [True, False])
def test_deergru_equals_nn_gru(jacobian, batch_first):
    torch.manual_seed(0)
    ref = torch.nn.GRU(3, 8, num_layers=2, batch_first=batch_first).double()
    deer = DEERGRU(3, 8, num_layers=2, batch_first=batch_first, jacobian=jacobian).double()
    deer.load_state_dict(ref.state_dict())
    x = torch.randn(4, 500, 3, dtype=D64) if batch_first else torch.randn(500, 4, 3, dtype=D64)
    h0 = 0.3 * torch.randn(2, 4, 8, dtype=D64)
    (o1, h1), (o2, h2) = ref(x, h0), deer(x, h0)
    tol = 1e-10 if jacobian == "full" else 1e-5  # quasi-DEER stops at the fp64 atol 1e-6
    torch.testing.assert_close(o2, o1, rtol=0, atol=tol)
    torch.testing.assert_close(h2, h1, rtol=0, atol=tol)
    assert all(deer.last_converged) and max(deer.last_iterations) <= 20 + 40 * (jacobian == "diag")


def test_deerlstm_equals_nn_lstm_and_unbatched():
    torch.manual_seed(0)
    ref = torch.nn.LSTM(3, 6, num_layers=2).double()
    deer = DEERLSTM(3, 6, num_layers=2).double()
    deer.load_state_dict(ref.state_dict())
    x = torch.randn(400, 2, 3, dtype=D64)
    hc = (0.2 * torch.randn(2, 2, 6, dtype=D64), 0.2 * torch.randn(2, 2, 6, dtype=D64))
    (o1, (h1, c1)), (o2, (h2, c2)) = ref(x, hc), deer(x, hc)
    for a, b in ((o1, o2), (h1, h2), (c1, c2)):
        torch.testing.assert_close(b, a, rtol=0, atol=1e-10)
    o1u, _ = ref(x[:, 0])
    o2u, _ = deer(x[:, 0])
    torch.testing.assert_close(o2u, o1u, rtol=0, atol=1e-10)


def test_fp32_matches_nn_gru_to_1e5():
    torch.manual_seed(3)
    ref = torch.nn.GRU(16, 16, batch_first=True)
    x = torch.randn(2, 3000, 16)
    res = deer_rnn(GRUCellFn.from_module(ref), torch.zeros(2, 16), x)
    with torch.no_grad():
        assert float((res.y - ref(x)[0]).abs().max()) <= 1e-5
    assert res.converged and res.iterations <= 20


def test_gradcheck_fp64():
    torch.manual_seed(0)
    gru = torch.nn.GRU(2, 3, batch_first=True).double()
    xs = torch.randn(2, 12, 2, dtype=D64, requires_grad=True)
    h0 = torch.randn(2, 3, dtype=D64, requires_grad=True)
    w_hh = gru.weight_hh_l0.detach().clone().requires_grad_()
    w_ih = gru.weight_ih_l0.detach().clone().requires_grad_()

    def f(xs, h0, w_ih, w_hh):
        cell = GRUCellFn(w_ih, w_hh, gru.bias_ih_l0.detach(), gru.bias_hh_l0.detach())
        return deer_rnn(cell, h0, xs).y

    assert torch.autograd.gradcheck(f, (xs, h0, w_ih, w_hh), eps=1e-6, atol=1e-7)


@pytest.mark.parametrize("jacobian", ["full", "diag"])
def test_gradients_match_backprop_through_loop(jacobian):
    torch.manual_seed(1)
    gru = torch.nn.GRU(4, 6, batch_first=True).double()
    xs = torch.randn(3, 400, 4, dtype=D64, requires_grad=True)
    h0 = torch.randn(3, 6, dtype=D64, requires_grad=True)
    w = torch.randn(3, 400, 6, dtype=D64)
    leaves = [xs, h0, *gru.parameters()]
    cell = GRUCellFn.from_module(gru)
    kw = {"atol": 1e-12, "rtol": 0.0} if jacobian == "diag" else {}
    g1 = torch.autograd.grad((deer_rnn(cell, h0, xs, jacobian=jacobian, **kw).y * w).sum(), leaves)
    g2 = torch.autograd.grad((gru(xs, h0[None])[0] * w).sum(), leaves)
    for a, b in zip(g1, g2):
        torch.testing.assert_close(a, b, rtol=1e-8, atol=1e-9)


def test_generic_cell_gradients():
    torch.manual_seed(2)
    gc = torch.nn.GRUCell(3, 5).double()
    cell = lambda h, x: gc(x, h)  # noqa: E731  (nn.GRUCell takes (input, hidden))
    xs = torch.randn(2, 100, 3, dtype=D64, requires_grad=True)
    h0 = torch.zeros(2, 5, dtype=D64)
    leaves = [xs, *gc.parameters()]
    g1 = torch.autograd.grad(deer_rnn(cell, h0, xs).y.square().sum(), leaves)
    g2 = torch.autograd.grad(sequential_rnn(cell, h0, xs).square().sum(), leaves)
    for a, b in zip(g1, g2):
        torch.testing.assert_close(a, b, rtol=1e-8, atol=1e-9)


def test_nan_clipping_on_difficult_case():
    """Official "difficult" case: weights x 100 make Newton overshoot; clipping keeps the
    iterates finite and DEER still reaches the sequential solution (at most T iterations)."""
    torch.manual_seed(0)
    gru = torch.nn.GRU(2, 4, batch_first=True).double()
    with torch.no_grad():
        for p in gru.parameters():
            p.mul_(100)
    x, h0 = torch.randn(2, 300, 2, dtype=D64), torch.zeros(2, 4, dtype=D64)
    cell = GRUCellFn.from_module(gru)
    with torch.no_grad():
        few = deer_rnn(cell, h0, x, max_iter=5)
        assert torch.isfinite(few.y).all() and not few.converged
        res = deer_rnn(cell, h0, x, max_iter=300)
        ref = sequential_rnn(cell, h0, x)
    assert res.converged
    torch.testing.assert_close(res.y, ref, rtol=0, atol=1e-10)


def test_warm_start_reduces_iterations():
    torch.manual_seed(0)
    gru = torch.nn.GRU(4, 8, batch_first=True).double()
    x, h0 = torch.randn(2, 2000, 4, dtype=D64), torch.zeros(2, 8, dtype=D64)
    with torch.no_grad():
        first = deer_rnn(GRUCellFn.from_module(gru), h0, x)
        for p in gru.parameters():  # one small "training step"
            p.add_(1e-3 * torch.randn_like(p))
        cell = GRUCellFn.from_module(gru)
        cold = deer_rnn(cell, h0, x)
        warm = deer_rnn(cell, h0, x, init=first.y)
    assert warm.converged and warm.iterations < cold.iterations
    torch.testing.assert_close(warm.y, cold.y, rtol=0, atol=1e-9)


def test_unbatched_and_bad_input():
    gru = torch.nn.GRU(2, 3, batch_first=True)
    cell = GRUCellFn.from_module(gru)
    y = deer_rnn(cell, torch.zeros(3), torch.randn(50, 2)).y
    assert y.shape == (50, 3)
    with pytest.raises(ValueError):
        deer_rnn(cell, torch.zeros(3), torch.randn(50, 2), jacobian="lowrank")
    with pytest.raises(ValueError):
        deer_rnn(cell, torch.zeros(2, 3), torch.randn(4, 50, 2))
    with pytest.raises(NotImplementedError):
        DEERGRU(2, 3, bidirectional=True)


def test_quasi_deer_backward_memory_is_linear_in_the_state_size():
    """Quasi-DEER keeps O(B T n) for backward, DEER the (B, T, n, n) Jacobians (issue: the
    quasi mode used to store the full Jacobian too). Measured on the tensors autograd saves."""
    from iclr24_deer.bench import saved_tensor_bytes

    B, T, n = 2, 256, 32
    torch.manual_seed(0)
    gru = torch.nn.GRU(n, n, batch_first=True)
    cell = GRUCellFn.from_module(gru)
    xs = torch.randn(B, T, n, requires_grad=True)
    h0 = torch.zeros(B, n)
    unit = B * T * n * 4  # one float32 (B, T, n) tensor
    full, _ = saved_tensor_bytes(lambda: deer_rnn(cell, h0, xs, jacobian="full").y)
    quasi, y = saved_tensor_bytes(lambda: deer_rnn(cell, h0, xs, jacobian="diag").y)
    assert full >= B * T * n * n * 4  # the full adjoint needs every Jacobian
    assert quasi <= 16 * unit, f"quasi-DEER saves {quasi / unit:.1f} x B*T*n values"
    # and its gradients are still those of back-propagation through nn.GRU
    w = torch.randn(B, T, n)
    g1 = torch.autograd.grad((y * w).sum(), [xs, *gru.parameters()])
    g2 = torch.autograd.grad((gru(xs, h0[None])[0] * w).sum(), [xs, *gru.parameters()])
    for a, b in zip(g1, g2):  # to the fp32 solver tolerance, relative to each gradient's scale
        assert float((a - b).abs().max()) <= 1e-3 * float(b.abs().max())


def test_single_pass_diagonal_adjoint_is_the_quasi_deer_paper_approximation():
    """grad_max_iter=1 is one reverse scan with the diagonal Jacobians (approximate); the
    default refines it with VJPs to the exact adjoint."""
    torch.manual_seed(1)
    gru = torch.nn.GRU(3, 6, batch_first=True).double()
    cell = GRUCellFn.from_module(gru)
    xs = torch.randn(2, 200, 3, dtype=D64, requires_grad=True)
    h0 = torch.zeros(2, 6, dtype=D64)
    w = torch.randn(2, 200, 6, dtype=D64)
    exact = torch.autograd.grad((gru(xs, h0[None])[0] * w).sum(), xs)[0]
    kw = {"jacobian": "diag", "atol": 1e-12, "rtol": 0.0}
    refined = torch.autograd.grad((deer_rnn(cell, h0, xs, **kw).y * w).sum(), xs)[0]
    one = torch.autograd.grad((deer_rnn(cell, h0, xs, grad_max_iter=1, **kw).y * w).sum(), xs)[0]
    torch.testing.assert_close(refined, exact, rtol=1e-8, atol=1e-10)
    # one pass: lambda = reverse_scan(D, w), then the VJP of f with it
    with torch.no_grad():
        y = sequential_rnn(cell, h0, xs)
    y_prev = torch.cat([h0[:, None], y[:, :-1]], 1)
    gi = cell.prepare(xs.detach())
    _, D = cell.value_and_jacobian(y_prev, gi, diag=True)
    lam = reverse_linear_recurrence(D, w)
    xs2 = xs.detach().requires_grad_()
    manual = torch.autograd.grad((cell(y_prev, cell.prepare(xs2)) * lam).sum(), xs2)[0]
    torch.testing.assert_close(one, manual, rtol=1e-8, atol=1e-10)
    assert (one - exact).abs().max() > 1e3 * (refined - exact).abs().max()


def test_quasi_deer_lstm_gradients_are_exact():
    torch.manual_seed(2)
    ref = torch.nn.LSTM(3, 5, batch_first=True).double()
    deer = DEERLSTM(3, 5, batch_first=True, jacobian="diag", atol=1e-12, rtol=0.0).double()
    deer.load_state_dict(ref.state_dict())
    x = torch.randn(2, 150, 3, dtype=D64, requires_grad=True)
    w = torch.randn(2, 150, 5, dtype=D64)
    g1 = torch.autograd.grad((deer(x)[0] * w).sum(), [x, *deer.parameters()])
    g2 = torch.autograd.grad((ref(x)[0] * w).sum(), [x, *ref.parameters()])
    for a, b in zip(g1, g2):
        torch.testing.assert_close(a, b, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("jacobian", ["full", "diag"])
def test_hidden_size_one_takes_the_exact_elementwise_path(jacobian):
    """n = 1: the Jacobian is its diagonal, so both modes are exact DEER (quadratic
    convergence, same iterations) through the element-wise scan."""
    torch.manual_seed(0)
    gru = torch.nn.GRU(1, 1, batch_first=True).double()
    xs, h0 = torch.randn(3, 2000, 1, dtype=D64), torch.zeros(3, 1, dtype=D64)
    res = deer_rnn(GRUCellFn.from_module(gru), h0, xs, jacobian=jacobian)
    with torch.no_grad():
        torch.testing.assert_close(res.y, gru(xs, h0[None])[0], rtol=0, atol=1e-12)
    full = deer_rnn(GRUCellFn.from_module(gru), h0, xs, jacobian="full")
    assert res.iterations == full.iterations <= 6


@pytest.mark.parametrize("diag", [False, True])
def test_scan_is_differentiable(diag):
    """The public scans record autograd (the in-place fast path is for no-grad use only)."""
    g = torch.Generator().manual_seed(0)
    shape = (2, 9, 3) if diag else (2, 9, 3, 3)
    A = (0.5 * torch.randn(*shape, generator=g, dtype=D64)).requires_grad_()
    b = torch.randn(2, 9, 3, generator=g, dtype=D64, requires_grad=True)
    h0 = torch.randn(2, 3, generator=g, dtype=D64, requires_grad=True)
    assert torch.autograd.gradcheck(linear_recurrence, (A, b, h0))
    assert torch.autograd.gradcheck(lambda A, b: reverse_linear_recurrence(A, b), (A, b))


@pytest.mark.parametrize("diag", [False, True])
@pytest.mark.parametrize("kind", ["gru", "elman"])
def test_state_major_jacobian_equals_the_feature_last_one(kind, diag):
    from iclr24_deer.deer import _cell_input, _from_sm, _to_sm, _value_and_jacobian_sm

    torch.manual_seed(0)
    n, B, T = 5, 2, 7
    mod = torch.nn.GRU(n, n, batch_first=True) if kind == "gru" else torch.nn.RNN(n, n)
    cell = (GRUCellFn if kind == "gru" else ElmanCellFn).from_module(mod.double())
    h = torch.randn(B, T, n, dtype=D64)
    gi = cell.prepare(torch.randn(B, T, n, dtype=D64))
    f1, J1 = cell.value_and_jacobian(h, gi, diag=diag)
    f2, J2 = _value_and_jacobian_sm(
        cell, _to_sm(h, False).contiguous(), _cell_input(cell, gi), diag
    )
    torch.testing.assert_close(_from_sm(f2, False), f1)
    torch.testing.assert_close(_from_sm(J2, not diag), J1)
