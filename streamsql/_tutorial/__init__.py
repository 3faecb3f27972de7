"""Helpers for the tutorial notebooks in ``notebooks/``: scenario files, deterministic text tables,
checks of the engine's output against the seeds' tables, and the exercises' answer checkers.
Not part of streamsql's API (hence the underscore): they serve the notebooks and may change with
them. No exercise's answer is stored here: a checker asks the engine, or compares a digest of
what the learner gave with the digest of the answer derived by hand (the hand-derived answers
are in the tests, which hold them to the engine).

One module per group of notebooks: ``basics`` serves notebooks 01-04 (streams, punctuation,
merging, windowed aggregation), ``joins`` notebook 05 (streaming joins, seed 002), ``calcite``
notebook 06 (Calcite's tour, seed 004) and ``scale`` notebook 07 (a million trades); ``common``
holds what they share.
"""
