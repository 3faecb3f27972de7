"""Deterministic text and HTML for tables: no ids, no wall-clock times, so that notebook outputs
compare equal under nbval from one run to the next."""
from __future__ import annotations

import html

from ..engine import time as sqltime
from ..engine.steps import format_table

#: inline style shared by every table (no <style> blocks with generated class names)
_TABLE = "border-collapse:collapse;font-family:monospace;font-size:12px;line-height:1.35"
#: a cell keeps a value's spaces and wraps where it must, at a space (a word longer than its cell
#: breaks), so that a table fits the width of the notebook it is shown in (a workbench beside the
#: file browser)
_CELL = ("border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:top;white-space:pre-wrap;"
         "overflow-wrap:break-word")
#: a wide table scrolls inside its output instead of running off the page (only a table too wide
#: to wrap does: its cells wrap first)
SCROLL = "overflow-x:auto;max-width:100%"
#: the header row's cells of a table whose box scrolls (the rows of a live view): they stay in sight
STICKY = ";position:sticky;top:0;z-index:1;background:#f5f5f5"


def ts(ms: int | None) -> str:
    """A time for people: ``2006-10-10 10:00:00``, or ``none`` before a stream has a clock."""
    return sqltime.show_time(ms)


def short(ms: int | None) -> str:
    """``HH:MM[:SS]`` (the step tables' form), or ``none``."""
    return sqltime.show_time(ms, short=True)


def text_table(header: list[str], rows: list[list[str]]) -> str:
    """The engine's ``a | b`` table layout (``trace.format_table``)."""
    return format_table([list(map(str, header))] + [list(map(str, r)) for r in rows])


#: a cell that spans the rest of its row: a message, wrapped, in the error colour
_MERGED = "border:1px solid #ccc;padding:2px 6px;text-align:left;white-space:normal;color:#b00020"
#: a row under a table row that spans the whole table: a note on the row above (why it differs)
_NOTE = ("border:1px solid #ccc;padding:2px 6px 4px 2em;text-align:left;white-space:normal;"
         "font-family:sans-serif;font-size:12px;color:#444;background:#fafafa")


def html_table(header: list[str], rows: list[list[str]], css_class: str, *, caption: str | None = None,
               row_classes: list[str] | None = None, row_titles: list[str] | None = None,
               merge_from: list[int | None] | None = None, sticky: bool = False,
               notes: dict[int, str | list[str]] | None = None) -> str:
    """An HTML table with a stable class (the browser test and people's CSS find it by class);
    ``data-rows`` holds the number of body rows; ``row_titles`` are rows' tooltips;
    ``merge_from[i]``, when set, makes row i's cell at that index span the rest of the row (a
    message such as a calculator error, wrapped, in the error colour); ``notes[i]`` (a line or
    a list of lines) is text in a row of its own under row i, across the table (``class="note"``); ``sticky``:
    the header stays in sight while the box the table is in scrolls (the table is then not
    wrapped in a scrolling box of its own, which would be the one the header sticks to). Cells
    wrap, so a table fits the width it is given; one that cannot still scrolls inside its output."""
    wrap = '<div class="streamsql-scroll"' + ("" if sticky else f' style="{SCROLL}"') + ">"
    out = [f'{wrap}<table class="{css_class}" data-rows="{len(rows)}" style="{_TABLE}">']
    if caption:
        out.append(f'<caption style="text-align:left;font-weight:bold">{html.escape(caption)}</caption>')
    th = _CELL + (STICKY if sticky else "")
    out.append("<thead><tr>" + "".join(f'<th style="{th}">{html.escape(str(h))}</th>' for h in header)
               + "</tr></thead><tbody>")
    for i, r in enumerate(rows):
        cls = f' class="{row_classes[i]}"' if row_classes and row_classes[i] else ""
        if row_titles and row_titles[i]:
            cls += f' title="{html.escape(row_titles[i])}"'
        m = merge_from[i] if merge_from else None
        if m is not None and m < len(r):
            cells = "".join(f'<td style="{_CELL}">{html.escape(str(c))}</td>' for c in r[:m])
            cells += f'<td colspan="{len(header) - m}" style="{_MERGED}">{html.escape(str(r[m]))}</td>'
        else:
            cells = "".join(f'<td style="{_CELL}">{html.escape(str(c))}</td>' for c in r)
        out.append(f"<tr{cls}>{cells}</tr>")
        if notes and notes.get(i):
            text = "<br>".join(html.escape(x) for x in ([notes[i]] if isinstance(notes[i], str) else notes[i]))
            out.append(f'<tr class="note"><td colspan="{len(header)}" style="{_NOTE}">{text}</td></tr>')
    out.append("</tbody></table></div>")
    return "".join(out)


def html_lines(lines: list[str], css_class: str) -> str:
    """Lines of monospace text, each wrapped at the width it is given (never wider)."""
    return (f'<div class="{css_class}" style="font-family:monospace;font-size:12px;line-height:1.45;'
            f'white-space:normal;overflow-wrap:anywhere">' + "<br>".join(html.escape(x) for x in lines) + "</div>")
