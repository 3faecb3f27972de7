"""The magics in a real IPython kernel (nbclient talking to ipykernel over ZMQ), on Spark: Spark
starts once, lazily, after a visible "starting Spark…" line; errors come back as one clean stderr
line (never an error output with a traceback) and the kernel keeps working."""
from __future__ import annotations

import re

import nbformat
import pytest
from nbclient import NotebookClient

CELLS = [
    "%load_ext streamsql",
    "%%streamsql\nCREATE STREAM P (name VARCHAR(10));\nCREATE STREAM Q (name VARCHAR(10))",
    "%%streamsql -n merged -o merged\nSELECT STREAM ROWTIME, name FROM P UNION ALL SELECT STREAM ROWTIME, name FROM Q",
    "%%streamsql -n only_p\nSELECT STREAM ROWTIME, name FROM P WHERE name <> 'x'",
    "who = \"o'brien\"\n%streamsql INSERT INTO P (ROWTIME, name) VALUES (TIMESTAMP '2006-10-10 01:00:00', {{who}})",
    "%%streamsql\nINSERT INTO Q (ROWTIME, name) VALUES (TIMESTAMP '2006-10-10 01:00:00', 'q1');\n"
    "SELECT STREAM ROWTIME, nme FROM Q",
    "%streamsql INSERT INTO P (ROWTIME, name) VALUES (TIMESTAMP '2006-10-10 00:00:00', 'late')",
    "merged.wait().to_pandas().to_dict('records')",
    "%streamsql queries",
]


class Outputs(list):
    """The cells' outputs, and ``widgets``: the widget models' last state, by model id."""
    widgets: dict


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in CELLS])
    cwd = tmp_path_factory.mktemp("kernel")
    client = NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=True, record_timing=False,
                            store_widget_state=True, resources={"metadata": {"path": str(cwd)}})
    client.execute()
    outputs = Outputs(c.outputs for c in nb.cells)
    outputs.widgets = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    return outputs


def streams(outs, name):
    return "".join(o.text for o in outs if o.output_type == "stream" and o.name == name)


def test_no_cell_raised(outputs):
    for i, outs in enumerate(outputs):
        assert [o for o in outs if o.output_type == "error"] == [], CELLS[i]
        assert "Traceback" not in streams(outs, "stderr")


def test_spark_starts_once_lazily_with_a_status_line(outputs):
    assert streams(outputs[1], "stdout") == "Stream P created\nStream Q created\n"      # DDL: no Spark yet
    assert streams(outputs[2], "stdout") == "starting Spark (local[*])…\nQuery merged started\nSpark is ready.\n"
    assert streams(outputs[3], "stdout") == "Query only_p started\n"                    # already running
    assert [o for o in outputs[3] if "Start-up" in o.get("data", {}).get("text/plain", "")] == []
    shown = [o for o in outputs[2] if o.output_type == "display_data"]
    startup, view = [o for o in shown if "application/vnd.jupyter.widget-view+json" in o.data]
    # beside each live view, its static snapshot (text/html only; the widget's own html is empty)
    statics = [o.data["text/html"] for o in shown if "text/plain" not in o.data]
    assert len(statics) == 2 and startup.data["text/html"] == view.data["text/html"] == ""
    assert "Start-up: JVM · Spark session · plan · first batch" in statics[0]        # no times: deterministic
    assert 'class="streamsql-static"' in statics[1] and "Query merged (running)" in statics[1]
    assert "application/vnd.jupyter.widget-view+json" in view.data
    assert view.data["text/plain"].startswith("Query merged (running): 0 rows released")
    # the start-up line: the phases without times in the stored output, with times live
    assert startup.data["text/plain"] == "Start-up: JVM · Spark session · plan · first batch"
    live = outputs.widgets[startup.data["application/vnd.jupyter.widget-view+json"]["model_id"]]["state"]["value"]
    assert re.search(r"Start-up: JVM \d+\.\d s · Spark session \d+\.\d s · plan \d+\.\d s · first batch \d+\.\d s"
                     r" — first result after \d+\.\d s", live), live


def test_errors_are_one_clean_line_and_the_kernel_goes_on(outputs):
    assert streams(outputs[4], "stdout") == "1 row inserted into P\n"                # {{who}} with its quote
    assert streams(outputs[5], "stdout") == "1 row inserted into Q\n"
    assert streams(outputs[5], "stderr").splitlines() == [
        "SQL error: line 2:24: Column 'NME' not found", "  SELECT STREAM ROWTIME, nme FROM Q",
        "                         ^"]
    assert streams(outputs[6], "stderr").splitlines() == [
        "error: late row in stream P: rowtime 2006-10-10 00:00:00 is before the stream clock 2006-10-10 01:00:00; "
        "the row was rejected (see the error stream)"]
    assert streams(outputs[6], "stdout") == ""                    # the engine's log went to the workspace


def test_bound_query_and_listing(outputs):
    result = [o for o in outputs[7] if o.output_type == "execute_result"][0]
    assert result.data["text/plain"] == ("[{'STEP': 2, 'ROWTIME': '2006-10-10 01:00:00', 'NAME': \"o'brien\"},\n"
                                         " {'STEP': 2, 'ROWTIME': '2006-10-10 01:00:00', 'NAME': 'q1'}]")
    listing = [o for o in outputs[8] if o.output_type == "execute_result"][0]
    assert 'class="streamsql-queries"' in listing.data["text/html"]
    lines = listing.data["text/plain"].splitlines()
    assert lines[-2].split("|")[:5] == ["merged ", " running ", " spark  ", " P, Q    ", " 2    "]
    assert lines[-1].split("|")[:5] == ["only_p ", " running ", " spark  ", " P       ", " 1    "]
