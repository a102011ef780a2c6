"""Storage for the accountant: an append-only ledger of spends, in memory or in SQLite.

The ledger is deliberately dumb: it stores a header (written once) and rows (appended, never
changed), and offers one operation that matters for safety, a *write transaction* in which a
caller reads every row it has not yet seen, decides, and appends — all under one write lock.
The privacy arithmetic lives in :mod:`renyi.accountant`.

The stored format is documented in ``docs/accountant.md`` (schema version 1): every number
is JSON (``repr`` round-trips IEEE doubles exactly), non-finite values are the strings
``"inf"``/``"-inf"``, and guarantees follow a small ``{"type": ..., parameters}`` schema
(:func:`guarantee_to_json`), so an auditor can recompute every total without renyi.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sqlite3
import threading
import urllib.parse
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from .definitions import GDP, MCDP, RDP, ZCDP, ApproxDP, ApproxRDP, ApproxZCDP, Guarantee, PureDP
from .errors import LedgerError

__all__ = [
    "SCHEMA_VERSION",
    "LEDGER_FORMAT",
    "SpendRecord",
    "Ledger",
    "MemoryLedger",
    "SQLiteLedger",
    "guarantee_to_json",
    "guarantee_from_json",
    "encode_floats",
    "decode_floats",
]

#: Version of the stored format. A ledger with a larger version is refused (LedgerError).
SCHEMA_VERSION = 1
#: Value of the header key ``format``; a SQLite file without it is foreign.
LEDGER_FORMAT = "renyi-ledger"

_SQLITE_MAGIC = b"SQLite format 3\x00"


# --------------------------------------------------------------------------------------
# JSON helpers
# --------------------------------------------------------------------------------------
def _enc(x: float) -> float | str:
    x = float(x)
    if math.isfinite(x):
        return x
    if math.isnan(x):  # never produced by the library; refuse rather than store nonsense
        raise LedgerError("refusing to store NaN in the ledger")
    return "inf" if x > 0 else "-inf"


def _dec(x: Any) -> float:
    if isinstance(x, str):
        if x == "inf":
            return math.inf
        if x == "-inf":
            return -math.inf
        raise LedgerError(f"bad number in ledger: {x!r}")
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise LedgerError(f"bad number in ledger: {x!r}")
    return float(x)


def encode_floats(values: Sequence[float] | np.ndarray) -> list[float | str]:
    """Floats as JSON values: finite numbers as themselves, ±∞ as the strings "inf"/"-inf"."""
    arr = np.asarray(values, dtype=np.float64)
    if np.all(np.isfinite(arr)):
        result: list[float | str] = arr.tolist()
        return result
    return [_enc(v) for v in arr.tolist()]


def decode_floats(values: Sequence[Any]) -> np.ndarray:
    """Inverse of :func:`encode_floats` (exact)."""
    types = set(map(type, values))
    if types <= {float, int}:
        return np.array(values, dtype=np.float64)
    return np.array([_dec(v) for v in values], dtype=np.float64)


def _opt(x: float | None) -> float | str | None:
    return None if x is None else _enc(x)


def _dopt(x: Any) -> float | None:
    return None if x is None else _dec(x)


def guarantee_to_json(g: Guarantee, *, orders: np.ndarray | None = None) -> dict[str, Any]:
    """A guarantee as a JSON object (schema version 1; see docs/accountant.md).

    Closed-form types keep their parameters. An RDP curve is stored as points: with
    ``orders`` given, inline as ``"orders"``/``"epsilons"``; without, the points are the
    ``rdp`` column of the spend that carries it (evaluated on the ledger's grid).
    """
    if isinstance(g, GDP):
        return {"type": "GDP", "mu": _enc(g.mu)}
    if isinstance(g, PureDP):
        return {"type": "PureDP", "epsilon": _enc(float(g.epsilon))}
    if isinstance(g, ApproxDP):
        return {"type": "ApproxDP", "epsilon": _enc(float(g.epsilon)), "delta": _enc(float(g.delta))}
    if isinstance(g, ZCDP):
        return {"type": "ZCDP", "rho": _enc(g.rho), "xi": _enc(g.xi)}
    if isinstance(g, ApproxZCDP):
        return {"type": "ApproxZCDP", "rho": _enc(g.rho), "xi": _enc(g.xi), "delta": _enc(float(g.delta))}
    if isinstance(g, MCDP):
        return {"type": "MCDP", "mu": _enc(g.mu), "tau": _enc(g.tau)}
    if isinstance(g, ApproxRDP):
        return {"type": "ApproxRDP", "curve": guarantee_to_json(g.curve, orders=orders),
                "delta": _enc(float(g.delta))}
    # RDP curves and any other guarantee: points on the grid (conservative between points).
    out: dict[str, Any] = {"type": "RDP"}
    if isinstance(g, RDP):
        out["eps_inf"] = _enc(g.eps_inf)
        out["zcdp"] = None if g.zcdp is None else [_enc(g.zcdp[0]), _enc(g.zcdp[1])]
        out["label"] = g.label or repr(g)
    else:
        out["eps_inf"] = _enc(float(g.rdp(math.inf)))
        out["zcdp"] = None
        out["label"] = repr(g)
    if orders is not None:
        out["orders"] = encode_floats(orders)
        out["epsilons"] = encode_floats(np.asarray(g.rdp(orders), dtype=np.float64))
    return out


def guarantee_from_json(obj: dict[str, Any], *, orders: np.ndarray | None = None,
                        epsilons: np.ndarray | None = None) -> Guarantee:
    """Inverse of :func:`guarantee_to_json`. RDP curves come back as point curves
    (:meth:`RDP.from_points`, conservative between points) carrying their ε(∞) and (ξ, ρ)."""
    try:
        t = obj["type"]
        if t == "GDP":
            return GDP(_dec(obj["mu"]))
        if t == "PureDP":
            return PureDP(_dec(obj["epsilon"]))
        if t == "ApproxDP":
            return ApproxDP(_dec(obj["epsilon"]), _dec(obj["delta"]))
        if t == "ZCDP":
            return ZCDP(_dec(obj["rho"]), _dec(obj.get("xi", 0.0)))
        if t == "ApproxZCDP":
            return ApproxZCDP(_dec(obj["rho"]), _dec(obj.get("xi", 0.0)), _dec(obj["delta"]))
        if t == "MCDP":
            return MCDP(_dec(obj["mu"]), _dec(obj["tau"]))
        if t == "ApproxRDP":
            curve = guarantee_from_json(obj["curve"], orders=orders, epsilons=epsilons)
            return ApproxRDP(curve, _dec(obj["delta"]))  # type: ignore[arg-type]
        if t == "RDP":
            a = decode_floats(obj["orders"]) if "orders" in obj else orders
            e = decode_floats(obj["epsilons"]) if "epsilons" in obj else epsilons
            if a is None or e is None:
                raise LedgerError("RDP guarantee without points")
            eps_inf = _dec(obj.get("eps_inf", "inf"))
            zc = obj.get("zcdp")
            # ε(α) is non-decreasing in α, so infinite values form a tail; the finite points
            # are kept and nothing beyond the last one is claimed except ε(∞).
            finite = np.isfinite(e)
            if np.any(finite):
                fn = RDP.from_points(a[finite], e[finite], eps_inf=eps_inf).fn
            else:
                from .definitions.rdp import _Infinite

                fn = _Infinite()
            return RDP(fn, eps_inf=eps_inf, zcdp=None if zc is None else (_dec(zc[0]), _dec(zc[1])),
                       convex=False, orders=tuple(float(x) for x in a), label=str(obj.get("label", "")))
    except LedgerError:
        raise
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise LedgerError(f"malformed guarantee in ledger: {obj!r} ({exc})") from None
    raise LedgerError(f"unknown guarantee type in ledger: {obj.get('type')!r}")


# --------------------------------------------------------------------------------------
# Rows
# --------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class SpendRecord:
    """One stored spend. Quantities are *per unit*; the spend counts ``count`` units.

    Attributes:
        id: position in the ledger (1, 2, ...; totals are summed in id order).
        time: POSIX time of the spend.
        label: user label or None.
        count: number of runs (≥ 1).
        guarantee: the guarantee as JSON (schema of :func:`guarantee_to_json`).
        mechanism: ``repr`` of the mechanism, or None when a guarantee was spent.
        rdp: ε(α) of one unit on the ledger's grid of orders (∞ allowed).
        eps_inf: ε(∞) of one unit (a pure-DP bound; ∞ if none).
        xi, rho: (ξ, ρ)-zCDP of one unit, or None when the unit has no zCDP bound.
        mu: μ of one unit when it is μ-GDP (Gaussian), else None.
        delta: δ of one unit (0 unless approximate; the RDP/zCDP/pure figures then hold
            after conditioning on an event of probability ≥ 1 − δ).
    """

    id: int
    time: float
    label: str | None
    count: int
    guarantee: dict[str, Any]
    mechanism: str | None
    rdp: np.ndarray
    eps_inf: float
    xi: float | None
    rho: float | None
    mu: float | None
    delta: float

    def to_json(self) -> dict[str, Any]:
        """The record as one JSON object (the export format; docs/accountant.md)."""
        return {
            "id": self.id,
            "time": self.time,
            "label": self.label,
            "count": self.count,
            "guarantee": self.guarantee,
            "mechanism": self.mechanism,
            "rdp": encode_floats(self.rdp),
            "eps_inf": _enc(self.eps_inf),
            "xi": _opt(self.xi),
            "rho": _opt(self.rho),
            "mu": _opt(self.mu),
            "delta": _enc(self.delta),
        }

    @classmethod
    def from_json(cls, obj: dict[str, Any], *, id: int | None = None) -> SpendRecord:
        try:
            rdp = obj["rdp"]
            if not isinstance(rdp, np.ndarray):
                rdp = decode_floats(rdp)
                rdp.setflags(write=False)
            count = obj["count"]
            if isinstance(count, bool) or not isinstance(count, int) or count < 1:
                raise LedgerError(f"bad count in ledger: {count!r}")
            label = obj.get("label")
            mech = obj.get("mechanism")
            guarantee = obj["guarantee"]
            if not isinstance(guarantee, dict):
                raise LedgerError(f"bad guarantee in ledger: {guarantee!r}")
            return cls(
                id=int(obj["id"]) if id is None else id,
                time=_dec(obj["time"]),
                label=None if label is None else str(label),
                count=count,
                guarantee=guarantee,
                mechanism=None if mech is None else str(mech),
                rdp=rdp,
                eps_inf=_dec(obj["eps_inf"]),
                xi=_dopt(obj.get("xi")),
                rho=_dopt(obj.get("rho")),
                mu=_dopt(obj.get("mu")),
                delta=_dec(obj["delta"]),
            )
        except LedgerError:
            raise
        except (KeyError, TypeError, ValueError) as exc:
            raise LedgerError(f"malformed spend record: {exc}") from None


# --------------------------------------------------------------------------------------
# Ledgers
# --------------------------------------------------------------------------------------
class Ledger:
    """Interface of a ledger (see :class:`MemoryLedger`, :class:`SQLiteLedger`).

    ``initialize(header)`` stores ``header`` if the ledger is empty and returns the stored
    header. ``transaction()`` is a context manager yielding an object with
    ``rows_after(last_id)`` and ``append(record_without_id) -> id``; everything inside runs
    under the ledger's write lock and is committed atomically on normal exit, rolled back on
    an exception. ``rows_after(last_id)`` outside a transaction reads without locking.
    """

    path: str | None = None

    def initialize(self, header: dict[str, Any]) -> dict[str, Any]:  # pragma: no cover
        raise NotImplementedError

    def transaction(self) -> Any:  # pragma: no cover
        raise NotImplementedError

    def rows_after(self, last_id: int) -> list[SpendRecord]:  # pragma: no cover
        raise NotImplementedError

    def close(self) -> None:
        """Release resources (idempotent)."""


class MemoryLedger(Ledger):
    """A ledger held in memory (lost when the process ends). Thread-safe."""

    def __init__(self) -> None:
        self._header: dict[str, Any] | None = None
        self._rows: list[SpendRecord] = []
        self._lock = threading.RLock()

    def __repr__(self) -> str:
        return f"MemoryLedger({len(self._rows)} spends)"

    def initialize(self, header: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            if self._header is None:
                self._header = json.loads(json.dumps(header))
            result: dict[str, Any] = json.loads(json.dumps(self._header))
            return result

    @contextmanager
    def transaction(self) -> Iterator[_MemoryTxn]:
        with self._lock:
            txn = _MemoryTxn(self)
            yield txn
            self._rows.extend(txn.pending)

    def rows_after(self, last_id: int) -> list[SpendRecord]:
        with self._lock:
            return self._rows[last_id:]


class _MemoryTxn:
    __slots__ = ("ledger", "pending")

    def __init__(self, ledger: MemoryLedger) -> None:
        self.ledger = ledger
        self.pending: list[SpendRecord] = []

    def rows_after(self, last_id: int) -> list[SpendRecord]:
        return self.ledger._rows[last_id:] + [r for r in self.pending if r.id > last_id]

    def append(self, rec: SpendRecord) -> int:
        new_id = len(self.ledger._rows) + len(self.pending) + 1
        rec = _with_id(rec, new_id)
        self.pending.append(rec)
        return new_id


def _with_id(rec: SpendRecord, new_id: int) -> SpendRecord:
    return SpendRecord(new_id, rec.time, rec.label, rec.count, rec.guarantee, rec.mechanism, rec.rdp,
                       rec.eps_inf, rec.xi, rec.rho, rec.mu, rec.delta)


_CREATE = (
    "CREATE TABLE renyi_header (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    # Per-unit RDP values on the grid, stored once per distinct curve (content-addressed:
    # id = SHA-256 of the JSON text), so 10⁴ spends of one mechanism store one array.
    "CREATE TABLE renyi_curves (id TEXT PRIMARY KEY, rdp TEXT NOT NULL)",
    "CREATE TABLE renyi_spends ("
    " id INTEGER PRIMARY KEY,"
    " time REAL NOT NULL,"
    " label TEXT,"
    " count INTEGER NOT NULL CHECK (count >= 1),"
    " guarantee TEXT NOT NULL,"
    " mechanism TEXT,"
    " curve TEXT NOT NULL REFERENCES renyi_curves (id),"
    " eps_inf TEXT NOT NULL,"
    " xi TEXT,"
    " rho TEXT,"
    " mu TEXT,"
    " delta TEXT NOT NULL)",
)

_COLUMNS = ("s.id, s.time, s.label, s.count, s.guarantee, s.mechanism, c.rdp, s.eps_inf, s.xi, s.rho, s.mu,"
            " s.delta, s.curve")
_SELECT = f"SELECT {_COLUMNS} FROM renyi_spends s JOIN renyi_curves c ON c.id = s.curve WHERE s.id > ? ORDER BY s.id"


_CURVES_READ: dict[str, np.ndarray] = {}


def _curve_values(key: str, text: str) -> np.ndarray:
    arr = _CURVES_READ.get(key)
    if arr is None:
        if hashlib.sha256(text.encode()).hexdigest() != key:
            raise LedgerError(f"corrupted ledger: RDP values do not match their hash {key!r}")
        arr = decode_floats(json.loads(text))
        arr.setflags(write=False)
        if len(_CURVES_READ) >= 4096:
            _CURVES_READ.clear()
        _CURVES_READ[key] = arr
    return arr


def _row_to_record(row: tuple[Any, ...]) -> SpendRecord:
    try:
        obj = {
            "id": row[0], "time": row[1], "label": row[2], "count": row[3],
            "guarantee": json.loads(row[4]), "mechanism": row[5], "rdp": _curve_values(row[12], row[6]),
            "eps_inf": json.loads(row[7]),
            "xi": None if row[8] is None else json.loads(row[8]),
            "rho": None if row[9] is None else json.loads(row[9]),
            "mu": None if row[10] is None else json.loads(row[10]),
            "delta": json.loads(row[11]),
        }
    except (json.JSONDecodeError, TypeError) as exc:
        raise LedgerError(f"corrupted spend row {row[0]!r}: {exc}") from None
    return SpendRecord.from_json(obj)


def _dump(x: Any) -> str:
    return json.dumps(x, allow_nan=False, separators=(",", ":"))


class SQLiteLedger(Ledger):
    """A ledger in a SQLite file (standard-library ``sqlite3``).

    * Every write is one ``BEGIN IMMEDIATE`` transaction: the caller reads the rows it has
      not seen and appends under SQLite's write lock, so concurrent processes serialise.
    * WAL journal with ``synchronous=FULL``: a committed spend survives a crash or power
      loss; a process killed mid-transaction leaves no trace of it.
    * Opening an existing file first inspects it **read-only**; a foreign, corrupted or
      newer-version file raises :class:`LedgerError` and is not modified.

    Args:
        path: file name. A missing or empty file becomes a new ledger.
        timeout: seconds to wait for another process's write lock.
    """

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 60.0) -> None:
        self.path = os.fspath(path)
        self._timeout = float(timeout)
        self._existing = _inspect_sqlite(self.path)  # raises LedgerError, never writes
        self._lock = threading.RLock()
        try:
            self._con = sqlite3.connect(self.path, timeout=self._timeout, isolation_level=None,
                                        check_same_thread=False)
            self._con.execute("PRAGMA synchronous=FULL")
        except sqlite3.Error as exc:
            raise LedgerError(f"cannot open ledger {self.path!r}: {exc}") from None

    def __repr__(self) -> str:
        return f"SQLiteLedger({self.path!r})"

    def initialize(self, header: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            if self._existing is not None:
                return self._existing
            con = self._con
            try:
                # WAL: readers never block the writer; with synchronous=FULL every commit is
                # durable. Set before the first write (a no-op if another process did it).
                con.execute("PRAGMA journal_mode=WAL")
                con.execute("BEGIN IMMEDIATE")
                try:
                    names = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
                    if "renyi_header" in names:  # another process created it meanwhile
                        stored = _read_header(con, str(self.path))
                        con.execute("COMMIT")
                        self._existing = stored
                        return stored
                    if names:
                        raise LedgerError(f"{self.path!r} is a SQLite database but not a renyi ledger")
                    for stmt in _CREATE:
                        con.execute(stmt)
                    con.executemany("INSERT INTO renyi_header (key, value) VALUES (?, ?)",
                                    [(k, _dump(v)) for k, v in header.items()])
                    con.execute("COMMIT")
                except BaseException:
                    con.execute("ROLLBACK")
                    raise
            except sqlite3.Error as exc:
                raise LedgerError(f"cannot initialise ledger {self.path!r}: {exc}") from None
            self._existing = json.loads(json.dumps(header))
            return self._existing

    @contextmanager
    def transaction(self) -> Iterator[_SQLiteTxn]:
        with self._lock:
            con = self._con
            try:
                con.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise LedgerError(f"cannot lock ledger {self.path!r}: {exc}") from None
            try:
                yield _SQLiteTxn(con)
            except BaseException:
                con.execute("ROLLBACK")
                raise
            try:
                con.execute("COMMIT")
            except sqlite3.Error as exc:
                con.execute("ROLLBACK")
                raise LedgerError(f"cannot commit to ledger {self.path!r}: {exc}") from None

    def rows_after(self, last_id: int) -> list[SpendRecord]:
        with self._lock:
            try:
                rows = self._con.execute(_SELECT, (last_id,)).fetchall()
            except sqlite3.Error as exc:
                raise LedgerError(f"cannot read ledger {self.path!r}: {exc}") from None
        return [_row_to_record(r) for r in rows]

    def close(self) -> None:
        with self._lock:
            con = getattr(self, "_con", None)
            if con is not None:
                con.close()
                self._con = None  # type: ignore[assignment]


_RDP_TEXT: dict[int, tuple[np.ndarray, str, str]] = {}


def _rdp_text(arr: np.ndarray) -> tuple[str, str]:
    """(hash, JSON text) of per-unit RDP values; repeated spends of one guarantee share one
    read-only array, so it is encoded once."""
    hit = _RDP_TEXT.get(id(arr))
    if hit is not None and hit[0] is arr:
        return hit[1], hit[2]
    text = _dump(encode_floats(arr))
    key = hashlib.sha256(text.encode()).hexdigest()
    if not arr.flags.writeable:
        if len(_RDP_TEXT) >= 256:
            _RDP_TEXT.clear()
        _RDP_TEXT[id(arr)] = (arr, key, text)
    return key, text


class _SQLiteTxn:
    __slots__ = ("con",)

    def __init__(self, con: sqlite3.Connection) -> None:
        self.con = con

    def rows_after(self, last_id: int) -> list[SpendRecord]:
        rows = self.con.execute(_SELECT, (last_id,)).fetchall()
        return [_row_to_record(r) for r in rows]

    def append(self, rec: SpendRecord) -> int:
        key, text = _rdp_text(rec.rdp)
        self.con.execute("INSERT OR IGNORE INTO renyi_curves (id, rdp) VALUES (?, ?)", (key, text))
        cur = self.con.execute(
            "INSERT INTO renyi_spends (time, label, count, guarantee, mechanism, curve, eps_inf, xi, rho, mu, delta)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                rec.time, rec.label, rec.count, _dump(rec.guarantee), rec.mechanism,
                key, _dump(_enc(rec.eps_inf)),
                None if rec.xi is None else _dump(_enc(rec.xi)),
                None if rec.rho is None else _dump(_enc(rec.rho)),
                None if rec.mu is None else _dump(_enc(rec.mu)),
                _dump(_enc(rec.delta)),
            ),
        )
        return int(cur.lastrowid)  # type: ignore[arg-type]


def _read_header(con: sqlite3.Connection, path: str) -> dict[str, Any]:
    try:
        items = con.execute("SELECT key, value FROM renyi_header").fetchall()
        header = {k: json.loads(v) for k, v in items}
    except (sqlite3.Error, json.JSONDecodeError, TypeError) as exc:
        raise LedgerError(f"{path!r}: unreadable ledger header ({exc})") from None
    if header.get("format") != LEDGER_FORMAT:
        raise LedgerError(f"{path!r} is a SQLite database but not a renyi ledger (no format={LEDGER_FORMAT!r})")
    version = header.get("schema_version")
    if isinstance(version, bool) or not isinstance(version, int):
        raise LedgerError(f"{path!r}: bad schema_version {version!r}")
    if version > SCHEMA_VERSION:
        raise LedgerError(
            f"{path!r} was written by a newer renyi (ledger schema version {version}, "
            f"written by renyi {header.get('renyi_version')!r}); this renyi reads versions ≤ {SCHEMA_VERSION}"
        )
    if version < 1:
        raise LedgerError(f"{path!r}: bad schema_version {version!r}")
    return header


def _inspect_sqlite(path: str) -> dict[str, Any] | None:
    """Validate an existing file without modifying it; None when it is absent or empty."""
    if not os.path.exists(path):
        return None
    if os.path.isdir(path):
        raise LedgerError(f"{path!r} is a directory, not a ledger file")
    try:
        size = os.path.getsize(path)
        if size == 0:
            return None
        with open(path, "rb") as fh:
            magic = fh.read(len(_SQLITE_MAGIC))
    except OSError as exc:
        raise LedgerError(f"cannot read {path!r}: {exc}") from None
    if magic != _SQLITE_MAGIC:
        raise LedgerError(f"{path!r} is not a SQLite file (not a renyi ledger)")
    uri = "file:" + urllib.parse.quote(os.path.abspath(path)) + "?mode=ro"
    con = None
    try:
        con = sqlite3.connect(uri, uri=True, isolation_level=None)
        names = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "renyi_header" not in names:
            raise LedgerError(f"{path!r} is a SQLite database but not a renyi ledger")
        header = _read_header(con, path)
        if "renyi_spends" not in names or "renyi_curves" not in names:
            raise LedgerError(f"{path!r}: ledger tables are missing (damaged)")
        check = con.execute("PRAGMA quick_check").fetchone()[0]
        if check != "ok":
            raise LedgerError(f"{path!r} is corrupted (quick_check: {check})")
        return header
    except sqlite3.Error as exc:
        raise LedgerError(f"{path!r} is corrupted or not a renyi ledger: {exc}") from None
    finally:
        if con is not None:
            con.close()
