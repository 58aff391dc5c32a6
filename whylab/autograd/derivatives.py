"""The derivatives table: every backward formula whylab knows, in one place.

This is whylab's ``derivatives.yaml``. Each :class:`Derivative` entry names an
operator, the node its backward runs as (PyTorch's node names, so
``type(y.grad_fn).__name__`` matches), and one formula per differentiable
input. The parameter names of a formula say what it needs (see
:mod:`whylab.autograd.spec`): ``grad`` for the incoming gradient, ``result``
for the output, argument names for the inputs, ``self_shape`` for a shape.

Formulas are written with whylab's own differentiable operations, so the
backward pass can itself be recorded (``create_graph=True``) and
differentiated again.

Two things are deliberately *not* in the formulas:

* summing a gradient over broadcast dimensions — the engine does that once for
  every edge (``a + b`` with ``b`` broadcast just returns ``grad`` for ``b``);
* casting a gradient to its input's dtype — the engine does that too.

An in-place operator (``mul_``) uses the entry of its out-of-place form
(``mul``); ``self`` then means the value *before* the write.

Deviations from PyTorch (documented here and in the formulas):

* ``div`` with a ``rounding_mode`` and the rounding ops (``floor``...) have
  zero gradients, as in PyTorch; ``sign`` too.
* composite operators (``matmul``, ``reshape``, ``narrow``, ``outer``,
  ``chunk``...) have no entry: the operators they call record themselves, and
  they call the ones PyTorch's CompositeImplicitAutograd kernels call, so the
  recorded nodes are PyTorch's.
* views that pick scattered elements (``diagonal``, ``unfold``, ``as_strided``,
  strided slices, indexing) share one backward: move each gradient element to
  the source element it came from, found by applying the same op to the
  element numbers ``arange(numel)`` (see :func:`gather_backward_by_index`).
"""

from __future__ import annotations

import math

import numpy as np

from whylab._tensor.tensor import Tensor
from whylab.autograd._broadcast import sum_to_size
from whylab.autograd._ops import ops, zeros_like
from whylab.autograd._strided import source_element_index
from whylab.autograd.spec import REFUSES_GRAD, Derivative

# ----------------------------------------------------------------------------------
# Helpers the formulas share (all built from differentiable ops)
# ----------------------------------------------------------------------------------


def _is_tensor(value) -> bool:
    return isinstance(value, Tensor)


def _reduced_dims(dim, ndim: int) -> tuple:
    """The reduced dimensions as sorted non-negative ints (None or () means all)."""
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return tuple(range(ndim))
    if isinstance(dim, int):
        dim = (dim,)
    return tuple(sorted(d % ndim if ndim else 0 for d in dim))


def restore_reduced_dims(grad, dim, keepdim: bool, ndim: int):
    """Put back the dimensions a reduction removed (as size 1), so ``grad`` broadcasts."""
    if keepdim or ndim == 0:
        return grad
    for d in _reduced_dims(dim, ndim):
        grad = grad.unsqueeze(d)
    return grad


def spread_over_reduced(grad, self_shape, dim, keepdim: bool):
    """Backward of sum: every input element gets the gradient of the sum it went into.

    A 0-dim gradient (every dimension reduced) broadcasts to any shape as it is.
    """
    if grad._sizes:
        grad = restore_reduced_dims(grad, dim, keepdim, len(self_shape))
    return grad.expand(self_shape)


def reduced_count(shape, dim) -> int:
    """How many input elements fold into each output element of a reduction."""
    count = 1
    for d in _reduced_dims(dim, len(shape)):
        count *= shape[d]
    return count


def _index_tensor(array):
    return Tensor._from_numpy_result(np.ascontiguousarray(array, dtype=np.int64))


def scatter_to_source(grad, index, source_shape, dtype):
    """Add ``grad``'s elements into a zero tensor of ``source_shape`` at ``index``.

    ``index`` (NumPy, one entry per element of ``grad``, row-major) is the
    element number in the source each gradient element belongs to; -1 means
    "not from the source" and is dropped. Repeated numbers add up.
    """
    numel = math.prod(source_shape)
    flat = grad.reshape(-1)
    index = np.asarray(index, dtype=np.int64).reshape(-1)
    keep = index >= 0
    if not keep.all():
        flat = flat.index_select(0, _index_tensor(np.nonzero(keep)[0]))
        index = index[keep]
    result = ops.zeros((numel,), dtype, grad.device).scatter_add(0, _index_tensor(index), flat)
    return result.reshape(source_shape)


def gather_backward_by_index(grad, self_shape, pick):
    """Backward of any op that only picks elements of ``self`` (views, indexing).

    ``pick`` applies the forward op to a tensor of the same shape. Applied to
    the element numbers ``arange(numel).reshape(self_shape)`` it tells which
    source element each output element is; the gradient goes back there.
    """
    numel = math.prod(self_shape)
    numbers = Tensor._from_numpy_result(np.arange(numel, dtype=np.int64).reshape(self_shape))
    index = pick(numbers)
    return scatter_to_source(grad, index.numpy(), self_shape, grad.dtype)


def as_strided_backward(grad, source_geometry, view_geometry):
    """Backward of ``as_strided``: each view element's gradient goes to its source element."""
    index = source_element_index(source_geometry, view_geometry)
    return scatter_to_source(grad, index, source_geometry[0], grad.dtype)


def _pad_along(grad, dim: int, before: int, after: int):
    """``grad`` with zero blocks of ``before`` and ``after`` entries added along ``dim``."""
    pieces = []
    if before:
        shape = list(grad._sizes)
        shape[dim] = before
        pieces.append(ops.zeros(shape, grad.dtype, grad.device))
    pieces.append(grad)
    if after:
        shape = list(grad._sizes)
        shape[dim] = after
        pieces.append(ops.zeros(shape, grad.dtype, grad.device))
    return ops.cat(pieces, dim) if len(pieces) > 1 else grad


def slice_backward(grad, self_shape, dim, start, end, step):
    """Backward of ``slice`` (``x[a:b:c]`` along one dim)."""
    dim = dim % len(self_shape)
    first, stop, step = slice(start, end, step).indices(self_shape[dim])
    if step == 1:
        return _pad_along(grad, dim, first, self_shape[dim] - max(stop, first))
    return gather_backward_by_index(
        grad, self_shape, lambda numbers: ops.slice(numbers, dim, start, end, step)
    )


def select_backward(grad, self_shape, dim, index):
    """Backward of ``select``: the gradient fills one slice, zeros elsewhere."""
    dim = dim % len(self_shape)
    index = index % self_shape[dim]
    return _pad_along(grad.unsqueeze(dim), dim, index, self_shape[dim] - index - 1)


GELU_TANH_SCALE = math.sqrt(2.0 / math.pi)
GELU_TANH_CUBIC = 0.044715


def gelu_second_derivative(x, approximate):
    """``gelu''(x)``: ``φ(x) (2 - x²)``, or for the tanh form with ``u = k (x + c x³)``,
    ``t = tanh u``: ``(1 - t²) (u' - x t u'² + 3 k c x²)``."""
    if approximate == "tanh":
        k, c = GELU_TANH_SCALE, GELU_TANH_CUBIC
        t = ((x + c * x * x * x) * k).tanh()
        slope = (1 + 3 * c * x * x) * k
        return (1 - t * t) * (slope - x * t * slope * slope + 3 * k * c * x * x)
    return (x * x * -0.5).exp() * (1 / math.sqrt(2 * math.pi)) * (2 - x * x)


def mse_scale(reduction, count) -> float:
    """The factor of ``mse_loss_backward``: 2, or 2/N for the mean of N elements."""
    return 2.0 / count if reduction == 1 and count else 2.0


def _layer_norm_parts(input, normalized_shape, eps):
    """(normalized dims, normalized input, 1/std), recomputed from ``input`` with
    differentiable ops so that second derivatives flow through the statistics."""
    dims = tuple(range(-len(normalized_shape), 0))
    centered = input - input.mean(dims, keepdim=True)
    rstd = ((centered * centered).mean(dims, keepdim=True) + eps).rsqrt()
    return dims, centered * rstd, rstd


def layer_norm_input_backward(grad, input, normalized_shape, weight, eps):
    """``rstd (g - mean(g) - x̂ mean(g x̂))`` with ``g = grad * weight``, over the
    normalized dims."""
    dims, normalized, rstd = _layer_norm_parts(input, normalized_shape, eps)
    g = grad if weight is None else grad * weight
    mean_g = g.mean(dims, keepdim=True)
    mean_gx = (g * normalized).mean(dims, keepdim=True)
    return rstd * (g - mean_g - normalized * mean_gx)


def layer_norm_weight_backward(grad, input, normalized_shape, eps):
    """``grad * x̂`` (the engine sums it over the batch dimensions)."""
    return grad * _layer_norm_parts(input, normalized_shape, eps)[1]


def squeeze_overload(dim) -> int:
    """Which of torch's squeeze overloads a call is: 0 all dims, 1 one dim, 2 a list."""
    if dim is None:
        return 0
    return 1 if isinstance(dim, int) else 2


def indexed_mask(shape, indices):
    """A bool tensor of ``shape``, True at the elements ``x[indices]`` would pick."""
    numbers = Tensor._from_numpy_result(np.arange(math.prod(shape), dtype=np.int64).reshape(shape))
    picked = ops.index(numbers, indices).numpy().reshape(-1)
    mask = np.zeros(math.prod(shape), dtype=bool)
    mask[picked] = True
    return Tensor._from_numpy_result(mask.reshape(shape))


def evenly_distribute(grad, self, result):
    """Backward of a full max/min: ties share the gradient equally (PyTorch's rule)."""
    mask = self == result
    return ops.where(mask, grad / mask.sum(), 0.0)


def amax_amin_backward(grad, self, result, dim, keepdim):
    """Backward of amax/amin: ties along the reduced dims share the gradient equally."""
    grad = restore_reduced_dims(grad, dim, keepdim, self.ndim)
    result = restore_reduced_dims(result, dim, keepdim, self.ndim)
    mask = self == result
    count = mask.sum(dim=_reduced_dims(dim, self.ndim), keepdim=True)
    return ops.where(mask, grad / count, 0.0)


def value_selecting_backward(grad, dim, indices, self_shape, keepdim):
    """Backward of max/min along a dim: the gradient goes to the selected index."""
    ndim = len(self_shape)
    if ndim == 0:
        return grad
    grad = restore_reduced_dims(grad, dim, keepdim, ndim)
    indices = restore_reduced_dims(indices, dim, keepdim, ndim)
    return ops.zeros(self_shape, grad.dtype, grad.device).scatter_add(dim, indices, grad)


def prod_backward(grad, self, result, dim, keepdim):
    """Backward of prod, correct when inputs contain zeros.

    Without zeros in a reduced group the gradient is ``result / self``. With one
    zero, only the zero entry gets a gradient (the product of the others);
    with two or more, every gradient is zero.
    """
    ndim = self.ndim
    grad = restore_reduced_dims(grad, dim, keepdim, ndim)
    if ndim == 0:
        return grad
    dims = _reduced_dims(dim, ndim)
    is_zero = self == 0
    zero_count = is_zero.sum(dim=dims, keepdim=True)
    nonzero_self = ops.where(is_zero, 1.0, self)
    product_of_nonzeros = nonzero_self
    for d in dims:
        product_of_nonzeros = product_of_nonzeros.prod(dim=d, keepdim=True)
    at_zero = ops.where(zero_count == 1, product_of_nonzeros, 0.0)
    at_nonzero = ops.where(zero_count == 0, product_of_nonzeros / nonzero_self, 0.0)
    return grad * ops.where(is_zero, at_zero, at_nonzero)


def var_backward(grad, self, dim, correction, keepdim):
    """d var / d self = 2 (self - mean) / (N - correction)."""
    grad = restore_reduced_dims(grad, dim, keepdim, self.ndim)
    dims = _reduced_dims(dim, self.ndim)
    count = reduced_count(self._sizes, dim)
    centred = self - self.mean(dim=dims, keepdim=True)
    return grad * centred * (2.0 / (count - correction))


def std_backward(grad, self, result, dim, correction, keepdim):
    """d std / d self = (self - mean) / ((N - correction) std), and 0 where std is 0
    (PyTorch's convention: the derivative does not exist there)."""
    grad = restore_reduced_dims(grad, dim, keepdim, self.ndim)
    result = restore_reduced_dims(result, dim, keepdim, self.ndim)
    dims = _reduced_dims(dim, self.ndim)
    count = reduced_count(self._sizes, dim)
    centred = self - self.mean(dim=dims, keepdim=True)
    # torch's form: mask the factor grad / std, not the product, so that second
    # derivatives match torch's at std == 0 too (0 for self, nan for grad, as torch)
    scale = (grad / (result * (count - correction))).masked_fill(result == 0, 0.0)
    return scale * centred


def pow_backward_self(grad, self, exponent):
    """d self^e / d self = e self^(e-1), and 0 where e == 0 (PyTorch's convention)."""
    if not _is_tensor(exponent):
        if exponent == 0:
            return zeros_like(grad)
        return grad * (exponent * self.pow(exponent - 1))
    return ops.where(exponent == 0, 0.0, grad * (exponent * self.pow(exponent - 1)))


def pow_backward_exponent(grad, self, exponent, result):
    """d b^e / d e = b^e log b, and 0 where b == 0 and e >= 0."""
    if _is_tensor(self):
        undefined_log = (self == 0) & (exponent >= 0)
        return grad * ops.where(undefined_log, 0.0, result * self.log())
    if self == 0:
        return ops.where(exponent >= 0, 0.0, grad * result * -math.inf)
    return grad * result * math.log(self)


def pow_name(self, exponent) -> str:
    if not _is_tensor(exponent):
        return "PowBackward0"
    return "PowBackward1" if _is_tensor(self) else "PowBackward2"


def div_name(rounding_mode) -> str:
    """PyTorch's node of ``div.Tensor`` or, with a rounding mode, of ``div.Tensor_mode``."""
    return "DivBackward0" if rounding_mode is None else "DivBackward2"


def remainder_name(other) -> str:
    """PyTorch's node of ``remainder.Scalar`` (Python number) or ``remainder.Tensor``."""
    return "RemainderBackward1" if _is_tensor(other) else "RemainderBackward0"


def clamp_backward_self(grad, self, min, max):
    keep = None
    if min is not None:
        keep = self >= min
    if max is not None:
        below_max = self <= max
        keep = below_max if keep is None else keep & below_max
    return ops.where(keep, grad, 0.0)


def clamp_backward_min(grad, self, min, max):
    chosen = self < min
    if max is not None:
        chosen = chosen & (min < max)
    return ops.where(chosen, grad, 0.0)


def clamp_backward_max(grad, self, min, max):
    chosen = self > max
    if min is not None:
        chosen = chosen | (max < min)
    return ops.where(chosen, grad, 0.0)


def clamp_name(min, max) -> str:
    return "ClampBackward0" if _is_tensor(min) or _is_tensor(max) else "ClampBackward1"


def mm_mat1_backward(grad, mat2, mat1_geometry, alpha=1):
    """Gradient of ``mat1 @ mat2`` for mat1, laid out like mat1 (PyTorch's rule).

    When mat1 was column-major (a transposed view), the product is taken so
    that it comes out column-major too: ``(mat2 @ grad.T).T``.
    """
    sizes, strides, _ = mat1_geometry
    if strides[0] == 1 and strides[1] == sizes[0] and sizes[0] > 1:
        result = mat2.mm(grad.t()).t()
    else:
        result = grad.mm(mat2.t())
    return result if alpha == 1 else result * alpha


def mm_mat2_backward(grad, mat1, mat2_geometry, alpha=1):
    """Gradient of ``mat1 @ mat2`` for mat2, laid out like mat2 (PyTorch's rule).

    ``F.linear`` multiplies by ``weight.t()``, a column-major view: its gradient
    is then computed as ``(grad.T @ mat1).T``, so that after ``TBackward0`` the
    weight's gradient is row-major like the weight, and AccumulateGrad can keep
    it without a copy.
    """
    sizes, strides, _ = mat2_geometry
    if strides[0] == 1 and strides[1] == sizes[0] and sizes[0] > 1:
        result = grad.t().mm(mat1).t()
    else:
        result = mat1.t().mm(grad)
    return result if alpha == 1 else result * alpha


def maximum_backward(grad, self, other, larger: bool):
    """Gradient of maximum/minimum for ``self``: all of it where self wins, half on ties."""
    wins = self > other if larger else self < other
    return ops.where(self == other, grad / 2, ops.where(wins, grad, 0.0))


def cat_backward(grad, tensors_shapes, dim):
    """Backward of cat: each input gets its slice of the gradient."""
    ndim = len(grad._sizes)
    dim = dim % ndim if ndim else 0
    grads, start = [], 0
    for shape in tensors_shapes:
        if len(shape) == 1 and shape[0] == 0 and ndim != 1:
            grads.append(None)  # legacy empty 1-D input, skipped by cat
            continue
        length = shape[dim]
        grads.append(grad.narrow(dim, start, length))
        start += length
    return grads


def index_select_backward(grad, self_shape, dim, index):
    """Backward of index_select: rows add back into the rows they came from."""
    ndim = len(self_shape)
    if ndim == 0:
        return grad.sum()
    dim = dim % ndim
    shape = [1] * ndim
    shape[dim] = -1
    expanded = index.reshape(shape).expand(grad._sizes)
    return ops.zeros(self_shape, grad.dtype, grad.device).scatter_add(dim, expanded, grad)


# ----------------------------------------------------------------------------------
# The table
# ----------------------------------------------------------------------------------

LN2 = math.log(2.0)
LN10 = math.log(10.0)

DERIVATIVES = [
    # -- arithmetic -------------------------------------------------------------------
    Derivative(
        "add", "AddBackward0",
        self=lambda grad: grad,
        other=lambda grad, alpha: grad if alpha == 1 else grad * alpha,
    ),
    Derivative(
        "sub", "SubBackward0",
        self=lambda grad: grad,
        other=lambda grad, alpha: -grad if alpha == 1 else grad * -alpha,
    ),
    Derivative("add.Scalar", "AddBackward1", self=lambda grad: grad),
    Derivative("mul.Scalar", "MulBackward1", self=lambda grad, other: grad * other),
    Derivative("div.Scalar", "DivBackward1", self=lambda grad, other: grad / other),
    Derivative(
        "rsub", lambda other: "RsubBackward0" if _is_tensor(other) else "RsubBackward1",
        self=lambda grad, alpha: -grad if alpha == 1 else grad * -alpha,
        other=lambda grad: grad,
    ),
    Derivative(
        "mul", "MulBackward0",
        self=lambda grad, other: grad * other,
        other=lambda grad, self: grad * self,
    ),
    Derivative(
        "div", div_name,
        self=lambda grad, other, rounding_mode: (
            grad / other if rounding_mode is None else zeros_like(grad)
        ),
        other=lambda grad, self, other, rounding_mode: (
            -grad * ((self / other) / other) if rounding_mode is None else zeros_like(grad)
        ),
    ),
    Derivative(
        "remainder", remainder_name,
        self=lambda grad: grad,
        other=lambda grad, self, other: -grad * self.div(other, rounding_mode="floor"),
    ),
    Derivative("neg", "NegBackward0", self=lambda grad: -grad),
    Derivative("abs", "AbsBackward0", self=lambda grad, self: grad * self.sign()),
    Derivative("sign", "SignBackward0", self=lambda grad: zeros_like(grad)),
    Derivative("ceil", "CeilBackward0", self=lambda grad: zeros_like(grad)),
    Derivative("floor", "FloorBackward0", self=lambda grad: zeros_like(grad)),
    Derivative("trunc", "TruncBackward0", self=lambda grad: zeros_like(grad)),
    Derivative(
        "round",
        lambda decimals: "RoundBackward0" if decimals == 0 else "RoundBackward1",
        self=lambda grad: zeros_like(grad),
    ),
    Derivative("frac", "FracBackward0", self=lambda grad: grad),
    Derivative(
        "clamp_min",
        lambda min: "ClampMinBackward1" if _is_tensor(min) else "ClampMinBackward0",
        self=lambda grad, self, min: ops.where(self >= min, grad, 0.0),
        min=lambda grad, self, min: ops.where(self < min, grad, 0.0),
    ),
    Derivative(
        "clamp_max",
        lambda max: "ClampMaxBackward1" if _is_tensor(max) else "ClampMaxBackward0",
        self=lambda grad, self, max: ops.where(self <= max, grad, 0.0),
        max=lambda grad, self, max: ops.where(self > max, grad, 0.0),
    ),
    Derivative(
        "pow", pow_name,
        self=pow_backward_self,
        exponent=pow_backward_exponent,
    ),
    Derivative("pow.Scalar", "PowBackward2", exponent=pow_backward_exponent),
    Derivative(
        "reciprocal", "ReciprocalBackward0", self=lambda grad, result: -grad * (result * result)
    ),
    Derivative(
        "maximum", "MaximumBackward0",
        self=lambda grad, self, other: maximum_backward(grad, self, other, larger=True),
        other=lambda grad, self, other: maximum_backward(grad, other, self, larger=True),
    ),
    Derivative(
        "minimum", "MinimumBackward0",
        self=lambda grad, self, other: maximum_backward(grad, self, other, larger=False),
        other=lambda grad, self, other: maximum_backward(grad, other, self, larger=False),
    ),
    Derivative(
        "clamp", clamp_name,
        self=clamp_backward_self,
        min=clamp_backward_min,
        max=clamp_backward_max,
    ),
    Derivative(
        "where", "WhereBackward0",
        self=lambda grad, condition: ops.where(condition, grad, 0.0),
        other=lambda grad, condition: ops.where(condition, 0.0, grad),
    ),
    # -- unary functions -------------------------------------------------------------
    Derivative("exp", "ExpBackward0", self=lambda grad, result: grad * result),
    Derivative("expm1", "Expm1Backward0", self=lambda grad, result: grad * (result + 1)),
    Derivative("log", "LogBackward0", self=lambda grad, self: grad / self),
    Derivative("log1p", "Log1PBackward0", self=lambda grad, self: grad / (self + 1)),
    Derivative("log2", "Log2Backward0", self=lambda grad, self: grad / (self * LN2)),
    Derivative("log10", "Log10Backward0", self=lambda grad, self: grad / (self * LN10)),
    Derivative("sqrt", "SqrtBackward0", self=lambda grad, result: grad / (2 * result)),
    Derivative(
        "rsqrt", "RsqrtBackward0", self=lambda grad, result: -0.5 * grad * result.pow(3)
    ),
    Derivative("sin", "SinBackward0", self=lambda grad, self: grad * self.cos()),
    Derivative("cos", "CosBackward0", self=lambda grad, self: grad * -self.sin()),
    Derivative(
        "tanh", "TanhBackward0", self=lambda grad, result: ops.tanh_backward(grad, result)
    ),
    Derivative(
        "sigmoid", "SigmoidBackward0",
        self=lambda grad, result: ops.sigmoid_backward(grad, result),
    ),
    Derivative(
        "erf", "ErfBackward0",
        self=lambda grad, self: grad * (2.0 / math.sqrt(math.pi)) * (-(self * self)).exp(),
    ),
    Derivative(
        "relu", "ReluBackward0",
        self=lambda grad, result: ops.threshold_backward(grad, result, 0),
    ),
    # -- reductions ------------------------------------------------------------------
    Derivative(
        "sum",
        lambda dim: "SumBackward0" if dim is None else "SumBackward1",
        self=lambda grad, self_shape, dim, keepdim: spread_over_reduced(
            grad, self_shape, dim, keepdim
        ),
    ),
    Derivative(
        "mean",
        lambda dim: "MeanBackward0" if dim is None else "MeanBackward1",
        self=lambda grad, self_shape, dim, keepdim: spread_over_reduced(
            grad, self_shape, dim, keepdim
        ) / reduced_count(self_shape, dim),
    ),
    Derivative(
        "prod",
        lambda dim: "ProdBackward0" if dim is None else "ProdBackward1",
        self=prod_backward,
    ),
    Derivative("amax", "AmaxBackward0", self=amax_amin_backward),
    Derivative("amin", "AminBackward0", self=amax_amin_backward),
    Derivative("max", "MaxBackward1", self=evenly_distribute),
    Derivative("min", "MinBackward1", self=evenly_distribute),
    Derivative(
        "max.dim", "MaxBackward0",
        self=lambda grad, dim, result1, self_shape, keepdim: value_selecting_backward(
            grad, dim, result1, self_shape, keepdim
        ),
    ),
    Derivative(
        "min.dim", "MinBackward0",
        self=lambda grad, dim, result1, self_shape, keepdim: value_selecting_backward(
            grad, dim, result1, self_shape, keepdim
        ),
    ),
    Derivative(
        "cumsum", "CumsumBackward0",
        self=lambda grad, dim: grad.flip(dim).cumsum(dim).flip(dim),
    ),
    Derivative("flip", "FlipBackward0", self=lambda grad, dims: grad.flip(dims)),
    Derivative(
        "sort", "SortBackward0",
        self=lambda grad, dim, result1, self_shape: value_selecting_backward(
            grad, dim, result1, self_shape, True
        ),
    ),
    Derivative(
        "topk", "TopkBackward0",
        self=lambda grad, dim, result1, self_shape: value_selecting_backward(
            grad, dim, result1, self_shape, True
        ),
    ),
    Derivative("var", "VarBackward0", self=var_backward),
    Derivative("std", "StdBackward0", self=std_backward),
    Derivative(
        "logsumexp", "LogsumexpBackward0",
        self=lambda grad, self, result, dim, keepdim: restore_reduced_dims(
            grad, dim, keepdim, self.ndim
        ) * (self - restore_reduced_dims(result, dim, keepdim, self.ndim)).exp(),
    ),
    Derivative(
        "softmax", "SoftmaxBackward0",
        self=lambda grad, result, dim: ops._softmax_backward_data(grad, result, dim),
    ),
    Derivative(
        "log_softmax", "LogSoftmaxBackward0",
        self=lambda grad, result, dim: ops._log_softmax_backward_data(grad, result, dim),
    ),
    # -- linear algebra --------------------------------------------------------------
    Derivative(
        "mm", "MmBackward0",
        self=lambda grad, mat2, self_geometry: mm_mat1_backward(grad, mat2, self_geometry),
        mat2=lambda grad, self, mat2_geometry: mm_mat2_backward(grad, self, mat2_geometry),
    ),
    Derivative(
        "addmm", "AddmmBackward0",
        self=lambda grad, beta: grad if beta == 1 else grad * beta,
        mat1=mm_mat1_backward,
        mat2=mm_mat2_backward,
    ),
    Derivative(
        "bmm", "BmmBackward0",
        self=lambda grad, mat2: grad.bmm(mat2.transpose(1, 2)),
        mat2=lambda grad, self: self.transpose(1, 2).bmm(grad),
    ),
    Derivative(
        "mv", "MvBackward0",
        self=lambda grad, vec: grad.outer(vec),
        vec=lambda grad, self: self.t().mv(grad),
    ),
    Derivative(
        "dot", "DotBackward0",
        self=lambda grad, tensor: grad * tensor,
        tensor=lambda grad, self: grad * self,
    ),
    # -- losses ----------------------------------------------------------------------
    # Only the log-probabilities are differentiable (targets are class indices); a class
    # weight that requires grad is an error, as in torch.
    Derivative(
        "nll_loss_forward", "NllLossBackward0",
        self=lambda grad, self, target, weight, reduction, ignore_index, result1: (
            ops.nll_loss_backward(
                grad, self, target, weight, reduction, ignore_index, result1
            )
        ),
        weight=REFUSES_GRAD,
    ),
    Derivative(
        "nll_loss2d_forward", "NllLoss2DBackward0",
        self=lambda grad, self, target, weight, reduction, ignore_index, result1: (
            ops.nll_loss2d_backward(
                grad, self, target, weight, reduction, ignore_index, result1
            )
        ),
        weight=REFUSES_GRAD,
    ),
    # The backward is linear in grad_output: its derivative there is the loss itself.
    Derivative(
        "nll_loss_backward", "NllLossBackwardBackward0",
        grad_output=lambda grad, target, weight, reduction, ignore_index: ops.nll_loss(
            grad, target, weight, reduction, ignore_index
        ),
        self=lambda grad: zeros_like(grad),
    ),
    Derivative(
        "nll_loss2d_backward", "NllLoss2DBackwardBackward0",
        grad_output=lambda grad, target, weight, reduction, ignore_index: ops.nll_loss2d(
            grad, target, weight, reduction, ignore_index
        ),
        self=lambda grad: zeros_like(grad),
    ),
    # -- neural-network operators ------------------------------------------------------
    Derivative(
        "gelu", "GeluBackward0",
        self=lambda grad, self, approximate: ops.gelu_backward(grad, self, approximate),
    ),
    Derivative(
        "gelu_backward", "GeluBackwardBackward0",
        grad_output=lambda grad, self, approximate: ops.gelu_backward(grad, self, approximate),
        self=lambda grad, grad_output, self, approximate: (
            grad * grad_output * gelu_second_derivative(self, approximate)
        ),
    ),
    Derivative(
        "mse_loss", "MseLossBackward0",
        self=lambda grad, self, target, reduction: ops.mse_loss_backward(
            grad, self, target, reduction
        ),
        target=lambda grad, self, target, reduction: ops.mse_loss_backward(
            grad, target, self, reduction
        ),
    ),
    Derivative(
        "mse_loss_backward", "MseLossBackwardBackward0",
        grad_output=lambda grad, self, target, reduction: (
            grad * (self - target) * mse_scale(reduction, grad.numel())
        ),
        self=lambda grad, grad_output, reduction: grad * grad_output * mse_scale(
            reduction, grad.numel()
        ),
        target=lambda grad, grad_output, reduction: grad * grad_output * -mse_scale(
            reduction, grad.numel()
        ),
    ),
    # Only the output's gradient counts, as in torch (mean and 1/std are for backward).
    # Deviation: torch's formula is one native_layer_norm_backward operator (and its
    # double backward NativeLayerNormBackwardBackward0); here it is composed of ops.
    Derivative(
        "native_layer_norm", "NativeLayerNormBackward0",
        input=layer_norm_input_backward,
        weight=layer_norm_weight_backward,
        bias=lambda grad: grad,
    ),
    # -- joining and indexing --------------------------------------------------------
    Derivative("cat", "CatBackward0", tensors=cat_backward),
    Derivative("stack", "StackBackward0", tensors=lambda grad, dim: ops.unbind(grad, dim)),
    Derivative(
        "gather", "GatherBackward0",
        self=lambda grad, self_shape, dim, index: ops.zeros(
            self_shape, grad.dtype, grad.device
        ).scatter_add(dim, index, grad),
    ),
    Derivative(
        "scatter_add", "ScatterAddBackward0",
        self=lambda grad: grad,
        src=lambda grad, dim, index: grad.gather(dim, index),
    ),
    Derivative(
        "scatter", "ScatterBackward0",
        self=lambda grad, dim, index: grad.scatter(dim, index, 0.0),
        src=lambda grad, dim, index: grad.gather(dim, index),
    ),
    Derivative("index_select", "IndexSelectBackward0", self=index_select_backward),
    Derivative(
        "masked_fill", "MaskedFillBackward0",
        self=lambda grad, mask: grad.masked_fill(mask, 0.0),
        value=lambda grad, mask: ops.where(mask, grad, 0.0).sum(),
    ),
    Derivative(
        "index", "IndexBackward0",
        self=lambda grad, self_shape, indices: gather_backward_by_index(
            grad, self_shape, lambda numbers: ops.index(numbers, indices)
        ),
    ),
    Derivative(
        "index_put", "IndexPutBackward0",
        self=lambda grad, indices, accumulate: grad if accumulate else grad.masked_fill(
            indexed_mask(grad._sizes, indices), 0.0
        ),
        values=lambda grad, indices: ops.index(grad, indices),
    ),
    Derivative(
        "masked_select", "MaskedSelectBackward0",
        self=lambda grad, self_shape, mask: gather_backward_by_index(
            grad, self_shape, lambda numbers: numbers.masked_select(mask)
        ),
    ),
    Derivative("tril", "TrilBackward0", self=lambda grad, diagonal: grad.tril(diagonal)),
    Derivative("triu", "TriuBackward0", self=lambda grad, diagonal: grad.triu(diagonal)),
    # -- views -----------------------------------------------------------------------
    Derivative("view", "ViewBackward0", self=lambda grad, self_shape: grad.reshape(self_shape)),
    Derivative(
        "_reshape_alias", "ReshapeAliasBackward0",
        self=lambda grad, self_shape: grad.reshape(self_shape),
    ),
    Derivative(
        "_unsafe_view", "UnsafeViewBackward0",
        self=lambda grad, self_shape: grad.reshape(self_shape),
    ),
    Derivative(
        "permute", "PermuteBackward0",
        self=lambda grad, dims: grad.permute(tuple(np.argsort([d % len(dims) for d in dims]))),
    ),
    Derivative(
        "transpose", "TransposeBackward0",
        self=lambda grad, dim0, dim1: grad.transpose(dim0, dim1),
    ),
    Derivative("t", "TBackward0", self=lambda grad: grad.t()),
    Derivative(
        "expand", "ExpandBackward0", self=lambda grad, self_shape: sum_to_size(grad, self_shape)
    ),
    Derivative(
        "squeeze",
        lambda dim: f"SqueezeBackward{squeeze_overload(dim)}",
        self=lambda grad, self_shape: grad.reshape(self_shape),
    ),
    Derivative(
        "squeeze_",
        lambda dim: f"SqueezeBackward{3 + squeeze_overload(dim)}",
        self=lambda grad, self_shape: grad.reshape(self_shape),
    ),
    Derivative(
        "unsqueeze", "UnsqueezeBackward0", self=lambda grad, self_shape: grad.reshape(self_shape)
    ),
    Derivative("slice", "SliceBackward0", self=slice_backward),
    # One node for all pieces, as in torch (split.Tensor and split_with_sizes)
    Derivative(
        "split",
        lambda split_size: (
            "SplitBackward0" if isinstance(split_size, int) else "SplitWithSizesBackward0"
        ),
        self=lambda grads, dim: ops.cat(list(grads), dim),
    ),
    Derivative("unbind", "UnbindBackward0", self=lambda grads, dim: ops.stack(list(grads), dim)),
    Derivative("select", "SelectBackward0", self=select_backward),
    Derivative(
        "diagonal", "DiagonalBackward0",
        self=lambda grad, self_shape, offset, dim1, dim2: gather_backward_by_index(
            grad, self_shape, lambda numbers: numbers.diagonal(offset, dim1, dim2)
        ),
    ),
    Derivative(
        "unfold", "UnfoldBackward0",
        self=lambda grad, self_shape, dimension, size, step: gather_backward_by_index(
            grad, self_shape, lambda numbers: numbers.unfold(dimension, size, step)
        ),
    ),
    Derivative(
        "as_strided", "AsStridedBackward0",
        self=lambda grad, self_geometry, size, stride, storage_offset: as_strided_backward(
            grad,
            self_geometry,
            (
                tuple(size),
                tuple(stride),
                self_geometry[2] if storage_offset is None else storage_offset,
            ),
        ),
    ),
    # -- fused backward operators (what the formulas above call) -----------------------
    # Their own derivatives make double backward work through them.
    Derivative(
        "threshold_backward", "ThresholdBackwardBackward0",
        grad_output=lambda grad, self, threshold: ops.threshold_backward(
            grad, self, threshold
        ),
        self=lambda grad: zeros_like(grad),
    ),
    Derivative(
        "_softmax_backward_data", "SoftmaxBackwardDataBackward0",
        grad_output=lambda grad, output, dim: ops._softmax_backward_data(
            grad, output, dim
        ),
        output=lambda grad, grad_output, output, dim: (
            grad * (grad_output - (grad_output * output).sum(dim, keepdim=True))
            - (grad * output).sum(dim, keepdim=True) * grad_output
        ),
    ),
    Derivative(
        "_log_softmax_backward_data", "LogSoftmaxBackwardDataBackward0",
        grad_output=lambda grad, output, dim: grad - (grad * output.exp()).sum(dim, keepdim=True),
        output=lambda grad, grad_output, output, dim: (
            -grad * output.exp() * grad_output.sum(dim, keepdim=True)
        ),
    ),
    Derivative(
        "tanh_backward", "TanhBackwardBackward0",
        grad_output=lambda grad, output: ops.tanh_backward(grad, output),
        output=lambda grad, grad_output, output: -2 * output * grad * grad_output,
    ),
    Derivative(
        "sigmoid_backward", "SigmoidBackwardBackward0",
        grad_output=lambda grad, output: ops.sigmoid_backward(grad, output),
        output=lambda grad, grad_output, output: grad * grad_output * (1 - 2 * output),
    ),
    # -- copies and conversions --------------------------------------------------------
    Derivative("clone", "CloneBackward0", self=lambda grad: grad),
    Derivative("alias", "AliasBackward0", self=lambda grad: grad),
    Derivative("_to_copy", "ToCopyBackward0", self=lambda grad, self_dtype: grad.to(self_dtype)),
    # -- in-place only ---------------------------------------------------------------
    Derivative(
        "copy", "CopyBackwards",
        self=lambda grad: zeros_like(grad),
        src=lambda grad: grad,
    ),
    Derivative(  # fill_.Scalar and fill_.Tensor
        "fill", lambda value: "FillBackward3" if _is_tensor(value) else "FillBackward2",
        self=lambda grad: zeros_like(grad),
        value=lambda grad: grad.sum(),
    ),
    Derivative("zero", "ZeroBackward0", self=lambda grad: zeros_like(grad)),
]

#: Operators whose outputs never carry gradient, even for float inputs that
#: require grad (PyTorch marks them non-differentiable).
NOT_DIFFERENTIABLE = frozenset(
    {
        "eq", "ne", "lt", "le", "gt", "ge",
        "logical_and", "logical_or", "logical_xor", "logical_not",
        "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not",
        "argmax", "argmin", "nonzero", "one_hot",
        "detach",
        "detach_",
        "zeros_like",
        "ones_like",
        "empty_like",
        "full_like",
        "rand_like",
        "randn_like",
        "new_zeros",
        "new_ones",
        "new_empty",
        "new_full",
        "bernoulli",
        "bernoulli_",
        "uniform_",
        "normal_",
    }
)
