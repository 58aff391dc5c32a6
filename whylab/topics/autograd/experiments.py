"""Experiments for "the mini autograd": the recorded graph, forward vs reverse mode, the
local backward rules, softmax/cross-entropy stability, fan-out, finite differences and a
trained two-layer classifier.

Everything runs whylab's engine: graphs come from
:func:`whylab.autograd.graph_export.to_json`, the execution order and buffer sums
from :func:`whylab.autograd.engine_trace`, gradients from ``backward()`` and
:func:`whylab.autograd.grad`. Each is compared with a reference that does not use
the engine: a formula written out in NumPy, central finite differences, or exact
decimal arithmetic. A reader's "expression" is a choice among the functions in
:mod:`whylab.topics.autograd.expressions`; nothing a reader sends is evaluated.
"""

from __future__ import annotations

import numpy as np

import whylab
from whylab.explorer.experiment import Check, Param, Result, T, experiment
from whylab.topics.autograd.backward_trace import (
    dependency_mismatches,
    diagram,
    execution_table,
    runs_in_dependency_order,
    trace_backward,
)
from whylab.topics.autograd.comparisons import (
    agreement_check,
    equality_check,
    gradients_error,
)
from whylab.topics.autograd.expressions import (
    EXPRESSIONS,
    expected_nodes,
    leaf_tensors,
    make_case,
)

EXACT_TOLERANCE = 1e-12  # engine vs a formula in float64: only rounding differs
SEED = Param("seed", "int", 0, T("random seed", "随机种子"), minimum=0, maximum=2**31 - 1,
             seed=True)


def _expression_param(keys: tuple[str, ...], default: str) -> Param:
    return Param("expression", "choice", default, T("expression", "表达式"), choices=keys,
                 choice_labels=tuple(EXPRESSIONS[k].label for k in keys))


# ---------------------------------------------------------------- 1. the recorded graph


@experiment(
    name="graph",
    title=T("The graph the engine records", "引擎记录下的计算图"),
    description=T(
        "Runs the chosen expression once with whylab, draws the autograd graph it recorded "
        "(exported by whylab.autograd.graph_export), then runs backward() and lists what the "
        "engine did, step by step.",
        "用 whylab 运行一次所选表达式，画出它记录的自动微分计算图"
        "（由 whylab.autograd.graph_export 导出），再调用 backward()，逐步列出引擎做了什么。",
    ),
    params=[_expression_param(tuple(EXPRESSIONS), "tanh-affine"), SEED],
)
def graph(expression: str, seed: int) -> Result:
    case = make_case(expression, seed)
    leaves = leaf_tensors(case.leaves)
    loss = case.loss(leaves)
    with whylab.no_grad():
        untracked = case.loss(leaves)
    trace = trace_backward(loss, leaves)

    recorded = sorted(n["name"] for n in trace.nodes if n["kind"] != "leaf")
    leaf_nodes = sorted(trace.leaf_names.values())
    engine_gradients = {name: t.grad.numpy() for name, t in leaves.items()}
    mismatched = dependency_mismatches(trace)
    checks = [
        equality_check(T("One AccumulateGrad node per leaf that requires grad (data gets none)",
                         "每个需要梯度的叶子对应一个 AccumulateGrad 节点（数据没有）"),
                       leaf_nodes, sorted(case.leaves)),
        equality_check(T("The recorded grad_fn nodes are the expression's operations",
                         "记录下的 grad_fn 节点正是表达式中的运算"),
                       recorded, expected_nodes(case)),
        agreement_check(T("The engine's gradients equal the hand-derived formula",
                          "引擎算出的梯度等于手推公式"),
                        gradients_error(engine_gradients, case.gradient(case.leaves)),
                        EXACT_TOLERANCE),
        Check(T("Under no_grad nothing is recorded", "在 no_grad 下什么也不记录"),
              passed=untracked.grad_fn is None and not untracked.requires_grad,
              measured=f"grad_fn = {type(untracked.grad_fn).__name__ if untracked.grad_fn else None}",
              expected="grad_fn = None"),
        Check(T("Each node's dependency count equals the edges pointing at it",
                "每个节点的依赖计数等于指向它的边数"),
              passed=not mismatched,
              measured="all equal" if not mismatched else f"differs at {mismatched}",
              expected="all equal"),
        Check(T("Each node ran once, after every node that sends it a gradient",
                "每个节点只执行一次，且在所有给它传梯度的节点之后"),
              passed=runs_in_dependency_order(trace),
              measured=f"{len(trace.executed)} runs for {len(trace.nodes)} nodes",
              expected="one run per node, in dependency order"),
        Check(T("Saved tensors are freed once the backward pass has used them",
                "反向传播用过之后，保存的张量被释放"),
              passed=trace.saved_before() > 0 and trace.saved_after == 0,
              measured=f"{trace.saved_before()} saved before, {trace.saved_after} after",
              expected="> 0 before, 0 after"),
    ]
    label = EXPRESSIONS[expression].label
    return Result(
        checks=checks,
        figures=[diagram(trace, T(f"Autograd graph of {label.en}", f"{label.zh} 的自动微分计算图"))],
        tables=[execution_table(trace)],
        metrics={"nodes": len(trace.nodes), "edges": len(trace.edges),
                 "leaves": len(trace.leaf_names), "saved_tensors": trace.saved_before(),
                 "loss": float(loss.item())},
        notes=[T("Edges point the way gradients flow, from the loss towards the leaves; each is "
                 "labelled with the shape of the gradient it carries.",
                 "边的方向就是梯度流动的方向：从损失指向叶子；边上标注的是它所传梯度的形状。")],
    )


EXPERIMENTS = [graph]
