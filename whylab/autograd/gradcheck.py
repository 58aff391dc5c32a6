"""Check backward formulas against finite differences.

:func:`gradcheck` builds, for every (output, input) pair, two Jacobians:

* *numerical*: perturb each input element by ``±eps`` and take the central
  difference ``(f(x + eps) - f(x - eps)) / (2 eps)``;
* *analytical*: one backward pass per output element, with a one-hot
  ``grad_outputs``, through the recorded graph;

and requires ``|analytical - numerical| <= atol + rtol * |numerical|``
everywhere. :func:`gradgradcheck` does the same for the gradient function
itself (second derivatives), which exercises ``create_graph=True``.

Inputs should be float64: float32 finite differences are too coarse for the
default tolerances. Names, defaults and behaviour follow
``torch.autograd.gradcheck`` (slow mode); ``fast_mode`` and complex inputs are
not provided.
"""

from __future__ import annotations

import numpy as np

from whylab._tensor.tensor import Tensor
from whylab.autograd import engine, grad_mode
from whylab.autograd._ops import zeros_like

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck when a check fails (and ``raise_exception`` is True)."""


def _as_tuple(value):
    return tuple(value) if isinstance(value, (list, tuple)) else (value,)


def _is_tensor(value) -> bool:
    return isinstance(value, Tensor)


def _differentiable_outputs(outputs):
    return [o for o in _as_tuple(outputs) if _is_tensor(o) and o.dtype.is_floating_point]


def _numerical_jacobians(func, inputs, input_index, eps):
    """Numerical Jacobians of every output w.r.t. ``inputs[input_index]``: list of (n_out, n_in)."""
    target = inputs[input_index]
    base = target.detach().numpy().astype(np.float64).copy()
    flat = base.reshape(-1)
    columns = []
    for j in range(flat.size):
        values = []
        for sign in (1.0, -1.0):
            perturbed = flat.copy()
            perturbed[j] += sign * eps
            replaced = list(inputs)
            replaced[input_index] = Tensor._from_numpy_result(
                perturbed.reshape(base.shape).astype(target.dtype.numpy)
            ).requires_grad_(target.requires_grad)
            # Grad mode stays on: func may itself differentiate (gradgradcheck).
            outputs = _differentiable_outputs(func(*replaced))
            values.append(
                [o.detach().numpy().astype(np.float64).reshape(-1).copy() for o in outputs]
            )
        columns.append([(plus - minus) / (2 * eps) for plus, minus in zip(*values, strict=True)])
    if not columns:
        outputs = _differentiable_outputs(func(*inputs))
        return [np.zeros((o.numel(), 0)) for o in outputs]
    return [np.stack([column[k] for column in columns], axis=1) for k in range(len(columns[0]))]


def _analytical_jacobians(outputs, inputs, differentiable_indices):
    """Analytical Jacobians: ``jacobians[k][i]`` is d output k / d input i, shape (n_out, n_in)."""
    wanted = [inputs[i] for i in differentiable_indices]
    jacobians = []
    for output in outputs:
        rows = {i: np.zeros((output.numel(), inputs[i].numel())) for i in differentiable_indices}
        if output.requires_grad:
            for element in range(output.numel()):
                one_hot = np.zeros(output.numel(), dtype=output.dtype.numpy)
                one_hot[element] = 1.0
                seed = Tensor._from_numpy_result(one_hot.reshape(output._sizes))
                grads = engine.grad(
                    output, wanted, grad_outputs=seed, retain_graph=True, allow_unused=True
                )
                for i, grad in zip(differentiable_indices, grads, strict=True):
                    if grad is not None:
                        rows[i][element] = grad.detach().numpy().reshape(-1)
        jacobians.append(rows)
    return jacobians


def _fail(message: str, raise_exception: bool) -> bool:
    if raise_exception:
        raise GradcheckError(message)
    return False


def gradcheck(
    func,
    inputs,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
) -> bool:
    """True when ``func``'s backward matches finite differences for ``inputs``.

    ``inputs`` is a tensor or a tuple; only tensors with ``requires_grad=True``
    are checked. On a mismatch raises :class:`GradcheckError` naming the output
    and input and showing both Jacobians, or returns False when
    ``raise_exception=False``.
    """
    inputs = _as_tuple(inputs)
    differentiable_indices = [
        i for i, value in enumerate(inputs) if _is_tensor(value) and value.requires_grad
    ]
    if not differentiable_indices:
        raise ValueError("gradcheck expects at least one input tensor to require gradient")
    for i in differentiable_indices:
        if inputs[i].dtype.name != "float64":
            return _fail(
                f"gradcheck: input {i} has dtype {inputs[i].dtype}; use float64 inputs "
                "(finite differences in lower precision are too inaccurate)",
                raise_exception,
            )
    with grad_mode.enable_grad():
        outputs = _differentiable_outputs(func(*inputs))
    if not outputs:
        raise ValueError("gradcheck: func returned no floating-point tensor outputs")
    analytical = _analytical_jacobians(outputs, inputs, differentiable_indices)
    for i in differentiable_indices:
        numerical = _numerical_jacobians(func, inputs, i, eps)
        for k in range(len(outputs)):
            a, n = analytical[k][i], numerical[k]
            if not np.allclose(a, n, rtol=rtol, atol=atol, equal_nan=False):
                return _fail(
                    f"Jacobian mismatch for output {k} with respect to input {i},\n"
                    f"numerical:{n}\nanalytical:{a}\n",
                    raise_exception,
                )
    return True


def gradgradcheck(
    func,
    inputs,
    grad_outputs=None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    seed: int = 0,
) -> bool:
    """True when the *gradient* of ``func`` has correct gradients (second order).

    ``grad_outputs`` defaults to random float64 tensors (from ``seed``); they are
    differentiated too, as in PyTorch.
    """
    inputs = _as_tuple(inputs)
    differentiable_indices = [
        i for i, value in enumerate(inputs) if _is_tensor(value) and value.requires_grad
    ]
    with grad_mode.enable_grad():
        outputs = _differentiable_outputs(func(*inputs))
    if grad_outputs is None:
        rng = np.random.default_rng(seed)
        grad_outputs = tuple(
            Tensor._from_numpy_result(rng.standard_normal(o._sizes)).requires_grad_()
            for o in outputs
        )
    grad_outputs = _as_tuple(grad_outputs)
    count = len(inputs)

    def first_derivative(*values):
        primal, seeds = values[:count], values[count:]
        outs = _differentiable_outputs(func(*primal))
        wanted = [primal[i] for i in differentiable_indices]
        grads = engine.grad(outs, wanted, grad_outputs=seeds, create_graph=True, allow_unused=True)
        return tuple(
            g if g is not None else zeros_like(w) for g, w in zip(grads, wanted, strict=True)
        )

    return gradcheck(
        first_derivative,
        inputs + grad_outputs,
        eps=eps,
        atol=atol,
        rtol=rtol,
        raise_exception=raise_exception,
    )
