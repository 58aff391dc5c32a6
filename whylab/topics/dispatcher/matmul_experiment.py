"""Experiment ``matmul-trace``: run ``a @ b`` under a dispatcher trace and draw every hop.

The operands are whylab tensors of the chosen ranks; the product runs through
the real dispatcher inside ``whylab.dispatch.trace()``. The checks compare the
trace with the rule table of :mod:`~whylab.topics.dispatcher.matmul_rules`
(written from the prose, not from the engine) and the numbers with NumPy's
``np.matmul``.
"""

from __future__ import annotations

import contextlib

import numpy as np

import whylab
from whylab.dispatch import TraceEvent, trace
from whylab.explorer.experiment import (
    Check,
    Control,
    Metric,
    Param,
    Result,
    T,
    Table,
    Text,
    control_active,
    experiment,
)
from whylab.topics.dispatcher.key_rules import PRIORITY
from whylab.topics.dispatcher.matmul_rules import (
    FOLD_REASONS,
    INNER_OPS,
    RULES,
    broadcast_batch,
    predict,
)
from whylab.topics.dispatcher.trace_view import (
    group_calls,
    top_level_ops,
    trace_diagram,
    trace_table,
)
from whylab.topics.shared import agreement_check

VALUE_TOLERANCE = 1e-12  # relative, float64
OUTER_BATCH = 2  # the extra leading batch size of a 4-D a


def operand_shapes(rank_a: int, rank_b: int, rows: int, inner: int, cols: int,
                   batch: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Shapes of a and b: a is (2, batch, rows, inner) cut to its rank, b is
    (1, batch, inner, cols) cut to its rank; a 1-D operand is just (inner,).

    The 1 in b's outer batch dimension broadcasts against a's 2.
    """
    shape_a = (inner,) if rank_a == 1 else ((OUTER_BATCH, batch)[4 - rank_a:] + (rows, inner))
    shape_b = (inner,) if rank_b == 1 else ((1, batch)[4 - rank_b:] + (inner, cols))
    return shape_a, shape_b


def first_product(events: list[TraceEvent]) -> str | None:
    """The first of dot/mv/mm/bmm that matmul called (depth 1 in the trace)."""
    return next((op for op in top_level_ops(events) if op in INNER_OPS), None)


def inner_op_check(traced: str | None, predicted: str, rule: str,
                   fold_reason: str | None = None) -> Check:
    """Pass when the product the engine chose is the one the rule table names."""
    rule_en, rule_zh = RULES[rule]
    if fold_reason is not None:
        reason_en, reason_zh = FOLD_REASONS[fold_reason]
        rule_en, rule_zh = f"{rule_en}: {reason_en}", f"{rule_zh}：{reason_zh}"
    return Check(
        id="product-as-rule-table",
        name=T(f"matmul chose the product the rule table predicts ({rule_en})",
               f"matmul 选用的乘法与规则表的预测一致（{rule_zh}）"),
        passed=traced == predicted, measured=str(traced), expected=predicted)


def larger_flag_check(product: str | None, flipped_product: str | None, larger: str) -> Check:
    """Pass when flipping requires_grad on the larger operand leaves the product unchanged."""
    return Check(
        id="larger-flag-irrelevant",
        name=T(f"Flipping requires_grad on the larger operand ({larger}) does not change "
               "the product",
               f"翻转较大操作数（{larger}）的 requires_grad，选用的乘法不变"),
        passed=product is not None and product == flipped_product,
        measured=f"{product} → {flipped_product}", expected=f"{product} → {product}")


def traced_product(a_values: np.ndarray, b_values: np.ndarray, grad_a: bool,
                   grad_b: bool) -> tuple[whylab.Tensor, list[TraceEvent]]:
    """Run a @ b on fresh whylab tensors inside a trace: the result and the hops.

    Two negative controls change what runs: ``first-matrix-only`` multiplies only the
    first matrix of a's batch, ``product-under-no-grad`` runs the product under no_grad().
    """
    a = whylab.tensor(a_values, requires_grad=grad_a)
    b = whylab.tensor(b_values, requires_grad=grad_b)
    if control_active("first-matrix-only") and a.ndim >= 3:
        a = a[0]
    no_grad = control_active("product-under-no-grad")
    quiet = whylab.no_grad() if no_grad else contextlib.nullcontext()
    with quiet, trace() as recorded:
        c = a @ b
    return c, list(recorded.events)


def batch_rule(batch_a: tuple[int, ...], batch_b: tuple[int, ...]) -> tuple[int, ...]:
    """The page's broadcast of two batch shapes; under the control ``broadcast-takes-max``
    the naive rule d = max(s, t), which is wrong when a size is 0."""
    if not control_active("broadcast-takes-max"):
        return broadcast_batch(batch_a, batch_b)
    length = max(len(batch_a), len(batch_b))
    padded_a = (1,) * (length - len(batch_a)) + tuple(batch_a)
    padded_b = (1,) * (length - len(batch_b)) + tuple(batch_b)
    return tuple(max(pair) for pair in zip(padded_a, padded_b, strict=True))


def size_zero_check(rows: int, inner: int, cols: int) -> Check:
    """Batch sizes of 0 broadcast as the rule says: 0 against 1 gives 0, 0 against 2 fails.

    The engine's matmul runs on ones of each pair of shapes; the prediction is the
    page's broadcast rule followed by (n, p).
    """
    pairs = [((0, rows, inner), (1, inner, cols)), ((1, rows, inner), (0, inner, cols)),
             ((0, rows, inner), (2, inner, cols))]
    engine, rule = [], []
    for shape_a, shape_b in pairs:
        try:
            product = whylab.matmul(whylab.ones(shape_a, dtype=whylab.float64),
                                    whylab.ones(shape_b, dtype=whylab.float64))
            engine.append(str(tuple(product.shape)))
        except RuntimeError:
            engine.append("error")
        try:
            rule.append(str(batch_rule(shape_a[:-2], shape_b[:-2]) + (rows, cols)))
        except ValueError:
            rule.append("error")
    return Check(
        id="size-zero-broadcast",
        name=T("A batch size of 0 broadcasts against 1 to 0, and against 2 not at all: "
               "(0, n, k) @ (1, k, p), (1, n, k) @ (0, k, p) and (0, n, k) @ (2, k, p) "
               "give what the broadcast rule says",
               "批维度为 0 时，与 1 广播得 0，与 2 则无法广播：(0, n, k) @ (1, k, p)、"
               "(1, n, k) @ (0, k, p) 与 (0, n, k) @ (2, k, p) 的结果都符合广播规则"),
        passed=engine == rule,
        measured=T("; ".join(engine), "; ".join(engine).replace("error", "报错")),
        expected=T("; ".join(rule), "; ".join(rule).replace("error", "报错")))


def shape_check(check_id: str, name: Text, measured: tuple[int, ...],
                expected: tuple[int, ...]) -> Check:
    """Pass when two shapes are equal."""
    return Check(id=check_id, name=name, passed=tuple(measured) == tuple(expected),
                 measured=str(tuple(measured)), expected=str(tuple(expected)))


def values_check(values: np.ndarray, reference: np.ndarray,
                 tolerance: float = VALUE_TOLERANCE) -> Check:
    """Pass when the values agree with ``reference`` to a relative error of ``tolerance``."""
    name = T("The values equal np.matmul", "数值与 np.matmul 相同")
    return agreement_check("values-as-numpy", name, values, reference, tolerance)


def descending_keys_check(events: list[TraceEvent]) -> Check:
    """Within one call, each hop is at a lower key than the hop before it."""
    calls = group_calls(events)
    # Under this control the page's priority order is read upside down.
    priority = PRIORITY[::-1] if control_active("priority-reversed") else PRIORITY
    bad = [c.op for c in calls
           if [priority.index(events[i].key) for i in c.hops]
           != sorted({priority.index(events[i].key) for i in c.hops})]
    return Check(
        id="keys-descend",
        name=T("Every call starts at its highest key and only moves down",
               "每次调用都从最高的键开始，只向下转发"),
        passed=not bad and bool(calls),
        measured=T(f"{len(calls)} calls" + (f", out of order: {bad}" if bad else ""),
                   f"{len(calls)} 次调用" + (f"，顺序不对：{bad}" if bad else "")),
        expected=T("keys strictly descending in every call", "每次调用中的键严格递减"))


def autograd_check(events: list[TraceEvent], product: str | None, requires_grad: bool,
                   grad_fn_name: str | None) -> Check:
    """The product passes its Autograd kernel either way; a node is recorded only with grad.

    ``requires_grad`` says whether any operand requires grad.
    """
    passed_autograd = any(e.op == product and e.key == "Autograd" and e.depth == 1
                          for e in events)
    recorded = grad_fn_name is not None
    if requires_grad:
        expectation = T("Autograd kernel ran, grad_fn recorded",
                        "Autograd kernel 已执行，记录了 grad_fn")
    else:
        expectation = T("Autograd kernel ran, grad_fn None",
                        "Autograd kernel 已执行，grad_fn 为 None")
    return Check(
        id="autograd-kernel-runs",
        name=T("The product passes through its Autograd kernel; a graph node is recorded "
               "only when an operand requires grad",
               "乘法一定经过它的 Autograd kernel；只有某个操作数需要梯度时才记录计算图节点"),
        passed=passed_autograd and recorded == requires_grad,
        measured=T(f"{product} @ Autograd {'ran' if passed_autograd else 'missing'}, "
                   f"grad_fn {grad_fn_name}",
                   f"{product} @ Autograd {'已执行' if passed_autograd else '未经过'}，"
                   f"grad_fn 为 {grad_fn_name}"),
        expected=expectation)


@experiment(
    name="matmul-trace",
    title=T("Every hop of a @ b", "a @ b 经过的每一跳"),
    description=T(
        "Runs a @ b on whylab tensors inside whylab.dispatch.trace() and draws each hop: "
        "which operator, at which dispatch key, ran which kernel, called from where. The "
        "product matmul chose is compared with the rule table on this page, the shape with "
        "the shape formula and np.matmul, the values with np.matmul.",
        "在 whylab.dispatch.trace() 中对 whylab 张量执行 a @ b，画出每一跳："
        "哪个算子、在哪个调度键上、运行了哪个 kernel、由谁调用。把 matmul 选用的乘法与本页的"
        "规则表对照，把结果形状与形状公式和 np.matmul 对照，把数值与 np.matmul 对照。",
    ),
    params=[
        Param("rank_a", "int", 3, T("rank of a", "a 的维数"), minimum=1, maximum=4, step=1),
        Param("rank_b", "int", 2, T("rank of b", "b 的维数"), minimum=1, maximum=4, step=1),
        Param("rows", "int", 2, T("rows n of a", "a 的行数 n"), minimum=1, maximum=6, step=1),
        Param("inner", "int", 3, T("inner size k", "内维 k"), minimum=1, maximum=6, step=1),
        Param("cols", "int", 2, T("columns p of b", "b 的列数 p"), minimum=1, maximum=6, step=1),
        Param("batch", "int", 3, T("batch size", "批大小"), minimum=1, maximum=4, step=1),
        Param("grad_a", "bool", True, T("a requires grad", "a 需要梯度")),
        Param("grad_b", "bool", True, T("b requires grad", "b 需要梯度")),
        Param("seed", "int", 0, T("random seed", "随机种子"), minimum=0, maximum=2**31 - 1,
              seed=True),
    ],
    controls=[
        Control("fold-never",
                T("the rule table never folds a batch into one mm (every batched case uses bmm)",
                  "规则表从不把批维度折叠进一次 mm（所有带批维度的情形都用 bmm）"),
                breaks=("product-as-rule-table",)),
        Control("first-matrix-only",
                T("the product is computed for the first matrix of a's batch only",
                  "乘积只对 a 的批中第一个矩阵计算"),
                breaks=("shape-formula", "shape-as-numpy", "values-as-numpy")),
        Control("priority-reversed",
                T("the page's priority order is upside down (backends above Autograd)",
                  "本页的优先级顺序颠倒了（后端排在 Autograd 之上）"),
                breaks=("keys-descend",)),
        Control("product-under-no-grad",
                T("the product runs under no_grad(), so nothing is recorded although an operand "
                  "requires grad",
                  "乘积在 no_grad() 下计算，所以尽管有操作数需要梯度，也没有记录任何节点"),
                breaks=("autograd-kernel-runs",)),
        Control("flips-smaller-flag",
                T("the flag flipped is the smaller operand's, which does change the product "
                  "(a 2-D, b 3-D, only a requires grad)",
                  "翻转的是较小操作数的标志，而它确实会改变选用的乘法（a 为 2 维、b 为 3 维，"
                  "只有 a 需要梯度）"),
                breaks=("larger-flag-irrelevant",),
                params={"rank_a": 2, "rank_b": 3, "grad_a": True, "grad_b": False}),
        Control("broadcast-takes-max",
                T("batch sizes broadcast by d = max(s, t), which is wrong when one is 0",
                  "批维度按 d = max(s, t) 广播，而当其中一个为 0 时这是错的"),
                breaks=("size-zero-broadcast",)),
    ],
    metrics=[
        Metric("hops", T("hops recorded", "记录下的跳数")),
        Metric("operator_calls", T("operator calls", "算子调用次数")),
        Metric("product_op", T("operator that computes the product", "实际做乘法的算子")),
        Metric(
            "max_abs_error_vs_numpy",
            T("largest |whylab − NumPy|", "最大偏差 |whylab − NumPy|"),
        ),
    ],
)
def matmul_trace(rank_a: int, rank_b: int, rows: int, inner: int, cols: int, batch: int,
                 grad_a: bool, grad_b: bool, seed: int) -> Result:
    shape_a, shape_b = operand_shapes(rank_a, rank_b, rows, inner, cols, batch)
    rng = np.random.default_rng(seed)
    a_values, b_values = rng.standard_normal(shape_a), rng.standard_normal(shape_b)
    c, events = traced_product(a_values, b_values, grad_a, grad_b)
    prediction = predict(shape_a, shape_b, grad_a, grad_b,
                         folds=not control_active("fold-never"))
    product = first_product(events)
    reference = np.matmul(a_values, b_values)
    grad_fn_name = type(c.grad_fn).__name__ if c.grad_fn is not None else None

    checks = [
        inner_op_check(product, prediction.inner_op, prediction.rule, prediction.fold_reason),
        shape_check("shape-formula", T("The result's shape follows the shape formula",
                                       "结果形状符合形状公式"), c.shape, prediction.shape),
        shape_check("shape-as-numpy",
                    T("The result's shape equals np.matmul's", "结果形状与 np.matmul 的相同"),
                    c.shape, reference.shape),
        values_check(c.detach().numpy(), reference),
        descending_keys_check(events),
        autograd_check(events, product, grad_a or grad_b, grad_fn_name),
        size_zero_check(rows, inner, cols),
    ]
    if prediction.fold_reason is not None:
        # One operand ≥3-D, the other ≤2-D: only the smaller one's flag may matter.
        a_is_larger = rank_a >= rank_b
        if control_active("flips-smaller-flag"):
            a_is_larger = not a_is_larger
        _, flipped_events = traced_product(a_values, b_values,
                                           grad_a != a_is_larger, grad_b == a_is_larger)
        checks.append(larger_flag_check(product, first_product(flipped_events),
                                        "a" if a_is_larger else "b"))
    depth_one = top_level_ops(events)
    summary = Table(
        title=T(f"a{list(shape_a)} @ b{list(shape_b)}: what the rules predict and what the "
                "trace shows",
                f"a{list(shape_a)} @ b{list(shape_b)}：规则的预测与跟踪记录的对照"),
        columns=[T("shape by the formula", "公式给出的形状"),
                 T("shape from the engine", "引擎给出的形状"),
                 T("product by the rules", "规则预测的乘法"),
                 T("ops matmul called (trace)", "matmul 调用的算子（跟踪）"),
                 T("grad_fn", "grad_fn")],
        rows=[[str(prediction.shape), str(tuple(c.shape)),
               prediction.inner_op, " → ".join(depth_one), str(grad_fn_name)]],
    )
    return Result(
        checks=checks,
        figures=[trace_diagram(events, T(
            f"Dispatcher hops of a{list(shape_a)} @ b{list(shape_b)}",
            f"a{list(shape_a)} @ b{list(shape_b)} 在调度器中的每一跳"))],
        tables=[summary, trace_table(events, T("The recorded hops", "记录下的每一跳"))],
        metrics={"hops": len(events), "operator_calls": len(group_calls(events)),
                 "product_op": str(product),
                 "max_abs_error_vs_numpy": float(np.max(np.abs(c.detach().numpy() - reference),
                                                        initial=0.0))},
        notes=[T("Each column is one operator call; inside it the arrows go down the keys "
                 "(each wrapper kernel redispatches to the next key with a kernel). An arrow "
                 "into another column is a kernel calling another operator: the composite "
                 "matmul calling its pieces. Keys an operator falls through are not drawn.",
                 "每一列是一次算子调用；列内的箭头沿着键向下（每个包装 kernel 把调用转发给下一个"
                 "有 kernel 的键）。指向另一列的箭头表示某个 kernel 调用了别的算子，例如组合算子 "
                 "matmul 调用它的各个部件。被直接跳过（fallthrough）的键不画出来。")],
    )
