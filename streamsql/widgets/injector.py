"""An injector for one input stream: a text field per column that shows the column's type and
reads what is typed with the engine's one typed-value parser (:mod:`streamsql.engine.values`),
a ROWTIME that is the stream clock when left blank (its placeholder says which time that is;
``HH:MM[:SS]`` is on that clock's day, ``now`` the wall clock), Insert row, Punctuate (time,
strict) and the producer the events come from, with attach/detach."""
from __future__ import annotations

import decimal
import html
from typing import Callable

import ipywidgets as widgets
from traitlets import Unicode

from ..engine import time as T
from ..engine.errors import LateRowError, StreamSqlError
from ..engine.values import ValueRefused, parse_text, type_hint
from .hooks import on_inject, settle, weak_method
from .render import ts
from .static import StaticMixin, snapshot_html, update_all

DEFAULT_PRODUCER = "default"
_WIDE = {"description_width": "initial"}
_BAD = "streamsql-bad"
#: a field whose text its type refused is outlined until the next try
_STYLE = ("<style>.streamsql-bad input{border:2px solid #b00020 !important;background:#fff3f3}</style>")


def _as_text(v):
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, (int, decimal.Decimal)):
        return str(v)
    return "" if v is None else v


class _TextValue(Unicode):
    def validate(self, obj, value):
        return super().validate(obj, _as_text(value))


class FieldText(widgets.Text):
    """A text field; a Python number or boolean assigned to it shows as its exact text (so
    ``inj.inputs["AMOUNT"].value = 100`` types ``100``)."""

    value = _TextValue(help="String value").tag(sync=True)


def _input_for(field) -> FieldText:
    """A text field for one column, its type as the placeholder (and tooltip)."""
    hint = type_hint(field.type)
    width = "260px" if field.type.name == "TIMESTAMP" else "200px" if field.type.is_string else "170px"
    return FieldText(value="", description=field.name, placeholder=hint, tooltip=f"{field.name} {hint}",
                     style=_WIDE, layout=widgets.Layout(width=width))


class Injector(StaticMixin, widgets.VBox):
    """Insert rows and punctuation into ``stream`` of ``wb`` by hand. After each action the
    workbench's queries are allowed to catch up (so views show what the event released) and the
    ``on_event`` callbacks run."""

    def __init__(self, wb, stream: str, on_event: Callable | None = None):
        self.wb = wb
        d = wb.catalog.stream(stream)
        self.stream = d.name
        self.fields = list(d.fields)
        self._callbacks: list[Callable] = [on_event] if on_event else []
        self.last_outcome = None
        #: the status line under the buttons, as plain text
        self.last_message = ""
        self._shown_clock: int | None | bool = False   # False: never shown

        self.rowtime = FieldText(description="ROWTIME", placeholder="", style=_WIDE,
                                 layout=widgets.Layout(width="300px"))
        self.inputs: dict[str, widgets.Widget] = {f.name: _input_for(f) for f in self.fields}
        self.nulls: dict[str, widgets.Checkbox] = {}
        cells = [self.rowtime]
        for f in self.fields:
            w = self.inputs[f.name]
            if f.type.nullable:
                n = widgets.Checkbox(value=False, description="NULL", indent=False,
                                     layout=widgets.Layout(width="64px"))
                n.observe(self._null_toggled(w), names="value")
                self.nulls[f.name] = n
                cells.append(widgets.HBox([w, n]))
            else:
                cells.append(w)
        self.insert_button = widgets.Button(description="Insert row", button_style="primary", icon="plus")
        self.insert_button.add_class("streamsql-insert")
        self.insert_button.on_click(lambda _b: self.insert())

        self.punct_time = FieldText(description="bound", placeholder="HH:MM[:SS]", style=_WIDE,
                                    layout=widgets.Layout(width="240px"))
        self.strict = widgets.Checkbox(value=False, description="strict (rowtime > bound)", indent=False,
                                       layout=widgets.Layout(width="190px"))
        self.punct_button = widgets.Button(description="Punctuate", icon="flag")
        self.punct_button.add_class("streamsql-punctuate")
        self.punct_button.on_click(lambda _b: self.punctuate())

        self.producer = widgets.Dropdown(options=[DEFAULT_PRODUCER], value=DEFAULT_PRODUCER,
                                         description="producer", style=_WIDE,
                                         layout=widgets.Layout(width="200px"))
        self.new_producer = widgets.Text(placeholder="new producer", layout=widgets.Layout(width="130px"))
        self.attach_button = widgets.Button(description="Attach", layout=widgets.Layout(width="80px"))
        self.attach_button.on_click(lambda _b: self.attach())
        self.detach_button = widgets.Button(description="Detach", layout=widgets.Layout(width="80px"))
        self.detach_button.on_click(lambda _b: self.detach())

        self.title = widgets.HTML()
        self.message = widgets.HTML()
        row_box = widgets.HBox(cells + [self.insert_button], layout=widgets.Layout(flex_flow="row wrap"))
        punct_box = widgets.HBox([self.punct_time, self.strict, self.punct_button, self.producer,
                                  self.new_producer, self.attach_button, self.detach_button],
                                 layout=widgets.Layout(flex_flow="row wrap"))
        super().__init__([self.title, row_box, punct_box, self.message])
        self.add_class("streamsql-injector")
        self.producer.observe(lambda _c: self._placeholders(), names="value")   # whose clock a blank takes
        on_inject(wb, weak_method(self._on_inject))
        self.refresh()

    # ------------------------------------------------------------------ values

    @staticmethod
    def _null_toggled(w):
        def f(change):
            w.disabled = bool(change["new"])
        return f

    def values(self) -> dict:
        """The row the fields describe, column by column (NULL where ticked), each read exactly
        as typed; raises :class:`~streamsql.engine.values.ValueRefused` naming every field whose
        text its column's type does not accept (those fields are marked)."""
        out, bad = {}, []
        clock, _whose = self.wb.default_rowtime(self.stream, self._producer())
        day = T.day_of(clock) if clock is not None else None
        for f in self.fields:
            w = self.inputs[f.name]
            w.remove_class(_BAD)
            if f.name in self.nulls and self.nulls[f.name].value:
                out[f.name] = None
                continue
            try:
                out[f.name] = parse_text(w.value, f.type, where=f"column {f.name}", day=day)
            except ValueRefused as e:
                w.add_class(_BAD)
                bad.append(e)
        if len(bad) == 1:
            raise bad[0]
        if bad:
            raise ValueError("; ".join(map(str, bad)))
        return out

    def _producer(self) -> str | None:
        p = self.producer.value
        return None if p in (None, DEFAULT_PRODUCER) else p

    # ------------------------------------------------------------------ actions

    def insert(self):
        """Insert the row the fields describe (what the Insert row button does); a field its
        type refuses inserts nothing and says why."""
        return self._act(lambda: self.wb.insert(self.stream, self.values(),
                                                rowtime=self.rowtime.value.strip() or None,
                                                producer=self._producer()))

    def punctuate(self):
        """Send the bound in the bound field (what the Punctuate button does)."""
        t = self.punct_time.value.strip()
        if not t:
            self._say("error: type a time to punctuate with", error=True)
            return None
        return self._act(lambda: self.wb.punctuate(self.stream, t, strict=self.strict.value,
                                                   producer=self._producer()))

    def attach(self):
        """Attach the producer named in the text box (or the selected one)."""
        name = self.new_producer.value.strip() or self._producer()
        if not name:
            self._say("error: type the name of the producer to attach", error=True)
            return None
        o = self._act(lambda: self.wb.attach(self.stream, name))
        if o is not None:
            self.new_producer.value = ""
            self.producer.value = name
        return o

    def detach(self):
        """Detach the selected producer."""
        return self._act(lambda: self.wb.detach(self.stream, self.producer.value or DEFAULT_PRODUCER))

    def _act(self, f):
        try:
            o = f()
        except LateRowError as e:
            self._say(f"late: {e}", error=True)
            self._after()
            return None
        except (StreamSqlError, ValueError) as e:
            self._say(f"error: {e}", error=True)
            return None
        self.last_outcome = o
        self._say(self._describe(o))
        self._after()
        return o

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
        return f"step {o.seq}: {self.stream} {what}; clock {ts(self.wb.clock(self.stream))}"

    def _after(self) -> None:
        errors = settle(self.wb)
        if errors:
            self._say("error: " + "; ".join(errors), error=True)
        for f in list(self._callbacks):
            f()
        self.refresh()
        update_all()          # a click in JupyterLab: the saved notebook's snapshots follow

    def _say(self, text: str, error: bool = False) -> None:
        self.last_message = text
        color = "#b00020" if error else "#333"
        self.message.value = (f'<span class="streamsql-message" style="font-family:monospace;color:{color}">'
                              f"{html.escape(text)}</span>")

    def on_event(self, f: Callable) -> None:
        """Call ``f()`` after each event this injector sends (composed views redraw then)."""
        self._callbacks.append(f)

    # ------------------------------------------------------------------ refresh

    def _on_inject(self, _outcomes) -> None:
        self.refresh()

    def refresh(self) -> None:
        """Show the stream's clock and producers; the time fields follow the clock when it moves."""
        try:
            info = next(s for s in self.wb.streams() if s["name"] == self.stream)
        except StopIteration:
            self.title.value = f"<b>{html.escape(self.stream)}</b>: dropped"
            return
        clock = info["clock"]
        prods = sorted(info["producers"])

        self.title.value = (_STYLE + f'<b>{html.escape(self.stream)}</b> <span style="font-family:monospace">clock '
                            f'{html.escape(ts(clock))} · pending {info["pending"]} · late {info["late"]}</span>')
        options = [DEFAULT_PRODUCER] + [p for p in prods if p != DEFAULT_PRODUCER]
        if list(self.producer.options) != options:
            keep = self.producer.value if self.producer.value in options else DEFAULT_PRODUCER
            self.producer.options = options
            self.producer.value = keep
        if clock != self._shown_clock:          # the bound field follows the clock (punctuate "now")
            self._shown_clock = clock
            self.punct_time.value = "" if clock is None else T.format_timestamp(clock)
        self._placeholders()

    def _placeholders(self) -> None:
        """The time fields say what a blank ROWTIME will be and where bounds stand."""
        try:
            blank, whose = self.wb.default_rowtime(self.stream, self._producer())
        except StreamSqlError:      # the stream was dropped
            return
        self.rowtime.placeholder = rowtime_placeholder(blank, whose, self.stream)
        self.punct_time.placeholder = "HH:MM[:SS]"

    def static_parts(self) -> list[str]:
        """The pieces of its static snapshot (HTML), in display order."""
        line = self.title.value.replace(_STYLE, "")
        fields = ", ".join(f"{f.name} {f.type}" for f in self.fields)
        return [f'<div class="streamsql-static-injector" style="font-size:12px">{line} '
                f'<span style="font-family:monospace;color:#777">({html.escape(fields)})</span></div>']

    def static_key(self):
        return (self.wb.last_seq, self.title.value)

    def static_html(self) -> str:
        """The view as a static HTML snapshot (what a notebook shows where no kernel runs it)."""
        return snapshot_html(self.static_parts(), f"Injector for {self.stream}")

    def bundle_text(self) -> str:
        return f"Injector for {self.stream} ({', '.join(f.name for f in self.fields)})"


def rowtime_placeholder(blank: int | None, whose: str | None, stream: str) -> str:
    """What a blank ROWTIME field will mean, shown in it."""
    if blank is None:
        return "no clock yet: YYYY-MM-DD HH:MM:SS or now"
    if whose == stream:
        return f"{T.format_timestamp(blank)} (the clock)"
    return f"{T.format_timestamp(blank)} ({whose}'s clock)"
