"""A row of fields and buttons drawn in the browser (``js/form.js``, an anywidget) whose clicks
carry the fields' values as they were on screen: the kernel never reads a field at some later
moment, so a click made while it was busy acts on what the person saw. The kernel answers each
click once, in order; the unanswered ones show as pending."""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Callable

import anywidget
from traitlets import Bool, Dict, List

from .clicks import apply_click

log = logging.getLogger("streamsql.widgets")
_JS = Path(__file__).parent / "js"

_CSS = """
.streamsql-form-row { display: flex; flex-wrap: wrap; gap: 6px; align-items: center; font-size: 12px; }
.streamsql-form-label { font-size: 12px; color: #333; }
.streamsql-form-input { font-family: monospace; font-size: 12px; height: 24px; box-sizing: border-box;
                        border: 1px solid #9e9e9e; padding: 1px 4px; }
.streamsql-form-button { height: 26px; font-size: 12px; padding: 0 10px; cursor: pointer; }
.streamsql-form-pending { font-family: monospace; font-size: 11px; color: #8a5a00; font-weight: bold; }
.streamsql-form-grid { display: grid; grid-template-columns: max-content max-content; gap: 3px 10px;
                       align-items: center; margin-bottom: 6px; }
.streamsql-form-grid .streamsql-form-label { font-family: monospace; }
.streamsql-form-good { background: #d4f7d4; }
.streamsql-form-bad { background: #f7d4d4; }
"""


class FormField:
    """One field of a :class:`ClickForm`, for cells and tests (``form.field("k").value = 5``)."""

    def __init__(self, form: "ClickForm", name: str):
        self._form, self._name = form, name

    @property
    def value(self):
        return self._form.values.get(self._name, "")

    @value.setter
    def value(self, v) -> None:
        self._form.values = {**self._form.values, self._name: v}


class ClickForm(anywidget.AnyWidget):
    """``fields``: ``{name, label, placeholder, width, kind ("text"|"number"), enter (the button
    Enter presses)}``; ``buttons``: ``{name, label, primary}``; ``on_click(name, values)`` is
    called once per click with the values the click carried."""

    _esm = _JS / "form.js"
    _css = _CSS
    fields = List().tag(sync=True)
    buttons = List().tag(sync=True)
    values = Dict().tag(sync=True)
    disabled = List().tag(sync=True)
    #: field -> "good" or "bad": the field is tinted (an exercise's marked answers)
    marks = Dict().tag(sync=True)
    #: a field a line, the buttons under them (else one row)
    stacked = Bool(False).tag(sync=True)

    def __init__(self, fields: list[dict], buttons: list[dict], on_click: Callable[[str, dict], None],
                 values: dict | None = None, stacked: bool = False):
        super().__init__(fields=fields, buttons=buttons, values=dict(values or {}), stacked=stacked)
        self._on_click = on_click
        self.on_msg(self._message)

    def field(self, name: str) -> FormField:
        return FormField(self, name)

    def click(self, name: str) -> None:
        """Click button ``name`` with the values the form holds (what a cell or a test does)."""
        self._on_click(name, dict(self.values))

    def _message(self, _widget, content, _buffers) -> None:
        """A click: applied on the kernel's main thread, after a running cell (:mod:`.clicks`)."""
        if not isinstance(content, dict) or "op" not in content:
            return
        apply_click(lambda: self._clicked(content), content.get("id"))

    def _clicked(self, content: dict) -> None:
        try:
            self._on_click(content["op"], dict(content.get("values") or {}))
        except Exception:  # a bug must not leave the click pending or break the kernel
            log.exception("form action %s failed", content.get("op"))
        finally:
            self.send({"ack": content.get("id")})
