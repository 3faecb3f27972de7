"""Foreign streams on the local runtime: the directory is listed when the reader starts and each
time a query waits; files not read yet are split into records with Python's csv module (the
rest, typing and stamping, is :class:`~streamsql.engine.foreign.FileReader`'s)."""
from __future__ import annotations

import csv

import pyarrow as pa

from ...foreign import FileReader, numbered_lines


class PolledFileReader(FileReader):
    def start(self) -> None:
        self.poll()

    def wait(self) -> None:
        self.poll()

    def poll(self) -> int:
        """Read the files not read yet, in name order; returns how many."""
        n = 0
        for path in self.listing():
            if path in self.done:
                continue
            o = self.opts
            width = len(self.fields)
            lines = numbered_lines(path, o["encoding"], o["skip_header"])
            cols: list[list] = [[] for _ in range(width)]
            corrupt = []
            for _lineno, text, problem in lines:
                try:
                    parsed = None if problem else next(iter(csv.reader([text], delimiter=o["separator"])))
                except (csv.Error, StopIteration):
                    parsed = None
                if parsed is None or len(parsed) != width:
                    corrupt.append(text)
                    for c in cols:
                        c.append(None)
                else:
                    corrupt.append(None)
                    for c, v in zip(cols, parsed):
                        c.append(v)
            self.load_file(path, [pa.array(c, pa.string()) for c in cols], corrupt, lines)
            n += 1
        return n
