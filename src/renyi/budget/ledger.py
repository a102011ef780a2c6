"""Storage for the accountant: an append-only ledger of spends, in memory or in SQLite.

The ledger is deliberately dumb: it stores a header (written once) and rows (appended, never
changed), and offers one operation that matters for safety, a *write transaction* in which a
caller reads every row it has not yet seen, decides, and appends — all under one write lock.
The privacy arithmetic lives in :mod:`renyi.accountant`.

The stored format is documented in ``docs/accountant.md`` (schema version 2): every number
is JSON (``repr`` round-trips IEEE doubles exactly), non-finite values are the strings
``"inf"``/``"-inf"``, and guarantees follow a small ``{"type": ..., parameters}`` schema
(:func:`guarantee_to_json`), so an auditor can recompute every total without renyi.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import os
import sqlite3
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from renyi.guarantees import GDP, MCDP, RDP, ZCDP, ApproxDP, ApproxRDP, ApproxZCDP, Guarantee, PureDP
from renyi.guarantees.neighbouring import DEFAULT as DEFAULT_NEIGHBOURING
from renyi.guarantees.neighbouring import check_neighbouring, with_relation
from renyi.core.errors import DomainError, LedgerError

__all__ = [
    "SCHEMA_VERSION",
    "LEDGER_FORMAT",
    "SpendRecord",
    "Ledger",
    "MemoryLedger",
    "SQLiteLedger",
    "VerifyReport",
    "verify",
    "open_readonly",
    "header_hash",
    "record_hash",
    "head_seal",
    "adopt_unchained",
    "guarantee_to_json",
    "guarantee_from_json",
    "encode_floats",
    "decode_floats",
]

#: Version of the stored format. A ledger with a larger version is refused (LedgerError).
#: Version 3 adds the optional declared plan in the header (:mod:`renyi.budget.plan`) and the
#: ``plan_phase`` of the spends that follow it; renyi versions that do not know plans refuse a
#: version-3 ledger rather than ignore a plan's bill. Versions 1 and 2 are read as before.
SCHEMA_VERSION = 3
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
    """Inverse of :func:`encode_floats` (exact); anything but a list of such values is a
    :class:`~renyi.errors.LedgerError` (a stored row was damaged or edited)."""
    if not isinstance(values, (list, tuple)):
        raise LedgerError(f"bad list of numbers in ledger: {values!r:.80}")
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
    out = _guarantee_json(g, orders)
    # The relation the guarantee is stated under; a stored guarantee without this key (written
    # before it was recorded) is read as the default, add/remove.
    out["neighbouring"] = getattr(g, "neighbouring", DEFAULT_NEIGHBOURING)
    return out


def _guarantee_json(g: Guarantee, orders: np.ndarray | None) -> dict[str, Any]:
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
        return {"type": "ApproxRDP", "curve": _guarantee_json(g.curve, orders),
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
    (:meth:`RDP.from_points`, conservative between points) carrying their ε(∞) and (ξ, ρ).
    A guarantee stored without ``"neighbouring"`` is read under the default, add/remove."""
    g = _guarantee_from_json(obj, orders, epsilons)
    try:
        nb = check_neighbouring(obj.get("neighbouring", DEFAULT_NEIGHBOURING), "guarantee.neighbouring")
    except DomainError as exc:
        raise LedgerError(f"malformed guarantee in ledger: {exc}") from None
    out: Guarantee = with_relation(g, nb)
    return out


def _guarantee_from_json(obj: dict[str, Any], orders: np.ndarray | None, epsilons: np.ndarray | None) -> Guarantee:
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
            curve = _guarantee_from_json(obj["curve"], orders, epsilons)
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
                from renyi.guarantees.rdp import _Infinite

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
        """The record that :meth:`to_json` wrote (``id`` overrides the stored one).

        Raises:
            LedgerError: a malformed or incomplete object.
        """
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
# Tamper evidence: a hash chain over the header and the rows
# --------------------------------------------------------------------------------------
_CHAIN_TAG = "renyi-ledger-chain-v1"


def header_hash(header: dict[str, Any]) -> str:
    """SHA-256 (hex) of the canonical JSON of a ledger header: the start of the hash chain."""
    text = json.dumps(header, sort_keys=True, separators=(",", ":"), allow_nan=False, ensure_ascii=False)
    return hashlib.sha256(f"{_CHAIN_TAG}\n{text}".encode()).hexdigest()


def _row_hash(prev: str, row: Sequence[Any]) -> str:
    """h_i = SHA-256(h_{i−1}, the row as stored). ``row`` is (id, time, label, count,
    guarantee, mechanism, curve, eps_inf, xi, rho, mu, delta) exactly as the columns hold them,
    so any edit of a stored value, of an id (reordering) or of the previous row changes it."""
    text = json.dumps(list(row), separators=(",", ":"), allow_nan=False, ensure_ascii=False)
    return hashlib.sha256(f"{prev}\n{text}".encode()).hexdigest()


def record_hash(prev: str, rec: SpendRecord) -> str:
    """The chained hash of a record as :class:`SQLiteLedger` stores it (also used by
    :class:`MemoryLedger`, so both ledgers chain the same way)."""
    key, _ = _rdp_text(rec.rdp)
    return _row_hash(prev, _stored_row(rec, key))


#: Header key naming how the chain head is sealed: ``"sha256"`` or ``"hmac-sha256"`` (keyed).
#: Ledgers created before seals have no such key and an unsealed head (see docs/accountant.md).
SEAL_KEY = "head_seal"
#: Environment variable holding the key of keyed ledgers (any text; its UTF-8 bytes are the key).
KEY_ENV = "RENYI_LEDGER_KEY"
_SEAL_TAG = "renyi-ledger-head-v1"


def head_seal(kind: str, genesis: str, last_id: int, last_hash: str, key: bytes | None = None) -> str:
    """The seal of a chain head: SHA-256, or HMAC-SHA-256 under ``key``, of the genesis, the
    number of spends and the hash of the last one.

    A row's hash never equals a seal (different tag), so copying a row's hash into the head
    after deleting the rows above it no longer passes; only a program that recomputes the
    seal (or, for a keyed seal, one that also holds the key) can truncate the ledger unseen.
    """
    text = f"{_SEAL_TAG}\n{genesis}\n{int(last_id)}\n{last_hash}".encode()
    if kind == "hmac-sha256":
        if key is None:
            raise LedgerError(f"this ledger's head is sealed with a key: set {KEY_ENV} (or pass key=) to write or "
                              "check it")
        return hmac.new(key, text, hashlib.sha256).hexdigest()
    if kind == "sha256":
        return hashlib.sha256(text).hexdigest()
    raise LedgerError(f"unknown head seal {kind!r} in the ledger header")


def _env_key() -> bytes | None:
    k = os.environ.get(KEY_ENV)
    return k.encode() if k else None


def _stored_row(rec: SpendRecord, curve_key: str) -> tuple[Any, ...]:
    return (
        rec.id, float(rec.time), rec.label, rec.count, _dump(rec.guarantee), rec.mechanism, curve_key,
        _dump(_enc(rec.eps_inf)),
        None if rec.xi is None else _dump(_enc(rec.xi)),
        None if rec.rho is None else _dump(_enc(rec.rho)),
        None if rec.mu is None else _dump(_enc(rec.mu)),
        _dump(_enc(rec.delta)),
    )


@dataclass(frozen=True, slots=True)
class VerifyReport:
    """The result of :func:`verify`: the problems found (empty when the chain holds).

    Attributes:
        path: the ledger file.
        rows: number of spend rows read.
        head: the hash of the last row (or of the header when there is none); keep a copy
            elsewhere to detect the deletion of the newest rows later.
        problems: ``(row id or None for the header, message)`` for every inconsistency.
        chained: False for a ledger without a hash chain (schema 1, or a chain removed).
        last_id: the id of the last stored spend (0 when there is none).
        seal: how the head was checked: ``"sha256"``, ``"hmac-sha256"`` (with the key), or
            ``"none"`` (a ledger created before seals: the head is not sealed).
    """

    path: str
    rows: int
    head: str | None
    problems: tuple[tuple[int | None, str], ...]
    chained: bool = True
    last_id: int = 0
    seal: str = "none"

    @property
    def ok(self) -> bool:
        """True when the hash chain is intact and no row has a problem."""
        return self.chained and not self.problems

    @property
    def exported_head(self) -> str | None:
        """``"<last id>:<hash>"``: keep it outside the ledger's trust domain and pass it to a later
        :func:`verify` (``head=``) or ``renyi ledger verify --head`` to detect a rollback."""
        return None if self.head is None else f"{self.last_id}:{self.head}"


# --------------------------------------------------------------------------------------
# Ledgers
# --------------------------------------------------------------------------------------
class Ledger:
    """Interface of a ledger (see :class:`MemoryLedger`, :class:`SQLiteLedger`).

    ``initialize(header)`` stores ``header`` if the ledger is empty and returns the stored
    header. ``transaction()`` is a context manager yielding an object with
    ``rows_after(last_id)`` and ``append(record_without_id) -> id``; everything inside runs
    under the ledger's write lock and is committed atomically on normal exit, rolled back on
    an exception. ``rows_after(last_id)`` outside a transaction reads without locking;
    ``iter_rows(last_id)`` does the same one row at a time (memory independent of the length).
    """

    path: str | None = None

    def initialize(self, header: dict[str, Any]) -> dict[str, Any]:  # pragma: no cover
        """Store ``header`` if the ledger is empty; return the header the ledger holds."""
        raise NotImplementedError

    def transaction(self) -> Any:  # pragma: no cover
        """A context manager for one atomic write (see the class docstring)."""
        raise NotImplementedError

    def rows_after(self, last_id: int) -> list[SpendRecord]:  # pragma: no cover
        """The records with id > ``last_id``, in id order."""
        raise NotImplementedError

    def iter_rows(self, last_id: int) -> Iterator[SpendRecord]:
        """The rows with id > ``last_id`` in id order (default: :meth:`rows_after`)."""
        yield from self.rows_after(last_id)

    def close(self) -> None:
        """Release resources (idempotent)."""


class _Run:
    """Consecutive rows of a :class:`MemoryLedger` that differ only in id and time: the first
    row as stored, and the times of all of them (a training loop's steps cost a float each)."""

    __slots__ = ("first", "times")

    def __init__(self, first: SpendRecord) -> None:
        self.first = first
        self.times = [first.time]

    def extends(self, rec: SpendRecord) -> bool:
        f = self.first
        return (rec.guarantee is f.guarantee and rec.rdp is f.rdp and rec.label == f.label and rec.count == f.count
                and rec.mechanism == f.mechanism and rec.eps_inf == f.eps_inf and rec.xi == f.xi
                and rec.rho == f.rho and rec.mu == f.mu and rec.delta == f.delta)

    def row(self, i: int) -> SpendRecord:
        f = self.first
        if i == 0:
            return f
        return SpendRecord(f.id + i, self.times[i], f.label, f.count, f.guarantee, f.mechanism, f.rdp, f.eps_inf,
                           f.xi, f.rho, f.mu, f.delta)


class MemoryLedger(Ledger):
    """A ledger held in memory (lost when the process ends). Thread-safe.

    Rows are held as *runs* (consecutive rows that differ only in id and time, see
    :class:`_Run`) and built as :class:`SpendRecord` objects when read, so a training loop's
    repeated step costs a float, not a record.
    """

    def __init__(self, *, lock: Any = None) -> None:
        self._header: dict[str, Any] | None = None
        self._runs: list[_Run] = []
        self._n = 0
        self._lock = threading.RLock() if lock is None else lock

    def __repr__(self) -> str:
        return f"MemoryLedger({self._n} spends)"

    def __len__(self) -> int:
        return self._n

    @property
    def header(self) -> dict[str, Any] | None:
        """The stored header (None before :meth:`initialize`)."""
        with self._lock:
            return None if self._header is None else json.loads(json.dumps(self._header))

    def initialize(self, header: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            if self._header is None:
                self._header = json.loads(json.dumps(header))
            result: dict[str, Any] = json.loads(json.dumps(self._header))
            return result

    def transaction(self) -> _MemoryTxn:
        # a plain context manager (not a generator): a training loop's step writes here
        return _MemoryTxn(self)

    def _push(self, rec: SpendRecord) -> None:
        runs = self._runs
        if runs and rec.id == self._n + 1 and runs[-1].extends(rec):
            runs[-1].times.append(rec.time)
        else:
            runs.append(_Run(rec))
        self._n += 1

    def _rows_after(self, last_id: int) -> list[SpendRecord]:
        out: list[SpendRecord] = []
        if last_id >= self._n:
            return out
        runs = self._runs
        lo, hi = 0, len(runs)  # the run holding id last_id + 1: the last one starting at or before it
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if runs[mid].first.id <= last_id + 1:
                lo = mid
            else:
                hi = mid
        for r in runs[lo:]:
            start = max(0, last_id + 1 - r.first.id)
            out.extend(r.row(i) for i in range(start, len(r.times)))
        return out

    def rows_after(self, last_id: int) -> list[SpendRecord]:
        with self._lock:
            return self._rows_after(last_id)


class _MemoryTxn:
    """One write to a :class:`MemoryLedger`: under its lock; appended rows are kept on a normal
    exit and dropped on an exception."""

    __slots__ = ("ledger", "pending")

    def __init__(self, ledger: MemoryLedger) -> None:
        self.ledger = ledger
        self.pending: list[SpendRecord] = []

    def __enter__(self) -> _MemoryTxn:
        self.ledger._lock.acquire()
        return self

    def __exit__(self, exc_type: Any, *exc: Any) -> None:
        try:
            if exc_type is None:
                for r in self.pending:
                    self.ledger._push(r)
        finally:
            self.ledger._lock.release()

    def rows_after(self, last_id: int) -> list[SpendRecord]:
        return self.ledger._rows_after(last_id) + [r for r in self.pending if r.id > last_id]

    def append(self, rec: SpendRecord) -> int:
        new_id = self.ledger._n + len(self.pending) + 1
        if rec.id != new_id:  # a caller that knew the id has built the record with it already
            rec = _with_id(rec, new_id)
        self.pending.append(rec)
        return new_id


def _with_id(rec: SpendRecord, new_id: int) -> SpendRecord:
    return SpendRecord(new_id, rec.time, rec.label, rec.count, rec.guarantee, rec.mechanism, rec.rdp,
                       rec.eps_inf, rec.xi, rec.rho, rec.mu, rec.delta)


#: ``PRAGMA application_id`` of a renyi ledger ("reny"): marks files created by renyi.
APPLICATION_ID = 0x72656E79

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
    " delta TEXT NOT NULL,"
    " hash TEXT)",
    # The end of the hash chain: hash of the header (genesis) and of the last row, so that
    # deleting the newest rows, or editing the header of an empty ledger, is detected too.
    "CREATE TABLE renyi_head (id INTEGER PRIMARY KEY CHECK (id = 1), genesis TEXT NOT NULL,"
    " last_id INTEGER NOT NULL, hash TEXT NOT NULL, seal TEXT)",
)
_CREATE_HEAD = _CREATE[-1]

_ROW = ("s.id, s.time, s.label, s.count, s.guarantee, s.mechanism, s.curve, s.eps_inf, s.xi, s.rho, s.mu,"
        " s.delta")
_SELECT = (f"SELECT {_ROW}, c.rdp, s.hash FROM renyi_spends s LEFT JOIN renyi_curves c ON c.id = s.curve"
           " WHERE s.id > ? ORDER BY s.id")
_SELECT_V1 = (f"SELECT {_ROW}, c.rdp, NULL FROM renyi_spends s LEFT JOIN renyi_curves c ON c.id = s.curve"
              " WHERE s.id > ? ORDER BY s.id")


_CURVES_READ: dict[str, np.ndarray] = {}


def _curve_values(key: str, text: str | None, row_id: Any) -> np.ndarray:
    arr = _CURVES_READ.get(key)
    if arr is None:
        if text is None:
            raise LedgerError(f"corrupted ledger: spend {row_id} refers to a missing RDP curve {key!r}")
        if hashlib.sha256(text.encode()).hexdigest() != key:
            raise LedgerError(f"corrupted ledger: RDP values of spend {row_id} do not match their hash {key!r}")
        try:
            arr = decode_floats(json.loads(text))
        except (json.JSONDecodeError, TypeError, ValueError) as exc:
            raise LedgerError(f"corrupted ledger: bad RDP values for spend {row_id}: {exc}") from None
        arr.setflags(write=False)
        if len(_CURVES_READ) >= 4096:
            _CURVES_READ.clear()
        _CURVES_READ[key] = arr
    return arr


def _row_to_record(row: Sequence[Any]) -> SpendRecord:
    try:
        obj = {
            "id": row[0], "time": row[1], "label": row[2], "count": row[3],
            "guarantee": json.loads(row[4]), "mechanism": row[5], "rdp": _curve_values(row[6], row[12], row[0]),
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


def _rollback_quietly(con: sqlite3.Connection) -> None:
    # After SQLITE_FULL / SQLITE_IOERR SQLite may already have rolled the transaction back;
    # a second ROLLBACK would raise "cannot rollback - no transaction is active" and hide the
    # real error, so roll back only what is still open.
    try:
        if con.in_transaction:
            con.execute("ROLLBACK")
    except sqlite3.Error:
        pass


def _check_path(path: str | os.PathLike[str]) -> str:
    try:
        p = os.fspath(path)
    except TypeError:
        raise TypeError(f"ledger path must be a string or path; got {type(path).__name__}") from None
    if not isinstance(p, str):
        raise TypeError(f"ledger path must be a string; got {type(p).__name__}")
    if p == "" or p == ":memory:" or p.startswith("file:"):
        # sqlite3 would silently give a temporary or in-memory database: every spend would be
        # lost at close.
        raise DomainError(
            f"ledger path must name a file; got {p!r} (use ledger=None or MemoryLedger() for an in-memory ledger)",
            name="ledger", value=p)
    if "\x00" in p:
        raise DomainError(f"ledger path must not contain NUL characters; got {p!r}", name="ledger", value=p)
    return p


class SQLiteLedger(Ledger):
    """A ledger in a SQLite file (standard-library ``sqlite3``).

    * Every write is one ``BEGIN IMMEDIATE`` transaction: the caller reads the rows it has
      not seen and appends under SQLite's write lock, so concurrent processes serialise.
    * WAL journal with ``synchronous=FULL``: a committed spend survives a crash or power
      loss; a process killed mid-transaction leaves no trace of it.
    * **Atomic creation**: a new ledger is built and made durable in a temporary file next to
      ``path`` and then hard-linked into place (which fails if the name exists, so concurrent
      first opens agree on one file); no crash leaves a half-made ledger under ``path``.
      An empty file, or an empty SQLite database (no schema at all, as left by a crash in an
      older renyi), holds nothing and is initialised in place in one transaction.
    * Opening an existing file first inspects it **read-only**; a foreign, corrupted or
      newer-version file raises :class:`LedgerError` and is not modified.
    * **Tamper evidence**: each row carries ``hash`` = SHA-256 of the previous row's hash and
      of the row as stored, starting from the hash of the header; every read checks it, and an
      edited, deleted or reordered row raises :class:`LedgerError` naming its id (see
      :func:`verify` and ``docs/accountant.md`` for what this does and does not protect).
    * Disk-full and I/O errors raise :class:`LedgerError`; the failed write is rolled back
      and was never acknowledged.

    * **Sealed head**: the head also stores a seal of (genesis, last id, last hash), SHA-256,
      or HMAC-SHA-256 when a key is given (``key=`` or the ``RENYI_LEDGER_KEY`` environment
      variable); deleting the newest rows and copying a row's hash into the head is detected.
    * A ledger **without a chain** (schema 1, or a chain removed) is refused for writing: it is
      never re-chained silently (:func:`adopt_unchained` does it on request).

    Args:
        path: file name (not ``""`` or ``":memory:"``: use :class:`MemoryLedger`). A missing or
            empty file becomes a new ledger.
        timeout: seconds to wait for another process's write lock.
        key: the key of a keyed seal (None: ``$RENYI_LEDGER_KEY`` if set). A new ledger made
            with a key is sealed with HMAC-SHA-256 and can then be written only with that key.
    """

    path: str  # always a file name here (the base class allows None for memory ledgers)

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 60.0,
                 key: str | bytes | None = None) -> None:
        self.path = _check_path(path)
        self._timeout = float(timeout)
        if isinstance(key, str):
            key = key.encode()
        if key is not None and (not isinstance(key, bytes) or not key):
            raise DomainError("key must be a non-empty str or bytes", name="key", value=None)
        self._key = key if key is not None else _env_key()
        self._genesis_hash: str | None = None
        self._con: sqlite3.Connection | None = None
        self._lock = threading.RLock()
        self._chained = True
        # Verified prefix of the chain: (last id, its hash); None until the genesis is known.
        self._verified: tuple[int, str] | None = None
        self._existing = _inspect_sqlite(self.path)  # raises LedgerError, never writes
        if self._existing is not None:
            self._connect()

    def __repr__(self) -> str:
        return f"SQLiteLedger({self.path!r})"

    @property
    def header(self) -> dict[str, Any] | None:
        """The stored header (None for a file not yet initialised)."""
        return None if self._existing is None else json.loads(json.dumps(self._existing))

    def _connect(self) -> sqlite3.Connection:
        if self._con is None:
            try:
                con = sqlite3.connect(self.path, timeout=self._timeout, isolation_level=None,
                                      check_same_thread=False)
                con.execute("PRAGMA synchronous=FULL")
            except sqlite3.Error as exc:
                raise LedgerError(f"cannot open ledger {self.path!r}: {exc}") from None
            self._con = con
            if self._existing is not None:
                self._chained = _has_chain(con)
        return self._con

    def initialize(self, header: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            if self._existing is None:
                header = {**header, SEAL_KEY: "hmac-sha256" if self._key is not None else "sha256"}
                if not os.path.exists(self.path):
                    _create_atomically(self.path, header, self._key)
                self._existing = _inspect_sqlite(self.path)
                if self._existing is None:  # an empty file: initialise it in place
                    self._existing = self._initialize_in_place(header)
            con = self._connect()
            if not _has_chain(con):
                # Never re-chain silently: dropping the head and the hash column must not turn
                # an edited ledger into a trusted one on the next open.
                n = _count_rows(con, self.path)
                raise LedgerError(
                    f"ledger {self.path!r} has no hash chain ({n} spends; written before chains, or the chain was "
                    "removed): renyi cannot vouch for its rows. Inspect them (renyi ledger show/export) and, if they "
                    "are right, adopt it explicitly: renyi ledger adopt PATH")
            self._chained = True
            self._check_seal_kind(self._existing)
            copy: dict[str, Any] = json.loads(json.dumps(self._existing))
            return copy

    def _check_seal_kind(self, header: dict[str, Any]) -> None:
        kind = header.get(SEAL_KEY)
        if kind == "hmac-sha256" and self._key is None:
            raise LedgerError(f"ledger {self.path!r} is sealed with a key: set {KEY_ENV} (or pass key=) to use it")
        if self._key is not None and kind != "hmac-sha256":
            # a key was given: a ledger whose seal is not keyed may have been rebuilt without it
            raise LedgerError(f"ledger {self.path!r} is not sealed with a key (seal: {kind or 'none'}), but a key was "
                              f"given: it was created without one, or rebuilt by someone without the key")

    def _initialize_in_place(self, header: dict[str, Any]) -> dict[str, Any]:
        con = self._connect()
        try:
            con.execute("BEGIN IMMEDIATE")
            try:
                names = _schema_names(con)
                if "renyi_header" in names:  # another process initialised it meanwhile
                    stored = _read_header(con, self.path)
                    con.execute("COMMIT")
                    return stored
                if names:
                    raise LedgerError(f"{self.path!r} is a SQLite database but not a renyi ledger")
                _create_schema(con, header, self._key)
                con.execute("COMMIT")
            except BaseException:
                _rollback_quietly(con)
                raise
            try:
                con.execute("PRAGMA journal_mode=WAL")
            except sqlite3.Error:  # another connection is open: stay in rollback-journal mode (durable too)
                pass
        except sqlite3.Error as exc:
            raise LedgerError(f"cannot initialise ledger {self.path!r}: {exc}") from None
        copy: dict[str, Any] = json.loads(json.dumps(header))
        return copy

    def _upgrade(self, con: sqlite3.Connection) -> None:
        """Add a (sealed) hash chain over the existing rows of an unchained ledger (one
        transaction). Only :func:`adopt_unchained` calls this: it vouches for rows nothing checked."""
        try:
            con.execute("BEGIN IMMEDIATE")
            try:
                if not _has_chain(con):
                    cols = {r[1] for r in con.execute("PRAGMA table_info(renyi_spends)")}
                    if "hash" not in cols:
                        con.execute("ALTER TABLE renyi_spends ADD COLUMN hash TEXT")
                    con.execute(_CREATE_HEAD)
                    con.execute("UPDATE renyi_header SET value = ? WHERE key = 'schema_version'",
                                (_dump(SCHEMA_VERSION),))
                    con.execute("INSERT OR REPLACE INTO renyi_header (key, value) VALUES (?, ?)",
                                (SEAL_KEY, _dump("hmac-sha256" if self._key is not None else "sha256")))
                    header = _read_header(con, self.path)
                    prev = genesis = header_hash(header)
                    last = 0
                    for row in con.execute(_SELECT_V1, (0,)).fetchall():
                        if row[0] != last + 1:
                            raise LedgerError(f"{self.path!r}: spend {last + 1} is missing; cannot upgrade")
                        prev = _row_hash(prev, row[:12])
                        con.execute("UPDATE renyi_spends SET hash = ? WHERE id = ?", (prev, row[0]))
                        last = row[0]
                    con.execute("INSERT INTO renyi_head (id, genesis, last_id, hash, seal) VALUES (1, ?, ?, ?, ?)",
                                (genesis, last, prev, head_seal(header[SEAL_KEY], genesis, last, prev, self._key)))
                    self._existing = header
                con.execute("COMMIT")
            except BaseException:
                _rollback_quietly(con)
                raise
        except sqlite3.Error as exc:
            raise LedgerError(f"cannot upgrade ledger {self.path!r}: {exc}") from None

    @contextmanager
    def transaction(self) -> Iterator[_SQLiteTxn]:
        with self._lock:
            con = self._connect()
            try:
                con.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise LedgerError(f"cannot lock ledger {self.path!r}: {exc}") from None
            try:
                yield _SQLiteTxn(self, con)
            except sqlite3.Error as exc:
                _rollback_quietly(con)
                raise LedgerError(f"cannot write to ledger {self.path!r}: {exc}; nothing was recorded") from None
            except BaseException:
                _rollback_quietly(con)
                raise
            try:
                con.execute("COMMIT")
            except sqlite3.Error as exc:
                _rollback_quietly(con)
                self._verified = None  # re-verify from the stored rows next time
                raise LedgerError(f"cannot commit to ledger {self.path!r}: {exc}; nothing was recorded") from None

    def rows_after(self, last_id: int) -> list[SpendRecord]:
        return list(self.iter_rows(last_id))

    def iter_rows(self, last_id: int) -> Iterator[SpendRecord]:
        """Rows with id > ``last_id``, checking the hash chain as they are read."""
        with self._lock:
            con = self._connect()
            yield from self._scan(con, last_id)

    def _genesis(self, con: sqlite3.Connection) -> str:
        try:
            row = con.execute("SELECT genesis FROM renyi_head WHERE id = 1").fetchone()
        except sqlite3.Error as exc:
            raise LedgerError(f"cannot read ledger {self.path!r}: {exc}") from None
        header = _read_header(con, self.path)
        genesis = header_hash(header)
        if row is None or row[0] != genesis:
            raise LedgerError(f"ledger {self.path!r} failed verification: the header (budget, grid or filter "
                              "settings) was edited after creation")
        self._genesis_hash = genesis
        return genesis

    def _scan(self, con: sqlite3.Connection, last_id: int) -> Iterator[SpendRecord]:
        if not self._chained:  # schema 1, read-only: nothing to check
            try:
                cur = con.execute(_SELECT_V1, (last_id,))
                for row in cur:
                    yield _row_to_record(row)
            except sqlite3.Error as exc:
                raise LedgerError(f"cannot read ledger {self.path!r}: {exc}") from None
            return
        if self._verified is None or self._verified[0] > last_id:
            start, prev = 0, self._genesis(con)
        else:
            start, prev = self._verified
        try:
            cur = con.execute(_SELECT, (start,))
            expected = start + 1
            for row in cur:
                rid = row[0]
                if rid != expected:
                    raise LedgerError(f"ledger {self.path!r} failed verification: spend {expected} is missing "
                                      f"(deleted or reordered; next stored id is {rid!r})")
                h = _row_hash(prev, row[:12])
                if row[13] != h:
                    raise LedgerError(f"ledger {self.path!r} failed verification at spend {rid}: its hash does "
                                      "not match (the row, or one before it, was edited, deleted or reordered); "
                                      "run `renyi ledger verify` for details")
                prev = h
                self._verified = (rid, h)
                expected += 1
                if rid > last_id:
                    yield _row_to_record(row)
            head = _read_head(con)
        except sqlite3.Error as exc:
            raise LedgerError(f"cannot read ledger {self.path!r}: {exc}") from None
        if head is None:
            raise LedgerError(f"ledger {self.path!r} failed verification: its chain head is missing")
        if head[0] == expected - 1:
            self._check_head(head, expected - 1, prev)
            return
        if head[0] > expected - 1 and not con.in_transaction:
            # Outside a write transaction the head and the rows come from one snapshot only when
            # read together; re-check under the lock before accusing anyone.
            head2 = self._head_consistent(con)
            if head2 is not None:
                raise LedgerError(f"ledger {self.path!r} failed verification: spends {expected}..{head2} were "
                                  "deleted (the chain head records more rows than are stored)")
        elif head is not None and head[0] > expected - 1:
            raise LedgerError(f"ledger {self.path!r} failed verification: spends {expected}..{head[0]} were "
                              "deleted (the chain head records more rows than are stored)")

    def _check_head(self, head: tuple[Any, ...], last_id: int, last_hash: str) -> None:
        """The head names the last row, and its seal is that of (genesis, last id, last hash)."""
        kind = (self._existing or {}).get(SEAL_KEY)
        if head[1] != last_hash:
            raise LedgerError(f"ledger {self.path!r} failed verification: the chain head does not match spend "
                              f"{last_id} (the newest spends were deleted, or the head was edited)")
        if kind is None:  # created before seals: nothing more to check
            return
        genesis = self._genesis_hash
        if genesis is None:
            return  # not yet read from the start (cannot happen after a scan from 0)
        if self._key is None and kind == "hmac-sha256":
            return  # read-only use without the key: the chain is checked, the seal cannot be
        if head[2] is None or not hmac.compare_digest(str(head[2]), head_seal(kind, genesis, last_id, last_hash,
                                                                                   self._key)):
            raise LedgerError(f"ledger {self.path!r} failed verification: the chain head's seal does not match "
                              f"(the newest spends were deleted and the head rewritten, or the head was edited)")

    def _head_consistent(self, con: sqlite3.Connection) -> int | None:
        """The head's last id if it exceeds the stored rows in one consistent snapshot, else None."""
        try:
            con.execute("BEGIN")
            try:
                head = con.execute("SELECT last_id FROM renyi_head WHERE id = 1").fetchone()
                top = con.execute("SELECT COALESCE(MAX(id), 0) FROM renyi_spends").fetchone()[0]
            finally:
                con.execute("COMMIT")
        except sqlite3.Error as exc:
            raise LedgerError(f"cannot read ledger {self.path!r}: {exc}") from None
        return int(head[0]) if head is not None and head[0] > top else None

    def close(self) -> None:
        with self._lock:
            con = self._con
            if con is not None:
                try:
                    con.close()
                except sqlite3.Error:
                    pass
                self._con = None


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
    __slots__ = ("ledger", "con")

    def __init__(self, ledger: SQLiteLedger, con: sqlite3.Connection) -> None:
        self.ledger = ledger
        self.con = con

    def rows_after(self, last_id: int) -> list[SpendRecord]:
        return list(self.ledger._scan(self.con, last_id))

    def append(self, rec: SpendRecord) -> int:
        con = self.con
        head = con.execute("SELECT last_id, hash, genesis FROM renyi_head WHERE id = 1").fetchone()
        if head is None:
            raise LedgerError(f"ledger {self.ledger.path!r} failed verification: its chain head is missing")
        new_id = int(head[0]) + 1
        key, text = _rdp_text(rec.rdp)
        con.execute("INSERT OR IGNORE INTO renyi_curves (id, rdp) VALUES (?, ?)", (key, text))
        row = _stored_row(_with_id(rec, new_id), key)
        h = _row_hash(str(head[1]), row)
        try:
            con.execute(
                "INSERT INTO renyi_spends (id, time, label, count, guarantee, mechanism, curve, eps_inf, xi, rho, mu,"
                " delta, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", (*row, h))
        except sqlite3.IntegrityError:
            raise LedgerError(f"ledger {self.ledger.path!r} failed verification: a spend with id {new_id} exists "
                              "beyond the chain head") from None
        kind = (self.ledger._existing or {}).get(SEAL_KEY)
        if kind is None:  # a ledger created before seals keeps its unsealed head
            con.execute("UPDATE renyi_head SET last_id = ?, hash = ? WHERE id = 1", (new_id, h))
        else:
            seal = head_seal(kind, str(head[2]), new_id, h, self.ledger._key)
            con.execute("UPDATE renyi_head SET last_id = ?, hash = ?, seal = ? WHERE id = 1", (new_id, h, seal))
        return new_id


def _schema_names(con: sqlite3.Connection) -> set[str]:
    return {r[0] for r in con.execute("SELECT name FROM sqlite_master")}


def _read_head(con: sqlite3.Connection) -> tuple[Any, Any, Any] | None:
    """(last id, hash, seal or None) of the chain head; None when the head row is missing."""
    cols = {r[1] for r in con.execute("PRAGMA table_info(renyi_head)")}
    seal = "seal" if "seal" in cols else "NULL"
    row = con.execute(f"SELECT last_id, hash, {seal} FROM renyi_head WHERE id = 1").fetchone()
    return None if row is None else (row[0], row[1], row[2])


def _count_rows(con: sqlite3.Connection, path: str) -> int:
    try:
        return int(con.execute("SELECT COUNT(*) FROM renyi_spends").fetchone()[0])
    except sqlite3.Error as exc:
        raise LedgerError(f"cannot read ledger {path!r}: {exc}") from None


def _has_chain(con: sqlite3.Connection) -> bool:
    try:
        return "renyi_head" in _schema_names(con)
    except sqlite3.Error:
        return False


def _create_schema(con: sqlite3.Connection, header: dict[str, Any], key: bytes | None = None) -> None:
    """Create the tables and store the header (inside the caller's transaction)."""
    for stmt in _CREATE:
        con.execute(stmt)
    con.executemany("INSERT INTO renyi_header (key, value) VALUES (?, ?)",
                    [(k, _dump(v)) for k, v in header.items()])
    stored = {k: json.loads(_dump(v)) for k, v in header.items()}
    genesis = header_hash(stored)
    kind = stored.get(SEAL_KEY)
    seal = None if kind is None else head_seal(kind, genesis, 0, genesis, key)
    con.execute("INSERT INTO renyi_head (id, genesis, last_id, hash, seal) VALUES (1, ?, 0, ?, ?)",
                (genesis, genesis, seal))


def _fsync_dir(directory: str) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _create_atomically(path: str, header: dict[str, Any], key: bytes | None = None) -> None:
    """Build a complete ledger in a temporary file beside ``path`` and link it into place.

    ``os.link`` fails when ``path`` exists, so of several processes creating the same ledger
    exactly one wins and the others open the winner's file; a crash at any point leaves either
    no file at ``path`` or a complete, durable ledger (plus, at worst, a stray temporary file).
    Filesystems without hard links fall back to initialising ``path`` in one transaction.
    """
    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".renyi-tmp", dir=directory)
    except OSError as exc:
        raise LedgerError(f"cannot create ledger {path!r}: {exc.strerror or exc}") from None
    os.close(fd)
    try:
        try:
            con = sqlite3.connect(tmp, isolation_level=None)
            try:
                con.execute("PRAGMA synchronous=FULL")
                con.execute(f"PRAGMA application_id={APPLICATION_ID}")
                con.execute("PRAGMA journal_mode=WAL")  # persistent: stored in the file header
                con.execute("BEGIN IMMEDIATE")
                try:
                    _create_schema(con, header, key)
                    con.execute("COMMIT")
                except BaseException:
                    _rollback_quietly(con)
                    raise
                con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            finally:
                con.close()
            with open(tmp, "rb") as fh:
                os.fsync(fh.fileno())
        except sqlite3.Error as exc:
            raise LedgerError(f"cannot create ledger {path!r}: {exc}") from None
        except OSError as exc:
            raise LedgerError(f"cannot create ledger {path!r}: {exc.strerror or exc}") from None
        try:
            os.link(tmp, path)
        except FileExistsError:
            return  # another process created it first: use theirs
        except OSError:
            return  # no hard links here: the caller initialises ``path`` in place instead
        _fsync_dir(directory)
        _remove_stale_temporaries(path)
    finally:
        for suffix in ("", "-wal", "-shm", "-journal"):
            try:
                os.unlink(tmp + suffix)
            except OSError:
                pass


def _remove_stale_temporaries(path: str) -> None:
    """Delete temporary files left by creators of ``path`` that were killed (older than an
    hour, so never one a live creator still uses)."""
    directory = os.path.dirname(os.path.abspath(path))
    prefix = "." + os.path.basename(path) + "."
    cutoff = time.time() - 3600.0
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        if name.startswith(prefix) and ".renyi-tmp" in name:
            full = os.path.join(directory, name)
            try:
                if os.path.getmtime(full) < cutoff:
                    os.unlink(full)
            except OSError:
                pass


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


def _open_ro(path: str) -> sqlite3.Connection:
    uri = "file:" + urllib.parse.quote(os.path.abspath(path)) + "?mode=ro"
    return sqlite3.connect(uri, uri=True, isolation_level=None)


def _inspect_sqlite(path: str) -> dict[str, Any] | None:
    """Validate an existing file without modifying it; None when it is absent or empty (a
    0-byte file, or a SQLite database with no schema at all and no foreign application id)."""
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
        raise LedgerError(f"cannot read {path!r}: {exc.strerror or exc}") from None
    if magic != _SQLITE_MAGIC:
        raise LedgerError(f"{path!r} is not a SQLite file (not a renyi ledger)")
    con = None
    try:
        con = _open_ro(path)
        names = _schema_names(con)
        if not names:
            app = con.execute("PRAGMA application_id").fetchone()[0]
            user = con.execute("PRAGMA user_version").fetchone()[0]
            if app in (0, APPLICATION_ID) and user == 0:
                return None  # an empty database: nothing to lose, initialised like a new file
            raise LedgerError(f"{path!r} is a SQLite database of another application (not a renyi ledger)")
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


# --------------------------------------------------------------------------------------
# Verification and streaming reads (for the CLI and auditors)
# --------------------------------------------------------------------------------------
def verify(path: str | os.PathLike[str], *, key: str | bytes | None = None, head: str | None = None) -> VerifyReport:
    """Check a ledger file's hash chain without modifying it.

    Each row's stored hash is recomputed from the previous row's *stored* hash and the row's
    stored values, so an edited row is reported by its own id; a deleted row by the gap it
    leaves (or, for the newest rows, by the chain head and its seal); swapped rows by both ids;
    an edited header as a header problem; a ledger without a chain as a problem.

    What it cannot detect (docs/accountant.md): anyone who can write the file and recompute
    SHA-256 can rewrite it consistently, unless the head is keyed (then they also need the
    key); and a whole file replaced by an older copy of itself, unless an exported head of a
    later state is given (``head``).

    Args:
        path: a ledger file.
        key: the key of a keyed seal (None: ``$RENYI_LEDGER_KEY`` if set). With a key, a seal
            that is not keyed is a problem (the file may have been rebuilt without the key).
        head: an exported head ``"<last id>:<hash>"`` (:attr:`VerifyReport.exported_head` of an
            earlier check): that spend must still be stored with that hash.

    Returns:
        A :class:`VerifyReport` (``ok`` when nothing was found).

    Raises:
        LedgerError: the file is missing, foreign, corrupted beyond reading, or newer.
    """
    p = _check_path(path)
    if isinstance(key, str):
        key = key.encode()
    key = key or _env_key()
    expect = _parse_head(head) if head is not None else None
    if not os.path.isfile(p):
        raise LedgerError(f"{p!r}: no such ledger file")
    header = _inspect_sqlite(p)
    if header is None:
        raise LedgerError(f"{p!r} is empty: not a renyi ledger yet")
    problems: list[tuple[int | None, str]] = []
    con = _open_ro(p)
    try:
        con.execute("BEGIN")  # one snapshot of the rows and the head
        if not _has_chain(con):
            n = con.execute("SELECT COUNT(*) FROM renyi_spends").fetchone()[0]
            why = ("the header says it had one (schema version 2): the chain was removed"
                   if header.get("schema_version", 1) >= 2 or SEAL_KEY in header else
                   "schema version 1, or the chain was removed")
            return VerifyReport(p, int(n), None, ((None, f"no hash chain ({why}); its rows cannot be checked"),),
                                chained=False)
        genesis = header_hash(header)
        head_row = con.execute("SELECT genesis, last_id, hash FROM renyi_head WHERE id = 1").fetchone()
        seal_row = _read_head(con)
        if head_row is None:
            problems.append((None, "the chain head is missing"))
        elif head_row[0] != genesis:
            problems.append((None, "the header (budget, grid or filter settings) was edited after creation"))
        prev_stored = head_row[0] if head_row is not None else genesis
        expected = 1
        rows = 0
        last_hash = prev_stored
        stored_at: dict[int, str] = {}
        for row in con.execute(_SELECT, (0,)):
            rows += 1
            if expect is not None and row[0] == expect[0]:
                stored_at[expect[0]] = row[13]
            rid = row[0]
            if rid != expected:
                if isinstance(rid, int) and rid > expected:
                    gap = f"{expected}" if rid == expected + 1 else f"{expected}..{rid - 1}"
                    problems.append((expected, f"spend {gap} missing (deleted)"))
                else:
                    problems.append((rid, f"spend id {rid!r} out of order"))
            h = _row_hash(prev_stored, row[:12])
            if row[13] != h:
                problems.append((rid, f"spend {rid}: hash mismatch (edited, or moved from another position)"))
            prev_stored = row[13] if isinstance(row[13], str) else h
            last_hash = prev_stored
            expected = (rid + 1) if isinstance(rid, int) else expected + 1
            try:
                _row_to_record(row)
            except LedgerError as exc:
                problems.append((rid, str(exc)))
        if head_row is not None:
            if head_row[1] > expected - 1:
                problems.append((expected, f"spends {expected}..{head_row[1]} missing (deleted after the last stored row)"))
            elif head_row[1] < expected - 1:
                problems.append((head_row[1] + 1, f"spends after {head_row[1]} are not covered by the chain head (added outside renyi)"))
            elif head_row[2] != last_hash:
                problems.append((head_row[1] or None, "the chain head does not match the last row"))
        kind = header.get(SEAL_KEY)
        seal_checked = "none"
        if head_row is not None and seal_row is not None and kind is not None:
            if kind == "hmac-sha256" and key is None:
                problems.append((None, f"the head is sealed with a key: give the key ({KEY_ENV} or --key-file) to "
                                       "check it"))
            else:
                try:
                    want = head_seal(kind, head_row[0], head_row[1], head_row[2], key if kind == "hmac-sha256" else None)
                except LedgerError as exc:
                    problems.append((None, str(exc)))
                else:
                    if seal_row[2] is None or not hmac.compare_digest(str(seal_row[2]), want):
                        problems.append((head_row[1] or None, "the chain head's seal does not match (the newest spends "
                                                          "were deleted and the head rewritten, or the head was "
                                                          "edited)"))
                    else:
                        seal_checked = kind
        if key is not None and kind != "hmac-sha256":
            problems.append((None, f"a key was given but the head is not sealed with one (seal: {kind or 'none'}): "
                                   "the ledger was created without the key, or rebuilt by someone without it"))
        if expect is not None:
            n_exp, h_exp = expect
            got = genesis if n_exp == 0 else stored_at.get(n_exp)
            if got is None:
                problems.append((n_exp, f"spend {n_exp} of the exported head is not stored (the ledger was rolled "
                                        "back or its newest spends deleted)"))
            elif got != h_exp:
                problems.append((n_exp, f"spend {n_exp} differs from the exported head (history rewritten)"))
        con.execute("COMMIT")
    except sqlite3.Error as exc:
        raise LedgerError(f"cannot read ledger {p!r}: {exc}") from None
    finally:
        con.close()
    return VerifyReport(p, rows, last_hash, tuple(problems), last_id=expected - 1, seal=seal_checked)


def _parse_head(text: str) -> tuple[int, str]:
    """``"<last id>:<hash>"`` as (id, hash); a DomainError names the expected form."""
    n, sep, h = str(text).strip().partition(":")
    if not sep or not n.isdigit() or len(h) != 64 or any(c not in "0123456789abcdef" for c in h):
        raise DomainError(f"head must be '<last id>:<64 hex digits>' as printed by renyi ledger verify; got {text!r}",
                          name="head", value=text)
    return int(n), h


def adopt_unchained(path: str | os.PathLike[str], *, key: str | bytes | None = None) -> VerifyReport:
    """Give a ledger without a hash chain (schema 1, or a chain removed) a new, sealed chain.

    renyi never does this on its own: the rows of such a file were not checked by anything,
    so adopting them is a decision for whoever inspected them (``renyi ledger show``). After
    adoption every later edit is detected as usual.

    Returns:
        The :func:`verify` report of the adopted ledger.

    Raises:
        LedgerError: the file is missing, foreign, or already chained.
    """
    p = _check_path(path)
    if not os.path.isfile(p):
        raise LedgerError(f"{p!r}: no such ledger file")
    led = SQLiteLedger(p, key=key)
    try:
        if led.header is None:
            raise LedgerError(f"{p!r} is empty: not a renyi ledger yet")
        con = led._connect()
        if _has_chain(con):
            raise LedgerError(f"{p!r} already has a hash chain: nothing to adopt")
        led._upgrade(con)
    finally:
        led.close()
    return verify(p, key=key)


def open_readonly(path: str | os.PathLike[str]) -> SQLiteLedger:
    """Open an existing ledger for reading (never creating or modifying it).

    Raises:
        LedgerError: the file is missing, empty, foreign, corrupted or newer.
    """
    p = _check_path(path)
    if not os.path.isfile(p):
        raise LedgerError(f"{p!r}: no such ledger file")
    led = SQLiteLedger(p)
    if led.header is None:
        led.close()
        raise LedgerError(f"{p!r} is empty: not a renyi ledger yet")
    return led
