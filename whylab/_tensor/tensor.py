"""The Tensor: a storage plus sizes, strides and an offset.

``Tensor`` only holds data and answers questions about its layout. Every
operation on tensors (``t + u``, ``t.sum()``, ``t.t()``) is an operator call
through the dispatcher; the methods that do this are generated from the op table
(``whylab/dispatch/native_functions.py``) and attached to the class there.

Autograd fills the slots ``grad``, ``grad_fn`` and friends; this layer gives
them defaults and never reads them.
"""

from __future__ import annotations

import warnings
from math import prod

import numpy as np

from whylab._core import thread_state
from whylab._tensor import dtypes
from whylab._tensor.device import CPU
from whylab._tensor.geometry import contiguous_strides, is_contiguous, wrap_dim
from whylab._tensor.printing import tensor_repr
from whylab._tensor.storage import Storage

NON_LEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
    "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor."
)


#: This thread's ``key_mask`` for new tensors (cleared of the autograd keys inside
#: ``inference_mode``), documented in whylab/_core/thread_state.py.
creation_state = thread_state.creation


class VersionCounter:
    """Counts in-place writes; shared by a tensor and all its views.

    Autograd saves ``value`` when it saves a tensor for backward and compares on
    use, which is how PyTorch detects "modified by an inplace operation".
    (``value`` starts as a class attribute so that creating a counter, which
    happens for every new tensor, costs no ``__init__`` call.)
    """

    value = 0

    def bump(self) -> None:
        """Record one in-place write."""
        self.value += 1

    def __repr__(self) -> str:
        return f"VersionCounter({self.value})"


class Size(tuple):
    """A tensor's sizes: a tuple that prints as ``whylab.Size([2, 3])``, like ``torch.Size``."""

    __slots__ = ()

    def numel(self) -> int:
        """The number of elements a tensor of this size holds."""
        return prod(self)

    def __repr__(self) -> str:
        return f"whylab.Size({list(self)})"

    __str__ = __repr__

    def __getitem__(self, index):
        item = tuple.__getitem__(self, index)
        return Size(item) if isinstance(index, slice) else item

    def __add__(self, other):
        return Size(tuple.__add__(self, tuple(other)))


_new_object = object.__new__
_ndarray = np.ndarray
_DTYPE_OF_NUMPY = dtypes._BY_NUMPY


class Tensor:
    """A strided view of a :class:`Storage`.

    ``_sizes`` and ``_strides`` are tuples of ints (strides in elements),
    ``_offset`` is the storage index of element ``[0, 0, ...]``. ``_array`` is
    the backend array (a NumPy array on CPU, None on meta) that views exactly
    these elements; it is built once, because storages never reallocate.
    """

    __slots__ = (
        "_storage",
        "_sizes",
        "_strides",
        "_offset",
        "_array",
        "dtype",
        "device",
        "_version_counter",
        "_base",
        "_keys",
        # autograd state; this layer only sets the defaults
        "_requires_grad",
        "_grad",
        "grad_fn",
        "_grad_accumulator",
        "_retains_grad",
        "_hooks",
        "_output_nr",
        "__weakref__",
    )

    def __new__(cls, *args, **kwargs):
        """``Tensor(data)`` or ``Tensor(*size)``, the legacy constructor (as ``torch.Tensor``).

        The factories live above this layer; they register the constructor with
        :func:`set_legacy_constructor`. Subclasses build instances with
        :meth:`_make_subclass`.
        """
        if cls is not Tensor or _legacy_constructor is None:
            raise TypeError(
                f"{cls.__name__} cannot be constructed directly; use whylab.tensor(data), "
                "whylab.empty(*size) or another factory"
            )
        return _legacy_constructor(*args, **kwargs)

    @staticmethod
    def _make_subclass(cls, data: Tensor, require_grad: bool = False) -> Tensor:
        """An instance of the subclass ``cls`` sharing ``data``'s storage and layout
        (like ``torch.Tensor._make_subclass``; how ``nn.Parameter`` is built)."""
        t = _new_object(cls)
        t._adopt_layout(data)
        t._version_counter = data._version_counter
        t._base = None
        t._requires_grad = False
        t._grad = None
        t.grad_fn = None
        t._grad_accumulator = None
        t._retains_grad = False
        t._hooks = None
        t._output_nr = 0
        if require_grad:
            t.requires_grad_(True)
        return t

    # ----------------------------------------------------------- fast constructors

    @staticmethod
    def _make(storage, sizes, strides, offset, array, version=None):
        """Build a tensor from its parts with direct slot writes (the hot path)."""
        t = _new_object(Tensor)
        t._storage = storage
        t._sizes = sizes
        t._strides = strides
        t._offset = offset
        t._array = array
        t.dtype = storage.dtype
        t.device = storage.device
        t._version_counter = VersionCounter() if version is None else version
        t._base = None
        t._keys = storage.device.key_bits & creation_state.key_mask
        t._requires_grad = False
        t._grad = None
        t.grad_fn = None
        t._grad_accumulator = None
        t._retains_grad = False
        t._hooks = None
        t._output_nr = 0
        return t

    @staticmethod
    def _from_numpy_result(array, dtype=None):
        """Wrap a fresh NumPy result (owned by nobody else) as a new CPU tensor.

        Contiguous results are used as they are. Results laid out densely in
        another order (as NumPy gives for transposed inputs) keep that layout,
        like PyTorch's elementwise ops; anything else is copied to row-major.

        This runs once per operator result, so the contiguous case builds its
        storage and tensor here with slot writes (what :meth:`Storage.of` and
        :meth:`_make` do), without two further calls.
        """
        if type(array) is not _ndarray:
            array = np.asarray(array)
        if dtype is None:
            dtype = _DTYPE_OF_NUMPY[array.dtype]
        shape = array.shape
        if array.flags.c_contiguous:
            storage = _new_object(Storage)
            storage.data = array.ravel()
            storage.dtype = dtype
            storage.device = CPU
            storage.size = array.size
            t = _new_object(Tensor)
            t._storage = storage
            t._sizes = shape
            t._strides = contiguous_strides(shape)
            t._offset = 0
            t._array = array
            t.dtype = dtype
            t.device = CPU
            t._version_counter = VersionCounter()
            t._base = None
            t._keys = CPU.key_bits & creation_state.key_mask
            t._requires_grad = False
            t._grad = None
            t.grad_fn = None
            t._grad_accumulator = None
            t._retains_grad = False
            t._hooks = None
            t._output_nr = 0
            return t
        itemsize = array.itemsize
        order = sorted(range(array.ndim), key=lambda d: -array.strides[d])
        permuted = array.transpose(order)
        if permuted.flags.c_contiguous and min(array.strides, default=0) >= 0:
            strides = tuple(s // itemsize for s in array.strides)
            storage = Storage.of(permuted.ravel(), dtype, CPU, array.size)
            return Tensor._make(storage, shape, strides, 0, array)
        array = np.asarray(array, order="C")
        storage = Storage.of(array.ravel(), dtype, CPU, array.size)
        return Tensor._make(storage, shape, contiguous_strides(shape), 0, array)

    def _view_of_parts(self, sizes, strides, offset, array=None):
        """A tensor showing other elements of this tensor's storage (no base set).

        ``array`` may be given when the caller already holds the NumPy view of
        exactly these elements, made from ``self._array`` by a cheap NumPy
        operation (``.T``, an integer index): that is about 0.4 us cheaper than
        building it here from the storage's buffer.
        """
        storage = self._storage
        if array is None:
            data = storage.data
            if data is not None:
                itemsize = data.itemsize
                byte_strides = tuple([s * itemsize for s in strides])
                # An empty view may start at the very end of the buffer, which NumPy refuses.
                byte_offset = offset * itemsize if 0 not in sizes else 0
                array = _ndarray(sizes, data.dtype, data, byte_offset, byte_strides)
        # Built with slot writes, as in _make (this runs for every view).
        view = _new_object(Tensor)
        view._storage = storage
        view._sizes = sizes
        view._strides = strides
        view._offset = offset
        view._array = array
        view.dtype = storage.dtype
        view.device = storage.device
        view._version_counter = self._version_counter
        view._base = None
        # A view carries its base's key set, as PyTorch builds a view's TensorImpl with
        # self.key_set(): so a view of an inference tensor is an inference tensor too.
        view._keys = self._keys
        view._requires_grad = False
        view._grad = None
        view.grad_fn = None
        view._grad_accumulator = None
        view._retains_grad = False
        view._hooks = None
        view._output_nr = 0
        return view

    # ------------------------------------------------------------------ layout

    @property
    def grad(self):
        """The gradient autograd stored here (None until a backward pass reaches this tensor).

        Reading it on a non-leaf tensor that does not retain its gradient warns, as
        PyTorch does: backward never fills it there (call ``retain_grad()`` first).
        """
        value = self._grad
        if value is None and self.grad_fn is not None and not self._retains_grad:
            warnings.warn(NON_LEAF_GRAD_WARNING, UserWarning, stacklevel=2)
        return value

    @grad.setter
    def grad(self, value) -> None:
        self._grad = value

    @property
    def _version(self) -> int:
        """How many in-place writes this tensor (and every view of its storage) has had.

        An int, as in PyTorch; the counter itself, shared by all views, is
        ``_version_counter``.
        """
        return self._version_counter.value

    @property
    def shape(self) -> Size:
        """The sizes, as a :class:`Size` (a tuple, like ``torch.Size``)."""
        return Size(self._sizes)

    def size(self, dim: int | None = None):
        """The sizes (a :class:`Size`), or the size of one dimension."""
        if dim is None:
            return Size(self._sizes)
        return self._sizes[wrap_dim(dim, len(self._sizes), "size")]

    def stride(self, dim: int | None = None):
        """Strides in elements, or the stride of one dimension."""
        if dim is None:
            return self._strides
        return self._strides[wrap_dim(dim, len(self._sizes), "stride")]

    def storage_offset(self) -> int:
        """Index in the storage of this tensor's first element."""
        return self._offset

    def dim(self) -> int:
        """Number of dimensions."""
        return len(self._sizes)

    ndimension = dim

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return len(self._sizes)

    def numel(self) -> int:
        """Number of elements."""
        return prod(self._sizes)

    nelement = numel

    def element_size(self) -> int:
        """Bytes per element."""
        return self.dtype.itemsize

    def is_contiguous(self) -> bool:
        """Whether the strides are row-major (size-1 dimensions ignored)."""
        return is_contiguous(self._sizes, self._strides)

    def is_floating_point(self) -> bool:
        """Whether the dtype is a floating one."""
        return self.dtype.is_floating_point

    @property
    def is_meta(self) -> bool:
        """Whether this is a meta tensor (sizes only, no data)."""
        return self.device.type == "meta"

    @property
    def is_cuda(self) -> bool:
        """Whether this tensor lives on a CUDA device."""
        return self.device.type == "cuda"

    def untyped_storage(self) -> Storage:
        """The storage this tensor views (the same object for all its views)."""
        return self._storage

    def data_ptr(self) -> int:
        """Address of the first element (storage address plus offset)."""
        return self._storage.data_ptr() + self._offset * self.dtype.itemsize

    def _is_view(self) -> bool:
        return self._base is not None

    # ---------------------------------------------------------- autograd slots

    @property
    def requires_grad(self) -> bool:
        """Whether autograd should record operations on this tensor."""
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        """Whether autograd should record operations on this tensor."""
        if not value and not self.is_leaf:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use "
                "a computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach()."
            )
        if value and not (self.dtype.is_floating_point):
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        self._requires_grad = bool(value)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set ``requires_grad`` in place; returns ``self``."""
        self.requires_grad = requires_grad
        return self

    @property
    def is_leaf(self) -> bool:
        """True for tensors not produced by a recorded operation."""
        return self.grad_fn is None

    @property
    def data(self) -> Tensor:
        """A tensor sharing storage but *not* the version counter (PyTorch's ``.data``)."""
        return Tensor._make(
            self._storage, self._sizes, self._strides, self._offset, self._array, None
        )

    @data.setter
    def data(self, other: Tensor) -> None:
        self._adopt_layout(other)

    def _adopt_layout(self, other: Tensor) -> None:
        """Point this tensor at ``other``'s storage, geometry, dtype, device and keys."""
        self._storage = other._storage
        self._sizes = other._sizes
        self._strides = other._strides
        self._offset = other._offset
        self._array = other._array
        self.dtype = other.dtype
        self.device = other.device
        self._keys = other._keys

    # ------------------------------------------------------------ conversions

    def numpy(self) -> np.ndarray:
        """A zero-copy NumPy view of this tensor's elements (writes go through)."""
        if self._requires_grad:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                "instead."
            )
        if self.device.type != "cpu":
            raise TypeError(
                f"can't convert {self.device.type} device type tensor to numpy. "
                "Use Tensor.cpu() to copy the tensor to host memory first."
            )
        return self._array

    def __array__(self, dtype=None, copy=None):
        array = self.detach().numpy() if self._requires_grad else self.numpy()
        if dtype is not None:
            return array.astype(dtype)
        return array.copy() if copy else array

    def item(self):
        """The single element as a Python number."""
        if self.numel() != 1:
            raise RuntimeError(
                f"a Tensor with {self.numel()} elements cannot be converted to Scalar"
            )
        if self._array is None:
            raise RuntimeError(f"item: cannot read the value of a {self.device.type} tensor")
        return self._array.reshape(-1)[0].item()

    def tolist(self):
        """Nested Python lists of Python numbers."""
        if self._array is None:
            raise RuntimeError(f"tolist: cannot read the values of a {self.device.type} tensor")
        return self._array.tolist()

    def __len__(self) -> int:
        if not self._sizes:
            raise TypeError("len() of a 0-d tensor")
        return self._sizes[0]

    def __iter__(self):
        if not self._sizes:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._sizes[0]))

    def __bool__(self) -> bool:
        if self.numel() != 1:
            raise RuntimeError(
                f"Boolean value of Tensor with more than one value is ambiguous "
                f"(shape {list(self._sizes)})"
            )
        return bool(self.item())

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self.dtype.is_floating_point or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return tensor_repr(self)


_legacy_constructor = None


def set_legacy_constructor(fn) -> None:
    """Make ``Tensor(...)`` call ``fn`` (registered by the factory layer)."""
    global _legacy_constructor
    _legacy_constructor = fn


def tensor_method(*names):
    """Attach a function to :class:`Tensor` under ``names`` (for methods from outside the
    op table, such as ``whylab.linalg``'s ``norm``)."""

    def attach(fn):
        for name in names:
            setattr(Tensor, name, fn)
        return fn

    return attach
