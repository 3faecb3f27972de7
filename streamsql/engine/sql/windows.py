"""Windows: OVER clauses of windowed aggregates and of join inputs.

A window is written inline (``OVER (...)``), by name (``OVER w`` with ``WINDOW w AS (...)``) or,
as in Calcite, by name and refined (``OVER w (RANGE ...)``). Resolving merges the named base
with the refinement; then an aggregate window becomes a :class:`plan.WindowSpec` and a FROM
item's window a :class:`plan.JoinWindow`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot import exp

from ..expr import Col, Expr, Rowtime
from ..plan import JoinWindow, Node, WindowCall, WindowSpec
from . import nodes as N
from .aggregates import aggregate_call, same_agg
from .expressions import Ctx, constant_value, is_constant, same_expr, tname, translate
from .monotonic import is_increasing
from .names import canonical

FOLLOWING_ERROR = ("FOLLOWING is not allowed in a windowed aggregation on a stream: "
                   "the frame cannot include rows that have not arrived")


@dataclass
class ResolvedWindow:
    partition: list = field(default_factory=list)   # sqlglot expressions
    order: exp.Expr | None = None                   # StreamOrder
    frame: N.Frame | None = None
    at: exp.Expr | None = None                      # where to report problems


def _merge(base: ResolvedWindow | None, body: N.WindowBody | None, base_name: str | None,
           ctx: Ctx, at) -> ResolvedWindow:
    r = ResolvedWindow(list(base.partition) if base else [], base.order if base else None,
                       base.frame if base else None, at)
    if body is None:
        return r
    partition = body.args.get("partition_by") or []
    if partition:
        if r.partition:
            raise ctx.source.error(f"Cannot override PARTITION BY of window '{base_name}'", body)
        r.partition = partition
    order = body.args.get("order")
    if order is not None:
        if r.order is not None:
            raise ctx.source.error(f"Cannot override ORDER BY of window '{base_name}'", order)
        r.order = order
    frame = body.args.get("frame")
    if frame is not None:
        if r.frame is not None:
            raise ctx.source.error(f"Window '{base_name}' already has a frame", frame)
        r.frame = frame
    return r


def resolve(ref: N.WindowRef, named: dict[str, N.NamedWindow], ctx: Ctx,
            _stack: tuple = ()) -> ResolvedWindow:
    """Merge a window reference with the named windows it builds on."""
    body = ref.args.get("body")
    name_node = ref.args.get("name")
    inner = body.args.get("base") if body is not None else None
    if name_node is not None and inner is not None:
        raise ctx.source.error("A window can refine only one named window", inner)
    name_node = name_node if name_node is not None else inner
    base = None
    name = None
    if name_node is not None:
        name = canonical(name_node)
        if name in _stack:
            raise ctx.source.error(f"Window '{name}' is defined in terms of itself", name_node)
        definition = named.get(name)
        if definition is None:
            raise ctx.source.error(f"Window '{name}' not found", name_node)
        base = resolve(N.WindowRef(body=definition.args["body"]), named, ctx, _stack + (name,))
    return _merge(base, body, name, ctx, ref)


def named_windows(select: exp.Select, ctx: Ctx) -> dict[str, N.NamedWindow]:
    """The WINDOW clause by name; a window no OVER refers to is refused (it would be ignored)."""
    out: dict[str, N.NamedWindow] = {}
    for w in select.args.get("windows") or []:
        name = canonical(w.this)
        if name in out:
            raise ctx.source.error(f"Window '{name}' is defined twice", w)
        out[name] = w
    used = {canonical(r.args["name"]) for r in select.find_all(N.WindowRef) if r.args.get("name") is not None}
    used |= {canonical(b.args["base"]) for b in select.find_all(N.WindowBody) if b.args.get("base") is not None}
    for name, w in out.items():
        if name not in used:
            raise ctx.source.error(f"Window '{name}' is defined but no OVER uses it", w)
    return out


# --------------------------------------------------------------------------- frames

def _amount(bound: N.FrameBound, mode: str, ctx: Ctx) -> int:
    """A PRECEDING/FOLLOWING amount: milliseconds for RANGE, rows for ROWS."""
    value = bound.this
    e = translate(value, Ctx(None, ctx.source, "a window frame",
                             constant_message="A window frame bound must be a constant"))
    if not is_constant(e):
        raise ctx.source.error("A window frame bound must be a constant", value)
    if mode == "RANGE":
        if e.type.name != "INTERVAL":
            raise ctx.source.error(
                f"RANGE needs an INTERVAL, as in RANGE INTERVAL '10' MINUTE PRECEDING, not {tname(e.type)}; "
                "use ROWS n PRECEDING for a number of rows", value)
        iv = constant_value(e)
        if not iv.is_fixed:
            raise ctx.source.error("A RANGE interval must be a day-time interval (not months or years)", value)
        if iv.millis < 0:
            raise ctx.source.error("A window frame bound cannot be negative", value)
        return iv.millis
    if not e.type.is_integer:
        raise ctx.source.error(
            f"ROWS needs a number of rows, not {tname(e.type)}; use RANGE INTERVAL ... for a time window",
            value)
    n = constant_value(e)
    if n is None or n < 0:
        raise ctx.source.error("A window frame bound cannot be negative", value)
    return int(n)


def _side_at(bound: N.FrameBound):
    return bound.meta.get("side_pos") if bound.meta.get("side_pos") is not None else bound


def aggregate_frame(frame: N.Frame | None, ctx: Ctx) -> tuple[str, int | None, int]:
    """(mode, lower, upper) of a windowed aggregate's frame; no frame is UNBOUNDED PRECEDING to
    CURRENT ROW."""
    if frame is None:
        return "RANGE", None, 0
    mode = frame.args["mode"]
    start, end = frame.args["start"], frame.args.get("end")
    for b in (start, end):
        if b is not None and b.args.get("side") == "FOLLOWING":
            raise ctx.source.error(FOLLOWING_ERROR, _side_at(b))

    def amount(b):
        kind = b.args["kind"]
        if kind == "CURRENT":
            return 0
        if kind == "UNBOUNDED":
            return None
        return _amount(b, mode, ctx)

    lower = amount(start)
    if end is None:
        return mode, lower, 0
    if end.args["kind"] == "UNBOUNDED":
        raise ctx.source.error("A window frame cannot end at UNBOUNDED PRECEDING", end)
    upper = amount(end)
    if lower is not None and upper > lower:
        raise ctx.source.error("A window frame cannot end before it starts "
                               "(in BETWEEN a PRECEDING AND b PRECEDING, b must not exceed a)", end)
    return mode, lower, upper


def join_window(ref: N.WindowRef, named: dict, ctx: Ctx) -> JoinWindow:
    """The window of a join input: ``[T - preceding, T + following]``."""
    r = resolve(ref, named, ctx)
    if r.partition or r.order is not None:
        raise ctx.source.error("A join window cannot have PARTITION BY or ORDER BY", ref)
    frame = r.frame
    if frame is None:
        raise ctx.source.error(
            "A join window needs a frame: RANGE INTERVAL '...' PRECEDING, FOLLOWING or CURRENT ROW", ref)
    mode = frame.args["mode"]
    start, end = frame.args["start"], frame.args.get("end")

    def side_amount(b, allowed: tuple[str, ...]) -> tuple[str, int]:
        kind = b.args["kind"]
        if kind == "CURRENT":
            return "CURRENT", 0
        if kind == "UNBOUNDED":
            raise ctx.source.error("An UNBOUNDED join window would need unbounded memory", b)
        if mode == "ROWS":
            raise ctx.source.error("A join window is a RANGE of time; ROWS is only allowed as ROWS CURRENT ROW", b)
        side = b.args["side"]
        if side not in allowed:
            raise ctx.source.error(f"A join window cannot have {side} here", _side_at(b))
        return side, _amount(b, mode, ctx)

    if end is None:
        side, n = side_amount(start, ("PRECEDING", "FOLLOWING"))
        return JoinWindow(n, 0) if side == "PRECEDING" else JoinWindow(0, n)
    _, a = side_amount(start, ("PRECEDING",))
    _, b = side_amount(end, ("FOLLOWING",))
    return JoinWindow(a, b)


# --------------------------------------------------------------------------- windowed aggregates

def _same_spec(a: WindowSpec, b: WindowSpec) -> bool:
    return (a.mode == b.mode and a.lower == b.lower and a.upper == b.upper
            and len(a.partition_by) == len(b.partition_by)
            and all(same_expr(x, y) for x, y in zip(a.partition_by, b.partition_by))
            and ((a.order_by is None and b.order_by is None)
                 or (a.order_by is not None and b.order_by is not None and same_expr(a.order_by, b.order_by))))


class WindowCollector:
    """The OVER calls of a select list; call ``j`` is column ``len(input fields) + j`` of the
    Window node's output."""

    def __init__(self, input_node: Node, input_ctx: Ctx, named: dict):
        self.input_node = input_node
        self.input_ctx = input_ctx
        self.named = named
        self.calls: list[WindowCall] = []
        self.ranks: list = []            # ROW_NUMBER, RANK, DENSE_RANK (window_rank.py)

    def resolved(self, ref: N.WindowRef) -> ResolvedWindow:
        return resolve(ref, self.named, self.input_ctx)

    def spec(self, ref: N.WindowRef) -> WindowSpec:
        ctx = self.input_ctx
        r = resolve(ref, self.named, ctx)
        partition = [translate(p, ctx.plain("PARTITION BY")) for p in r.partition]
        order_by = None
        if r.order is not None:
            order_by = self._order(r.order, ctx)
        mode, lower, upper = aggregate_frame(r.frame, ctx)
        return WindowSpec(partition, mode, lower, upper, order_by)

    def _order(self, order: exp.Expr, ctx: Ctx) -> Expr | None:
        message = ("A window on a stream must be ordered by ROWTIME or by a monotonic function of it "
                   "(such as FLOOR(ROWTIME TO HOUR))")
        if order.args.get("within") is not None:
            raise ctx.source.error("WITHIN is not allowed in a window's ORDER BY", order)
        keys = order.expressions
        if len(keys) != 1 or keys[0].args.get("desc"):
            raise ctx.source.error(message, order)
        e = translate(keys[0].this, ctx.plain("ORDER BY"))
        if isinstance(e, Rowtime):
            return None
        if not is_increasing(e, self.input_node):
            raise ctx.source.error(message, keys[0])
        return e

    def add(self, node: N.Over, ctx: Ctx) -> Col:
        from . import window_rank
        if window_rank.is_ranking(node):
            return window_rank.add(self, node, ctx)
        agg = aggregate_call(node.this, self.input_ctx.plain("the argument of an OVER aggregate"))
        spec = self.spec(node.args["window"])
        n = len(self.input_node.fields)
        for j, c in enumerate(self.calls):
            if same_agg(c.agg, agg) and _same_spec(c.spec, spec):
                break
        else:
            self.calls.append(WindowCall(agg, spec))
            j = len(self.calls) - 1
        return Col(n + j, f"$W{j}", agg.type)
