"""Experiment ``key-set``: which keys a call carries, which one wins, and what ran.

One small operator (``add``, in-place ``add_`` or the view ``transpose``) runs on
CPU or Meta tensors, ordinary ones or inference tensors made inside
``inference_mode()``, under a chosen guard, inside ``whylab.dispatch.trace()``.
The page's formula, applied to the declarations in
:mod:`~whylab.topics.dispatcher.key_rules`, predicts the key set, the winning
key, the keys the call visits and the key set of the result; the trace shows
what the engine did. For ``add_``, autograd is first asked to save the tensor
written (an inference tensor must be refused), and a backward pass afterwards
shows whether the write was noticed: the inference tensors reach the other
branch of both "exactly when" claims. The same call on the other backend checks
that Meta computes CPU's metadata without data and runs the same Autograd kernel.

Negative controls switch in wrong rules (``guard_rule``, ``declared_kernels``,
``first_key``, ``predicted_output_keys``) or a wrong computation (``run_op``).
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
from whylab.explorer.experiment import (
    Check,
    Control,
    Metric,
    Param,
    Result,
    T,
    Table,
    control_active,
    experiment,
)
from whylab.topics.dispatcher.key_rules import (
    GUARD_RULES,
    OP_RULES,
    GuardRule,
    by_priority,
    call_key_set,
    highest_key,
    output_keys,
    predicted_path,
)
from whylab.topics.dispatcher.trace_view import group_calls, trace_diagram, trace_table

SHAPE_X, SHAPE_Y = (3, 4), (4,)
GUARDS = tuple(GUARD_RULES)
GUARD_LABELS = {
    "none": T("none", "无"),
    "exclude-autograd": T("exclude_keys(Autograd)", "exclude_keys(Autograd)"),
    "include-tracer": T("include_keys(Tracer)", "include_keys(Tracer)"),
    "no-grad": T("no_grad()", "no_grad()"),
    "inference-mode": T("inference_mode()", "inference_mode()"),
}
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
    saved: str | None  # what became of autograd's hold on the written tensor: see SAVED_*
    error: str | None  # the message behind it, if any


#: What happened to a tensor autograd was asked to save before it was written.
SAVED_IN_PLACE_ERROR = "in-place-error"  # saved; backward then raised the version error
SAVED_REFUSED = "refused"  # saving itself was refused (an inference tensor)
SAVED_NO_ERROR = "no-error"  # saved, written, and backward raised nothing
SAVED_OTHER_ERROR = "other-error"


def make_inputs(device: str, requires_grad: bool, inference: bool = False,
                seed: int = 0) -> tuple[Tensor, Tensor]:
    """x (3×4, float64, maybe requiring grad) and y (4,) on ``device``; made inside
    ``inference_mode()`` when ``inference`` (then they are inference tensors, and x
    does not require grad: an inference tensor cannot take part in autograd)."""
    requires_grad = requires_grad and not inference
    with whylab.inference_mode() if inference else contextlib.nullcontext():
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


def save_for_backward(target: Tensor, inference: bool) -> tuple[Tensor | None, str | None]:
    """Have autograd save ``target`` before it is written: a loss whose backward needs it.

    An ordinary target that requires grad is saved by ``target * target``. An
    inference target is offered to autograd through ``w * target`` with an ordinary
    ``w`` that requires grad; that must be refused. Returns the loss (or None when
    nothing was saved) and the refusal's message (or None).
    """
    if not inference:
        return ((target * target).sum() if target.requires_grad else None), None
    w = whylab.ones(SHAPE_X, dtype=whylab.float64, device=target.device.type,
                    requires_grad=True)
    offered = target.clone() if control_active("saved-a-clone") else target
    try:
        return (w * offered).sum(), None
    except RuntimeError as error:
        return None, str(error)


def run_op(op: str, device: str, requires_grad: bool, guard: str,
           inference: bool = False) -> OpRun:
    """Make the inputs (outside the guard), then run ``op`` under the guard and a trace.

    For ``add_``, autograd is first asked to save the tensor about to be written
    (:func:`save_for_backward`); after the write, a backward pass reports whether
    the write was noticed.
    """
    x, y = make_inputs(device, requires_grad, inference)
    if control_active("kernel-reads-wrong-operand"):
        y = y + 1.0
    # An in-place write to a leaf that requires grad is an error; write into a copy.
    target = x.clone() if op == "add_" and not inference else x
    loss, refused = save_for_backward(target, inference) if op == "add_" else (None, None)
    grad_fn_before = target.grad_fn
    version_before = target._version_counter.value
    arguments = (target,) if op == "transpose" else (target, y)
    tensor_keys = frozenset().union(*(key_names(t._keys) for t in arguments))
    # Under this control the write goes through .data: the same storage, another counter.
    written = target.data if op == "add_" and control_active("write-behind-counter") else target
    skip_autograd = device == "meta" and control_active("meta-skips-autograd")
    meta_guard = exclude_keys(DispatchKey.Autograd) if skip_autograd else contextlib.nullcontext()
    with guard_context(guard), meta_guard:
        included, excluded = key_names(included_keys()), key_names(excluded_keys())
        with trace() as recorded:
            output = apply_op(op, written, y)
    if op == "add_" and control_active("backend-bumps-version"):
        target._version_counter.bump()  # a backend kernel that counted the write itself
    new_node = output.grad_fn is not None and output.grad_fn is not grad_fn_before
    saved, error = (SAVED_REFUSED, refused) if refused is not None else (None, None)
    if loss is not None:
        try:
            loss.backward()
            saved = SAVED_NO_ERROR
        except RuntimeError as backward_error:
            error = str(backward_error)
            saved = (SAVED_IN_PLACE_ERROR if "modified by an inplace operation" in error
                     else SAVED_OTHER_ERROR)
    return OpRun(output, list(recorded.events), tensor_keys, key_names(target._keys),
                 key_names(output._keys), included, excluded, new_node,
                 target._version_counter.value != version_before, saved, error)


def numpy_reference(op: str, seed: int = 0) -> np.ndarray:
    """What ``op`` computes on the CPU inputs of :func:`make_inputs`, in NumPy."""
    rng = np.random.default_rng(seed)
    x, y = rng.standard_normal(SHAPE_X), rng.standard_normal(SHAPE_Y)
    return x.T if op == "transpose" else x + y


def traced_path(events: list[TraceEvent]) -> list[str]:
    """The keys the first (outermost) call visited, in order."""
    calls = group_calls(events)
    return [events[i].key for i in calls[0].hops] if calls else []


def autograd_kernel(events: list[TraceEvent]) -> str | None:
    """The kernel that ran at the first call's Autograd hop, if it had one."""
    calls = group_calls(events)
    hops = [events[i] for i in calls[0].hops] if calls else []
    return next((hop.kernel for hop in hops if hop.key == "Autograd"), None)


# ---------------------------------------------------------------- checks

# Check values with words, in both languages.
RAN, SKIPPED = T("ran", "运行了"), T("skipped", "跳过了")
RECORDED, NOT_RECORDED = T("recorded", "已记录"), T("none", "未记录")
BUMPED, UNCHANGED = T("bumped", "加一了"), T("unchanged", "未变")
EQUAL, DIFFERS = T("equal", "相同"), T("differs", "不同")
SAVED_OUTCOMES = {
    SAVED_IN_PLACE_ERROR: T("backward raised the in-place error", "反向传播报出原地修改错误"),
    SAVED_REFUSED: T("saving refused (inference tensor)", "拒绝保存（推理张量）"),
    SAVED_NO_ERROR: T("no error: the write went unnoticed", "没有报错：写入未被察觉"),
    SAVED_OTHER_ERROR: T("another error", "其他错误"),
}


def guard_check(guard: str, rule: GuardRule, included: frozenset[str],
                excluded: frozenset[str]) -> Check:
    """The guard changed the thread-local sets exactly as the page says."""
    return Check(
        id="guard-sets-keys",
        name=T(f"Guard '{GUARD_LABELS[guard].en}' sets the included and excluded keys stated on "
               "the page",
               f"守卫（guard）{GUARD_LABELS[guard].zh} 设置的包含集与排除集和本页所写的一致"),
        passed=(included, excluded) == (rule.included, rule.excluded),
        measured=f"K_incl = {shown(included)}, K_excl = {shown(excluded)}",
        expected=f"K_incl = {shown(rule.included)}, K_excl = {shown(rule.excluded)}")


def highest_key_check(predicted: str | None, path: list[str], call_keys: frozenset[str]) -> Check:
    """k* from the formula is the first key whose kernel ran (below the trace's own Tracer hop,
    unless the call's own key set holds the Tracer)."""
    first = path[0] if "Tracer" in call_keys else (path[1] if len(path) > 1 else None)
    return Check(
        id="first-kernel-at-k-star",
        name=T("The first kernel to run is the one at k* = max((K_tensors ∪ K_incl) \\ K_excl) "
               "among the keys with a kernel",
               "最先运行的 kernel 位于 k* = max((K_tensors ∪ K_incl) \\ K_excl)，"
               "只在有 kernel 的键中取最大"),
        passed=predicted is not None and first == predicted,
        measured=str(first), expected=str(predicted))


def path_check(predicted: list[str], traced: list[str]) -> Check:
    """The whole sequence of keys matches the prediction, the trace's Tracer included."""
    return Check(
        id="path-down-k-and-kop",
        name=T("The call visits exactly the keys of K ∩ K_op, from the highest down to a "
               "backend", "调用依次经过 K ∩ K_op 中的键，从最高的一直到某个后端"),
        passed=predicted == traced, measured=" → ".join(traced),
        expected=" → ".join(predicted))


def kernel_table_check(op: str, declared: frozenset[str], engine_keys: frozenset[str]) -> Check:
    """The operator's kernel table has kernels exactly where the page says."""
    return Check(
        id="kernel-table",
        name=T(f"{op} has kernels where the page says, and falls through elsewhere",
               f"{op} 在本页所说的键上有 kernel，其余的键直接跳过"),
        passed=engine_keys == declared, measured=shown(engine_keys), expected=shown(declared))


def fallthrough_check(op: str, declared: frozenset[str], call_keys: frozenset[str],
                      path: list[str]) -> Check:
    """ADInplaceOrView runs only for views and in-place ops (and only when in K)."""
    expected = "ADInplaceOrView" in call_keys and "ADInplaceOrView" in declared
    ran = "ADInplaceOrView" in path
    in_set = "ADInplaceOrView" in call_keys
    return Check(
        id="adinplace-only-views-and-writes",
        name=T(f"ADInplaceOrView ({'in' if in_set else 'not in'} K) runs for {op} only if "
               f"{op} is a view or in-place",
               f"ADInplaceOrView（{'在' if in_set else '不在'} K 中）只有在 {op} "
               "是视图或原地操作时才运行"),
        passed=ran == expected, measured=RAN if ran else SKIPPED,
        expected=RAN if expected else SKIPPED)


def recording_check(requires_grad: bool, rule: GuardRule, call_keys: frozenset[str],
                    recorded: bool) -> Check:
    """A graph node is recorded only with requires_grad, grad mode on and Autograd in K."""
    expected = rule.grad_mode and "Autograd" in call_keys
    if not control_active("recording-ignores-requires-grad"):
        expected = expected and requires_grad
    return Check(
        id="records-only-with-grad",
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
        id="meta-matches-cpu",
        name=T("The Meta backend gives the CPU result's shape, strides and dtype, without data",
               "Meta 后端给出与 CPU 结果相同的形状、步幅和数据类型，且不含数据"),
        passed=same and no_data,
        measured=T(f"Meta: {metadata(meta_output)[:2]}, data {'none' if no_data else 'present'}",
                   f"Meta：{metadata(meta_output)[:2]}，{'无数据' if no_data else '有数据'}"),
        expected=T(f"CPU: {metadata(cpu_output)[:2]}, data none",
                   f"CPU：{metadata(cpu_output)[:2]}，无数据"))


def one_autograd_kernel_check(cpu_kernel: str | None, meta_kernel: str | None,
                              call_keys: frozenset[str]) -> Check:
    """The same Autograd kernel runs above both backends (it only redispatches below it)."""
    name = T("One Autograd kernel serves both backends: the same kernel runs at the Autograd "
             "hop on CPU and on Meta",
             "一个 Autograd kernel 同时服务两种后端：CPU 与 Meta 上 Autograd 这一跳运行的是同一个 "
             "kernel")
    if "Autograd" not in call_keys:
        return Check.not_applicable(
            id="one-autograd-kernel", name=name, expected=T("the same kernel", "同一个 kernel"),
            why=T("needs Autograd in K: a guard other than exclude_keys(Autograd) and "
                  "inference_mode(), and an ordinary x",
                  "需要 Autograd 在 K 中：选 exclude_keys(Autograd) 和 inference_mode() "
                  "以外的守卫，并让 x 是普通张量"))
    return Check(id="one-autograd-kernel", name=name,
                 passed=cpu_kernel is not None and cpu_kernel == meta_kernel,
                 measured=f"CPU: {cpu_kernel}; Meta: {meta_kernel}",
                 expected=f"CPU: {cpu_kernel}; Meta: {cpu_kernel}")


def version_check(op: str, bumped: bool, path: list[str]) -> Check:
    """For an in-place op the version counter moves exactly when ADInplaceOrView ran."""
    name = T("The in-place write bumped the version counter exactly when ADInplaceOrView ran",
             "原地写入恰好在 ADInplaceOrView 运行时才使版本计数器加一")
    if op != "add_":
        return Check.not_applicable(
            id="version-iff-adinplace", name=name, expected=T("bumped iff ran", "加一当且仅当运行"),
            why=T("needs the in-place operator add_", "需要选原地算子 add_"))
    ran = "ADInplaceOrView" in path
    return Check(id="version-iff-adinplace", name=name,
                 passed=bumped == ran, measured=BUMPED if bumped else UNCHANGED,
                 expected=BUMPED if ran else UNCHANGED)


def saved_tensor_check(op: str, bumped: bool, saved: str | None, error: str | None) -> Check:
    """A write into a tensor autograd holds never goes unnoticed.

    When the write bumped the version, backward through the saved tensor raises the
    in-place error; when it could not bump it (an inference tensor), autograd must
    have refused to save that tensor in the first place.
    """
    name = T("A tensor autograd saved cannot be overwritten unnoticed: if the write bumped its "
             "version, backward raises the in-place error; a tensor whose writes bump nothing "
             "(an inference tensor) cannot be saved at all",
             "被自动微分保存的张量不可能被悄悄改写：写入让版本号加一时，反向传播报出原地修改错误；"
             "写入不改版本号的张量（推理张量）根本不允许被保存")
    if op != "add_" or saved is None:
        return Check.not_applicable(
            id="saved-write-noticed", name=name,
            expected=T("in-place error, or saving refused", "原地修改错误，或拒绝保存"),
            why=T("needs add_, with x requiring grad or x an inference tensor",
                  "需要选 add_，并且 x 需要梯度或 x 是推理张量"))
    expected = SAVED_IN_PLACE_ERROR if bumped else SAVED_REFUSED
    outcome = SAVED_OUTCOMES[saved]
    if saved == SAVED_OTHER_ERROR:
        outcome = T(f"other error: {error}", f"其他错误：{error}")
    return Check(id="saved-write-noticed", name=name, passed=saved == expected,
                 measured=outcome, expected=SAVED_OUTCOMES[expected])


def output_keys_check(op: str, guard: str, predicted: frozenset[str],
                      measured: frozenset[str]) -> Check:
    """The result carries the key set the page's rules give it."""
    made = "a view or in-place result" if OP_RULES[op].is_view or OP_RULES[op].is_inplace \
        else "a new tensor"
    made_zh = "视图或原地结果" if made != "a new tensor" else "新建的张量"
    return Check(
        id="result-keys",
        name=T(f"The result of {op} ({made}) carries the keys the rules give it under "
               f"guard '{GUARD_LABELS[guard].en}'",
               f"{op} 的结果（{made_zh}）在守卫 {GUARD_LABELS[guard].zh} 下带着规则所给的键"),
        passed=measured == predicted, measured=shown(measured), expected=shown(predicted))


def values_check(values: np.ndarray, reference: np.ndarray) -> Check:
    """The CPU result equals NumPy's (same elementwise operations, so exactly)."""
    equal = values.shape == reference.shape and bool(np.array_equal(values, reference))
    return Check(id="values-as-numpy", name=T("The CPU result equals NumPy's",
                                              "CPU 结果与 NumPy 的相同"),
                 passed=equal, measured=EQUAL if equal else DIFFERS, expected=EQUAL)


# ---------------------------------------------------------------- the page's rules
# (each can be switched to a wrong version by a negative control)


def guard_rule(guard: str) -> GuardRule:
    """The page's rule for ``guard``; under ``inference-mode-excludes-adinplace`` the common
    wrong belief that inference_mode() excludes ADInplaceOrView as well."""
    rule = GUARD_RULES[guard]
    if guard == "inference-mode" and control_active("inference-mode-excludes-adinplace"):
        return GuardRule(rule.included, rule.excluded | {"ADInplaceOrView"}, rule.grad_mode,
                         rule.makes_inference_tensors)
    return rule


def declared_kernels(op: str) -> frozenset[str]:
    """The keys the page says ``op`` has kernels for (under ``no-adinplace-kernels``: never
    ADInplaceOrView)."""
    keys = OP_RULES[op].kernel_keys()
    return keys - {"ADInplaceOrView"} if control_active("no-adinplace-kernels") else keys


def first_key(keys: frozenset[str], kernels: frozenset[str]) -> str | None:
    """k* = max(K ∩ K_op), or under ``lowest-key-first`` the lowest key instead."""
    if control_active("lowest-key-first"):
        live = by_priority(keys & kernels)
        return live[-1] if live else None
    return highest_key(keys, kernels)


def predicted_output_keys(op: str, run: OpRun, guard: str) -> frozenset[str]:
    """The result's keys by the rules (under ``new-tensors-carry-backend-only``, a wrong rule
    that gives a new tensor only its backend key)."""
    predicted = output_keys(op, run.self_keys, run.tensor_keys, guard)
    if control_active("new-tensors-carry-backend-only") and not (
            OP_RULES[op].is_view or OP_RULES[op].is_inplace):
        return predicted & {"CPU", "CUDA", "Meta"}
    return predicted


# ---------------------------------------------------------------- experiment

X_KINDS = ("ordinary", "inference")


@experiment(
    name="key-set",
    title=T("The key set of one call", "一次调用的键集合"),
    description=T(
        "Runs one small operator on CPU or Meta tensors under a guard, inside a trace. The "
        "rules on this page predict the key set K, the winning key k*, every key the call "
        "visits and the keys the result carries; the trace shows what the dispatcher did. "
        "For add_, autograd is first asked to save the tensor written, and a backward pass "
        "afterwards shows whether the write was noticed.",
        "在某个守卫（guard）中、在跟踪下，对 CPU 或 Meta 张量运行一个小算子。"
        "本页的规则预测键集合 K、胜出的键 k*、调用经过的每个键以及结果带的键；"
        "跟踪记录给出调度器实际做了什么。"
        "对 add_，先让自动微分保存将被写入的张量，之后再跑一次反向传播，看这次写入有没有被察觉。",
    ),
    params=[
        Param("op", "choice", "add_", T("operator", "算子"), choices=OPS,
              choice_labels=(T("add (out of place)", "add（非原地）"),
                             T("add_ (in place)", "add_（原地）"),
                             T("transpose (a view)", "transpose（视图）"))),
        Param("device", "choice", "cpu", T("tensors on", "张量所在设备"), choices=("cpu", "meta"),
              choice_labels=(T("CPU", "CPU"), T("Meta (shapes only)", "Meta（只有形状）"))),
        Param("x_kind", "choice", "ordinary", T("x and y made", "x 和 y 的来历"),
              choices=X_KINDS,
              choice_labels=(T("outside inference_mode (ordinary tensors)",
                               "在 inference_mode 之外创建（普通张量）"),
                             T("inside inference_mode (inference tensors)",
                               "在 inference_mode 之内创建（推理张量）"))),
        Param("requires_grad", "bool", True, T("x requires grad (ordinary x only)",
                                               "x 需要梯度（仅对普通张量）")),
        Param("guard", "choice", "none", T("guard around the call", "包住调用的守卫（guard）"),
              choices=GUARDS,
              choice_labels=tuple(GUARD_LABELS[guard] for guard in GUARDS)),
    ],
    controls=[
        Control("inference-mode-excludes-adinplace",
                T("the rule says inference_mode() excludes ADInplaceOrView too (guard "
                  "inference_mode())",
                  "规则认为 inference_mode() 也排除了 ADInplaceOrView（守卫 inference_mode()）"),
                breaks=("guard-sets-keys", "path-down-k-and-kop"),
                params={"guard": "inference-mode"}),
        Control("lowest-key-first",
                T("the lowest key with a kernel runs first instead of the highest",
                  "最先运行的是有 kernel 的最低的键，而不是最高的"),
                breaks=("first-kernel-at-k-star",)),
        Control("no-adinplace-kernels",
                T("the rule gives no operator an ADInplaceOrView kernel",
                  "规则认为没有哪个算子在 ADInplaceOrView 上有 kernel"),
                breaks=("kernel-table", "adinplace-only-views-and-writes",
                        "path-down-k-and-kop")),
        Control("recording-ignores-requires-grad",
                T("the rule expects a node whenever grad mode is on, even when no input "
                  "requires grad (x without requires_grad)",
                  "规则认为只要梯度模式开启就记录节点，哪怕没有输入需要梯度（x 不需要梯度）"),
                breaks=("records-only-with-grad",), params={"requires_grad": False}),
        Control("meta-computes-data",
                T("the Meta run computes the data as well (it is really the CPU result)",
                  "Meta 的运行也算出了数据（其实就是 CPU 的结果）"),
                breaks=("meta-matches-cpu",)),
        Control("meta-skips-autograd",
                T("the Meta call bypasses the Autograd kernel (exclude_keys(Autograd) around it)",
                  "Meta 上的调用绕过了 Autograd kernel（外面套了 exclude_keys(Autograd)）"),
                breaks=("one-autograd-kernel",)),
        Control("kernel-reads-wrong-operand",
                T("the kernel computes with y + 1 instead of y", "内核用 y + 1 代替 y 来计算"),
                breaks=("values-as-numpy",)),
        Control("new-tensors-carry-backend-only",
                T("the rule gives a new tensor only its backend key (operator add)",
                  "规则认为新张量只带后端键（算子 add）"),
                breaks=("result-keys",), params={"op": "add"}),
        Control("write-behind-counter",
                T("the write goes through x.data, which shares the storage but not the counter",
                  "写入经由 x.data 进行：它与 x 共用存储，却不共用计数器"),
                breaks=("version-iff-adinplace", "saved-write-noticed")),
        Control("backend-bumps-version",
                T("the backend kernel bumps the version itself, so an inference tensor's "
                  "write counts too (x an inference tensor)",
                  "后端 kernel 自己给版本号加一，于是推理张量的写入也被计数（x 为推理张量）"),
                breaks=("version-iff-adinplace",), params={"x_kind": "inference"}),
        Control("saved-a-clone",
                T("autograd is handed a clone of the inference tensor, an ordinary tensor it "
                  "may save (x an inference tensor)",
                  "交给自动微分的是推理张量的副本——一个可以保存的普通张量（x 为推理张量）"),
                breaks=("saved-write-noticed",), params={"x_kind": "inference"}),
    ],
    metrics=[
        Metric("highest_key", T("highest key k* of the call", "这次调用的最高键 k*")),
        Metric("hops", T("hops recorded", "记录下的跳数")),
        Metric(
            "grad_fn",
            T("grad_fn of the result (— when none is recorded)", "结果的 grad_fn（未记录时为 —）"),
        ),
        Metric("version_bumped", T("the write bumped x's version", "这次写入使 x 的版本号加一")),
    ],
)
def key_set(op: str, device: str, x_kind: str, requires_grad: bool, guard: str) -> Result:
    inference = x_kind == "inference"
    runs = {backend: run_op(op, backend, requires_grad, guard, inference)
            for backend in ("cpu", "meta")}
    if control_active("meta-computes-data"):
        runs["meta"] = runs["cpu"]
    run = runs[device]
    rule = guard_rule(guard)
    call_keys = call_key_set(run.tensor_keys, rule.included, rule.excluded)
    op_keys = declared_kernels(op)
    predicted = first_key(call_keys, op_keys)
    path = traced_path(run.events)
    engine_op = get_op(op)
    engine_keys = frozenset(key for key in ("Tracer", "Autograd", "ADInplaceOrView", "CPU", "Meta")
                            if engine_op.has_kernel(DispatchKey[key]))

    checks = [
        guard_check(guard, rule, run.included, run.excluded),
        highest_key_check(predicted, path, call_keys),
        path_check(predicted_path(call_keys | {"Tracer"}, op_keys), path),
        kernel_table_check(op, op_keys, engine_keys),
        fallthrough_check(op, op_keys, call_keys, path),
        recording_check(requires_grad and not inference, rule, call_keys, run.recorded_node),
        meta_check(runs["cpu"].output, runs["meta"].output),
        one_autograd_kernel_check(autograd_kernel(runs["cpu"].events),
                                  autograd_kernel(runs["meta"].events), call_keys),
        values_check(runs["cpu"].output.detach().numpy(), numpy_reference(op)),
        output_keys_check(op, guard, predicted_output_keys(op, run, guard), run.output_keys),
        version_check(op, run.version_bumped, path),
        saved_tensor_check(op, run.version_bumped, run.saved, run.error),
    ]

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
        columns=[T("device", "设备"), T("shape", "形状"), T("strides", "步幅"),
                 T("storage offset", "存储偏移"), T("dtype", "数据类型"),
                 T("holds data", "含有数据")],
        rows=[[name, *(str(v) for v in metadata(r.output)[:3]), r.output.dtype.name,
               r.output._array is not None] for name, r in runs.items()],
    )
    notes = [T("The trace itself works by including the Tracer key, so every recorded call "
               "starts with a Tracer hop; k* is computed for the call as written, without "
               "the trace.",
               "跟踪本身就是靠把 Tracer 键加入包含集来实现的，所以记录下的每次调用都以一次 "
               "Tracer 跳开始；k* 按不带跟踪的原始调用计算。")]
    if run.error:
        notes.append(T(f"Autograd said: {run.error}", f"自动微分的报错：“{run.error}”"))
    return Result(
        checks=checks,
        figures=[trace_diagram(run.events, T(
            f"Hops of {op} on {device.upper()}, guard: {GUARD_LABELS[guard].en}",
            f"{op} 在 {device.upper()} 上的每一跳，守卫：{GUARD_LABELS[guard].zh}"))],
        tables=[formula_table, trace_table(run.events, T("The recorded hops", "记录下的每一跳")),
                metadata_table],
        metrics={"highest_key": str(predicted), "hops": len(run.events),
                 "grad_fn": type(run.output.grad_fn).__name__ if run.recorded_node else "—",
                 "version_bumped": run.version_bumped},
        notes=notes,
    )
