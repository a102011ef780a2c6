"""Benchmark: `renyi release` on 10⁷ and 10⁸ rows, on DuckDB and on Spark, beside plain tools.

Three queries (count, clamped sum, mean of income by county over 3 000 public counties, at most
3 rows per person) on a Parquet file, each tool in its own process (peak memory is its own):

* **renyi-duckdb**: ``renyi.release(spec)`` on the embedded DuckDB: keeps ≤ 3 rows per person
  (salted-hash random choice in SQL), aggregates, spends on a ledger, adds exact discrete
  Gaussian noise, writes the CSVs and the report;
* **renyi-spark**: the same spec with ``[engine] name = "spark"`` on ``local[*]`` (the session
  is started before the clock, like an import; its start is in "with start");
* **duckdb-groupby**: one plain DuckDB ``GROUP BY county`` of count, clamped sum and mean (no
  per-person bound, no noise, no ledger): the floor of any DuckDB release;
* **pandas**: the same aggregation by hand (shuffle + ``groupby.head(3)`` per person, clamp,
  group by county, floating-point Gaussian noise);
* **OpenDP** (``opendp.extras.polars``, with ``--only ...,opendp`` and a matching Polars).

Run:

    python benchmarks/bench_release.py                              # 10⁷ rows
    python benchmarks/bench_release.py --rows 10000000,100000000 --timeout 2400
    python benchmarks/bench_release.py --rows 1000000 --only renyi-duckdb,renyi-spark

The Parquet files are made once under ``--data-dir`` (default ``/tmp/renyi-bench-release``) and
reused. Each run has a time limit (``--timeout``); a run that does not finish is reported as
such. Peak RSS is the worker's own (Python and the libraries it loads), plus, for Spark, the
peak of its JVM (a child process). Timings are wall-clock on this machine, printed side by side
with ratios to renyi-duckdb; they are measurements, not assertions.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

RHO = 0.5
MAX_ROWS = 3
BOUNDS = (0.0, 200_000.0)


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: KiB


def make_data(path: str, rows: int, groups: int) -> None:
    import duckdb

    units = max(1, rows * 3 // 10)  # ~3.3 rows per person; some persons have many more
    con = duckdb.connect()
    con.execute(
        f"COPY (SELECT CAST(hash(i) % {units} AS BIGINT) AS person_id, "
        f"'C' || lpad(CAST(hash(i + 7) % {groups} AS VARCHAR), 4, '0') AS county, "
        f"CAST(hash(i + 13) % 250000 AS DOUBLE) AS income "
        f"FROM range({rows}) t(i)) TO '{path}' (FORMAT PARQUET)")
    con.close()


def keys(groups: int) -> list[str]:
    return [f"C{i:04d}" for i in range(groups)]


# ----------------------------------------------------------------------------- workers
def _spec(data: str, groups: int, work: str, engine: dict | None = None) -> dict:
    k = {"county": keys(groups)}
    spec = {
        "data": {"source": data, "privacy_unit": "person_id", "max_rows_per_unit": MAX_ROWS},
        "privacy": {"budget": {"rho": RHO}, "ledger": os.path.join(work, "ledger.db")},
        "query": [
            {"name": "count", "type": "count", "by": ["county"], "keys": k},
            {"name": "sum", "type": "sum", "column": "income", "bounds": list(BOUNDS), "by": ["county"], "keys": k},
            {"name": "mean", "type": "mean", "column": "income", "bounds": list(BOUNDS), "by": ["county"], "keys": k},
        ],
    }
    if engine:
        spec["engine"] = engine
    return spec


def run_renyi(data: str, groups: int, work: str) -> dict:
    import duckdb  # noqa: F401  (imports outside the timing, as for the other tools)

    import renyi
    import renyi.calibration
    import renyi.release.duckdb
    import renyi.report  # noqa: F401

    spec = _spec(data, groups, work)
    t = time.perf_counter()
    r = renyi.release(spec, out=os.path.join(work, "renyi-out"))
    return {"seconds": time.perf_counter() - t, "cells": sum(q.query.cells for q in r.plan.queries)}


def run_renyi_spark(data: str, groups: int, work: str) -> dict:
    import renyi
    import renyi.calibration
    import renyi.report  # noqa: F401
    from renyi.release.spark import start_session

    mem = os.environ.get("BENCH_SPARK_MEMORY", "6GB")
    t0 = time.perf_counter()
    session, _ = start_session(None, {"spark.local.dir": work}, memory_limit=mem, start_timeout=600)
    start = time.perf_counter() - t0
    spec = _spec(data, groups, work)
    t = time.perf_counter()
    r = renyi.release(dict(spec, engine={"name": "spark"}), out=os.path.join(work, "renyi-out"))
    sec = time.perf_counter() - t
    jvm = _jvm_peak_mb()
    session.stop()
    return {"seconds": sec, "start_seconds": start, "cells": sum(q.query.cells for q in r.plan.queries),
            "jvm_peak_mb": jvm}


def _jvm_peak_mb() -> float:
    """Peak RSS (VmHWM) of the Spark JVM this process launched."""
    from pyspark import SparkContext

    proc = getattr(SparkContext._gateway, "proc", None)
    try:
        with open(f"/proc/{proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except (OSError, AttributeError):
        pass
    return float("nan")


def run_duckdb_groupby(data: str, groups: int, work: str) -> dict:
    import duckdb

    t = time.perf_counter()
    con = duckdb.connect()
    lo, hi = BOUNDS
    res = con.execute(
        f"SELECT county, count(*), sum(least(greatest(income, {lo}), {hi})), avg(least(greatest(income, {lo}), {hi})) "
        f"FROM read_parquet('{data}') GROUP BY county").fetchall()
    con.close()
    return {"seconds": time.perf_counter() - t, "cells": 3 * len(res)}


def run_pandas(data: str, groups: int, work: str) -> dict:
    import numpy as np
    import pandas as pd

    t = time.perf_counter()
    rng = np.random.default_rng()
    df = pd.read_parquet(data, columns=["person_id", "county", "income"])
    df["_r"] = rng.random(len(df))
    df = df.sort_values(["person_id", "_r"]).groupby("person_id", sort=False).head(MAX_ROWS)
    df["income"] = df["income"].clip(*BOUNDS)
    g = df.groupby("county")["income"].agg(["size", "sum"]).reindex(keys(groups), fill_value=0)
    sigma_c = MAX_ROWS / np.sqrt(2 * RHO / 4)  # count, sum, and the mean's two halves
    sigma_s = MAX_ROWS * BOUNDS[1] / np.sqrt(2 * RHO / 4)
    cnt = g["size"].to_numpy() + rng.normal(0, sigma_c, groups)
    sm = g["sum"].to_numpy() + rng.normal(0, sigma_s, groups)
    mean = np.clip((g["sum"].to_numpy() + rng.normal(0, sigma_s, groups))
                   / np.maximum(g["size"].to_numpy() + rng.normal(0, sigma_c, groups), 1), *BOUNDS)
    out = pd.DataFrame({"county": keys(groups), "count": cnt, "sum": sm, "mean": mean})
    out.to_csv(os.path.join(work, "pandas.csv"), index=False)
    return {"seconds": time.perf_counter() - t, "cells": 3 * groups}


def run_opendp(data: str, groups: int, work: str) -> dict:
    import opendp.prelude as dp
    import polars as pl

    dp.enable_features("contrib")
    t = time.perf_counter()
    kf = pl.DataFrame({"county": keys(groups)})
    ctx = dp.Context.compositor(
        data=pl.scan_parquet(data),
        privacy_unit=dp.unit_of(contributions=1, identifier="person_id"),
        privacy_loss=dp.loss_of(rho=RHO),
        split_evenly_over=3,
        margins=[dp.polars.Margin(by=["county"], invariant="keys", max_length=10 ** 9)],
    )
    inc = pl.col("income").fill_null(0)
    queries = [
        ctx.query().truncate_per_group(MAX_ROWS).group_by("county").agg(dp.len()).with_keys(kf),
        ctx.query().truncate_per_group(MAX_ROWS).group_by("county").agg(inc.dp.sum(BOUNDS)).with_keys(kf),
        ctx.query().truncate_per_group(MAX_ROWS).group_by("county").agg(inc.dp.mean(BOUNDS)).with_keys(kf),
    ]
    for i, q in enumerate(queries):
        q.release().collect().write_csv(os.path.join(work, f"opendp-{i}.csv"))
    return {"seconds": time.perf_counter() - t, "cells": 3 * groups}


WORKERS = {"renyi-duckdb": run_renyi, "renyi-spark": run_renyi_spark, "duckdb-groupby": run_duckdb_groupby,
           "pandas": run_pandas, "opendp": run_opendp}


def worker(name: str, data: str, groups: int, work: str) -> None:
    import warnings

    warnings.simplefilter("ignore")
    t0 = time.perf_counter()
    res = WORKERS[name](data, groups, work)
    res["total_seconds"] = time.perf_counter() - t0
    res["peak_mb"] = _peak_mb()
    print(json.dumps(res))


def run(name: str, python: str, data: str, groups: int, work: str, timeout: float) -> dict:
    os.makedirs(os.path.join(work, name), exist_ok=True)
    cmd = [python, os.path.abspath(__file__), "--worker", name, "--data", data, "--groups", str(groups),
           "--work", os.path.join(work, name)]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    if p.returncode != 0:
        last = (p.stderr.strip().splitlines() or ["failed"])[-1]
        return {"error": last[:160]}
    return json.loads(p.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default="10000000", help="comma-separated row counts")
    ap.add_argument("--groups", type=int, default=3000)
    ap.add_argument("--only", default="renyi-duckdb,renyi-spark,duckdb-groupby,pandas")
    ap.add_argument("--opendp-python", default=sys.executable)
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds per run")
    ap.add_argument("--data-dir", default=os.path.join(tempfile.gettempdir(), "renyi-bench-release"))
    ap.add_argument("--worker")
    ap.add_argument("--data")
    ap.add_argument("--work")
    a = ap.parse_args()
    if a.worker:
        worker(a.worker, a.data, a.groups, a.work)
        return
    os.makedirs(a.data_dir, exist_ok=True)
    print(f"3 queries (count, clamped sum, mean) by county, ≤ {MAX_ROWS} rows per person, ρ = {RHO}; "
          f"cores: {os.cpu_count()}; load average at start: {os.getloadavg()[0]:.1f}")
    for rows in (int(r) for r in a.rows.split(",")):
        data = os.path.join(a.data_dir, f"people-{rows}-{a.groups}.parquet")
        if not os.path.exists(data):
            t = time.perf_counter()
            make_data(data + ".part", rows, a.groups)
            os.replace(data + ".part", data)
            print(f"made {data} in {time.perf_counter() - t:.1f} s")
        print(f"\ndata: {rows:,} rows, {a.groups:,} counties, {os.path.getsize(data) / 2**20:.0f} MiB Parquet")
        results = {}
        with tempfile.TemporaryDirectory(prefix="renyi-bench-release-", dir=a.data_dir) as work:
            for name in a.only.split(","):
                py = a.opendp_python if name == "opendp" else sys.executable
                results[name] = run(name, py, data, a.groups, work, a.timeout)
                r = results[name]
                print(f"  ({name} done: {r.get('seconds', r.get('error'))}; load {os.getloadavg()[0]:.1f})",
                      flush=True)
        base = results.get("renyi-duckdb", {}).get("seconds")
        print(f"{'tool':<15} {'seconds':>9} {'with start':>11} {'peak RSS MiB':>13} {'JVM MiB':>8} "
              f"{'× renyi-duckdb':>15}")
        for name, r in results.items():
            if "error" in r:
                print(f"{name:<15} {'—':>9} {'—':>11} {'—':>13} {'—':>8} {'—':>15}   ({r['error']})")
                continue
            ratio = f"{r['seconds'] / base:.2f}" if base else "—"
            jvm = f"{r['jvm_peak_mb']:.0f}" if "jvm_peak_mb" in r else "—"
            print(f"{name:<15} {r['seconds']:>9.2f} {r['total_seconds']:>11.2f} {r['peak_mb']:>13.0f} {jvm:>8} "
                  f"{ratio:>15}", flush=True)


if __name__ == "__main__":
    main()
