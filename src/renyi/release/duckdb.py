"""The DuckDB engine: the plan as SQL, run by an embedded DuckDB (``pip install renyi[release]``).

DuckDB reads CSV and Parquet files (and tables of DuckDB files) in place and runs the
aggregation out of core: joins, windows and aggregates spill to a temporary directory when
the table does not fit in memory. The statements are those of :mod:`renyi.release.sql` in the
DuckDB dialect (:meth:`DuckDBEngine.sql` returns them); this module only opens the source and
runs them (:class:`~renyi.release.engine.SQLEngine`).

How the contract of :mod:`renyi.release.engine` is met:

* the random choice of rows per individual keeps each one's m first rows in the order of a
  salted md5 hash of the row (:func:`renyi.release.sql.row_hash`, portable between engines),
  then of its values (what ``row_number() OVER (PARTITION BY unit ORDER BY …) <= m`` keeps; see
  :func:`renyi.release.sql.kept_select`). The ordering of one individual's rows depends on
  nothing but those rows and the salt, so adding or removing an individual never changes which
  rows another keeps (identical rows tie, and any choice among them gives the same aggregates);
* groups and rows per group are chosen the same way after a join with the public key list;
* values are clamped with ``least/greatest``, divided by the granularity and rounded to
  integers before summing, exactly as the plan's per-row bound assumes.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Any

import numpy as np

from renyi.core.errors import DomainError
from renyi.release.engine import Column, SQLEngine, first_line, redacted
from renyi.release.plan import Plan, QueryPlan
from renyi.release.spec import DataSpec, SpecError
from renyi.release.sql import DUCKDB, KEPT, kept_column, kept_select, query_select

__all__ = ["DuckDBEngine", "quote_ident", "quote_literal", "kept_column", "kept_sql", "query_sql", "source_sql"]

_NUMERIC = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER",
            "UBIGINT", "UHUGEINT", "FLOAT", "DOUBLE", "REAL", "DECIMAL", "BOOLEAN")
_FLOATING = ("FLOAT", "DOUBLE", "REAL")
#: rows of the source per bucket of the kept rows (:meth:`DuckDBEngine.buckets`), and the most buckets
ROWS_PER_BUCKET = 2_500_000
MAX_BUCKETS = 16


def quote_ident(name: str) -> str:
    """A SQL identifier in double quotes (embedded quotes doubled)."""
    return DUCKDB.ident(name)


def quote_literal(text: str) -> str:
    """A SQL string literal in single quotes (embedded quotes doubled)."""
    return DUCKDB.literal(text)


def _import_duckdb() -> Any:
    try:
        import duckdb
    except ImportError:
        raise DomainError("renyi release needs DuckDB: pip install 'renyi[release]'", name="engine") from None
    return duckdb


def source_sql(data: DataSpec) -> str:
    """The table expression of the source (a file read in place)."""
    lit = quote_literal(data.source)
    if data.format == "csv":
        opts = [f"header = {'true' if data.header else 'false'}", "auto_detect = true"]
        if data.null_strings is not None:
            opts.append("nullstr = [" + ", ".join(quote_literal(x) for x in data.null_strings) + "]")
        if data.delimiter is not None:
            opts.append(f"delim = {quote_literal(data.delimiter)}")
        if data.columns is not None:
            opts.append("names = [" + ", ".join(quote_literal(x) for x in data.columns) + "]")
        return f"read_csv({lit}, {', '.join(opts)})"
    if data.format == "parquet":
        return f"read_parquet({lit})"
    assert data.table is not None
    return f"__renyi_src.{quote_ident(data.table)}"


def kept_sql(plan: Plan, salt: int, floating: frozenset[str] = frozenset()) -> str:
    """The statement that keeps at most ``max_rows_per_unit`` rows per individual, as the temporary
    table ``__renyi_kept`` (:func:`renyi.release.sql.kept_select` in the DuckDB dialect)."""
    return f"CREATE OR REPLACE TEMP TABLE {KEPT} AS " + kept_select(plan, salt, source_sql(plan.spec.data), DUCKDB,
                                                                     floating)


def keys_table(i: int) -> str:
    return f"__renyi_keys_{i}"


def query_sql(i: int, qp: QueryPlan, plan: Plan, salt: int, floating: frozenset[str] = frozenset()) -> str:
    """Exact per-group aggregates of one query (:func:`renyi.release.sql.query_select`)."""
    return query_select(qp, plan, salt, DUCKDB, KEPT, keys_table(i), floating)


class DuckDBEngine(SQLEngine):
    """Runs a plan with an embedded DuckDB.

    Args:
        data: the source table (a CSV, Parquet or DuckDB file).
        memory_limit: DuckDB's memory limit, e.g. ``"4GB"`` (None: DuckDB's default, 80 % of RAM).
        threads: worker threads (None: one per core).

    Raises:
        SpecError: the source file does not exist.
        DomainError: DuckDB is not installed.
    """

    def __init__(self, data: DataSpec, *, memory_limit: str | None = None, threads: int | None = None) -> None:
        if data.format != "duckdb" and any(c in data.source for c in "*?[{"):
            # DuckDB expands glob patterns in file names: "*.csv" would read every CSV beside it
            raise SpecError(f"data: source {data.source}: a file name with *, ?, [ or {{ is read by DuckDB as a "
                            "pattern of several files; rename the file", name="source", value=data.source)
        if not os.path.exists(data.source):
            raise SpecError(f"data: source {data.source}: no such file", name="source", value=data.source)
        duckdb = _import_duckdb()
        self._data = data
        self._buckets: int | None = None
        self.where = data.source
        self.errors = (duckdb.Error,)
        self._tmp = tempfile.mkdtemp(prefix="renyi-duckdb-")
        self._con = duckdb.connect(":memory:")
        try:
            # Spill to a private temporary directory: tables larger than memory still aggregate.
            self._con.execute(f"SET temp_directory = {quote_literal(self._tmp)}")
            self._con.execute("SET preserve_insertion_order = false")
            if memory_limit is not None:
                self._con.execute(f"SET memory_limit = {quote_literal(memory_limit)}")
            if threads is not None:
                self._con.execute(f"SET threads = {int(threads)}")
            if data.format == "duckdb":
                self._con.execute(f"ATTACH {quote_literal(data.source)} AS __renyi_src (READ_ONLY)")
                # A supplied database's views may call read_csv('/any/file') or attach others:
                # after attaching it, no file outside it is reachable (spilling still works, and
                # the setting cannot be turned back on while the database is open).
                self._con.execute("SET enable_external_access = false")
        except Exception as e:
            self.close()
            raise SpecError(f"data: cannot open {data.source}: {first_line(e)}", name="source") from None

    dialect = DUCKDB

    def __enter__(self) -> DuckDBEngine:
        return self

    def close(self) -> None:
        """Close the connection and remove the spill directory."""
        con = getattr(self, "_con", None)
        if con is not None:
            con.close()
            self._con = None
        shutil.rmtree(getattr(self, "_tmp", ""), ignore_errors=True)

    def source(self) -> str:
        """The table expression of the source (a file read in place)."""
        return source_sql(self._data)

    def columns(self) -> dict[str, Column]:
        """The source's columns (reads the schema, not the rows)."""
        cached = getattr(self, "_columns", None)
        if cached is not None:
            return dict(cached)
        try:
            rows = self._con.execute(f"DESCRIBE SELECT * FROM {source_sql(self._data)}").fetchall()
        except Exception as e:
            raise SpecError(f"data: cannot read {self._data.source}: {redacted(e)}", name="source") from None
        out = {}
        for name, typ, *_ in rows:
            t = str(typ).upper()
            base = t.split("(")[0]
            out[str(name)] = Column(str(name), t, base in _NUMERIC, base in _FLOATING)
        self._columns = out
        return dict(out)

    def materialize_sql(self, name: str, select: str) -> str:
        """``CREATE OR REPLACE TEMP TABLE name AS select``."""
        return f"CREATE OR REPLACE TEMP TABLE {name} AS {select}"

    def materialize(self, name: str, select: str) -> None:
        self._con.execute(self.materialize_sql(name, select))

    def append(self, name: str, select: str) -> None:
        self._con.execute(f"INSERT INTO {name} {select}")

    def buckets(self) -> int:
        """One bucket per ``ROWS_PER_BUCKET`` rows of the source (at most ``MAX_BUCKETS``): the
        top-m aggregate of :func:`renyi.release.sql.kept_select` holds per-individual state that
        does not spill, and at 10⁷ rows in one piece it took 2.5 GB. The row count is read from
        Parquet metadata; a CSV or DuckDB table is counted (one scan)."""
        if self._buckets is None:
            try:
                n = int(self._con.execute(f"SELECT count(*) FROM {self.source()}").fetchone()[0])
            except Exception:  # the aggregation itself reports a bad source
                n = 0
            self._buckets = max(1, min(MAX_BUCKETS, -(-n // ROWS_PER_BUCKET)))
        return self._buckets

    def drop(self, name: str) -> None:
        if self._con is not None:
            self._con.execute(f"DROP TABLE IF EXISTS {name}")

    def register(self, name: str, columns: dict[str, np.ndarray]) -> None:
        self._con.register(name, columns)

    def unregister(self, name: str) -> None:
        if self._con is not None:
            self._con.unregister(name)

    def fetch(self, select: str) -> dict[str, np.ndarray]:
        res = self._con.execute(select).fetchnumpy()
        return {str(k): np.asarray(v) for k, v in res.items()}
