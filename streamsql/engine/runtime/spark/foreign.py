"""Foreign streams on the Spark runtime: Spark's streaming CSV source reads the directory (and
files added later) as strings, malformed records kept whole; each micro-batch's files are handed,
file by file in name order, to :meth:`~streamsql.engine.foreign.FileReader.load_file`."""
from __future__ import annotations

import os

import pyarrow.compute as pc

from ...foreign import CORRUPT, MAX_CSV_FIELDS, FileReader
from ...paths import under
from .waits import READER_BATCH


def local_path(uri: str) -> str:
    return uri[len("file://"):] if uri.startswith("file://") else (uri[5:] if uri.startswith("file:") else uri)


class SparkFileReader(FileReader):
    def __init__(self, host, stream: str, spark):
        super().__init__(host, stream)
        self.spark = spark
        self.sq = None

    def start(self) -> None:
        schema = ", ".join([f"`c{i}` STRING" for i in range(len(self.fields))] + [f"`{CORRUPT}` STRING"])
        o = self.opts
        folder = under(self.host.path, "foreign", self.host.catalog.streams[self.stream].uid)
        df = (self.spark.readStream.schema(schema)
              .option("header", "true" if o["skip_header"] else "false")
              .option("sep", o["separator"]).option("encoding", o["encoding"])
              .option("mode", "PERMISSIVE").option("columnNameOfCorruptRecord", CORRUPT)
              .option("maxFilesPerTrigger", o["max_files"])
              # a record with more fields than this stops Spark's CSV parser even in PERMISSIVE mode
              # (it is not a malformed record to it): far above its default of 20,480
              .option("maxColumns", MAX_CSV_FIELDS)
              .csv(o["directory"])
              .selectExpr("*", "input_file_name() AS _file"))

        def batch(bdf, _bid):
            with READER_BATCH.running():        # the reader's stop waits for this
                self._load_batch(bdf)
        self.sq = (df.writeStream.foreachBatch(batch).option("checkpointLocation", str(folder / "checkpoint"))
                   .queryName(f"streamsql_foreign_{self.stream}_{id(self)}").start())

    def _load_batch(self, bdf) -> None:
        t = bdf.toArrow()
        files = sorted(set(t.column("_file").to_pylist()))
        for f in files:
            path = local_path(f)
            if not self.rx.fullmatch(os.path.basename(path)) or path in self.done:
                continue
            rows = t.filter(pc.equal(t.column("_file"), f))
            self.load_file(path, [rows.column(f"c{i}").combine_chunks() for i in range(len(self.fields))],
                           rows.column(CORRUPT).to_pylist())

    def wait(self) -> None:
        if self.sq is not None:
            READER_BATCH.wait_point()
            self.sq.processAllAvailable()

    def stop(self) -> None:
        if self.sq is not None:
            READER_BATCH.wait_point()
            try:
                self.sq.stop()
            except Exception:
                pass
            self.sq = None
