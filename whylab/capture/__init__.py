"""Capture and replay: run a training step's kernels again without the engine around them.

On small tensors most of an eager step is Python: the dispatcher's hops, autograd's
recording, the backward engine's bookkeeping. CUDA graphs (``torch.cuda.CUDAGraph``,
``torch.cuda.make_graphed_callables``) and tinygrad's ``TinyJit`` remove that cost the
same way: record what one call ran, then replay only that. ``capture`` does it for
whylab's NumPy kernels::

    model, optimizer = ..., ...

    @whylab.capture.capture
    def train_step(x, y):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    for x, y in batches:
        loss = train_step(x, y)  # calls 1-3 eager, then replayed

**What is recorded.** Every backend (CPU) kernel call of one eager call, forward,
backward inside ``loss.backward()``, optimizer updates and gradient zeroing alike, as a
flat tape of kernel calls whose tensor arguments are the step's inputs, results of
earlier calls on the tape, or tensors held from outside (parameters, gradients, optimizer
state), plus the ``.grad`` assignments the engine and ``zero_grad`` make. A replay runs
those kernels in order on the new inputs, writing into the same parameters and buffers,
so its results equal eager mode's to the last bit (same kernels, same arrays, same
order; random kernels draw from the generator as eagerly).

**Calls.** The first call runs eagerly (a warm-up: optimizer state and gradients that
are made lazily exist afterwards); the second and third run eagerly while being
recorded, and must record the same program; later calls replay it. Outputs always come
back detached (as ``out.detach()``), eager or replayed.

**The contract, as for CUDA graphs: the step must be static.**

* the same kernel calls on every call, whatever the data: no Python control flow that
  depends on tensor values (``if loss.item() > 1``, ``while not converged``), no Python
  numbers that change from call to call (a step counter, a learning rate the step
  computes), no tensors made outside the kernels (``whylab.tensor(...)`` inside the step);
* Python state the step reads is frozen into the tape: a learning rate a scheduler
  changes between calls, ``model.train()``/``model.eval()``, a loss weight. After
  changing such state, call :meth:`CapturedStep.reset` so that the step is recorded
  again (the replay would otherwise keep the recorded values, as a CUDA graph does);
* no Python side effects that matter besides the kernels (a replay does not run the
  step's Python code: appending to a list, printing, a module's forward hooks);
* inputs are tensors; everything else is closed over.

What can be checked is checked. The two recorded calls are compared kernel by kernel:
a Python number or a held tensor that changed, a different sequence of kernels, or a
tensor made outside the kernels (a new object each call) refuses the capture. Hooks
run by the backward (``register_hook``, ``retain_grad``, node hooks), an output whose
autograd graph the step did not run backward through, and a ``.grad`` set to a tensor
made outside the kernels refuse it too. A refusal raises :class:`CaptureError` naming the cause (the
call that raises has run eagerly) and every later call runs eagerly. What cannot be
checked is a branch on tensor data (``.item()``, ``.tolist()``, ``bool(t)`` read it
outside the kernels) that goes the same way in both recorded calls and another way
later: the replay keeps the recorded branch (CUDA graphs do the same).
``retain_graph`` and ``create_graph`` inside the step replay like any other kernels.

**Guards.** Before each replay: the inputs' number, type, sizes, strides, dtype, device
and ``requires_grad`` (and which are the same tensor); grad mode, inference mode and
the dispatcher's key sets; the held tensors' layout, ``requires_grad`` and storage; the
gradients the step adds into still being their tensors' ``.grad``. A call that fails a
guard runs eagerly and counts its reason in ``fallbacks``; the recorded program stays
for later calls that match it. Calls made while a ``trace()`` or ``engine_trace()`` is
open, in anomaly mode or under saved-tensor hooks always run eagerly (the engine itself
is what those ask for).

Not like PyTorch: ``torch.cuda.make_graphed_callables`` graphs forward and backward as
an autograd function; this captures the whole step (optimizer included) and its outputs
carry no graph, closer to a whole-network CUDA graph or ``TinyJit``.
"""

from whylab.capture.step import CapturedStep, CaptureError


def capture(step) -> CapturedStep:
    """Wrap ``step(*tensors) -> tensor or tuple of tensors`` for capture and replay (see
    the module docstring for the contract); usable as a decorator."""
    return CapturedStep(step)


__all__ = ["CaptureError", "CapturedStep", "capture"]
