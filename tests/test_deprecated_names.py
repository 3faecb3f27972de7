"""The old public names of the step (``seq``) still work for one release: each reads (and sets)
the new name and warns with a DeprecationWarning that names the new name."""
from __future__ import annotations

import pytest
from streamsql import Workbench
from streamsql.engine.runtime.released import ReleasedBatch


def test_old_names_read_the_new_ones_with_a_warning():
    wb = Workbench(None, engine="local")
    try:
        wb.execute("CREATE STREAM S (v INTEGER)")
        wb.insert("S", {"v": 0}, rowtime="2006-10-10 09:00:00")
        q = wb.query("SELECT STREAM ROWTIME, v FROM S")
        o = wb.insert("S", {"v": 1}, rowtime="2006-10-10 10:00:00")
        q.wait()
        b = ReleasedBatch(7)
        for obj, old, new in ((wb, "last_seq", "last_step"), (q, "start_seq", "start_step"),
                              (q, "processed_seq", "processed_step"), (o, "seq", "step"), (b, "seq", "step")):
            cls = type(obj).__name__
            with pytest.warns(DeprecationWarning, match=rf"{cls}\.{old} is deprecated.*use {cls}\.{new}\b") as w:
                assert getattr(obj, old) == getattr(obj, new)
            assert w[0].filename == __file__          # the warning points at the caller
        assert (wb.last_step, q.start_step, q.processed_step, o.step) == (2, 1, 2, 2)
        with pytest.warns(DeprecationWarning, match="processed_seq"):
            q.processed_seq = 5
        assert q.processed_step == 5
    finally:
        wb.close()
