"""Per-op forward+backward overhead on tiny tensors: whylab vs PyTorch vs hand-written NumPy.

On 4x4 tensors the arithmetic is nothing; what is measured is the machinery
around it: dispatch, recording the graph, the engine walking it, and
AccumulateGrad writing ``.grad``. Each case runs one op forward and backward
(the gradient of the op's output w.r.t. a leaf), and a 10-op chain does the
same for ten ops in a row.

The three implementations are timed in interleaved rounds (NumPy, torch,
whylab, NumPy, ...) so that slow phases of the machine hit all of them;
each round times a batch of calls and reports the time per call. Printed per
case: the median time per call of each implementation, and the ratios
whylab/torch and whylab/NumPy as median [first quartile, third quartile] over
the rounds.

Run from the repository root::

    PYTHONPATH=. python benchmarks/bench_autograd_ops.py [--rounds 15] [--calls 200]
"""

from __future__ import annotations

import argparse

import numpy as np
import torch

import whylab
from whylab.bench import Comparison, interleaved_rounds, warm_up

torch.set_num_threads(1)

SHAPE = (4, 4)


def _data(seed):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(SHAPE) * 0.5, rng.standard_normal(SHAPE) * 0.5 + 2.0


class Case:
    """One benchmark: a whylab/torch function of (leaf, other) and a NumPy forward+backward."""

    def __init__(self, name, library_fn, numpy_fn):
        self.name = name
        self.library_fn = library_fn
        self.numpy_fn = numpy_fn


def _numpy_softmax(a):
    shifted = np.exp(a - a.max(1, keepdims=True))
    return shifted / shifted.sum(1, keepdims=True)


def _np_add(a, b, g):
    return a + b, g.copy()


def _np_mul(a, b, g):
    return a * b, g * b


def _np_div(a, b, g):
    return a / b, g / b


def _np_exp(a, b, g):
    y = np.exp(a)
    return y, g * y


def _np_tanh(a, b, g):
    y = np.tanh(a)
    return y, g * (1 - y * y)


def _np_sigmoid(a, b, g):
    y = 1 / (1 + np.exp(-a))
    return y, g * y * (1 - y)


def _np_relu(a, b, g):
    y = np.maximum(a, 0)
    return y, np.where(y > 0, g, 0.0)


def _np_mm(a, b, g):
    return a @ b, g @ b.T


def _np_sum(a, b, g):
    y = a.sum(1)
    return y, np.broadcast_to(g[:, None], a.shape).copy()


def _np_softmax(a, b, g):
    y = _numpy_softmax(a)
    return y, y * (g - (g * y).sum(1, keepdims=True))


def _np_log_softmax(a, b, g):
    shifted = a - a.max(1, keepdims=True)
    y = shifted - np.log(np.exp(shifted).sum(1, keepdims=True))
    return y, g - np.exp(y) * g.sum(1, keepdims=True)


def _np_transpose(a, b, g):
    return a.T, g.T.copy()


def _np_getitem(a, b, g):
    grad = np.zeros_like(a)
    grad[1:3] = g
    return a[1:3], grad


CASES = [
    Case("add", lambda a, b: a + b, _np_add),
    Case("mul", lambda a, b: a * b, _np_mul),
    Case("div", lambda a, b: a / b, _np_div),
    Case("exp", lambda a, b: a.exp(), _np_exp),
    Case("tanh", lambda a, b: a.tanh(), _np_tanh),
    Case("sigmoid", lambda a, b: a.sigmoid(), _np_sigmoid),
    Case("relu", lambda a, b: a.relu(), _np_relu),
    Case("mm", lambda a, b: a.mm(b), _np_mm),
    Case("sum(dim)", lambda a, b: a.sum(1), _np_sum),
    Case("softmax", lambda a, b: a.softmax(1), _np_softmax),
    Case("log_softmax", lambda a, b: a.log_softmax(1), _np_log_softmax),
    Case("transpose", lambda a, b: a.t(), _np_transpose),
    Case("getitem", lambda a, b: a[1:3], _np_getitem),
]


def _chain(a, b):
    """Ten ops: mul, add, tanh, mul, exp, div, sigmoid, mm, relu, sum."""
    h = a * b
    h = h + b
    h = h.tanh()
    h = h * a
    h = h.exp()
    h = h / b
    h = h.sigmoid()
    h = h.mm(b)
    h = h.relu()
    return h.sum()


def _np_chain(a, b, g):
    m1 = a * b
    s1 = m1 + b
    t1 = np.tanh(s1)
    m2 = t1 * a
    e1 = np.exp(m2)
    d1 = e1 / b
    g1 = 1 / (1 + np.exp(-d1))
    p1 = g1 @ b
    r1 = np.maximum(p1, 0)
    out = r1.sum()
    grad_r1 = np.full_like(r1, g)
    grad_p1 = np.where(r1 > 0, grad_r1, 0.0)
    grad_g1 = grad_p1 @ b.T
    grad_d1 = grad_g1 * g1 * (1 - g1)
    grad_e1 = grad_d1 / b
    grad_m2 = grad_e1 * e1
    grad_t1 = grad_m2 * a
    grad_a = grad_m2 * t1
    grad_s1 = grad_t1 * (1 - t1 * t1)
    grad_a = grad_a + grad_s1 * b
    return out, grad_a


CHAIN = Case("10-op chain", _chain, _np_chain)


def _library_runner(module, case, seed):
    a_data, b_data = _data(seed)
    dtype = module.float32
    a = module.tensor(a_data, dtype=dtype, requires_grad=True)
    b = module.tensor(b_data, dtype=dtype)
    out = case.library_fn(a, b)
    g = module.ones(tuple(out.shape), dtype=dtype)

    def run():
        a.grad = None
        case.library_fn(a, b).backward(g)

    return run


def _output_shape(case) -> tuple:
    a_data, b_data = _data(0)
    return tuple(case.library_fn(torch.tensor(a_data), torch.tensor(b_data)).shape)


def _numpy_runner(case, seed):
    a_data, b_data = _data(seed)
    a = a_data.astype(np.float32)
    b = b_data.astype(np.float32)
    g = np.ones(_output_shape(case), np.float32)

    def run():
        case.numpy_fn(a, b, g)

    return run


def measure(case, rounds: int, calls: int) -> Comparison:
    """Interleaved rounds (fixed order, a short pause after each switch), seconds per call."""
    runners = {
        "numpy": _numpy_runner(case, 0),
        "torch": _library_runner(torch, case, 0),
        "whylab": _library_runner(whylab, case, 0),
    }
    for run in runners.values():  # warm caches and allocators
        warm_up(run, max(calls // 4, 5))
    times = interleaved_rounds(runners, rounds, calls, pause_s=0.005, rotate=False)
    return Comparison(times=times, calls=dict.fromkeys(runners, calls))


def _check_gradients_agree(case) -> None:
    """The three implementations must compute the same gradient before we time them."""
    a_data, b_data = _data(0)
    grads = []
    for module in (whylab, torch):
        a = module.tensor(a_data, dtype=module.float64, requires_grad=True)
        b = module.tensor(b_data, dtype=module.float64)
        out = case.library_fn(a, b)
        out.backward(module.ones(tuple(out.shape), dtype=module.float64))
        grads.append(a.grad.numpy())
    grads.append(case.numpy_fn(a_data, b_data, np.ones(_output_shape(case)))[1])
    for grad in grads[1:]:
        np.testing.assert_allclose(grads[0], grad, rtol=1e-9, atol=1e-12, err_msg=case.name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15, help="interleaved rounds (>= 4)")
    parser.add_argument("--calls", type=int, default=200, help="calls timed per round")
    args = parser.parse_args()
    if args.rounds < 4:
        parser.error("--rounds must be at least 4 (quartiles need data)")
    print(
        f"forward+backward per call on float32 {SHAPE[0]}x{SHAPE[1]} tensors, "
        f"{args.rounds} interleaved rounds x {args.calls} calls"
    )
    header = (
        f"{'case':<12} {'numpy us':>9} {'torch us':>9} {'whylab us':>10}   "
        f"{'whylab/torch [q1, q3]':<24} {'whylab/numpy [q1, q3]':<24}"
    )
    print(header)
    print("-" * len(header))
    for case in [*CASES, CHAIN]:
        _check_gradients_agree(case)
        result = measure(case, args.rounds, args.calls)
        medians_us = {name: result.median(name) * 1e6 for name in result.times}
        vs_torch = result.ratio_quartiles("whylab", "torch")
        vs_numpy = result.ratio_quartiles("whylab", "numpy")
        print(
            f"{case.name:<12} {medians_us['numpy']:>9.1f} {medians_us['torch']:>9.1f} "
            f"{medians_us['whylab']:>10.1f}   "
            f"{vs_torch.format():<24} {vs_numpy.format():<24}"
        )

if __name__ == "__main__":
    main()
