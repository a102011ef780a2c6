"""The DuckDB engine: the plan as SQL, run by an embedded DuckDB (``pip install renyi[release]``).

DuckDB reads CSV and Parquet files (and tables of DuckDB files) in place and runs the
aggregation out of core: joins, windows and aggregates spill to a temporary directory when
the table does not fit in memory. The statements are plain SQL built by the functions below
(:meth:`DuckDBEngine.sql` returns them), so a backend for another SQL engine is one more
module of the same shape.

How the contract of :mod:`renyi.release.engine` is met:

* the random choice of rows per individual keeps each one's m rows of smallest
  ``hash(salt, unit, <the row's values>)`` (what ``row_number() OVER (PARTITION BY unit ORDER
  BY hash(...)) <= m`` keeps; see :func:`kept_sql`). The ordering of one individual's rows
  depends on nothing but those rows and the salt, so adding or removing an individual never
  changes which rows another keeps (identical rows tie, and any choice among them gives the
  same aggregates);
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
from renyi.release.engine import Aggregates, Column, as_int64
from renyi.release.plan import UNBOUNDED_CELLS, Plan, QueryPlan, derive_sensitivity
from renyi.release.spec import DataSpec, SpecError

__all__ = ["DuckDBEngine", "quote_ident", "quote_literal"]

_KEPT = "__renyi_kept"
_UNIT = "__renyi_unit"
_NUMERIC = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER",
            "UBIGINT", "UHUGEINT", "FLOAT", "DOUBLE", "REAL", "DECIMAL", "BOOLEAN")


def quote_ident(name: str) -> str:
    """A SQL identifier in double quotes (embedded quotes doubled)."""
    return '"' + name.replace('"', '""') + '"'


def quote_literal(text: str) -> str:
    """A SQL string literal in single quotes (embedded quotes doubled)."""
    return "'" + text.replace("'", "''") + "'"


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


def _needed(plan: Plan) -> list[str]:
    cols: list[str] = []
    for qp in plan.queries:
        q = qp.query
        for c in (*q.by, *([q.column] if q.column else [])):
            if c not in cols:
                cols.append(c)
    return cols


def kept_column(plan: Plan, column: str) -> str:
    """The name of a data column in the table of kept rows.

    Every column of that table has a generated name (``__renyi_unit``, ``__renyi_c0``,
    ``__renyi_c1``, ... by position in :func:`_needed`), never the data's own: the SQL then also
    uses generated names for its helper columns (hashes, counts, row numbers), and no data
    column name can equal one of them. A data column named ``__renyi_rn`` once replaced the
    row number and switched the row bound off; one named ``__renyi_unit`` grouped by the unit.
    """
    return f"__renyi_c{_needed(plan).index(column)}"


#: the largest m for which over-contributors are pre-cut by a top-m aggregate (see kept_sql)
_TOPK_LIMIT = 64


def kept_sql(plan: Plan, salt: int) -> str:
    """Keep at most ``max_rows_per_unit`` rows per individual (salted-hash random choice).

    The rows kept are each individual's m rows with the smallest salted hash h, exactly what
    ``row_number() OVER (PARTITION BY unit ORDER BY h) <= m`` keeps. Individuals with at most
    m rows keep all of them without any sort; only the over-contributing individuals go through
    the window. For a small m, their rows are first cut to those at or below the m-th smallest
    hash (``min(h, m)``, a grouped aggregate), so the window sorts about m rows per individual.
    That aggregate holds m hashes per group in memory and cannot spill, so it is used only for
    m ≤ ``_TOPK_LIMIT`` and only over the over-contributors (with m = 1000 over every one of
    200 000 individuals it took 17 GB).
    """
    d = plan.spec.data
    m = int(d.max_rows_per_unit)
    cols = [quote_ident(c) for c in _needed(plan)]
    # only generated names leave the source (see kept_column): the data's names never meet ours
    proj = ", ".join([f"{quote_ident(d.privacy_unit)} AS {_UNIT}",
                      *(f"{c} AS __renyi_c{j}" for j, c in enumerate(cols))])
    hashed = ", ".join([quote_ident(d.privacy_unit), *cols])
    if m <= _TOPK_LIMIT:
        cut = (f"t AS (SELECT {_UNIT}, min(__renyi_h, {m}) AS __renyi_hs FROM o GROUP BY {_UNIT}), "
               f"c AS (SELECT o.* FROM o JOIN t USING ({_UNIT}) WHERE o.__renyi_h <= t.__renyi_hs[-1]) ")
    else:
        cut = "c AS (SELECT * FROM o) "
    return (
        f"CREATE OR REPLACE TEMP TABLE {_KEPT} AS "
        f"WITH s AS (SELECT {proj}, hash({salt}::UBIGINT, {hashed}) AS __renyi_h FROM {source_sql(d)}), "
        f"n AS (SELECT {_UNIT}, count(*) AS __renyi_n FROM s GROUP BY {_UNIT}), "
        f"o AS (SELECT s.* FROM s JOIN n USING ({_UNIT}) WHERE n.__renyi_n > {m}), "
        f"{cut}"
        f"SELECT s.* EXCLUDE (__renyi_h) FROM s JOIN n USING ({_UNIT}) WHERE n.__renyi_n <= {m} "
        f"UNION ALL "
        f"SELECT * EXCLUDE (__renyi_h, __renyi_rn) FROM ("
        f"SELECT c.*, row_number() OVER (PARTITION BY {_UNIT} ORDER BY __renyi_h) AS __renyi_rn "
        f"FROM c) WHERE __renyi_rn <= {m}"
    )


def keys_table(i: int) -> str:
    return f"__renyi_keys_{i}"


#: x is finite (not NULL, NaN or ±inf), spelled alike in DuckDB and Spark SQL (NaN compares
#: above every number in both)
FINITE = "({x} BETWEEN -1.7976931348623157e308 AND 1.7976931348623157e308)"


def finite_sql(x: str) -> str:
    """``x`` is not NULL, NaN or ±inf (a portable condition)."""
    return FINITE.format(x=x)


def value_sql(q: Any, col: str) -> tuple[str, str]:
    """(the value a query reads from kept column ``col`` as DOUBLE, the WHERE clause) under its
    ``missing`` policy: a replacement number stands in for NULL, NaN and ±inf; otherwise
    (``"drop"``, and ``"error"`` after the check that there are none) those rows are left out."""
    x = f"CAST(t.{col} AS DOUBLE)"
    if isinstance(q.missing, float):
        return f"(CASE WHEN {finite_sql(x)} THEN {x} ELSE {q.missing!r} END)", ""
    return x, f"WHERE {finite_sql(x)}"


def quantile_bin_sql(q: Any, x: str) -> str:
    """The candidate index of a value: clamped to the bounds, rounded to the grid lower +
    j·granularity, capped at the last candidate (the upper bound)."""
    from renyi.release.spec import grid_steps

    assert q.bounds is not None
    lo, hi = q.bounds
    top = grid_steps(lo, hi, q.granularity)
    return (f"least(CAST(round((least(greatest({x}, {float(lo)!r}), {float(hi)!r}) - {float(lo)!r}) / "
            f"{float(q.granularity)!r}) AS BIGINT), {top})")


def _bin_sql(col: str, edges: tuple[float, ...], x: str | None = None) -> str:
    """The bin index of a value: bin i is [eᵢ, eᵢ₊₁) (the last one closed); values outside go
    to the end bins."""
    x = x or f"CAST(t.{col} AS DOUBLE)"
    k = len(edges) - 1
    whens = " ".join(f"WHEN {x} < {float(e)!r} THEN {i}" for i, e in enumerate(edges[1:-1]))
    return f"CASE {whens} ELSE {k - 1} END" if k > 1 else "0"


def query_sql(i: int, qp: QueryPlan, plan: Plan, salt: int) -> str:
    """Exact per-group aggregates of one query, by key index (see :mod:`renyi.release.engine`).

    Columns: ``idx`` (the key index; for a histogram key index × bins + bin, for a quantile key
    index × candidates + candidate), ``n`` (rows), ``s`` (Σv of the clamped values rounded to
    the granularity), ``s2`` (Σ(v − c)² for a variance or std, c its centre) and ``d``
    (distinct values, for count_distinct).
    """
    q = qp.query
    inner, cond = _inner_sql(i, qp, plan, salt)
    if q.type in ("histogram", "quantile"):
        nb = len(q.candidates) if q.type == "quantile" else len(q.bins) - 1  # type: ignore[arg-type]
        return (f"SELECT idx * {nb} + b AS idx, n FROM (SELECT idx, b, count(*) AS n FROM ({inner}) {cond} "
                "GROUP BY idx, b)")
    if q.type == "count_distinct":
        return f"SELECT idx, count(*) AS n, count(DISTINCT d) AS d FROM ({inner}) {cond} GROUP BY idx"
    s2 = ""
    if q.type in ("variance", "std"):
        c = next(x.centre for x in qp.measurements if x.kind == "sum2")
        # (v − c)² ≤ 2^52 by the spec's check; the sum is exact (HUGEINT) and the cast to
        # BIGINT fails loudly, before anything is spent, if it does not fit
        s2 = f", CAST(coalesce(sum(CAST((v - {int(c)}) * (v - {int(c)}) AS HUGEINT)), 0) AS BIGINT) AS s2"
    return (f"SELECT idx, count(*) AS n, CAST(coalesce(sum(v), 0) AS BIGINT) AS s{s2} "
            f"FROM ({inner}) {cond} GROUP BY idx")


def persons_sql(i: int, qp: QueryPlan, plan: Plan, salt: int) -> str:
    """For a query with discovered keys: the number of people per group of the data (column
    ``p``), after the same per-person choices as its aggregates (each person in at most
    ``max_groups_per_unit`` groups)."""
    inner, cond = _inner_sql(i, qp, plan, salt)
    return f"SELECT idx, count(DISTINCT {_UNIT}) AS p FROM ({inner}) {cond} GROUP BY idx"


def data_keys_sql(plan: Plan, qp: QueryPlan) -> str:
    """The distinct groups of the kept rows (as text; groups with a NULL are left out): the
    candidates of key discovery. Never released as such."""
    cols = [f"CAST({kept_column(plan, c)} AS VARCHAR)" for c in qp.query.by]
    names = ", ".join(f"{c} AS k{j}" for j, c in enumerate(cols))
    notnull = " AND ".join(f"{c} IS NOT NULL" for c in cols)
    return f"SELECT DISTINCT {names} FROM {_KEPT} WHERE {notnull} ORDER BY {', '.join(f'k{j}' for j in range(len(cols)))}"


def _inner_sql(i: int, qp: QueryPlan, plan: Plan, salt: int) -> tuple[str, str]:
    """(the rows one query aggregates, with its per-person choices as windows; the filter that
    applies those choices)."""
    q = qp.query
    m = plan.spec.data.max_rows_per_unit
    cells = UNBOUNDED_CELLS if q.discover else q.cells
    sens = derive_sensitivity(m, q.max_groups_per_unit, q.max_rows_per_group, cells)
    on = " AND ".join(f"CAST(t.{kept_column(plan, c)} AS VARCHAR) = k.k{j}" for j, c in enumerate(q.by))
    join = f"JOIN {keys_table(i)} k ON {on}" if q.by else f"CROSS JOIN {keys_table(i)} k"
    extra = ""
    if q.type == "quantile":
        col = kept_column(plan, q.column)  # type: ignore[arg-type]
        x, where = value_sql(q, col)
        v, extra = "0", f", {quantile_bin_sql(q, x)} AS b"
    elif q.column is not None and q.bounds is not None:
        col = kept_column(plan, q.column)
        lo, hi = (repr(float(b)) for b in q.bounds)
        x, where = value_sql(q, col)
        # clamp, then round to the granularity: |v| ≤ ceil(max(|lo|, |hi|)/granularity)
        v = f"CAST(round(least(greatest({x}, {lo}), {hi}) / {float(q.granularity)!r}) AS BIGINT)"
    elif q.column is not None:
        col = kept_column(plan, q.column)
        v, where = "0", f"WHERE t.{col} IS NOT NULL"
        if q.type == "count_distinct":
            extra = f", t.{col} AS d"
        else:
            assert q.bins is not None
            x, where = value_sql(q, col)
            extra = f", {_bin_sql(col, q.bins, x)} AS b"
    else:
        v, where = "0", ""
    filters = []
    windows = []
    if sens.groups < min(m, cells):
        windows.append(f"dense_rank() OVER (PARTITION BY {_UNIT} ORDER BY hash({salt}::UBIGINT, {_UNIT}, idx), idx) "
                       "AS gr")
        filters.append(f"gr <= {sens.groups}")
    if sens.rows_per_group < m:
        # the order depends on the row's own content (the value that is aggregated), so ties
        # are between rows that aggregate alike and any choice among them gives the same result
        w = {"count_distinct": "d", "histogram": "b", "quantile": "b"}.get(q.type, "v")
        windows.append(f"row_number() OVER (PARTITION BY {_UNIT}, idx ORDER BY hash({salt}::UBIGINT, {_UNIT}, idx, {w}), "
                       f"{w}) AS rr")
        filters.append(f"rr <= {sens.rows_per_group}")
    if q.type == "count_distinct" and q.max_distinct_per_unit is not None \
            and q.max_distinct_per_unit < sens.rows_per_group:
        # each individual keeps the rows of at most k of its values per group (a salted-hash
        # choice of values, so it depends on that individual's rows only)
        windows.append(f"dense_rank() OVER (PARTITION BY {_UNIT}, idx ORDER BY hash({salt}::UBIGINT, {_UNIT}, idx, "
                       "d), d) AS dr")
        filters.append(f"dr <= {int(q.max_distinct_per_unit)}")
    inner = f"SELECT k.__renyi_idx AS idx, t.{_UNIT}, {v} AS v{extra} FROM {_KEPT} t {join} {where}"
    if windows:
        keep = "idx, v, " + _UNIT + (", d" if q.type == "count_distinct" else
                                     ", b" if q.type in ("histogram", "quantile") else "")
        inner = f"SELECT {keep}, {', '.join(windows)} FROM ({inner})"
    cond = f"WHERE {' AND '.join(filters)}" if filters else ""
    return inner, cond


class DuckDBEngine:
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
            raise SpecError(f"data: cannot open {data.source}: {_first_line(e)}", name="source") from None

    def __enter__(self) -> DuckDBEngine:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection and remove the spill directory."""
        con = getattr(self, "_con", None)
        if con is not None:
            con.close()
            self._con = None
        shutil.rmtree(getattr(self, "_tmp", ""), ignore_errors=True)

    def columns(self) -> dict[str, Column]:
        """The source's columns (reads the schema, not the rows)."""
        try:
            rows = self._con.execute(f"DESCRIBE SELECT * FROM {source_sql(self._data)}").fetchall()
        except Exception as e:
            raise SpecError(f"data: cannot read {self._data.source}: {_redacted(e)}", name="source") from None
        out = {}
        for name, typ, *_ in rows:
            t = str(typ).upper()
            out[str(name)] = Column(str(name), t, t.split("(")[0] in _NUMERIC)
        return out

    def null_count(self, column: str) -> int:
        """How many rows have NULL in ``column``."""
        sql = f"SELECT count(*) FROM {source_sql(self._data)} WHERE {quote_ident(column)} IS NULL"
        return int(self._con.execute(sql).fetchone()[0])

    def missing_count(self, column: str) -> int:
        """How many rows have NULL, NaN or ±inf in the numeric ``column``."""
        sql = (f"SELECT count(*) FROM {source_sql(self._data)} "
               f"WHERE NOT coalesce({finite_sql(f'CAST({quote_ident(column)} AS DOUBLE)')}, false)")
        duckdb = _import_duckdb()
        try:
            return int(self._con.execute(sql).fetchone()[0])
        except duckdb.Error as e:
            raise SpecError(f"data: DuckDB could not read {self._data.source}: {_redacted(e)}", name="source") from None

    def sql(self, plan: Plan, salt: int) -> list[str]:
        """The statements :meth:`aggregate` runs (for inspection and tests; a query with
        discovered keys also runs :func:`data_keys_sql` and :func:`persons_sql`)."""
        return [kept_sql(plan, salt), *(query_sql(i, qp, plan, salt) for i, qp in enumerate(plan.queries))]

    def _register_keys(self, i: int, qp: QueryPlan) -> None:
        q = qp.query
        cols: dict[str, np.ndarray] = {"__renyi_idx": np.arange(len(q.keys), dtype=np.int64)}
        for j in range(len(q.by)):
            cols[f"k{j}"] = np.array([k[j] for k in q.keys], dtype=object)
        if not q.by:
            cols["k0"] = np.array([""], dtype=object)
        self._con.register(keys_table(i), cols)

    def aggregate(self, plan: Plan, salt: int) -> Aggregates:
        """Enforce the bounds and compute every measurement's exact vector."""
        statements = self.sql(plan, salt)
        self._persons = {i: persons_sql(i, qp, plan, salt) for i, qp in enumerate(plan.queries) if qp.query.discover}
        duckdb = _import_duckdb()
        try:
            try:
                return self._aggregate(plan, statements)
            except duckdb.Error as e:
                # DuckDB's messages quote the offending value and often the whole row ("Could not
                # convert string 'alice,1979-…'"): they never reach a message or a traceback.
                raise SpecError(f"data: DuckDB could not aggregate {self._data.source}: {_redacted(e)}",
                                name="source") from None
        finally:
            self._con.execute(f"DROP TABLE IF EXISTS {_KEPT}")

    def _aggregate(self, plan: Plan, statements: list[str]) -> Aggregates:
        import dataclasses

        self._con.execute(statements[0])
        out: Aggregates = {}
        for i, qp in enumerate(plan.queries):
            sql = statements[i + 1]
            keys: list[tuple[str, ...]] = []
            if qp.query.discover:
                # the candidates: the groups of the kept rows (never released as such)
                keys = [tuple(str(x) for x in row) for row in self._con.execute(data_keys_sql(plan, qp)).fetchall()]
                qp = dataclasses.replace(qp, query=dataclasses.replace(qp.query, keys=tuple(keys)))
            self._register_keys(i, qp)
            q = qp.query
            res = self._con.execute(sql).fetchnumpy()
            idx = as_int64(res["idx"])
            per = len(q.candidates) if q.type == "quantile" else (len(q.bins) - 1 if q.bins is not None else 1)
            agg: dict[str, Any] = {}
            for name, col in (("count", "n"), ("sum", "s"), ("sum2", "s2"), ("distinct", "d")):
                if col in res:
                    vec = np.zeros(q.cells * per if col == "n" else q.cells, dtype=np.int64)
                    vec[idx] = as_int64(res[col])
                    agg[name] = vec
            if q.discover:
                res = self._con.execute(self._persons[i]).fetchnumpy()
                vec = np.zeros(q.cells, dtype=np.int64)
                vec[as_int64(res["idx"])] = as_int64(res["p"])
                agg["keys"] = keys
                agg["persons"] = vec
            out[q.name] = agg
        return out


def _redacted(e: BaseException) -> str:
    """The first line of a DuckDB error with every quoted text (data values) removed."""
    import re

    line = _first_line(e)
    line = re.sub(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"", "'…'", line)
    return re.sub(r"(Original Line|line)\s*:.*", r"\1: …", line)


def _first_line(e: BaseException) -> str:
    s = str(e).strip().splitlines()
    return s[0] if s else type(e).__name__
