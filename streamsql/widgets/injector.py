"""An injector for one input stream: a text field per column that shows the column's type and
reads what is typed with the engine's one typed-value parser (:mod:`streamsql.engine.values`),
a ROWTIME that is the stream clock when left blank (its placeholder says which time that is;
``HH:MM[:SS]`` is on that clock's day, ``now`` the wall clock), Insert row, Punctuate (time,
strict) and the producer the events come from, with attach/detach.

The form is drawn in the browser (``js/injector.js``, an anywidget): a click sends one message
carrying the values on screen at the click, so a click that waits for a running cell inserts
exactly what was typed for it, and is shown as pending until it is done (:mod:`.clicks`). The kernel commits the
event (milliseconds) and returns; the views redraw on their own thread as the engine releases
rows (:mod:`.hooks`). A cell can fill the form and click through the same path
(``inj.inputs["A"].value = 1; inj.insert()``)."""
from __future__ import annotations

import decimal
import html
import logging
from pathlib import Path
from typing import Callable

import anywidget
from traitlets import Bool, Dict, List, Unicode

from ..engine import time as sqltime
from ..engine.errors import LateRowError, StreamSqlError
from ..engine.locks import widget_lock
from ..engine.values import ValueRefused, parse_text, type_hint
from .clicks import apply_click
from .hooks import LiveView
from .render import ts
from .static import StaticMixin, snapshot_html

log = logging.getLogger("streamsql.widgets")

DEFAULT_PRODUCER = "default"
_JS = Path(__file__).parent / "js"
#: the fields a refusal can name besides the columns
ROWTIME, BOUND = "ROWTIME", "BOUND"


def as_text(v) -> str:
    """A Python value as the exact text a person would type for it (``100``, ``2.5``, ``TRUE``)."""
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, (int, decimal.Decimal)):
        return str(v)
    return "" if v is None else str(v)


class _Field:
    """One text field of the form, for cells and tests (``inj.inputs["A"].value = 100``)."""

    def __init__(self, inj: "Injector", trait: str, key: str | None = None, placeholder: str = ""):
        self._inj, self._trait, self._key, self._placeholder = inj, trait, key, placeholder

    @property
    def value(self) -> str:
        v = getattr(self._inj, self._trait)
        return (v or {}).get(self._key, "") if self._key is not None else v

    @value.setter
    def value(self, v) -> None:
        if self._key is None:
            setattr(self._inj, self._trait, as_text(v))
        else:
            setattr(self._inj, self._trait, {**getattr(self._inj, self._trait), self._key: as_text(v)})

    @property
    def placeholder(self) -> str:
        return self._inj.rowtime_placeholder if self._key is None and self._trait == "rowtime_text" else self._placeholder

    @property
    def disabled(self) -> bool:
        return self._key is not None and self._key in self._inj.nulls_on

    @property
    def refused(self) -> bool:
        """Whether the last try refused this field's text (it is outlined in red)."""
        name = self._key if self._key is not None else {"rowtime_text": ROWTIME, "bound_text": BOUND}.get(self._trait)
        return name in self._inj.bad_fields


class _Flag:
    """A checkbox of the form (NULL of a column, strict)."""

    def __init__(self, inj: "Injector", trait: str, key: str | None = None):
        self._inj, self._trait, self._key = inj, trait, key

    @property
    def value(self) -> bool:
        if self._key is None:
            return bool(getattr(self._inj, self._trait))
        return self._key in self._inj.nulls_on

    @value.setter
    def value(self, on: bool) -> None:
        if self._key is None:
            setattr(self._inj, self._trait, bool(on))
        else:
            rest = [n for n in self._inj.nulls_on if n != self._key]
            self._inj.nulls_on = rest + ([self._key] if on else [])


class _Choice:
    """The producer menu."""

    def __init__(self, inj: "Injector"):
        self._inj = inj

    @property
    def options(self) -> tuple[str, ...]:
        return tuple(self._inj.producers)

    @property
    def value(self) -> str:
        return self._inj.producer_name

    @value.setter
    def value(self, v: str) -> None:
        self._inj.producer_name = v


class Injector(LiveView, StaticMixin, anywidget.AnyWidget):
    """Insert rows and punctuation into ``stream`` of ``wb`` by hand."""

    priority = 1

    _esm = _JS / "injector.js"
    _css = _JS / "injector.css"

    stream = Unicode("").tag(sync=True)
    columns = List().tag(sync=True)                 # [{name, hint, nullable}]
    status = Dict().tag(sync=True)                  # {clock, pending, late}
    producers = List([DEFAULT_PRODUCER]).tag(sync=True)
    rowtime_placeholder = Unicode("").tag(sync=True)
    # the form: what a cell fills (a click sends what is on screen instead)
    rowtime_text = Unicode("").tag(sync=True)
    texts = Dict().tag(sync=True)
    nulls_on = List().tag(sync=True)
    bound_text = Unicode("").tag(sync=True)
    strict_on = Bool(False).tag(sync=True)
    producer_name = Unicode(DEFAULT_PRODUCER).tag(sync=True)
    new_producer_text = Unicode("").tag(sync=True)
    # the outcome of the last action
    message_text = Unicode("").tag(sync=True)
    message_kind = Unicode("").tag(sync=True)       # "ok", "late" or "error"
    bad_fields = List().tag(sync=True)

    def __init__(self, wb, stream: str, on_event: Callable | None = None, query: str | None = None):
        self.wb = wb
        #: the query of the view this injector is part of: its events run it first
        #: (Commits.first: only when the others see them changes)
        self.query = query
        d = wb.catalog.stream(stream)
        self.fields = list(d.fields)
        self._callbacks: list[Callable] = [on_event] if on_event else []
        self.last_outcome = None
        self._shown_clock: int | None | bool = False   # False: never shown
        self._lock = widget_lock("injector", reentrant=True)   # a click (kernel thread) and a redraw (its own thread)
        self._showing = False           # the form is being set from the engine's state
        super().__init__(stream=d.name, columns=[{"name": f.name, "hint": type_hint(f.type),
                                                  "nullable": bool(f.type.nullable)} for f in self.fields],
                         texts={f.name: "" for f in self.fields})
        self.add_class("streamsql-injector")
        self.rowtime = _Field(self, "rowtime_text")
        self.inputs = {f.name: _Field(self, "texts", f.name, type_hint(f.type)) for f in self.fields}
        self.nulls = {f.name: _Flag(self, "nulls_on", f.name) for f in self.fields if f.type.nullable}
        self.punct_time = _Field(self, "bound_text", placeholder="HH:MM[:SS]")
        self.strict = _Flag(self, "strict_on")
        self.producer = _Choice(self)
        self.new_producer = _Field(self, "new_producer_text")
        self.on_msg(self._on_click)
        self.follow(wb=wb)
        self.observe(lambda _c: self._placeholders(), names="producer_name")   # whose clock a blank takes
        self.redraw_if_changed()    # the first drawing

    # ------------------------------------------------------------------ values

    @property
    def last_message(self) -> str:
        """The status line under the buttons, as plain text."""
        return self.message_text

    def values(self, texts: dict | None = None, nulls=None, producer: str | None = None) -> dict:
        """The row the fields describe (or ``texts``), column by column (NULL where ticked), each
        read exactly as typed; raises :class:`~streamsql.engine.values.ValueRefused` naming every
        field whose text its column's type does not accept (those fields are outlined)."""
        texts = self.texts if texts is None else texts
        nulls = set(self.nulls_on if nulls is None else nulls)
        out, bad = {}, []
        clock, _whose = self.wb.default_rowtime(self.stream, _producer(producer if producer is not None
                                                                       else self.producer_name))
        day = sqltime.day_of(clock) if clock is not None else None
        for f in self.fields:
            if f.type.nullable and f.name in nulls:
                out[f.name] = None
                continue
            try:
                out[f.name] = parse_text(texts.get(f.name, ""), f.type, where=f"column {f.name}", day=day)
            except ValueRefused as e:
                bad.append((f.name, e))
        if bad:
            raise FieldsRefused("; ".join(str(e) for _n, e in bad), [n for n, _e in bad])
        return out

    # ------------------------------------------------------------------ actions

    def insert(self):
        """Insert the row the form describes (what Insert row does); a field its type refuses
        inserts nothing and says why."""
        return self._apply({"op": "insert", "rowtime": self.rowtime_text, "values": dict(self.texts),
                            "nulls": list(self.nulls_on), "producer": self.producer_name})

    def punctuate(self):
        """Send the bound in the bound field (what the Punctuate button does)."""
        return self._apply({"op": "punctuate", "bound": self.bound_text, "strict": self.strict_on,
                            "producer": self.producer_name})

    def attach(self):
        """Attach the producer named in the text box (or the selected one)."""
        name = self.new_producer_text.strip() or _producer(self.producer_name)
        return self._apply({"op": "attach", "name": name or ""})

    def detach(self):
        """Detach the selected producer."""
        return self._apply({"op": "detach", "producer": self.producer_name})

    def _on_click(self, _widget, content, _buffers) -> None:
        """A click in the browser: the message carries the form as it was on screen. It is applied
        on the kernel's main thread, after a running cell, in click order (:mod:`.clicks`)."""
        if not isinstance(content, dict) or "op" not in content:
            return
        apply_click(lambda: self._click(content), content.get("id"))

    def _click(self, content: dict) -> None:
        """Apply one click. Every click is answered once, whatever happens, so none stays pending."""
        ok = False
        try:
            ok = self._apply(content) is not None
        except Exception as e:  # a bug must not leave the click pending or break the kernel
            log.exception("injector action failed")
            self._say(f"error: {type(e).__name__}: {e}", "error")
        finally:
            self.send({"ack": content.get("id"), "op": content["op"], "ok": ok})

    def _apply(self, msg: dict):
        """Do what one click (or a cell) asks, with the values it carries; say what happened."""
        op = msg.get("op")
        producer = _producer(msg.get("producer"))
        try:
            if op == "insert":
                return self._done(self._insert(msg, producer))
            if op == "punctuate":
                t = str(msg.get("bound") or "").strip()
                if not t:
                    return self._refused("type a time to punctuate with", [BOUND])
                try:
                    at = self.wb.rowtime_of(self.stream, t, producer)
                except StreamSqlError as e:
                    return self._refused(str(e), [BOUND])
                with self.wb.commits.first(self.query):
                    o = self.wb.punctuate(self.stream, at, strict=bool(msg.get("strict")), producer=producer)
                return self._done(o)
            if op == "attach":
                name = str(msg.get("name") or "").strip()
                if not name:
                    return self._refused("type the name of the producer to attach", [])
                o = self._done(self.wb.attach(self.stream, name))
                self.new_producer_text = ""
                self.producer_name = name
                return o
            if op == "detach":
                return self._done(self.wb.detach(self.stream, producer or DEFAULT_PRODUCER))
        except LateRowError as e:
            self._say(f"late: {e}", "late")
            self._after()
            return None
        except FieldsRefused as e:
            return self._refused(str(e), e.fields)
        except (StreamSqlError, ValueError) as e:
            return self._refused(str(e), [])
        return self._refused(f"unknown action {op!r}", [])

    def _insert(self, msg: dict, producer: str | None):
        values = self.values(msg.get("values") or {}, msg.get("nulls") or [], msg.get("producer"))
        text = str(msg.get("rowtime") or "").strip()
        try:
            at = self.wb.rowtime_of(self.stream, text or None, producer)
        except StreamSqlError as e:
            raise _with_fields(e, [ROWTIME]) from None
        with self.wb.commits.first(self.query):
            return self.wb.insert(self.stream, values, rowtime=at, producer=producer)

    def _done(self, o):
        self.last_outcome = o
        self._say(self._describe(o), "ok")
        self._after()
        return o

    def _refused(self, text: str, fields: list[str]):
        self._say(f"error: {text}", "error", fields)
        return None

    def _describe(self, o) -> str:
        ev = o.event
        who = f" from {ev.producer}" if ev.producer and ev.producer != DEFAULT_PRODUCER else ""
        if ev.kind == "row":
            what = f"row at {ts(ev.rowtime)} inserted{who}"
        elif ev.kind == "bound":
            what = f"bound {'>' if ev.strict else '>='} {ts(ev.rowtime)}{who}"
            if o.status == "eclipsed":
                what += f" eclipsed (the clock is already {ts(o.bound_before)})"
        else:
            what = f"producer {ev.producer or DEFAULT_PRODUCER} {ev.kind}ed"
        return f"step {o.step}: {self.stream} {what}; clock {ts(self.wb.clock(self.stream))}"

    def _after(self) -> None:
        """The event is committed: the views follow on their own thread; this injector's title
        and clock-following fields now, so a cell that reads them right after sees them."""
        for f in list(self._callbacks):
            f()
        self.refresh()

    def _say(self, text: str, kind: str, fields=()) -> None:
        with self._lock, self.hold_sync():
            self.message_text = text
            self.message_kind = kind
            self.bad_fields = list(fields)

    def on_event(self, f: Callable) -> None:
        """Call ``f()`` after each event this injector sends."""
        self._callbacks.append(f)

    # ------------------------------------------------------------------ refresh

    def live_key(self):
        try:
            info = next(s for s in self.wb.streams() if s["name"] == self.stream)
        except StopIteration:
            return ("dropped",)
        return (info["clock"], info["pending"], info["late"], tuple(sorted(info["producers"])),
                self.wb.default_rowtime(self.stream, _producer(self.producer_name)))

    def refresh(self) -> None:
        """Show the stream's clock and producers; the bound field follows the clock when it moves.
        The engine is read first, then the form changes under the injector's own lock (a widget
        lock, never held while the engine is asked: a click and a redraw share the form)."""
        state = self._engine_state(self.producer_name)
        with self._lock:
            self._show(state)

    def _engine_state(self, producer: str | None):
        """What the form shows of the engine: the stream's info, and what a blank ROWTIME means
        for ``producer`` and for the default producer; None once the stream is dropped."""
        try:
            info = next(s for s in self.wb.streams() if s["name"] == self.stream)
            blanks = {p: self.wb.default_rowtime(self.stream, p) for p in {_producer(producer), None}}
        except (StopIteration, StreamSqlError):
            return None
        return info, blanks

    def _show(self, state) -> None:
        if state is None:
            self.status = {"clock": "dropped", "pending": 0, "late": 0}
            return
        info, blanks = state
        clock = info["clock"]
        prods = sorted(info["producers"])
        options = [DEFAULT_PRODUCER] + [p for p in prods if p != DEFAULT_PRODUCER]
        with self.hold_sync():
            self.status = {"clock": ts(clock), "pending": info["pending"], "late": info["late"]}
            if list(self.producers) != options:
                if self.producer_name not in options:
                    self._showing = True        # its placeholder is set below, from ``state``
                    try:
                        self.producer_name = DEFAULT_PRODUCER
                    finally:
                        self._showing = False
                self.producers = options
            if clock != self._shown_clock:          # the bound field follows the clock (punctuate "now")
                self._shown_clock = clock
                self.bound_text = "" if clock is None else sqltime.format_timestamp(clock)
            blank = blanks.get(_producer(self.producer_name))
            if blank is not None:
                self.rowtime_placeholder = rowtime_placeholder(*blank, self.stream)

    def _placeholders(self) -> None:
        """The ROWTIME field says what a blank will be (another producer was chosen)."""
        if self._showing:
            return
        state = self._engine_state(self.producer_name)
        if state is not None:
            self.rowtime_placeholder = rowtime_placeholder(*state[1][_producer(self.producer_name)], self.stream)

    def title_text(self) -> str:
        """The title line: the stream, its clock, rows pending for slower producers, late rows."""
        s = self.status
        return f"{self.stream} clock {s.get('clock')} · pending {s.get('pending', 0)} · late {s.get('late', 0)}"

    def text(self) -> str:
        """The injector as plain text (what terminals and nbval see)."""
        return f"Injector for {self.stream} ({', '.join(f.name for f in self.fields)})"

    def static_parts(self) -> list[str]:
        """The pieces of its static snapshot (HTML), in display order."""
        s = self.status
        line = (f'<b>{html.escape(self.stream)}</b> <span style="font-family:monospace">clock '
                f'{html.escape(str(s.get("clock")))} · pending {s.get("pending", 0)} · late {s.get("late", 0)}</span>')
        fields = ", ".join(f"{f.name} {f.type}" for f in self.fields)
        return [f'<div class="streamsql-static-injector" style="font-size:12px">{line} '
                f'<span style="font-family:monospace;color:#777">({html.escape(fields)})</span></div>']

    def static_key(self):
        return (self.wb.last_step, tuple(sorted(self.status.items())))

    def static_html(self) -> str:
        """The view as a static HTML snapshot (what a notebook shows where no kernel runs it)."""
        return snapshot_html(self.static_parts(), f"Injector for {self.stream}")


def _producer(p) -> str | None:
    return None if p in (None, "", DEFAULT_PRODUCER) else p


class FieldsRefused(ValueRefused):
    """Texts the form's fields hold that their types (or the clock) refuse: the message names
    each, ``fields`` lists them (they are outlined)."""

    def __init__(self, message: str, fields: list[str]):
        ValueError.__init__(self, message)
        self.where, self.type, self.reason = ", ".join(fields), None, message
        self.fields = fields


def _with_fields(e: Exception, fields: list[str]) -> FieldsRefused:
    return FieldsRefused(str(e), fields)


def rowtime_placeholder(blank: int | None, whose: str | None, stream: str) -> str:
    """What a blank ROWTIME field will mean, shown in it."""
    if blank is None:
        return "no clock yet: YYYY-MM-DD HH:MM:SS or now"
    if whose == stream:
        return f"{sqltime.format_timestamp(blank)} (the clock)"
    return f"{sqltime.format_timestamp(blank)} ({whose}'s clock)"
