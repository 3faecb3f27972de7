"""Helpers for the tutorial notebooks in ``notebooks/``: scenario files, deterministic text tables,
checks of the engine's output against the seeds' tables, and the exercises' answer checkers.

``basics`` serves notebooks 01-04 (streams, punctuation, merging, windowed aggregation); other
modules serve the later notebooks.
"""
