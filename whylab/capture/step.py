"""CapturedStep: run a step eagerly, record it, check the recording, then replay it.

Calls go through three phases (the contract is in ``whylab/capture/__init__.py``):

1. **Warm-up.** The first call runs eagerly, untouched, so that lazily made state
   (optimizer buffers, gradients a step adds into) exists before recording.
2. **Recording.** The next calls run eagerly while a :class:`~whylab.capture.tape.Recorder`
   writes their backend kernel calls down. Two tapes recorded under the same
   signature must be the same program (:func:`~whylab.capture.tape.first_difference`);
   the second becomes the :class:`~whylab.capture.program.Program`. A step the tape
   cannot hold is refused with a :class:`CaptureError` saying why.
3. **Replay.** Each later call whose guards hold replays the program; one whose guards
   fail runs eagerly, and the reason is counted in ``fallbacks``.

Every call, eager or replayed, returns the step's outputs detached.
"""

from __future__ import annotations

from collections import Counter

from whylab._core import thread_state
from whylab._tensor.tensor import Tensor
from whylab.autograd.engine import engine_trace
from whylab.capture.guards import HeldGuard, call_signature, needs_eager, signature_difference
from whylab.capture.program import Program
from whylab.capture.tape import HELD, LIST, Recorder, first_difference, same_spec
from whylab.dispatch.intercept import backend_calls

_dispatch_state = thread_state.dispatch


class CaptureError(RuntimeError):
    """The step cannot be captured; the message says what it did that a tape cannot hold."""


class _Recording:
    """One recorded call: its signature, tape, outputs and the held tensors it used."""

    def __init__(self, signature, recorder: Recorder, outputs) -> None:
        self.signature = signature
        self.recorder = recorder
        self.entries = recorder.entries
        self.outputs = tuple(recorder.spec(out) for out in outputs)
        held = {}
        for entry in self.entries:
            specs = list(entry.args) + list(entry.bumps)
            specs += [spec for _, spec in entry.kwargs or ()]
            while specs:
                spec = specs.pop()
                if spec[0] == HELD:
                    held[id(spec[1])] = spec[1]
                elif spec[0] == LIST:
                    specs.extend(spec[2])
        self.held = held  # id -> tensor, every tensor from outside the step the tape reads


class CapturedStep:
    """A step function that replays its recorded kernel calls once it has been seen.

    ``replays`` counts the replayed calls; ``fallbacks`` (a Counter) the eager ones and
    why; ``refusal`` is None, or why the step could not be captured.
    """

    def __init__(self, step) -> None:
        self.step = step
        self.replays = 0
        self.fallbacks: Counter = Counter()
        self.refusal: str | None = None
        self._warm = False
        self._previous: _Recording | None = None
        self._program: Program | None = None
        self._signature = None
        self._held_guard: HeldGuard | None = None
        self._single = True  # whether the step returns one tensor (else a tuple)

    def __call__(self, *inputs):
        for position, value in enumerate(inputs):
            if not isinstance(value, Tensor):
                raise TypeError(
                    f"captured step: input {position} is a {type(value).__name__}; a captured "
                    "step takes tensors only (close over other values in the step itself)"
                )
        if _dispatch_state.backend_listener is not None:
            raise CaptureError("captured step: called while another step is being recorded")
        eager_state = needs_eager()
        if eager_state is not None:
            self.fallbacks[eager_state] += 1
            return self._eager(inputs)
        if self._program is not None:
            signature = call_signature(inputs)
            if signature == self._signature:
                failure = self._held_guard.failure()
                if failure is None:
                    self.replays += 1
                    return self._shape(self._program.run(inputs))
            else:
                failure = signature_difference(self._signature, signature)
            self.fallbacks[failure] += 1
            return self._eager(inputs)
        if self.refusal is not None:
            self.fallbacks["refused: " + self.refusal] += 1
            return self._eager(inputs)
        if not self._warm:
            self._warm = True
            return self._eager(inputs)
        return self._record(inputs)

    def reset(self) -> None:
        """Forget the recording (and any refusal): the next calls warm up and record
        again. Call it after changing Python state the step reads (a learning rate)."""
        self.refusal = None
        self._warm = False
        self._previous = None
        self._program = None
        self._signature = None
        self._held_guard = None

    # -- eager calls and recording ---------------------------------------------

    def _eager(self, inputs):
        return self._shape(self._outputs_of(self.step(*inputs)), detach=True)

    def _outputs_of(self, result) -> list:
        if isinstance(result, Tensor):
            self._single = True
            return [result]
        if type(result) in (tuple, list) and all(isinstance(t, Tensor) for t in result):
            self._single = False
            return list(result)
        raise CaptureError(
            f"captured step: the step returned a {type(result).__name__}; it must return a "
            "tensor or a tuple of tensors"
        )

    def _shape(self, outputs: list, detach: bool = False):
        if detach:
            outputs = [out.detach() for out in outputs]
        return outputs[0] if self._single else tuple(outputs)

    def _record(self, inputs):
        signature = call_signature(inputs)
        previous = self._previous
        held_before = previous.held if previous is not None else {}
        grads_before = {key: (t, t._grad) for key, t in held_before.items()}
        inputs_before = [t._grad for t in inputs]
        recorder = Recorder(inputs)
        with backend_calls(recorder), engine_trace() as trace:
            outputs = self._outputs_of(self.step(*inputs))
        result = self._shape(outputs, detach=True)
        problem = _graph_problem(trace, outputs)
        if problem is not None:
            self._refuse(problem)
        recording = _Recording(signature, recorder, outputs)
        if previous is None or previous.signature != signature:
            self._previous = recording  # the first tape of this signature: record again
            return result
        difference = first_difference(previous.entries, recording.entries)
        if difference is None and not all(map(same_spec, previous.outputs, recording.outputs)):
            difference = "the step returned other tensors"
        if difference is not None:
            self._refuse(f"the step is not the same program on every call: {difference}")
        grad_writes, grads_read = self._grad_effects(recording, grads_before, inputs, inputs_before)
        self._program = Program(
            len(inputs), recorder.results, recording.entries, recording.outputs, grad_writes
        )
        self._signature = signature
        self._held_guard = HeldGuard(recording.held.values(), grads_read)
        self._previous = None
        return result

    def _grad_effects(self, recording, grads_before, inputs, inputs_before):
        """The ``.grad`` writes the recorded call made outside its kernels, and the
        gradients its kernels read (the replay's guards check those are still in place)."""
        writes, reads = [], []
        recorder = recording.recorder
        tracked = list(grads_before.values())
        for position, tensor in enumerate(inputs):
            tracked.append((tensor, inputs_before[position]))
        for tensor, before in tracked:
            after = tensor._grad
            if after is before:
                if before is not None and id(before) in recording.held:
                    reads.append((tensor, before))
                continue
            spec = None if after is None else recorder.spec(after)
            if spec is not None and spec[0] == HELD and id(after) not in recording.held:
                self._refuse(
                    f"the .grad of a tensor of shape {list(tensor._sizes)} was set to a tensor "
                    "made outside the kernels"
                )
            writes.append((recorder.spec(tensor), spec))
        return writes, reads

    def _refuse(self, reason: str):
        self.refusal = reason
        self._previous = None
        raise CaptureError(
            f"captured step refused: {reason}. This call ran eagerly; later calls will too."
        )


def _graph_problem(trace, outputs) -> str | None:
    """What in the recorded call's autograd use a replay cannot repeat, or None."""
    for event in trace.events:
        if event["kind"] == "hooks":
            return (
                f"its backward ran hooks (on {event['node']}: register_hook, retain_grad or "
                "node hooks); a replay would not call them"
            )
    executed = set(trace.execution_order())
    for position, out in enumerate(outputs):
        node = out.grad_fn
        if node is not None and trace.label(node) not in executed:
            return (
                f"output {position} has an autograd graph the step did not run backward "
                "through; outputs come back detached, so the backward must be inside the step"
            )
    return None
