"""whylab.capture: replayed steps equal eager ones to the last bit; guards fall back to
eager; steps a tape cannot hold are refused with the reason."""

from __future__ import annotations

import numpy as np
import pytest

import whylab
import whylab.nn as nn
import whylab.nn.functional as F
import whylab.optim as optim
from whylab.capture import CaptureError, capture

STEPS = 5


def _mlp_step(dtype, seed=0, optimizer=optim.SGD, set_to_none=True, **options):
    """A 784-256-10 MLP training step (as benchmarks/bench_mlp.py), its model and params."""
    whylab.manual_seed(seed)
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10)).to(dtype)
    opt = optimizer(model.parameters(), lr=0.01, **options)

    def step(x, y):
        opt.zero_grad(set_to_none=set_to_none)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    step.optimizer = opt
    return step, list(model.parameters())


def _batches(batch, dtype, count=STEPS, seed=1):
    rng = np.random.default_rng(seed)
    return [
        (
            whylab.from_numpy(rng.standard_normal((batch, 784))).to(dtype),
            whylab.from_numpy(rng.integers(0, 10, batch)),
        )
        for _ in range(count)
    ]


def _same(a, b) -> bool:
    a, b = a.detach().numpy(), b.detach().numpy()
    return a.dtype == b.dtype and np.array_equal(a, b)


def _assert_same_state(params_eager, params_replay):
    for p, q in zip(params_eager, params_replay, strict=True):
        assert _same(p, q)
        assert (p.grad is None) == (q.grad is None)
        if p.grad is not None:
            assert _same(p.grad, q.grad)
        assert p._version == q._version


@pytest.mark.parametrize("dtype", [whylab.float32, whylab.float64])
@pytest.mark.parametrize("batch", [1, 16])
def test_mlp_step_replays_bit_identical_to_eager(dtype, batch):
    eager, params_eager = _mlp_step(dtype)
    step, params_replay = _mlp_step(dtype)
    captured = capture(step)
    for x, y in _batches(batch, dtype, count=STEPS + 3):
        assert _same(eager(x, y), captured(x, y))
        _assert_same_state(params_eager, params_replay)
    assert captured.replays == STEPS  # calls 1-3 eager (warm-up, two recordings)
    assert not captured.fallbacks and captured.refusal is None


def test_sgd_with_momentum_and_zeroed_grads_replays():
    """Optimizer state made in the warm-up and gradients added into in place (set_to_none
    False) are held tensors of the tape."""
    options = dict(set_to_none=False, momentum=0.9, weight_decay=1e-3)
    eager, params_eager = _mlp_step(whylab.float64, **options)
    step, params_replay = _mlp_step(whylab.float64, **options)
    captured = capture(step)
    for x, y in _batches(4, whylab.float64, count=STEPS + 3):
        assert _same(eager(x, y), captured(x, y))
        _assert_same_state(params_eager, params_replay)
    assert captured.replays == STEPS


def _chain(dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = whylab.from_numpy(rng.standard_normal((4, 4))).to(dtype)
    weights = [
        whylab.from_numpy(rng.standard_normal((4, 4))).to(dtype).requires_grad_() for _ in range(5)
    ]

    def step():
        for w in weights:
            w.grad = None
        h = x
        for w in weights:
            h = (h @ w).relu()
        loss = h.sum()
        loss.backward()
        return loss

    return step, weights


def test_tiny_chain_replays_bit_identical_to_eager():
    eager, w_eager = _chain(whylab.float32)
    step, w_replay = _chain(whylab.float32)
    captured = capture(step)
    for _ in range(STEPS + 3):
        assert _same(eager(), captured())
        _assert_same_state(w_eager, w_replay)
    assert captured.replays == STEPS


def _lif(seed=0):
    """20 time steps of a 3-8-2 leaky integrate-and-fire network with a surrogate spike
    (an autograd.Function), trained by BPTT with SGD."""
    rng = np.random.default_rng(seed)

    class Spike(whylab.autograd.Function):
        @staticmethod
        def forward(ctx, above):
            ctx.save_for_backward(above)
            return (above > 0).to(above.dtype)

        @staticmethod
        def backward(ctx, grad):
            (above,) = ctx.saved_tensors
            return grad / (1.0 + 10.0 * above.abs()) ** 2

    w1 = whylab.from_numpy(rng.uniform(-1, 1, (3, 8))).requires_grad_()
    w2 = whylab.from_numpy(rng.uniform(-0.5, 0.5, (8, 2))).requires_grad_()
    opt = optim.SGD([w1, w2], lr=0.05)

    def step(frames, labels):
        opt.zero_grad()
        v = spikes = whylab.zeros(4, 8, dtype=whylab.float64)
        out = whylab.zeros(4, 2, dtype=whylab.float64)
        for t in range(frames.shape[0]):
            v = 0.9 * v + frames[t] @ w1 - spikes
            spikes = Spike.apply(v - 1.0)
            out = 0.9 * out + spikes @ w2
        loss = F.cross_entropy(out, labels)
        loss.backward()
        opt.step()
        return loss

    return step, [w1, w2]


def test_recurrent_lif_step_replays_bit_identical_to_eager():
    eager, w_eager = _lif()
    step, w_replay = _lif()
    captured = capture(step)
    rng = np.random.default_rng(2)
    for _ in range(STEPS + 3):
        frames = whylab.from_numpy(rng.uniform(0, 2.5, (20, 4, 3)))
        labels = whylab.from_numpy(rng.integers(0, 2, 4))
        assert _same(eager(frames, labels), captured(frames, labels))
        _assert_same_state(w_eager, w_replay)
    assert captured.replays == STEPS


def test_python_state_is_frozen_until_reset():
    """A learning rate changed between calls is a constant of the tape: the replay keeps
    the recorded one until ``reset()``, after which the step is recorded again."""
    eager, params_eager = _mlp_step(whylab.float64)
    step, params_replay = _mlp_step(whylab.float64)
    captured = capture(step)
    batches = _batches(2, whylab.float64, count=10)
    for x, y in batches[:4]:
        eager(x, y), captured(x, y)
    assert captured.replays == 1
    for run in (eager, step):
        run.optimizer.param_groups[0]["lr"] = 0.5
    eager(*batches[4]), captured(*batches[4])
    assert captured.replays == 2
    assert not any(_same(p, q) for p, q in zip(params_eager, params_replay, strict=True))
    for p, q in zip(params_eager, params_replay, strict=True):  # level again
        q.data.copy_(p.detach())
    captured.reset()
    for x, y in batches[5:]:
        assert _same(eager(x, y), captured(x, y))
        _assert_same_state(params_eager, params_replay)
    assert captured.replays == 4  # after reset: warm-up, two recordings, two replays


def test_in_place_writes_bump_versions_as_eager_mode_does():
    """A write through a view of a held buffer bumps the buffer's version counter, in a
    replay as in eager mode (the ADInplaceOrView kernel's work, repeated by the program)."""
    buffers = [whylab.zeros(2, 3, dtype=whylab.float64) for _ in range(2)]
    eager, step = ((lambda x, buf=buf: buf[0].add_(x).sum()) for buf in buffers)
    captured = capture(step)
    for value in range(STEPS + 3):
        x = whylab.full((3,), float(value), dtype=whylab.float64)
        assert _same(eager(x), captured(x))
        assert _same(buffers[0], buffers[1]) and buffers[0]._version == buffers[1]._version
    assert captured.replays == STEPS and buffers[1]._version == STEPS + 3


def test_tensor_lists_and_keyword_arguments_replay():
    """``cat`` takes a list of tensors (packed anew in each replay); a kernel reached by
    ``redispatch`` with a keyword gets it back as a keyword."""
    cpu = whylab.dispatch.DispatchKeySet(whylab.dispatch.DispatchKey.CPU)
    w = whylab.ones(2, dtype=whylab.float64)

    def step(x):
        both = whylab.cat([x, w * x])
        return whylab.ops.add.redispatch(cpu, both, both, alpha=3.0)

    captured = capture(step)
    for value in range(STEPS + 3):
        x = whylab.full((2,), float(value), dtype=whylab.float64)
        assert _same(captured(x), step(x))
    assert captured.replays == STEPS


def test_random_kernels_draw_as_in_eager_mode():
    """Dropout's mask comes from a kernel, so a replay draws it from the generator as the
    eager call would: seeded alike, both give the same losses and gradients."""
    w = whylab.ones(8, dtype=whylab.float64, requires_grad=True)

    def step(x):
        w.grad = None
        loss = F.dropout(x * w, 0.5, training=True).sum()
        loss.backward()
        return loss

    x = whylab.ones(8, dtype=whylab.float64)
    runs = []
    for run in (step, capture(step)):
        whylab.manual_seed(3)
        runs.append([(run(x).item(), w.grad.tolist()) for _ in range(STEPS + 3)])
    assert runs[0] == runs[1]
    assert len({loss for loss, _ in runs[0]}) > 1  # the masks differ from call to call
    assert run.replays == STEPS


# -- guards: a call unlike the recorded one runs eagerly, with eager's result -------------


def _recorded_chain_step():
    """A captured step ``(x * w).tanh().sum()`` with backward, already replaying."""
    w = whylab.ones(3, dtype=whylab.float64, requires_grad=True)

    def step(x):
        w.grad = None
        loss = (x * w).tanh().sum()
        loss.backward()
        return loss

    captured = capture(step)
    x = whylab.from_numpy(np.arange(9.0).reshape(3, 3) / 10)
    for _ in range(4):
        captured(x)
    assert captured.replays == 1
    return captured, step, w, x


@pytest.mark.parametrize(
    "change, reason",
    [
        (lambda x: x[:2], "input 0: sizes [3, 3] when recorded, [2, 3] now"),
        (lambda x: x.float(), "input 0: dtype"),
        (lambda x: x.t(), "input 0: strides [3, 1] when recorded, [1, 3] now"),
        (lambda x: x.clone().requires_grad_(), "input 0: requires_grad False when recorded"),
    ],
    ids=["shape", "dtype", "strides", "requires_grad"],
)
def test_a_changed_input_falls_back_to_eager(change, reason):
    captured, step, w, x = _recorded_chain_step()
    changed = change(x)
    got = captured(changed)
    got_grad = w.grad.clone()
    expected = step(changed).detach()
    assert captured.replays == 1
    [(why, count)] = captured.fallbacks.items()
    assert reason in why and count == 1
    assert _same(got, expected) and _same(got_grad, w.grad)
    assert captured(x) is not None and captured.replays == 2  # the program is kept


def test_an_input_passed_twice_is_another_program():
    """Recorded as ``step(z, z)``, the tape reads one input where the step names two."""
    captured = capture(lambda a, b: a.mul_(2.0) + b)
    z = whylab.ones(2, dtype=whylab.float64)
    for _ in range(3):
        captured(z, z)
    assert captured(z, z).tolist() == [32.0, 32.0] and captured.replays == 1
    x, y = whylab.ones(2, dtype=whylab.float64), whylab.ones(2, dtype=whylab.float64)
    assert captured(x, y).tolist() == [3.0, 3.0]  # eager: b is not a
    assert y.tolist() == [1.0, 1.0]
    [why] = captured.fallbacks
    assert why.startswith("input 1: first position of the same tensor 0 when recorded, 1 now")


def test_a_changed_grad_mode_falls_back_to_eager():
    w = whylab.ones(3, 3, dtype=whylab.float64, requires_grad=True)
    captured = capture(lambda x: (x @ w).sum())
    x = whylab.ones(3, 3, dtype=whylab.float64)
    with whylab.no_grad():
        for _ in range(4):
            captured(x)
    assert captured.replays == 1
    assert _same(captured(x), (x @ w).sum())  # grad mode on: eager
    [why] = captured.fallbacks
    assert why.startswith("grad mode changed") and captured.replays == 1


@pytest.mark.parametrize(
    "context, reason",
    [
        (whylab.autograd.detect_anomaly, "anomaly mode is on"),
        (whylab.autograd.engine_trace, "an engine_trace() is open"),
        (whylab.dispatch.trace, "a whylab.dispatch.trace() is open"),
    ],
    ids=["anomaly", "engine_trace", "trace"],
)
def test_what_asks_for_the_engine_runs_eagerly(context, reason):
    captured, step, w, x = _recorded_chain_step()
    with context() as recording:
        got = captured(x)
    assert captured.replays == 1 and captured.fallbacks == {reason: 1}
    if reason.startswith("an engine_trace"):
        assert recording.execution_order()  # the trace saw the eager backward
    assert _same(got, step(x))


def test_a_frozen_parameter_falls_back_to_eager():
    """A held tensor whose requires_grad changed records another graph eagerly."""
    captured, step, w, x = _recorded_chain_step()
    w.requires_grad_(False)
    with pytest.raises(RuntimeError):  # eager: the loss no longer requires grad
        captured(x)
    assert captured.replays == 1
    assert [why for why in captured.fallbacks] == [
        "a held tensor of shape [3] changed its layout, dtype, requires_grad or storage"
    ]


def test_a_replaced_gradient_falls_back_to_eager():
    """A step adding into .grad replays only while .grad is the tensor it adds into."""
    w = whylab.ones(2, dtype=whylab.float64, requires_grad=True)

    def step(x):
        loss = (x * w).sum()
        loss.backward()
        return loss

    captured = capture(step)
    x = whylab.ones(2, dtype=whylab.float64)
    for _ in range(4):
        captured(x)
    assert captured.replays == 1 and w.grad.tolist() == [4.0, 4.0]
    w.grad = None
    captured(x)
    assert w.grad.tolist() == [1.0, 1.0]
    assert any(".grad of a held tensor" in why for why in captured.fallbacks)


# -- refusals: what a tape cannot hold is named ------------------------------------------


def _run_until_refused(captured, *inputs, calls=3):
    with pytest.raises(CaptureError) as raised:
        for _ in range(calls):
            captured(*inputs)
    return str(raised.value)


def test_a_changing_python_number_is_refused():
    """Adam's bias correction is a Python number that changes every step."""
    step, _ = _mlp_step(whylab.float64, optimizer=optim.Adam)
    captured = capture(step)
    x, y = _batches(2, whylab.float64, count=1)[0]
    message = _run_until_refused(captured, x, y)
    assert "not the same program on every call" in message and "constant" in message
    eager_again = captured(x, y)  # later calls run eagerly
    assert eager_again.shape == () and captured.replays == 0
    assert any(why.startswith("refused:") for why in captured.fallbacks)


def test_data_dependent_control_flow_seen_while_recording_is_refused():
    w = whylab.ones(2, dtype=whylab.float64)
    calls = []

    def step(x):
        calls.append(1)
        y = x * w
        if len(calls) % 2:  # stands for a branch on tensor data
            y = y.exp()
        return y.sum()

    message = _run_until_refused(capture(step), whylab.ones(2, dtype=whylab.float64))
    assert "not the same program" in message


def test_a_branch_that_flips_after_recording_keeps_the_recorded_one():
    """The caller's contract, as for CUDA graphs: a branch on data that went the same way
    in both recorded calls is not seen; the replay repeats the recorded branch."""

    def step(x):
        if x.sum().item() > 0:
            return x.exp()
        return x.neg()

    captured = capture(step)
    positive = whylab.ones(2, dtype=whylab.float64)
    for _ in range(3):
        captured(positive)
    negative = -positive
    assert _same(captured(negative), negative.exp())  # eager would give negative.neg()
    assert captured.replays == 1


def test_a_tensor_made_outside_the_kernels_is_refused():
    def step(x):
        return x * whylab.tensor(2.0, dtype=whylab.float64)

    message = _run_until_refused(capture(step), whylab.ones(2, dtype=whylab.float64))
    assert "from outside the step" in message


def test_hooks_are_refused():
    w = whylab.ones(2, dtype=whylab.float64, requires_grad=True)
    seen = []
    w.register_hook(lambda grad: seen.append(grad))

    def step(x):
        w.grad = None
        loss = (x * w).sum()
        loss.backward()
        return loss

    message = _run_until_refused(capture(step), whylab.ones(2, dtype=whylab.float64))
    assert "hooks" in message and "register_hook" in message


def test_an_output_with_a_live_graph_is_refused():
    w = whylab.ones(2, dtype=whylab.float64, requires_grad=True)
    message = _run_until_refused(capture(lambda x: (x * w).sum()), whylab.ones(2))
    assert "did not run backward through" in message


def test_retain_graph_and_a_second_backward_replay():
    w = whylab.ones(3, dtype=whylab.float64, requires_grad=True)

    def step(x):
        w.grad = None
        loss = (x * w).tanh().sum()
        loss.backward(retain_graph=True)
        loss.backward()
        return loss

    captured = capture(step)
    rng = np.random.default_rng(0)
    for _ in range(5):
        x = whylab.from_numpy(rng.standard_normal(3))
        got = captured(x)
        got_grad = w.grad.clone()
        assert _same(got, step(x)) and _same(got_grad, w.grad)
    assert captured.replays == 2


def test_inputs_must_be_tensors():
    with pytest.raises(TypeError, match="input 1 is a float"):
        capture(lambda x, s: x)(whylab.ones(1), 2.0)
