"""File sinks on the Spark runtime: each chunk of released rows is written by Spark, one
directory per chunk (overwritten if the chunk comes again)."""
from __future__ import annotations

import pyarrow as pa

from ...sinks import FileSink


class SparkFileSink(FileSink):
    def __init__(self, query, path, format: str, spark):
        super().__init__(query, path, format)
        self.spark = spark

    def write_files(self, table: pa.Table, name: str) -> None:
        w = self.spark.createDataFrame(table).coalesce(1).write.mode("overwrite")
        (w.option("header", "true").csv if self.format == "csv" else w.parquet)(str(self.path / name))
