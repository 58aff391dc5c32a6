"""dispatch.intercept.backend_calls: the listener hears this thread's outermost CPU kernel
calls, with their arguments and results, and the tables are as before afterwards."""

from __future__ import annotations

import threading

import whylab
from whylab.dispatch import DispatchKey
from whylab.dispatch.intercept import backend_calls

CPU = int(DispatchKey.CPU)


def _listening():
    heard = []

    def listener(op, kernel, args, kwargs, result):
        heard.append((op.name, kernel, args, result))

    return heard, listener


def test_the_listener_hears_forward_and_backward_kernels_with_their_results():
    x = whylab.ones(2, 2, dtype=whylab.float64, requires_grad=True)
    heard, listener = _listening()
    with backend_calls(listener):
        y = (x * 3.0).sum()
        y.backward()
    names = [name for name, *_ in heard]
    assert names[:2] == ["mul", "sum"]  # forward, then the backward's kernels
    assert len(names) > 2 and "mul" in names[2:]
    assert heard[1][3] is y  # the tensor the caller gets is the kernel's own result
    assert heard[0][2][0] is x


def test_composites_are_not_heard_but_their_parts_are():
    a = whylab.ones(2, 3, dtype=whylab.float64)
    b = whylab.ones(3, 2, dtype=whylab.float64)
    heard, listener = _listening()
    with backend_calls(listener):
        whylab.matmul(a, b)
    assert [name for name, *_ in heard] == ["mm"]


def test_tables_are_restored_and_other_threads_are_not_heard():
    mul = whylab.ops.mul
    before = mul._table[CPU]
    heard, listener = _listening()
    other = []
    with backend_calls(listener):
        assert mul._table[CPU] is not before  # the intercepting kernel stands in
        thread = threading.Thread(target=lambda: other.append(whylab.ones(2) * 2.0))
        thread.start()
        thread.join()
    assert mul._table[CPU] is before
    assert other[0].tolist() == [2.0, 2.0] and heard == []
    whylab.ones(2) * 2.0  # after the block: nobody listens
    assert heard == []
