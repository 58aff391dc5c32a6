"""Experiment ``key-set``: which keys a call carries, which one wins, and what ran.

One small operator (``add``, in-place ``add_`` or the view ``transpose``) runs on
CPU or Meta tensors under a chosen guard, inside ``whylab.dispatch.trace()``.
The page's formula, applied to the declarations in
:mod:`~whylab.topics.dispatcher.key_rules`, predicts the key set, the winning
key, the keys the call visits and the key set of the result; the trace shows
what the engine did. For ``add_`` on a tensor that autograd saved for backward,
a backward pass afterwards shows whether the write was noticed. The same call
on the other backend checks that Meta computes CPU's metadata without data.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import numpy as np

import whylab
from whylab._tensor.tensor import Tensor
from whylab.dispatch import (
    DispatchKey,
    DispatchKeySet,
    TraceEvent,
    exclude_keys,
    excluded_keys,
    get_op,
    include_keys,
    included_keys,
    trace,
)
from whylab.explorer.experiment import Check, Param, Result, T, Table, experiment
from whylab.topics.dispatcher.key_rules import (
    GUARD_RULES,
    OP_RULES,
    by_priority,
    call_key_set,
    highest_key,
    output_keys,
    predicted_path,
)
from whylab.topics.dispatcher.trace_view import group_calls, trace_diagram, trace_table

SHAPE_X, SHAPE_Y = (3, 4), (4,)
GUARDS = tuple(GUARD_RULES)
OPS = tuple(OP_RULES)


def guard_context(guard: str):
    """The real context manager behind a guard's name."""
    if guard == "exclude-autograd":
        return exclude_keys(DispatchKey.Autograd)
    if guard == "include-tracer":
        return include_keys(DispatchKey.Tracer)
    if guard == "no-grad":
        return whylab.no_grad()
    if guard == "inference-mode":
        return whylab.inference_mode()
    if guard == "none":
        return contextlib.nullcontext()
    raise ValueError(f"unknown guard {guard!r}")


def key_names(bits_or_set) -> frozenset[str]:
    """Names of the keys in an engine key set (a DispatchKeySet or raw bitmask)."""
    keyset = (bits_or_set if isinstance(bits_or_set, DispatchKeySet)
              else DispatchKeySet.from_bits(int(bits_or_set)))
    return frozenset(key.name for key in keyset)


def shown(keys) -> str:
    """A key set written highest first: {Autograd, ADInplaceOrView, CPU}."""
    return "{" + ", ".join(by_priority(keys)) + "}"



@dataclass(frozen=True)
class OpRun:
    """What one traced call did, and the thread-local key sets it ran under."""

    output: Tensor
    events: list[TraceEvent]
    tensor_keys: frozenset[str]
    self_keys: frozenset[str]
    output_keys: frozenset[str]
    included: frozenset[str]
    excluded: frozenset[str]
    recorded_node: bool
    version_bumped: bool
    backward_error: str | None  # what backward through the written tensor raised


def make_inputs(device: str, requires_grad: bool, seed: int = 0) -> tuple[Tensor, Tensor]:
    """x (3×4, float64, maybe requiring grad) and y (4,) on ``device``."""
    if device == "meta":
        x = whylab.empty(SHAPE_X, dtype=whylab.float64, device="meta",
                         requires_grad=requires_grad)
        return x, whylab.empty(SHAPE_Y, dtype=whylab.float64, device="meta")
    rng = np.random.default_rng(seed)
    x = whylab.tensor(rng.standard_normal(SHAPE_X), requires_grad=requires_grad)
    return x, whylab.tensor(rng.standard_normal(SHAPE_Y))


def apply_op(op: str, x: Tensor, y: Tensor) -> Tensor:
    """Run one of the predefined operators."""
    if op == "add":
        return whylab.add(x, y)
    if op == "add_":
        return x.add_(y)
    if op == "transpose":
        return x.transpose(0, 1)
    raise ValueError(f"unknown op {op!r}")


def run_op(op: str, device: str, requires_grad: bool, guard: str) -> OpRun:
    """Make the inputs (outside the guard), then run ``op`` under the guard and a trace.

    For ``add_`` with ``requires_grad``, ``target * target`` is computed first, so
    autograd saves the tensor about to be written; after the write, a backward
    pass through that product reports whether the write was noticed.
    """
    x, y = make_inputs(device, requires_grad)
    # An in-place write to a leaf that requires grad is an error; write into a copy.
    target = x.clone() if op == "add_" else x
    saves_target = (target * target).sum() if op == "add_" and requires_grad else None
    grad_fn_before = target.grad_fn
    version_before = target._version.value
    arguments = (target,) if op == "transpose" else (target, y)
    tensor_keys = frozenset().union(*(key_names(t._keys) for t in arguments))
    with guard_context(guard):
        included, excluded = key_names(included_keys()), key_names(excluded_keys())
        with trace() as recorded:
            output = apply_op(op, target, y)
    new_node = output.grad_fn is not None and output.grad_fn is not grad_fn_before
    backward_error = None
    if saves_target is not None:
        try:
            saves_target.backward()
        except RuntimeError as error:
            backward_error = str(error)
    return OpRun(output, list(recorded.events), tensor_keys, key_names(target._keys),
                 key_names(output._keys), included, excluded, new_node,
                 target._version.value != version_before, backward_error)


def numpy_reference(op: str, seed: int = 0) -> np.ndarray:
    """What ``op`` computes on the CPU inputs of :func:`make_inputs`, in NumPy."""
    rng = np.random.default_rng(seed)
    x, y = rng.standard_normal(SHAPE_X), rng.standard_normal(SHAPE_Y)
    return x.T if op == "transpose" else x + y


def traced_path(events: list[TraceEvent]) -> list[str]:
    """The keys the first (outermost) call visited, in order."""
    calls = group_calls(events)
    return [events[i].key for i in calls[0].hops] if calls else []


# ---------------------------------------------------------------- checks

# Check values with words, in both languages.
RAN, SKIPPED = T("ran", "运行了"), T("skipped", "跳过了")
RECORDED, NOT_RECORDED = T("recorded", "已记录"), T("none", "未记录")
BUMPED, UNCHANGED = T("bumped", "加一了"), T("unchanged", "未变")
IN_PLACE_ERROR, NO_ERROR = T("in-place error", "原地修改错误"), T("no error", "没有报错")
EQUAL, DIFFERS = T("equal", "相同"), T("differs", "不同")


def guard_check(guard: str, included: frozenset[str], excluded: frozenset[str]) -> Check:
    """The guard changed the thread-local sets exactly as the page says."""
    rule = GUARD_RULES[guard]
    return Check(
        name=T(f"Guard '{guard}' sets the included and excluded keys stated on the page",
               f"保护块（{guard}）设置的包含集与排除集和本页所写的一致"),
        passed=(included, excluded) == (rule.included, rule.excluded),
        measured=f"K_incl = {shown(included)}, K_excl = {shown(excluded)}",
        expected=f"K_incl = {shown(rule.included)}, K_excl = {shown(rule.excluded)}")


def highest_key_check(predicted: str | None, path: list[str], call_keys: frozenset[str]) -> Check:
    """k* from the formula is the first key whose kernel ran (below the trace's own Tracer hop,
    unless the call's own key set holds the Tracer)."""
    first = path[0] if "Tracer" in call_keys else (path[1] if len(path) > 1 else None)
    return Check(
        name=T("The first kernel to run is the one at k* = max((K_tensors ∪ K_incl) \\ K_excl) "
               "among the keys with a kernel",
               "最先运行的 kernel 位于 k* = max((K_tensors ∪ K_incl) \\ K_excl)，"
               "只在有 kernel 的键中取最大"),
        passed=predicted is not None and first == predicted,
        measured=str(first), expected=str(predicted))


def path_check(predicted: list[str], traced: list[str]) -> Check:
    """The whole sequence of keys matches the prediction, the trace's Tracer included."""
    return Check(
        name=T("The call visits exactly the keys of K ∩ K_op, from the highest down to a "
               "backend", "调用依次经过 K ∩ K_op 中的键，从最高的一直到某个后端"),
        passed=predicted == traced, measured=" → ".join(traced),
        expected=" → ".join(predicted))


def kernel_table_check(op: str, engine_keys: frozenset[str]) -> Check:
    """The operator's kernel table has kernels exactly where the page says."""
    declared = OP_RULES[op].kernel_keys()
    return Check(
        name=T(f"{op} has kernels where the page says, and falls through elsewhere",
               f"{op} 在本页所说的键上有 kernel，其余的键直接跳过"),
        passed=engine_keys == declared, measured=shown(engine_keys), expected=shown(declared))


def fallthrough_check(op: str, call_keys: frozenset[str], path: list[str]) -> Check:
    """ADInplaceOrView runs only for views and in-place ops (and only when not excluded)."""
    expected = "ADInplaceOrView" in call_keys and "ADInplaceOrView" in OP_RULES[op].kernel_keys()
    ran = "ADInplaceOrView" in path
    in_set = "in K" if "ADInplaceOrView" in call_keys else "not in K"
    return Check(
        name=T(f"ADInplaceOrView ({in_set}) runs for {op} only if {op} is a view or in-place",
               f"ADInplaceOrView（{'在' if in_set == 'in K' else '不在'} K 中）只有在 {op} "
               "是视图或原地操作时才运行"),
        passed=ran == expected, measured=RAN if ran else SKIPPED,
        expected=RAN if expected else SKIPPED)


def recording_check(requires_grad: bool, guard: str, call_keys: frozenset[str],
                    recorded: bool) -> Check:
    """A graph node is recorded only with requires_grad, grad mode on and Autograd in K."""
    expected = requires_grad and GUARD_RULES[guard].grad_mode and "Autograd" in call_keys
    return Check(
        name=T("A grad_fn is recorded only when an input requires grad, grad mode is on and "
               "Autograd is in K",
               "只有输入需要梯度、梯度模式开启且 Autograd 在 K 中时才记录 grad_fn"),
        passed=recorded == expected, measured=RECORDED if recorded else NOT_RECORDED,
        expected=RECORDED if expected else NOT_RECORDED)


def metadata(tensor: Tensor) -> tuple:
    """What a Meta kernel must get right: sizes, strides, offset, dtype."""
    return (tuple(tensor.shape), tuple(tensor.stride()), tensor.storage_offset(), tensor.dtype)


def meta_check(cpu_output: Tensor, meta_output: Tensor) -> Check:
    """Meta computes the CPU result's metadata and holds no data."""
    same = metadata(cpu_output) == metadata(meta_output)
    no_data = meta_output.device.type == "meta" and meta_output._array is None
    return Check(
        name=T("The Meta backend gives the CPU result's shape, strides and dtype, without data",
               "Meta 后端给出与 CPU 结果相同的形状、步长和数据类型，且不含数据"),
        passed=same and no_data,
        measured=T(f"Meta: {metadata(meta_output)[:2]}, data {'none' if no_data else 'present'}",
                   f"Meta：{metadata(meta_output)[:2]}，{'无数据' if no_data else '有数据'}"),
        expected=T(f"CPU: {metadata(cpu_output)[:2]}, data none",
                   f"CPU：{metadata(cpu_output)[:2]}，无数据"))


def version_check(bumped: bool, path: list[str]) -> Check:
    """For an in-place op the version counter moves exactly when ADInplaceOrView ran."""
    ran = "ADInplaceOrView" in path
    return Check(
        name=T("The in-place write bumped the version counter exactly when ADInplaceOrView ran",
               "原地写入仅在 ADInplaceOrView 运行时才使版本计数器加一"),
        passed=bumped == ran, measured=BUMPED if bumped else UNCHANGED,
        expected=BUMPED if ran else UNCHANGED)


def output_keys_check(op: str, guard: str, predicted: frozenset[str],
                      measured: frozenset[str]) -> Check:
    """The result carries the key set the page's rules give it."""
    made = "a view or in-place result" if OP_RULES[op].is_view or OP_RULES[op].is_inplace \
        else "a new tensor"
    made_zh = "视图或原地结果" if made != "a new tensor" else "新建的张量"
    return Check(
        name=T(f"The result of {op} ({made}) carries the keys the rules give it under "
               f"guard '{guard}'",
               f"{op} 的结果（{made_zh}）在保护块（{guard}）下带着规则所给的键"),
        passed=measured == predicted, measured=shown(measured), expected=shown(predicted))


def saved_tensor_check(bumped: bool, error: str | None) -> Check:
    """Backward through a saved tensor that was written raises exactly when its version moved."""
    raised = error is not None and "modified by an inplace operation" in error
    return Check(
        name=T("A backward pass that saved the written tensor raises the in-place error "
               "exactly when the write bumped its version",
               "若反向传播保存过被写入的张量，那么恰好在这次写入让版本号加一时，"
               "反向传播报出原地修改错误"),
        passed=raised == bumped,
        measured=(IN_PLACE_ERROR if raised
                  else T(f"other error: {error}", f"其他错误：{error}") if error else NO_ERROR),
        expected=IN_PLACE_ERROR if bumped else NO_ERROR)


def values_check(values: np.ndarray, reference: np.ndarray) -> Check:
    """The CPU result equals NumPy's (same elementwise operations, so exactly)."""
    equal = values.shape == reference.shape and bool(np.array_equal(values, reference))
    return Check(name=T("The CPU result equals NumPy's", "CPU 结果与 NumPy 的相同"),
                 passed=equal, measured=EQUAL if equal else DIFFERS, expected=EQUAL)


# ---------------------------------------------------------------- experiment


@experiment(
    name="key-set",
    title=T("The key set of one call", "一次调用的键集合"),
    description=T(
        "Runs one small operator on CPU or Meta tensors under a guard, inside a trace. The "
        "rules on this page predict the key set K, the winning key k*, every key the call "
        "visits and the keys the result carries; the trace shows what the dispatcher did. "
        "For add_ on a tensor that requires grad, a backward pass afterwards shows whether "
        "the write was noticed.",
        "在某个保护块中、在跟踪下，对 CPU 或 Meta 张量运行一个小算子。本页的规则预测键集合 K、"
        "胜出的键 k*、调用经过的每个键以及结果带的键；跟踪记录给出分派器实际做了什么。"
        "对需要梯度的张量执行 add_ 时，之后再跑一次反向传播，看这次写入有没有被察觉。",
    ),
    params=[
        Param("op", "choice", "add", T("operator", "算子"), choices=OPS,
              choice_labels=(T("add (out of place)", "add（非原地）"),
                             T("add_ (in place)", "add_（原地）"),
                             T("transpose (a view)", "transpose（视图）"))),
        Param("device", "choice", "cpu", T("tensors on", "张量所在设备"), choices=("cpu", "meta"),
              choice_labels=(T("CPU", "CPU"), T("Meta (shapes only)", "Meta（只有形状）"))),
        Param("requires_grad", "bool", True, T("x requires grad", "x 需要梯度")),
        Param("guard", "choice", "none", T("guard around the call", "包住调用的保护块"),
              choices=GUARDS,
              choice_labels=(T("none", "无"), T("exclude_keys(Autograd)", "exclude_keys(Autograd)"),
                             T("include_keys(Tracer)", "include_keys(Tracer)"),
                             T("no_grad()", "no_grad()"),
                             T("inference_mode()", "inference_mode()"))),
    ],
)
def key_set(op: str, device: str, requires_grad: bool, guard: str) -> Result:
    runs = {backend: run_op(op, backend, requires_grad, guard) for backend in ("cpu", "meta")}
    run = runs[device]
    rule = GUARD_RULES[guard]
    call_keys = call_key_set(run.tensor_keys, rule.included, rule.excluded)
    op_keys = OP_RULES[op].kernel_keys()
    predicted = highest_key(call_keys, op_keys)
    path = traced_path(run.events)
    engine_op = get_op(op)
    engine_keys = frozenset(key for key in ("Tracer", "Autograd", "ADInplaceOrView", "CPU", "Meta")
                            if engine_op.has_kernel(DispatchKey[key]))

    checks = [
        guard_check(guard, run.included, run.excluded),
        highest_key_check(predicted, path, call_keys),
        path_check(predicted_path(call_keys | {"Tracer"}, op_keys), path),
        kernel_table_check(op, engine_keys),
        fallthrough_check(op, call_keys, path),
        recording_check(requires_grad, guard, call_keys, run.recorded_node),
        meta_check(runs["cpu"].output, runs["meta"].output),
        values_check(runs["cpu"].output.detach().numpy(), numpy_reference(op)),
    ]
    checks.append(output_keys_check(
        op, guard, output_keys(op, run.self_keys, run.tensor_keys, guard), run.output_keys))
    if op == "add_":
        checks.append(version_check(run.version_bumped, path))
        if requires_grad:
            checks.append(saved_tensor_check(run.version_bumped, run.backward_error))

    kernel_at_top = next((e.kernel for e in run.events if e.key == predicted), "—")
    formula_table = Table(
        title=T("The formula, step by step", "公式的每一步"),
        columns=[T("set", "集合"), T("keys (highest first)", "键（从高到低）")],
        rows=[["K_tensors", shown(run.tensor_keys)],
              ["K_incl", shown(rule.included)],
              ["K_excl", shown(rule.excluded)],
              ["K = (K_tensors ∪ K_incl) \\ K_excl", shown(call_keys)],
              [f"K_op ({op})", shown(op_keys)],
              ["K ∩ K_op", shown(call_keys & op_keys)],
              ["k*", str(predicted)],
              ["kernel(k*)", kernel_at_top]],
    )
    metadata_table = Table(
        title=T("The same call on CPU and on Meta", "同一调用在 CPU 与 Meta 上的结果"),
        columns=[T("device", "设备"), T("shape", "形状"), T("strides", "步长"),
                 T("storage offset", "存储偏移"), T("dtype", "数据类型"),
                 T("holds data", "含有数据")],
        rows=[[name, *(str(v) for v in metadata(r.output)[:3]), r.output.dtype.name,
               str(r.output._array is not None)] for name, r in runs.items()],
    )
    return Result(
        checks=checks,
        figures=[trace_diagram(run.events, T(
            f"Hops of {op} on {device.upper()}, guard: {guard}",
            f"{op} 在 {device.upper()} 上的每一跳，保护块：{guard}"))],
        tables=[formula_table, trace_table(run.events, T("The recorded hops", "记录下的每一跳")),
                metadata_table],
        metrics={"highest_key": str(predicted), "hops": len(run.events),
                 "grad_fn": type(run.output.grad_fn).__name__ if run.recorded_node else "None"},
        notes=[T("The trace itself works by including the Tracer key, so every recorded call "
                 "starts with a Tracer hop; k* is computed for the call as written, without "
                 "the trace.",
                 "跟踪本身就是靠把 Tracer 键加入包含集来实现的，所以记录下的每次调用都以一次 "
                 "Tracer 跳开始；k* 按不带跟踪的原始调用计算。")],
    )
