"""How a topic declares an experiment, and what an experiment returns.

A topic's ``experiments.py`` decorates plain functions with :func:`experiment`.
Each declares typed, bounded parameters (:class:`Param`) and returns a
:class:`Result`: figures, tables, metrics and *checks* -- named claims with the
measured value and whether it held. The explorer, the CLI and the static export
all run experiments through this one description, so a claim shown on a page is
always a claim that was verified on that run.

Every user-facing string is a :class:`Text`, a pair of English and Chinese.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Literal

# Bilingual text, the negative controls and the number formatter are part of the SDK;
# topics import them from here.
from whylab.explorer.bilingual import LANGS as LANGS
from whylab.explorer.bilingual import Lang as Lang
from whylab.explorer.bilingual import T as T
from whylab.explorer.bilingual import Text as Text
from whylab.explorer.bilingual import in_language as in_language
from whylab.explorer.negative_controls import CHECK_ID, Control
from whylab.explorer.negative_controls import control_active as control_active
from whylab.explorer.negative_controls import switched_on as switched_on
from whylab.explorer.number_text import format_number as format_number
from whylab.explorer.number_text import format_vector as format_vector
from whylab.explorer.number_text import subscript as subscript

ParamErrorReason = Literal[
    "unknown", "not_bool", "not_choice", "not_int", "not_float", "not_finite", "below", "above"
]


class ParamError(ValueError):
    """A parameter value that breaks its declared type or bound (HTTP 422).

    ``str(error)`` is the English message the JSON API and the CLI show. The
    pages word it in the reader's language from ``reason`` (which rule was
    broken), ``bound`` (the bound it broke, for ``below``/``above``) and ``raw``
    (the text that was given, cut short).
    """

    def __init__(
        self,
        param: str,
        message: str,
        reason: ParamErrorReason,
        *,
        bound: float | None = None,
        raw: str = "",
    ):
        super().__init__(f"{param}: {message}")
        self.param = param
        self.reason = reason
        self.bound = bound
        self.raw = raw


# Numbers typed as text: ASCII digits only. Python's int() and float() also take
# "1_000", Arabic-Indic and full-width digits, which no reader means as a parameter.
_INT_TEXT = re.compile(r"[+-]?[0-9]+")
_FLOAT_TEXT = re.compile(
    r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?(?:inf|infinity|nan)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Param:
    """A typed, bounded experiment parameter.

    ``kind`` is ``"int"``, ``"float"``, ``"choice"`` or ``"bool"``. Numbers carry
    inclusive ``minimum``/``maximum`` bounds; choices carry their allowed values.
    ``seed`` marks the random seed, which the permalink always includes.
    """

    name: str
    kind: Literal["int", "float", "choice", "bool"]
    default: Any
    label: Text
    unit: str = ""
    minimum: float | None = None
    maximum: float | None = None
    step: float | None = None
    choices: tuple[str, ...] = ()
    choice_labels: tuple[Text, ...] = ()
    help: Text | None = None
    seed: bool = False

    def __post_init__(self) -> None:
        if self.kind in ("int", "float") and (self.minimum is None or self.maximum is None):
            raise ValueError(f"parameter {self.name!r} needs both bounds")
        # The default must itself be valid; fail at import time, not on a page.
        self.parse(self.default)

    def parse(self, raw: Any) -> Any:
        """Convert ``raw`` (from a query string, JSON or the CLI) and enforce bounds."""
        shown = str(raw)[:40]
        if self.kind == "bool":
            if isinstance(raw, bool):
                return raw
            text = str(raw).strip().lower()
            if text in ("1", "true", "yes", "on"):
                return True
            if text in ("0", "false", "no", "off"):
                return False
            raise ParamError(
                self.name, f"expected true or false, got {shown!r}", "not_bool", raw=shown
            )
        if self.kind == "choice":
            value = str(raw)
            if value not in self.choices:
                message = f"must be one of {', '.join(self.choices)}"
                raise ParamError(self.name, message, "not_choice", raw=shown)
            return value
        try:
            if isinstance(raw, str):
                pattern = _INT_TEXT if self.kind == "int" else _FLOAT_TEXT
                if not pattern.fullmatch(raw.strip(" \t")):
                    raise ValueError
            if self.kind == "int":
                if isinstance(raw, float) and not raw.is_integer():
                    raise ValueError
                value: float = (
                    int(str(raw).strip()) if not isinstance(raw, (int, float)) else int(raw)
                )
            else:
                value = float(raw)
        except (TypeError, ValueError):
            reason: ParamErrorReason = "not_int" if self.kind == "int" else "not_float"
            message = f"expected {self.kind}, got {shown!r}"
            raise ParamError(self.name, message, reason, raw=shown) from None
        if isinstance(value, float) and not math.isfinite(value):
            raise ParamError(self.name, "must be a finite number", "not_finite", raw=shown)
        assert self.minimum is not None and self.maximum is not None
        if value < self.minimum:
            message = f"must be >= {self.show(self.minimum)} (got {self.show(value)})"
            raise ParamError(self.name, message, "below", bound=self.minimum, raw=shown)
        if value > self.maximum:
            message = f"must be <= {self.show(self.maximum)} (got {self.show(value)})"
            raise ParamError(self.name, message, "above", bound=self.maximum, raw=shown)
        return value

    def show(self, value: float) -> str:
        """A bound or value as readers see it: whole for int parameters, else up to 10 digits.

        Ten significant digits keep a bound such as 2π exact for anyone typing
        it, where six would name a number (6.28319) that is itself out of range.
        """
        return str(int(value)) if self.kind == "int" else f"{value:.10g}"


# ---------------------------------------------------------------- results


"""A check or control id: a lower-case slug, e.g. ``fft-equals-dft``."""

CheckState = Literal["passed", "failed", "not_applicable", "inconclusive"]


@dataclass(frozen=True)
class Check:
    """A named claim verified on this run, e.g. "FFT equals the O(n^2) DFT".

    ``id`` is a stable slug, unique within its experiment; negative controls
    name the checks they must break by it. ``measured`` and ``expected`` are a
    plain ``str`` when they hold only numbers, symbols and code names
    ("|Δ| = 3e-16", "≤ 1e-12", "MmBackward0"), and a :class:`Text` pair when
    they hold words, so a Chinese page never shows an English sentence.

    A check has three states (:attr:`state`): passed, failed, or *not
    applicable* -- the chosen parameters never reach the claim's premise (no
    sample crosses the threshold, a branch is never taken). Build the last with
    :meth:`not_applicable`; it is shown as such, never as ✓, and carries in
    ``when_applicable`` the parameters that would make it applicable.

    A timing claim has a fourth state, *inconclusive*: the confidence interval of
    the measured ratio straddles the claim's bound, so this machine, now, cannot
    tell (see :mod:`whylab.bench.verdict`). Build it with ``conclusive=False``
    (and ``passed=False``); ``measured`` shows the interval. It is never shown as
    ✓, is no evidence either way, and a rerun may decide it.
    """

    name: Text
    passed: bool
    measured: str | Text
    expected: str | Text
    id: str = ""
    applicable: bool = True
    when_applicable: Text | None = None
    conclusive: bool = True

    def __post_init__(self) -> None:
        for field_name in ("measured", "expected"):
            value = getattr(self, field_name)
            if not isinstance(value, (str, Text)):
                raise TypeError(
                    f"Check.{field_name} must be str or Text, got {type(value).__name__}"
                )
        if self.id and not CHECK_ID.fullmatch(self.id):
            raise ValueError(f"check id must be a lower-case slug like 'a-b-2', got {self.id!r}")
        if not self.applicable:
            if self.passed:
                raise ValueError(f"check {self.id!r}: a check that is not applicable cannot pass")
            if self.when_applicable is None:
                raise ValueError(
                    f"check {self.id!r}: say which parameters would make it applicable"
                )
        if not self.conclusive:
            if self.passed:
                raise ValueError(f"check {self.id!r}: an inconclusive check cannot pass")
            if not self.applicable:
                raise ValueError(
                    f"check {self.id!r}: a check is either not applicable or inconclusive"
                )
        object.__setattr__(self, "passed", bool(self.passed))

    @classmethod
    def not_applicable(
        cls,
        *,
        id: str,
        name: Text,
        expected: str | Text,
        why: Text,
        measured: str | Text = "—",
    ) -> Check:
        """A claim whose premise these parameters do not reach; ``why`` says what would."""
        return cls(name, False, measured, expected, id=id, applicable=False, when_applicable=why)

    @property
    def state(self) -> CheckState:
        if not self.applicable:
            return "not_applicable"
        if not self.conclusive:
            return "inconclusive"
        return "passed" if self.passed else "failed"

    def measured_in(self, lang: Lang) -> str:
        """The measured value as readers of ``lang`` see it."""
        return in_language(self.measured, lang)

    def expected_in(self, lang: Lang) -> str:
        """The expected value as readers of ``lang`` see it."""
        return in_language(self.expected, lang)


@dataclass(frozen=True)
class Series:
    """One named series of a :class:`LineChart`.

    ``draw="points"`` marks each point and joins none: for discrete samples (the
    accesses of a trace, the vertices an oracle returned), where a line between two
    points would show values that were never there.
    """

    name: Text
    x: Sequence[float]
    y: Sequence[float]
    draw: Literal["line", "points"] = "line"


@dataclass(frozen=True)
class LineChart:
    """A chart of one or more series; rendered as SVG with a table alternative.

    ``equal_aspect`` draws one unit of x as long as one unit of y (a shape in the
    plane, such as a triangle, keeps its angles); it needs two linear axes.
    """

    title: Text
    x_label: Text
    y_label: Text
    series: Sequence[Series]
    log_x: bool = False
    log_y: bool = False
    kind: Literal["line"] = "line"
    equal_aspect: bool = False

    def __post_init__(self) -> None:
        if self.equal_aspect and (self.log_x or self.log_y):
            raise ValueError("equal_aspect needs linear axes: a log axis has no unit length")


MAX_PINNED_LAYER = 1000  # a pinned layer beyond this is a bug in the topic, not a diagram
MAX_PINNED_ORDER = 10_000.0


@dataclass(frozen=True)
class GraphNode:
    """One box of a :class:`GraphDiagram`.

    By default the renderer chooses where a node goes: its layer by the longest
    path from the sources, its place within the layer by crossing reduction.
    When the order of the nodes carries meaning (the rows of an FFT butterfly,
    the inputs of an autograd graph), pin it:

    * ``layer`` -- put the node in this layer (0 is the first: the top row, or
      the left column when the diagram runs left to right);
    * ``order`` -- put the node at this position along its layer, counted in
      slots of one (pinned) node plus a gap, so nodes with equal ``order``
      line up across layers. Nothing reorders or moves pinned nodes; a node
      pinned closer than one slot to its neighbour is pushed just far enough
      along to keep the gap.

    ``label`` and ``detail`` are plain strings when they hold code or numbers
    (``MmBackward0``, ``x[3]``, ``-4+4i``), which read the same in every
    language, and a :class:`Text` when they hold words.
    """

    id: str
    label: str | Text
    detail: str | Text = ""
    group: str = ""
    layer: int | None = None
    order: float | None = None

    def __post_init__(self) -> None:
        if self.layer is not None:
            if isinstance(self.layer, bool) or not isinstance(self.layer, numbers.Integral):
                raise ValueError(f"node {self.id!r}: layer must be an int, got {self.layer!r}")
            if not 0 <= self.layer <= MAX_PINNED_LAYER:
                raise ValueError(
                    f"node {self.id!r}: layer must be 0..{MAX_PINNED_LAYER}, got {self.layer}"
                )
            object.__setattr__(self, "layer", int(self.layer))
        if self.order is not None:
            if isinstance(self.order, bool) or not isinstance(self.order, numbers.Real):
                raise ValueError(f"node {self.id!r}: order must be a number, got {self.order!r}")
            if not abs(float(self.order)) <= MAX_PINNED_ORDER:  # also rejects NaN
                raise ValueError(
                    f"node {self.id!r}: order must be finite and within "
                    f"±{MAX_PINNED_ORDER:g}, got {self.order}"
                )
            object.__setattr__(self, "order", float(self.order))


# The colours a diagram may declare for its node groups, in the order of the page's
# CSS classes g0..g7 (light and dark themes alike).
GROUP_COLOURS = ("blue", "orange", "green", "purple", "yellow", "teal", "pink", "grey")


@dataclass(frozen=True)
class GraphDiagram:
    """A directed graph drawn from a real computation (an autograd graph, a dispatch trace).

    ``direction`` is ``"TB"`` (layers are rows, edges run down: the default) or
    ``"LR"`` (layers are columns, edges run left to right, as a butterfly
    network is usually drawn).

    ``group_colours`` declares the colour (one of :data:`GROUP_COLOURS`) of a
    node group, so that a group keeps its colour in every diagram that declares
    it, whichever groups it shares the diagram with; a group it does not name
    gets a colour from a hash of its name.
    """

    title: Text
    nodes: Sequence[GraphNode]
    edges: Sequence[tuple[str, str, str]]  # (source id, target id, label)
    kind: Literal["graph"] = "graph"
    direction: Literal["TB", "LR"] = "TB"
    group_colours: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.direction not in ("TB", "LR"):
            raise ValueError(f"direction must be 'TB' or 'LR', got {self.direction!r}")
        for group, colour in self.group_colours.items():
            if colour not in GROUP_COLOURS:
                raise ValueError(
                    f"group {group!r}: colour must be one of {', '.join(GROUP_COLOURS)}, "
                    f"got {colour!r}"
                )


@dataclass(frozen=True)
class Table:
    """A table of results: a cell with words is a :class:`Text`; numbers and code stay plain.

    ``grid=True`` marks a table whose rows and columns are the content (a matrix, a map of
    cache lines): on a phone it keeps its shape and scrolls sideways, where other tables
    that do not fit are reflowed into one card per row.
    """

    title: Text
    columns: Sequence[Text]
    rows: Sequence[Sequence[str | Text | float | int]]
    grid: bool = False


Figure = LineChart | GraphDiagram


@dataclass(frozen=True)
class Metric:
    """How a page shows one of an experiment's metrics: a label in both languages and a unit.

    An experiment lists these (``experiment(metrics=[Metric("speedup",
    T("speed-up", "加速比"), "×")])``) and keeps returning plain
    ``metrics={"speedup": 12.5}``. A metric without a declaration is shown by
    its code name; declared ones come first, in declaration order.
    """

    name: str
    label: Text
    unit: str = ""


@dataclass
class Result:
    """What an experiment returns."""

    checks: list[Check] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    metrics: dict[str, float | int | str] = field(default_factory=dict)
    notes: list[Text] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """No check failed. A not-applicable or inconclusive check is no evidence either way."""
        return not any(check.state == "failed" for check in self.checks)

    @property
    def inconclusive(self) -> list[Check]:
        """The checks this run could not decide (timing intervals straddling their bound)."""
        return [check for check in self.checks if check.state == "inconclusive"]

    def check(self, check_id: str) -> Check | None:
        """The check with this id, or None."""
        return next((c for c in self.checks if c.id == check_id), None)


# ---------------------------------------------------------------- declaration


@dataclass(frozen=True)
class Experiment:
    name: str
    title: Text
    description: Text
    params: tuple[Param, ...]
    run: Callable[..., Result]
    timing: bool = False  # measures wall-clock time: never served from cache
    time_limit_s: float = 20.0
    controls: tuple[Control, ...] = ()
    metrics: tuple[Metric, ...] = ()  # labels and units of the metrics it returns

    def __post_init__(self) -> None:
        names = [c.name for c in self.controls]
        if len(names) != len(set(names)):
            raise ValueError(f"experiment {self.name!r}: control names must be unique")
        metric_names = [m.name for m in self.metrics]
        if len(metric_names) != len(set(metric_names)):
            raise ValueError(f"experiment {self.name!r}: metric names must be unique")
        for control in self.controls:
            unknown = set(control.params) - {p.name for p in self.params}
            if unknown:
                raise ValueError(
                    f"experiment {self.name!r}, control {control.name!r}: "
                    f"unknown parameters {sorted(unknown)}"
                )

    def parse_params(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        """Defaults overlaid with ``raw``; unknown names and bad values raise ParamError."""
        known = {p.name: p for p in self.params}
        for name in raw:
            if name not in known:
                raise ParamError(str(name)[:40], "unknown parameter", "unknown")
        return {p.name: p.parse(raw[p.name] if p.name in raw else p.default) for p in self.params}

    def defaults(self) -> dict[str, Any]:
        """The default parameters, parsed (so an ``int`` default of a float param is a float)."""
        return {p.name: p.parse(p.default) for p in self.params}

    def controls_breaking(self, check_id: str) -> list[Control]:
        """The controls that declare they make check ``check_id`` fail (shown on the page)."""
        return [c for c in self.controls if check_id in c.breaks]

    def runnable_control(self, name: str) -> Control | None:
        """The declared control ``name`` a reader may run (page or API), else None. A timing
        experiment has none: each would take a turn in the server's one line of
        measurements (see :mod:`whylab.explorer.web.routes_controls`)."""
        if self.timing:
            return None
        return next((c for c in self.controls if c.name == name), None)


def experiment(
    *,
    name: str,
    title: Text,
    description: Text,
    params: Sequence[Param] = (),
    timing: bool = False,
    time_limit_s: float = 20.0,
    controls: Sequence[Control] = (),
    metrics: Sequence[Metric] = (),
) -> Callable[[Callable[..., Result]], Experiment]:
    """Declare a topic experiment; the decorated function receives parsed params as keywords."""

    def wrap(fn: Callable[..., Result]) -> Experiment:
        return Experiment(
            name,
            title,
            description,
            tuple(params),
            fn,
            timing,
            time_limit_s,
            tuple(controls),
            tuple(metrics),
        )

    return wrap


# ---------------------------------------------------------------- progress

ProgressHook = Callable[[float], None]

_progress_hook: ContextVar[ProgressHook | None] = ContextVar("whylab_progress_hook", default=None)


def report_progress(fraction: float) -> None:
    """Tell whoever runs this experiment how far along it is (0.0 to 1.0).

    Long experiments call this from their loop; the CLI shows it as a progress
    bar. When nobody listens (the web workers, tests) it does nothing, so topic
    code can call it unconditionally.
    """
    hook = _progress_hook.get()
    if hook is not None:
        hook(min(1.0, max(0.0, float(fraction))))


@contextmanager
def progress_hook(hook: ProgressHook) -> Iterator[None]:
    """Route :func:`report_progress` calls made inside the ``with`` block to ``hook``."""
    token = _progress_hook.set(hook)
    try:
        yield
    finally:
        _progress_hook.reset(token)
