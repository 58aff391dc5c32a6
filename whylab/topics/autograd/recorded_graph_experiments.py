"""Experiments that show what the engine records and does: ``graph`` and ``fan-out``.

The graph is exported with :func:`whylab.autograd.graph_export.to_json` and the
backward pass traced with :func:`whylab.autograd.engine_trace` (see
:mod:`whylab.topics.autograd.backward_trace`); the gradients are compared with
formulas derived by hand.
"""

from __future__ import annotations

import numpy as np

import whylab
from whylab.explorer.experiment import (
    Check,
    Param,
    Result,
    T,
    Text,
    experiment,
)
from whylab.topics.autograd.backward_trace import (
    dependency_mismatches,
    diagram,
    execution_table,
    product_nodes,
    runs_in_dependency_order,
    trace_backward,
    unneeded_saves,
)
from whylab.topics.autograd.comparisons import (
    EXACT_TOLERANCE,
    agreement_check,
    equality_check,
    gradients_error,
    relative_error,
)
from whylab.topics.autograd.expressions import (
    EXPRESSIONS,
    SEED,
    constant,
    expected_nodes,
    expression_param,
    leaf_tensors,
    make_case,
)

ALL_EQUAL = T("all equal", "全部相等")
WRITE_MODES = {"write": T("write", "写入"), "add": T("add", "累加")}


def _runs_text(trace) -> Text:
    return T(f"{len(trace.executed)} runs for {len(trace.nodes)} nodes",
             f"{len(trace.nodes)} 个节点执行了 {len(trace.executed)} 次")


def _write_order_check(name, measured: list[str], expected: list[str]) -> Check:
    """Pass when AccumulateGrad's write modes ("write", "add") came in the expected order."""

    def shown(modes: list[str]):
        return T(" → ".join(WRITE_MODES[m].en for m in modes),
                 " → ".join(WRITE_MODES[m].zh for m in modes))

    return Check(name=name, passed=measured == expected, measured=shown(measured),
                 expected=shown(expected))


# ---------------------------------------------------------------- the recorded graph


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
    params=[expression_param(tuple(EXPRESSIONS), "tanh-affine"), SEED],
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
              measured=f"grad_fn = {untracked.grad_fn.name() if untracked.grad_fn else None}",
              expected="grad_fn = None"),
        Check(T("Each node's dependency count equals the edges pointing at it",
                "每个节点的依赖计数等于指向它的边数"),
              passed=not mismatched,
              measured=ALL_EQUAL if not mismatched else T(f"differs at {mismatched}",
                                                           f"在 {mismatched} 处不同"),
              expected=ALL_EQUAL),
        Check(T("Each node ran once, after every node that sends it a gradient",
                "每个节点只执行一次，且在所有给它传梯度的节点之后"),
              passed=runs_in_dependency_order(trace),
              measured=_runs_text(trace),
              expected=T("one run per node, in dependency order",
                         "每个节点执行一次，按依赖顺序")),
        Check(T("Products save only the factors their needed rules use (Ā = ȲBᵀ needs B, "
                "B̄ = AᵀȲ needs A)",
                "乘法只保存用得到的因子（Ā = ȲBᵀ 要用 B，B̄ = AᵀȲ 要用 A）"),
              passed=product_nodes(trace) > 0 and not unneeded_saves(trace),
              measured=T(f"{product_nodes(trace)} product nodes, "
                         f"{len(unneeded_saves(trace))} keep something else",
                         f"{product_nodes(trace)} 个乘法节点，"
                         f"{len(unneeded_saves(trace))} 个多存了别的"),
              expected=T("> 0 product nodes, 0 keep something else",
                         "乘法节点 > 0 个，多存别的 0 个")),
        Check(T("Saved tensors are freed once the backward pass has used them",
                "反向传播用过之后，保存的张量被释放"),
              passed=trace.saved_before() > 0 and trace.saved_after == 0,
              measured=T(f"{trace.saved_before()} saved before, {trace.saved_after} after",
                         f"之前保存 {trace.saved_before()} 个，之后 {trace.saved_after} 个"),
              expected=T("> 0 before, 0 after", "之前 > 0 个，之后 0 个")),
    ]
    label = EXPRESSIONS[expression].label
    return Result(
        checks=checks,
        figures=[diagram(trace, T(f"Autograd graph of {label.en}",
                                  f"{label.zh} 的自动微分计算图"))],
        tables=[execution_table(trace)],
        metrics={"nodes": len(trace.nodes), "edges": len(trace.edges),
                 "leaves": len(trace.leaf_names), "saved_tensors": trace.saved_before(),
                 "loss": float(loss.item())},
        notes=[T("Edges point the way gradients flow, from the loss towards the leaves; each is "
                 "labelled with the shape of the gradient it carries.",
                 "边的方向就是梯度流动的方向：从损失指向叶子；边上标注的是它所传梯度的形状。")],
    )



# ---------------------------------------------------------------- fan-out


def _counts_by_name(trace, per_node: dict[str, int]) -> dict[str, int]:
    return {trace.node(node_id)["name"]: count for node_id, count in sorted(per_node.items())}


@experiment(
    name="fan-out",
    title=T("Fan-out: b = a + a, c = b · b", "扇出：b = a + a，c = b · b"),
    description=T(
        "Both operations use their input twice, so gradients must be summed twice on the way "
        "back. Shows the engine's dependency counts, input-buffer sums and AccumulateGrad "
        "writes, and what repeated backward passes do to a.grad.",
        "两个运算都把输入用了两次，所以反向时梯度要累加两次。"
        "本实验展示引擎的依赖计数、输入缓冲区累加和 AccumulateGrad 的写入，"
        "以及多次反向传播对 a.grad 的影响。",
    ),
    params=[
        Param("size", "int", 3, T("length of a", "a 的长度"), minimum=1, maximum=8, step=1),
        Param("passes", "int", 2, T("backward passes before clearing a.grad",
                                    "清零 a.grad 之前的反向传播次数"),
              minimum=1, maximum=4, step=1),
        SEED,
    ],
)
def fan_out(size: int, passes: int, seed: int) -> Result:
    a_value = np.random.default_rng(seed).standard_normal(size)
    a = constant(a_value).requires_grad_()
    b = a + a
    c = b * b
    seed_gradient = whylab.ones_like(c)
    trace = trace_backward(c, {"a": a}, grad_output=seed_gradient, retain_graph=True)
    after_one = a.grad.numpy().copy()
    with whylab.autograd.engine_trace() as later:
        for _ in range(passes - 1):
            c.backward(seed_gradient, retain_graph=True)
    after_all = a.grad.numpy().copy()
    writes = trace.grad_writes[next(iter(trace.leaf_names))] + [
        event["mode"] for event in later.events if event["kind"] == "accumulate_grad"]
    a.grad = None  # what optimizer.zero_grad() does
    c.backward(seed_gradient)
    after_clearing = a.grad.numpy()

    checks = [
        agreement_check(T("One pass gives ∂c/∂a = 8a", "一遍反向传播得到 ∂c/∂a = 8a"),
                        relative_error(after_one, 8 * a_value), EXACT_TOLERANCE),
        equality_check(T("Dependency counts: each node waits for every edge into it",
                         "依赖计数：每个节点等齐所有指向它的边"),
                       _counts_by_name(trace, trace.dependencies),
                       {"MulBackward0": 1, "AddBackward0": 2, "AccumulateGrad": 2}),
        equality_check(T("Input buffers summed two gradients at b's node and two at a's",
                         "输入缓冲区在 b 的节点和 a 的节点各累加了两个梯度"),
                       _counts_by_name(trace, {node: adds + 1 for node, adds
                                               in trace.buffer_sums.items()}),
                       {"AddBackward0": 2, "AccumulateGrad": 2}),
        Check(T("Each node ran once, with the full sum", "每个节点只执行一次，拿到的是完整的和"),
              passed=runs_in_dependency_order(trace),
              measured=_runs_text(trace),
              expected=T("one run per node", "每个节点执行一次")),
        agreement_check(T(f"After {passes} passes AccumulateGrad has added them up: "
                          f"a.grad = {passes}·8a",
                          f"{passes} 遍之后 AccumulateGrad 把它们加在一起：a.grad = {passes}·8a"),
                        relative_error(after_all, passes * 8 * a_value), EXACT_TOLERANCE),
        _write_order_check(T("AccumulateGrad writes .grad first, then adds to it",
                             "AccumulateGrad 第一次写入 .grad，之后都是累加"),
                           [mode if mode == "add" else "write" for mode in writes],
                           ["write"] + ["add"] * (passes - 1)),
        agreement_check(T("After clearing a.grad, one pass gives 8a again",
                          "清零 a.grad 后，再走一遍又得到 8a"),
                        relative_error(after_clearing, 8 * a_value), EXACT_TOLERANCE),
    ]
    return Result(
        checks=checks,
        figures=[diagram(trace, T("Autograd graph of c = (a + a) · (a + a)",
                                  "c = (a + a) · (a + a) 的自动微分计算图"))],
        tables=[execution_table(trace)],
        metrics={"passes": passes, "grad_over_a_after_passes": float(after_all[0] / a_value[0])
                 if a_value[0] else 0.0},
        notes=[T("Two edges leave each node because each operation used its input twice; the "
                 "engine sums what arrives over both before running the next node.",
                 "每个节点都引出两条边，因为每个运算都把输入用了两次；"
                 "引擎先把两条边送来的梯度加起来，再执行下一个节点。")],
    )
