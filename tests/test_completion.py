"""Tab completion in %%streamsql cells and %streamsql lines, through IPython's own completer
(``Completer.completions``, which the terminal and JupyterLab's complete_request use) and once
through a real kernel's complete_request."""
from __future__ import annotations

import pytest
from IPython.core.completer import provisionalcompleter
from IPython import get_ipython
from IPython.testing.globalipapp import start_ipython
from IPython.utils.capture import capture_output

DDL = """%%streamsql
CREATE STREAM Orders (orderId INTEGER, ticker VARCHAR(10), amount INTEGER);
CREATE STREAM Trades (orderId INTEGER, ticker VARCHAR(10), price DOUBLE);
CREATE TABLE Ref (k INTEGER, "Full Name" VARCHAR(20));
CREATE VIEW BigOrders AS SELECT STREAM ROWTIME, orderId, amount * 2 AS doubled FROM Orders WHERE amount > 10"""


@pytest.fixture(scope="module")
def ip():
    shell = start_ipython() or get_ipython()      # started once per process (other test files too)
    shell.run_line_magic("load_ext", "streamsql")
    shell.run_line_magic("config", "StreamSql.engine = 'local'")
    with capture_output():
        shell.run_line_magic("streamsql", "reset")
        assert shell.run_cell(DDL).success
        assert shell.run_cell("%%streamsql -n watch\nSELECT STREAM ROWTIME, orderId FROM Orders").success
    return shell


def complete(ip, text: str, cursor: int | None = None) -> list[str]:
    """Completion texts at ``cursor`` (default: the end; ``|`` in ``text`` marks it)."""
    if cursor is None and "|" in text:
        cursor = text.index("|")
        text = text.replace("|", "", 1)
    with provisionalcompleter():
        cs = list(ip.Completer.completions(text, len(text) if cursor is None else cursor))
    return [c.text for c in cs]


def test_statement_keywords(ip):
    assert complete(ip, "%%streamsql\nSEL") == ["SELECT"]
    assert complete(ip, "%%streamsql\nsel") == ["select"]                 # the case the user types
    assert complete(ip, "%%streamsql\nCREATE ") == ["STREAM", "TABLE", "VIEW", "PUMP", "OR", "FOREIGN"]
    assert "STREAM" in complete(ip, "%%streamsql\nSELECT ST")
    assert "WITHIN" in complete(ip, "%%streamsql\nSELECT STREAM ROWTIME FROM Orders ORDER BY ROWTIME WI")


def test_streams_views_and_tables_after_from_join_into(ip):
    assert complete(ip, "%%streamsql\nSELECT STREAM ROWTIME FROM Or") == ["Orders"]
    assert complete(ip, "%%streamsql\nSELECT STREAM * FROM Orders AS o JOIN Tr") == ["Trades"]
    assert complete(ip, "%%streamsql\nSELECT STREAM * FROM Orders, Tr") == ["Trades"]
    assert complete(ip, "%%streamsql\nSELECT STREAM * FROM Bi") == ["BigOrders"]
    assert complete(ip, "%%streamsql\nINSERT INTO ") == ["ERRORS", "Orders", "Trades", "Ref"]
    assert complete(ip, "%%streamsql\nDROP VIEW ") == ["BigOrders"]
    # nothing from Python's completers in a SQL cell
    assert complete(ip, "%%streamsql\nSELECT STREAM ROWTIME FROM Zz") == []


def test_columns_after_alias_dot(ip):
    orders = ["ROWTIME", "orderId", "ticker", "amount"]
    assert complete(ip, "%%streamsql\nSELECT STREAM o.| FROM Orders AS o") == orders
    assert complete(ip, "%%streamsql\nSELECT STREAM o.ord| FROM Orders o") == ["orderId"]
    join = ("%%streamsql\nSELECT STREAM ROWTIME, o.orderId\nFROM Orders AS o\n"
            "JOIN Trades OVER (RANGE INTERVAL '10' MINUTE FOLLOWING) AS t\nON o.orderId = t.")
    assert complete(ip, join) == ["ROWTIME", "orderId", "ticker", "price"]
    assert complete(ip, "%%streamsql\nSELECT STREAM Trades.p| FROM Trades") == ["price"]   # a relation name
    assert complete(ip, "%%streamsql\nSELECT STREAM b.| FROM BigOrders b") == ["ROWTIME", "orderId", "doubled"]
    assert complete(ip, '%%streamsql\nSELECT STREAM r."F| FROM Orders o JOIN Ref r ON o.orderId = r.k') == \
        ['"Full Name"']
    # a sub-query and a WITH name
    assert complete(ip, "%%streamsql\nSELECT STREAM s.| FROM (SELECT STREAM ROWTIME, amount AS a2 FROM Orders) AS s") \
        == ["ROWTIME", "a2"]
    assert complete(ip, "%%streamsql\nWITH w AS (SELECT STREAM ROWTIME, orderId AS oid FROM Orders)\n"
                        "SELECT STREAM w.o| FROM w") == ["oid"]


def test_the_statement_under_the_cursor_in_a_multi_statement_cell(ip):
    cell = ("%%streamsql -n two\nINSERT INTO Orders (ROWTIME, orderId) VALUES (TIMESTAMP '2006-10-10 10:00:00', 1);\n"
            "SELECT STREAM x.| FROM Trades AS x;\nSELECT STREAM x.ticker FROM Orders AS x")
    assert complete(ip, cell) == ["ROWTIME", "orderId", "ticker", "price"]        # Trades', not Orders'


def test_unqualified_columns_functions_and_no_completion_in_strings(ip):
    got = complete(ip, "%%streamsql\nSELECT STREAM ROWTIME, am| FROM Orders")
    assert got == ["amount"]
    got = complete(ip, "%%streamsql\nSELECT STREAM FL")
    assert got == ["FLOOR"]
    assert "COUNT" in complete(ip, "%%streamsql\nSELECT STREAM CO")
    assert "CHAR_LENGTH" in complete(ip, "%%streamsql\nSELECT STREAM CH")
    assert complete(ip, "%%streamsql\nSELECT STREAM * FROM Orders WHERE ticker = 'Or") == []


def test_line_magic(ip):
    assert complete(ip, "%streamsql SELECT STREAM o.| FROM Orders o") == ["ROWTIME", "orderId", "ticker", "amount"]
    assert complete(ip, "%streamsql st") == ["streams", "stop", "steps"]
    assert complete(ip, "%streamsql stop ") == ["watch"]
    assert complete(ip, "%streamsql save lesson --query w") == ["watch"]
    assert complete(ip, "%streamsql -n q INSERT INTO Tr") == ["Trades"]
    # a line magic inside Python code
    assert complete(ip, "x = 1\n%streamsql SELECT STREAM * FROM Ord") == ["Orders"]


def test_names_in_scope_first_and_only_the_words_that_fit_the_place(ip):
    """Where an expression starts, the columns in scope come first, then the functions, then the
    keywords an expression can start with: no window words outside OVER (...), no DDL words, no
    clause words before there is anything to follow, no columns of the engine's ERRORS stream."""
    with capture_output():
        assert ip.run_cell("%%streamsql\nCREATE STREAM Sales (productId INTEGER, units INTEGER, pumpNo INTEGER)").success
    try:
        assert complete(ip, "%%streamsql\nSELECT STREAM p| FROM Sales") == ["productId", "pumpNo", "position", "power"]
        assert complete(ip, "%%streamsql\nSELECT STREAM ROWTIME, un| FROM Sales") == ["units"]
        assert complete(ip, "%%streamsql\nSELECT STREAM p") == ["price", "productId", "pumpNo", "position", "power"]
        assert complete(ip, "%%streamsql\nSELECT STREAM ROWTIME, units FROM Sales un") == ["union"]   # after an expression
        assert complete(ip, "%%streamsql\nSELECT STREAM ROWTIME FROM Sales WHERE units > 1 a") == ["and"]
        # inside OVER (...): the window's words, columns after BY
        over = "%%streamsql\nSELECT STREAM ROWTIME, SUM(units) OVER ("
        assert complete(ip, over + "| FROM Sales") == ["PARTITION", "BY", "ORDER", "RANGE", "ROWS", "INTERVAL",
                                                      "PRECEDING", "FOLLOWING", "UNBOUNDED", "CURRENT", "ROW", "AND",
                                                      "BETWEEN"]
        assert complete(ip, over + "PARTITION BY p| FROM Sales") == ["productId", "pumpNo"]
        assert complete(ip, over + "PARTITION BY productId R| FROM Sales") == ["RANGE", "ROWS", "ROW"]
        # a type after CAST(x AS, a unit after INTERVAL '10'
        assert complete(ip, "%%streamsql\nSELECT STREAM CAST(units AS V| FROM Sales") == ["VARCHAR"]
        assert complete(ip, "%%streamsql\nSELECT STREAM FLOOR(ROWTIME TO H| FROM Sales") == ["HOUR"]
        # the magic's own words, nothing else
        assert complete(ip, "%streamsql ") == ["streams", "queries", "stop", "reset", "load", "show", "workbench",
                                               "steps", "timeline", "explain", "help", "save", "native", "SELECT",
                                               "CREATE", "INSERT", "DROP", "ALTER", "WITH"]
    finally:
        with capture_output():
            ip.run_cell("%%streamsql\nDROP STREAM Sales")


def test_python_cells_are_left_to_python(ip):
    ip.user_ns["some_variable"] = 1
    assert "some_variable" in complete(ip, "some_var")


def test_completion_through_a_real_kernel(engine):
    """JupyterLab asks the kernel (complete_request); ipykernel hands the whole cell and cursor to
    IPython's completer, which runs the matcher. (The kernel is on the test session's shared
    engine: ``%load_ext`` opens a Connect session ahead instead of starting a JVM.)"""
    from jupyter_client.manager import start_new_kernel
    from engine_support import env_for
    km, kc = start_new_kernel(kernel_name="python3", env=env_for(engine))
    try:
        for code in ("%load_ext streamsql", "%config StreamSql.engine = 'local'", DDL):
            reply = kc.execute_interactive(code, timeout=120)
            assert reply["content"]["status"] == "ok", code
        code = "%%streamsql\nSELECT STREAM o.ord FROM Orders AS o"
        cursor = code.index("o.ord") + len("o.ord")
        kc.complete(code, cursor)
        reply = kc.get_shell_msg(timeout=60)["content"]
        assert reply["status"] == "ok"
        assert reply["matches"] == ["orderId"]
        assert (reply["cursor_start"], reply["cursor_end"]) == (cursor - len("ord"), cursor)
        kc.complete("%%streamsql\nSELECT STREAM ROWTIME FROM Tr", None)
        assert kc.get_shell_msg(timeout=60)["content"]["matches"] == ["Trades"]
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
