"""File sinks on the local runtime: each chunk of released rows is one file written by pyarrow."""
from __future__ import annotations

import pyarrow as pa

from ...sinks import FileSink


class ArrowFileSink(FileSink):
    def write_files(self, table: pa.Table, name: str) -> None:
        if self.format == "parquet":
            import pyarrow.parquet as pq
            pq.write_table(table, self.path / f"{name}.parquet")
        else:
            import pyarrow.csv as pcsv
            pcsv.write_csv(table, self.path / f"{name}.csv")
