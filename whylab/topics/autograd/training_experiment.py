"""The ``train`` experiment: a two-layer classifier trained by whylab.nn and whylab.optim,
with one step's gradients checked against a backward pass written by hand in NumPy.
"""

from __future__ import annotations

import numpy as np

import whylab
import whylab.nn as nn
import whylab.nn.functional as F
import whylab.optim
from whylab.explorer.experiment import (
    Check,
    Control,
    LineChart,
    Metric,
    Param,
    Result,
    Series,
    T,
    control_active,
    experiment,
    report_progress,
)
from whylab.topics.autograd.comparisons import EXACT_TOLERANCE, gradients_error
from whylab.topics.autograd.datasets import DATASETS, class_count, make_dataset
from whylab.topics.autograd.expressions import (
    SEED,
    constant,
    labels_tensor,
    mlp_backward,
)
from whylab.topics.autograd.sabotage import pass_through, replace_backward
from whylab.topics.shared import error_check

# ---------------------------------------------------------------- training

TRAIN_POINTS, TEST_POINTS, BATCH = 256, 256, 64
TEST_SEED_OFFSET = 1_000_003  # the test set comes from a different seed than the training set
CURVE_POINTS = 40
LOSS_RATIO_AT_MOST = 0.25
ACCURACY_AT_LEAST = 0.9
HAND_BACKWARD_TOLERANCE = 1e-10


def init_linear(layer, rng: np.random.Generator) -> None:
    """PyTorch's default range U(-1/sqrt(fan_in), 1/sqrt(fan_in)), drawn from ``rng``."""
    bound = 1.0 / np.sqrt(layer.in_features)
    with whylab.no_grad():
        layer.weight.copy_(constant(rng.uniform(-bound, bound, tuple(layer.weight.shape))))
        layer.bias.copy_(constant(rng.uniform(-bound, bound, tuple(layer.bias.shape))))


def hand_backward_error(first: nn.Linear, second: nn.Linear, points: np.ndarray,
                        labels: np.ndarray) -> float:
    """The engine's gradients (already in .grad) against :func:`mlp_backward` in NumPy.

    ``nn.Linear`` stores its weight as (out, in) and computes x Wᵀ + b, so the
    NumPy weights are the transposes.
    """
    reference = mlp_backward(points, labels, first.weight.detach().numpy().T,
                             first.bias.detach().numpy(), second.weight.detach().numpy().T,
                             second.bias.detach().numpy())
    engine = {"w1": first.weight.grad.numpy().T, "b1": first.bias.grad.numpy(),
              "w2": second.weight.grad.numpy().T, "b2": second.bias.grad.numpy()}
    return gradients_error(engine, reference)


@experiment(
    name="train",
    title=T("A two-layer classifier trained by the engine", "用引擎训练两层分类器"),
    description=T(
        "Linear → ReLU → Linear from whylab.nn, cross-entropy on logits and whylab.optim.SGD "
        "on minibatches of 64 points generated in code; the first step's gradients are also "
        "computed by a hand-written NumPy backward.",
        "用 whylab.nn 搭建 Linear → ReLU → Linear，以 logit 上的交叉熵为损失，"
        "用 whylab.optim.SGD 在代码生成的点集上按每批 64 个点训练；"
        "第一步的梯度另用手写的 NumPy 反向传播再算一遍。",
    ),
    params=[
        Param("dataset", "choice", "rings", T("data set", "数据集"), choices=DATASETS,
              choice_labels=(T("two spirals", "双螺旋"), T("disc and ring", "圆盘与圆环"),
                             T("three blobs", "三团点"))),
        Param("hidden", "int", 32, T("hidden width", "隐藏层宽度"), minimum=1, maximum=128,
              step=1),
        Param("lr", "float", 0.5, T("learning rate η", "学习率 η"), minimum=0.001, maximum=2.0,
              step=0.001),
        Param("steps", "int", 400, T("SGD steps", "SGD 步数"), minimum=1, maximum=3000, step=1),
        SEED,
    ],
    controls=[
        Control("relu-passes-everything",
                T("ReLU's backward let the gradient through everywhere",
                  "ReLU 的反向让梯度处处通过"),
                breaks=("hand-backward",)),
        Control("gradient-ascent",
                T("each step moved the parameters along +η·grad (uphill)",
                  "每一步都让参数沿 +η·grad 移动（往上坡走）"),
                breaks=("sgd-update", "loss-drops", "held-out-accuracy")),
    ],
    metrics=[
        Metric("initial_loss", T("loss before training", "训练前的损失")),
        Metric("final_loss", T("loss after training", "训练后的损失")),
        Metric("test_accuracy", T("accuracy on the test points", "测试点上的准确率")),
        Metric(
            "hand_backward_error",
            T(
                "hand-written backward vs engine: relative error",
                "手写反向传播与引擎之差（相对误差）",
            ),
        ),
        Metric("parameters", T("parameters", "参数个数")),
    ],
)
def train(dataset: str, hidden: int, lr: float, steps: int, seed: int) -> Result:
    points, labels = make_dataset(dataset, TRAIN_POINTS, seed)
    test_points, test_labels = make_dataset(dataset, TEST_POINTS, seed + TEST_SEED_OFFSET)
    rng = np.random.default_rng(seed)
    first = nn.Linear(2, hidden, dtype=whylab.float64)
    second = nn.Linear(hidden, class_count(dataset), dtype=whylab.float64)
    init_linear(first, rng)
    init_linear(second, rng)
    model = nn.Sequential(first, nn.ReLU(), second)
    optimizer = whylab.optim.SGD(model.parameters(), lr=lr)
    all_points, all_labels = constant(points), labels_tensor(labels)

    def evaluate_model() -> tuple[float, float]:
        with whylab.no_grad():
            loss = float(F.cross_entropy(model(all_points), all_labels).item())
            predicted = model(constant(test_points)).numpy().argmax(axis=1)
        return loss, float(np.mean(predicted == test_labels))

    initial_loss, initial_accuracy = evaluate_model()
    curve_steps, curve_loss, curve_accuracy = [0], [initial_loss], [initial_accuracy]
    every = max(1, steps // CURVE_POINTS)
    order, position = rng.permutation(TRAIN_POINTS), 0
    hand_error = update_error = np.inf
    for step in range(1, steps + 1):
        if position + BATCH > TRAIN_POINTS:
            order, position = rng.permutation(TRAIN_POINTS), 0
        batch = order[position:position + BATCH]
        position += BATCH
        loss = F.cross_entropy(model(constant(points[batch])), labels_tensor(labels[batch]))
        optimizer.zero_grad()
        if control_active("relu-passes-everything"):
            replace_backward(loss, "ReluBackward0", pass_through)
        loss.backward()
        if step == 1:
            hand_error = hand_backward_error(first, second, points[batch], labels[batch])
            before = [(p.detach().numpy().copy(), p.grad.numpy().copy())
                      for p in model.parameters()]
        if control_active("gradient-ascent"):
            for parameter in model.parameters():
                parameter.grad = -parameter.grad
        optimizer.step()
        if step == 1:
            update_error = gradients_error(
                {str(i): p.detach().numpy() for i, p in enumerate(model.parameters())},
                {str(i): value - lr * grad for i, (value, grad) in enumerate(before)})
        if step % every == 0 or step == steps:
            loss_now, accuracy_now = evaluate_model()
            curve_steps.append(step)
            curve_loss.append(loss_now)
            curve_accuracy.append(accuracy_now)
        report_progress(step / steps)

    final_loss, final_accuracy = curve_loss[-1], curve_accuracy[-1]
    checks = [
        error_check(T("First step: the engine's gradients equal a hand-written NumPy backward",
                          "第一步：引擎的梯度等于手写 NumPy 反向传播的结果"),
                        hand_error, HAND_BACKWARD_TOLERANCE, id="hand-backward"),
        error_check(T("SGD moved every parameter by exactly −η·grad",
                          "SGD 让每个参数恰好移动了 −η·grad"),
                        update_error, EXACT_TOLERANCE, id="sgd-update"),
        Check(T(f"Training lowers the loss on the training set to at most "
                f"{LOSS_RATIO_AT_MOST:g}× its initial value",
                f"训练把训练集上的损失降到初始值的 1/{round(1 / LOSS_RATIO_AT_MOST)} 以下"),
              passed=bool(final_loss <= LOSS_RATIO_AT_MOST * initial_loss),
              measured=f"{initial_loss:.3f} → {final_loss:.3f}",
              expected=f"≤ {LOSS_RATIO_AT_MOST * initial_loss:.3f}", id="loss-drops"),
        Check(T(f"Accuracy on {TEST_POINTS} held-out points ≥ {ACCURACY_AT_LEAST:.0%}",
                f"在 {TEST_POINTS} 个未参与训练的点上准确率 ≥ {ACCURACY_AT_LEAST:.0%}"),
              passed=bool(final_accuracy >= ACCURACY_AT_LEAST),
              measured=f"{final_accuracy:.1%}", expected=f"≥ {ACCURACY_AT_LEAST:.0%}",
              id="held-out-accuracy"),
    ]
    return Result(
        checks=checks,
        figures=[
            LineChart(title=T("Cross-entropy on the training set", "训练集上的交叉熵"),
                      x_label=T("SGD step", "SGD 步数"), y_label=T("loss", "损失"),
                      series=[Series(T("training loss", "训练损失"), curve_steps, curve_loss)]),
            LineChart(title=T("Accuracy on held-out points", "未参与训练的点上的准确率"),
                      x_label=T("SGD step", "SGD 步数"), y_label=T("accuracy", "准确率"),
                      series=[Series(T("test accuracy", "测试准确率"), curve_steps,
                                     curve_accuracy)]),
        ],
        metrics={"initial_loss": initial_loss, "final_loss": final_loss,
                 "test_accuracy": final_accuracy, "hand_backward_error": hand_error,
                 "parameters": sum(p.numel() for p in model.parameters())},
    )
