"""whylab: a NumPy-backed tensor library and autograd engine built the way PyTorch is built.

The public API follows PyTorch's names: ``whylab.tensor``, ``whylab.zeros``,
``whylab.matmul``, ``Tensor.view`` ... Every tensor operation is an operator
call through ``whylab.dispatch``.

Deviations from PyTorch (each also stated where it happens):

* dtypes: bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64;
  no complex or float8 (``_tensor/dtypes.py``);
* devices: cpu and meta; the CUDA key exists but has no kernels, so ``cuda`` answers
  as torch does on a machine without a GPU (``kernels/__init__.py``, ``cuda/``);
* random numbers come from NumPy's PCG64, so seeds give other values (``_tensor/generator.py``);
* ``.T`` on non-2-D tensors reverses the dimensions without a deprecation
  warning (``dispatch/native/shape.py``);
* ``repr`` prints ``whylab.float64`` and ``whylab.Size([2, 3])`` where PyTorch prints
  ``torch.float64`` and ``torch.Size([2, 3])``;
* ``out=`` needs a tensor of the result's shape (torch resizes one that differs)
  (``dispatch/native/_registry.py``); in-place view ops (``unsqueeze_``...) refuse
  tensors that require grad (``dispatch/native/shape.py``);
* ``max(dim)``/``min(dim)`` return a ``MaxMin`` named tuple (fields ``values``,
  ``indices``) instead of ``torch.return_types.max``;
* a few NumPy ufuncs may warn on special inputs (``sin(inf)``) where PyTorch is
  silent (``kernels/cpu/elementwise.py``);
* the meta kernel of floor division follows PyTorch's CPU layout, which differs
  from PyTorch's own meta kernel for transposed inputs (``kernels/meta/elementwise.py``).
"""

import whylab.dispatch.native  # registers every operator
from whylab import autograd, dispatch
from whylab._tensor import dtypes as _dtypes
from whylab._tensor.device import device, get_default_device, set_default_device
from whylab._tensor.dtypes import (
    get_default_dtype,
    promote_types,
    result_type,
    set_default_dtype,
)
from whylab._tensor.generator import Generator, default_generator, initial_seed, manual_seed, seed
from whylab._tensor.geometry import broadcast_all as _broadcast_all
from whylab._tensor.storage import Storage
from whylab._tensor.tensor import Size, Tensor, VersionCounter
from whylab.autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
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
    log10,
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
from whylab.dispatch.native.linalg import addmm, bmm, dot, ger, matmul, mm, mv, outer
from whylab.dispatch.native.ordering import argsort, cumsum, flip, roll, sort, topk
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

autograd._install()  # Autograd kernels for every operator defined above

__version__ = "0.1.0"

# dtypes, under PyTorch's names and aliases
bool = _dtypes.bool_  # noqa: A001  (torch.bool shadows the builtin the same way)
int32 = _dtypes.int32
int64 = _dtypes.int64
float32 = _dtypes.float32
float64 = _dtypes.float64
uint8 = _dtypes.uint8
int8 = _dtypes.int8
int16 = _dtypes.int16
float16 = _dtypes.float16
bfloat16 = _dtypes.bfloat16
short = int16
half = float16
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
    """Whether ``obj`` is a whylab Tensor."""
    return isinstance(obj, Tensor)


def numel(input: Tensor) -> int:
    """Number of elements of ``input``."""
    return input.numel()


def is_floating_point(input: Tensor) -> bool:
    """Whether ``input`` has a floating dtype."""
    return input.is_floating_point()


def broadcast_shapes(*shapes):
    """The shape the given shapes broadcast to."""
    return _broadcast_all([tuple(s) for s in shapes], "broadcast_shapes")


def broadcast_tensors(*tensors):
    """Views of all tensors expanded to their common broadcast shape."""
    shape = broadcast_shapes(*(tensor.shape for tensor in tensors))
    return tuple(broadcast_to(tensor, shape) for tensor in tensors)


__all__ = [
    "Generator",
    "Storage",
    "Tensor",
    "VersionCounter",
    "abs",
    "absolute",
    "add",
    "addmm",
    "amax",
    "amin",
    "arange",
    "argmax",
    "argmin",
    "as_strided",
    "as_tensor",
    "bitwise_and",
    "bitwise_not",
    "bitwise_or",
    "bitwise_xor",
    "bmm",
    "bool",
    "broadcast_shapes",
    "broadcast_tensors",
    "broadcast_to",
    "cat",
    "chunk",
    "clamp",
    "clip",
    "clone",
    "concat",
    "concatenate",
    "contiguous_format",
    "cos",
    "default_generator",
    "detach",
    "device",
    "diagonal",
    "dispatch",
    "div",
    "divide",
    "dot",
    "double",
    "dtype",
    "empty",
    "empty_like",
    "empty_strided",
    "eq",
    "erf",
    "exp",
    "expm1",
    "eye",
    "flatten",
    "float",
    "float32",
    "float64",
    "floor_divide",
    "from_numpy",
    "full",
    "full_like",
    "gather",
    "ge",
    "ger",
    "get_default_dtype",
    "greater",
    "greater_equal",
    "gt",
    "index_put",
    "index_select",
    "initial_seed",
    "int",
    "int32",
    "int64",
    "is_floating_point",
    "is_tensor",
    "le",
    "less",
    "less_equal",
    "linspace",
    "log",
    "log1p",
    "log2",
    "log10",
    "log_softmax",
    "logical_and",
    "logical_not",
    "logical_or",
    "logical_xor",
    "logsumexp",
    "long",
    "lt",
    "manual_seed",
    "masked_fill",
    "masked_select",
    "matmul",
    "max",
    "maximum",
    "mean",
    "min",
    "minimum",
    "mm",
    "moveaxis",
    "movedim",
    "mul",
    "multiply",
    "mv",
    "narrow",
    "ne",
    "neg",
    "negative",
    "nonzero",
    "not_equal",
    "numel",
    "one_hot",
    "ones",
    "ones_like",
    "ops",
    "outer",
    "permute",
    "pow",
    "preserve_format",
    "prod",
    "promote_types",
    "rand",
    "rand_like",
    "randint",
    "randint_like",
    "randn",
    "randn_like",
    "reciprocal",
    "relu",
    "remainder",
    "reshape",
    "result_type",
    "rsqrt",
    "rsub",
    "scatter",
    "scatter_add",
    "seed",
    "select",
    "set_default_dtype",
    "sigmoid",
    "sign",
    "sin",
    "softmax",
    "split",
    "sqrt",
    "squeeze",
    "stack",
    "std",
    "sub",
    "subtract",
    "sum",
    "swapaxes",
    "swapdims",
    "t",
    "tanh",
    "tensor",
    "transpose",
    "tril",
    "triu",
    "true_divide",
    "unbind",
    "unflatten",
    "unsqueeze",
    "var",
    "where",
    "zeros",
    "zeros_like",
]

# autograd's public names (grad modes; whylab.autograd itself)
__all__ += [
    "autograd",
    "enable_grad",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "no_grad",
    "set_grad_enabled",
]


# Saving and loading state dicts: NumPy .npz archives, never pickle (whylab/serialization.py).
from whylab.serialization import load, save  # noqa: E402

__all__ += ["load", "save"]

# The packages `import torch` makes available as attributes: torch.nn, torch.optim,
# torch.utils.data, torch.cuda, torch.backends, torch.linalg.
import whylab.utils.data  # noqa: E402, F401
from whylab import backends, cuda, linalg, utils  # noqa: E402

#: nn and optim are written against this facade (``whylab.zeros`` ...), like torch.nn
#: against torch: they sit above it, so they load on first use (``whylab.nn``,
#: ``import whylab.nn``), never while this module runs.
_LOADED_ON_FIRST_USE = ("nn", "optim")


def __getattr__(name):
    if name in _LOADED_ON_FIRST_USE:
        import importlib

        return importlib.import_module(f"whylab.{name}")
    raise AttributeError(f"module 'whylab' has no attribute {name!r}")


__all__ += ["backends", "cuda", "linalg", "nn", "optim", "utils"]

# Loss of nothing for readers of old tutorials: legacy constructors, sampling, order ops.
from whylab.dispatch.native._registry import with_out as _with_out  # noqa: E402
from whylab.dispatch.native.elementwise import isfinite, isinf, isnan  # noqa: E402
from whylab.dispatch.native.legacy import (  # noqa: E402
    BoolTensor,
    DoubleTensor,
    FloatTensor,
    IntTensor,
    LongTensor,
    index_add,
)
from whylab.dispatch.native.reduction import all_ as all  # noqa: E402, A004
from whylab.dispatch.native.reduction import any_ as any  # noqa: E402, A004
from whylab.dispatch.native.sampling import bernoulli, multinomial, normal, randperm  # noqa: E402
from whylab.linalg import tensor_norm as norm  # noqa: E402

__all__ += [
    "BoolTensor",
    "DoubleTensor",
    "Size",
    "bfloat16",
    "float16",
    "half",
    "int16",
    "int8",
    "short",
    "uint8",
    "get_default_device",
    "isfinite",
    "isinf",
    "isnan",
    "set_default_device",
    "all",
    "any",
    "FloatTensor",
    "IntTensor",
    "LongTensor",
    "argsort",
    "bernoulli",
    "cumsum",
    "flip",
    "index_add",
    "multinomial",
    "norm",
    "normal",
    "randperm",
    "roll",
    "sort",
    "topk",
]

# torch's out= on the functions programs most often call with it.
for _name in (
    "add", "sub", "mul", "div", "pow", "matmul", "mm", "bmm", "exp", "log", "sqrt", "abs",
    "neg", "sin", "cos", "tanh", "sigmoid", "clamp", "maximum", "minimum", "sum", "mean",
    "prod", "cumsum", "cat", "stack", "where", "zeros", "ones", "empty", "full", "rand",
    "randn", "arange", "linspace", "eye",
):
    globals()[_name] = _with_out(globals()[_name])
del _name
