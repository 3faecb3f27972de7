"""The process's Spark Connect sessions, one per endpoint, opened on first use or ahead of it.

A session that the endpoint's server dropped is forgotten (:func:`forget_remote`) and opened again
on next use; at exit it is closed here, without a call to a server that may be gone.
"""
from __future__ import annotations

import logging
import re
import threading
import time

from ...locks import engine_lock
from ...startup import READY
from .session import LOW_LATENCY_CONF

log = logging.getLogger("streamsql.spark")

_remote_lock = engine_lock("connect-session")
_remotes: dict[str, object] = {}       # url -> the Connect session this process holds there
_remote_ahead: dict[str, tuple] = {}    # url -> (opened at, up at): opened ahead, not yet used
_remote_prestart: threading.Thread | None = None     # the thread opening a session ahead of use


def is_connect(spark) -> bool:
    """Whether ``spark`` is a Spark Connect session (its ``foreachBatch`` runs in the server)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def get_remote_session(url: str, on_start=None, on_phase=None):
    """The process's session on the Spark Connect endpoint ``url`` (``sc://host:port/;token=...``),
    opened on first use, with the log source registered and the session settings of
    :data:`LOW_LATENCY_CONF` that a session may set (a server's static settings are its own)."""
    with _remote_lock:
        spark = _remotes.get(url)
        if spark is not None:
            ahead = _remote_ahead.pop(url, None) if threading.current_thread() is not _remote_prestart else None
            if ahead is not None:     # opened ahead of use: its first user reports it, as a start
                if on_start:
                    on_start()
                if on_phase:
                    on_phase("Spark session", ahead[0])
                    on_phase(READY, ahead[1])
            return _activate(spark)
        opened_at = time.monotonic()
        if on_start:
            on_start()
        if on_phase:
            on_phase("Spark session")
        try:
            from pyspark.sql import SparkSession
        except ImportError as e:      # the Connect client's packages (pyspark[connect])
            raise RuntimeError(f"the Spark Connect client is not installed ({e}): pip install 'pyspark[connect]'") from None
        spark = None
        try:
            spark = SparkSession.builder.remote(_loopback(url)).create()
            _short_retries(spark)
            # one round trip (a wrong token or a server that is not there shows now): the session
            # settings a session may set; a server's static settings are its own (silently kept)
            spark.conf._set_all(configs={k: v for k, v in LOW_LATENCY_CONF.items() if k.startswith("spark.sql.")},
                                silent=True)
        except Exception as e:
            if spark is not None:
                _close_locally(spark, url)
            from .server import EngineError
            raise EngineError(f"cannot open a Spark Connect session on {_safe(url)}: {_first_line(e)}") from None
        from .source import register
        register(spark)
        # a relational query's ORDER BY is one sort over one partition by design (relational.py):
        # the Connect client warns about it in the user's cell, where classic Spark logs it
        import warnings
        warnings.filterwarnings("ignore", message="WARN WindowExpression: No Partition Defined", category=UserWarning)
        _remotes[url] = spark
        if threading.current_thread() is _remote_prestart:
            _remote_ahead[url] = (opened_at, time.monotonic())
        # at exit, close it here without a call (PySpark's own exit hook would call a server that
        # may be gone: seconds of retries); the server drops the session after its timeout
        import atexit
        atexit.register(_close_locally, spark, url)
        return _activate(spark)


def _activate(spark):
    """``spark`` as this thread's active Connect session: PySpark parses DDL strings (a stage's
    output schema) through the active session, which must be this one and a live one."""
    type(spark)._active_session.session = spark
    return spark


def _close_locally(spark, url: str) -> None:
    """Close a Connect session without a call to its server (a wrong token, a server gone), so
    that it is no longer the process's default or active session."""
    spark.release_session_on_close = False
    try:
        spark.stop()
    except Exception as e:   # noqa: BLE001 - closing a channel to a server that refuses us or is gone
        log.info("closing the Spark Connect session on %s: %s", _safe(url), e)


def _short_retries(spark) -> None:
    """PySpark's client retries an unreachable server for at least ten minutes; a workbench says
    within seconds that its engine went away (every wait, stop and exit would hang otherwise)."""
    from pyspark.sql.connect.client.retries import DefaultPolicy
    spark.client.set_retry_policies([DefaultPolicy(max_retries=5, backoff_multiplier=2.0, initial_backoff=100,
                                                   max_backoff=2000, min_jitter_threshold=10_000)])


def _loopback(url: str) -> str:
    """A token over a loopback address goes over gRPC's local channel, which PySpark's client uses
    only for the host name ``localhost`` (any other host with a token means TLS)."""
    return re.sub(r"^sc://(127\.0\.0\.1|\[::1\])(?=[:/])", "sc://localhost", url) if "token=" in url else url


def _first_line(e: Exception) -> str:
    m = re.search(r'details = "([^"]*)"', str(e))
    if m:
        return m.group(1)
    for line in str(e).splitlines():
        line = line.strip()
        if line and not line.startswith("<"):
            return line[:300]
    return type(e).__name__


def _safe(url: str) -> str:
    """``url`` without its token (for messages and logs)."""
    return re.sub(r"token=[^;/]*", "token=…", url)


def forget_remote(url: str) -> None:
    """Drop the session on ``url`` (its server went away): the next use opens a new one. It is
    closed here without a call to the server, so that it is no longer the process's default
    session (PySpark parses DDL strings through that one)."""
    with _remote_lock:
        spark = _remotes.pop(url, None)
    if spark is not None:
        _close_locally(spark, url)


def open_ahead(endpoint) -> bool:
    """Open the session on ``endpoint()`` in a background thread (the call itself may start the
    shared engine: seconds, here rather than on the caller's path); its first user reports the
    opening as a start. Returns whether an opening began (not while one is under way)."""
    global _remote_prestart
    if _remote_prestart is not None and _remote_prestart.is_alive():
        return False

    def run():
        try:
            get_remote_session(endpoint())
        except Exception as e:  # reported by the first real use
            log.info("opening the Spark Connect session ahead of use failed: %s", e)
    _remote_prestart = threading.Thread(target=run, daemon=True, name="streamsql-connect-prestart")
    _remote_prestart.start()
    return True
