"""Experiments that show what the engine records and does: ``graph`` and ``fan-out``.

The graph is exported with :func:`whylab.autograd.graph_export.to_json` and the
backward pass traced with :func:`whylab.autograd.engine_trace` (see
:mod:`whylab.topics.autograd.backward_trace`); the gradients are compared with
formulas derived by hand, the node names with what PyTorch records
(:mod:`whylab.topics.autograd.torch_reference`).
"""

from __future__ import annotations

import contextlib

import numpy as np

import whylab
from whylab.explorer.experiment import (
    Check,
    Control,
    Metric,
    Param,
    Result,
    T,
    Text,
    control_active,
    experiment,
)
from whylab.topics.autograd.backward_trace import (
    dependency_mismatches,
    diagram,
    execution_table,
    product_saves,
    runs_in_dependency_order,
    trace_backward,
)
from whylab.topics.autograd.comparisons import (
    EXACT_TOLERANCE,
    equality_check,
    gradients_error,
    relative_error,
)
from whylab.topics.autograd.expressions import (
    EXPRESSIONS,
    SEED,
    constant,
    expression_param,
    leaf_tensors,
    make_case,
)
from whylab.topics.autograd.sabotage import keep_first_gradient, pass_through, replace_backward
from whylab.topics.autograd.torch_reference import PRODUCT_SAVES, RECORDED_NODES, TORCH_VERSION
from whylab.topics.shared import error_check

ALL_EQUAL = T("all equal", "全部相等")
WRITE_MODES = {"write": T("write", "写入"), "add": T("add", "累加")}


def _runs_text(trace) -> Text:
    return T(f"{len(trace.executed)} runs for {len(trace.nodes)} nodes",
             f"{len(trace.nodes)} 个节点执行了 {len(trace.executed)} 次")


def _saves_text(saves: list[tuple[str, list[str]]]) -> str:
    """Product saves the way torch names them: "MmBackward0: _saved_self; ..."."""
    return "; ".join(f"{node}: {', '.join('_saved_' + name for name in names)}"
                     for node, names in saves)


def _write_order_check(name, measured: list[str], expected: list[str], *, id: str) -> Check:
    """Pass when AccumulateGrad's write modes ("write", "add") came in the expected order."""

    def shown(modes: list[str]):
        return T(" → ".join(WRITE_MODES[m].en for m in modes),
                 " → ".join(WRITE_MODES[m].zh for m in modes))

    return Check(name=name, passed=measured == expected, measured=shown(measured),
                 expected=shown(expected), id=id)


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
    controls=[
        Control("data-requires-grad",
                T("the data x also required a gradient (an extra leaf, and the product keeps "
                  "both factors)",
                  "数据 x 也要求梯度（多出一个叶子张量，乘法也把两个因子都存下）"),
                breaks=("one-accumulate-grad-per-leaf", "products-save-what-torch-saves")),
        Control("cross-entropy-unfused",
                T("cross-entropy were written as −log softmax(z)_y, op by op (it records "
                  "other nodes than torch's cross_entropy)",
                  "交叉熵写成逐个运算的 −log softmax(z)_y（记录下的节点与 torch 的 cross_entropy "
                  "不同）"),
                breaks=("nodes-match-torch",), params={"expression": "softmax-ce"}),
        Control("tanh-rule-forgotten",
                T("tanh's backward forgot its local derivative 1 − y² (the gradient passes "
                  "through unchanged)",
                  "tanh 的反向忘了乘局部导数 1 − y²（梯度原样通过）"),
                breaks=("gradients-match-formula",)),
        Control("no-grad-ignored",
                T("no_grad were ignored and the second run recorded a graph too",
                  "no_grad 被忽略，第二次运行也记录了计算图"),
                breaks=("no-grad-records-nothing",)),
        Control("eager-engine",
                T("the engine pushed every gradient through its node the moment it arrived, "
                  "without dependency counts or input buffers",
                  "引擎不做依赖计数、不用输入缓冲区，每个梯度一到就立刻穿过节点往下传"),
                breaks=("dependency-counts", "dependency-order"),
                params={"expression": "diff-squares"}),
        Control("saved-tensors-kept",
                T("the backward pass kept the saved tensors (retain_graph=True)",
                  "反向传播保留了保存的张量（retain_graph=True）"),
                breaks=("saved-tensors-freed",)),
    ],
    metrics=[
        Metric("nodes", T("nodes", "节点数")),
        Metric("edges", T("edges", "边数")),
        Metric("leaves", T("leaf tensors", "叶子张量数")),
        Metric("saved_tensors", T("saved tensors before backward", "反向传播之前保存的张量数")),
        Metric("loss", T("loss", "损失")),
    ],
)
def graph(expression: str, seed: int) -> Result:
    case = make_case(expression, seed)
    leaves = leaf_tensors(case.leaves)
    loss = case.loss(leaves)
    if control_active("tanh-rule-forgotten"):
        replace_backward(loss, "TanhBackward0", pass_through)
    grad_mode = (contextlib.nullcontext() if control_active("no-grad-ignored")
                 else whylab.no_grad())
    with grad_mode:
        untracked = case.loss(leaves)
    trace = trace_backward(loss, leaves, retain_graph=control_active("saved-tensors-kept"),
                           eager=control_active("eager-engine"))

    recorded = sorted(n["name"] for n in trace.nodes if n["kind"] != "leaf")
    leaf_nodes = sorted(trace.leaf_names.values())
    engine_gradients = {name: t.grad.numpy() for name, t in leaves.items()}
    mismatched = dependency_mismatches(trace)
    saves = product_saves(trace)
    checks = [
        equality_check(T("One AccumulateGrad node per leaf that requires grad (data gets none)",
                         "每个需要梯度的叶子张量对应一个 AccumulateGrad 节点（数据没有）"),
                       leaf_nodes, sorted(case.leaves), id="one-accumulate-grad-per-leaf"),
        equality_check(T(f"The recorded grad_fn nodes are those torch {TORCH_VERSION} records "
                         "for the same expression",
                         f"记录下的 grad_fn 节点与 torch {TORCH_VERSION} 为同一表达式记录的相同"),
                       recorded, RECORDED_NODES[expression], id="nodes-match-torch"),
        error_check(T("The engine's gradients equal the hand-derived formula",
                          "引擎算出的梯度等于手推公式"),
                        gradients_error(engine_gradients, case.gradient(case.leaves)),
                        EXACT_TOLERANCE, id="gradients-match-formula"),
        Check(T("Under no_grad nothing is recorded", "在 no_grad 下什么也不记录"),
              passed=untracked.grad_fn is None and not untracked.requires_grad,
              measured=f"grad_fn = {untracked.grad_fn.name() if untracked.grad_fn else None}",
              expected="grad_fn = None", id="no-grad-records-nothing"),
        Check(T("Each node's dependency count equals the edges pointing at it",
                "每个节点的依赖计数等于指向它的边数"),
              passed=not mismatched,
              measured=ALL_EQUAL if not mismatched else T(f"differs at {mismatched}",
                                                           f"在 {mismatched} 处不同"),
              expected=ALL_EQUAL, id="dependency-counts"),
        Check(T("Each node ran once, after every node that sends it a gradient",
                "每个节点只执行一次，且在所有给它传梯度的节点之后"),
              passed=runs_in_dependency_order(trace),
              measured=_runs_text(trace),
              expected=T("one run per node, in dependency order",
                         "每个节点执行一次，按依赖顺序"), id="dependency-order"),
        Check(T(f"Products save only the factors their needed rules use, as in torch "
                         f"{TORCH_VERSION} (Ā = ȲBᵀ needs B, B̄ = AᵀȲ needs A)",
                         f"乘法只保存用得到的因子，与 torch {TORCH_VERSION} 相同"
                         "（Ā = ȲBᵀ 要用 B，B̄ = AᵀȲ 要用 A）"),
              passed=saves == PRODUCT_SAVES[expression], measured=_saves_text(saves),
              expected=_saves_text(PRODUCT_SAVES[expression]),
              id="products-save-what-torch-saves"),
        Check(T("Saved tensors are freed once the backward pass has used them",
                "反向传播用过之后，保存的张量被释放"),
              passed=trace.saved_before() > 0 and trace.saved_after == 0,
              measured=T(f"{trace.saved_before()} saved before, {trace.saved_after} after",
                         f"之前保存 {trace.saved_before()} 个，之后 {trace.saved_after} 个"),
              expected=T("> 0 before, 0 after", "之前 > 0 个，之后 0 个"),
              id="saved-tensors-freed"),
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
                 "边的方向就是梯度流动的方向：从损失指向叶子张量；边上标注的是它所传梯度的形状。")],
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
    controls=[
        Control("fan-out-gradient-dropped",
                T("each node passed on only the gradient of its first use (the fan-out "
                  "contributions were not added up)",
                  "每个节点只传出第一次使用的梯度（扇出处的梯度没有相加）"),
                breaks=("one-pass-gives-8a", "buffer-sums", "passes-add-up",
                        "cleared-gives-8a")),
        Control("eager-engine",
                T("the engine pushed every gradient through its node the moment it arrived, "
                  "without dependency counts or input buffers",
                  "引擎不做依赖计数、不用输入缓冲区，每个梯度一到就立刻穿过节点往下传"),
                breaks=("dependency-counts", "buffer-sums", "each-node-once",
                        "write-then-add")),
        Control("grad-overwritten",
                T("AccumulateGrad overwrote .grad on every pass instead of adding to it",
                  "AccumulateGrad 每一遍都覆盖 .grad，而不是累加"),
                breaks=("passes-add-up", "write-then-add")),
        Control("grad-not-cleared",
                T("a.grad was not cleared before the last pass",
                  "最后一遍之前没有清零 a.grad"),
                breaks=("cleared-gives-8a",)),
    ],
    metrics=[
        Metric("passes", T("backward passes", "反向传播次数")),
        Metric(
            "grad_over_a_after_passes",
            T("a.grad after the passes / a", "多次反向传播之后的 a.grad / a"),
        ),
    ],
)
def fan_out(size: int, passes: int, seed: int) -> Result:
    a_value = np.random.default_rng(seed).standard_normal(size)
    a = constant(a_value).requires_grad_()
    b = a + a
    c = b * b
    if control_active("fan-out-gradient-dropped"):
        for name in ("MulBackward0", "AddBackward0"):
            replace_backward(c, name, keep_first_gradient)
    seed_gradient = whylab.ones_like(c)
    trace = trace_backward(c, {"a": a}, grad_output=seed_gradient, retain_graph=True,
                           eager=control_active("eager-engine"))
    after_one = a.grad.numpy().copy()
    with whylab.autograd.engine_trace() as later:
        for _ in range(passes - 1):
            if control_active("grad-overwritten"):
                a.grad = None
            c.backward(seed_gradient, retain_graph=True)
    after_all = a.grad.numpy().copy()
    writes = trace.grad_writes[next(iter(trace.leaf_names))] + [
        event["mode"] for event in later.events if event["kind"] == "accumulate_grad"]
    if not control_active("grad-not-cleared"):
        a.grad = None  # what optimizer.zero_grad() does
    c.backward(seed_gradient)
    after_clearing = a.grad.numpy()

    needs_two_passes = T("needs at least 2 backward passes", "需要至少 2 遍反向传播")
    accumulate_name = T(f"After {passes} passes AccumulateGrad has added them up: "
                        f"a.grad = {passes}·8a",
                        f"{passes} 遍之后 AccumulateGrad 把它们加在一起：a.grad = {passes}·8a")
    write_name = T("AccumulateGrad writes .grad first, then adds to it",
                   "AccumulateGrad 第一次写入 .grad，之后都是累加")
    write_modes = [mode if mode == "add" else "write" for mode in writes]
    if passes >= 2:
        accumulate_check = error_check(accumulate_name,
                                           relative_error(after_all, passes * 8 * a_value),
                                           EXACT_TOLERANCE, id="passes-add-up")
        write_check = _write_order_check(write_name, write_modes,
                                         ["write"] + ["add"] * (passes - 1), id="write-then-add")
    else:
        accumulate_check = Check.not_applicable(id="passes-add-up", name=accumulate_name,
                                                expected="a.grad = passes·8a",
                                                why=needs_two_passes)
        write_check = Check.not_applicable(id="write-then-add", name=write_name,
                                           expected=T("write → add", "写入 → 累加"),
                                           why=needs_two_passes)
    checks = [
        error_check(T("One pass gives ∂c/∂a = 8a", "一遍反向传播得到 ∂c/∂a = 8a"),
                        relative_error(after_one, 8 * a_value), EXACT_TOLERANCE,
                        id="one-pass-gives-8a"),
        equality_check(T("Dependency counts: each node waits for every edge into it",
                         "依赖计数：每个节点等齐所有指向它的边"),
                       _counts_by_name(trace, trace.dependencies),
                       {"MulBackward0": 1, "AddBackward0": 2, "AccumulateGrad": 2},
                       id="dependency-counts"),
        equality_check(T("Input buffers summed two gradients at b's node and two at a's",
                         "输入缓冲区在 b 的节点和 a 的节点各累加了两个梯度"),
                       _counts_by_name(trace, {node: adds + 1 for node, adds
                                               in trace.buffer_sums.items()}),
                       {"AddBackward0": 2, "AccumulateGrad": 2}, id="buffer-sums"),
        Check(T("Each node ran once, with the full sum", "每个节点只执行一次，拿到的是完整的和"),
              passed=runs_in_dependency_order(trace),
              measured=_runs_text(trace),
              expected=T("one run per node", "每个节点执行一次"), id="each-node-once"),
        accumulate_check,
        write_check,
        error_check(T("After clearing a.grad, one pass gives 8a again",
                          "清零 a.grad 后，再走一遍又得到 8a"),
                        relative_error(after_clearing, 8 * a_value), EXACT_TOLERANCE,
                        id="cleared-gives-8a"),
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
