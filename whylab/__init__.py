"""whylab: a NumPy-backed tensor library and autograd engine built the way PyTorch is built.

The public API follows PyTorch's names: ``whylab.tensor``, ``whylab.zeros``,
``whylab.matmul``, ``Tensor.view`` ... Every tensor operation is an operator
call through ``whylab.dispatch``.
"""

# The dispatcher is imported first: the tensor layer needs its key definitions,
# and importing it registers every native operator.
from whylab import dispatch  # noqa: I001
from whylab._tensor import dtypes as _dtypes
from whylab._tensor.device import device
from whylab._tensor.dtypes import (
    get_default_dtype,
    promote_types,
    result_type,
    set_default_dtype,
)
from whylab._tensor.generator import Generator, default_generator, initial_seed, manual_seed, seed
from whylab._tensor.storage import Storage
from whylab._tensor.tensor import Tensor, VersionCounter
from whylab.dispatch.native.elementwise import (
    abs,
    absolute,
    add,
    bitwise_and,
    bitwise_not,
    bitwise_or,
    bitwise_xor,
    clamp,
    clip,
    cos,
    div,
    divide,
    eq,
    erf,
    exp,
    expm1,
    floor_divide,
    ge,
    greater,
    greater_equal,
    gt,
    le,
    less,
    less_equal,
    log,
    log1p,
    log2,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    lt,
    masked_fill,
    maximum,
    minimum,
    mul,
    multiply,
    ne,
    neg,
    negative,
    not_equal,
    pow,
    reciprocal,
    relu,
    remainder,
    rsqrt,
    rsub,
    sigmoid,
    sign,
    sin,
    sqrt,
    sub,
    subtract,
    tanh,
    true_divide,
    where,
)
from whylab.dispatch.native.factory import (
    arange,
    as_tensor,
    clone,
    empty,
    empty_like,
    empty_strided,
    eye,
    from_numpy,
    full,
    full_like,
    linspace,
    ones,
    ones_like,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    tensor,
    zeros,
    zeros_like,
)
from whylab.dispatch.native.indexing import (
    cat,
    concat,
    concatenate,
    gather,
    index_put,
    index_select,
    masked_select,
    nonzero,
    one_hot,
    scatter,
    scatter_add,
    stack,
    tril,
    triu,
)
from whylab.dispatch.native.linalg import bmm, dot, ger, matmul, mm, mv, outer
from whylab.dispatch.native.reduction import (
    amax,
    amin,
    argmax,
    argmin,
    log_softmax,
    logsumexp,
    max,
    mean,
    min,
    prod,
    softmax,
    std,
    sum,
    var,
)
from whylab.dispatch.native.shape import (
    as_strided,
    broadcast_to,
    chunk,
    detach,
    diagonal,
    flatten,
    moveaxis,
    movedim,
    narrow,
    permute,
    reshape,
    select,
    split,
    squeeze,
    swapaxes,
    swapdims,
    t,
    transpose,
    unbind,
    unflatten,
    unsqueeze,
)
from whylab._tensor.geometry import broadcast_all as _broadcast_all
from whylab import autograd
from whylab.autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)

autograd._install()  # Autograd kernels for every operator defined above

__version__ = "0.1.0"

# dtypes, under PyTorch's names and aliases
bool = _dtypes.bool_  # noqa: A001  (torch.bool shadows the builtin the same way)
int32 = _dtypes.int32
int64 = _dtypes.int64
float32 = _dtypes.float32
float64 = _dtypes.float64
int = int32  # noqa: A001
long = int64
float = float32  # noqa: A001
double = float64
dtype = _dtypes.dtype

#: Memory formats accepted by ``clone`` and ``contiguous``.
preserve_format = "preserve_format"
contiguous_format = "contiguous_format"

#: ``whylab.ops.mm`` is the mm Operator (like ``torch.ops.aten.mm``).
ops = dispatch.OpNamespace()


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


def numel(input: Tensor) -> int:
    return input.numel()


def is_floating_point(input: Tensor) -> bool:
    return input.is_floating_point()


def broadcast_shapes(*shapes):
    """The shape the given shapes broadcast to."""
    return _broadcast_all([tuple(s) for s in shapes], "broadcast_shapes")


def broadcast_tensors(*tensors):
    """Views of all tensors expanded to their common broadcast shape."""
    shape = broadcast_shapes(*(t.shape for t in tensors))
    return tuple(broadcast_to(t, shape) for t in tensors)


# Saving and loading state dicts: NumPy .npz archives, never pickle (owned by the nn branch).
from whylab.serialization import load, save  # noqa: E402
