"""The op table: every operator whylab defines, with its kernels and its Python names.

This is whylab's ``native_functions.yaml``, the forward-side twin of
``whylab/autograd/derivatives.py``. One :class:`NativeFunction` per operator:
its schema written out in full, its CPU and Meta kernels (``whylab/kernels``)
or its composite (a Python function in ``whylab/dispatch/native/<family>.py``
written in terms of other operators), its public function names, its Tensor
method names, whether the function takes ``out=``, and the hand-written
bindings of names whose Python signature is not a plain call in schema order.

Importing this module defines every operator and attaches the Tensor methods;
``whylab/__init__.py`` exports :data:`FUNCTIONS`. To find an op from any public
name (``cross_entropy`` runs the operator ``cross_entropy_loss``)::

    python -m whylab.dispatch.find cross_entropy

See ``whylab/dispatch/README.md`` ("Finding an op", "Adding an operator").
"""

from __future__ import annotations

from whylab.dispatch.native import (
    elementwise,
    factory,
    indexing,
    legacy,
    linalg,
    loss,
    nn,
    ordering,
    protocols,
    reduction,
    sampling,
    shape,
)
from whylab.dispatch.native._registry import with_out
from whylab.dispatch.native.codegen import NativeFunction, build
from whylab.kernels import rules, views
from whylab.kernels.cpu import backward_ops as cpu_backward
from whylab.kernels.cpu import elementwise as cpu_elementwise
from whylab.kernels.cpu import factory as cpu_factory
from whylab.kernels.cpu import indexing as cpu_indexing
from whylab.kernels.cpu import inplace as cpu_inplace
from whylab.kernels.cpu import linalg as cpu_linalg
from whylab.kernels.cpu import loss as cpu_loss
from whylab.kernels.cpu import nn as cpu_nn
from whylab.kernels.cpu import ordering as cpu_ordering
from whylab.kernels.cpu import reduction as cpu_reduction
from whylab.kernels.meta import backward_ops as meta_backward
from whylab.kernels.meta import elementwise as meta_elementwise
from whylab.kernels.meta import factory as meta_factory
from whylab.kernels.meta import indexing as meta_indexing
from whylab.kernels.meta import linalg as meta_linalg
from whylab.kernels.meta import loss as meta_loss
from whylab.kernels.meta import nn as meta_nn
from whylab.kernels.meta import ordering as meta_ordering
from whylab.kernels.meta import reduction as meta_reduction

F = NativeFunction

NATIVE_FUNCTIONS = [
    # -- binary arithmetic ----------------------------------------------------------------
    F(
        "add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
        cpu=cpu_elementwise.add,
        meta=meta_elementwise.add_sub("add"),
        function=("add",),
        method=("add", "__add__", "__radd__"),
        out=True,
    ),
    F(
        "sub(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
        cpu=cpu_elementwise.sub,
        meta=meta_elementwise.add_sub("sub"),
        function=("sub", "subtract"),
        method=("sub", "subtract", "__sub__"),
        out=True,
    ),
    # The Scalar overloads have no public binding (Python's ``x * 2`` is mul with a wrapped
    # number, as in torch): torch's C++ composites call them, and so do whylab's
    # (cross_entropy's label smoothing), so that they record torch's MulBackward1...
    F(
        "add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",
        cpu=cpu_elementwise.add,
        meta=meta_elementwise.add_sub("add"),
    ),
    F(
        "mul.Scalar(Tensor self, Scalar other) -> Tensor",
        cpu=cpu_elementwise.mul,
        meta=meta_elementwise.binary("mul"),
    ),
    F(
        "div.Scalar(Tensor self, Scalar other) -> Tensor",
        cpu=cpu_elementwise.div,
        meta=meta_elementwise.div,
    ),
    F(
        "rsub(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
        cpu=cpu_elementwise.rsub,
        meta=meta_elementwise.rsub,
        function=("rsub",),
        method=("__rsub__",),
    ),
    F(
        "mul(Tensor self, Tensor other) -> Tensor",
        cpu=cpu_elementwise.mul,
        meta=meta_elementwise.binary("mul"),
        function=("mul", "multiply"),
        method=("mul", "multiply", "__mul__", "__rmul__"),
        out=True,
    ),
    F(
        "div(Tensor self, Tensor other, *, str? rounding_mode=None) -> Tensor",
        cpu=cpu_elementwise.div,
        meta=meta_elementwise.div,
        function=("div", "divide", "true_divide"),
        method=("div", "divide", "true_divide", "__truediv__"),
        out=True,
        python={
            "floor_divide": elementwise.floor_divide,
            "Tensor.floor_divide": elementwise.floor_divide,
            "Tensor.__floordiv__": elementwise.floor_divide,
            "Tensor.__rtruediv__": elementwise.rtruediv,
        },
    ),
    F(
        "remainder(Tensor self, Tensor other) -> Tensor",
        cpu=cpu_elementwise.remainder,
        meta=meta_elementwise.binary("remainder"),
        function=("remainder",),
        method=("remainder", "__mod__"),
        out=True,
    ),
    F(
        "pow(Tensor self, Tensor exponent) -> Tensor",
        cpu=cpu_elementwise.pow,
        meta=meta_elementwise.pow,
        method=("pow", "__pow__"),
        python={"pow": with_out(elementwise.pow)},
    ),
    # PyTorch's overload pow.Scalar: a Python number raised to a tensor (``2 ** t``).
    F(
        "pow.Scalar(Scalar self, Tensor exponent) -> Tensor",
        cpu=cpu_elementwise.pow,
        meta=meta_elementwise.pow,
        python={"Tensor.__rpow__": elementwise.rpow},
    ),
    F(
        "maximum(Tensor self, Tensor other) -> Tensor",
        cpu=cpu_elementwise.maximum,
        meta=meta_elementwise.binary("maximum"),
        function=("maximum",),
        method=("maximum",),
        out=True,
    ),
    F(
        "minimum(Tensor self, Tensor other) -> Tensor",
        cpu=cpu_elementwise.minimum,
        meta=meta_elementwise.binary("minimum"),
        function=("minimum",),
        method=("minimum",),
        out=True,
    ),
    # -- comparisons and logical ops ------------------------------------------------------
    F(
        "eq(Tensor self, Tensor other) -> Tensor",
        cpu=cpu_elementwise.eq,
        meta=meta_elementwise.comparison("eq"),
        function=("eq",),
        method=("eq", "__eq__"),
        out=True,
    ),
    F(
        "ne(Tensor self, Tensor other) -> Tensor",
        cpu=cpu_elementwise.ne,
        meta=meta_elementwise.comparison("ne"),
        function=("ne", "not_equal"),
        method=("ne", "not_equal", "__ne__"),
        out=True,
    ),
    F(
        "lt(Tensor self, Tensor other) -> Tensor",
        cpu=cpu_elementwise.lt,
        meta=meta_elementwise.comparison("lt"),
        function=("lt", "less"),
        method=("lt", "less", "__lt__"),
        out=True,
    ),
    F(
        "le(Tensor self, Tensor other) -> Tensor",
        cpu=cpu_elementwise.le,
        meta=meta_elementwise.comparison("le"),
        function=("le", "less_equal"),
        method=("le", "less_equal", "__le__"),
        out=True,
    ),
    F(
        "gt(Tensor self, Tensor other) -> Tensor",
        cpu=cpu_elementwise.gt,
        meta=meta_elementwise.comparison("gt"),
        function=("gt", "greater"),
        method=("gt", "greater", "__gt__"),
        out=True,
    ),
    F(
        "ge(Tensor self, Tensor other) -> Tensor",
        cpu=cpu_elementwise.ge,
        meta=meta_elementwise.comparison("ge"),
        function=("ge", "greater_equal"),
        method=("ge", "greater_equal", "__ge__"),
        out=True,
    ),
    F(
        "logical_and(Tensor self, Tensor other) -> Tensor",
        cpu=cpu_elementwise.logical_and,
        meta=meta_elementwise.logical("logical_and"),
        function=("logical_and",),
        method=("logical_and",),
        out=True,
    ),
    F(
        "logical_or(Tensor self, Tensor other) -> Tensor",
        cpu=cpu_elementwise.logical_or,
        meta=meta_elementwise.logical("logical_or"),
        function=("logical_or",),
        method=("logical_or",),
        out=True,
    ),
    F(
        "logical_xor(Tensor self, Tensor other) -> Tensor",
        cpu=cpu_elementwise.logical_xor,
        meta=meta_elementwise.logical("logical_xor"),
        function=("logical_xor",),
        method=("logical_xor",),
        out=True,
    ),
    F(
        "bitwise_and(Tensor self, Tensor other) -> Tensor",
        cpu=cpu_elementwise.bitwise_and,
        meta=meta_elementwise.binary("bitwise_and"),
        function=("bitwise_and",),
        method=("bitwise_and", "__and__", "__rand__"),
        out=True,
    ),
    F(
        "bitwise_or(Tensor self, Tensor other) -> Tensor",
        cpu=cpu_elementwise.bitwise_or,
        meta=meta_elementwise.binary("bitwise_or"),
        function=("bitwise_or",),
        method=("bitwise_or", "__or__", "__ror__"),
        out=True,
    ),
    F(
        "bitwise_xor(Tensor self, Tensor other) -> Tensor",
        cpu=cpu_elementwise.bitwise_xor,
        meta=meta_elementwise.binary("bitwise_xor"),
        function=("bitwise_xor",),
        method=("bitwise_xor", "__xor__", "__rxor__"),
        out=True,
    ),
    # -- unary ----------------------------------------------------------------------------
    F(
        "exp(Tensor self) -> Tensor",
        cpu=cpu_elementwise.exp,
        meta=meta_elementwise.unary_float("exp"),
        function=("exp",),
        method=("exp",),
        out=True,
    ),
    F(
        "log(Tensor self) -> Tensor",
        cpu=cpu_elementwise.log,
        meta=meta_elementwise.unary_float("log"),
        function=("log",),
        method=("log",),
        out=True,
    ),
    F(
        "log1p(Tensor self) -> Tensor",
        cpu=cpu_elementwise.log1p,
        meta=meta_elementwise.unary_float("log1p"),
        function=("log1p",),
        method=("log1p",),
        out=True,
    ),
    F(
        "expm1(Tensor self) -> Tensor",
        cpu=cpu_elementwise.expm1,
        meta=meta_elementwise.unary_float("expm1"),
        function=("expm1",),
        method=("expm1",),
        out=True,
    ),
    F(
        "log2(Tensor self) -> Tensor",
        cpu=cpu_elementwise.log2,
        meta=meta_elementwise.unary_float("log2"),
        function=("log2",),
        method=("log2",),
        out=True,
    ),
    F(
        "log10(Tensor self) -> Tensor",
        cpu=cpu_elementwise.log10,
        meta=meta_elementwise.unary_float("log10"),
        function=("log10",),
        method=("log10",),
        out=True,
    ),
    F(
        "sqrt(Tensor self) -> Tensor",
        cpu=cpu_elementwise.sqrt,
        meta=meta_elementwise.unary_float("sqrt"),
        function=("sqrt",),
        method=("sqrt",),
        out=True,
    ),
    F(
        "rsqrt(Tensor self) -> Tensor",
        cpu=cpu_elementwise.rsqrt,
        meta=meta_elementwise.unary_float("rsqrt"),
        function=("rsqrt",),
        method=("rsqrt",),
        out=True,
    ),
    F(
        "reciprocal(Tensor self) -> Tensor",
        cpu=cpu_elementwise.reciprocal,
        meta=meta_elementwise.unary_float("reciprocal"),
        function=("reciprocal",),
        method=("reciprocal",),
        out=True,
    ),
    F(
        "sin(Tensor self) -> Tensor",
        cpu=cpu_elementwise.sin,
        meta=meta_elementwise.unary_float("sin"),
        function=("sin",),
        method=("sin",),
        out=True,
    ),
    F(
        "cos(Tensor self) -> Tensor",
        cpu=cpu_elementwise.cos,
        meta=meta_elementwise.unary_float("cos"),
        function=("cos",),
        method=("cos",),
        out=True,
    ),
    F(
        "tanh(Tensor self) -> Tensor",
        cpu=cpu_elementwise.tanh,
        meta=meta_elementwise.unary_float("tanh"),
        function=("tanh",),
        method=("tanh",),
        out=True,
    ),
    F(
        "sigmoid(Tensor self) -> Tensor",
        cpu=cpu_elementwise.sigmoid,
        meta=meta_elementwise.unary_float("sigmoid"),
        function=("sigmoid",),
        method=("sigmoid",),
        out=True,
    ),
    F(
        "erf(Tensor self) -> Tensor",
        cpu=cpu_elementwise.erf,
        meta=meta_elementwise.unary_float("erf"),
        function=("erf",),
        method=("erf",),
        out=True,
    ),
    F(
        "neg(Tensor self) -> Tensor",
        cpu=cpu_elementwise.neg,
        meta=meta_elementwise.unary_same("neg"),
        function=("neg", "negative"),
        method=("neg", "negative", "__neg__"),
        out=True,
    ),
    F(
        "abs(Tensor self) -> Tensor",
        cpu=cpu_elementwise.abs,
        meta=meta_elementwise.unary_same("abs"),
        function=("abs", "absolute"),
        method=("abs", "absolute", "__abs__"),
        out=True,
    ),
    F(
        "sign(Tensor self) -> Tensor",
        cpu=cpu_elementwise.sign,
        meta=meta_elementwise.unary_same("sign"),
        function=("sign",),
        method=("sign",),
        out=True,
    ),
    F(
        "relu(Tensor self) -> Tensor",
        cpu=cpu_elementwise.relu,
        meta=meta_elementwise.unary_same("relu"),
        function=("relu",),
        method=("relu",),
    ),
    F(
        "bitwise_not(Tensor self) -> Tensor",
        cpu=cpu_elementwise.bitwise_not,
        meta=meta_elementwise.unary_same("bitwise_not"),
        function=("bitwise_not",),
        method=("bitwise_not",),
        out=True,
        python={"Tensor.__invert__": elementwise.invert},
    ),
    F(
        "logical_not(Tensor self) -> Tensor",
        cpu=cpu_elementwise.logical_not,
        meta=meta_elementwise.unary_bool("logical_not"),
        function=("logical_not",),
        method=("logical_not",),
        out=True,
    ),
    F(
        "clamp(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor",
        cpu=cpu_elementwise.clamp,
        meta=meta_elementwise.clamp,
        function=("clamp", "clip"),
        method=("clamp", "clip"),
        out=True,
    ),
    # -- rounding ---------------------------------------------------------------------------
    F(
        "ceil(Tensor self) -> Tensor",
        cpu=cpu_elementwise.ceil,
        meta=meta_elementwise.unary_same("ceil"),
        function=("ceil",),
        method=("ceil",),
        out=True,
    ),
    F(
        "floor(Tensor self) -> Tensor",
        cpu=cpu_elementwise.floor,
        meta=meta_elementwise.unary_same("floor"),
        function=("floor",),
        method=("floor",),
        out=True,
    ),
    F(
        "trunc(Tensor self) -> Tensor",
        cpu=cpu_elementwise.trunc,
        meta=meta_elementwise.unary_same("trunc"),
        function=("trunc", "fix"),
        method=("trunc", "fix"),
        out=True,
    ),
    # torch has two overloads, round and round.decimals (RoundBackward0 / RoundBackward1);
    # one schema here, whose node is RoundBackward1 when decimals is not 0 (see derivatives.py).
    F(
        "round(Tensor self, *, int decimals=0) -> Tensor",
        cpu=cpu_elementwise.round,
        meta=meta_elementwise.round,
        function=("round",),
        method=("round",),
        out=True,
    ),
    F(
        "frac(Tensor self) -> Tensor",
        cpu=cpu_elementwise.frac,
        meta=meta_elementwise.unary_same("frac"),
        function=("frac",),
        method=("frac",),
        out=True,
    ),
    F(
        "clamp_min(Tensor self, Tensor min) -> Tensor",
        cpu=cpu_elementwise.clamp_min,
        meta=meta_elementwise.clamp_min,
        function=("clamp_min",),
        method=("clamp_min",),
        out=True,
    ),
    F(
        "clamp_max(Tensor self, Tensor max) -> Tensor",
        cpu=cpu_elementwise.clamp_max,
        meta=meta_elementwise.clamp_max,
        function=("clamp_max",),
        method=("clamp_max",),
        out=True,
    ),
    F(
        "where(Tensor condition, Tensor self, Tensor other) -> Tensor",
        cpu=cpu_elementwise.where,
        meta=meta_elementwise.where,
        method=("where",),
        python={"where": elementwise.where},  # also torch's where(condition) form
    ),
    F(
        "masked_fill(Tensor self, Tensor mask, Scalar value) -> Tensor",
        cpu=cpu_indexing.masked_fill,
        meta=meta_indexing.masked_fill,
        function=("masked_fill",),
        method=("masked_fill",),
    ),
    # -- in-place elementwise -------------------------------------------------------------
    # The in-place unary forms: the out-of-place kernel's result written through ``self``;
    # autograd records the out-of-place entry's node (TanhBackward0 for tanh_), as torch does.
    F(
        "exp_(Tensor(a!) self) -> Tensor(a!)",
        cpu=cpu_inplace.unary_("exp_", cpu_elementwise.exp),
        meta=meta_elementwise.unary_inplace("exp_", rules.float_dtype),
        method=("exp_",),
    ),
    F(
        "log_(Tensor(a!) self) -> Tensor(a!)",
        cpu=cpu_inplace.unary_("log_", cpu_elementwise.log),
        meta=meta_elementwise.unary_inplace("log_", rules.float_dtype),
        method=("log_",),
    ),
    F(
        "log1p_(Tensor(a!) self) -> Tensor(a!)",
        cpu=cpu_inplace.unary_("log1p_", cpu_elementwise.log1p),
        meta=meta_elementwise.unary_inplace("log1p_", rules.float_dtype),
        method=("log1p_",),
    ),
    F(
        "expm1_(Tensor(a!) self) -> Tensor(a!)",
        cpu=cpu_inplace.unary_("expm1_", cpu_elementwise.expm1),
        meta=meta_elementwise.unary_inplace("expm1_", rules.float_dtype),
        method=("expm1_",),
    ),
    F(
        "log2_(Tensor(a!) self) -> Tensor(a!)",
        cpu=cpu_inplace.unary_("log2_", cpu_elementwise.log2),
        meta=meta_elementwise.unary_inplace("log2_", rules.float_dtype),
        method=("log2_",),
    ),
    F(
        "log10_(Tensor(a!) self) -> Tensor(a!)",
        cpu=cpu_inplace.unary_("log10_", cpu_elementwise.log10),
        meta=meta_elementwise.unary_inplace("log10_", rules.float_dtype),
        method=("log10_",),
    ),
    F(
        "sqrt_(Tensor(a!) self) -> Tensor(a!)",
        cpu=cpu_inplace.unary_("sqrt_", cpu_elementwise.sqrt),
        meta=meta_elementwise.unary_inplace("sqrt_", rules.float_dtype),
        method=("sqrt_",),
    ),
    F(
        "rsqrt_(Tensor(a!) self) -> Tensor(a!)",
        cpu=cpu_inplace.unary_("rsqrt_", cpu_elementwise.rsqrt),
        meta=meta_elementwise.unary_inplace("rsqrt_", rules.float_dtype),
        method=("rsqrt_",),
    ),
    F(
        "reciprocal_(Tensor(a!) self) -> Tensor(a!)",
        cpu=cpu_inplace.unary_("reciprocal_", cpu_elementwise.reciprocal),
        meta=meta_elementwise.unary_inplace("reciprocal_", rules.float_dtype),
        method=("reciprocal_",),
    ),
    F(
        "sin_(Tensor(a!) self) -> Tensor(a!)",
        cpu=cpu_inplace.unary_("sin_", cpu_elementwise.sin),
        meta=meta_elementwise.unary_inplace("sin_", rules.float_dtype),
        method=("sin_",),
    ),
    F(
        "cos_(Tensor(a!) self) -> Tensor(a!)",
        cpu=cpu_inplace.unary_("cos_", cpu_elementwise.cos),
        meta=meta_elementwise.unary_inplace("cos_", rules.float_dtype),
        method=("cos_",),
    ),
    F(
        "tanh_(Tensor(a!) self) -> Tensor(a!)",
        cpu=cpu_inplace.unary_("tanh_", cpu_elementwise.tanh),
        meta=meta_elementwise.unary_inplace("tanh_", rules.float_dtype),
        method=("tanh_",),
    ),
    F(
        "sigmoid_(Tensor(a!) self) -> Tensor(a!)",
        cpu=cpu_inplace.unary_("sigmoid_", cpu_elementwise.sigmoid),
        meta=meta_elementwise.unary_inplace("sigmoid_", rules.float_dtype),
        method=("sigmoid_",),
    ),
    F(
        "erf_(Tensor(a!) self) -> Tensor(a!)",
        cpu=cpu_inplace.unary_("erf_", cpu_elementwise.erf),
        meta=meta_elementwise.unary_inplace("erf_", rules.float_dtype),
        method=("erf_",),
    ),
    F(
        "neg_(Tensor(a!) self) -> Tensor(a!)",
        cpu=cpu_inplace.unary_("neg_", cpu_elementwise.neg),
        meta=meta_elementwise.unary_inplace("neg_"),
        method=("neg_", "negative_"),
    ),
    F(
        "abs_(Tensor(a!) self) -> Tensor(a!)",
        cpu=cpu_inplace.unary_("abs_", cpu_elementwise.abs),
        meta=meta_elementwise.unary_inplace("abs_"),
        method=("abs_", "absolute_"),
    ),
    F(
        "sign_(Tensor(a!) self) -> Tensor(a!)",
        cpu=cpu_inplace.unary_("sign_", cpu_elementwise.sign),
        meta=meta_elementwise.unary_inplace("sign_"),
        method=("sign_",),
    ),
    F(
        "relu_(Tensor(a!) self) -> Tensor(a!)",
        cpu=cpu_inplace.unary_("relu_", cpu_elementwise.relu),
        meta=meta_elementwise.unary_inplace("relu_"),
        method=("relu_",),
    ),
    F(
        "ceil_(Tensor(a!) self) -> Tensor(a!)",
        cpu=cpu_inplace.unary_("ceil_", cpu_elementwise.ceil),
        meta=meta_elementwise.unary_inplace("ceil_"),
        method=("ceil_",),
    ),
    F(
        "floor_(Tensor(a!) self) -> Tensor(a!)",
        cpu=cpu_inplace.unary_("floor_", cpu_elementwise.floor),
        meta=meta_elementwise.unary_inplace("floor_"),
        method=("floor_",),
    ),
    F(
        "frac_(Tensor(a!) self) -> Tensor(a!)",
        cpu=cpu_inplace.unary_("frac_", cpu_elementwise.frac),
        meta=meta_elementwise.unary_inplace("frac_"),
        method=("frac_",),
    ),
    F(
        "trunc_(Tensor(a!) self) -> Tensor(a!)",
        cpu=cpu_inplace.unary_("trunc_", cpu_elementwise.trunc),
        meta=meta_elementwise.unary_inplace("trunc_"),
        method=("trunc_", "fix_"),
    ),
    F(
        "round_(Tensor(a!) self, *, int decimals=0) -> Tensor(a!)",
        cpu=cpu_inplace.unary_("round_", cpu_elementwise.round),
        meta=meta_elementwise.unary_inplace("round_"),
        method=("round_",),
    ),
    F(
        "clamp_min_(Tensor(a!) self, Tensor min) -> Tensor(a!)",
        cpu=cpu_inplace.unary_("clamp_min_", cpu_elementwise.clamp_min),
        meta=meta_elementwise.unary_inplace("clamp_min_"),
        method=("clamp_min_",),
    ),
    F(
        "clamp_max_(Tensor(a!) self, Tensor max) -> Tensor(a!)",
        cpu=cpu_inplace.unary_("clamp_max_", cpu_elementwise.clamp_max),
        meta=meta_elementwise.unary_inplace("clamp_max_"),
        method=("clamp_max_",),
    ),
    F(
        "add_(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
        cpu=cpu_inplace.add_,
        meta=meta_elementwise.add_sub_("add_"),
        method=("add_", "__iadd__"),
    ),
    F(
        "sub_(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
        cpu=cpu_inplace.sub_,
        meta=meta_elementwise.add_sub_("sub_"),
        method=("sub_", "subtract_", "__isub__"),
    ),
    F(
        "mul_(Tensor(a!) self, Tensor other) -> Tensor(a!)",
        cpu=cpu_inplace.mul_,
        meta=meta_elementwise.inplace("mul_"),
        method=("mul_", "multiply_", "__imul__"),
    ),
    F(
        "div_(Tensor(a!) self, Tensor other, *, str? rounding_mode=None) -> Tensor(a!)",
        cpu=cpu_inplace.div_,
        meta=meta_elementwise.inplace("div_", rules.true_divide_dtype),
        method=("div_", "divide_", "__itruediv__"),
    ),
    F(
        "pow_(Tensor(a!) self, Tensor exponent) -> Tensor(a!)",
        cpu=cpu_inplace.pow_,
        meta=meta_elementwise.inplace("pow_"),
        method=("pow_", "__ipow__"),
    ),
    F(
        "clamp_(Tensor(a!) self, Tensor? min=None, Tensor? max=None) -> Tensor(a!)",
        cpu=cpu_inplace.clamp_,
        meta=meta_elementwise.clamp_,
        method=("clamp_", "clip_"),
    ),
    F(
        "copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)",
        cpu=cpu_inplace.copy_,
        meta=meta_elementwise.copy_,
        method=("copy_",),
    ),
    F(
        "fill_(Tensor(a!) self, Scalar value) -> Tensor(a!)",
        cpu=cpu_inplace.fill_,
        meta=meta_elementwise.fill_,
        method=("fill_",),
    ),
    F(
        "zero_(Tensor(a!) self) -> Tensor(a!)",
        cpu=cpu_inplace.zero_,
        meta=meta_elementwise.zero_,
        method=("zero_",),
    ),
    F(
        "masked_fill_(Tensor(a!) self, Tensor mask, Scalar value) -> Tensor(a!)",
        cpu=cpu_inplace.masked_fill_,
        meta=meta_elementwise.masked_fill_,
        method=("masked_fill_",),
    ),
    # -- reductions -----------------------------------------------------------------------
    F(
        "sum(Tensor self, int[]? dim=None, bool keepdim=False, *, ScalarType? dtype=None)"
        " -> Tensor",
        cpu=cpu_reduction.sum,
        meta=meta_reduction.sum,
        function=("sum",),
        method=("sum",),
        out=True,
        numpy=True,
    ),
    F(
        "prod(Tensor self, int? dim=None, bool keepdim=False, *, ScalarType? dtype=None)"
        " -> Tensor",
        cpu=cpu_reduction.prod,
        meta=meta_reduction.prod,
        function=("prod",),
        method=("prod",),
        out=True,
        numpy=True,
    ),
    F(
        "mean(Tensor self, int[]? dim=None, bool keepdim=False, *, ScalarType? dtype=None)"
        " -> Tensor",
        cpu=cpu_reduction.mean,
        meta=meta_reduction.mean,
        function=("mean",),
        method=("mean",),
        out=True,
        numpy=True,
    ),
    F(
        "amax(Tensor self, int[] dim=[], bool keepdim=False) -> Tensor",
        cpu=cpu_reduction.amax,
        meta=meta_reduction.amax,
        function=("amax",),
        method=("amax",),
        out=True,
        numpy=True,
    ),
    F(
        "amin(Tensor self, int[] dim=[], bool keepdim=False) -> Tensor",
        cpu=cpu_reduction.amin,
        meta=meta_reduction.amin,
        function=("amin",),
        method=("amin",),
        out=True,
        numpy=True,
    ),
    F(
        "max(Tensor self) -> Tensor",
        cpu=cpu_reduction.max,
        meta=meta_reduction.max,
        python={"max": reduction.max, "Tensor.max": reduction.max},
    ),
    F(
        "min(Tensor self) -> Tensor",
        cpu=cpu_reduction.min,
        meta=meta_reduction.min,
        python={"min": reduction.min, "Tensor.min": reduction.min},
    ),
    F(
        "max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
        cpu=cpu_reduction.max_dim,
        meta=meta_reduction.max_dim,
    ),
    F(
        "min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
        cpu=cpu_reduction.min_dim,
        meta=meta_reduction.min_dim,
    ),
    F(
        "argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor",
        cpu=cpu_reduction.argmax,
        meta=meta_reduction.argmax,
        function=("argmax",),
        method=("argmax",),
        numpy=True,
    ),
    F(
        "argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor",
        cpu=cpu_reduction.argmin,
        meta=meta_reduction.argmin,
        function=("argmin",),
        method=("argmin",),
        numpy=True,
    ),
    F(
        "var(Tensor self, int[]? dim=None, *, Scalar? correction=1, bool keepdim=False)"
        " -> Tensor",
        cpu=cpu_reduction.var,
        meta=meta_reduction.var,
        python={"var": reduction.var, "Tensor.var": reduction.var},
    ),
    F(
        "std(Tensor self, int[]? dim=None, *, Scalar? correction=1, bool keepdim=False)"
        " -> Tensor",
        cpu=cpu_reduction.std,
        meta=meta_reduction.std,
        python={"std": reduction.std, "Tensor.std": reduction.std},
    ),
    F(
        "logsumexp(Tensor self, int[] dim, bool keepdim=False) -> Tensor",
        cpu=cpu_reduction.logsumexp,
        meta=meta_reduction.logsumexp,
        function=("logsumexp",),
        method=("logsumexp",),
        out=True,
        numpy=True,
    ),
    F(
        "softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
        cpu=cpu_reduction.softmax,
        meta=meta_reduction.softmax,
        function=("softmax",),
        method=("softmax",),
        numpy=True,
    ),
    F(
        "log_softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
        cpu=cpu_reduction.log_softmax,
        meta=meta_reduction.log_softmax,
        function=("log_softmax",),
        method=("log_softmax",),
        numpy=True,
    ),
    # -- matrix products ------------------------------------------------------------------
    F(
        "mm(Tensor self, Tensor mat2) -> Tensor",
        cpu=cpu_linalg.mm,
        meta=meta_linalg.mm,
        function=("mm",),
        method=("mm",),
        out=True,
    ),
    F(
        "bmm(Tensor self, Tensor mat2) -> Tensor",
        cpu=cpu_linalg.bmm,
        meta=meta_linalg.bmm,
        function=("bmm",),
        method=("bmm",),
        out=True,
    ),
    F(
        "mv(Tensor self, Tensor vec) -> Tensor",
        cpu=cpu_linalg.mv,
        meta=meta_linalg.mv,
        function=("mv",),
        method=("mv",),
        out=True,
    ),
    F(
        "dot(Tensor self, Tensor tensor) -> Tensor",
        cpu=cpu_linalg.dot,
        meta=meta_linalg.dot,
        function=("dot",),
        method=("dot",),
        out=True,
    ),
    F(
        "outer(Tensor self, Tensor vec2) -> Tensor",
        composite=linalg.outer_composite,
        function=("outer", "ger"),
        method=("outer", "ger"),
        out=True,
    ),
    F(
        "addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1)"
        " -> Tensor",
        cpu=cpu_linalg.addmm,
        meta=meta_linalg.addmm,
        function=("addmm",),
        method=("addmm",),
        out=True,
    ),
    F(
        "matmul(Tensor self, Tensor other) -> Tensor",
        composite=linalg.matmul_composite,
        function=("matmul",),
        method=("matmul", "__matmul__"),
        out=True,
        python={"Tensor.__rmatmul__": linalg.rmatmul},
    ),
    F(
        "linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor",
        composite=linalg.linear_composite,
    ),
    # -- views (one geometry-only kernel serves every backend) ----------------------------
    F(
        "transpose(Tensor(a) self, int dim0, int dim1) -> Tensor(a)",
        cpu=views.transpose,
        meta=views.transpose,
        function=("transpose", "swapaxes", "swapdims"),
        method=("transpose", "swapaxes", "swapdims"),
        python={"Tensor.transpose_": shape.in_place_view("transpose_")},
    ),
    F(
        "t(Tensor(a) self) -> Tensor(a)",
        cpu=views.t,
        meta=views.t,
        function=("t",),
        method=("t",),
        python={"Tensor.t_": shape.in_place_view("t_")},
    ),
    F(
        "permute(Tensor(a) self, int[] dims) -> Tensor(a)",
        cpu=views.permute,
        meta=views.permute,
        function=("permute",),
        python={"Tensor.permute": shape.permute_method},
    ),
    F(
        "view(Tensor(a) self, int[] size) -> Tensor(a)",
        cpu=views.view,
        meta=views.view,
        python={"Tensor.view": shape.view_method, "Tensor.view_as": shape.view_as},
    ),
    F(
        "expand(Tensor(a) self, int[] size) -> Tensor(a)",
        cpu=views.expand,
        meta=views.expand,
        function=("broadcast_to",),
        method=("broadcast_to",),
        rename={"size": "shape"},
        python={"Tensor.expand": shape.expand_method, "Tensor.expand_as": shape.expand_as},
    ),
    F(
        "unsqueeze(Tensor(a) self, int dim) -> Tensor(a)",
        cpu=views.unsqueeze,
        meta=views.unsqueeze,
        function=("unsqueeze",),
        method=("unsqueeze",),
        numpy=True,
        python={"Tensor.unsqueeze_": shape.in_place_view("unsqueeze_")},
    ),
    F(
        "squeeze(Tensor(a) self, int[]? dim=None) -> Tensor(a)",
        cpu=views.squeeze,
        meta=views.squeeze,
        function=("squeeze",),
        method=("squeeze",),
        numpy=True,
        python={"Tensor.squeeze_": shape.in_place_view("squeeze_")},
    ),
    # No public binding (Tensor.squeeze_ above refuses tensors that require grad): matmul
    # of a vector and a matrix squeezes its mm result in place, as torch's does.
    F(
        "squeeze_(Tensor(a!) self, int[]? dim=None) -> Tensor(a!)",
        cpu=views.squeeze_,
        meta=views.squeeze_,
    ),
    F(
        "select(Tensor(a) self, int dim, int index) -> Tensor(a)",
        cpu=views.select,
        meta=views.select,
        function=("select",),
        method=("select",),
    ),
    F(
        "slice(Tensor(a) self, int dim=0, int? start=None, int? end=None, int step=1)"
        " -> Tensor(a)",
        cpu=views.slice,
        meta=views.slice,
    ),
    F(
        "diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)",
        cpu=views.diagonal,
        meta=views.diagonal,
        function=("diagonal",),
        method=("diagonal",),
    ),
    F(
        "unfold(Tensor(a) self, int dimension, int size, int step) -> Tensor(a)",
        cpu=views.unfold,
        meta=views.unfold,
        method=("unfold",),
    ),
    F(
        "as_strided(Tensor(a) self, int[] size, int[] stride, int? storage_offset=None)"
        " -> Tensor(a)",
        cpu=views.as_strided,
        meta=views.as_strided,
        function=("as_strided",),
        method=("as_strided",),
    ),
    F(
        "alias(Tensor(a) self) -> Tensor(a)",
        cpu=views.alias,
        meta=views.alias,
    ),
    # Not a view in the autograd sense (no _base), but shares storage and version counter.
    F(
        "detach(Tensor self) -> Tensor",
        cpu=views.alias,
        meta=views.alias,
        function=("detach",),
        method=("detach",),
        python={"Tensor.detach_": shape.detach_},
    ),
    F(
        "_reshape_alias(Tensor(a) self, int[] size, int[] stride) -> Tensor(a)",
        cpu=views.reshape_alias,
        meta=views.reshape_alias,
    ),
    F(
        "_unsafe_view(Tensor self, int[] size) -> Tensor",
        cpu=shape.unsafe_view_kernel,
        meta=shape.unsafe_view_kernel,
    ),
    # -- shape composites -----------------------------------------------------------------
    F(
        "reshape(Tensor(a) self, int[] shape) -> Tensor(a)",
        composite=shape.reshape_composite,
        function=("reshape",),
        python={"Tensor.reshape": shape.reshape_method, "Tensor.reshape_as": shape.reshape_as},
    ),
    F(
        "narrow(Tensor(a) self, int dim, int start, int length) -> Tensor(a)",
        composite=shape.narrow_composite,
        function=("narrow",),
        method=("narrow",),
    ),
    F(
        "split(Tensor(a) self, int[] split_size, int dim=0) -> Tensor(a)[]",
        cpu=views.split,
        meta=views.split,
        function=("split",),
        method=("split",),
        rename={"self": "tensor", "split_size": "split_size_or_sections"},
    ),
    F(
        "chunk(Tensor(a) self, int chunks, int dim=0) -> Tensor(a)[]",
        composite=shape.chunk_composite,
        function=("chunk",),
        method=("chunk",),
        numpy=True,
    ),
    F(
        "unbind(Tensor(a) self, int dim=0) -> Tensor(a)[]",
        cpu=views.unbind,
        meta=views.unbind,
        function=("unbind",),
        method=("unbind",),
        numpy=True,
    ),
    F(
        "flatten(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)",
        composite=shape.flatten_composite,
        function=("flatten",),
        method=("flatten",),
    ),
    F(
        "unflatten(Tensor(a) self, int dim, int[] sizes) -> Tensor(a)",
        composite=shape.unflatten_composite,
        function=("unflatten",),
        method=("unflatten",),
    ),
    F(
        "movedim(Tensor(a) self, int[] source, int[] destination) -> Tensor(a)",
        composite=shape.movedim_composite,
        function=("movedim", "moveaxis"),
        method=("movedim", "moveaxis"),
    ),
    # -- factories and copies -------------------------------------------------------------
    F(
        "empty(int[] size, *, ScalarType? dtype=None, Device? device=None) -> Tensor",
        cpu=cpu_factory.empty,
        meta=meta_factory.empty,
        python={"empty": with_out(factory.empty), "Tensor.new_empty": factory.new_empty_method},
    ),
    F(
        "empty_strided(int[] size, int[] stride, *, ScalarType? dtype=None, Device? device=None)"
        " -> Tensor",
        cpu=cpu_factory.empty_strided,
        meta=meta_factory.empty_strided,
        python={"empty_strided": factory.empty_strided},
    ),
    F(
        "zeros(int[] size, *, ScalarType? dtype=None, Device? device=None) -> Tensor",
        cpu=cpu_factory.zeros,
        meta=meta_factory.zeros,
        python={"zeros": with_out(factory.zeros), "Tensor.new_zeros": factory.new_zeros_method},
    ),
    F(
        "ones(int[] size, *, ScalarType? dtype=None, Device? device=None) -> Tensor",
        cpu=cpu_factory.ones,
        meta=meta_factory.ones,
        python={"ones": with_out(factory.ones), "Tensor.new_ones": factory.new_ones_method},
    ),
    F(
        "full(int[] size, Scalar fill_value, *, ScalarType? dtype=None, Device? device=None)"
        " -> Tensor",
        cpu=cpu_factory.full,
        meta=meta_factory.full,
        python={"full": with_out(factory.full), "Tensor.new_full": factory.new_full_method},
    ),
    F(
        "arange(Scalar start, Scalar end, Scalar step=1, *, ScalarType? dtype=None,"
        " Device? device=None) -> Tensor",
        cpu=cpu_factory.arange,
        meta=meta_factory.arange,
        python={"arange": with_out(factory.arange)},
    ),
    F(
        "linspace(Scalar start, Scalar end, int steps, *, ScalarType? dtype=None,"
        " Device? device=None) -> Tensor",
        cpu=cpu_factory.linspace,
        meta=meta_factory.linspace,
        python={"linspace": with_out(factory.linspace)},
    ),
    F(
        "eye(int n, int? m=None, *, ScalarType? dtype=None, Device? device=None) -> Tensor",
        cpu=cpu_factory.eye,
        meta=meta_factory.eye,
        python={"eye": with_out(factory.eye)},
    ),
    F(
        "rand(int[] size, *, Generator? generator=None, ScalarType? dtype=None,"
        " Device? device=None) -> Tensor",
        cpu=cpu_factory.rand,
        meta=meta_factory.rand,
        python={"rand": with_out(factory.rand)},
    ),
    F(
        "randn(int[] size, *, Generator? generator=None, ScalarType? dtype=None,"
        " Device? device=None) -> Tensor",
        cpu=cpu_factory.randn,
        meta=meta_factory.randn,
        python={"randn": with_out(factory.randn)},
    ),
    F(
        "randint(int low, int high, int[] size, *, Generator? generator=None,"
        " ScalarType? dtype=None, Device? device=None) -> Tensor",
        cpu=cpu_factory.randint,
        meta=meta_factory.randint,
        python={"randint": factory.randint},
    ),
    F(
        "clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor",
        cpu=cpu_factory.clone,
        meta=meta_factory.clone,
        function=("clone",),
        method=("clone",),
    ),
    F(
        "_to_copy(Tensor self, *, ScalarType? dtype=None, Device? device=None) -> Tensor",
        cpu=cpu_factory._to_copy,
        meta=meta_factory._to_copy,
        python={
            "Tensor.to": factory.to_method,
            "Tensor.type_as": factory.type_as_method,
            "Tensor.cpu": factory.cpu_method,
            "Tensor.cuda": factory.cuda_method,
            "Tensor.float": factory.to_float,
            "Tensor.double": factory.to_double,
            "Tensor.long": factory.to_long,
            "Tensor.int": factory.to_int,
            "Tensor.bool": factory.to_bool,
            "Tensor.half": factory.to_half,
            "Tensor.bfloat16": factory.to_bfloat16,
            "Tensor.short": factory.to_short,
            "Tensor.char": factory.to_char,
            "Tensor.byte": factory.to_byte,
        },
    ),
    F(
        "contiguous(Tensor(a) self) -> Tensor(a)",
        composite=factory.contiguous_composite,
        python={"Tensor.contiguous": factory.contiguous_method},
    ),
    # -- indexing, joining, scattering ----------------------------------------------------
    F(
        "index(Tensor self, Tensor?[] indices) -> Tensor",
        cpu=cpu_indexing.index,
        meta=meta_indexing.index,
    ),
    F(
        "index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool accumulate=False)"
        " -> Tensor(a!)",
        cpu=cpu_indexing.index_put_,
        meta=meta_indexing.index_put_,
        method=("index_put_",),
        python={"index_put": indexing.index_put, "Tensor.index_put": indexing.index_put},
    ),
    F(
        "cat(Tensor[] tensors, int dim=0) -> Tensor",
        cpu=cpu_indexing.cat,
        meta=meta_indexing.cat,
        function=("cat", "concat", "concatenate"),
        out=True,
        numpy=True,
    ),
    F(
        "stack(Tensor[] tensors, int dim=0) -> Tensor",
        cpu=cpu_indexing.stack,
        meta=meta_indexing.stack,
        function=("stack",),
        out=True,
        numpy=True,
    ),
    F(
        "gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor",
        cpu=cpu_indexing.gather,
        meta=meta_indexing.gather,
        function=("gather",),
        method=("gather",),
        out=True,
    ),
    F(
        "scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor",
        cpu=cpu_indexing.scatter_add,
        meta=meta_indexing.scatter_add,
        function=("scatter_add",),
        method=("scatter_add",),
    ),
    F(
        "scatter_add_(Tensor(a!) self, int dim, Tensor index, Tensor src) -> Tensor(a!)",
        cpu=cpu_indexing.scatter_add_,
        meta=meta_indexing.scatter_add_,
        method=("scatter_add_",),
    ),
    F(
        "scatter(Tensor self, int dim, Tensor index, Tensor src) -> Tensor",
        cpu=cpu_indexing.scatter,
        meta=meta_indexing.scatter,
        function=("scatter",),
        method=("scatter",),
    ),
    F(
        "scatter_(Tensor(a!) self, int dim, Tensor index, Tensor src) -> Tensor(a!)",
        cpu=cpu_indexing.scatter_,
        meta=meta_indexing.scatter_,
        method=("scatter_",),
    ),
    F(
        "index_select(Tensor self, int dim, Tensor index) -> Tensor",
        cpu=cpu_indexing.index_select,
        meta=meta_indexing.index_select,
        function=("index_select",),
        method=("index_select",),
        out=True,
    ),
    F(
        "one_hot(Tensor self, int num_classes=-1) -> Tensor",
        cpu=cpu_indexing.one_hot,
        meta=meta_indexing.one_hot,
        function=("one_hot",),
        rename={"self": "tensor"},
    ),
    F(
        "tril(Tensor self, int diagonal=0) -> Tensor",
        cpu=cpu_indexing.tril,
        meta=meta_indexing.tril,
        function=("tril",),
        method=("tril",),
        out=True,
    ),
    F(
        "triu(Tensor self, int diagonal=0) -> Tensor",
        cpu=cpu_indexing.triu,
        meta=meta_indexing.triu,
        function=("triu",),
        method=("triu",),
        out=True,
    ),
    F(
        "nonzero(Tensor self) -> Tensor",
        cpu=cpu_indexing.nonzero,
        meta=meta_indexing.nonzero,
        python={"nonzero": indexing.nonzero, "Tensor.nonzero": indexing.nonzero},
    ),
    F(
        "masked_select(Tensor self, Tensor mask) -> Tensor",
        cpu=cpu_indexing.masked_select,
        meta=meta_indexing.masked_select,
        function=("masked_select",),
        method=("masked_select",),
        out=True,
    ),
    # -- ordering -------------------------------------------------------------------------
    F(
        "cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor",
        cpu=cpu_ordering.cumsum,
        meta=meta_ordering.cumsum,
        function=("cumsum",),
        method=("cumsum",),
        out=True,
        numpy=True,
        python={"Tensor.cumsum_": ordering.cumsum_},
    ),
    F(
        "flip(Tensor self, int[] dims) -> Tensor",
        cpu=cpu_ordering.flip,
        meta=meta_ordering.flip,
        python={"flip": ordering.flip, "Tensor.flip": ordering.flip_method},
    ),
    F(
        "sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)",
        cpu=cpu_ordering.sort,
        meta=meta_ordering.sort,
        python={
            "sort": ordering.sort,
            "Tensor.sort": ordering.sort,
            "argsort": ordering.argsort,
            "Tensor.argsort": ordering.argsort,
        },
    ),
    F(
        "topk(Tensor self, int k, int dim=-1, bool largest=True, bool sorted=True)"
        " -> (Tensor values, Tensor indices)",
        cpu=cpu_ordering.topk,
        meta=meta_ordering.topk,
        python={"topk": ordering.topk, "Tensor.topk": ordering.topk},
    ),
    # -- losses (no public functions, as in torch: whylab.nn.functional calls them) -------
    # ``reduction`` is PyTorch's enum: 0 none, 1 mean, 2 sum.
    F(
        "nll_loss_forward(Tensor self, Tensor target, Tensor? weight, int reduction,"
        " int ignore_index) -> (Tensor output, Tensor total_weight)",
        cpu=cpu_loss.nll_loss_forward,
        meta=meta_loss.nll_loss_forward,
    ),
    F(
        "nll_loss_backward(Tensor grad_output, Tensor self, Tensor target, Tensor? weight,"
        " int reduction, int ignore_index, Tensor total_weight) -> Tensor",
        cpu=cpu_loss.nll_loss_backward,
        meta=meta_loss.nll_loss_backward,
    ),
    F(
        "nll_loss2d_forward(Tensor self, Tensor target, Tensor? weight, int reduction,"
        " int ignore_index) -> (Tensor output, Tensor total_weight)",
        cpu=cpu_loss.nll_loss2d_forward,
        meta=meta_loss.nll_loss2d_forward,
    ),
    F(
        "nll_loss2d_backward(Tensor grad_output, Tensor self, Tensor target, Tensor? weight,"
        " int reduction, int ignore_index, Tensor total_weight) -> Tensor",
        cpu=cpu_loss.nll_loss2d_backward,
        meta=meta_loss.nll_loss2d_backward,
    ),
    F(
        "nll_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=1,"
        " int ignore_index=-100) -> Tensor",
        composite=loss.nll_loss_composite,
    ),
    F(
        "nll_loss2d(Tensor self, Tensor target, Tensor? weight=None, int reduction=1,"
        " int ignore_index=-100) -> Tensor",
        composite=loss.nll_loss2d_composite,
    ),
    F(
        "nll_loss_nd(Tensor self, Tensor target, Tensor? weight=None, int reduction=1,"
        " int ignore_index=-100) -> Tensor",
        composite=loss.nll_loss_nd_composite,
    ),
    F(
        "cross_entropy_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=1,"
        " int ignore_index=-100, float label_smoothing=0.0) -> Tensor",
        composite=loss.cross_entropy_composite,
    ),
    # -- neural-network operators (nn.functional calls them, as torch's does) -------------
    F(
        "gelu(Tensor self, *, str approximate='none') -> Tensor",
        cpu=cpu_nn.gelu,
        meta=meta_nn.gelu,
    ),
    F(
        "mse_loss(Tensor self, Tensor target, int reduction=1) -> Tensor",
        cpu=cpu_nn.mse_loss,
        meta=meta_nn.mse_loss,
    ),
    F(
        "native_layer_norm(Tensor input, int[] normalized_shape, Tensor? weight, Tensor? bias,"
        " float eps) -> (Tensor, Tensor, Tensor)",
        cpu=cpu_nn.native_layer_norm,
        meta=meta_nn.native_layer_norm,
    ),
    F(
        "layer_norm(Tensor input, int[] normalized_shape, Tensor? weight=None,"
        " Tensor? bias=None, float eps=1e-05) -> Tensor",
        composite=nn.layer_norm_composite,
        function=("layer_norm",),
    ),
    # -- fused backward operators (for the formulas in autograd/derivatives.py) -----------
    F(
        "gelu_backward(Tensor grad_output, Tensor self, *, str approximate='none') -> Tensor",
        cpu=cpu_nn.gelu_backward,
        meta=meta_nn.gelu_backward,
    ),
    F(
        "mse_loss_backward(Tensor grad_output, Tensor self, Tensor target, int reduction)"
        " -> Tensor",
        cpu=cpu_nn.mse_loss_backward,
        meta=meta_nn.mse_loss_backward,
    ),
    F(
        "threshold_backward(Tensor grad_output, Tensor self, Scalar threshold) -> Tensor",
        cpu=cpu_backward.threshold_backward,
        meta=meta_backward.threshold_backward,
    ),
    F(
        "_softmax_backward_data(Tensor grad_output, Tensor output, int dim) -> Tensor",
        cpu=cpu_backward._softmax_backward_data,
        meta=meta_backward._softmax_backward_data,
    ),
    F(
        "_log_softmax_backward_data(Tensor grad_output, Tensor output, int dim) -> Tensor",
        cpu=cpu_backward._log_softmax_backward_data,
        meta=meta_backward._log_softmax_backward_data,
    ),
    F(
        "tanh_backward(Tensor grad_output, Tensor output) -> Tensor",
        cpu=cpu_backward.tanh_backward,
        meta=meta_backward.tanh_backward,
    ),
    F(
        "sigmoid_backward(Tensor grad_output, Tensor output) -> Tensor",
        cpu=cpu_backward.sigmoid_backward,
        meta=meta_backward.sigmoid_backward,
    ),
]

#: Public names with no operator of their own: Python composites of the operators above
#: (``isnan`` is ``ne(t, t)``), constructors and conversions that take Python data, and
#: the legacy and sampling helpers.
PYTHON_ONLY = {
    "isnan": elementwise.isnan,
    "Tensor.isnan": elementwise.isnan,
    "isinf": elementwise.isinf,
    "Tensor.isinf": elementwise.isinf,
    "isfinite": elementwise.isfinite,
    "Tensor.isfinite": elementwise.isfinite,
    "Tensor.__pos__": elementwise.positive,
    "Tensor.__format__": protocols.format_,
    "Tensor.__getattr__": protocols.tensor_getattr,
    "all": reduction.all_,
    "Tensor.all": reduction.all_,
    "any": reduction.any_,
    "Tensor.any": reduction.any_,
    "broadcast_shapes": shape.broadcast_shapes,
    "broadcast_tensors": shape.broadcast_tensors,
    "Tensor.T": property(shape.T),
    "Tensor.mT": property(shape.mT),
    "Tensor.mH": property(shape.mT),  # no complex dtypes: the adjoint is the transpose
    "Tensor.__getitem__": indexing.getitem,
    "Tensor.__setitem__": indexing.setitem,
    "roll": ordering.roll,
    "Tensor.roll": ordering.roll,
    "Tensor.repeat": ordering.repeat,
    "repeat_interleave": ordering.repeat_interleave,
    "Tensor.repeat_interleave": ordering.repeat_interleave,
    "equal": reduction.equal,
    "Tensor.equal": reduction.equal,
    "trace": reduction.trace,
    "Tensor.trace": reduction.trace,
    "tensor": factory.tensor,
    "as_tensor": factory.as_tensor,
    "from_numpy": factory.from_numpy,
    "Tensor.new_tensor": factory.new_tensor_method,
    "empty_like": factory.empty_like,
    "zeros_like": factory.zeros_like,
    "ones_like": factory.ones_like,
    "full_like": factory.full_like,
    "rand_like": factory.rand_like,
    "randn_like": factory.randn_like,
    "randint_like": factory.randint_like,
    "Tensor.type": legacy.type_method,
    "index_add": legacy.index_add,
    "Tensor.index_add": legacy.index_add,
    "Tensor.index_add_": legacy.index_add_,
    "bernoulli": sampling.bernoulli,
    "Tensor.bernoulli": sampling.bernoulli,
    "multinomial": sampling.multinomial,
    "Tensor.multinomial": sampling.multinomial,
    "normal": sampling.normal,
    "randperm": sampling.randperm,
    "Tensor.uniform_": sampling.uniform_,
    "Tensor.normal_": sampling.normal_,
    "Tensor.bernoulli_": sampling.bernoulli_,
    "Tensor.random_": sampling.random_,
}

_GENERATED = build(NATIVE_FUNCTIONS, PYTHON_ONLY)

#: Every public function, by name: what ``whylab/__init__.py`` exports.
FUNCTIONS = _GENERATED.functions
#: Every Tensor method and property the table attached, by name.
METHODS = _GENERATED.methods
#: The operators the table defined, by name.
OPERATORS = _GENERATED.operators
