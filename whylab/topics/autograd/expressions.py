"""The expressions a reader can choose on the autograd page, with hand-derived gradients.

A reader never types code: each choice is one of the functions below, built from
whylab operations. Every :class:`Case` carries

* the starting values of its leaves (the tensors that require a gradient),
* ``loss``, which computes the scalar from whylab tensors (so the engine records it),
* ``gradient``, the same derivative worked out by hand in NumPy, which the
  experiments compare with the engine.

The nodes each expression should record are not derived here but listed, as
PyTorch records them, in :mod:`whylab.topics.autograd.torch_reference`.

Everything is float64, so the comparisons can be tight. Two negative controls
reach in here: ``data-requires-grad`` (the data tensors ask for a gradient too)
and ``cross-entropy-unfused`` (the loss is written as −log of softmax's entry).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import whylab
import whylab.nn.functional as F
from whylab.explorer.experiment import Param, T, Text, control_active

Arrays = dict[str, np.ndarray]
Tensors = dict[str, whylab.Tensor]


@dataclass(frozen=True)
class Case:
    """One instance of an expression: leaf values, the loss, and its hand-derived gradient."""

    leaves: Arrays
    loss: Callable[[Tensors], whylab.Tensor]
    gradient: Callable[[Arrays], Arrays]


@dataclass(frozen=True)
class Expression:
    key: str
    label: Text
    make: Callable[[np.random.Generator], Case]


# ---------------------------------------------------------------- shared pieces


def softmax_rows(logits: np.ndarray) -> np.ndarray:
    """Row-wise softmax in NumPy, with the largest logit subtracted first."""
    shifted = logits - logits.max(axis=-1, keepdims=True)
    exponentials = np.exp(shifted)
    return exponentials / exponentials.sum(axis=-1, keepdims=True)


def one_hot(labels: np.ndarray, classes: int) -> np.ndarray:
    return np.eye(classes)[labels]


def cross_entropy_logit_gradient(logits: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """d(mean cross-entropy)/d(logits) = (softmax(z) - onehot(y)) / N."""
    return (softmax_rows(logits) - one_hot(labels, logits.shape[-1])) / logits.shape[0]


def mlp_backward(x: np.ndarray, labels: np.ndarray, w1: np.ndarray, b1: np.ndarray,
                 w2: np.ndarray, b2: np.ndarray) -> Arrays:
    """Hand-written backward of mean cross-entropy(relu(x w1 + b1) w2 + b2, labels).

    Weights are (inputs, outputs). Each line is one local rule from the page,
    applied in reverse order: cross-entropy, the second affine map, ReLU's
    mask, the first affine map.
    """
    pre = x @ w1 + b1
    hidden = np.maximum(pre, 0.0)
    logits = hidden @ w2 + b2
    d_logits = cross_entropy_logit_gradient(logits, labels)
    d_w2 = hidden.T @ d_logits
    d_b2 = d_logits.sum(axis=0)
    d_hidden = d_logits @ w2.T
    d_pre = d_hidden * (pre > 0)
    d_w1 = x.T @ d_pre
    d_b1 = d_pre.sum(axis=0)
    return {"w1": d_w1, "b1": d_b1, "w2": d_w2, "b2": d_b2}


def labels_tensor(labels: np.ndarray) -> whylab.Tensor:
    return whylab.from_numpy(np.ascontiguousarray(labels, dtype=np.int64))


def constant(values: np.ndarray) -> whylab.Tensor:
    """A float64 tensor that does not require a gradient."""
    return whylab.from_numpy(np.array(values, dtype=np.float64))


def data(values: np.ndarray) -> whylab.Tensor:
    """An expression's data: a constant, unless the control makes it require a gradient."""
    tensor = constant(values)
    if control_active("data-requires-grad"):
        tensor.requires_grad_()
    return tensor


def mean_cross_entropy(logits: whylab.Tensor, labels: np.ndarray) -> whylab.Tensor:
    """F.cross_entropy on logits; under the control, −log softmax(z)_y written out op by op."""
    targets = labels_tensor(labels)
    if control_active("cross-entropy-unfused"):
        probabilities = whylab.softmax(logits, 1)
        return -probabilities.gather(1, targets.unsqueeze(1)).log().mean()
    return F.cross_entropy(logits, targets)


# ---------------------------------------------------------------- the expressions


def _tanh_affine(rng: np.random.Generator) -> Case:
    x = rng.standard_normal((3, 4))

    def loss(t: Tensors) -> whylab.Tensor:
        return (data(x) @ t["w"] + t["b"]).tanh().sum()

    def gradient(v: Arrays) -> Arrays:
        y = np.tanh(x @ v["w"] + v["b"])
        upstream = 1.0 - y * y  # d tanh(u)/du = 1 - tanh(u)^2, times the sum's gradient 1
        return {"w": x.T @ upstream, "b": upstream.sum(axis=0)}

    leaves = {"w": 0.5 * rng.standard_normal((4, 2)), "b": 0.5 * rng.standard_normal(2)}
    return Case(leaves, loss, gradient)


def _softmax_cross_entropy(rng: np.random.Generator) -> Case:
    x = rng.standard_normal((4, 5))
    labels = rng.integers(0, 3, size=4)

    def loss(t: Tensors) -> whylab.Tensor:
        return mean_cross_entropy(data(x) @ t["W"], labels)

    def gradient(v: Arrays) -> Arrays:
        return {"W": x.T @ cross_entropy_logit_gradient(x @ v["W"], labels)}

    return Case({"W": rng.standard_normal((5, 3))}, loss, gradient)


def _linear_cross_entropy(rng: np.random.Generator) -> Case:
    x = rng.standard_normal((4, 3))
    labels = rng.integers(0, 5, size=4)

    def loss(t: Tensors) -> whylab.Tensor:
        return mean_cross_entropy(F.linear(data(x), t["W"], t["b"]), labels)

    def gradient(v: Arrays) -> Arrays:
        d_logits = cross_entropy_logit_gradient(x @ v["W"].T + v["b"], labels)
        return {"W": d_logits.T @ x, "b": d_logits.sum(axis=0)}  # z = x Wᵀ + b

    leaves = {"W": rng.standard_normal((5, 3)), "b": 0.1 * rng.standard_normal(5)}
    return Case(leaves, loss, gradient)


def _fan_out(rng: np.random.Generator) -> Case:
    def loss(t: Tensors) -> whylab.Tensor:
        x = t["x"]
        return (x * x + x).sum()

    def gradient(v: Arrays) -> Arrays:
        return {"x": 2.0 * v["x"] + 1.0}  # x reaches the loss along three edges

    return Case({"x": rng.standard_normal(5)}, loss, gradient)


def _difference_of_squares(rng: np.random.Generator) -> Case:
    def loss(t: Tensors) -> whylab.Tensor:
        a, b = t["a"], t["b"]
        return ((a + b) * (a - b)).sum()

    def gradient(v: Arrays) -> Arrays:
        return {"a": 2.0 * v["a"], "b": -2.0 * v["b"]}  # (a+b)(a-b) = a^2 - b^2

    return Case({"a": rng.standard_normal(4), "b": rng.standard_normal(4)}, loss, gradient)


def _two_layer_mlp(rng: np.random.Generator) -> Case:
    x = rng.standard_normal((6, 3))
    labels = rng.integers(0, 3, size=6)

    def loss(t: Tensors) -> whylab.Tensor:
        hidden = (data(x) @ t["w1"] + t["b1"]).relu()
        return mean_cross_entropy(hidden @ t["w2"] + t["b2"], labels)

    def gradient(v: Arrays) -> Arrays:
        return mlp_backward(x, labels, v["w1"], v["b1"], v["w2"], v["b2"])

    leaves = {"w1": rng.standard_normal((3, 5)), "b1": 0.1 * rng.standard_normal(5),
              "w2": rng.standard_normal((5, 3)), "b2": 0.1 * rng.standard_normal(3)}
    return Case(leaves, loss, gradient)


EXPRESSIONS: dict[str, Expression] = {
    e.key: e
    for e in (
        Expression("tanh-affine", T("sum of tanh(x·w + b)", "tanh(x·w + b) 之和"), _tanh_affine),
        Expression("softmax-ce", T("softmax cross-entropy of x·W", "x·W 的 softmax 交叉熵"),
                   _softmax_cross_entropy),
        Expression("linear-ce", T("cross-entropy of a linear layer, F.linear(x, W, b)",
                                  "线性层 F.linear(x, W, b) 的交叉熵"), _linear_cross_entropy),
        Expression("fan-out", T("fan-out: sum of x·x + x", "扇出：x·x + x 之和"), _fan_out),
        Expression("diff-squares", T("sum of (a + b)·(a − b)", "(a + b)·(a − b) 之和"),
                   _difference_of_squares),
        Expression("mlp", T("two-layer MLP with cross-entropy", "两层 MLP 加交叉熵"),
                   _two_layer_mlp),
    )
}


SEED = Param("seed", "int", 0, T("random seed", "随机种子"), minimum=0, maximum=2**31 - 1,
             seed=True)


def expression_param(keys: tuple[str, ...], default: str) -> Param:
    """The reader's choice among the expressions ``keys``."""
    return Param("expression", "choice", default, T("expression", "表达式"), choices=keys,
                 choice_labels=tuple(EXPRESSIONS[k].label for k in keys))


def make_case(key: str, seed: int) -> Case:
    """The expression ``key`` with leaves drawn from ``seed``."""
    return EXPRESSIONS[key].make(np.random.default_rng(seed))


def unit_vector(size: int, index: int) -> whylab.Tensor:
    """The float64 basis vector e_index of length ``size``."""
    vector = np.zeros(size)
    vector[index] = 1.0
    return constant(vector)


def leaf_tensors(values: Arrays) -> Tensors:
    """Fresh float64 leaves that require a gradient, one per named value."""
    return {name: constant(value).requires_grad_() for name, value in values.items()}


def evaluate(case: Case, values: Arrays) -> float:
    """The loss at ``values``, computed by whylab without recording a graph."""
    with whylab.no_grad():
        return float(case.loss({name: constant(v) for name, v in values.items()}).item())
