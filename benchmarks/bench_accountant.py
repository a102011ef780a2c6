"""Benchmark of the accountant: 10⁴ spends against a SQLite ledger (target < 10 s) and the
time of one in-memory spend (target < 100 µs). Run: ``python benchmarks/bench_accountant.py``."""

from __future__ import annotations

import os
import statistics
import tempfile
import time

from renyi.accountant import Accountant
from renyi.definitions import ZCDP, ApproxDP, PureDP
from renyi.mechanisms import Gaussian


def _per_spend(acct: Accountant, item, n: int) -> list[float]:
    out = []
    for i in range(n):
        t = time.perf_counter()
        acct.spend(item, label=None)
        out.append(time.perf_counter() - t)
    return out


def main() -> None:
    rows = []
    for name, budget in [("none", None), ("zCDP ρ=1e6", ZCDP(1e6)), ("(ε,δ)=(1e6, 1e-5)", ApproxDP(1e6, 1e-5))]:
        for item_name, item in [("Gaussian(σ=10)", Gaussian(10.0)), ("PureDP(0.1)", PureDP(0.1))]:
            acct = Accountant(budget=budget)
            acct.spend(item)  # warm the per-guarantee cache
            ts = _per_spend(acct, item, 5000)
            rows.append((f"in-memory, budget {name}, {item_name}", statistics.median(ts) * 1e6, "µs/spend (median)"))
    with tempfile.TemporaryDirectory() as d:
        for name, budget in [("zCDP ρ=1e6", ZCDP(1e6)), ("(ε,δ)=(1e6, 1e-5)", ApproxDP(1e6, 1e-5))]:
            path = os.path.join(d, f"bench-{len(rows)}.db")
            acct = Accountant(budget=budget, ledger=path)
            g = Gaussian(10.0)
            t = time.perf_counter()
            for i in range(10_000):
                acct.spend(g, label=f"step {i}")
            total = time.perf_counter() - t
            acct.close()
            rows.append((f"SQLite file, budget {name}: 10⁴ spends", total, "s total"))
            t = time.perf_counter()
            re = Accountant(ledger=path)
            rows.append((f"SQLite file, budget {name}: reopen 10⁴ spends", time.perf_counter() - t, "s"))
            re.close()
        # Baseline: the same number of bare SQLite transactions (WAL, synchronous=FULL), to
        # separate the disk's fsync cost from the accountant's own work.
        import sqlite3

        con = sqlite3.connect(os.path.join(d, "bare.db"), isolation_level=None)
        con.execute("PRAGMA journal_mode=WAL")
        con.execute("PRAGMA synchronous=FULL")
        con.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, x TEXT)")
        t = time.perf_counter()
        for i in range(10_000):
            con.execute("BEGIN IMMEDIATE")
            con.execute("INSERT INTO t (x) VALUES (?)", (f"step {i}" * 20,))
            con.execute("COMMIT")
        rows.append(("baseline: 10⁴ bare SQLite transactions, same settings", time.perf_counter() - t, "s total"))
        con.close()
    width = max(len(r[0]) for r in rows)
    print(f"{'case'.ljust(width)}  {'value':>10}  unit")
    for name, val, unit in rows:
        print(f"{name.ljust(width)}  {val:10.3f}  {unit}")


if __name__ == "__main__":
    main()
