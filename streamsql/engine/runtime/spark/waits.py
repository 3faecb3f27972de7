"""The places where a thread waits for work Spark's own threads do, named for the lock-order
record (``engine/locks.py``, :class:`~streamsql.engine.locks.Waited`): stopping a query (or
``processAllAvailable``) waits for the batch its ``foreachBatch`` is delivering, a foreign stream's
stop waits for the batch that loads its files, and a query start waits for the session that the
background start is making. None of that work may wait for a lock its waiters hold."""
from __future__ import annotations

from ...locks import Waited

#: a continuous query's batch being delivered to the workbench (``foreachBatch``, or the
#: follower of a Spark Connect query): it takes no workbench lock it would wait for
QUERY_BATCH = Waited("spark-query-batch")
#: a foreign stream's batch, which loads its files into the stream (under the workbench's lock)
READER_BATCH = Waited("spark-reader-batch")
#: the SparkSession being started in the background (session.start_ahead)
SPARK_START = Waited("spark-start")
