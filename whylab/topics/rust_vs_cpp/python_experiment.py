"""Experiment ``python-analogues``: the same questions asked of NumPy and CPython, no compiler.

* The borrow question, "do these two names reach the same bytes?", is
  ``np.shares_memory``; it is checked against the byte addresses of every element,
  computed here from each array's data pointer and strides.
* NumPy refuses to let overlapping ufunc operands see half-written output: for
  ``np.add(a[:-1], a[1:], out=a[1:])`` it copies an input first, so the result is what
  non-overlapping operands would give; the temporary is seen by tracemalloc.
* CPython frees an object the moment its last reference goes (a ``weakref.finalize``
  callback runs at ``del``), but an object in a reference cycle waits for the cyclic
  garbage collector.
* A NumPy structured array is an array of structs: summing one float64 field of 64-byte
  records touches 8× the bytes of a separate array of that field (strides 64 against 8);
  the two sums are timed in interleaved rounds.
"""

from __future__ import annotations

import gc
import tracemalloc
import weakref

import numpy as np

from whylab.bench import compare
from whylab.explorer.experiment import (
    Check,
    Control,
    Param,
    Result,
    T,
    control_active,
    experiment,
)

FIELDS = ("x", "y", "z", "vx", "vy", "vz", "mass", "charge")
LAYOUT_AT_LEAST = 2.0
ALLOCATION_SLACK = 1024


def element_addresses(array: np.ndarray) -> set[int]:
    """Every byte address an array's elements occupy, from its data pointer and strides."""
    base = array.__array_interface__["data"][0]
    offsets = np.zeros((), dtype=np.int64)
    for size, stride in zip(array.shape, array.strides, strict=True):
        offsets = offsets[..., None] + np.arange(size, dtype=np.int64) * stride
    starts = base + offsets.ravel()
    return {int(start) + byte for start in starts for byte in range(array.itemsize)}


class Tracked:
    """An object whose end a weakref.finalize callback records."""


def freed_at_del(in_cycle: bool) -> tuple[bool, bool]:
    """(ran at del, ran after gc.collect()) for one object, with the collector paused."""
    ran = []
    thing = Tracked()
    if in_cycle:
        thing.self_reference = thing
    weakref.finalize(thing, ran.append, True)
    enabled = gc.isenabled()
    gc.disable()
    try:
        del thing
        at_del = bool(ran)
        gc.collect()
    finally:
        if enabled:
            gc.enable()
    return at_del, bool(ran)


@experiment(
    name="python-analogues",
    title=T("The same questions in NumPy and CPython", "在 NumPy 与 CPython 里问同样的问题"),
    description=T(
        "Runs without any compiler: aliasing with np.shares_memory, NumPy's temporary for "
        "overlapping ufunc operands, destruction by reference count against a cycle, and a "
        "structured array (AoS) against a plain one (SoA), timed in interleaved rounds.",
        "不需要任何编译器：用 np.shares_memory 判断别名；NumPy 为重叠的 ufunc 操作数做的临时"
        "副本；引用计数立即销毁与循环引用的对比；结构化数组（AoS）与普通数组（SoA）交替计时。"),
    params=[
        Param("n", "int", 1 << 20, T("records (64 bytes each)", "记录数（每条 64 字节）"),
              minimum=1 << 14, maximum=1 << 22, step=1 << 14),
    ],
    timing=True,
    time_limit_s=60.0,
    controls=[
        Control("copy-taken-for-a-view",
                T("the slice is copied before the question is asked", "提问之前切片已被复制"),
                breaks=("shares-memory-as-addresses",)),
        Control("element-by-element-loop",
                T("the overlapping add is done element by element in place",
                  "重叠的加法被逐个元素原地计算"),
                breaks=("overlap-gets-a-temporary",)),
        Control("plain-object-in-a-cycle",
                T("the plain object also references itself", "普通对象也引用了它自己"),
                breaks=("refcount-frees-at-del",)),
        Control("field-copied-out",
                T("the field is copied into its own array before the AoS sum",
                  "AoS 求和之前，这个字段已被复制成单独的数组"),
                breaks=("structured-array-costs-bytes",)),
    ],
)
def python_analogues(n: int) -> Result:
    checks = [aliasing_check(), overlap_check(), refcount_check(), layout_check(n)]
    return Result(checks=checks)


def aliasing_check() -> Check:
    base = np.arange(24, dtype=np.int64)
    view = base[3:15:2]
    if control_active("copy-taken-for-a-view"):
        view = view.copy()
    evens, odds = base[::2], base[1::2]
    pairs = {"a, a[3:15:2]": (base, view), "a[::2], a[1::2]": (evens, odds)}
    answers = {name: (bool(np.shares_memory(a, b)), bool(element_addresses(a)
                                                          & element_addresses(b)))
               for name, (a, b) in pairs.items()}
    expected = {"a, a[3:15:2]": True, "a[::2], a[1::2]": False}
    may = bool(np.may_share_memory(evens, odds))
    passed = all(shares == overlap == expected[name]
                 for name, (shares, overlap) in answers.items()) and may
    shown = "; ".join(f"{name}: {shares}" for name, (shares, _) in answers.items())
    return Check(
        id="shares-memory-as-addresses",
        name=T("np.shares_memory answers the borrow question as the element addresses do: a "
               "slice shares its base's bytes; the even and odd elements share none (though "
               "np.may_share_memory, which only compares bounds, says they might)",
               "np.shares_memory 对“借用问题”的回答与元素地址一致：切片与它的基数组共享字节；"
               "偶数位与奇数位元素不共享任何字节（只比较边界的 np.may_share_memory 却说可能共享）"),
        passed=passed, measured=f"{shown}; may_share_memory {may}",
        expected="True; False; may_share_memory True")


def overlap_check() -> Check:
    values = np.arange(1.0, 4097.0)
    reference = values[:-1] + values[1:]  # what non-overlapping operands give
    a = values.copy()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before, _ = tracemalloc.get_traced_memory()
        if control_active("element-by-element-loop"):
            for i in range(len(a) - 1):
                a[i + 1] = a[i] + a[i + 1]
        else:
            np.add(a[:-1], a[1:], out=a[1:])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    temporary = peak - before
    operand = reference.nbytes
    same = bool(np.array_equal(a[1:], reference))
    return Check(
        id="overlap-gets-a-temporary",
        name=T("With out= overlapping an input, np.add gives what separate operands would, "
               "by copying an operand first (tracemalloc sees a temporary of its size)",
               "out= 与输入重叠时，np.add 先复制一个操作数，结果与操作数互不重叠时相同"
               "（tracemalloc 看到一个同样大小的临时数组）"),
        passed=same and temporary >= operand - ALLOCATION_SLACK,
        measured=T(f"result {'as separate operands' if same else 'differs'}; "
                   f"temporary {temporary} B",
                   f"结果{'与互不重叠时相同' if same else '不同'}；临时内存 {temporary} B"),
        expected=T(f"as separate operands; temporary ≥ {operand - ALLOCATION_SLACK} B",
                   f"与互不重叠时相同；临时内存 ≥ {operand - ALLOCATION_SLACK} B"))


def refcount_check() -> Check:
    plain = freed_at_del(in_cycle=control_active("plain-object-in-a-cycle"))
    cyclic = freed_at_del(in_cycle=True)
    passed = plain == (True, True) and cyclic == (False, True)

    def shown(result, zh=False):
        at_del, later = result
        if zh:
            return "del 时" if at_del else ("gc.collect() 时" if later else "一直没有")
        return "at del" if at_del else ("at gc.collect()" if later else "never")

    return Check(
        id="refcount-frees-at-del",
        name=T("A plain object's finalizer runs at del (its count reached zero); one in a "
               "reference cycle waits for gc.collect()",
               "普通对象的终结回调在 del 时运行（引用计数归零）；处在循环引用中的对象要等到 "
               "gc.collect()"),
        passed=passed,
        measured=T(f"plain {shown(plain)}, cycle {shown(cyclic)}",
                   f"普通对象：{shown(plain, True)}；循环引用：{shown(cyclic, True)}"),
        expected=T("plain at del, cycle at gc.collect()",
                   "普通对象：del 时；循环引用：gc.collect() 时"))


def layout_check(n: int) -> Check:
    records = np.zeros(n, dtype=[(name, np.float64) for name in FIELDS])
    records["x"] = np.arange(n, dtype=np.float64)
    field = records["x"]
    if control_active("field-copied-out"):
        field = field.copy()
    separate = np.arange(n, dtype=np.float64)
    bytes_aos, bytes_soa = field.strides[0] * n, separate.strides[0] * n
    timed = compare({"aos": lambda: field.sum(), "soa": lambda: separate.sum()}, 5, 0.02,
                    pause_s=0.01)
    ratio = float(np.median(timed.ratios("aos", "soa")))
    return Check(
        id="structured-array-costs-bytes",
        name=T(f"Summing one field of a structured array (stride {records.itemsize} B) takes at "
               f"least {LAYOUT_AT_LEAST:g}× the time of a plain array (stride 8 B), as the "
               "bytes it touches say",
               f"对结构化数组的一个字段（步幅 {records.itemsize} 字节）求和，耗时至少是普通数组"
               f"（步幅 8 字节）的 {LAYOUT_AT_LEAST:g} 倍，正如它触及的字节数所示"),
        passed=ratio >= LAYOUT_AT_LEAST and bytes_aos > bytes_soa,
        measured=T(f"{ratio:.1f}× (bytes {bytes_aos // bytes_soa}×)",
                   f"{ratio:.1f} 倍（字节数 {bytes_aos // bytes_soa} 倍）"),
        expected=f"≥ {LAYOUT_AT_LEAST:g}×")
