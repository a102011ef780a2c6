"""Benchmark of the accountant, side by side with Opacus's ``RDPAccountant`` in one run.

Run: ``python benchmarks/bench_accountant.py`` (``--quick`` skips the SQLite rows). Prints one
table: renyi's figure, the peer's on the same work, and their ratio. Targets (issue 25):

* per-step spend (in memory) within 5× of Opacus's ``step()``;
* 50 distinct DP-SGD phases through ``Accountant.spend`` plus ε within 10× of Opacus;
* first sight of a new subsampled Gaussian (its RDP curve on the accountant's grid) under 10 ms;
* cold start (the first tight ε in a fresh interpreter) beside ``python -c "import numpy"``.

Two clocks, both sides alike: wall time (what a user waits) and the CPU time of the
measuring thread (``time.thread_time``; for a fresh interpreter, the child's user + system
time), which a shared, loaded machine does not inflate by preempting the process. Per-step
figures are the best of many short blocks (a block hit by preemption is discarded, on both
sides); the rest are medians. Ratios (peers timed in the same run, in alternation) say more
than absolute figures.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

from renyi.accountant import Accountant
from renyi.definitions import ZCDP, ApproxDP
from renyi.mechanisms import Gaussian
from renyi import dpsgd

try:
    from opacus.accountants import RDPAccountant
except ImportError:  # pragma: no cover - opacus is a benchmark-only peer
    RDPAccountant = None


def _median_per_call(fn, n: int, repeats: int = 5, clock=time.perf_counter) -> float:
    """Median over ``repeats`` of the mean time of ``n`` calls (seconds per call)."""
    out = []
    for _ in range(repeats):
        t = clock()
        for _ in range(n):
            fn()
        out.append((clock() - t) / n)
    return statistics.median(out)


def _best_per_call(fn, n: int, clock) -> float:
    t = clock()
    for _ in range(n):
        fn()
    return (clock() - t) / n


def per_step(rows: list) -> None:
    step = dpsgd.step_mechanism(1.1, 0.01)
    acct = Accountant(ApproxDP(1e6, 1e-5))
    acct.spend(step)
    planned = Accountant(ApproxDP(1e6, 1e-5), plan=[(step, 10**7)])
    planned.spend(step)
    gauss = Accountant(ZCDP(1e6))
    g = Gaussian(10.0)
    gauss.spend(g)
    op = RDPAccountant() if RDPAccountant else None
    cases = {"renyi": lambda: acct.spend(step), "plan": lambda: planned.spend(step), "gauss": lambda: gauss.spend(g)}
    if op is not None:
        cases["opacus"] = lambda: op.step(noise_multiplier=1.1, sample_rate=0.01)
    for clock, cname in ((time.perf_counter, "wall"), (time.thread_time, "CPU")):
        res: dict = {k: [] for k in cases}
        for _ in range(25):  # alternate, so that load changes hit every side alike; best block
            for k, fn in cases.items():
                res[k].append(_best_per_call(fn, 2000, clock))
        m = {k: min(v) * 1e6 for k, v in res.items()}
        o = m.get("opacus", float("nan"))
        rows.append((f"per-step spend, DP-SGD step, (ε,δ) budget [µs, {cname}]", m["renyi"], o, "RDPAccountant.step()"))
        rows.append((f"per-step spend, on a declared plan [µs, {cname}]", m["plan"], o, "RDPAccountant.step()"))
        rows.append((f"per-step spend, Gaussian, zCDP budget [µs, {cname}]", m["gauss"], o, "RDPAccountant.step()"))


def plan_on_file(rows: list) -> None:
    """Steps of a plan on a SQLite ledger, each its own row, and recorded ahead (plan_reserve)."""
    step = dpsgd.step_mechanism(1.1, 0.01)
    op = RDPAccountant() if RDPAccountant else None
    with tempfile.TemporaryDirectory() as d:
        for reserve, n in ((None, 200), (1024, 20_000)):
            path = os.path.join(d, f"plan-{reserve}.db")
            acct = Accountant(ApproxDP(1e6, 1e-5), path, plan=[(step, 10**7)], plan_reserve=reserve)
            t, c = time.perf_counter(), time.thread_time()
            for _ in range(n):
                acct.spend(step)
            wall, cpu = (time.perf_counter() - t) / n * 1e6, (time.thread_time() - c) / n * 1e6
            acct.close()
            peer = float("nan")
            if op is not None:
                peer = _median_per_call(lambda: op.step(noise_multiplier=1.1, sample_rate=0.01), 2000, 5) * 1e6
            what = "each step its own row" if reserve is None else f"plan_reserve={reserve}"
            rows.append((f"per-step spend, plan on a SQLite file, {what} [µs, wall]", wall, peer,
                         "RDPAccountant.step()"))
            rows.append((f"per-step spend, plan on a SQLite file, {what} [µs, CPU]", cpu, peer,
                         "RDPAccountant.step()"))


def _phases(seed: int = 0, n: int = 50) -> list[tuple[float, float, int]]:
    rng = np.random.default_rng(seed)
    return [(float(s), float(q), 100) for s, q in zip(rng.uniform(0.8, 2.0, n), rng.uniform(0.002, 0.02, n))]


def fifty_phases(rows: list) -> None:
    """50 distinct (σ, q) phases of 100 steps each, step by step, then ε at δ = 1e-5."""
    phases = _phases()
    t, cpu0 = time.perf_counter(), time.thread_time()
    acct = Accountant()
    for s, q, n in phases:
        m = dpsgd.step_mechanism(s, q)
        for _ in range(n):
            acct.spend(m)
    spends = time.perf_counter() - t
    c = acct.best_epsilon(1e-5)
    ours, ours_cpu = time.perf_counter() - t, time.thread_time() - cpu0
    theirs = float("nan")
    if RDPAccountant:
        t, cpu0 = time.perf_counter(), time.thread_time()
        op = RDPAccountant()
        for s, q, n in phases:
            for _ in range(n):
                op.step(noise_multiplier=s, sample_rate=q)
        e_op = op.get_epsilon(1e-5)
        theirs, theirs_cpu = time.perf_counter() - t, time.thread_time() - cpu0
        rows.append((f"50 phases × 100 steps + ε [s, wall] (renyi ε {c.value:.4f} {c.method}, Opacus {e_op:.4f})",
                     ours, theirs, "RDPAccountant steps + get_epsilon"))
        rows.append(("50 phases × 100 steps + ε [s, CPU]", ours_cpu, theirs_cpu, "RDPAccountant steps + get_epsilon"))
    rows.append(("  of which the 5000 spends [s]", spends, float("nan"), ""))


def first_sight(rows: list) -> None:
    """A new subsampled Gaussian's first spend (its RDP curve on the 251-order grid)."""
    from renyi import _subsampled_gaussian as sg

    acct = Accountant(ApproxDP(1e6, 1e-5))
    acct.spend(dpsgd.step_mechanism(3.0, 0.5))  # warm imports and tables
    ts, cs = [], []
    for i in range(20):
        m = dpsgd.step_mechanism(0.9 + 0.037 * i, 0.003 + 0.0011 * i)
        t, c = time.perf_counter(), time.thread_time()
        acct.spend(m)
        ts.append(time.perf_counter() - t)
        cs.append(time.thread_time() - c)
    ours, ours_cpu = statistics.median(ts) * 1e3, statistics.median(cs) * 1e3
    # the same curve by the full integer-order sums of before (every term up to α = 2^16)
    old = sg._WINDOW_FROM
    sg._WINDOW_FROM = 1 << 30
    try:
        ts2, cs2 = [], []
        for i in range(3):
            m = dpsgd.step_mechanism(0.91 + 0.037 * i, 0.0031 + 0.0011 * i)
            t, c = time.perf_counter(), time.thread_time()
            m.guarantee.rdp(acct.orders)
            ts2.append(time.perf_counter() - t)
            cs2.append(time.thread_time() - c)
    finally:
        sg._WINDOW_FROM = old
    rows.append(("first sight of a new subsampled Gaussian [ms, wall]", ours, statistics.median(ts2) * 1e3,
                 "renyi before: every term of the integer-order sums"))
    rows.append(("first sight of a new subsampled Gaussian [ms, CPU]", ours_cpu, statistics.median(cs2) * 1e3,
                 "renyi before: every term of the integer-order sums"))


def _fresh(code: str, repeats: int = 5) -> tuple[float, float]:
    """Median wall time and median CPU time (user + system of the child) of a fresh interpreter."""
    ts, cs = [], []
    for _ in range(repeats):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, stdout=subprocess.DEVNULL)
        ts.append(time.perf_counter() - t)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cs.append((r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime))
    return statistics.median(ts), statistics.median(cs)


def cold_start(rows: list) -> None:
    numpy_s = _fresh("import numpy")
    cases = [("cold start: first tight ε (PLD) in a fresh interpreter",
              "import renyi; renyi.dpsgd.epsilon(1.1, 0.01, steps=1000, delta=1e-5)"),
             ("cold start: Accountant, 1000 steps, ε",
              "import renyi; a = renyi.Accountant(renyi.ApproxDP(8.0, 1e-5)); "
              "a.spend(renyi.dpsgd.step_mechanism(1.1, 0.01), 1000); a.epsilon(1e-5)"),
             ("cold start: import scipy.special (for scale)", "import scipy.special")]
    if RDPAccountant:
        cases.append(("cold start: Opacus RDPAccountant ε (peer)",
                      "from opacus.accountants import RDPAccountant; a = RDPAccountant(); "
                      "a.history = [(1.1, 0.01, 1000)]; a.get_epsilon(1e-5)"))
    for name, code in cases:
        ours = _fresh(code)
        rows.append((f"{name} [s, wall]", ours[0], numpy_s[0], "python -c 'import numpy'"))
        rows.append((f"{name} [s, CPU]", ours[1], numpy_s[1], "python -c 'import numpy'"))


def sqlite_rows(rows: list) -> None:
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
            t = time.perf_counter()
            re = Accountant(ledger=path)
            reopen = time.perf_counter() - t
            re.close()
            rows.append((f"SQLite file, budget {name}: 10⁴ spends [s]", total, float("nan"), ""))
            rows.append((f"SQLite file, budget {name}: reopen 10⁴ spends [s]", reopen, float("nan"), ""))
        # the same number of bare SQLite transactions (WAL, synchronous=FULL): the fsync cost
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
        rows[-1:] = rows[-1:]
        rows.append(("baseline: 10⁴ bare SQLite transactions [s]", time.perf_counter() - t, float("nan"), ""))
        con.close()


def main() -> None:
    rows: list = []
    per_step(rows)
    plan_on_file(rows)
    fifty_phases(rows)
    first_sight(rows)
    cold_start(rows)
    if "--quick" not in sys.argv:
        sqlite_rows(rows)
    width = max(len(r[0]) for r in rows)
    print(f"{'case'.ljust(width)}  {'renyi':>10}  {'peer':>10}  {'ratio':>7}  peer")
    for name, ours, theirs, peer in rows:
        ratio = ours / theirs if theirs == theirs and theirs > 0 else float("nan")
        fmt = (lambda x: f"{x:10.3f}" if x == x else f"{'–':>10}")
        print(f"{name.ljust(width)}  {fmt(ours)}  {fmt(theirs)}  {ratio:7.2f}  {peer}")
    print(f"(load average at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())})")


if __name__ == "__main__":
    main()
