"""The plan Spark runs for a query, with the per-run noise (expression ids, object hashes,
temporary paths) taken out, so that the same query explains the same way every time."""
from __future__ import annotations

import re

_NOISE = [
    (re.compile(r"#\d+L?"), ""),                                  # expression ids
    (re.compile(r"@[0-9a-f]{4,}"), ""),                           # JVM object hashes
    (re.compile(r"(\"root\": \")[^\"]*(\")"), r"\1<workspace>\2"),  # the workspace directory
    (re.compile(r"(/tmp|/var/folders)/[^\s,\]\"']*"), "<tmp>"),
    (re.compile(r"\b(id|runId) = [0-9a-f-]{36}"), r"\1 = <id>"),
]


def spark_plan(q, workspace) -> str:
    """The physical plan of the streaming DataFrame the query runs on Spark (``workspace``: its
    directory, which the text names ``<workspace>``)."""
    df = getattr(q.handle, "df", None)
    if df is None:
        return f"(query {q.name} has no Spark plan: it is not running on Spark)"
    if hasattr(df, "_jdf"):
        text = df._sc._jvm.PythonSQLUtils.explainString(df._jdf.queryExecution(), "simple")
    else:                    # a Spark Connect DataFrame: the server explains it
        text = df._explain_string(mode="simple")
    text = text.replace(str(workspace), "<workspace>")
    for rx, repl in _NOISE:
        text = rx.sub(repl, text)
    return text.rstrip()

