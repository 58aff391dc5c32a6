"""The ``checkpoint`` experiment: what the saved activations cost, and what checkpointing
trades for them.

A stack of layers h → dropout(tanh(h W)) is run twice with the same random
masks: once plainly, once with :func:`whylab.utils.checkpoint.checkpoint` around
every segment of a few layers. :func:`whylab.autograd.saved_tensors_bytes`
measures what each graph keeps for its backward pass; the expected figures are
counted from the layer's three saved tensors (its input for the product, the
output of tanh, the dropout mask), not from the engine. The recomputation is
counted by how often the layer function ran.
"""

from __future__ import annotations

import math

import numpy as np

import whylab
import whylab.nn.functional as F
from whylab.autograd import saved_tensors_bytes
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
)
from whylab.topics.autograd.comparisons import gradients_error
from whylab.topics.autograd.expressions import SEED, constant
from whylab.topics.shared import error_check
from whylab.utils.checkpoint import checkpoint

BATCH = 32
DROPOUT = 0.1
SAVED_PER_LAYER = 3  # the product's input h, tanh's output, dropout's mask: one activation each
KIB = 1024


class Stack:
    """``depth`` layers h → dropout(tanh(h W)); counts how often a layer ran."""

    def __init__(self, weights: list[whylab.Tensor]):
        self.weights = weights
        self.layer_runs = 0

    def layer(self, h: whylab.Tensor, weight: whylab.Tensor) -> whylab.Tensor:
        self.layer_runs += 1
        product = h @ weight
        if control_active("tanh-written-out"):
            activated = 1 - 2 / ((2 * product).exp() + 1)  # tanh, op by op
        else:
            activated = product.tanh()
        return F.dropout(activated, DROPOUT)

    def segment(self, h: whylab.Tensor, first: int, last: int) -> whylab.Tensor:
        for weight in self.weights[first:last]:
            h = self.layer(h, weight)
        return h

    def forward(self, x: whylab.Tensor, depth: int, segment: int | None) -> whylab.Tensor:
        """The first ``depth`` layers; with ``segment``, checkpointed that many at a time."""
        h = x
        for first in range(0, depth, segment or depth):
            last = min(depth, first + (segment or depth))
            if segment is None or control_active("checkpoint-off"):
                h = self.segment(h, first, last)
            else:
                h = checkpoint(self.segment, h, first, last,
                               preserve_rng_state=not control_active("rng-not-preserved"))
        return h


def _kib(count: float) -> str:
    return f"{count / KIB:.0f} KiB"


@experiment(
    name="checkpoint",
    title=T("Saved activations against depth, with and without checkpointing",
            "保存的激活值随深度的变化：用与不用检查点"),
    description=T(
        "Runs a stack of dropout(tanh(h·W)) layers with whylab, measures with "
        "saved_tensors_bytes what the graph keeps for backward, then does the same with "
        "whylab.utils.checkpoint around every segment of layers, and counts the layers that run "
        "again during backward.",
        "用 whylab 运行一叠 dropout(tanh(h·W)) 层，用 saved_tensors_bytes 测出计算图为反向传播"
        "保存了多少字节；再给每一段层套上 whylab.utils.checkpoint 重做一遍，"
        "并数出反向传播时重新运行的层数。",
    ),
    params=[
        Param("depth", "int", 16, T("layers", "层数"), minimum=1, maximum=32, step=1),
        Param("segment", "int", 4, T("layers per checkpointed segment",
                                     "每个检查点段的层数"), minimum=1, maximum=16, step=1),
        Param("width", "int", 64, T("width of each layer", "每层宽度"), minimum=4, maximum=128,
              step=1),
        SEED,
    ],
    controls=[
        Control("tanh-written-out",
                T("tanh were written out as 1 − 2/(e^{2u} + 1), which saves more tensors",
                  "tanh 写成 1 − 2/(e^{2u} + 1) 逐步计算，保存的张量更多"),
                breaks=("plain-saved-bytes",)),
        Control("checkpoint-off",
                T("the segments were run without checkpoint()",
                  "各段没有套上 checkpoint()"),
                breaks=("checkpoint-saved-bytes", "layers-run-twice")),
        Control("rng-not-preserved",
                T("the recomputation drew new dropout masks (preserve_rng_state=False)",
                  "重算时抽取了新的 dropout 掩码（preserve_rng_state=False）"),
                breaks=("same-gradients",)),
    ],
    metrics=[
        Metric(
            "plain_saved_bytes",
            T("saved for backward, no checkpoints", "不用检查点时为反向传播保存的字节数"),
            "B",
        ),
        Metric(
            "checkpoint_saved_bytes",
            T("saved for backward, with checkpoints", "使用检查点时为反向传播保存的字节数"),
            "B",
        ),
        Metric(
            "memory_ratio",
            T("saved bytes: with / without checkpoints", "保存的字节数：使用 / 不用检查点"),
            "×",
        ),
        Metric("layer_runs_plain", T("layer runs, no checkpoints", "不用检查点时各层的运行次数")),
        Metric(
            "layer_runs_checkpoint",
            T("layer runs, with checkpoints", "使用检查点时各层的运行次数"),
        ),
    ],
)
def checkpoint_experiment(depth: int, segment: int, width: int, seed: int) -> Result:
    rng = np.random.default_rng(seed)
    weights = [constant(rng.standard_normal((width, width)) / np.sqrt(width)).requires_grad_()
               for _ in range(depth)]
    x = constant(rng.standard_normal((BATCH, width)))
    activation = BATCH * width * 8  # bytes of one float64 activation

    def measured(segment_or_none: int | None) -> tuple[int, int, dict[str, np.ndarray]]:
        """(saved bytes, layer runs in forward and backward, gradients) for one run."""
        stack = Stack(weights)
        for weight in weights:
            weight.grad = None
        whylab.manual_seed(seed)  # the same dropout masks for both runs
        output = stack.forward(x, depth, segment_or_none)
        saved = saved_tensors_bytes(output, include_parameters=False)
        (output * output).sum().backward()
        gradients = {str(i): w.grad.numpy().copy() for i, w in enumerate(weights)}
        return saved, stack.layer_runs, gradients

    plain_bytes, plain_runs, plain_gradients = measured(None)
    checkpoint_bytes, checkpoint_runs, checkpoint_gradients = measured(segment)
    segments = math.ceil(depth / segment)
    expected_plain = SAVED_PER_LAYER * depth * activation
    expected_checkpoint = segments * activation

    depths = list(range(1, depth + 1))
    curves = {"plain": [], "checkpoint": []}
    for d in depths:
        for kind, segment_or_none in (("plain", None), ("checkpoint", segment)):
            output = Stack(weights).forward(x, d, segment_or_none)
            curves[kind].append(saved_tensors_bytes(output, include_parameters=False) / KIB)

    checks = [
        Check(T(f"Without checkpointing the graph keeps {SAVED_PER_LAYER} activations per layer "
                "(input, tanh output, dropout mask)",
                f"不用检查点时，计算图每层保存 {SAVED_PER_LAYER} 个激活值"
                "（输入、tanh 的输出、dropout 掩码）"),
              passed=plain_bytes == expected_plain, measured=_kib(plain_bytes),
              expected=f"{SAVED_PER_LAYER} × {depth} × {_kib(activation)} = "
                       f"{_kib(expected_plain)}",
              id="plain-saved-bytes"),
        Check(T("With checkpointing it keeps only each segment's input",
                "用检查点时，只保存每段的输入"),
              passed=checkpoint_bytes == expected_checkpoint, measured=_kib(checkpoint_bytes),
              expected=f"⌈{depth}/{segment}⌉ × {_kib(activation)} = {_kib(expected_checkpoint)}",
              id="checkpoint-saved-bytes"),
        Check(T("The price: every layer runs twice, once forward and once again in backward",
                "代价：每层运行两次，前向一次，反向时再运行一次"),
              passed=(plain_runs, checkpoint_runs) == (depth, 2 * depth),
              measured=T(f"{plain_runs} layer runs plain, {checkpoint_runs} with checkpointing",
                         f"层函数不用检查点时运行 {plain_runs} 次，"
                         f"用检查点时 {checkpoint_runs} 次"),
              expected=T(f"{depth} and {2 * depth}", f"{depth} 和 {2 * depth}"),
              id="layers-run-twice"),
        error_check(T("Checkpointing changes no gradient (the recomputation replays the "
                          "same dropout masks)",
                          "检查点不改变任何梯度（重算时重放同样的 dropout 掩码）"),
                        gradients_error(checkpoint_gradients, plain_gradients), 0.0,
                        id="same-gradients"),
    ]
    return Result(
        checks=checks,
        figures=[LineChart(
            title=T(f"Bytes saved for backward, batch {BATCH} × width {width} (float64)",
                    f"为反向传播保存的字节数，批大小 {BATCH} × 宽度 {width}（float64）"),
            x_label=T("layers", "层数"), y_label=T("saved tensors (KiB)", "保存的张量（KiB）"),
            series=[Series(T("plain", "不用检查点"), depths, curves["plain"]),
                    Series(T(f"checkpoint every {segment} layers", f"每 {segment} 层一个检查点"),
                           depths, curves["checkpoint"])])],
        metrics={"plain_saved_bytes": plain_bytes, "checkpoint_saved_bytes": checkpoint_bytes,
                 "memory_ratio": checkpoint_bytes / plain_bytes,
                 "layer_runs_plain": plain_runs, "layer_runs_checkpoint": checkpoint_runs},
    )
