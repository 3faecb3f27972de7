"""Deterministic text and HTML for tables: no ids, no wall-clock times, so that notebook outputs
compare equal under nbval from one run to the next."""
from __future__ import annotations

import html

from ..engine import time as sqltime
from ..engine.steps import format_table

#: inline style shared by every table (no <style> blocks with generated class names)
_TABLE = "border-collapse:collapse;font-family:monospace;font-size:12px"
_CELL = "border:1px solid #ccc;padding:2px 6px;text-align:left;white-space:pre"
#: a wide table scrolls inside its output instead of running off the page
SCROLL = "overflow-x:auto;max-width:100%"


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
_MERGED = "border:1px solid #ccc;padding:2px 6px;text-align:left;white-space:normal;color:#b00020;max-width:48em"


def html_table(header: list[str], rows: list[list[str]], css_class: str, *, caption: str | None = None,
               row_classes: list[str] | None = None, row_titles: list[str] | None = None,
               merge_from: list[int | None] | None = None, sticky: bool = False) -> str:
    """An HTML table with a stable class (the browser test and people's CSS find it by class);
    ``data-rows`` holds the number of body rows; ``row_titles`` are rows' tooltips;
    ``merge_from[i]``, when set, makes row i's cell at that index span the rest of the row (a
    message such as a calculator error, wrapped, in the error colour); ``sticky``: the header
    stays in sight while a live view's box scrolls. A table wider than the output scrolls inside it."""
    out = [f'<div class="streamsql-scroll" style="{SCROLL}"><table class="{css_class}" data-rows="{len(rows)}" '
           f'style="{_TABLE}">']
    if caption:
        out.append(f'<caption style="text-align:left;font-weight:bold">{html.escape(caption)}</caption>')
    th = _CELL + (";position:sticky;top:0;background:#f5f5f5" if sticky else "")
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
    out.append("</tbody></table></div>")
    return "".join(out)


def html_lines(lines: list[str], css_class: str) -> str:
    return f'<div class="{css_class}" style="font-family:monospace;font-size:12px">' + \
        "<br>".join(html.escape(x) for x in lines) + "</div>"
