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
  from PyTorch's own meta kernel for transposed inputs (``kernels/meta/elementwise.py``);
* ``trace`` and ``repeat_interleave`` with an int record other nodes than torch (same
  gradients), and ``round(t, decimals=0)`` records RoundBackward0 where torch records
  RoundBackward1 (``dispatch/native/reduction.py``, ``ordering.py``, ``native_functions.py``);
* lazy modules without a ``dtype`` take their input's (``nn/lazy.py``).
"""

from whylab import autograd, dispatch
from whylab._core import unsupported as _unsupported
from whylab._tensor import dtypes as _dtypes
from whylab._tensor.device import device, get_default_device, set_default_device
from whylab._tensor.dtypes import (
    get_default_dtype,
    promote_types,
    result_type,
    set_default_dtype,
)
from whylab._tensor.generator import Generator, default_generator, initial_seed, manual_seed, seed
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

# The op table defines every operator and attaches the Tensor methods; its public
# functions (whylab.add, whylab.matmul ...) are exported here, each name once.
from whylab.dispatch import native_functions as _native_functions

globals().update(_native_functions.FUNCTIONS)

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
ops = dispatch.operator.ops


def is_tensor(obj) -> bool:
    """Whether ``obj`` is a whylab Tensor."""
    return isinstance(obj, Tensor)


def numel(input: Tensor) -> int:
    """Number of elements of ``input``."""
    return input.numel()


def is_floating_point(input: Tensor) -> bool:
    """Whether ``input`` has a floating dtype."""
    return input.is_floating_point()


__all__ = [
    "Generator",
    "Storage",
    "Tensor",
    "VersionCounter",
    "bool",
    "contiguous_format",
    "default_generator",
    "device",
    "dispatch",
    "double",
    "dtype",
    "float",
    "float32",
    "float64",
    "get_default_dtype",
    "initial_seed",
    "int",
    "int32",
    "int64",
    "is_floating_point",
    "is_tensor",
    "long",
    "manual_seed",
    "numel",
    "ops",
    "preserve_format",
    "promote_types",
    "result_type",
    "seed",
    "set_default_dtype",
]

# The op table's public functions
__all__ += sorted(_native_functions.FUNCTIONS)

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
from whylab import accelerator, backends, cuda, linalg, utils  # noqa: E402

#: nn and optim are written against this facade (``whylab.zeros`` ...), like torch.nn
#: against torch: they sit above it, so they load on first use (``whylab.nn``,
#: ``import whylab.nn``), never while this module runs.
_LOADED_ON_FIRST_USE = ("nn", "optim")


_refuse = _unsupported.module_getattr("torch", "whylab")


def __getattr__(name):
    if name in _LOADED_ON_FIRST_USE:
        import importlib

        return importlib.import_module(f"whylab.{name}")
    _refuse(name)  # raises: torch.NAME is not supported yet


__all__ += ["accelerator", "backends", "cuda", "linalg", "nn", "optim", "utils"]

# Capture and replay of a static training step (whylab/capture/, like a CUDA graph).
from whylab import capture  # noqa: E402

__all__ += ["capture"]

# The legacy typed constructors old tutorials use (classes, so not in the op table).
from whylab.dispatch.native.legacy import (  # noqa: E402
    BoolTensor,
    DoubleTensor,
    FloatTensor,
    IntTensor,
    LongTensor,
)
from whylab.linalg import tensor_norm as norm  # noqa: E402

__all__ += [
    "BoolTensor",
    "DoubleTensor",
    "FloatTensor",
    "IntTensor",
    "LongTensor",
    "Size",
    "bfloat16",
    "float16",
    "half",
    "int16",
    "int8",
    "short",
    "uint8",
    "get_default_device",
    "norm",
    "set_default_device",
]
