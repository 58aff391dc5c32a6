"""What PyTorch itself says about the same call: its profiler, its key sets, its dispatch table.

Everything here is read from a live ``torch`` when it is installed (it is a
development dependency, not a runtime one); each function returns None when it
is not, and the experiments then mark the checks that need it not applicable.
"""

from __future__ import annotations

import numpy as np

PRODUCTS = ("matmul", "mm", "mv", "bmm", "dot")
# The keys whylab has, under torch's names for a CPU tensor (AutogradCPU is the CPU
# member of torch's Autograd alias; whylab has one Autograd key for every backend).
TORCH_KEY_NAMES = {"CPU": "CPU", "ADInplaceOrView": "ADInplaceOrView", "AutogradCPU": "Autograd"}


def load_torch():
    """``torch``, or None when it is not installed."""
    try:
        import torch
    except ImportError:
        return None
    return torch


def profiled_products(a: np.ndarray, b: np.ndarray, requires_grad: bool):
    """torch's profiler's view of ``torch.matmul(a, b)``: (op, input shapes, parent op) for
    every matmul/mm/mv/bmm/dot event, in the order they began; None without torch.

    This is ``torch.autograd.profiler.profile(record_shapes=True)``, the profiler that
    ``torch.profiler.profile`` wraps, without Kineto: the same operator events and
    shapes, and no Kineto start-up (12 s measured on a loaded 2-core machine, more than
    an experiment's time limit).
    """
    torch = load_torch()
    if torch is None:
        return None
    left = torch.tensor(a, requires_grad=requires_grad)
    right = torch.tensor(b, requires_grad=requires_grad)
    with torch.autograd.profiler.profile(record_shapes=True, use_kineto=False) as recorded:
        torch.matmul(left, right)
    rows = []
    for event in sorted(recorded.function_events, key=lambda e: e.time_range.start):
        name = event.name.removeprefix("aten::")
        if name in PRODUCTS:
            parent = event.cpu_parent.name.removeprefix("aten::") if event.cpu_parent else ""
            shapes = tuple(tuple(shape) for shape in event.input_shapes if shape)
            rows.append((name, shapes, parent))
    return rows


def tensor_keys(requires_grad: bool) -> frozenset[str] | None:
    """The key set torch gives a CPU float64 tensor, under whylab's key names (torch's
    AutocastCPU, which whylab does not have, left out); None without torch."""
    torch = load_torch()
    if torch is None:
        return None
    tensor = torch.zeros(2, 2, dtype=torch.float64, requires_grad=requires_grad)
    shown = str(torch._C._dispatch_keys(tensor))  # "DispatchKeySet(CPU, ADInplaceOrView, ...)"
    names = shown[shown.index("(") + 1:shown.rindex(")")].split(", ")
    return frozenset(TORCH_KEY_NAMES[name] for name in names if name in TORCH_KEY_NAMES)


def kernel_keys(op: str, keys: tuple[str, ...]) -> frozenset[str] | None:
    """Which of ``keys`` torch's dispatcher has a kernel for, for ``aten::op``."""
    torch = load_torch()
    if torch is None:
        return None
    has = torch._C._dispatch_has_kernel_for_dispatch_key
    return frozenset(key for key in keys if has(f"aten::{op}", key))


def saved_tensors(a: np.ndarray, b: np.ndarray, grad_a: bool, grad_b: bool):
    """{name: bytes} of the tensors torch's MmBackward0 saves for ``a @ b``."""
    torch = load_torch()
    if torch is None:
        return None
    left = torch.tensor(a, requires_grad=grad_a)
    right = torch.tensor(b, requires_grad=grad_b)
    node = torch.mm(left, right).grad_fn
    saved = {}
    for name in ("self", "mat2"):
        tensor = getattr(node, f"_saved_{name}")
        if tensor is not None:
            saved[name] = tensor.numel() * tensor.element_size()
    return type(node).__name__, saved


def accumulate_modes(a: np.ndarray, b: np.ndarray, gradient: np.ndarray, slot: int):
    """torch's AccumulateGrad observed by data pointers over two backward passes, for
    the gradient of a (``slot`` 0) or b (1): ("steal" | "copy", "add" | "replaced")."""
    torch = load_torch()
    if torch is None:
        return None
    left = torch.tensor(a, requires_grad=slot == 0)
    right = torch.tensor(b, requires_grad=slot == 1)
    leaf = (left, right)[slot]
    product = left @ right
    produced = []
    product.grad_fn.register_hook(
        lambda grad_inputs, grad_outputs: produced.append(grad_inputs[slot].data_ptr()))
    grad = torch.tensor(gradient)
    product.backward(grad, retain_graph=True)
    first = "steal" if leaf.grad.data_ptr() == produced[0] else "copy"
    address = leaf.grad.data_ptr()
    product.backward(grad)
    second = "add" if leaf.grad.data_ptr() == address else "replaced"
    return first, second
