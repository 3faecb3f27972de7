"""A session recorded as a scenario (the replay format, the semantics, section 5):
``Workbench.save_scenario``.

``NAME.sql`` holds what the query needs, in the order it was made: the streams it reads (and
those that feed them through pumps), the tables (with their rows as INSERTs), views and pumps,
then the query. ``NAME.events.jsonl`` holds the events injected into those streams, from the
event journal (:mod:`streamsql.engine.journal`): rows, bounds (strict included), producers attaching and
detaching, late and refused events too, since a replay must print their lines.
``NAME.expected.jsonl`` holds what the query released, its late rows, refused events, the rows
it refused for calculator errors (``calc_error``) and output bounds, as ``streamsql replay
--bounds`` prints them, numbered by the events file's lines.

A query started after events had already flowed into its streams (a *late start*) saw only part
of their history. Its scenario starts with a few events that put the streams in the state the
query found them in (each producer's clock as a bound, rows held for a slower producer), then
the events since the query started: replayed from scratch it gives the lines the query gave,
after those first steps (``SavedScenario.prefix`` says how many; their lines are the output
bound those clocks imply). A stream fed by a pump cannot be put in such a state by events (the
pump's own windows would be missing), so a late start over pumps is refused unless
``from_start=True``: then every event since the streams were created is saved and the expected
lines are those of a query started before the first of them (computed on the local runtime),
which the running query did not see in full.

The modules: what the query needs as SQL (:mod:`.closure`), the events file (:mod:`.events`),
the expected lines (:mod:`.expected`) and the saving itself (:mod:`.save`).
"""
from __future__ import annotations

from .errors import SaveError
from .save import SavedScenario, pick_query, save_scenario

__all__ = ["SaveError", "SavedScenario", "pick_query", "save_scenario"]
