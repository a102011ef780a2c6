"""What a query engine must do for a release (DuckDB today; Spark would be one more module).

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
     e_k counted in the end bins).

   Within a group, the rows an individual keeps (``max_rows_per_group``) are chosen by a
   salted hash of the value the query aggregates (v, the distinct value, the bin), so that
   rows tied in the order aggregate alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from renyi.release.plan import Plan

__all__ = ["Engine", "Aggregates", "Column"]


@dataclass(frozen=True, slots=True)
class Column:
    """A column of the source table: its name and the engine's type name."""

    name: str
    type: str
    numeric: bool


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
