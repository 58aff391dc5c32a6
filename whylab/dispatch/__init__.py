"""The dispatcher: dispatch keys, operators with per-key kernel tables, and tracing.

See README.md in this folder for how a call travels and how to add an operator.
"""

from whylab.dispatch.keys import DispatchKey, DispatchKeySet  # noqa: I001  (keys first: no cycles)
from whylab.dispatch.tls import exclude_keys, excluded_keys, include_keys, included_keys
from whylab.dispatch.operator import (
    CompositeImplicitAutograd,
    OpNamespace,
    Operator,
    all_ops,
    define,
    get_op,
    impl,
    parse_schema,
    register_fallback,
    register_fallthrough_for_all,
)
from whylab.dispatch.trace import Trace, TraceEvent, trace
from whylab.dispatch import native  # noqa: F401  (registers every operator)

__all__ = [
    "CompositeImplicitAutograd",
    "DispatchKey",
    "DispatchKeySet",
    "OpNamespace",
    "Operator",
    "Trace",
    "TraceEvent",
    "all_ops",
    "define",
    "exclude_keys",
    "excluded_keys",
    "get_op",
    "impl",
    "include_keys",
    "included_keys",
    "parse_schema",
    "register_fallback",
    "register_fallthrough_for_all",
    "trace",
]
