"""Experiment ``one-call``: ``a @ b`` followed from the Python binding down to the BLAS call.

The call runs through whylab's real dispatcher under ``whylab.dispatch.trace()``:
``Tensor.__matmul__`` is the binding of the ``matmul`` operator, whose Autograd
slot holds the composite that picks ``mm`` for two 2-D operands; ``mm`` then goes
Tracer → Autograd → CPU. The CPU kernel passes its operands' arrays to
``np.dot``, and :mod:`~whylab.topics.matmul_end_to_end.blas_call` derives the
BLAS call NumPy makes from their strides and replays it. Independent sources:
torch's profiler (the same call's aten::matmul → aten::mm with its shapes),
torch's own key sets and dispatch table, tracemalloc (the copies NumPy made)
and the bit pattern of the replayed product.
"""

from __future__ import annotations

import os
import tracemalloc

import numpy as np

import whylab
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
from whylab.topics.matmul_end_to_end import blas_call, torch_view

LAYOUTS = ("b-transposed", "contiguous", "b-every-other-column", "a-times-a-transposed",
           "b-column")
LAYOUT_LABELS = (
    T("b = Bᵀ, a transposed view (as F.linear passes its weight)",
      "b = Bᵀ，一个转置视图（F.linear 传入权重的方式）"),
    T("both contiguous", "两者都连续"),
    T("b = every other column of a wider matrix", "b 取自更宽矩阵的隔列"),
    T("b = aᵀ, the same storage", "b = aᵀ，同一块存储"),
    T("b is a single column (n = 1)", "b 只有一列（n = 1）"),
)
WRAPPER_KEYS = ("Autograd", "ADInplaceOrView", "CPU")
ALLOCATION_SLACK = 1024  # bytes NumPy's own bookkeeping may add around a product


def operands(layout: str, m: int, k: int, n: int, requires_grad: bool, seed: int):
    """whylab tensors a (m×k) and b (k×n) laid out as ``layout``, and the n it implies.

    Control ``inference-tensors`` makes them inside inference_mode (no autograd keys).
    """
    rng = np.random.default_rng(seed)
    if layout == "a-times-a-transposed":
        n = m
    if layout == "b-column":
        n = 1
    grad = requires_grad and not control_active("inference-tensors")
    if control_active("inference-tensors"):
        with whylab.inference_mode():
            return operands_from(rng, layout, m, k, n, grad), n
    return operands_from(rng, layout, m, k, n, grad), n


def operands_from(rng, layout, m, k, n, grad):
    a = whylab.tensor(rng.standard_normal((m, k)), requires_grad=grad)
    if layout == "b-transposed":
        b = whylab.tensor(rng.standard_normal((n, k)), requires_grad=grad).t()
    elif layout == "b-every-other-column":
        b = whylab.tensor(rng.standard_normal((k, 2 * n)), requires_grad=grad)[:, ::2]
    elif layout == "a-times-a-transposed":
        b = a.t()
    else:
        b = whylab.tensor(rng.standard_normal((k, n)), requires_grad=grad)
    return a, b


def copy_bytes_observed(a_array: np.ndarray, b_array: np.ndarray) -> tuple[int, np.ndarray]:
    """Bytes np.dot allocated beyond its output (tracemalloc sees NumPy's data buffers)."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before, _ = tracemalloc.get_traced_memory()
        product = np.dot(a_array, b_array)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak - before - product.nbytes, product


def hops_of(events, op: str) -> list[tuple[str, str]]:
    """(key, kernel) of every hop of ``op``, Tracer hops left out."""
    return [(e.key, e.kernel.removeprefix("whylab.")) for e in events
            if e.op == op and e.key != "Tracer"]


def shapes_of(event) -> tuple[tuple[int, ...], ...]:
    """``('Tensor[3, 4] float64', ...)`` → ``((3, 4), ...)``."""
    shapes = []
    for text in event.inputs:
        if text.startswith("Tensor["):
            inside = text[len("Tensor["):text.index("]")]
            shapes.append(tuple(int(s) for s in inside.split(", ") if s))
    return tuple(shapes)


def traced_products(events) -> list[tuple[str, tuple, str]]:
    """whylab's trace as the profiler shows it: (op, shapes, caller) per product call."""
    rows, callers = [], {}
    for event in events:
        if event.key != "Tracer" or event.op not in torch_view.PRODUCTS:
            continue
        callers[event.depth] = event.op
        rows.append((event.op, shapes_of(event), callers.get(event.depth - 1, "")))
    return rows


@experiment(
    name="one-call",
    title=T("One call, layer by layer", "一次调用，逐层看"),
    description=T(
        "Runs a @ b on whylab tensors under a dispatcher trace and follows it down: the "
        "binding, the composite choosing mm, the keys and kernels, the BLAS call NumPy makes "
        "(derived from the strides, then replayed in the same OpenBLAS), and torch's profiler "
        "on the same call.",
        "在调度器跟踪下对 whylab 张量运行 a @ b，一路往下看：绑定、组合算子选中 mm、"
        "调度键与 kernel、NumPy 发出的 BLAS 调用（由步幅推出，再在同一个 OpenBLAS 中重放），"
        "以及 torch 的性能分析器对同一调用的记录。"),
    time_limit_s=60.0,  # the first run in a worker imports torch (about 10 s on a busy machine)
    params=[
        Param("m", "int", 96, T("rows of a (m)", "a 的行数 m"), minimum=2, maximum=512),
        Param("k", "int", 80, T("inner size (k)", "内维 k"), minimum=2, maximum=512),
        Param("n", "int", 64, T("columns of b (n)", "b 的列数 n"), minimum=2, maximum=512),
        Param("layout", "choice", "b-transposed", T("how b is laid out", "b 的内存布局"),
              choices=LAYOUTS, choice_labels=LAYOUT_LABELS),
        Param("requires_grad", "bool", True, T("operands require grad", "操作数需要梯度")),
        Param("seed", "int", 0, T("random seed", "随机种子"), minimum=0, maximum=10_000,
              seed=True),
    ],
    controls=[
        Control("vector-operand",
                T("whylab is handed b's first column as a 1-D vector",
                  "交给 whylab 的 b 被换成了它的第一列（一维向量）"),
                breaks=("composite-calls-mm", "profiler-matches-trace")),
        Control("inference-tensors",
                T("the operands are made in inference_mode, without the autograd keys",
                  "操作数是在 inference_mode 中创建的，没有自动微分的键"),
                breaks=("keys-and-kernels",)),
        Control("strides-ignored",
                T("the derivation reads every operand as C-ordered, ignoring its strides",
                  "推导时无视步幅，把每个操作数都当作按行（C 顺序）存放"),
                breaks=("blas-call-replayed",)),
        Control("copies-overlooked",
                T("the derivation never expects a copy", "推导从不预期会有复制"),
                breaks=("copies-as-derived",), params={"layout": "b-every-other-column"}),
    ],
)
def one_call(m: int, k: int, n: int, layout: str, requires_grad: bool, seed: int) -> Result:
    (a, b), n = operands(layout, m, k, n, requires_grad, seed)
    a_array, b_array = a._array, b._array  # what the CPU mm kernel hands to np.dot
    given = b[:, 0] if control_active("vector-operand") else b
    with trace() as recorded:
        c = a @ given
    events = list(recorded.events)
    whylab_rows = traced_products(events)
    checks = [composite_check(events, m, k, n), keys_check(a, b, events, requires_grad)]

    call = blas_call.derive_call(a_array, b_array)
    if control_active("strides-ignored"):
        call = blas_call.BlasCall(call.routine, "N", "N" if call.trans_b else "", call.m,
                                  call.n, call.k, max(k, 1), max(n, 1), call.copied, "RowMajor",
                                  call.increment)
    if control_active("copies-overlooked"):
        call = blas_call.BlasCall(*[getattr(call, f) for f in (
            "routine", "trans_a", "trans_b", "m", "n", "k", "lda", "ldb")], (), call.order,
            call.increment)
    library = blas_call.numpy_blas()
    checks.append(replay_check(call, a_array, b_array, library, c))
    extra_bytes, _ = copy_bytes_observed(a_array, b_array)
    checks.append(copies_check(call, a_array, b_array, extra_bytes))
    torch_rows = torch_view.profiled_products(a_array, b_array, requires_grad)
    checks.append(profiler_check(whylab_rows, torch_rows))

    tables = [layers_table(events, call, library, a, b),
              products_table(whylab_rows, torch_rows)]
    return Result(checks=checks, tables=tables, metrics={})


def composite_check(events, m: int, k: int, n: int) -> Check:
    """matmul's Autograd slot runs the composite, which calls exactly one product: mm."""
    composite = [kernel for key, kernel in hops_of(events, "matmul") if key == "Autograd"]
    called = [(e.op, shapes_of(e)) for e in events if e.key == "Tracer" and e.depth == 1]
    expected = [("mm", ((m, k), (k, n)))]
    runs_composite = bool(composite) and composite[0].endswith("matmul_composite")
    return Check(
        id="composite-calls-mm",
        name=T("The matmul composite, in matmul's Autograd slot, calls mm once with the "
               "operands' shapes (torch.matmul's rule for two 2-D operands)",
               "matmul 的 Autograd 格里是组合算子，它按操作数的形状调用 mm 一次"
               "（torch.matmul 对两个二维操作数的规则）"),
        passed=runs_composite and called == expected,
        measured="; ".join(f"{op}{list(map(list, shapes))}" for op, shapes in called) or "—",
        expected=f"mm[[{m}, {k}], [{k}, {n}]]")


def keys_check(a, b, events, requires_grad: bool) -> Check:
    """The keys the operands carry and the kernels mm ran, against torch's key set and
    torch's dispatch table for aten::mm."""
    from whylab.dispatch import DispatchKey

    whylab_keys = frozenset(key.name for key in DispatchKey
                            if (a._keys | b._keys) >> key.value & 1)
    mm_hops = [key for key, _ in hops_of(events, "mm")]
    torch_keys = torch_view.tensor_keys(requires_grad)
    torch_kernels = torch_view.kernel_keys("mm", WRAPPER_KEYS)
    if torch_keys is None or torch_kernels is None:
        return Check.not_applicable(
            id="keys-and-kernels",
            name=T("Key set and kernels as torch's", "键集合与 kernel 同 torch"),
            expected="torch", why=T("needs torch installed", "需要安装 torch"))
    expected_hops = [key for key in WRAPPER_KEYS if key in torch_keys and key in torch_kernels]
    return Check(
        id="keys-and-kernels",
        name=T("The operands carry torch's key set for a CPU tensor (CPU, ADInplaceOrView, "
               "Autograd), and mm runs a kernel at exactly the keys torch's dispatcher has one "
               "for (Autograd, CPU; ADInplaceOrView falls through)",
               "操作数带着 torch 给 CPU 张量的键集合（CPU、ADInplaceOrView、Autograd），"
               "mm 只在 torch 调度器有 kernel 的键上运行 kernel（Autograd、CPU；"
               "ADInplaceOrView 直接穿过）"),
        passed=whylab_keys == torch_keys and mm_hops == expected_hops,
        measured=f"{{{', '.join(sorted(whylab_keys))}}}; mm: {' → '.join(mm_hops)}",
        expected=f"{{{', '.join(sorted(torch_keys))}}}; mm: {' → '.join(expected_hops)}")


def replay_check(call, a_array, b_array, library, c) -> Check:
    """The derived call, run in NumPy's own OpenBLAS on the operands' memory, gives the
    product whylab returned, bit for bit."""
    name = T("Replaying the derived BLAS call (routine, transpose flags, leading dimensions) in "
             "the OpenBLAS NumPy loaded, on the operands' own memory, gives whylab's product "
             "bit for bit",
             "把推导出的 BLAS 调用（例程、转置标志、主维）在 NumPy 加载的同一个 OpenBLAS 中、"
             "直接在操作数自己的内存上重放，得到的结果与 whylab 的乘积逐位相同")
    if library is None:
        return Check.not_applicable(id="blas-call-replayed", name=name, expected="identical",
                                    why=T("NumPy's extension resolves no CBLAS entry point "
                                          "that threadpoolctl lists",
                                          "NumPy 的扩展模块解析不到 threadpoolctl "
                                          "列出的 CBLAS 入口"))
    replayed = blas_call.replay(call, a_array, b_array, library)
    product = c.detach().numpy()
    same = replayed.shape == product.shape and bool(np.array_equal(replayed, product))
    error = float(np.max(np.abs(replayed - product))) if replayed.shape == product.shape else \
        float("inf")
    return Check(id="blas-call-replayed", name=name, passed=same,
                 measured=T("identical" if same else f"max |Δ| = {error:.2e}",
                            "逐位相同" if same else f"最大 |Δ| = {error:.2e}"),
                 expected=T("identical", "逐位相同"))


def copies_check(call, a_array, b_array, extra_bytes: int) -> Check:
    """The bytes np.dot allocated beyond its output are the copies the derivation names."""
    sizes = {"a": a_array.size * 8, "b": b_array.size * 8}
    derived = sum(sizes[name] for name in call.copied)
    return Check(
        id="copies-as-derived",
        name=T("np.dot allocates, beyond its output, exactly the copies the derivation names "
               "(tracemalloc)",
               "np.dot 在输出之外分配的内存，正好是推导所说的复制（tracemalloc 测得）"),
        passed=abs(extra_bytes - derived) <= ALLOCATION_SLACK,
        measured=f"{extra_bytes} B",
        expected=f"{derived} B ± {ALLOCATION_SLACK}")


def profiler_check(whylab_rows, torch_rows) -> Check:
    name = T("torch.profiler, recording shapes, shows the same calls as whylab's trace: "
             "aten::matmul, and under it aten::mm with the same shapes",
             "开启 record_shapes 的 torch.profiler 记录到的调用与 whylab 的跟踪相同："
             "aten::matmul，其下是形状相同的 aten::mm")
    if torch_rows is None:
        return Check.not_applicable(id="profiler-matches-trace", name=name, expected="torch",
                                    why=T("needs torch installed", "需要安装 torch"))
    return Check(id="profiler-matches-trace", name=name, passed=whylab_rows == torch_rows,
                 measured=show_rows(whylab_rows), expected=show_rows(torch_rows))


def show_rows(rows) -> str:
    """``matmul([96, 80], [80, 64]); mm([96, 80], [80, 64]) ⊂ matmul()``: each call with
    its input shapes, and the call it ran inside."""
    return "; ".join(f"{op}({', '.join(str(list(s)) for s in shapes)})"
                     + (f" ⊂ {parent}()" if parent else "") for op, shapes, parent in rows)


def layers_table(events, call, library, a, b) -> Table:
    """One row per layer of the call, what ran there, and whether it was observed or derived."""
    observed, derived = T("observed (trace)", "观察到（跟踪）"), T("derived", "推导")
    rows = [[T("Python binding", "Python 绑定"), "Tensor.__matmul__ → matmul", observed]]
    for op in ("matmul", "mm"):
        for key, kernel in hops_of(events, op):
            rows.append([T(f"{op} at the {key} key", f"{op} 在 {key} 键"), kernel, observed])
    rows.append([T("CUDA (what PyTorch would pick)", "CUDA（PyTorch 会选的）"),
                 T("a CUDA tensor's key set has CUDA instead of CPU: torch.ops.aten.mm's CUDA "
                   "kernel, which calls cuBLAS (cublasDgemm for float64); not on this machine",
                   "CUDA 张量的键集合里是 CUDA 而不是 CPU：运行 torch.ops.aten.mm 的 CUDA "
                   "kernel，它调用 cuBLAS（float64 用 cublasDgemm）；本机没有"), derived])
    rows.append([T("strides handed to np.dot (elements)", "交给 np.dot 的步幅（元素）"),
                 f"a {tuple(a.stride())}, b {tuple(b.stride())}", observed])
    copies = ", ".join(call.copied) or T("none", "无")
    rows.append([T("BLAS call", "BLAS 调用"), call.signature(), derived])
    rows.append([T("operands NumPy copies first", "NumPy 先复制的操作数"), copies, derived])
    if library is not None:
        info = library.info
        file_name = os.path.basename(info.get("filepath", ""))
        found = T("observed (threadpoolctl.threadpool_info())",
                  "观察到（threadpoolctl.threadpool_info()）")
        library_text = T(f"{file_name} {info.get('version')}, core type "
                         f"{info.get('architecture')}, {info.get('num_threads')} threads",
                         f"{file_name} {info.get('version')}，核心类型“"
                         f"{info.get('architecture')}”，{info.get('num_threads')} 个线程")
        rows.append([T("BLAS library", "BLAS 库"), library_text, found])
    return Table(title=T("The call, layer by layer", "逐层看这次调用"),
                 columns=[T("layer", "层"), T("what ran", "运行的是什么"),
                          T("source", "来源")], rows=rows)


def products_table(whylab_rows, torch_rows) -> Table:
    rows = [[T("whylab trace", "whylab 跟踪"), show_rows(whylab_rows)]]
    rows.append([T("torch.profiler", "torch.profiler"),
                 show_rows(torch_rows) if torch_rows is not None else
                 T("torch not installed", "未安装 torch")])
    return Table(title=T("Product calls and their input shapes", "乘法调用及其输入形状"),
                 columns=[T("source", "来源"),
                          T("calls (shapes) ⊂ caller", "调用（形状）⊂ 调用者")],
                 rows=rows)
