"""Recording what the dispatcher does: ``with whylab.dispatch.trace() as t: ...``.

Opening a trace adds the Tracer key to this thread's included set. Every
operator then reaches the Tracer's global fallback first; it records the call
and redispatches. ``Operator.redispatch`` records each further hop (the key and
the kernel that ran). Operators called from inside a kernel (``matmul`` calling
``mm``) pass through the Tracer again, one level deeper.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from whylab._core.keys import DispatchKey
from whylab._tensor.tensor import Tensor
from whylab.dispatch.operator import register_fallback
from whylab.dispatch.tls import include_keys, local_keys


@dataclass(frozen=True)
class TraceEvent:
    """One hop: operator ``op`` ran the ``kernel`` registered for ``key``."""

    op: str
    key: str
    kernel: str
    depth: int
    inputs: tuple[str, ...] = ()


def describe_argument(value) -> str:
    """Short text for an argument: ``Tensor[2, 3] float32`` or the value's repr."""
    if isinstance(value, Tensor):
        sizes = ", ".join(str(s) for s in value._sizes)
        return f"Tensor[{sizes}] {value.dtype.name}"
    if isinstance(value, (list, tuple)) and value and isinstance(value[0], Tensor):
        return "[" + ", ".join(describe_argument(v) for v in value) + "]"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


@dataclass
class Trace:
    """The events recorded while the trace was open."""

    events: list[TraceEvent] = field(default_factory=list)
    depth: int = 0

    def record(self, op, key: DispatchKey, kernel: str, args, depth: int) -> None:
        inputs = tuple(describe_argument(a) for a in args)
        self.events.append(TraceEvent(op.name, key.name, kernel, depth, inputs))

    def hop(self, op, key_index: int, args) -> None:
        """Called by ``Operator.redispatch``. The Tracer fallback has already
        counted this operator in ``depth``, so its hops sit one level up."""
        key = DispatchKey(key_index)
        self.record(op, key, op.kernel_name(key), args, self.depth - 1)

    def ops(self) -> list[str]:
        """Operator names in call order, one per operator call."""
        return [e.op for e in self.events if e.key == DispatchKey.Tracer.name]

    def format(self) -> str:
        """An indented, human-readable listing of the hops."""
        return "\n".join(f"{'  ' * e.depth}{e.op} @ {e.key}: {e.kernel}" for e in self.events)


def tracer_fallback(op, keyset, *args, **kwargs):
    """Global Tracer kernel: record the call, then continue below the Tracer."""
    recorder = local_keys.recorder
    if recorder is None:
        return op.redispatch(keyset, *args, **kwargs)
    recorder.record(
        op, DispatchKey.Tracer, "whylab.dispatch.tracing.tracer_fallback", args, recorder.depth
    )
    recorder.depth += 1
    try:
        return op.redispatch(keyset, *args, **kwargs)
    finally:
        recorder.depth -= 1


register_fallback(DispatchKey.Tracer, tracer_fallback)


class trace:
    """Context manager recording every dispatcher hop made by this thread inside it."""

    def __init__(self):
        self.recorder = Trace()
        self._guard = include_keys(DispatchKey.Tracer)
        self._saved = None

    def __enter__(self) -> Trace:
        self._saved = local_keys.recorder
        local_keys.recorder = self.recorder
        self._guard.__enter__()
        return self.recorder

    def __exit__(self, *exc_info):
        self._guard.__exit__(*exc_info)
        local_keys.recorder = self._saved
        return False
