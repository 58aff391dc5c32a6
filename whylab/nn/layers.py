"""The layers: small Modules that hold parameters and call whylab.nn.functional.

Each layer's ``forward`` is one call into :mod:`whylab.nn.functional`; the layer itself only
owns the parameters, their initialisation (torch's defaults) and the settings shown by its
``repr``.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Iterator

import whylab

from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter


class Identity(Module):
    """Return the input unchanged (a placeholder, e.g. to remove a layer from a model)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """``y = x @ weight.T + bias``, with ``weight`` of shape (out_features, in_features).

    Initialisation follows torch: weight from ``kaiming_uniform_(a=sqrt(5))``, which is
    U(-1/sqrt(in_features), 1/sqrt(in_features)), and bias from that same range.
    """

    def __init__(
        self, in_features: int, out_features: int, bias: bool = True, device=None, dtype=None
    ):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(whylab.empty(out_features, in_features, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(whylab.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw fresh weights and bias with torch's default scheme."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


class LazyLinear(Linear):
    """A Linear layer whose ``in_features`` is read from its first input.

    Until then it has no weight or bias (deviation: torch shows placeholder
    ``UninitializedParameter`` objects); create the optimizer after one forward call.
    After that call it *is* a :class:`Linear`, as in torch: its class becomes
    ``cls_to_become``, so ``type(m) == nn.Linear`` in an init function holds.
    """

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device=None, dtype=None):
        Module.__init__(self)
        self.in_features = 0
        self.out_features = out_features
        self._lazy_bias = bias
        self._lazy_device = device
        self._lazy_dtype = dtype
        self.register_parameter("weight", None)
        self.register_parameter("bias", None)

    def forward(self, input):
        if self.weight is None:
            self.in_features = input.shape[-1]
            dtype = self._lazy_dtype or input.dtype
            device = self._lazy_device
            shape = (self.out_features, self.in_features)
            self.weight = Parameter(whylab.empty(shape, device=device, dtype=dtype))
            if self._lazy_bias:
                self.bias = Parameter(whylab.empty(self.out_features, device=device, dtype=dtype))
            self.reset_parameters()
            del self._lazy_bias, self._lazy_device, self._lazy_dtype
            self.__class__ = self.cls_to_become
        return F.linear(input, self.weight, self.bias)


class ReLU(Module):
    """Elementwise ``max(x, 0)``."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Tanh(Module):
    """Elementwise hyperbolic tangent."""

    def forward(self, input):
        return whylab.tanh(input)


class Sigmoid(Module):
    """Elementwise logistic function ``1 / (1 + exp(-x))``."""

    def forward(self, input):
        return whylab.sigmoid(input)


class Dropout2d(Module):
    """Zero whole channels (dimension 1 of (N, C, H, W) or (C, H, W) input) with
    probability ``p`` during training, scaling the kept ones by ``1 / (1 - p)``."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input):
        return F.dropout2d(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(Module):
    """Zero each element with probability ``p`` during training and scale the rest by
    ``1 / (1 - p)``; the identity in evaluation mode (after ``.eval()``)."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Flatten(Module):
    """Flatten dimensions ``start_dim`` to ``end_dim`` into one (default: all but the batch)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class LayerNorm(Module):
    """Normalise over the last ``len(normalized_shape)`` dimensions to zero mean and unit
    (biased) variance, then scale by ``weight`` and shift by ``bias`` (ones and zeros at
    start)."""

    def __init__(
        self,
        normalized_shape,
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            factory_kwargs = {"device": device, "dtype": dtype}
            self.weight = Parameter(whylab.ones(self.normalized_shape, **factory_kwargs))
            if bias:
                self.bias = Parameter(whylab.zeros(self.normalized_shape, **factory_kwargs))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, "
            f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}"
        )


class Embedding(Module):
    """A lookup table: row ``i`` of ``weight`` is the vector for index ``i``.

    Weights start as N(0, 1). With ``padding_idx`` set, that row starts at zero and never
    receives gradient, so it stays a fixed "nothing here" vector.
    """

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        padding_idx: int | None = None,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
        _weight=None,
        _freeze: bool = False,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        for name, value, default in (
            ("max_norm", max_norm, None),
            ("scale_grad_by_freq", scale_grad_by_freq, False),
            ("sparse", sparse, False),
        ):
            if value != default:
                raise NotImplementedError(
                    f"torch.nn.Embedding({name}={value!r}) is not supported yet by whylab"
                )
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = _normalise_padding_idx(padding_idx, num_embeddings)
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is None:
            shape = (num_embeddings, embedding_dim)
            self.weight = Parameter(whylab.empty(shape, device=device, dtype=dtype))
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise ValueError("Shape of weight does not match num_embeddings and embedding_dim")
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self) -> None:
        """Draw N(0, 1) weights and zero the padding row."""
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with whylab.no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx)

    def extra_repr(self) -> str:
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            text += f", padding_idx={self.padding_idx}"
        return text


def _normalise_padding_idx(padding_idx: int | None, num_embeddings: int) -> int | None:
    if padding_idx is None:
        return None
    if not -num_embeddings <= padding_idx < num_embeddings:
        raise ValueError(
            f"Embedding: padding_idx {padding_idx} must be within num_embeddings "
            f"[-{num_embeddings}, {num_embeddings})"
        )
    return padding_idx % num_embeddings


class Sequential(Module):
    """Run child modules one after another, feeding each one's output to the next.

    Build it from modules (named ``"0"``, ``"1"``, ...) or from an OrderedDict of names to
    modules. Indexing with an int gives a child; with a slice, a new Sequential.
    """

    def __init__(self, *modules) -> None:
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], OrderedDict):
            for name, module in modules[0].items():
                self.add_module(name, module)
        else:
            for index, module in enumerate(modules):
                self.add_module(str(index), module)

    def forward(self, input):
        for module in self._modules.values():
            input = module(input)
        return input

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __getitem__(self, index):
        if isinstance(index, slice):
            return Sequential(OrderedDict(list(self._modules.items())[index]))
        count = len(self._modules)
        if not -count <= index < count:
            raise IndexError(f"index {index} is out of range for Sequential of length {count}")
        return list(self._modules.values())[index % count]

    def append(self, module: Module) -> Sequential:
        """Add ``module`` at the end."""
        self.add_module(str(len(self._modules)), module)
        return self
