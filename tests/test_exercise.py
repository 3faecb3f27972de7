"""``streamsql.exercise(NAME)``: a saved scenario with its output hidden, one prediction per output
row, Check marks them against the expected file and shows the real step table."""
from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

import streamsql
from streamsql import Workbench
from streamsql.engine.errors import StreamSqlError

JOIN1 = Path(__file__).resolve().parent.parent / "streamsql" / "scenarios" / "join1_inner_following"


def test_the_form_hides_the_output_and_checks_predictions():
    ex = streamsql.exercise(JOIN1)
    # seed 002, join #1: order 1 (10:00) meets the 10:02 trade at step 3 and the 10:07:30 one at
    # step 5; order 2's match (stamped 10:03) waits until no more 10:00 rows can come, i.e. the
    # Trades clock reaches 10:10 (the 10:11 bound, step 6). The form shows none of that.
    text = ex.text()
    assert "released at step? _" in text and "Output |" not in text
    assert [ex.row_text(i) for i in range(len(ex.rows))] == [
        "1. 10:00 orderId=1, ticker=ORCL, orderAmount=100, tradeAmount=60",
        "2. 10:00 orderId=1, ticker=ORCL, orderAmount=100, tradeAmount=30",
        "3. 10:03 orderId=2, ticker=YHOO, orderAmount=25, tradeAmount=25"]
    events = ex.events_table()
    assert events[0] == ["Step", "Orders", "Trades"] and events[6] == ["6", "", "10:11 bound"]
    ex.predict([3, 3, 3])                        # typed, then changed on screen before the click:
    ex.form._message(ex.form, {"op": "check", "id": "c1", "values": {"a0": "3", "a1": "4", "a2": ""}}, [])
    assert ex.marks == [True, False, None]       # the click's values are the ones checked
    assert ex.form.marks == {"a0": "good", "a1": "bad"}
    assert "1 of 3 right" in ex.result.value and 'class="streamsql-exercise-marks"' in ex.result.value
    # the real step table, computed by a replay, agrees with the expected file's steps
    out = {r[0]: r[-1] for r in ex.step_rows[1:]}
    assert [s for s, o in out.items() if o] == [str(a) for a in ex.answers] == ["3", "5", "6"]
    assert "1 of 3 right" in ex.text() and "Output" in ex.text()
    ex.predict(["3", "5", "6"])
    assert ex.check() == [True, True, True]


def test_it_renders_as_a_widget_with_a_text_form():
    ex = streamsql.exercise(JOIN1)
    data = ex._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in data
    assert data["text/plain"].startswith("Exercise join1_inner_following: predict the step")
    html = ex.children[0].value
    assert 'class="streamsql-exercise-events"' in html and "JOIN Trades OVER" in html


def test_a_saved_session_is_an_exercise(tmp_path):
    with Workbench(tmp_path / "ws", engine="local") as wb:
        wb.execute("CREATE STREAM P (name VARCHAR(10)); CREATE STREAM Q (name VARCHAR(10))")
        wb.query("SELECT STREAM ROWTIME, name FROM P UNION ALL SELECT STREAM ROWTIME, name FROM Q")
        wb.insert("P", {"name": "p1"}, rowtime="2006-10-10 01:00:00")
        wb.insert("Q", {"name": "q1"}, rowtime="2006-10-10 01:02:00")
        wb.punctuate("P", "2006-10-10 01:05:00")
        wb.save_scenario(tmp_path / "lesson")
    ex = streamsql.exercise(tmp_path / "lesson")
    # p1 waits for Q's clock (step 2); q1 waits for P's clock to pass 01:02 (the bound, step 3)
    assert ex.answers == [2, 3]
    assert ex.predict([2, 2]).check() == [True, False]


def test_errors_say_what_is_missing(tmp_path):
    for ext in (".sql", ".events.jsonl"):
        shutil.copy(f"{JOIN1}{ext}", tmp_path / f"j{ext}")
    with pytest.raises(StreamSqlError, match="no expected output"):
        streamsql.exercise(tmp_path / "j")
    with pytest.raises(StreamSqlError, match="not found"):
        streamsql.exercise(tmp_path / "nothing")


def test_it_displays_in_a_kernel(tmp_path):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        f"import streamsql\nex = streamsql.exercise({str(JOIN1)!r})\nex")])
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    out = nb.cells[0].outputs
    # the live widget, then its static snapshot (what a saved notebook shows without a kernel)
    assert [o.output_type for o in out] == ["display_data", "display_data"]
    assert "application/vnd.jupyter.widget-view+json" in out[0].data
    assert out[0].data["text/plain"].startswith("Exercise join1_inner_following")
    assert 'class="streamsql-static"' in out[1].data["text/html"]
    assert "Exercise join1_inner_following" in out[1].data["text/html"] and "released at step? _" in out[1].data["text/html"]
