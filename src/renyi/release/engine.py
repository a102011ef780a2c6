"""What a query engine must do for a release, and the SQL engine both backends share.

Two engines satisfy the contract: :class:`~renyi.release.duckdb.DuckDBEngine` (embedded, the
default) and :class:`~renyi.release.spark.SparkEngine` (``[engine] name = "spark"``, a Spark
cluster or ``local[*]``). Both are a :class:`SQLEngine`: they run the statements of
:mod:`renyi.release.sql` (written once, in each engine's dialect) and only provide the
primitives (read the source, register a key table, materialise a table, fetch a result).
:func:`renyi.release.backends.open_engine` picks the engine a spec names; the core never imports
DuckDB or PySpark.

An engine runs a :class:`~renyi.release.plan.Plan` against a table and returns the *exact*
aggregates after enforcing the contribution bounds; the noise is added elsewhere
(:mod:`renyi.release.noise`), so an engine never sees the budget and never writes output.

Contract (what the sensitivity derivation of :mod:`renyi.release.plan` relies on):

1. rows whose privacy unit is NULL make the release fail before anything is spent;
2. every individual keeps at most ``max_rows_per_unit`` rows, chosen at random by a salted
   hash of the row's own values (so adding or removing one individual changes no other
   individual's choice), with the salt drawn from the secure generator;
3. per query, only rows whose group is in the public key list take part; an individual then
   keeps at most ``max_groups_per_unit`` groups and ``max_rows_per_group`` rows per group
   (random choices by the same salted hash);
4. sums are of values clamped to the query's bounds and rounded to its granularity, as
   integers; a mean's count counts the rows whose value is not NULL;
5. the result is aligned with the key list; keys absent from the data get 0;
6. per query type, the vectors returned (int64, one entry per key unless said otherwise):

   * count: ``"count"`` (rows);
   * sum, mean: ``"count"`` and ``"sum"`` (Σv over the rows whose value is not NULL, v the
     clamped value rounded to the granularity); a mean's centring is done by the plan on
     these exact integers, so an engine knows nothing of it;
   * variance, std: also ``"sum2"`` = Σ(v − c)² with c the integer centre of the query's
     ``sum2`` measurement (:attr:`~renyi.release.plan.Measurement.centre`), computed exactly
     (a wider integer type, failing rather than wrapping if it does not fit in int64);
   * count_distinct: ``"count"`` and ``"distinct"`` (distinct non-NULL values), after each
     individual keeps, per group, only the rows of at most ``max_distinct_per_unit`` of its
     values (a salted-hash choice of values);
   * histogram: ``"count"`` of length keys × bins, entry key_index × bins + bin, the bin of a
     non-NULL value x being i with eᵢ ≤ x < eᵢ₊₁ (the last bin closed; values below e₀ or above
     e_k counted in the end bins);
   * quantile: ``"count"`` of length keys × candidates, entry key_index × K + j, j the candidate
     of the value clamped to the bounds and rounded to the grid (lower + j·granularity, capped
     at the last candidate, the upper bound);
   * with ``keys = "discover"``: the keys are the groups of the kept rows (``"keys"``, tuples of
     text, sorted; groups with a NULL left out), every vector is aligned with them, and
     ``"persons"`` counts the people per group. The per-person group choice hashes the group's
     text (not its index among the data's groups, which another person's group could move).

   Values that are NULL, NaN or ±inf follow the query's ``missing`` policy: dropped, or the
   replacement value (the release has checked, for ``"error"``, that there are none).

   Within a group, the rows an individual keeps (``max_rows_per_group``) are chosen by a
   salted hash of the value the query aggregates (v, the distinct value, the bin), so that
   rows tied in the order aggregate alike.

The salted hash is :func:`renyi.release.sql.row_hash` (md5, the same in every engine), so two
engines given the same table and salt return identical aggregates.

The release calls, in this order and all before the spend (:mod:`renyi.release.run`):
:meth:`Engine.columns` (the schema), :meth:`Engine.null_count` (the privacy unit) and
:meth:`Engine.aggregate`; a failure of any of them (a session that cannot start, a master that
does not answer, a bad file) is a :class:`~renyi.release.spec.SpecError` and nothing is spent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from renyi.release.plan import Plan
from renyi.release.spec import SpecError

__all__ = ["Engine", "Aggregates", "Column", "SQLEngine", "redacted", "first_line"]


@dataclass(frozen=True, slots=True)
class Column:
    """A column of the source table: its name, the engine's type name, whether it is numeric
    and whether it is of a floating-point type (its text differs between engines)."""

    name: str
    type: str
    numeric: bool
    floating: bool = False


#: query name -> {"count", "sum", "sum2", "distinct": int64 arrays} (sums in granularity units)
Aggregates = dict[str, dict[str, np.ndarray]]


class Engine(Protocol):
    """The interface a backend implements (see the module docstring for its contract)."""

    def columns(self) -> dict[str, Column]:
        """The source's columns (reads the schema, not the rows)."""
        ...

    def null_count(self, column: str) -> int:
        """How many rows have NULL in ``column``."""
        ...

    def missing_count(self, column: str) -> int:
        """How many rows have NULL, NaN or ±inf in the numeric ``column``."""
        ...

    def aggregate(self, plan: Plan, salt: int) -> Aggregates:
        """Enforce the bounds and compute every measurement's exact vector."""
        ...

    def sql(self, plan: Plan, salt: int) -> list[str]:
        """The statements :meth:`aggregate` runs (for inspection and tests)."""
        ...

    def close(self) -> None:
        """Release the backend's resources (connections, registered tables)."""
        ...


def as_int64(values: Any) -> np.ndarray:
    """Aggregates come back from the engine as integers; keep them exact as int64."""
    return np.asarray(values, dtype=np.int64)


class SQLEngine:
    """An engine that runs the statements of :mod:`renyi.release.sql` (the aggregation written
    once). A subclass provides the dialect and the primitives:

    * :attr:`dialect` and :meth:`source` (the table expression of the source);
    * :meth:`materialize` / :meth:`drop` (a table from a ``SELECT``, and its removal);
    * :meth:`register` (a small table from numpy columns: a key list);
    * :meth:`fetch` (a ``SELECT``'s result as numpy arrays, by column name);
    * :meth:`columns`, :meth:`close`, and :attr:`errors` (the exception types of its library,
      turned into a :class:`SpecError` with the data values removed).
    """

    dialect: Any
    errors: tuple[type[BaseException], ...] = ()
    #: where the source lives (for messages)
    where: str = ""

    # ----- primitives --------------------------------------------------------------------
    def source(self) -> str:
        """The table expression of the source."""
        raise NotImplementedError

    def kept_name(self) -> str:
        """The name of the table of kept rows."""
        from renyi.release.sql import KEPT

        return KEPT

    def keys_name(self, i: int) -> str:
        """The name of query i's key table."""
        return f"__renyi_keys_{i}"

    def materialize(self, name: str, select: str) -> None:
        """Create the table ``name`` from ``select`` (statement: :meth:`materialize_sql`)."""
        raise NotImplementedError

    def materialize_sql(self, name: str, select: str) -> str:
        """The statement :meth:`materialize` runs."""
        raise NotImplementedError

    def drop(self, name: str) -> None:
        """Drop the table ``name`` if it exists."""
        raise NotImplementedError

    def buckets(self) -> int:
        """In how many parts (by the privacy unit) the kept rows are built: 1, unless the engine
        holds per-individual state in memory (DuckDB's top-m aggregate) and the table is large."""
        return 1

    def append(self, name: str, select: str) -> None:
        """Insert the rows of ``select`` into the table ``name`` (for :meth:`buckets` > 1)."""
        raise NotImplementedError

    def register(self, name: str, columns: dict[str, np.ndarray]) -> None:
        """Register a small table (the key list: ``__renyi_idx`` int64, ``k0…`` text)."""
        raise NotImplementedError

    def unregister(self, name: str) -> None:
        """Remove a table registered by :meth:`register`."""
        raise NotImplementedError

    def fetch(self, select: str) -> dict[str, np.ndarray]:
        """Run a ``SELECT`` and return its columns as numpy arrays."""
        raise NotImplementedError

    def columns(self) -> dict[str, Column]:
        """The source's columns (reads the schema, not the rows)."""
        raise NotImplementedError

    def close(self) -> None:
        """Release the backend's resources."""
        raise NotImplementedError

    # ----- the contract, once --------------------------------------------------------------
    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def floating(self) -> frozenset[str]:
        """The source's columns of a floating-point type."""
        return frozenset(c.name for c in self.columns().values() if c.floating)

    def null_count(self, column: str) -> int:
        """How many rows have NULL in ``column``."""
        d = self.dialect
        try:
            res = self.fetch(f"SELECT count(*) AS n FROM {self.source()} WHERE {d.ident(column)} IS NULL")
        except self.errors as e:
            raise SpecError(f"data: {d.label} could not read {self.where}: {redacted(e)}", name="source") from None
        return int(res["n"][0])

    def missing_count(self, column: str) -> int:
        """How many rows have NULL, NaN or ±inf in the numeric ``column``."""
        from renyi.release.sql import missing_select

        d = self.dialect
        try:
            res = self.fetch(missing_select(d, self.source(), column))
        except self.errors as e:
            raise SpecError(f"data: {d.label} could not read {self.where}: {redacted(e)}", name="source") from None
        return int(res["n"][0])

    def sql(self, plan: Plan, salt: int) -> list[str]:
        """The statements :meth:`aggregate` runs (for inspection and tests; a query with discovered
        keys also runs :func:`~renyi.release.sql.data_keys_select` and
        :func:`~renyi.release.sql.persons_select`)."""
        from renyi.release.sql import kept_select, query_select

        d, fl = self.dialect, self.floating()
        kept = self.kept_name()
        return [self.materialize_sql(kept, kept_select(plan, salt, self.source(), d, fl)),
                *(query_select(qp, plan, salt, d, kept, self.keys_name(i), fl) for i, qp in enumerate(plan.queries))]

    def _keys(self, i: int, qp: Any) -> dict[str, np.ndarray]:
        q = qp.query
        cols: dict[str, np.ndarray] = {"__renyi_idx": np.arange(len(q.keys), dtype=np.int64)}
        for j in range(len(q.by)):
            cols[f"k{j}"] = np.array([k[j] for k in q.keys], dtype=object)
        if not q.by:
            cols["k0"] = np.array([""], dtype=object)
        return cols

    def aggregate(self, plan: Plan, salt: int) -> Aggregates:
        """Enforce the bounds and compute every measurement's exact vector."""
        import dataclasses

        from renyi.release.sql import (AGGREGATE_COLUMNS, cells_of, data_keys_select, kept_select, persons_select,
                                       query_select)

        d, fl = self.dialect, self.floating()
        kept = self.kept_name()
        registered: list[str] = []
        try:
            try:
                buckets = self.buckets()
                if buckets <= 1:
                    self.materialize(kept, kept_select(plan, salt, self.source(), d, fl))
                else:
                    for b in range(buckets):
                        sel = kept_select(plan, salt, self.source(), d, fl, bucket=(b, buckets))
                        if b == 0:
                            self.materialize(kept, sel)
                        else:
                            self.append(kept, sel)
                out: Aggregates = {}
                for i, qp in enumerate(plan.queries):
                    name = self.keys_name(i)
                    keys: list[tuple[str, ...]] = []
                    if qp.query.discover:
                        # the candidates: the groups of the kept rows (never released as such)
                        got = self.fetch(data_keys_select(qp, plan, d, kept))
                        cols = [got[f"k{j}"] for j in range(len(qp.query.by))]
                        keys = [tuple(str(c[r]) for c in cols) for r in range(len(cols[0]) if cols else 0)]
                        qp = dataclasses.replace(qp, query=dataclasses.replace(qp.query, keys=tuple(keys)))
                    self.register(name, self._keys(i, qp))
                    registered.append(name)
                    res = self.fetch(query_select(qp, plan, salt, d, kept, name, fl))
                    idx = as_int64(res["idx"])
                    agg: dict[str, Any] = {}
                    for vec, col in AGGREGATE_COLUMNS.items():
                        if col in res:
                            v = np.zeros(cells_of(qp, vec), dtype=np.int64)
                            v[idx] = as_int64(res[col])
                            agg[vec] = v
                    if qp.query.discover:
                        res = self.fetch(persons_select(qp, plan, salt, d, kept, name, fl))
                        p = np.zeros(len(keys), dtype=np.int64)
                        p[as_int64(res["idx"])] = as_int64(res["p"])
                        agg["keys"] = keys
                        agg["persons"] = p
                    out[qp.query.name] = agg
                return out
            except self.errors as e:
                # engines' messages quote the offending value and often the whole row ("Could
                # not convert string 'alice,1979-…'"): they never reach a message or a traceback
                raise SpecError(f"data: {self.dialect.label} could not aggregate {self.where}: {redacted(e)}",
                                name="source") from None
        finally:
            for name in registered:
                try:
                    self.unregister(name)
                except Exception:  # cleanup never hides the result or the first error
                    pass
            try:
                self.drop(kept)
            except Exception:
                pass


def redacted(e: BaseException) -> str:
    """The first line of an engine's error with every quoted text (data values) removed."""
    line = first_line(e)
    line = re.sub(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|`(?:[^`]|``)*`", "'…'", line)
    return re.sub(r"(Original Line|line)\s*:.*", r"\1: …", line)


def first_line(e: BaseException) -> str:
    """The first non-empty line of an error's message (its type's name if there is none)."""
    for s in str(e).strip().splitlines():
        if s.strip():
            return s.strip()
    return type(e).__name__
