"""The Spark engine: the plan as Spark SQL, on a cluster or ``local[*]`` (``pip install 'renyi[spark]'``).

``[engine] name = "spark"`` runs the same statements as DuckDB (:mod:`renyi.release.sql`, in the
Spark SQL dialect) on a Spark session, so a table that outgrows one machine is released with
the same spec, the same order (checks → exact aggregates → ledger spend → noise → files) and the
same ledger. Only the exact aggregates (one integer per cell) come back to the driver; the noise
is drawn there from renyi's exact samplers, as for DuckDB.

How the contract of :mod:`renyi.release.engine` is met: the per-individual row choice is one
window, ``row_number() OVER (PARTITION BY unit ORDER BY md5(salt, row), row)``, i.e. one shuffle
by the privacy unit and a sort within each partition (spilled to disk as needed); the kept rows
are cached (``CACHE TABLE``, memory and disk) for the queries and dropped at the end; every
other step is the SQL of :mod:`renyi.release.sql`. With the same table and salt the aggregates
equal DuckDB's (``tests/test_release_spark.py``).

The session:

* a Spark session already running in the process (a notebook's, a test's) is used as it is,
  unless the spec names another master; it is never stopped by renyi;
* otherwise renyi starts one with ``[engine] master`` (default ``local[*]``, or ``local[threads]``),
  ``memory_limit`` as the driver's memory, and ``[engine] conf`` (``spark.*`` settings), and
  stops it when the release is done;
* a session that cannot start (no Java, a bad setting) or a master that does not answer within
  ``[engine] start_timeout`` seconds (default 120; a ``spark://host:port`` master is first
  probed directly) is one :class:`~renyi.release.spec.SpecError`, raised before anything is
  spent or written.

The source is a CSV (header row, types inferred) or Parquet file, a directory of Parquet files,
or any URI the cluster can read (``hdfs://``, ``s3a://``…); a DuckDB file is for the DuckDB engine.
"""

from __future__ import annotations

import os
import re
import secrets
import socket
import threading
from typing import Any

import numpy as np

from renyi.core.errors import DomainError
from renyi.release.engine import Column, SQLEngine, redacted
from renyi.release.spec import DataSpec, SpecError
from renyi.release.sql import SPARK

__all__ = ["SparkEngine", "DEFAULT_MASTER"]

#: the master when the spec names none and no session is running
DEFAULT_MASTER = "local[*]"

_NUMERIC = ("TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL", "BOOLEAN", "BYTE", "SHORT",
            "INTEGER", "LONG")
_FLOATING = ("FLOAT", "DOUBLE")
#: SQL settings renyi's statements need (set for the release, restored after on a shared session)
_SQL_CONF = {"spark.sql.ansi.enabled": "true", "spark.sql.caseSensitive": "false"}


def _import_pyspark() -> Any:
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise DomainError("the spark engine needs PySpark: pip install 'renyi[spark]' (and Java 17 or later)",
                          name="engine") from None
    return SparkSession


def _is_uri(path: str) -> bool:
    return re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", path) is not None


def _probe_master(master: str, timeout: float) -> None:
    """A ``spark://host:port[,host:port]`` master answers on its port (else the driver would wait
    minutes for a master that is not there)."""
    if not master.startswith("spark://"):
        return
    errors = []
    for hostport in master[len("spark://"):].split(","):
        host, _, port = hostport.rpartition(":")
        if not host or not port.isdigit():
            raise SpecError(f"engine: master {master}: expected spark://host:port", name="master", value=master)
        try:
            socket.create_connection((host.strip("[]"), int(port)), timeout=min(timeout, 10.0)).close()
            return
        except OSError as e:
            errors.append(f"{hostport}: {e.strerror or type(e).__name__}")
    raise SpecError(f"engine: the Spark master {master} does not answer ({'; '.join(errors)}); nothing was spent",
                    name="master", value=master)


def _with_timeout(fn: Any, timeout: float, what: str) -> Any:
    """Run ``fn()`` in a thread; a SpecError if it takes more than ``timeout`` seconds."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as e:  # handed back to the caller's thread
            box["error"] = e

    t = threading.Thread(target=run, name="renyi-spark-start", daemon=True)
    t.start()
    t.join(timeout)
    if t.is_alive():
        raise TimeoutError(what)
    if "error" in box:
        raise box["error"]
    return box.get("value")


def _driver_memory(limit: str) -> str:
    """``"4GB"`` → ``"4g"`` (Spark's spelling)."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT])i?B\s*", limit, flags=re.IGNORECASE)
    if m is None:
        raise SpecError(f"engine: memory_limit must look like \"4GB\"; got {limit!r}", name="memory_limit",
                        value=limit)
    num, unit = float(m.group(1)), m.group(2).lower()
    scale = {"k": 1, "m": 1024, "g": 1024**2, "t": 1024**3}[unit]
    return f"{max(1, int(num * scale))}k"


def _stop_gateway() -> None:
    """Stop a Spark session (and its JVM) that renyi started and that did not come up in time."""
    try:
        from pyspark import SparkContext

        sc = SparkContext._active_spark_context
        if sc is not None:
            sc.stop()
        gw = SparkContext._gateway
        if gw is not None:
            proc = getattr(gw, "proc", None)
            gw.shutdown()
            if proc is not None:
                proc.kill()
            SparkContext._gateway = None
            SparkContext._jvm = None
    except Exception:  # best effort: the error the caller raises matters more
        pass
    _kill_child_jvms()


def _kill_child_jvms() -> None:
    """Kill the Spark JVMs this process launched that are still starting (Linux): their
    launcher has not handed them back yet, and they would go on writing to the terminal."""
    import signal

    me = os.getpid()
    try:
        pids = [p for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return
    for p in pids:
        try:
            with open(f"/proc/{p}/stat", "rb") as f:
                stat = f.read().decode(errors="replace")
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            if ppid != me:
                continue
            with open(f"/proc/{p}/cmdline", "rb") as f:
                cmd = f.read()
            if b"org.apache.spark" in cmd or b"spark-submit" in cmd:
                os.kill(int(p), signal.SIGKILL)
        except (OSError, ValueError, IndexError):
            continue


def start_session(master: str | None = None, conf: dict[str, str] | None = None, *,
                  memory_limit: str | None = None, threads: int | None = None,
                  start_timeout: float = 120.0) -> tuple[Any, bool]:
    """The Spark session a release runs on, and whether renyi started it (then it stops it).

    Raises:
        SpecError: PySpark is missing, the session cannot start, the master does not answer
            within ``start_timeout`` seconds, or another master's session is already running.
    """
    SparkSession = _import_pyspark()
    active = SparkSession.getActiveSession()
    if active is not None:
        running = str(active.sparkContext.master)
        if master is not None and master != running:
            raise SpecError(f"engine: a Spark session with master {running} is already running in this process; "
                            f"the spec names master {master} (one process runs one Spark context)",
                            name="master", value=master)
        return active, False
    m = master or (f"local[{int(threads)}]" if threads is not None else DEFAULT_MASTER)
    _probe_master(m, start_timeout)
    settings = {"spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false",
                "spark.log.level": "ERROR", **_SQL_CONF}
    if memory_limit is not None:
        settings["spark.driver.memory"] = _driver_memory(memory_limit)
    settings.update(conf or {})

    def build() -> Any:
        b = SparkSession.builder.master(m).appName("renyi-release")
        for k, v in settings.items():
            b = b.config(k, v)
        session = b.getOrCreate()
        if not m.startswith("local"):
            session.range(1).count()  # the cluster runs a task: executors are there
        return session

    try:
        session = _with_timeout(build, start_timeout, "start")
    except TimeoutError:
        _stop_gateway()
        raise SpecError(f"engine: the Spark session (master {m}) did not start or answer within {start_timeout:g} s "
                        "([engine] start_timeout); nothing was spent", name="master", value=m) from None
    except SpecError:
        raise
    except Exception as e:
        _stop_gateway()
        raise SpecError(f"engine: cannot start a Spark session (master {m}): {redacted(e)}; nothing was spent",
                        name="master", value=m) from None
    return session, True


def _sniff_delimiter(path: str) -> str:
    """The delimiter of a local CSV file (``,`` ``;`` tab or ``|``, as DuckDB detects it) from its
    first 64 KiB; ``,`` for a URI or when none is detected."""
    import csv

    if _is_uri(path):
        return ","
    try:
        with open(path, encoding="utf-8-sig", errors="replace", newline="") as f:
            head = f.read(65536)
        return csv.Sniffer().sniff(head, delimiters=",;\t|").delimiter
    except (OSError, csv.Error):
        return ","


class SparkEngine(SQLEngine):
    """Runs a plan on Spark (a running session, or one renyi starts and stops).

    Args:
        data: the source table (CSV or Parquet: a file, a directory or a URI the cluster reads).
        master: the master URL (None: the running session's, else ``local[*]``).
        conf: extra ``spark.*`` settings for a session renyi starts.
        memory_limit: the driver's memory for a session renyi starts, e.g. ``"4GB"``.
        threads: cores of the default ``local`` master.
        start_timeout: seconds the session may take to start and answer.

    Raises:
        SpecError: the source does not exist or cannot be read, the session cannot start, or
            the master does not answer (before anything is spent).
        DomainError: PySpark is not installed.
    """

    dialect = SPARK

    def __init__(self, data: DataSpec, *, master: str | None = None, conf: dict[str, str] | None = None,
                 memory_limit: str | None = None, threads: int | None = None, start_timeout: float = 120.0) -> None:
        if data.null_strings is not None and len(data.null_strings) > 1:
            raise SpecError("data: the spark engine reads one null_string (Spark's CSV nullValue); got "
                            f"{list(data.null_strings)!r}", name="null_string")
        if data.format not in ("csv", "parquet"):
            raise SpecError(f"data: the spark engine reads CSV and Parquet sources; got a {data.format} source",
                            name="format", value=data.format)
        if not _is_uri(data.source) and not os.path.exists(data.source):
            raise SpecError(f"data: source {data.source}: no such file", name="source", value=data.source)
        self._data = data
        self.where = data.source
        self._token = secrets.token_hex(4)
        self._view = f"__renyi_src_{self._token}"
        self._cached: list[str] = []
        self._columns: dict[str, Column] | None = None
        self._session, self._owned = start_session(master, conf, memory_limit=memory_limit, threads=threads,
                                                   start_timeout=start_timeout)
        self._saved: dict[str, str | None] = {}
        try:
            from py4j.protocol import Py4JError
            from pyspark.errors import PySparkException

            self.errors = (PySparkException, Py4JError)
            for k, v in _SQL_CONF.items():
                self._saved[k] = self._session.conf.get(k, None)
                self._session.conf.set(k, v)
            reader = self._session.read
            if data.format == "csv":
                reader = reader.option("header", "true" if data.header else "false").option("inferSchema", "true")
                if data.null_strings is not None:
                    reader = reader.option("nullValue", data.null_strings[0])
                # DuckDB detects the delimiter when the spec gives none: so does this engine
                reader = reader.option("sep", data.delimiter or _sniff_delimiter(data.source))
                df = reader.csv(data.source)
                if data.columns is not None:
                    if len(df.columns) != len(data.columns):
                        raise SpecError(f"data: columns names {len(data.columns)} columns; {data.source} has "
                                        f"{len(df.columns)}", name="columns")
                    df = df.toDF(*data.columns)
            else:
                df = reader.parquet(data.source)
            df.createOrReplaceTempView(self._view)
        except SpecError:
            self.close()
            raise
        except Exception as e:
            self.close()
            raise SpecError(f"data: Spark cannot read {data.source}: {redacted(e)}", name="source") from None

    def __enter__(self) -> SparkEngine:
        return self

    @property
    def session(self) -> Any:
        """The Spark session the engine runs on."""
        return self._session

    def close(self) -> None:
        """Drop the engine's views and cached tables; stop the session if renyi started it."""
        s = getattr(self, "_session", None)
        if s is None:
            return
        try:
            for name in list(getattr(self, "_cached", [])):
                self.drop(name)
            s.catalog.dropTempView(self._view)
            for k, v in getattr(self, "_saved", {}).items():
                if v is None:
                    s.conf.unset(k)
                else:
                    s.conf.set(k, v)
        except Exception:  # closing never hides the release's own error
            pass
        if getattr(self, "_owned", False):
            try:
                s.stop()
            except Exception:
                pass
        self._session = None

    # ----- primitives ----------------------------------------------------------------------
    def source(self) -> str:
        return self._view

    def kept_name(self) -> str:
        return f"__renyi_kept_{self._token}"

    def keys_name(self, i: int) -> str:
        return f"__renyi_keys_{self._token}_{i}"

    def columns(self) -> dict[str, Column]:
        """The source's columns (the schema; for a CSV, Spark infers it in one pass)."""
        if self._columns is None:
            try:
                fields = self._session.table(self._view).schema.fields
            except Exception as e:
                raise SpecError(f"data: Spark cannot read {self._data.source}: {redacted(e)}",
                                name="source") from None
            out = {}
            for f in fields:
                t = f.dataType.simpleString().upper()
                base = t.split("(")[0]
                out[str(f.name)] = Column(str(f.name), t, base in _NUMERIC, base in _FLOATING)
            self._columns = out
        return dict(self._columns)

    def materialize_sql(self, name: str, select: str) -> str:
        """``CACHE TABLE name AS select`` (a cached temporary view, memory and disk)."""
        return f"CACHE TABLE {name} AS {select}"

    def materialize(self, name: str, select: str) -> None:
        self._cached.append(name)
        self._session.sql(self.materialize_sql(name, select))

    def drop(self, name: str) -> None:
        if self._session is None:
            return
        self._session.sql(f"UNCACHE TABLE IF EXISTS {name}")
        self._session.catalog.dropTempView(name)
        if name in self._cached:
            self._cached.remove(name)

    def register(self, name: str, columns: dict[str, np.ndarray]) -> None:
        from pyspark.sql.types import LongType, StringType, StructField, StructType

        names = list(columns)
        schema = StructType([StructField(c, LongType() if c == "__renyi_idx" else StringType(), False)
                             for c in names])
        rows = list(zip(*(columns[c].tolist() for c in names)))
        self._session.createDataFrame(rows, schema).createOrReplaceTempView(name)

    def unregister(self, name: str) -> None:
        if self._session is not None:
            self._session.catalog.dropTempView(name)

    def fetch(self, select: str) -> dict[str, np.ndarray]:
        df = self._session.sql(select)
        cols = list(df.columns)
        rows = df.collect()
        out: dict[str, np.ndarray] = {}
        for j, c in enumerate(cols):
            vals = [r[j] for r in rows]
            out[c] = np.array(vals, dtype=np.int64) if all(isinstance(v, int) for v in vals) else np.array(vals)
        return out
