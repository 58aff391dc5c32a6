"""A tape compiled for replay: a flat list of kernel calls over one list of values.

The values of one replay sit in one Python list, laid out as

    [ step inputs | results of the tape's kernels | held tensors and constants | packed lists ]

so that every argument of every kernel call is an index into it. A replay copies the
template (held tensors and constants already in place), puts the new inputs in front,
and runs the steps in order: ``kernel(*map(values.__getitem__, argument_indices))``,
storing new results at their indices and bumping the version counter of each tensor
the step writes in place (as the ADInplaceOrView kernel would have). No dispatcher,
no autograd recording, no backward engine: the kernels are the ones eager mode ran,
on the same arrays, in the same order, so the results are the same to the last bit.

After the kernels, the ``.grad`` writes the tape's call made outside the kernels
(AccumulateGrad stealing or copying a gradient, ``zero_grad(set_to_none=True)``) are
repeated, and the outputs are returned.
"""

from __future__ import annotations

from whylab.capture.tape import CONSTANT, HELD, INPUT, RESULT


def _pack_list(*items):
    return list(items)


def _pack_tuple(*items):
    return items


class Program:
    """Replayable form of one recorded call (see the module docstring)."""

    def __init__(self, inputs: int, results: int, entries, outputs, grad_writes) -> None:
        self._inputs = inputs
        self._results_at = inputs
        self._template: list = [None] * (inputs + results)
        self._held_at: dict[int, int] = {}
        self._steps: list[tuple] = []
        for entry in entries:
            args = tuple(self._index(spec) for spec in entry.args)
            kwargs = None
            if entry.kwargs is not None:
                kwargs = tuple((name, self._index(spec)) for name, spec in entry.kwargs)
            if type(entry.results) is list:
                out = tuple(-1 if spec is None else self._index(spec) for spec in entry.results)
            else:
                out = -1 if entry.results is None else self._index(entry.results)
            bumps = tuple(self._index(spec) for spec in entry.bumps)
            self._steps.append((entry.kernel, args, kwargs, out, bumps))
        self._outputs = tuple(self._index(spec) for spec in outputs)
        # Outputs that are not fresh results are handed out detached, as eager mode does.
        self._detach = tuple(spec[0] != RESULT for spec in outputs)
        self._grad_writes = tuple(
            (self._index(target), -1 if grad is None else self._index(grad))
            for target, grad in grad_writes
        )

    def _index(self, spec) -> int:
        kind = spec[0]
        if kind == INPUT:
            return spec[1]
        if kind == RESULT:
            return self._results_at + spec[1]
        if kind == HELD:
            key = id(spec[1])
            if key not in self._held_at:
                self._held_at[key] = len(self._template)
                self._template.append(spec[1])
            return self._held_at[key]
        if kind == CONSTANT:
            self._template.append(spec[1])
            return len(self._template) - 1
        # A LIST: a step that packs its members comes before the call that reads it.
        members = tuple(self._index(item) for item in spec[2])
        at = len(self._template)
        self._template.append(None)
        pack = _pack_list if spec[1] is list else _pack_tuple
        self._steps.append((pack, members, None, at, ()))
        return at

    def run(self, inputs) -> list:
        """Replay on ``inputs`` (already checked against the guards); return the outputs."""
        values = self._template.copy()
        values[: self._inputs] = inputs
        get = values.__getitem__
        for kernel, args, kwargs, out, bumps in self._steps:
            if kwargs is None:
                result = kernel(*map(get, args))
            else:
                result = kernel(*map(get, args), **{name: values[i] for name, i in kwargs})
            if type(out) is int:
                if out >= 0:
                    values[out] = result
            else:
                for index, item in zip(out, result, strict=True):
                    if index >= 0:
                        values[index] = item
            for index in bumps:
                values[index]._version_counter.value += 1  # VersionCounter.bump()
        for target, grad in self._grad_writes:
            values[target]._grad = None if grad < 0 else values[grad]
        outputs = list(map(get, self._outputs))
        for position, detach in enumerate(self._detach):
            if detach:
                outputs[position] = outputs[position].detach()
        return outputs
