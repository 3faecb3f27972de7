"""SQL highlighting of ``%%streamsql`` cells in a real JupyterLab 4 and a real browser.

streamsql's JupyterLab extension (source in labextension/, built into streamsql/labextension/,
installed by scripts/setup.sh or a wheel) gives the SQL of a ``%%streamsql`` cell CodeMirror's
SQL highlighting with the dialect's words. JupyterLab runs headless on a free local port with a
token, with a real kernel, and Debian's Chromium is driven by Playwright (never a downloaded
browser); the tests read the editors' token spans: their CodeMirror token classes (tok-keyword,
...) and the colours the theme gives them. A Python cell and a ``%streamsql`` line magic stay
Python. Screenshots go to test-output/.

The first tests need no browser: the extension's word lists agree with the engine's, the built
bundle is the build of those lists, and a wheel installs the extension where JupyterLab looks.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import nbformat
import pytest

from labsupport import CHROMIUM, CHROMIUM_ARGS, OUT, end_sessions, jupyterlab, run_all

ROOT = Path(__file__).resolve().parent.parent
EXT_SRC = ROOT / "labextension"
EXT_BUILT = ROOT / "streamsql" / "labextension"
EXT_NAME = "streamsql-labextension"
NOTEBOOK = "highlight.ipynb"

needs_chromium = pytest.mark.skipif(not os.access(CHROMIUM, os.X_OK),
                                    reason="Debian's chromium is not installed (scripts/setup.sh --test installs it)")

# ------------------------------------------------------------------ the extension's files


def test_dialect_words_are_the_engines():
    """labextension/src/dialect.ts is what gen_dialect.py makes of the engine's lists today."""
    r = subprocess.run([sys.executable, str(EXT_SRC / "gen_dialect.py"), "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_built_extension_is_the_build_of_the_source():
    """The committed build has the source's word lists (a rebuild was not forgotten), and its
    package.json names the entry point JupyterLab loads."""
    meta = json.loads((EXT_BUILT / "package.json").read_text())
    assert meta["name"] == EXT_NAME
    entry = EXT_BUILT / meta["jupyterlab"]["_build"]["load"]
    assert entry.is_file()
    bundle = "".join(p.read_text() for p in (EXT_BUILT / "static").glob("*.js"))
    src = (EXT_SRC / "src" / "dialect.ts").read_text()
    lists = [line.strip().strip("';") for line in src.splitlines() if line.startswith("  '")]
    assert len(lists) == 3
    for words in lists:
        assert words in bundle, f"the built extension lacks {words[:40]}...: run npm run build in labextension/"
    assert "streamsql-labextension:cell-magic" in bundle


def test_wheel_installs_the_extension_where_jupyterlab_looks(tmp_path):
    """A wheel (pip install . without -e) carries the built extension twice: inside the package,
    and as data files under share/jupyter/labextensions/streamsql-labextension, which pip puts in
    the environment's prefix, where JupyterLab finds prebuilt extensions."""
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(ROOT)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    (wheel,) = tmp_path.glob("streamsql-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    data = [n.split(".data/data/", 1)[1] for n in names if ".data/data/" in n]
    share = f"share/jupyter/labextensions/{EXT_NAME}"
    built = sorted(p.relative_to(EXT_BUILT).as_posix() for p in EXT_BUILT.rglob("*") if p.is_file())
    assert sorted(d[len(share) + 1:] for d in data if d.startswith(share + "/")) == sorted(built + ["install.json"])
    assert all(f"streamsql/labextension/{b}" in names for b in built)


def test_setup_links_the_extension_into_the_environment():
    """scripts/setup.sh's editable install gets no data files; it links the built extension where
    JupyterLab looks, and JupyterLab lists it as enabled and OK."""
    prefix = Path(sys.prefix) / "share" / "jupyter" / "labextensions" / EXT_NAME
    if not prefix.exists():
        pytest.skip(f"{prefix} is missing: this environment was not made by scripts/setup.sh")
    assert (prefix / "package.json").resolve() == (EXT_BUILT / "package.json").resolve() or \
        json.loads((prefix / "package.json").read_text()) == json.loads((EXT_BUILT / "package.json").read_text())
    r = subprocess.run([sys.executable, "-m", "jupyterlab.labextensions", "list"], capture_output=True, text=True,
                       timeout=120)
    listing = r.stdout + r.stderr
    line = next((ln for ln in listing.splitlines() if EXT_NAME in ln), "")
    assert "enabled" in line and "OK" in line, listing


# ------------------------------------------------------------------ JupyterLab

SQL_CELL = """%%streamsql --name hourly
-- orders per hour
CREATE STREAM Orders (orderId INTEGER, ticker VARCHAR(10), price DOUBLE);
INSERT INTO Orders (ROWTIME, orderId, ticker, price) VALUES (TIMESTAMP '2006-10-10 10:00:00', 42, 'ORCL', 1.5);
SELECT STREAM FLOOR(o.ROWTIME TO HOUR) AS hr, COUNT(*) AS n
FROM Orders AS o
GROUP BY FLOOR(o.ROWTIME TO HOUR)"""
PY_CELL = """def total(prices):
    # the sum of the prices
    return sum(prices) + 42  # 'not SQL'
SELECT = 'a Python string'"""
LINE_CELL = "%streamsql SELECT STREAM ROWTIME, ticker FROM Orders WHERE price > 1"
ERROR_CELL = """%%streamsql
SELECT STREAM ROWTIME,
       nme
FROM Orders"""
INTERPOLATED_CELL = """%%streamsql
SELECT STREAM ROWTIME FROM Orders WHERE ticker = {{name}} AND nme = 1"""
STOP_CELL = """%%streamsql
SELECT STREAM ROWTIME FROM Orders WHERE ("""
CELLS = [
    "%load_ext streamsql\n%config StreamSql.engine = 'local'\nname = 'ORCL'",   # no Spark: answers in a second
    SQL_CELL,
    PY_CELL,
    LINE_CELL,
    ERROR_CELL,           # 4: SQL error: line 2:8: Column 'NME' not found (printed)
    INTERPOLATED_CELL,    # 5: the error's line is the interpolated one, not the cell's
    "%config StreamSql.stop_on_error = True",
    STOP_CELL,            # 7: SQL error: line 1:41: Syntax error near '(' (raised: an error output)
]
ERRORS = "errors.ipynb"       # the same cells, run (highlight.ipynb is only opened)
#: after the code cells: `streamsql` code blocks in Markdown use the dialect (the registered language)
MARKDOWN = "A query:\n\n```streamsql\nSELECT STREAM ROWTIME FROM Orders\n```\n\n```sql\nSELECT STREAM ROWTIME FROM Orders\n```"


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A JupyterLab server on 127.0.0.1 serving a notebook of the cells above (no outputs)."""
    root = tmp_path_factory.mktemp("lab")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS]
                                  + [nbformat.v4.new_markdown_cell(MARKDOWN)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nbformat.write(nb, root / NOTEBOOK)
    nbformat.write(nb, root / ERRORS)
    with jupyterlab(root, tmp_path_factory.mktemp("jupyter"), env={"STREAMSQL_PRESTART": "0"}) as lab:
        yield lab


PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"
PROMPTS_JS = f"""() => [...document.querySelectorAll('{PANEL} .jp-Notebook .jp-CodeCell .jp-InputArea-prompt')]
                        .map(e => e.textContent.trim())"""

#: the token spans of cell ``i``'s editor: text, classes, computed colour and style, and whether
#: the span is on the magic's line; plus the theme's colours for each kind of token
TOKENS_JS = f"""(i) => {{
    const cell = document.querySelectorAll('{PANEL} .jp-Notebook .jp-Cell')[i];
    const editor = cell.querySelector('.cm-editor');
    const probe = document.createElement('span');
    cell.querySelector('.cm-content').appendChild(probe);
    const theme = {{}};
    for (const k of ['keyword', 'string', 'comment', 'number', 'builtin', 'meta', 'variable']) {{
        probe.style.color = `var(--jp-mirror-editor-${{k}}-color)`;
        theme[k] = getComputedStyle(probe).color;
    }}
    probe.remove();
    const spans = [];     // each text node of the lines, with the classes of the spans around it
    for (const line of editor.querySelectorAll('.cm-line')) {{
        const walk = document.createTreeWalker(line, NodeFilter.SHOW_TEXT);
        for (let n = walk.nextNode(); n; n = walk.nextNode()) {{
            if (!n.textContent.trim()) continue;
            const el = n.parentElement, cs = getComputedStyle(el);
            let cls = [];
            for (let e = el; e && e !== line; e = e.parentElement) cls.push(...e.classList);
            spans.push({{text: n.textContent.trim(), cls: cls.join(' '),
                         magic: !!el.closest('.cm-streamsql-magic'), color: cs.color,
                         italic: cs.fontStyle === 'italic', bold: Number(cs.fontWeight) >= 600}});
        }}
    }}
    const plain = getComputedStyle(editor.querySelector('.cm-content')).color;
    return {{sql: editor.classList.contains('streamsql-sql-cell'), theme, plain, spans,
             text: editor.querySelector('.cm-content').innerText}};
}}"""


def _open(page, lab, name: str = NOTEBOOK) -> None:
    page.goto(f"{lab['base']}/lab/tree/{name}?reset&token={lab['token']}")
    page.wait_for_selector(f"{PANEL} .jp-Notebook .jp-Cell .cm-editor", timeout=120_000)
    page.wait_for_timeout(2000)
    select = page.locator(".jp-Dialog button", has_text="Select")
    if select.count():          # the kernel chooser, in case the preference is not honoured
        select.first.click()
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=120_000)


def _tokens(page, i: int) -> dict:
    """Cell ``i``'s tokens, once its highlighting is there (the language loads asynchronously)."""
    deadline = time.time() + 30
    while True:
        t = page.evaluate(TOKENS_JS, i)
        if any(s["color"] != t["plain"] for s in t["spans"]) or time.time() > deadline:
            return t
        page.wait_for_timeout(250)


def _token(t: dict, text: str, nth: int = 0) -> dict:
    found = [s for s in t["spans"] if s["text"] == text]
    assert len(found) > nth, f"no token {text!r} (#{nth}) among {[s['text'] for s in t['spans']]}"
    return found[nth]


def _kind(t: dict, text: str, kind: str, nth: int = 0) -> None:
    """Token ``text`` has CodeMirror's class for ``kind`` and the theme's colour for it."""
    s = _token(t, text, nth)
    assert f"tok-{kind}" in s["cls"].split(), (text, s)
    colour = {"typeName": "builtin", "bool": "keyword"}.get(kind, kind)
    assert s["color"] == t["theme"][colour], (text, kind, s, t["theme"])


def _shot(page, i: int, name: str) -> None:
    cell = page.locator(f"{PANEL} .jp-Notebook .jp-Cell").nth(i)
    cell.scroll_into_view_if_needed()
    page.wait_for_timeout(300)
    cell.screenshot(path=str(OUT / name))


@needs_chromium
def test_streamsql_cells_are_highlighted_as_sql_and_python_stays_python(lab):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1200})
            _open(page, lab)
            page.screenshot(path=str(OUT / "highlight-notebook.png"))

            # the %%streamsql cell: SQL, with the dialect's words
            t = _tokens(page, 1)
            assert t["sql"], "the %%streamsql cell is not marked as an SQL cell"
            for kw in ("CREATE", "STREAM", "INSERT", "INTO", "VALUES", "SELECT", "FROM", "GROUP", "BY", "AS", "TO",
                       "HOUR", "ROWTIME"):
                _kind(t, kw, "keyword")
            for ty in ("INTEGER", "VARCHAR", "DOUBLE", "TIMESTAMP"):
                _kind(t, ty, "typeName")
            for fn in ("FLOOR", "COUNT"):     # standard(name): no tok- class; the colour of builtins, not bold
                f = _token(t, fn)
                assert f["color"] == t["theme"]["builtin"] and not f["bold"] and "tok-keyword" not in f["cls"], f
            assert _token(t, "SELECT")["bold"]
            _kind(t, "'ORCL'", "string")
            _kind(t, "'2006-10-10 10:00:00'", "string")
            _kind(t, "42", "number")
            _kind(t, "1.5", "number")
            _kind(t, "10", "number")
            comment = _token(t, "-- orders per hour")
            _kind(t, "-- orders per hour", "comment")
            assert comment["italic"]
            # the magic's line is the magic's: its options are not an SQL comment
            magic = [s for s in t["spans"] if s["magic"]]
            assert "".join(s["text"] for s in magic).replace(" ", "") == "%%streamsql--namehourly"
            assert all(s["color"] == t["theme"]["meta"] and not s["italic"] for s in magic), magic
            _shot(page, 1, "highlight-sql-cell.png")

            # a Python cell stays Python: its keywords, comment and strings as Python's; no SQL
            p = _tokens(page, 2)
            assert not p["sql"]
            assert not any("tok-" in s["cls"] for s in p["spans"]), p["spans"]
            for kw in ("def", "return"):
                assert _token(p, kw)["color"] == p["theme"]["keyword"]
            assert _token(p, "# the sum of the prices")["color"] == p["theme"]["comment"]
            assert _token(p, "'a Python string'")["color"] == p["theme"]["string"]
            assert _token(p, "SELECT")["color"] != p["theme"]["keyword"]      # a Python name
            _shot(page, 2, "highlight-python-cell.png")

            # a %streamsql line magic is IPython: its SQL words are Python names
            m = _tokens(page, 3)
            assert not m["sql"]
            assert not any("tok-" in s["cls"] for s in m["spans"])
            for word in ("SELECT", "STREAM", "FROM", "WHERE"):
                (span,) = [s for s in m["spans"] if word in re.findall(r"\w+", s["text"])]
                assert span["color"] == m["plain"] and "tok-keyword" not in span["cls"], (word, span)
            _shot(page, 3, "highlight-line-magic.png")

            # Markdown: a `streamsql` code block is highlighted with the dialect (STREAM and
            # ROWTIME are keywords), a `sql` block with JupyterLab's standard SQL (they are not)
            blocks = page.locator(f"{PANEL} .jp-MarkdownCell .jp-RenderedMarkdown pre")
            blocks.first.wait_for(timeout=30_000)
            colours = page.evaluate("""(keyword) => [...document.querySelectorAll(
                    '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-MarkdownCell .jp-RenderedMarkdown pre')]
                .map(pre => Object.fromEntries([...pre.querySelectorAll('span')]
                    .map(s => [s.textContent, getComputedStyle(s).color])))""", None)
            keyword = t["theme"]["keyword"]
            assert colours[0].get("STREAM") == keyword and colours[0].get("ROWTIME") == keyword, colours
            assert colours[1].get("SELECT") == keyword and colours[1].get("STREAM") != keyword, colours
        finally:
            browser.close()


@needs_chromium
def test_typing_the_magic_turns_a_cell_into_sql_and_back(lab):
    """The language follows the cell's first line as it is typed and deleted."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1200})
            _open(page, lab)
            cell = page.locator(f"{PANEL} .jp-Notebook .jp-Cell").nth(2)
            before = _tokens(page, 2)
            assert not before["sql"] and _token(before, "SELECT")["color"] != before["theme"]["keyword"]

            cell.locator(".cm-content").click()
            page.keyboard.press("Control+Home")
            page.keyboard.type("%%streamsql\n")
            page.wait_for_timeout(500)
            t = _tokens(page, 2)
            assert t["sql"], "typing %%streamsql did not make the cell an SQL cell"
            _kind(t, "SELECT", "keyword")
            _kind(t, "42", "number")
            # '#' starts no comment in SQL
            assert not any("tok-comment" in s["cls"].split() for s in t["spans"]), t["spans"]
            _shot(page, 2, "highlight-typed-magic.png")
            # the language's comment syntax: Ctrl+/ comments a line out with SQL's --, and back
            cell.locator(".cm-line", has_text="SELECT =").click()
            page.keyboard.press("Control+/")
            page.wait_for_timeout(300)
            assert "-- SELECT = 'a Python string'" in _tokens(page, 2)["text"]
            page.keyboard.press("Control+/")
            page.wait_for_timeout(300)
            assert "\nSELECT = 'a Python string'" in _tokens(page, 2)["text"]

            page.keyboard.press("Control+Home")
            page.keyboard.press("Shift+ArrowDown")
            page.keyboard.press("Delete")
            page.wait_for_timeout(500)
            back = _tokens(page, 2)
            assert back["text"].startswith("def total"), back["text"]
            assert not back["sql"]
            assert not any("tok-" in s["cls"] for s in back["spans"])
            assert _token(back, "SELECT")["color"] != back["theme"]["keyword"]
            assert _token(back, "# the sum of the prices")["color"] == back["theme"]["comment"]
        finally:
            browser.close()


_end_sessions = end_sessions


def _run_all(page, n_code: int, timeout: float = 300) -> None:
    run_all(page, n_code, timeout, "highlight-errors")


#: cell ``i``'s marked SQL error: the marked text, its line's text, the tooltip; null if none
MARK_JS = f"""(i) => {{
    const cell = document.querySelectorAll('{PANEL} .jp-Notebook .jp-Cell')[i];
    const mark = cell.querySelector('.cm-editor .cm-streamsql-error, .cm-editor .cm-streamsql-error-caret');
    const lines = cell.querySelectorAll('.cm-editor .cm-streamsql-error-line');
    if (!mark && !lines.length) return null;
    return {{text: mark ? mark.textContent : null, lines: [...lines].map(l => l.textContent),
             title: mark ? mark.title : null, caret: !!(mark && mark.classList.contains('cm-streamsql-error-caret')),
             output: cell.querySelector('.jp-OutputArea') ? cell.querySelector('.jp-OutputArea').innerText : ''}};
}}"""


def _mark(page, i: int, present: bool = True, timeout: float = 30) -> dict | None:
    deadline = time.time() + timeout
    while True:
        m = page.evaluate(MARK_JS, i)
        if (m is not None) == present or time.time() > deadline:
            return m
        page.wait_for_timeout(250)


@needs_chromium
def test_a_sql_errors_position_is_marked_in_the_cells_editor(lab):
    """Run with a real kernel: the position the magic prints (``SQL error: line L:C: ...`` and a
    caret) is marked in the cell's editor, on the line L after the magic's; printed as text or
    raised (stop_on_error). Not where the kernel ran other text ({{name}} interpolation); gone
    when its line is edited; back, moved, when the cell runs again."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1400})
            _open(page, lab, ERRORS)
            _run_all(page, len(CELLS))
            text = page.locator(f"{PANEL} .jp-Notebook").inner_text()
            assert "SQL error: line 2:8: Column 'NME' not found" in text
            assert "SQL error: line 1:41: Syntax error near '('" in text

            m = _mark(page, 4)
            assert m is not None, "the printed SQL error is not marked"
            assert m["text"] == "nme" and m["lines"] == ["       nme"], m
            assert "Column 'NME' not found" in m["title"]
            _shot(page, 4, "highlight-error-marked.png")

            s = _mark(page, 7)
            assert s is not None, "the raised SQL error (stop_on_error) is not marked"
            assert s["text"] == "(" and s["lines"] == ["SELECT STREAM ROWTIME FROM Orders WHERE ("], s
            assert "CellError" in s["output"] or "Syntax error" in s["output"]
            _shot(page, 7, "highlight-error-raised.png")

            # the kernel ran 'ORCL' where the cell says {{name}}: no mark rather than a wrong one
            assert "SQL error: line 1:" in page.locator(f"{PANEL} .jp-Notebook .jp-Cell").nth(5).inner_text()
            assert _mark(page, 5, present=False, timeout=2) is None
            for i in (0, 1, 2, 3, 6):
                assert page.evaluate(MARK_JS, i) is None, i

            # an edit of the marked line takes the mark away; running the cell again marks anew
            cell = page.locator(f"{PANEL} .jp-Notebook .jp-Cell").nth(4)
            cell.locator(".cm-line", has_text="nme").click()
            page.keyboard.press("End")
            page.keyboard.type("x")
            assert _mark(page, 4, present=False) is None, "the mark stayed on an edited line"
            page.keyboard.press("Shift+Enter")
            m = _mark(page, 4)
            assert m is not None and m["text"] == "nmex" and "Column 'NMEX' not found" in m["title"], m
            page.screenshot(path=str(OUT / "highlight-errors-notebook.png"))
        finally:
            browser.close()
            _end_sessions(lab)
