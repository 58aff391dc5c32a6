"""Experiment ``backward``: what ``a @ b`` records, saves, and does in backward.

Forward records an ``MmBackward0`` node; what it saves is read from the node's
saved tensors. Backward runs under a dispatcher trace and an engine trace: the
two products ``grad @ bᵀ`` and ``aᵀ @ grad`` are read from the dispatcher's
hops, and how AccumulateGrad wrote ``a.grad`` is *observed* from data pointers
(the address of the gradient MmBackward0 produced, taken by a node hook that
keeps only the number, against the address ``a.grad`` holds afterwards), then
compared with torch doing the same and with what the engine says it did.
"""

from __future__ import annotations

import numpy as np

import whylab
from whylab.autograd.memory import graph_nodes
from whylab.dispatch import trace
from whylab.explorer.experiment import (
    Check,
    Control,
    Param,
    Result,
    T,
    Table,
    control_active,
    experiment,
)
from whylab.topics.matmul_end_to_end import torch_view
from whylab.topics.shared import relative_error

GRAD_TOLERANCE = 1e-12
ITEMSIZE = 8


def address(tensor) -> int:
    return tensor._array.__array_interface__["data"][0]


def expected_saves(m: int, k: int, n: int, grad_a: bool, grad_b: bool) -> dict[str, int]:
    """mm's derivative (derivatives.yaml): dA = G·Bᵀ needs mat2, dB = Aᵀ·G needs self."""
    saves = {}
    if grad_a:
        saves["mat2"] = k * n * ITEMSIZE
    if grad_b:
        saves["self"] = m * k * ITEMSIZE
    return saves


def saved_bytes(node) -> dict[str, int]:
    saved = {}
    for name, item in node.saved_tensor_items():
        tensor = item.peek()
        if tensor is not None:
            saved[name] = int(np.prod(tensor._sizes)) * tensor.dtype.itemsize
    return saved


@experiment(
    name="backward",
    title=T("The same call with requires_grad: MmBackward0 and AccumulateGrad",
            "需要梯度时的同一调用：MmBackward0 与 AccumulateGrad"),
    description=T(
        "Records a @ b, reads what MmBackward0 saved, runs backward twice (retaining the "
        "graph) under a dispatcher trace, and watches where a.grad's memory comes from: the "
        "first pass steals the engine's tensor, the second adds into it.",
        "记录 a @ b，读出 MmBackward0 保存了什么；在调度器跟踪下（保留计算图）做两次反向传播，"
        "观察 a.grad 的内存从哪里来：第一次直接拿走引擎算出的张量，第二次原地累加。"),
    time_limit_s=60.0,  # the first run in a worker imports torch (about 10 s on a busy machine)
    params=[
        Param("m", "int", 6, T("rows of a (m)", "a 的行数 m"), minimum=2, maximum=256),
        Param("k", "int", 5, T("inner size (k)", "内维 k"), minimum=2, maximum=256),
        Param("n", "int", 4, T("columns of b (n)", "b 的列数 n"), minimum=2, maximum=256),
        Param("grads", "choice", "both", T("which operands require grad", "哪些操作数需要梯度"),
              choices=("both", "a", "b"),
              choice_labels=(T("a and b", "a 和 b"), T("a only", "只有 a"),
                             T("b only", "只有 b"))),
        Param("seed", "int", 0, T("random seed", "随机种子"), minimum=0, maximum=10_000,
              seed=True),
    ],
    controls=[
        Control("b-requires-grad-too",
                T("whylab's b requires grad although the reader's choice says it does not",
                  "whylab 这边的 b 也需要梯度，而读者选的并非如此"),
                breaks=("saves-as-torch", "backward-products"), params={"grads": "a"}),
        Control("backward-through-sum",
                T("backward starts from c.sum() instead of the chosen output gradient",
                  "反向传播从 c.sum() 开始，而不是从选定的输出梯度开始"),
                breaks=("backward-products", "gradients-as-torch")),
        Control("hook-keeps-gradient",
                T("a hook on MmBackward0 keeps a reference to the gradient it produced",
                  "MmBackward0 上的钩子留住了它算出的梯度的引用"),
                breaks=("accumulate-steal-then-add",)),
    ],
)
def backward(m: int, k: int, n: int, grads: str, seed: int) -> Result:
    rng = np.random.default_rng(seed)
    a_values, b_values = rng.standard_normal((m, k)), rng.standard_normal((k, n))
    gradient = rng.standard_normal((m, n))
    grad_a, grad_b = grads in ("both", "a"), grads in ("both", "b")
    a = whylab.tensor(a_values, requires_grad=grad_a)
    b = whylab.tensor(b_values, requires_grad=grad_b or control_active("b-requires-grad-too"))
    c = a @ b
    node = c.grad_fn
    checks = [saves_check(node, a_values, b_values, m, k, n, grad_a, grad_b)]

    produced, kept = [], []
    leaf = a if grad_a else b

    def remember(grad_inputs, grad_outputs):
        slot = 0 if grad_a else 1
        produced.append(address(grad_inputs[slot]))
        if control_active("hook-keeps-gradient"):
            kept.append(grad_inputs[slot])

    node.register_hook(remember)
    start = whylab.tensor(gradient)
    with trace() as recorded, whylab.autograd.engine_trace() as engine:
        if control_active("backward-through-sum"):
            c.sum().backward(retain_graph=True)
        else:
            c.backward(start, retain_graph=True)
    first_grads = {name: t.grad.detach().numpy().copy()
                   for name, t in (("a", a), ("b", b)) if t.grad is not None}
    first_grad = leaf.grad.detach().numpy().copy()
    first_address = address(leaf.grad)
    with whylab.autograd.engine_trace() as engine_again:
        c.backward(start)
    observed = ("steal" if first_address == produced[0] else "copy",
                "add" if address(leaf.grad) == first_address else "replaced")
    doubled = bool(np.array_equal(leaf.grad.detach().numpy(), 2 * first_grad))

    checks.append(products_check(recorded.events, m, k, n, grad_a, grad_b))
    checks.append(gradients_check(first_grads, a_values, b_values, gradient, grad_a, grad_b))
    torch_modes = torch_view.accumulate_modes(a_values, b_values, gradient, 0 if grad_a else 1)
    engine_modes = [pass_mode(engine), pass_mode(engine_again)]
    checks.append(accumulate_check(observed, doubled, torch_modes, engine_modes, grad_a))
    nodes = [type(n).__name__ for n in graph_nodes(c)]
    table = Table(
        title=T("What the engine did", "引擎做了什么"),
        columns=[T("step", "步骤"), T("observed", "观察到的")],
        rows=[[T("nodes behind c", "c 背后的节点"), ", ".join(nodes)],
              [T("saved by MmBackward0 (bytes)", "MmBackward0 保存的（字节）"),
               show_saves(saved_bytes(node))],
              [T("backward's products (dispatcher trace)", "反向传播中的乘法（调度器跟踪）"),
               "; ".join(f"mm{[list(s) for s in shapes]}"
                         for shapes in traced_mm_shapes(recorded.events))],
              [T("AccumulateGrad, by data pointers", "AccumulateGrad（按数据指针）"),
               T(" → ".join(observed), in_chinese(observed))],
              [T("AccumulateGrad, as the engine reports", "AccumulateGrad（引擎自己的记录）"),
               T(" → ".join(engine_modes), in_chinese(engine_modes))]])
    return Result(checks=checks, tables=[table])


MODES_IN_CHINESE = {"steal": "拿走", "copy": "复制", "add": "累加", "replaced": "换了地址"}


def in_chinese(modes) -> str:
    """``steal → add`` as ``拿走 → 累加`` (a mode may be several joined by "/")."""
    return " → ".join("/".join(MODES_IN_CHINESE.get(m, m) for m in mode.split("/"))
                      for mode in modes)


def pass_mode(engine_trace) -> str:
    """How the engine says it wrote the leaves' grads in one pass: the mode when every leaf
    got the same one, else the modes joined by "/"."""
    modes = sorted({e["mode"] for e in engine_trace.events if e["kind"] == "accumulate_grad"})
    return "/".join(modes) or "—"


def saves_check(node, a_values, b_values, m, k, n, grad_a, grad_b) -> Check:
    """MmBackward0's saved tensors: names and bytes, against torch and mm's derivative."""
    saved = saved_bytes(node) if node is not None else {}
    torch_saved = torch_view.saved_tensors(a_values, b_values, grad_a, grad_b)
    formula = expected_saves(m, k, n, grad_a, grad_b)
    torch_name, torch_bytes = torch_saved if torch_saved is not None else ("MmBackward0", formula)
    name = type(node).__name__ if node is not None else "None"
    source = ("PyTorch", "PyTorch") if torch_saved is not None else (
        "mm's derivative; no torch installed", "mm 的导数公式；未安装 PyTorch")
    return Check(
        id="saves-as-torch",
        name=T("The node is MmBackward0 and saves what torch's saves, byte for byte: mat2 "
               "(k·n·8 B) when a needs a gradient, self (m·k·8 B) when b does",
               "节点是 MmBackward0，保存的东西与 torch 的逐字节相同：a 需要梯度时保存 mat2"
               "（k·n·8 字节），b 需要梯度时保存 self（m·k·8 字节）"),
        passed=name == torch_name and saved == torch_bytes == formula,
        measured=f"{name} {show_saves(saved)}",
        expected=T(f"{torch_name} {show_saves(torch_bytes)} ({source[0]})",
                   f"{torch_name} {show_saves(torch_bytes)}（{source[1]}）"))


def show_saves(saved: dict[str, int]) -> str:
    """``{_saved_mat2: 160 B, _saved_self: 240 B}``: torch's attribute names, sorted."""
    return "{" + ", ".join(f"_saved_{name}: {size} B" for name, size in sorted(saved.items())) \
        + "}"


def traced_mm_shapes(events) -> list[tuple]:
    rows = []
    for event in events:
        if event.key == "Tracer" and event.op == "mm":
            rows.append(tuple(tuple(int(x) for x in text[len("Tensor["):text.index("]")]
                                    .split(", ")) for text in event.inputs))
    return rows


def products_check(events, m, k, n, grad_a, grad_b) -> Check:
    """Backward makes exactly the products the chain rule needs: G·Bᵀ and Aᵀ·G."""
    expected = []
    if grad_a:
        expected.append(((m, n), (n, k)))
    if grad_b:
        expected.append(((k, m), (m, n)))
    traced = traced_mm_shapes(events)
    others = sorted({e.op for e in events if e.key == "Tracer" and e.op not in ("mm", "t")})
    shown = "; ".join(f"mm{[list(s) for s in shapes]}" for shapes in traced)
    return Check(
        id="backward-products",
        name=T("Backward runs only the products the chain rule asks for: grad @ bᵀ (m×n · n×k) "
               "for a, aᵀ @ grad (k×m · m×n) for b, each on a transposed view (no other op)",
               "反向传播只做链式法则要求的乘法：为 a 算 grad @ bᵀ（m×n · n×k），为 b 算 "
               "aᵀ @ grad（k×m · m×n），各用一个转置视图（没有别的算子）"),
        passed=traced == expected and not others,
        measured=shown + (f"; + {', '.join(others)}" if others else ""),
        expected="; ".join(f"mm{[list(s) for s in shapes]}" for shapes in expected))


def gradients_check(first_grads, a_values, b_values, gradient, grad_a, grad_b) -> Check:
    """The first pass's gradients equal G·Bᵀ and Aᵀ·G computed by NumPy."""
    references = {}
    if grad_a:
        references["a"] = gradient @ b_values.T
    if grad_b:
        references["b"] = a_values.T @ gradient
    worst = max(relative_error(first_grads.get(name, np.nan), reference)
                for name, reference in references.items())
    return Check(
        id="gradients-as-torch",
        name=T("The first pass's gradients equal grad @ bᵀ and aᵀ @ grad (NumPy)",
               "第一次反向传播得到的梯度等于 grad @ bᵀ 与 aᵀ @ grad（NumPy 计算）"),
        passed=worst <= GRAD_TOLERANCE,
        measured=T(f"relative max error {worst:.1e}", f"最大相对误差 {worst:.1e}"),
        expected=f"≤ {GRAD_TOLERANCE:.0e}")


def accumulate_check(observed, doubled, torch_modes, engine_modes, grad_a) -> Check:
    """First pass steals, second adds in place: by data pointers, as torch does it, and as
    the engine reports."""
    name = T("AccumulateGrad takes the product's tensor as .grad on the first pass (same "
             "address: steal) and adds in place on the second (address kept, value doubled), "
             "as torch does and as the engine reports",
             "第一次反向传播时 AccumulateGrad 直接把乘积的张量当作 .grad（地址相同：steal），"
             "第二次原地累加（地址不变、数值翻倍），与 torch 相同，也与引擎自己的记录一致")
    expected = ("steal", "add")
    reference = torch_modes if torch_modes is not None else expected
    passed = (observed == expected and doubled and tuple(reference) == expected
              and tuple(engine_modes) == expected)
    doubled_en, doubled_zh = ("value doubled", "数值翻倍") if doubled else ("value not doubled",
                                                                     "数值没有翻倍")
    return Check(id="accumulate-steal-then-add", name=name, passed=passed,
                 measured=T(f"by address {' → '.join(observed)}; engine's record "
                            f"{' → '.join(engine_modes)}; {doubled_en}",
                            f"按地址：{in_chinese(observed)}；引擎记录：{in_chinese(engine_modes)}；"
                            f"{doubled_zh}"),
                 expected=T(f"steal → add (PyTorch: {' → '.join(reference)})",
                            f"拿走 → 累加（PyTorch：{in_chinese(reference)}）"))
