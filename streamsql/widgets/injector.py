"""An injector for one input stream: typed inputs built from its columns, a ROWTIME that defaults
to the stream clock (short ``HH:MM[:SS]`` is on the clock's day), Insert row, Punctuate (time,
strict) and the producer the events come from, with attach/detach."""
from __future__ import annotations

import html
from typing import Callable

import ipywidgets as widgets

from ..engine import time as T
from ..engine.errors import LateRowError, StreamSqlError
from ..engine.types import APPROX_TYPES, INTEGER_TYPES, STRING_TYPES
from .hooks import on_inject, settle, weak_method
from .render import ts

DEFAULT_PRODUCER = "default"
_WIDE = {"description_width": "initial"}


def _input_for(field) -> widgets.Widget:
    """The widget for one column's type (text for the types without a native input)."""
    t = field.type.name
    desc = f"{field.name}"
    lay = widgets.Layout(width="auto")
    if t in INTEGER_TYPES:
        return widgets.IntText(value=0, description=desc, style=_WIDE, layout=widgets.Layout(width="170px"))
    if t in APPROX_TYPES:
        return widgets.FloatText(value=0.0, description=desc, style=_WIDE, layout=widgets.Layout(width="170px"))
    if t == "BOOLEAN":
        return widgets.Checkbox(value=False, description=desc, indent=False, layout=lay)
    if t in STRING_TYPES:
        return widgets.Text(value="", description=desc, style=_WIDE, layout=widgets.Layout(width="200px"))
    if t == "DECIMAL":
        return widgets.Text(value="0", description=desc, placeholder=str(field.type), style=_WIDE,
                            layout=widgets.Layout(width="170px"))
    placeholder = "HH:MM[:SS] or YYYY-MM-DD HH:MM:SS" if t == "TIMESTAMP" else str(field.type)
    return widgets.Text(value="", description=desc, placeholder=placeholder, style=_WIDE,
                        layout=widgets.Layout(width="260px"))


class Injector(widgets.VBox):
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

        self.rowtime = widgets.Text(description="ROWTIME", placeholder="now", style=_WIDE,
                                    layout=widgets.Layout(width="260px"))
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

        self.punct_time = widgets.Text(description="bound", placeholder="HH:MM[:SS]", style=_WIDE,
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
        on_inject(wb, weak_method(self._on_inject))
        self.refresh()

    # ------------------------------------------------------------------ values

    @staticmethod
    def _null_toggled(w):
        def f(change):
            w.disabled = bool(change["new"])
        return f

    def values(self) -> dict:
        """The row the inputs describe, column by column (NULL where ticked)."""
        out = {}
        clock = self.wb.clock(self.stream)
        for f in self.fields:
            if f.name in self.nulls and self.nulls[f.name].value:
                out[f.name] = None
                continue
            v = self.inputs[f.name].value
            if f.type.name == "TIMESTAMP":
                v = v.strip()
                day = T.day_of(clock) if clock is not None else None
                v = T.parse_timestamp(v, day=day) if v else None
            out[f.name] = v
        return out

    def _producer(self) -> str | None:
        p = self.producer.value
        return None if p in (None, DEFAULT_PRODUCER) else p

    # ------------------------------------------------------------------ actions

    def insert(self):
        """Insert the row the inputs describe (what the Insert row button does)."""
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
        self.title.value = (f'<b>{html.escape(self.stream)}</b> <span style="font-family:monospace">clock '
                            f'{html.escape(ts(clock))} · pending {info["pending"]} · late {info["late"]}</span>')
        options = [DEFAULT_PRODUCER] + [p for p in prods if p != DEFAULT_PRODUCER]
        if list(self.producer.options) != options:
            keep = self.producer.value if self.producer.value in options else DEFAULT_PRODUCER
            self.producer.options = options
            self.producer.value = keep
        if clock != self._shown_clock:
            self._shown_clock = clock
            text = "" if clock is None else T.format_timestamp(clock)
            self.rowtime.value = text
            self.punct_time.value = text

    def _repr_mimebundle_(self, **kwargs):
        data = super()._repr_mimebundle_(**kwargs)
        data["text/plain"] = f"Injector for {self.stream} ({', '.join(f.name for f in self.fields)})"
        return data
