"""The dispatcher: dispatch keys, operators with per-key kernel tables, and tracing.

See README.md in this folder for how a call travels and how to add an operator.

Importing this package defines the machinery only; the operators themselves are
registered by importing the op table, :mod:`whylab.dispatch.native_functions`
(``import whylab`` does).
"""

from whylab._core.keys import DispatchKey, DispatchKeySet
from whylab.dispatch.operator import (
    CompositeImplicitAutograd,
    Operator,
    OpNamespace,
    all_ops,
    define,
    get_op,
    impl,
    parse_schema,
    register_fallback,
    register_fallthrough_for_all,
)
from whylab.dispatch.tls import exclude_keys, excluded_keys, include_keys, included_keys
from whylab.dispatch.tracing import Trace, TraceEvent, trace

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
