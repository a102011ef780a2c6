"""The plan as SQL, written once for every engine (DuckDB and Spark SQL).

Each query kind is one ``SELECT`` built here; a :class:`Dialect` holds the few spellings in
which the engines differ (identifier quotes, the text and wide-integer types, ``TRY_CAST``), so
DuckDB (:mod:`renyi.release.duckdb`) and Spark (:mod:`renyi.release.spark`) run the same
statements, and on the same table with the same salt compute the same aggregates.

**The portable row hash.** Every random choice (which rows an individual keeps, which groups,
which rows per group, which distinct values) orders an individual's rows by
``md5(concat_ws('|', salt, tag, <text of the values>))`` (:func:`row_hash`), which both engines
compute alike, then by the values themselves (so rows that tie are identical in every column
the release reads, and any choice among them aggregates alike). The text of a value is its
``CAST(… AS VARCHAR/STRING)``, except for floating-point columns, whose text differs between
the engines (``1e+20`` against ``1.0E20``): their text is the integer ⌊x·10⁶⌋ when
``|x| < 10¹²``, else NULL (skipped by ``concat_ws``; the values then break the tie). The order
of one individual's rows depends only on those rows and the salt, so adding or removing an
individual changes no other individual's choice, which is what the sensitivities of
:mod:`renyi.release.plan` assume.

**How to add a query kind** (e.g. counts of a quantile's candidates, or discovered keys):

1. in :func:`query_select`, build its ``SELECT`` from the kept rows (table ``kept``, columns
   ``__renyi_unit`` and :func:`kept_column` names) joined with its key table (``keys``:
   ``__renyi_idx`` and ``k0, k1, …`` as text), returning ``idx`` (the cell index) and one
   integer column per aggregate; use only :class:`Dialect` spellings and :func:`row_hash` for
   random choices, never an engine's own functions;
2. name its aggregates in :data:`AGGREGATE_COLUMNS` (vector name → result column) and the
   cell count in :func:`cells_of` if it is not the query's ``released_cells``;
3. the engines need nothing more: :class:`renyi.release.engine.SQLEngine` registers the keys,
   materialises the kept rows once, runs every query's statement and places each column's
   values at ``idx`` (absent cells are 0). A statement whose result is not indexed by public
   keys (key discovery) can run through :meth:`~renyi.release.engine.SQLEngine.fetch`, which
   returns the result columns as numpy arrays;
4. test it on both engines (``tests/test_release_spark.py`` compares them on one table).

    >>> print(row_hash(DUCKDB, 7, ["'g'", "CAST(idx AS VARCHAR)"]))
    md5(concat_ws('|', '7', 'g', CAST(idx AS VARCHAR)))
    >>> SPARK.ident("a`b")
    '`a``b`'
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from renyi.release.plan import UNBOUNDED_CELLS, Plan, QueryPlan, derive_sensitivity

__all__ = ["Dialect", "DUCKDB", "SPARK", "UNIT", "KEPT", "AGGREGATE_COLUMNS", "needed_columns", "kept_column",
           "row_hash", "value_text", "kept_select", "query_select", "keys_columns", "cells_of", "finite_sql",
           "value_sql", "quantile_bin_sql", "persons_select", "data_keys_select", "missing_select"]

#: the privacy unit's column in the table of kept rows
UNIT = "__renyi_unit"
#: the default name of the table of kept rows
KEPT = "__renyi_kept"
#: aggregate vector name → result column of a query's statement
AGGREGATE_COLUMNS = {"count": "n", "sum": "s", "sum2": "s2", "distinct": "d"}
#: the largest m for which DuckDB pre-cuts over-contributors with a top-m aggregate (see kept_select)
TOPK_LIMIT = 64
#: DuckDB pre-cuts only individuals with more than TOPK_FACTOR·m rows (see kept_select)
TOPK_FACTOR = 4


@dataclass(frozen=True, slots=True)
class Dialect:
    """How one SQL engine spells what the statements need.

    Attributes:
        name: ``"duckdb"`` or ``"spark"``.
        label: the engine's name in messages.
        quote: the identifier quote character (``"`` or a backtick).
        text: the text type (``VARCHAR`` or ``STRING``).
        wide: an integer type wider than 64 bits for exact sums of squares.
        try_cast: the cast that gives NULL instead of failing.
        topk: whether ``min(x, m)`` returns the m smallest values as a list (DuckDB), which
            pre-cuts over-contributing individuals before the window sort.
    """

    name: str
    label: str
    quote: str
    text: str
    wide: str
    try_cast: str
    topk: bool

    def ident(self, name: str) -> str:
        """An identifier, quoted (embedded quotes doubled)."""
        q = self.quote
        return q + name.replace(q, q + q) + q

    def literal(self, text: str) -> str:
        """A string literal in single quotes (embedded quotes doubled; Spark also escapes ``\\``)."""
        t = text.replace("'", "''")
        if self.name == "spark":
            t = t.replace("\\", "\\\\")
        return "'" + t + "'"


DUCKDB = Dialect("duckdb", "DuckDB", '"', "VARCHAR", "HUGEINT", "TRY_CAST", True)
SPARK = Dialect("spark", "Spark", "`", "STRING", "DECIMAL(38, 0)", "try_cast", False)


def needed_columns(plan: Plan) -> list[str]:
    """The data columns the plan reads (group and value columns), in first-use order."""
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
    ``__renyi_c1``, ... by position in :func:`needed_columns`), never the data's own: the SQL
    then also uses generated names for its helper columns (hashes, counts, row numbers), and no
    data column name can equal one of them. A data column named ``__renyi_rn`` once replaced
    the row number and switched the row bound off; one named ``__renyi_unit`` grouped by the unit.
    """
    return f"__renyi_c{needed_columns(plan).index(column)}"


def value_text(d: Dialect, expr: str, floating: bool) -> str:
    """The text of a value that both engines spell alike (see the module docstring)."""
    if floating:
        # floor(x·10⁶) is the same IEEE product and floor in both engines, and cheap (a cast to
        # DECIMAL cost Spark a BigDecimal per row)
        return f"CAST(CAST(floor(CASE WHEN abs({expr}) < 1e12 THEN {expr} * 1e6 END) AS BIGINT) AS {d.text})"
    return f"CAST({expr} AS {d.text})"


def row_hash(d: Dialect, salt: int, parts: Sequence[str]) -> str:
    """``md5`` of the salt and the parts (text expressions) joined by ``|``: a 32-hex-digit text
    that orders rows at random, the same in every engine."""
    return f"md5(concat_ws('|', {d.literal(str(int(salt)))}, {', '.join(parts)}))"


def _by(cols: Sequence[str]) -> str:
    return ", ".join(f"{c} ASC NULLS FIRST" for c in cols)


def kept_select(plan: Plan, salt: int, source: str, d: Dialect, floating: Collection[str] = (),
                bucket: tuple[int, int] | None = None) -> str:
    """The rows kept: at most ``max_rows_per_unit`` per individual, a salted-hash random choice.

    The rows kept are each individual's m first rows in the order of (:func:`row_hash` of the
    unit and the row's values, then the values), exactly what ``row_number() OVER (PARTITION BY
    unit ORDER BY …) <= m`` keeps. Columns: ``__renyi_unit`` and ``__renyi_c0, …``
    (:func:`kept_column`).

    DuckDB: individuals with at most m rows keep all of them without any hash or sort; only the
    over-contributors go through the window. For m ≤ ``TOPK_LIMIT`` the rows of individuals
    with more than ``TOPK_FACTOR``·m rows are first cut to those at or below the m-th smallest
    hash (``min(h, m)``, a grouped aggregate), so the window sorts about m rows per individual
    (the cut keeps every row the window would keep: the rows kept are the same either way). That aggregate holds m hashes per group in memory and
    cannot spill, so it is used only for small m and only over the over-contributors (with
    m = 1000 over every one of 200 000 individuals it took 17 GB).

    Spark: one window over all rows (one shuffle by unit, a sort within each partition, spilling
    to disk as needed).

    Args:
        source: the table expression of the source (engine-specific: a file read or a view).
        floating: the data columns of a floating-point type (their text is spelled portably).
        bucket: (b, B): only the individuals whose unit hashes to bucket b of B (DuckDB: the
            kept rows of a large table are built bucket by bucket, so the grouped aggregates
            hold 1/B of the individuals at a time; every individual's rows are in one bucket, so
            the rows kept are the same).
    """
    data = plan.spec.data
    m = int(data.max_rows_per_unit)
    names = needed_columns(plan)
    gen = [f"__renyi_c{j}" for j in range(len(names))]
    proj = ", ".join([f"{d.ident(data.privacy_unit)} AS {UNIT}",
                      *(f"{d.ident(c)} AS {g}" for c, g in zip(names, gen))])
    texts = [value_text(d, UNIT, data.privacy_unit in floating),
             *(value_text(d, g, c in floating) for c, g in zip(names, gen))]
    h = row_hash(d, salt, [d.literal("row"), *texts])
    cols = ", ".join([UNIT, *gen])
    order = f"__renyi_h, {_by(gen)}" if gen else "__renyi_h"
    if not d.topk:
        return (f"SELECT {cols} FROM (SELECT {cols}, row_number() OVER (PARTITION BY {UNIT} ORDER BY {order}) "
                f"AS __renyi_rn FROM (SELECT {cols}, {h} AS __renyi_h FROM (SELECT {proj} FROM {source}) AS s) "
                f"AS o) AS w WHERE __renyi_rn <= {m}")
    if bucket is not None and bucket[1] > 1:
        # DuckDB's own hash of the unit picks the bucket: it only splits the work, never the choice
        source = f"(SELECT * FROM {source} WHERE hash({d.ident(data.privacy_unit)}) % {bucket[1]} = {bucket[0]})"
    if m <= TOPK_LIMIT:
        # only individuals with more than TOPK_FACTOR·m rows are cut first: for the others the
        # grouped aggregate (a list per individual) cost more than the window's sort it saves
        # (10⁷ rows of ~3.3 per person: 11.9 → 8.0 CPU s; 100 per person: the same)
        big = TOPK_FACTOR * m
        cut = (f"t AS (SELECT {UNIT}, min(__renyi_h, {m}) AS __renyi_hs FROM o WHERE __renyi_n > {big} "
               f"GROUP BY {UNIT}), "
               f"c AS (SELECT {cols}, __renyi_h FROM o JOIN t USING ({UNIT}) WHERE o.__renyi_h <= t.__renyi_hs[-1] "
               f"UNION ALL SELECT {cols}, __renyi_h FROM o WHERE __renyi_n <= {big}) ")
    else:
        cut = "c AS (SELECT * FROM o) "
    return (
        f"WITH s AS (SELECT {proj} FROM {source}), "
        f"n AS (SELECT {UNIT}, count(*) AS __renyi_n FROM s GROUP BY {UNIT}), "
        f"o AS (SELECT {cols}, __renyi_n, {h} AS __renyi_h FROM s JOIN n USING ({UNIT}) WHERE n.__renyi_n > {m}), "
        f"{cut}"
        f"SELECT {cols} FROM s JOIN n USING ({UNIT}) WHERE n.__renyi_n <= {m} "
        f"UNION ALL "
        f"SELECT {cols} FROM ("
        f"SELECT {cols}, row_number() OVER (PARTITION BY {UNIT} ORDER BY {order}) AS __renyi_rn "
        f"FROM c) AS w WHERE __renyi_rn <= {m}"
    )


def finite_sql(x: str) -> str:
    """``x`` is not NULL, NaN or ±inf, spelled alike in DuckDB and Spark SQL (NaN compares above
    every number in both, and NULL makes the condition NULL).

        >>> finite_sql("x")
        '(x BETWEEN -1.7976931348623157e+308 AND 1.7976931348623157e+308)'
    """
    return f"({x} BETWEEN -1.7976931348623157e+308 AND 1.7976931348623157e+308)"


def missing_select(d: Dialect, source: str, column: str) -> str:
    """The number of rows (column ``n``) whose numeric ``column`` is NULL, NaN or ±inf."""
    x = f"CAST({d.ident(column)} AS DOUBLE)"
    return f"SELECT count(*) AS n FROM {source} WHERE NOT coalesce({finite_sql(x)}, false)"


def value_sql(q: Any, col: str) -> tuple[str, str]:
    """(the value a query reads from kept column ``col``, as DOUBLE; its WHERE clause) under its
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


def keys_columns(qp: QueryPlan) -> list[str]:
    """The columns of a query's key table: ``__renyi_idx`` (BIGINT) then ``k0, k1, …`` (text)."""
    return ["__renyi_idx", *(f"k{j}" for j in range(max(1, len(qp.query.by))))]


def cells_of(qp: QueryPlan, vector: str) -> int:
    """The length of an aggregate vector of a query (a histogram's counts cover every bin of
    every group, a quantile's every candidate of every group)."""
    q = qp.query
    if vector != "count":
        return q.cells
    if q.type == "quantile":
        return q.cells * len(q.candidates)
    return q.cells * (len(q.bins) - 1 if q.bins is not None else 1)


def query_select(qp: QueryPlan, plan: Plan, salt: int, d: Dialect, kept: str, keys: str,
                 floating: Collection[str] = ()) -> str:
    """Exact per-group aggregates of one query, by key index (see :mod:`renyi.release.engine`).

    Columns: ``idx`` (the key index; for a histogram key index × bins + bin), ``n`` (rows),
    ``s`` (Σv of the clamped values rounded to the granularity), ``s2`` (Σ(v − c)² for a
    variance or std, c its centre) and ``d`` (distinct values, for count_distinct).

    Args:
        kept: the table of kept rows (:func:`kept_select`).
        keys: the query's key table (:func:`keys_columns`).
        floating: the data columns of a floating-point type.
    """
    q = qp.query
    inner, cond = _inner_select(qp, plan, salt, d, kept, keys, floating)
    if q.type in ("histogram", "quantile"):
        nb = len(q.candidates) if q.type == "quantile" else len(q.bins) - 1  # type: ignore[arg-type]
        return (f"SELECT idx * {nb} + b AS idx, n FROM (SELECT idx, b, count(*) AS n FROM ({inner}) AS i1 {cond} "
                "GROUP BY idx, b) AS i2")
    if q.type == "count_distinct":
        return f"SELECT idx, count(*) AS n, count(DISTINCT d) AS d FROM ({inner}) AS i1 {cond} GROUP BY idx"
    s2 = ""
    if q.type in ("variance", "std"):
        c = next(x.centre for x in qp.measurements if x.kind == "sum2")
        # (v − c)² ≤ 2^52 by the spec's check; the sum is exact (a wider integer) and the cast to
        # BIGINT fails loudly, before anything is spent, if it does not fit
        s2 = (f", CAST(coalesce(sum(CAST((v - {int(c)}) * (v - {int(c)}) AS {d.wide})), 0) AS BIGINT) AS s2")
    return (f"SELECT idx, count(*) AS n, CAST(coalesce(sum(v), 0) AS BIGINT) AS s{s2} "
            f"FROM ({inner}) AS i1 {cond} GROUP BY idx")


def persons_select(qp: QueryPlan, plan: Plan, salt: int, d: Dialect, kept: str, keys: str,
                   floating: Collection[str] = ()) -> str:
    """For a query with discovered keys: the number of people per group of the data (``idx``,
    ``p``), after the same per-person choices as its aggregates (each person in at most
    ``max_groups_per_unit`` groups)."""
    inner, cond = _inner_select(qp, plan, salt, d, kept, keys, floating)
    return f"SELECT idx, count(DISTINCT {UNIT}) AS p FROM ({inner}) AS i1 {cond} GROUP BY idx"


def data_keys_select(qp: QueryPlan, plan: Plan, d: Dialect, kept: str) -> str:
    """The distinct groups of the kept rows, as text (``k0, k1, …``; groups with a NULL left out),
    sorted: the candidates of key discovery (:func:`renyi.release.noise.discover_keys`), never
    released as such."""
    cols = [f"CAST({kept_column(plan, c)} AS {d.text})" for c in qp.query.by]
    names = ", ".join(f"{c} AS k{j}" for j, c in enumerate(cols))
    notnull = " AND ".join(f"{c} IS NOT NULL" for c in cols)
    order = ", ".join(f"k{j}" for j in range(len(cols)))
    return f"SELECT DISTINCT {names} FROM {kept} WHERE {notnull} ORDER BY {order}"


def _inner_select(qp: QueryPlan, plan: Plan, salt: int, d: Dialect, kept: str, keys: str,
                  floating: Collection[str]) -> tuple[str, str]:
    """(the rows one query aggregates, with its per-person choices as windows; the filter that
    applies them)."""
    q = qp.query
    m = plan.spec.data.max_rows_per_unit
    cells = UNBOUNDED_CELLS if q.discover else q.cells
    sens = derive_sensitivity(m, q.max_groups_per_unit, q.max_rows_per_group, cells)
    on = " AND ".join(f"CAST(t.{kept_column(plan, c)} AS {d.text}) = k.k{j}" for j, c in enumerate(q.by))
    join = f"JOIN {keys} k ON {on}" if q.by else f"CROSS JOIN {keys} k"
    unit_text = value_text(d, UNIT, plan.spec.data.privacy_unit in floating)
    extra = ""
    w_text = "CAST(v AS {t})"
    if q.type == "quantile":
        assert q.column is not None
        col = kept_column(plan, q.column)
        x, where = value_sql(q, col)
        v, extra = "0", f", {quantile_bin_sql(q, x)} AS b"
        w_text = "CAST(b AS {t})"
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
            w_text = value_text(d, "d", q.column in floating)
        else:
            assert q.bins is not None
            x, where = value_sql(q, col)
            extra = f", {_bin_sql(col, q.bins, x)} AS b"
            w_text = "CAST(b AS {t})"
    else:
        v, where = "0", ""
    w_text = w_text.replace("{t}", d.text)
    # a group in the random choices: its index in the public key list, or for discovered keys its
    # text (an index among the data's groups would let one person's new group move another's choice)
    gid, gtext = ("gk", "gk") if q.discover else ("idx", f"CAST(idx AS {d.text})")
    if q.discover:
        extra += ", concat_ws('|', " + ", ".join(f"k.k{j}" for j in range(len(q.by))) + ") AS gk"
    filters = []
    windows = []
    if sens.groups < min(m, cells):
        hg = row_hash(d, salt, [d.literal("group"), unit_text, gtext])
        windows.append(f"dense_rank() OVER (PARTITION BY {UNIT} ORDER BY {hg}, {gid}) AS gr")
        filters.append(f"gr <= {sens.groups}")
    if sens.rows_per_group < m:
        # the order depends on the row's own content (the value that is aggregated), so ties
        # are between rows that aggregate alike and any choice among them gives the same result
        w = {"count_distinct": "d", "histogram": "b", "quantile": "b"}.get(q.type, "v")
        hr = row_hash(d, salt, [d.literal("rows"), unit_text, gtext, w_text])
        windows.append(f"row_number() OVER (PARTITION BY {UNIT}, idx ORDER BY {hr}, {w} ASC NULLS FIRST) AS rr")
        filters.append(f"rr <= {sens.rows_per_group}")
    if q.type == "count_distinct" and q.max_distinct_per_unit is not None \
            and q.max_distinct_per_unit < sens.rows_per_group:
        # each individual keeps the rows of at most k of its values per group (a salted-hash
        # choice of values, so it depends on that individual's rows only)
        hd = row_hash(d, salt, [d.literal("distinct"), unit_text, gtext, w_text])
        windows.append(f"dense_rank() OVER (PARTITION BY {UNIT}, idx ORDER BY {hd}, d ASC NULLS FIRST) AS dr")
        filters.append(f"dr <= {int(q.max_distinct_per_unit)}")
    inner = f"SELECT k.__renyi_idx AS idx, t.{UNIT} AS {UNIT}, {v} AS v{extra} FROM {kept} t {join} {where}"
    if windows:
        keep = f"idx, v, {UNIT}" + (", d" if q.type == "count_distinct" else
                                    ", b" if q.type in ("histogram", "quantile") else "")
        inner = f"SELECT {keep}, {', '.join(windows)} FROM ({inner}) AS i0"
    cond = f"WHERE {' AND '.join(filters)}" if filters else ""
    return inner, cond

