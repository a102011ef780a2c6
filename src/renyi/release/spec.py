"""Release specifications: what to release from a table, under which budget (TOML, JSON or a dict).

A spec names the table, the column that identifies an individual (the *privacy unit*) with
the contribution bounds the engine enforces, the budget, and the queries::

    [data]
    source = "people.csv"            # CSV, Parquet or a DuckDB file (then table = "name")
    privacy_unit = "person_id"
    max_rows_per_unit = 3            # rows kept per individual (a random choice, in SQL)
    # max_groups_per_unit = 1        # optional: groups one individual may touch, per query
    # max_rows_per_group = 1         # optional: rows one individual may add to one group

    [privacy]
    budget = { rho = 1.0 }           # or { epsilon = 1.0, delta = 1e-10 }: converted to plain ρ
    ledger = "releases.db"           # optional durable ledger
    noise = "discrete_gaussian"      # or "discrete_laplace"

    [[query]]
    name = "county counts"
    type = "count"                   # count | sum | mean
    by = ["county"]
    keys = { file = "counties.csv" } # or { county = ["a", "b"] }: public, never from the data
    weight = 0.4

Parsing only reads the spec and the public key files; it never touches the table. Every
problem is a :class:`SpecError` (a :class:`~renyi.errors.DomainError`) with a one-line
message naming the query and key at fault, raised before anything is read or spent.

    >>> s = parse_spec({"data": {"source": "t.csv", "privacy_unit": "id"},
    ...                 "privacy": {"budget": {"rho": 0.5}},
    ...                 "query": [{"name": "n", "type": "count", "by": ["g"],
    ...                            "keys": {"g": ["a", "b"]}}]})
    >>> s.rho, s.queries[0].keys
    (0.5, (('a',), ('b',)))
"""

from __future__ import annotations

import csv
import itertools
import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from renyi.core.errors import DomainError

__all__ = [
    "SpecError",
    "DataSpec",
    "QuerySpec",
    "ReleaseSpec",
    "QUERY_TYPES",
    "VALUE_TYPES",
    "MISSING_TYPES",
    "MISSING_POLICIES",
    "TARGET_TYPES",
    "POST_STEPS",
    "Target",
    "NOISE_KINDS",
    "OUTPUT_FORMATS",
    "parse_spec",
    "load_spec",
]

QUERY_TYPES = ("count", "sum", "mean", "variance", "std", "count_distinct", "histogram", "quantile")
#: Query types whose rows carry a clamped numeric value (they need column and bounds).
VALUE_TYPES = ("sum", "mean", "variance", "std", "quantile")
#: Query types with a missing-value policy (``missing``): every type that reads a numeric column.
MISSING_TYPES = ("sum", "mean", "variance", "std", "quantile", "histogram")
#: Missing-value policies besides a replacement number.
MISSING_POLICIES = ("error", "drop")
#: Most candidates of a quantile's grid, and most (groups × candidates) of one quantile query.
MAX_CANDIDATES = 100_000
MAX_QUANTILE_CELLS = 20_000_000
#: The part of a discovering query's ρ spent on finding its keys (the default).
DISCOVERY_SHARE = 0.25
#: Query types whose interval depends only on the noise (a target half-width can be solved for).
TARGET_TYPES = ("count", "sum", "count_distinct", "histogram")
#: Opt-in post-processing steps (no privacy cost).
POST_STEPS = ("non_negative", "consistent")
#: Most bins of a histogram.
MAX_BINS = 1000
NOISE_KINDS = ("discrete_gaussian", "discrete_laplace")
OUTPUT_FORMATS = ("csv", "parquet")
#: δ at which the release's ε is reported when the spec gives none (the budget's δ wins).
DEFAULT_REPORT_DELTA = 1e-6


class SpecError(DomainError):
    """A release spec cannot be read or describes an invalid release (one-line message)."""


@dataclass(frozen=True, slots=True)
class DataSpec:
    """The table and its privacy unit.

    Attributes:
        source: path of a CSV, Parquet or DuckDB file (absolute, or relative to the spec).
        format: ``"csv"``, ``"parquet"`` or ``"duckdb"`` (from the suffix unless given).
        table: the table inside a DuckDB file (None for CSV/Parquet).
        privacy_unit: the column that identifies an individual; it may hold no NULLs.
        max_rows_per_unit: m ≥ 1, rows kept per individual (a random choice of rows).
        max_groups_per_unit: default bound on the groups one individual may touch in a query
            (None: no bound beyond m).
        max_rows_per_group: default bound on the rows one individual may add to one group
            (None: no bound beyond m).
        public: a public table with the same columns (CSV or Parquet; e.g. synthetic data or
            an earlier public table) on which the effect of the contribution bounds is
            measured, at no privacy cost (None: not measured).
        null_strings: for a CSV source, the texts read as NULL (e.g. ``("NULL", "NA")``; None:
            the engine's default, an empty field).
        delimiter: for a CSV source, the field separator (None: detected).
        header: for a CSV source, whether its first line names the columns.
        columns: for a CSV source without a header, the column names in order (None: with
            a header).
    """

    source: str
    format: str
    table: str | None
    privacy_unit: str
    max_rows_per_unit: int = 1
    max_groups_per_unit: int | None = None
    max_rows_per_group: int | None = None
    public: str | None = None
    null_strings: tuple[str, ...] | None = None
    delimiter: str | None = None
    header: bool = True
    columns: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class Target:
    """An accuracy a query must reach: every cell's interval ±``half_width`` (output units)
    covers its exact value with probability at least ``coverage``."""

    half_width: float
    coverage: float = 0.95


@dataclass(frozen=True, slots=True)
class QuerySpec:
    """One query: an aggregate by groups over a public list of keys.

    Attributes:
        name: unique name (also the output file's stem).
        type: ``"count"`` (rows), ``"sum"`` (clamped), ``"mean"`` (centred sum/count,
            post-processed), ``"variance"`` / ``"std"`` (of the clamped values, from a count and
            centred first and second moments), ``"count_distinct"`` (distinct non-NULL values of
            ``column``) or ``"histogram"`` (rows per public bin of ``column``, per group).
        by: the grouping columns (may be empty: one total).
        keys: the public key list, one tuple of strings per group (compared with the data as
            text); groups absent from the data are released as noisy zeros.
        column: the summed column (sum, mean), else None.
        bounds: the clamping range (lower, upper) of ``column``, lower ≤ upper.
        granularity: sums are taken of clamped values rounded to multiples of this (> 0), so
            that integer (discrete) noise can be added exactly.
        weight: the query's share of the budget, relative to the other queries' (> 0).
        noise: ``"discrete_gaussian"`` or ``"discrete_laplace"``.
        max_groups_per_unit / max_rows_per_group: the contribution bounds of this query
            (None: unbounded beyond ``max_rows_per_unit``).
        mean_sum_share: for a mean, the fraction of its ρ given to the sum (the rest goes to
            the count), in (0, 1).
        target: the accuracy asked instead of a weight (:class:`Target`), or None.
        bins: a histogram's public bin edges e₀ < e₁ < … < e_k (k bins [eᵢ, eᵢ₊₁), the last
            one closed; values outside are counted in the end bins), else None.
        max_distinct_per_unit: for count_distinct, the distinct values one individual may add
            to one group (None: bounded by the rows per group only).
        post: opt-in post-processing (``"non_negative"``, ``"consistent"``), in order.
        quantiles: for a quantile query, the quantiles released (each in (0, 1)), else None.
        missing: what a row whose ``column`` is NULL, NaN or ±inf does: ``"error"`` (the
            release fails before any spend, naming the column and the number of rows),
            ``"drop"`` (the row takes no part in this query) or a number (the value used
            instead; it must lie within ``bounds``, or within the bins of a histogram).
        discovery_delta: for a query with ``keys = "discover"``, the δ of its key discovery
            (Gaussian thresholding), else None.
        discovery_share: the part of the query's ρ spent on discovering its keys.
    """

    name: str
    type: str
    by: tuple[str, ...]
    keys: tuple[tuple[str, ...], ...]
    column: str | None = None
    bounds: tuple[float, float] | None = None
    granularity: float = 1.0
    weight: float = 1.0
    noise: str = "discrete_gaussian"
    max_groups_per_unit: int | None = None
    max_rows_per_group: int | None = None
    mean_sum_share: float = 0.5
    key_source: str = "inline"
    target: Target | None = None
    bins: tuple[float, ...] | None = None
    max_distinct_per_unit: int | None = None
    post: tuple[str, ...] = ()
    quantiles: tuple[float, ...] | None = None
    missing: str | float = "error"
    discovery_delta: float | None = None
    discovery_share: float = DISCOVERY_SHARE

    @property
    def discover(self) -> bool:
        """Whether the keys are discovered from the data (``keys = "discover"``)."""
        return self.key_source == "discover"

    @property
    def cells(self) -> int:
        """Number of groups (the length of the key list; 0 before discovery)."""
        return len(self.keys)

    @property
    def candidates(self) -> tuple[float, ...]:
        """A quantile query's public candidate grid: lower, lower + granularity, ..., up to the
        upper bound (included); () for other queries."""
        if self.type != "quantile" or self.bounds is None:
            return ()
        return quantile_grid(self.bounds[0], self.bounds[1], self.granularity)

    @property
    def bin_labels(self) -> tuple[str, ...]:
        """A histogram's bins as text, e.g. ``[0, 10)`` (the last one closed); () otherwise."""
        if self.bins is None:
            return ()
        e = [_edge(x) for x in self.bins]
        k = len(e) - 1
        return tuple(f"[{e[i]}, {e[i + 1]}{']' if i == k - 1 else ')'}" for i in range(k))

    @property
    def released_cells(self) -> int:
        """Number of released values: groups, times bins for a histogram."""
        return len(self.keys) * (len(self.bins) - 1 if self.bins is not None else 1)


def quantile_grid(lower: float, upper: float, granularity: float) -> tuple[float, ...]:
    """The candidates of a quantile: lower + j·granularity for j = 0..J−1, and the upper bound
    (J = ⌈(upper − lower)/granularity⌉; the last step may be shorter).

        >>> quantile_grid(0.0, 10.0, 2.5)
        (0.0, 2.5, 5.0, 7.5, 10.0)
        >>> quantile_grid(0.0, 10.0, 4.0)
        (0.0, 4.0, 8.0, 10.0)
    """
    n = grid_steps(lower, upper, granularity)
    return tuple(lower + j * granularity for j in range(n)) + (upper,)


def grid_steps(lower: float, upper: float, granularity: float) -> int:
    """J = ⌈(upper − lower)/granularity⌉ (0 when lower = upper): the grid has J + 1 candidates."""
    return max(0, math.ceil((upper - lower) / granularity - 1e-9))


def _edge(x: float) -> str:
    return str(int(x)) if float(x).is_integer() and abs(x) < 2**53 else repr(float(x))


@dataclass(frozen=True, slots=True)
class ReleaseSpec:
    """A parsed release spec.

    Attributes:
        name: a title for the release (ledger labels and the report).
        data: the table and its privacy unit.
        queries: the queries, in order.
        rho: the release's budget as plain ρ (an (ε, δ) budget converted to the largest
            ρ-zCDP that implies it).
        budget: the budget as written (``{"rho": ...}``, ``{"rho": ..., "delta": ...}`` (δ-approximate
            ρ-zCDP) or ``{"epsilon": ..., "delta": ...}``).
        delta: δ at which the report states ε.
        ledger: path of the ledger (a SQLite file), or None for an in-memory one.
        ledger_budget: the total a new ledger allows, as written (None: this release's budget).
        out_dir: output directory (absolute or relative to the spec), or None for the default.
        out_format: ``"csv"`` or ``"parquet"``.
        memory_limit / threads: engine settings (None: the engine's defaults; for Spark, the
            driver's memory and the cores of the default ``local`` master).
        source: where the spec came from (a path or ``"<dict>"``).
        discovery_delta: Σ of the queries' discovery δ (0 without key discovery): the release
            is ``discovery_delta``-approximately ρ-zCDP.
        engine: ``"duckdb"`` (embedded, the default) or ``"spark"`` (``[engine] name``).
        master: the Spark master URL (None: ``local[*]``, or the session already running).
        engine_conf: extra Spark settings (``[engine] conf``: ``spark.*`` keys), as (key, value) pairs.
        start_timeout: seconds a Spark session may take to start and answer (``[engine]
            start_timeout``); beyond it the release stops before anything is spent.
    """

    name: str
    data: DataSpec
    queries: tuple[QuerySpec, ...]
    rho: float
    budget: Mapping[str, float]
    delta: float
    ledger: str | None = None
    ledger_budget: Mapping[str, float] | None = None
    out_dir: str | None = None
    out_format: str = "csv"
    memory_limit: str | None = None
    threads: int | None = None
    source: str = "<dict>"
    discovery_delta: float = 0.0
    engine: str = "duckdb"
    master: str | None = None
    engine_conf: tuple[tuple[str, str], ...] = ()
    start_timeout: float = 120.0


# --------------------------------------------------------------------------------------
# Small checks, one grammar: "<where>: <key> must be <what>; got <value>"
# --------------------------------------------------------------------------------------
def _kind(v: Any) -> str:
    return {str: "a string", bool: "a boolean", int: "an integer", float: "a number",
            list: "a list", dict: "a table"}.get(type(v), type(v).__name__)


def _real(where: str, key: str, v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or math.isnan(float(v)):
        raise SpecError(f"{where}: {key} must be a number; got {_kind(v)} {v!r}", name=key, value=v)
    return float(v)


def _int(where: str, key: str, v: Any, minimum: int = 1) -> int:
    ok = (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer())
    if not ok or int(v) < minimum:
        raise SpecError(f"{where}: {key} must be an integer in [{minimum}, inf); got {v!r}", name=key, value=v)
    return int(v)


def _str(where: str, key: str, v: Any) -> str:
    if not isinstance(v, str) or not v.strip():
        raise SpecError(f"{where}: {key} must be a non-empty string; got {_kind(v)} {v!r}", name=key, value=v)
    return v


def _choice(where: str, key: str, v: Any, options: Sequence[str]) -> str:
    w = v.strip().lower().replace("-", "_").replace(" ", "_") if isinstance(v, str) else v
    if w not in options:
        raise SpecError(f"{where}: {key} must be one of {', '.join(options)}; got {v!r}", name=key, value=v)
    return str(w)


def _keys_allowed(where: str, raw: Mapping[str, Any], allowed: Sequence[str]) -> None:
    for k in raw:
        if k not in allowed:
            raise SpecError(f"{where}: unknown key {k!r}; expected one of: {', '.join(allowed)}", name=str(k))


def _resolve(base: str | None, path: str) -> str:
    p = os.path.expanduser(path)
    if base is not None and not os.path.isabs(p):
        p = os.path.join(base, p)
    return p


# --------------------------------------------------------------------------------------
# Sections
# --------------------------------------------------------------------------------------
_DATA_KEYS = ("source", "format", "table", "privacy_unit", "max_rows_per_unit", "max_groups_per_unit", "public",
              "max_rows_per_group", "null_string", "delimiter", "header", "columns")
_CSV_KEYS = ("null_string", "delimiter", "header", "columns")


def _parse_data(raw: Any, base: str | None) -> DataSpec:
    if not isinstance(raw, Mapping):
        raise SpecError(f"data must be a table ([data]); got {_kind(raw)}")
    _keys_allowed("data", raw, _DATA_KEYS)
    for req in ("source", "privacy_unit"):
        if req not in raw:
            raise SpecError(f"data: missing required key {req!r}", name=req)
    source = _resolve(base, _str("data", "source", raw["source"]))
    if "format" in raw:
        fmt = _choice("data", "format", raw["format"], ("csv", "parquet", "duckdb"))
    else:
        low = source.lower()
        if low.endswith((".parquet", ".pq")):
            fmt = "parquet"
        elif low.endswith((".duckdb", ".db", ".ddb")):
            fmt = "duckdb"
        elif low.endswith((".csv", ".csv.gz", ".tsv")):
            fmt = "csv"
        else:
            raise SpecError(f"data: cannot tell the format of {raw['source']!r} from its suffix; "
                            "give format = \"csv\", \"parquet\" or \"duckdb\"", name="format")
    table = None
    if fmt == "duckdb":
        if "table" not in raw:
            raise SpecError("data: a DuckDB source needs table = \"name\"", name="table")
        table = _str("data", "table", raw["table"])
    elif "table" in raw:
        raise SpecError(f"data: table is only for DuckDB files; got a {fmt} source", name="table")
    unit = _str("data", "privacy_unit", raw["privacy_unit"])
    m = _int("data", "max_rows_per_unit", raw.get("max_rows_per_unit", 1))
    g = _int("data", "max_groups_per_unit", raw["max_groups_per_unit"]) if "max_groups_per_unit" in raw else None
    r = _int("data", "max_rows_per_group", raw["max_rows_per_group"]) if "max_rows_per_group" in raw else None
    public = None
    if "public" in raw:
        public = _resolve(base, _str("data", "public", raw["public"]))
        if not public.lower().endswith((".csv", ".csv.gz", ".tsv", ".parquet", ".pq")):
            raise SpecError(f"data: public must be a CSV or Parquet file; got {raw['public']!r}", name="public",
                            value=raw["public"])
    nulls, delim, header, columns = _parse_csv_options(raw, fmt)
    return DataSpec(source, fmt, table, unit, m, g, r, public, nulls, delim, header, columns)


def _parse_csv_options(raw: Mapping[str, Any], fmt: str) -> tuple[tuple[str, ...] | None, str | None, bool,
                                                                    tuple[str, ...] | None]:
    """``null_string``, ``delimiter``, ``header`` and ``columns`` of a CSV source."""
    given = [k for k in _CSV_KEYS if k in raw]
    if given and fmt != "csv":
        raise SpecError(f"data: {given[0]} is a CSV option; the source is {fmt}", name=given[0])
    nulls = None
    if "null_string" in raw:
        v = raw["null_string"]
        vals = [v] if isinstance(v, str) else v
        if not isinstance(vals, list) or not vals or not all(isinstance(x, str) for x in vals):
            raise SpecError(f"data: null_string must be a string or a list of strings (the texts read as NULL); got "
                            f"{_kind(v)} {v!r}", name="null_string", value=v)
        if any(any(c in x for c in "\n\r") for x in vals):
            raise SpecError(f"data: null_string must not contain a line break; got {v!r}", name="null_string", value=v)
        nulls = tuple(vals)
    delim = None
    if "delimiter" in raw:
        v = raw["delimiter"]
        if not isinstance(v, str) or len(v) != 1 or v in "\n\r\"":
            raise SpecError(f"data: delimiter must be one character (not a quote or a line break); got {v!r}",
                            name="delimiter", value=v)
        delim = v
    header = True
    if "header" in raw:
        if not isinstance(raw["header"], bool):
            raise SpecError(f"data: header must be true or false; got {_kind(raw['header'])} {raw['header']!r}",
                            name="header", value=raw["header"])
        header = raw["header"]
    columns = None
    if "columns" in raw:
        v = raw["columns"]
        if header:
            raise SpecError("data: columns names the columns of a CSV without a header; give header = false "
                            "(with a header, the names are read from it)", name="columns")
        if not isinstance(v, list) or not v or not all(isinstance(x, str) and x.strip() for x in v):
            raise SpecError(f"data: columns must be a list of column names; got {_kind(v)} {v!r}", name="columns",
                            value=v)
        if len({_fold(x) for x in v}) != len(v):
            raise SpecError(f"data: columns names a column twice: {v!r}", name="columns", value=v)
        columns = tuple(v)
    elif not header:
        raise SpecError("data: a CSV without a header (header = false) needs columns = [\"name\", ...], its column "
                        "names in order", name="columns")
    return nulls, delim, header, columns


def parse_budget(where: str, raw: Any) -> tuple[float, dict[str, float]]:
    """Turn ``{rho}`` or ``{epsilon, delta}`` into plain ρ (and the budget as written).

    An (ε, δ) target becomes the largest ρ such that ρ-zCDP implies (ε, δ)-DP through the
    best zCDP → DP conversion ([CKS20] Cor. 13, [BS16] Lemma 38, whichever is tighter):
    plain zCDP, never δ-approximate zCDP, so that the releases compose as ρ's.
    ``{rho, delta}`` is a δ-approximate ρ-zCDP budget ([BS16] Def. 12): ρ as given, and a δ
    that only key discovery spends.
    """
    if not isinstance(raw, Mapping):
        raise SpecError(f"{where} must be a table like {{ rho = 1.0 }} or {{ epsilon = 1.0, delta = 1e-10 }}; "
                        f"got {_kind(raw)} {raw!r}")
    _keys_allowed(where, raw, ("rho", "epsilon", "delta"))
    if "rho" in raw:
        if "epsilon" in raw:
            raise SpecError(f"{where}: give either rho (and optionally delta) or epsilon and delta, not both",
                            name="epsilon")
        rho = _real(where, "rho", raw["rho"])
        if not 0.0 < rho < math.inf:
            raise SpecError(f"{where}: rho must be in (0, inf); got {raw['rho']!r}", name="rho", value=raw["rho"])
        if "delta" in raw:
            dl = _real(where, "delta", raw["delta"])
            if not 0.0 < dl < 1.0:
                raise SpecError(f"{where}: delta must be in (0, 1); got {raw['delta']!r}", name="delta", value=dl)
            return rho, {"rho": rho, "delta": dl}
        return rho, {"rho": rho}
    if "epsilon" not in raw or "delta" not in raw:
        raise SpecError(f"{where}: needs rho, or epsilon and delta (δ > 0: a pure ε is not a ρ budget)")
    eps = _real(where, "epsilon", raw["epsilon"])
    delta = _real(where, "delta", raw["delta"])
    if not 0.0 < eps < math.inf:
        raise SpecError(f"{where}: epsilon must be in (0, inf); got {raw['epsilon']!r}", name="epsilon", value=eps)
    if not 0.0 < delta < 1.0:
        raise SpecError(f"{where}: delta must be in (0, 1); got {raw['delta']!r}", name="delta", value=delta)
    from renyi.guarantees.conversions import zcdp_rho_for

    return zcdp_rho_for(eps, delta), {"epsilon": eps, "delta": delta}


_PRIVACY_KEYS = ("budget", "delta", "ledger", "ledger_budget", "noise")


def _read_keys_file(where: str, path: str, by: tuple[str, ...]) -> list[tuple[str, ...]]:
    from renyi.core._validation import read_user_text

    def fail(msg: str) -> SpecError:
        return SpecError(f"{where}: key file {msg}")

    text = read_user_text(path, "a key file", fail)
    try:
        return _parse_keys_csv(where, path, text, by)
    except csv.Error as e:  # a NUL byte, an overlong field
        raise SpecError(f"{where}: key file {path}: not a CSV file ({e})") from None


def _parse_keys_csv(where: str, path: str, text: str, by: tuple[str, ...]) -> list[tuple[str, ...]]:
    import io

    with io.StringIO(text, newline="") as f:
        reader = csv.reader(f)
        header = next(reader, None)
        if header is None:
            raise SpecError(f"{where}: key file {path} is empty (it needs a header row naming {', '.join(by)})")
        header = [h.strip() for h in header]
        missing = [c for c in by if c not in header]
        if missing:
            raise SpecError(f"{where}: key file {path} has no column {missing[0]!r}; its header is "
                            f"{', '.join(header)}", name=missing[0])
        idx = [header.index(c) for c in by]
        rows = []
        for n, row in enumerate(reader, start=2):
            if not row or all(not c.strip() for c in row):
                continue
            if len(row) < len(header):
                raise SpecError(f"{where}: key file {path}, line {n}: expected {len(header)} fields; got {len(row)}")
            rows.append(tuple(row[i] for i in idx))
        return rows


def _key_text(v: Any) -> str:
    # Keys are matched with the data as text (DuckDB's CAST(... AS VARCHAR)).
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _parse_keys(where: str, raw: Any, by: tuple[str, ...], base: str | None) -> tuple[tuple[tuple[str, ...], ...], str]:
    if not by:
        if raw is not None:
            raise SpecError(f"{where}: keys are only for queries with by columns", name="keys")
        return ((),), "total"
    if raw is None:
        raise SpecError(f"{where}: missing required key 'keys': the public list of groups "
                        "(keys = { file = \"keys.csv\" } or keys = { column = [...] }), or keys = \"discover\" "
                        "to find them in the data (at a cost in ρ and δ)", name="keys")
    if isinstance(raw, str) and raw.strip().lower() == "discover":
        return (), "discover"
    if not isinstance(raw, Mapping):
        raise SpecError(f"{where}: keys must be a table; got {_kind(raw)} {raw!r}", name="keys")
    if "file" in raw:
        if len(raw) != 1:
            raise SpecError(f"{where}: keys: give a file or the lists of values per column, not both", name="keys")
        path = _resolve(base, _str(where, "keys.file", raw["file"]))
        rows = _read_keys_file(where, path, by)
        src = path
    else:
        extra = [k for k in raw if k not in by]
        if extra:
            raise SpecError(f"{where}: keys has a list for {extra[0]!r}, which is not a by column "
                            f"({', '.join(by)})", name="keys")
        missing = [c for c in by if c not in raw]
        if missing:
            raise SpecError(f"{where}: keys needs the list of values of {missing[0]!r}", name="keys")
        lists = []
        for c in by:
            vals = raw[c]
            if not isinstance(vals, list) or any(isinstance(v, (list, dict)) or v is None for v in vals):
                raise SpecError(f"{where}: keys.{c} must be a list of values; got {_kind(vals)} {vals!r}", name="keys")
            lists.append([_key_text(v) for v in vals])
            dup = _first_duplicate([(v,) for v in lists[-1]])
            if dup is not None:
                raise SpecError(f"{where}: the key list of {c!r} has a duplicate: {dup[0]!r}", name="keys",
                                value=dup[0])
        rows = list(itertools.product(*lists))  # the groups are the cross product
        src = "inline"
    if not rows:
        raise SpecError(f"{where}: the key list is empty", name="keys")
    dup = _first_duplicate(rows)
    if dup is not None:
        shown = dup[0] if len(dup) == 1 else dup
        raise SpecError(f"{where}: the key list has a duplicate: {shown!r}", name="keys", value=dup)
    return tuple(rows), src


def _first_duplicate(rows: Sequence[tuple[str, ...]]) -> tuple[str, ...] | None:
    seen: set[tuple[str, ...]] = set()
    for r in rows:
        if r in seen:
            return r
        seen.add(r)
    return None


_QUERY_KEYS = ("name", "type", "by", "keys", "column", "bounds", "granularity", "weight", "noise",
               "max_groups_per_unit", "max_rows_per_group", "mean_sum_share", "target", "bins",
               "max_distinct_per_unit", "post", "quantiles", "missing", "discovery_delta", "discovery_share")
_SAFE = re.compile(r"[^\w.-]+")


#: the columns every output file adds after the group columns (see release/output.py)
_OUTPUT_COLUMNS = ("value", "lower", "upper")


def _fold(name: str) -> str:
    return name.casefold()


def _parse_query(i: int, raw: Any, data: DataSpec, noise: str, base: str | None, seen: set[str]) -> QuerySpec:
    if not isinstance(raw, Mapping):
        raise SpecError(f"query #{i}: must be a table ([[query]]); got {_kind(raw)}")
    name = raw.get("name", f"query{i}")
    name = _str(f"query #{i}", "name", name)
    where = f"query {name!r}"
    stem = _SAFE.sub("_", name.strip()).strip("._") or f"query{i}"
    if len(stem.encode()) > 200:
        # the output file is <stem>.csv or <stem>.parquet: a name over 255 bytes failed after the spend
        raise SpecError(f"{where}: name is too long for a file name ({len(stem.encode())} bytes; at most 200)",
                        name="name", value=name)
    if stem in seen:
        raise SpecError(f"{where}: duplicate name (each query needs its own name and output file)", name="name")
    seen.add(stem)
    _keys_allowed(where, raw, _QUERY_KEYS)
    if "type" not in raw:
        raise SpecError(f"{where}: missing required key 'type' ({', '.join(QUERY_TYPES)})", name="type")
    qtype = _choice(where, "type", raw["type"], QUERY_TYPES)
    by_raw = raw.get("by", [])
    if isinstance(by_raw, str):
        by_raw = [by_raw]
    if not isinstance(by_raw, list) or not all(isinstance(c, str) and c.strip() for c in by_raw):
        raise SpecError(f"{where}: by must be a list of column names; got {by_raw!r}", name="by")
    by = tuple(by_raw)
    # SQL engines match column names without regard to case ("ID" is the column id), so every
    # comparison of names below is on the case-folded name.
    if len({_fold(c) for c in by}) != len(by):
        raise SpecError(f"{where}: by names a column twice: {by_raw!r}", name="by")
    if _fold(data.privacy_unit) in {_fold(c) for c in by}:
        raise SpecError(f"{where}: cannot group by the privacy unit {data.privacy_unit!r}", name="by")
    for c in by:
        if _fold(c) in _OUTPUT_COLUMNS:
            raise SpecError(f"{where}: by column {c!r} has the name of an output column ({', '.join(_OUTPUT_COLUMNS)})"
                            "; rename it in the data", name="by", value=c)
    keys, key_source = _parse_keys(where, raw.get("keys"), by, base)
    column = None
    bounds = None
    not_for = {"count": ("column", "bounds", "bins", "max_distinct_per_unit"),
               "count_distinct": ("bounds", "bins"),
               "histogram": ("bounds", "max_distinct_per_unit")}.get(
        qtype, ("bins", "max_distinct_per_unit"))
    if qtype != "quantile":
        not_for = (*not_for, "quantiles")
    if qtype not in MISSING_TYPES:
        not_for = (*not_for, "missing")
    if key_source != "discover":
        not_for = (*not_for, "discovery_delta", "discovery_share")
    for k in not_for:
        if k in raw:
            extra = " (only with keys = \"discover\")" if k.startswith("discovery_") else ""
            raise SpecError(f"{where}: {k} is not used by a {qtype} query{extra}", name=k)
    if qtype != "count":
        if "column" not in raw:
            raise SpecError(f"{where}: a {qtype} query needs column = \"name\"", name="column")
        column = _str(where, "column", raw["column"])
        if _fold(column) == _fold(data.privacy_unit):
            raise SpecError(f"{where}: cannot aggregate the privacy unit {column!r}", name="column")
    if qtype in VALUE_TYPES:
        b = raw.get("bounds")
        if not isinstance(b, list) or len(b) != 2:
            raise SpecError(f"{where}: a {qtype} query needs bounds = [lower, upper] (the clamping range); "
                            f"got {b!r}", name="bounds", value=b)
        lo, hi = _real(where, "bounds[0]", b[0]), _real(where, "bounds[1]", b[1])
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise SpecError(f"{where}: bounds must be finite; got {b!r}", name="bounds", value=b)
        if lo > hi:
            raise SpecError(f"{where}: bounds must satisfy lower <= upper; got lower = {b[0]!r} > upper = {b[1]!r}",
                            name="bounds", value=b)
        bounds = (lo, hi)
    bins = None
    if qtype == "histogram":
        e = raw.get("bins")
        if not isinstance(e, list) or not 2 <= len(e) <= MAX_BINS + 1:
            raise SpecError(f"{where}: a histogram needs bins = [e0, e1, ..., ek] (2 to {MAX_BINS + 1} public "
                            f"edges); got {e!r}", name="bins", value=e)
        edges = [_real(where, f"bins[{i}]", x) for i, x in enumerate(e)]
        if not all(math.isfinite(x) for x in edges):
            raise SpecError(f"{where}: bins must be finite; got {e!r}", name="bins", value=e)
        bad = next((i for i in range(1, len(edges)) if not edges[i - 1] < edges[i]), None)
        if bad is not None:
            raise SpecError(f"{where}: bins must be strictly increasing; got bins[{bad - 1}] = {e[bad - 1]!r} >= "
                            f"bins[{bad}] = {e[bad]!r}", name="bins", value=e)
        if "bin" in by:
            raise SpecError(f"{where}: a histogram adds an output column 'bin'; rename the by column 'bin'",
                            name="by")
        bins = tuple(edges)
    gran = _real(where, "granularity", raw.get("granularity", 1.0))
    if not 0.0 < gran < math.inf:
        raise SpecError(f"{where}: granularity must be in (0, inf); got {raw.get('granularity')!r}",
                        name="granularity", value=gran)
    if bounds is not None and max(abs(bounds[0]), abs(bounds[1])) / gran > 2.0**52:
        raise SpecError(f"{where}: bounds/granularity exceeds 2**52 (values would not be exact integers); "
                        "use a coarser granularity", name="granularity", value=gran)
    if bounds is not None and qtype in ("variance", "std") and (bounds[1] - bounds[0]) / gran > 2.0**26:
        raise SpecError(f"{where}: (upper - lower)/granularity exceeds 2**26 (squared values would not be exact "
                        "integers); use a coarser granularity", name="granularity", value=gran)
    target = None
    if "target" in raw:
        if "weight" in raw:
            raise SpecError(f"{where}: give a weight or a target, not both", name="target")
        if qtype not in TARGET_TYPES:
            raise SpecError(f"{where}: target is for {', '.join(TARGET_TYPES)} queries (a {qtype}'s interval "
                            "depends on its group sizes); give a weight", name="target")
        target = _parse_target(where, raw["target"])
    weight = _real(where, "weight", raw.get("weight", 1.0))
    if not 0.0 < weight < math.inf:
        raise SpecError(f"{where}: weight must be in (0, inf); got {raw.get('weight')!r}", name="weight",
                        value=weight)
    qnoise = _choice(where, "noise", raw["noise"], NOISE_KINDS) if "noise" in raw else noise
    g = _int(where, "max_groups_per_unit", raw["max_groups_per_unit"]) if "max_groups_per_unit" in raw \
        else data.max_groups_per_unit
    r = _int(where, "max_rows_per_group", raw["max_rows_per_group"]) if "max_rows_per_group" in raw \
        else data.max_rows_per_group
    kd = _int(where, "max_distinct_per_unit", raw["max_distinct_per_unit"]) if "max_distinct_per_unit" in raw \
        else None
    share = _real(where, "mean_sum_share", raw.get("mean_sum_share", 0.5))
    if not 0.0 < share < 1.0:
        raise SpecError(f"{where}: mean_sum_share must be in (0, 1); got {raw.get('mean_sum_share')!r}",
                        name="mean_sum_share", value=share)
    if qtype != "mean" and "mean_sum_share" in raw:
        raise SpecError(f"{where}: mean_sum_share is only for mean queries", name="mean_sum_share")
    post = _parse_post(where, raw.get("post", []), qtype, by)
    if target is not None and "consistent" in post:
        raise SpecError(f"{where}: a target cannot be combined with post consistent (the projected intervals "
                        "are bounds, not the exact noise quantiles a target is solved for)", name="target")
    quantiles = _parse_quantiles(where, raw, qtype, by, keys, key_source, bounds, gran)
    missing = _parse_missing(where, raw.get("missing", "error"), qtype, bounds, bins)
    ddelta, dshare = None, DISCOVERY_SHARE
    if key_source == "discover":
        if "consistent" in post:
            raise SpecError(f"{where}: post consistent needs a public key list (its levels are derived from it); "
                            "it cannot be combined with keys = \"discover\"", name="post")
        if target is not None:
            raise SpecError(f"{where}: a target cannot be combined with keys = \"discover\" (give a weight)",
                            name="target")
        if "discovery_delta" in raw:
            ddelta = _real(where, "discovery_delta", raw["discovery_delta"])
            if not 0.0 < ddelta < 1.0:
                raise SpecError(f"{where}: discovery_delta must be in (0, 1); got {raw['discovery_delta']!r}",
                                name="discovery_delta", value=ddelta)
        dshare = _real(where, "discovery_share", raw.get("discovery_share", DISCOVERY_SHARE))
        if not 0.0 < dshare < 1.0:
            raise SpecError(f"{where}: discovery_share must be in (0, 1); got {raw.get('discovery_share')!r}",
                            name="discovery_share", value=dshare)
    return QuerySpec(name=name, type=qtype, by=by, keys=keys, column=column, bounds=bounds, granularity=gran,
                     weight=weight, noise=qnoise, max_groups_per_unit=g, max_rows_per_group=r,
                     mean_sum_share=share, key_source=key_source, target=target, bins=bins,
                     max_distinct_per_unit=kd, post=post, quantiles=quantiles, missing=missing,
                     discovery_delta=ddelta, discovery_share=dshare)


def _parse_quantiles(where: str, raw: Mapping[str, Any], qtype: str, by: tuple[str, ...],
                     keys: tuple[tuple[str, ...], ...], key_source: str, bounds: tuple[float, float] | None,
                     gran: float) -> tuple[float, ...] | None:
    if qtype != "quantile":
        return None
    assert bounds is not None
    v = raw.get("quantiles", [0.5])
    if not isinstance(v, list) or not v:
        raise SpecError(f"{where}: quantiles must be a non-empty list of numbers in (0, 1); got {_kind(v)} {v!r}",
                        name="quantiles", value=v)
    qs = tuple(_real(where, f"quantiles[{i}]", x) for i, x in enumerate(v))
    bad = next((x for x in qs if not 0.0 < x < 1.0), None)
    if bad is not None:
        raise SpecError(f"{where}: quantiles must be in (0, 1); got {bad!r}", name="quantiles", value=bad)
    if len(set(qs)) != len(qs):
        raise SpecError(f"{where}: quantiles names a quantile twice: {v!r}", name="quantiles", value=v)
    if len(qs) > 1 and any(_fold(c) == "quantile" for c in by):
        raise SpecError(f"{where}: with several quantiles the output adds a column 'quantile'; rename the by "
                        "column 'quantile'", name="by")
    k = grid_steps(bounds[0], bounds[1], gran) + 1
    if k > MAX_CANDIDATES:
        raise SpecError(f"{where}: the candidate grid has {k} points ((upper - lower)/granularity + 1); at most "
                        f"{MAX_CANDIDATES}: use a coarser granularity", name="granularity", value=gran)
    if key_source != "discover" and len(keys) * k > MAX_QUANTILE_CELLS:
        raise SpecError(f"{where}: {len(keys)} groups × {k} candidates exceed {MAX_QUANTILE_CELLS} counts; use a "
                        "coarser granularity", name="granularity", value=gran)
    return qs


def _parse_missing(where: str, v: Any, qtype: str, bounds: tuple[float, float] | None,
                   bins: tuple[float, ...] | None) -> str | float:
    if qtype not in MISSING_TYPES:
        return "error"
    if isinstance(v, str):
        return _choice(where, "missing", v, MISSING_POLICIES)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise SpecError(f"{where}: missing must be \"error\", \"drop\" or a number (the value used instead); got "
                        f"{_kind(v)} {v!r}", name="missing", value=v)
    x = float(v)
    if not math.isfinite(x):
        raise SpecError(f"{where}: missing must be a finite number; got {v!r}", name="missing", value=v)
    lo, hi = bounds if bounds is not None else (bins[0], bins[-1]) if bins is not None else (-math.inf, math.inf)
    if not lo <= x <= hi:
        what = "bounds" if bounds is not None else "bins"
        raise SpecError(f"{where}: missing must lie within the {what} [{lo:g}, {hi:g}] (a value outside would be "
                        f"clamped); got {v!r}", name="missing", value=v)
    return x


def _discovery_budget(queries: tuple[QuerySpec, ...], rho: float, budget: Mapping[str, float]
                      ) -> tuple[tuple[QuerySpec, ...], float, float]:
    """Give every discovering query its δ and return (queries, plain ρ, Σδ of discovery).

    Key discovery is δ-approximately zCDP, so it needs a δ from the budget: all of a
    ``{rho, delta}`` budget's δ (split evenly among the discovering queries that give none), or
    half of an ``{epsilon, delta}`` budget's δ; there, the ρ is then converted at the δ left:
    δ_D-approximate ρ-zCDP is (ε, δ_D + (1 − δ_D)·δ′)-DP when ρ-zCDP is (ε, δ′)-DP
    ([BS16] §8 and Lemma 38 recipe), so δ′ = (δ − δ_D)/(1 − δ_D).
    """
    import dataclasses

    disc = [q for q in queries if q.discover]
    if not disc:
        return queries, rho, 0.0
    if "delta" not in budget:
        raise SpecError(f"query {disc[0].name!r}: keys = \"discover\" spends a δ (Gaussian thresholding is "
                        "δ-approximately zCDP); give privacy.budget = { rho = ..., delta = ... } or "
                        "{ epsilon = ..., delta = ... }", name="budget")
    total = budget["delta"] if "rho" in budget else budget["delta"] / 2.0
    given = math.fsum(q.discovery_delta for q in disc if q.discovery_delta is not None)
    unset = [q for q in disc if q.discovery_delta is None]
    if given > total * (1.0 + 1e-12) or (unset and given >= total):
        part = "the budget's delta" if "rho" in budget else "half the budget's delta"
        raise SpecError(f"privacy.budget: the queries' discovery_delta add up to {given:.6g}, more than {part} "
                        f"({total:.6g})", name="discovery_delta", value=given)
    each = (total - given) / len(unset) if unset else 0.0
    out = tuple(dataclasses.replace(q, discovery_delta=each) if q.discover and q.discovery_delta is None else q
                for q in queries)
    dd = math.fsum(q.discovery_delta for q in out if q.discovery_delta is not None)
    if "epsilon" in budget:
        from renyi.guarantees.conversions import zcdp_rho_for

        rho = zcdp_rho_for(budget["epsilon"], (budget["delta"] - dd) / (1.0 - dd))
    return out, rho, dd


def _parse_target(where: str, raw: Any) -> Target:
    if not isinstance(raw, Mapping):
        raise SpecError(f"{where}: target must be a table like {{ half_width = 50, coverage = 0.95 }}; got "
                        f"{_kind(raw)} {raw!r}", name="target", value=raw)
    _keys_allowed(f"{where}: target", raw, ("half_width", "coverage"))
    if "half_width" not in raw:
        raise SpecError(f"{where}: target needs half_width (in the query's units)", name="target.half_width")
    h = _real(where, "target.half_width", raw["half_width"])
    if not 0.0 < h < math.inf:
        raise SpecError(f"{where}: target.half_width must be in (0, inf); got {raw['half_width']!r}",
                        name="target.half_width", value=h)
    c = _real(where, "target.coverage", raw.get("coverage", 0.95))
    if not 0.0 < c < 1.0:
        raise SpecError(f"{where}: target.coverage must be in (0, 1); got {raw.get('coverage')!r}",
                        name="target.coverage", value=c)
    return Target(h, c)


def _parse_post(where: str, raw: Any, qtype: str, by: tuple[str, ...]) -> tuple[str, ...]:
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list):
        raise SpecError(f"{where}: post must be a list of {', '.join(POST_STEPS)}; got {_kind(raw)} {raw!r}",
                        name="post", value=raw)
    steps = tuple(_choice(where, "post", x, POST_STEPS) for x in raw)
    if len(set(steps)) != len(steps):
        raise SpecError(f"{where}: post names a step twice: {raw!r}", name="post", value=raw)
    if "non_negative" in steps and qtype not in ("count", "count_distinct", "histogram"):
        raise SpecError(f"{where}: post non_negative is for count, count_distinct and histogram queries",
                        name="post", value=raw)
    if "consistent" in steps:
        if qtype not in ("count", "sum"):
            raise SpecError(f"{where}: post consistent is for count and sum queries", name="post", value=raw)
        if not by:
            raise SpecError(f"{where}: post consistent needs by columns (totals over their levels)", name="post",
                            value=raw)
    return steps


def output_stem(query: QuerySpec) -> str:
    """The output file's stem of a query: its name with characters unsafe in file names as ``_``."""
    return _SAFE.sub("_", query.name.strip()).strip("._") or "query"


def parse_spec(data: Mapping[str, Any], *, base_dir: str | None = None, source: str = "<dict>") -> ReleaseSpec:
    """Build a :class:`ReleaseSpec` from decoded TOML/JSON data (or a dict).

    Args:
        data: the spec: ``[data]``, ``[privacy]``, ``[[query]]`` and optional ``[output]``,
            ``[engine]`` and ``title``.
        base_dir: directory against which relative paths (source, key files, ledger, output)
            are resolved; None: the current directory.
        source: where the spec came from, for messages and the report.

    Raises:
        SpecError: with a one-line message naming the section, query and key at fault.
    """
    if not isinstance(data, Mapping):
        raise SpecError(f"a release spec must be a table/object at top level; got {_kind(data)}")
    _keys_allowed("spec", data, ("title", "data", "privacy", "query", "output", "engine"))
    for sec in ("data", "privacy", "query"):
        if sec not in data:
            raise SpecError(f"spec: missing required section [{sec}]" if sec != "query"
                            else "spec: no queries: add at least one [[query]] table")
    ds = _parse_data(data["data"], base_dir)
    priv = data["privacy"]
    if not isinstance(priv, Mapping):
        raise SpecError(f"privacy must be a table ([privacy]); got {_kind(priv)}")
    _keys_allowed("privacy", priv, _PRIVACY_KEYS)
    if "budget" not in priv:
        raise SpecError("privacy: missing required key 'budget' ({ rho = ... } or { epsilon = ..., delta = ... })",
                        name="budget")
    rho, budget = parse_budget("privacy.budget", priv["budget"])
    if "delta" in priv:
        d = _real("privacy", "delta", priv["delta"])
        if not 0.0 < d < 1.0:
            raise SpecError(f"privacy: delta must be in (0, 1); got {priv['delta']!r}", name="delta", value=d)
    else:
        d = budget.get("delta", DEFAULT_REPORT_DELTA)
    ledger = _resolve(base_dir, _str("privacy", "ledger", priv["ledger"])) if "ledger" in priv else None
    ledger_budget = None
    if "ledger_budget" in priv:
        if ledger is None:
            raise SpecError("privacy: ledger_budget needs a ledger = \"file.db\"", name="ledger_budget")
        _, ledger_budget = parse_budget("privacy.ledger_budget", priv["ledger_budget"])
    noise = _choice("privacy", "noise", priv["noise"], NOISE_KINDS) if "noise" in priv else "discrete_gaussian"

    qs = data["query"]
    if isinstance(qs, Mapping):
        qs = [qs]
    if not isinstance(qs, list) or not qs:
        raise SpecError("query must be a non-empty list of tables ([[query]])")
    seen: set[str] = set()
    queries = tuple(_parse_query(i + 1, q, ds, noise, base_dir, seen) for i, q in enumerate(qs))
    queries, rho, disc_delta = _discovery_budget(queries, rho, budget)
    if "delta" not in priv and disc_delta > 0.0 and "epsilon" not in budget:
        d = DEFAULT_REPORT_DELTA + disc_delta
    if d <= disc_delta:
        raise SpecError(f"privacy: delta (the δ of the report's ε) must exceed the δ of key discovery, "
                        f"{disc_delta:.6g}; got {d!r}", name="delta", value=d)

    out = data.get("output", {})
    if not isinstance(out, Mapping):
        raise SpecError(f"output must be a table ([output]); got {_kind(out)}")
    _keys_allowed("output", out, ("dir", "format"))
    out_dir = _resolve(base_dir, _str("output", "dir", out["dir"])) if "dir" in out else None
    out_format = _choice("output", "format", out["format"], OUTPUT_FORMATS) if "format" in out else "csv"

    eng = data.get("engine", {})
    if not isinstance(eng, Mapping):
        raise SpecError(f"engine must be a table ([engine]); got {_kind(eng)}")
    _keys_allowed("engine", eng, ("name", "master", "conf", "start_timeout", "memory_limit", "threads"))
    mem = _str("engine", "memory_limit", eng["memory_limit"]) if "memory_limit" in eng else None
    if mem is not None and not re.fullmatch(r"\s*\d+(\.\d+)?\s*[KMGT]i?B\s*", mem, flags=re.IGNORECASE):
        raise SpecError(f"engine: memory_limit must look like \"4GB\"; got {mem!r}", name="memory_limit", value=mem)
    threads = _int("engine", "threads", eng["threads"]) if "threads" in eng else None
    engine, master, conf, start_timeout = _parse_engine(eng, ds)
    title = data.get("title", "")
    if not isinstance(title, str):
        raise SpecError(f"title must be a string; got {_kind(title)}")
    name = title or (os.path.basename(source) if source != "<dict>" else "release")
    return ReleaseSpec(name=name, data=ds, queries=queries, rho=rho, budget=budget,
                       delta=d, ledger=ledger, ledger_budget=ledger_budget, out_dir=out_dir, out_format=out_format,
                       memory_limit=mem, threads=threads, source=source, engine=engine, master=master,
                       engine_conf=conf, start_timeout=start_timeout,
                       discovery_delta=disc_delta)


#: the engines a spec may name
ENGINE_NAMES = ("duckdb", "spark")


def _parse_engine(eng: Mapping[str, Any], data: DataSpec) -> tuple[str, str | None, tuple[tuple[str, str], ...],
                                                                    float]:
    """``[engine]``: name, master, conf and start_timeout (the Spark keys only with name = "spark")."""
    name = _choice("engine", "name", eng["name"], ENGINE_NAMES) if "name" in eng else "duckdb"
    if name != "spark":
        for k in ("master", "conf", "start_timeout"):
            if k in eng:
                raise SpecError(f"engine: {k} is only for name = \"spark\"; got name = {name!r}", name=k)
        return name, None, (), 120.0
    if data.format == "duckdb":
        raise SpecError("data: a DuckDB file is read by the duckdb engine only; give the spark engine a CSV or "
                        "Parquet source", name="format", value=data.format)
    master = None
    if "master" in eng:
        master = _str("engine", "master", eng["master"]).strip()
        if not re.fullmatch(r"local(\[(\*|\d+)(, *\d+)?\])?|(spark|yarn|k8s|mesos)(://\S+)?|spark://\S+", master):
            raise SpecError(f"engine: master must be a Spark master URL (local[*], local[4], spark://host:7077, "
                            f"yarn, k8s://…); got {eng['master']!r}", name="master", value=eng["master"])
    conf: list[tuple[str, str]] = []
    raw = eng.get("conf", {})
    if not isinstance(raw, Mapping):
        raise SpecError(f"engine: conf must be a table of Spark settings like {{ \"spark.executor.memory\" = \"4g\" }}; "
                        f"got {_kind(raw)} {raw!r}", name="conf", value=raw)
    for k, v in raw.items():
        if not isinstance(k, str) or not k.startswith("spark."):
            raise SpecError(f"engine: conf keys must be Spark settings (spark.…); got {k!r}", name="conf", value=k)
        if isinstance(v, bool):
            v = "true" if v else "false"
        if not isinstance(v, (str, int, float)):
            raise SpecError(f"engine: conf.{k} must be a string or a number; got {_kind(v)} {v!r}", name=k, value=v)
        conf.append((k, str(v)))
    timeout = _real("engine", "start_timeout", eng.get("start_timeout", 120.0))
    if not 0.0 < timeout < math.inf:
        raise SpecError(f"engine: start_timeout must be in (0, inf); got {eng.get('start_timeout')!r}",
                        name="start_timeout", value=timeout)
    return name, master, tuple(conf), timeout


def load_spec(path: str | os.PathLike[str]) -> ReleaseSpec:
    """Read and parse a spec file: TOML, or JSON when the name ends in ``.json``.

    Relative paths inside the spec are resolved against the spec's directory.

    Raises:
        SpecError: missing or unreadable file, syntax error, or an invalid spec.
    """
    from renyi.core._validation import read_user_text

    p = os.fspath(path)
    text = read_user_text(p, "a release spec", SpecError)
    data: Any
    if p.lower().endswith(".json"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise SpecError(f"{p}: JSON syntax error at line {e.lineno}, column {e.colno}: {e.msg}") from None
        except RecursionError:  # [[[[...]]]] nested beyond Python's recursion limit
            raise SpecError(f"{p}: JSON nested too deeply") from None
    else:
        import tomllib

        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise SpecError(f"{p}: TOML syntax error: {str(e).splitlines()[0]}") from None
    try:
        return parse_spec(data, base_dir=os.path.dirname(os.path.abspath(p)), source=p)
    except SpecError as e:
        raise SpecError(f"{p}: {e}", name=e.name, value=e.value) from None
