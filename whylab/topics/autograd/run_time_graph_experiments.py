"""Experiments on the graph's lifetime: ``control-flow`` (a new graph on every run) and
``second-backward`` (retain_graph, and create_graph for a second derivative).

The expected values are closed forms: the number of doublings a loop needs,
2^k for its derivative, and the first and second derivatives of x·sin x.
"""

from __future__ import annotations

import math

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
from whylab.topics.autograd.backward_trace import diagram, trace_backward
from whylab.topics.autograd.comparisons import EXACT_TOLERANCE, check_if_reached, relative_error
from whylab.topics.autograd.expressions import constant
from whylab.topics.autograd.sabotage import pass_through, replace_backward
from whylab.topics.shared import error_check

# ---------------------------------------------------------------- control flow

LIMIT = 10.0


def doubled_until_large(x: whylab.Tensor, doublings: int | None = None) -> whylab.Tensor:
    """h = x, then h = 2h while |h| < LIMIT: Python decides, on the value, how often.

    With ``doublings`` given, the loop runs that often whatever the value (a
    graph frozen at an earlier input, as a tracer records it).
    """
    h = x
    steps = 0
    while (abs(float(h.item())) < LIMIT) if doublings is None else steps < doublings:
        h = h * 2.0
        steps += 1
    return h


def doublings_needed(x: float) -> int:
    """The closed form: the least k with |x|·2^k ≥ LIMIT."""
    return max(0, math.ceil(math.log2(LIMIT / abs(x)) - 1e-12))


def _doubling_nodes(trace) -> int:
    return sum(node["name"] == "MulBackward0" for node in trace.nodes)


@experiment(
    name="control-flow",
    title=T("Control flow: a new graph on every run", "控制流：每次运行都记录一张新图"),
    description=T(
        "Runs h = x; while |h| < 10: h = 2h with whylab for two starting values. Python's loop "
        "decides how many products are recorded, so the two runs record different graphs, and "
        "each gradient follows its own graph.",
        "用 whylab 对两个初值运行 h = x; while |h| < 10: h = 2h。乘法记录几次由 Python 的循环"
        "决定，所以两次运行记录的计算图不同，各自的梯度也沿各自的图计算。",
    ),
    params=[
        Param("x1", "float", 0.3, T("first run: x", "第一次运行：x"), minimum=0.001,
              maximum=9.999, step=0.001),
        Param("x2", "float", 3.0, T("second run: x", "第二次运行：x"), minimum=0.001,
              maximum=9.999, step=0.001),
    ],
    controls=[
        Control("graph-traced-once",
                T("the graph were recorded once, at the first input, and replayed for the "
                  "second (as a tracer that freezes control flow does)",
                  "计算图只在第一个输入上记录一次，第二次直接重放（像把控制流冻结的追踪器那样）"),
                breaks=("graphs-follow-each-run", "gradients-follow-each-run", "graphs-differ")),
        Control("mul-rule-forgotten",
                T("the product's backward forgot the factor 2", "乘法的反向忘了乘 2"),
                breaks=("gradients-follow-each-run",)),
    ],
    metrics=[
        Metric("doublings_first", T("first run: products recorded", "第一次运行：记录的乘法个数")),
        Metric(
            "doublings_second",
            T("second run: products recorded", "第二次运行：记录的乘法个数"),
        ),
        Metric("gradient_first", T("first run: dh/dx", "第一次运行：dh/dx")),
        Metric("gradient_second", T("second run: dh/dx", "第二次运行：dh/dx")),
    ],
)
def control_flow(x1: float, x2: float) -> Result:
    traces, gradients, recorded = [], [], []
    expected = [doublings_needed(x1), doublings_needed(x2)]
    for run, start in enumerate((x1, x2)):
        x = constant(np.array([start])).requires_grad_()
        frozen = expected[0] if run == 1 and control_active("graph-traced-once") else None
        h = doubled_until_large(x, frozen).sum()
        if control_active("mul-rule-forgotten"):  # every x in range needs a doubling
            replace_backward(h, "MulBackward0", pass_through)
        trace = trace_backward(h, {"x": x})
        traces.append(trace)
        gradients.append(float(x.grad.numpy()[0]))
        recorded.append(_doubling_nodes(trace))
    exact_gradients = [2.0**k for k in expected]
    names = [sorted(node["name"] for node in trace.nodes) for trace in traces]

    differ_check = check_if_reached(
        expected[0] != expected[1],
        T("The two runs recorded different graphs", "两次运行记录的计算图不同"),
        passed=names[0] != names[1],
        measured=T(f"{len(names[0])} and {len(names[1])} nodes",
                   f"分别为 {len(names[0])} 个和 {len(names[1])} 个节点"),
        expected=T("different node lists", "节点列表不同"),
        why=T("both starting values need the same number of doublings; pick values such as "
              "0.3 and 3", "两个初值需要的翻倍次数相同；请选 0.3 和 3 这样的值"),
        id="graphs-differ")
    checks = [
        Check(T("Each run recorded one product per doubling it needed, k = ⌈log₂(10/x)⌉",
                "每次运行按实际需要的翻倍次数记录乘法节点，k = ⌈log₂(10/x)⌉"),
              passed=recorded == expected,
              measured=T(f"{recorded[0]} and {recorded[1]} products",
                         f"分别记录 {recorded[0]} 个和 {recorded[1]} 个乘法"),
              expected=f"k = {expected[0]}, {expected[1]}", id="graphs-follow-each-run"),
        error_check(T("Each gradient follows its own graph: dh/dx = 2^k",
                          "每个梯度沿各自的图计算：dh/dx = 2^k"),
                        relative_error(np.array(gradients), np.array(exact_gradients)),
                        EXACT_TOLERANCE, id="gradients-follow-each-run"),
        differ_check,
    ]
    return Result(
        checks=checks,
        figures=[diagram(trace, T(f"Graph recorded for x = {start:g}",
                                  f"x = {start:g} 时记录的计算图"))
                 for trace, start in zip(traces, (x1, x2), strict=True)],
        metrics={"doublings_first": recorded[0], "doublings_second": recorded[1],
                 "gradient_first": gradients[0], "gradient_second": gradients[1]},
    )


# ---------------------------------------------------------------- retain_graph, create_graph


def _first_derivative(x: float) -> float:
    return math.sin(x) + x * math.cos(x)  # d/dx x sin x


def _second_derivative(x: float) -> float:
    return 2.0 * math.cos(x) - x * math.sin(x)


def _derivative_check(name: Text, value: float, exact: float, *, id: str) -> Check:
    """|value − exact| / max(1, |exact|) within rounding (near a zero of f′, absolute)."""
    error = abs(value - exact) / max(1.0, abs(exact))
    return Check(name, passed=bool(error <= EXACT_TOLERANCE), measured=f"{value:.15g}",
                 expected=f"{exact:.15g}", id=id)


def _error_text(error: str | None) -> Text:
    """"no error", or the error's sentence that names retain_graph (else its first one)."""
    if error is None:
        return T("no error", "没有报错")
    sentences = [part.strip() for part in error.split(". ") if part.strip()]
    shown = next((part for part in sentences if "retain_graph" in part), sentences[0])
    return T(f"RuntimeError: “{shown}”", f"RuntimeError：“{shown}”")


@experiment(
    name="second-backward",
    title=T("Backward twice, and the derivative of a derivative",
            "反向传播两次，以及导数的导数"),
    description=T(
        "For f(x) = x·sin x: a second backward() after the graph was freed, the same with "
        "retain_graph=True, and the second derivative from grad(create_graph=True), against "
        "the closed forms f′ = sin x + x cos x and f″ = 2 cos x − x sin x.",
        "对 f(x) = x·sin x：在计算图释放之后再调用一次 backward()；用 retain_graph=True 再做一遍；"
        "用 grad(create_graph=True) 求二阶导数，并与闭式解 f′ = sin x + x cos x、"
        "f″ = 2 cos x − x sin x 对照。",
    ),
    params=[Param("x", "float", 1.5, T("x", "x"), minimum=-10.0, maximum=10.0, step=0.01)],
    controls=[
        Control("first-pass-retains",
                T("the first pass kept its saved tensors (retain_graph=True)",
                  "第一遍保留了保存的张量（retain_graph=True）"),
                breaks=("second-backward-needs-retain",)),
        Control("retain-forgotten",
                T("retain_graph=True were left out of the first of two passes",
                  "两遍反向传播中的第一遍漏写了 retain_graph=True"),
                breaks=("retained-graph-adds",)),
        Control("sin-rule-wrong",
                T("sin's backward used −cos x instead of cos x",
                  "sin 的反向用了 −cos x 而不是 cos x"),
                breaks=("first-derivative", "second-derivative", "retained-graph-adds")),
        Control("sin-rule-not-differentiable",
                T("sin's backward were computed outside the graph (cos x treated as a constant), "
                  "so create_graph could not differentiate it",
                  "sin 的反向在计算图之外算出（cos x 被当成常数），create_graph 无法再对它求导"),
                breaks=("second-derivative",)),
    ],
    metrics=[
        Metric("first_derivative", T("f′(x) from backward()", "backward() 给出的 f′(x)")),
        Metric(
            "second_derivative",
            T("f″(x) from grad(create_graph=True)", "grad(create_graph=True) 给出的 f″(x)"),
        ),
    ],
)
def second_backward(x: float) -> Result:
    def f(tensor: whylab.Tensor) -> whylab.Tensor:
        y = (tensor * tensor.sin()).sum()
        if control_active("sin-rule-wrong"):
            replace_backward(y, "SinBackward0", lambda computed, received: [-computed[0]])
        if control_active("sin-rule-not-differentiable"):
            replace_backward(y, "SinBackward0", lambda computed, received: [computed[0].detach()])
        return y

    def leaf() -> whylab.Tensor:
        return constant(np.array([x])).requires_grad_()

    # 1. Without retain_graph the first pass frees the saved tensors.
    freed = leaf()
    y = f(freed)
    y.backward(retain_graph=control_active("first-pass-retains"))
    second_error = None
    try:
        y.backward()
    except RuntimeError as error:
        second_error = str(error)

    # 2. With retain_graph=True both passes run and .grad adds them up.
    kept = leaf()
    y = f(kept)
    retained_error = None
    try:
        y.backward(retain_graph=not control_active("retain-forgotten"))
        y.backward()
    except RuntimeError as error:
        retained_error = str(error)
    twice = float(kept.grad.numpy()[0]) if retained_error is None else math.nan

    # 3. create_graph=True records the backward pass, so its result can be differentiated.
    twice_differentiable = leaf()
    (first,) = whylab.autograd.grad(f(twice_differentiable), twice_differentiable,
                                    create_graph=True)
    (second,) = whylab.autograd.grad(first.sum(), twice_differentiable, allow_unused=True,
                                     materialize_grads=True)
    first_value, second_value = float(first.detach().numpy()[0]), float(second.numpy()[0])

    retained_name = T("With retain_graph=True both passes run and .grad holds 2·f′(x)",
                      "用 retain_graph=True 时两遍都能运行，.grad 为 2·f′(x)")
    if retained_error is None:
        retained_check = _derivative_check(retained_name, twice, 2 * _first_derivative(x),
                                           id="retained-graph-adds")
    else:
        retained_check = Check(retained_name, passed=False, measured=_error_text(retained_error),
                               expected=f"{2 * _first_derivative(x):.15g}",
                               id="retained-graph-adds")
    checks = [
        Check(T("A second backward() after the graph was freed is an error that names "
                "retain_graph",
                "计算图释放后再调用 backward() 会报错，错误信息提到 retain_graph"),
              passed=second_error is not None and "retain_graph" in second_error,
              measured=_error_text(second_error),
              expected=T("RuntimeError naming retain_graph", "提到 retain_graph 的 RuntimeError"),
              id="second-backward-needs-retain"),
        retained_check,
        _derivative_check(T("grad(create_graph=True) gives f′(x) = sin x + x cos x",
                            "grad(create_graph=True) 给出 f′(x) = sin x + x cos x"),
                          first_value, _first_derivative(x), id="first-derivative"),
        _derivative_check(T("Differentiating that result gives f″(x) = 2 cos x − x sin x",
                            "再对它求导得到 f″(x) = 2 cos x − x sin x"),
                          second_value, _second_derivative(x), id="second-derivative"),
    ]
    return Result(checks=checks,
                  metrics={"first_derivative": first_value, "second_derivative": second_value})
