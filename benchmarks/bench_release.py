"""Benchmark: `renyi release` on a 10⁷-row Parquet file, 3 queries over 3 000 groups.

The same job three ways, each in its own process (so peak memory is each tool's own):

* **renyi** — ``renyi.release(spec)``: DuckDB reads the Parquet file, keeps ≤ 3 rows per
  person (random choice in SQL), aggregates count / clamped sum / mean by county over the
  public key list, spends on a ledger, adds exact discrete Gaussian noise, writes CSVs and the
  report;
* **pandas** — the same aggregation by hand: read the columns, random ≤ 3 rows per person
  (shuffle + ``groupby.head``), clamp, group by county, reindex on the key list, add
  (floating-point) Gaussian noise;
* **OpenDP** (``opendp.extras.polars``, when installed with a matching Polars) — a compositor
  with ``identifier="person_id"``, ``truncate_per_group(3)`` and the three queries.

Run:

    python benchmarks/bench_release.py                    # 10⁷ rows (writes ~100 MB to a temp dir)
    python benchmarks/bench_release.py --rows 1000000     # quicker
    python benchmarks/bench_release.py --opendp-python /path/to/python   # a Python whose Polars
                                                          # matches OpenDP's (OpenDP 0.16: 1.36.x)

Timings are wall-clock on this machine, printed side by side with ratios to renyi; they are
measurements, not assertions.
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
def run_renyi(data: str, groups: int, work: str) -> dict:
    import duckdb  # noqa: F401  (imports outside the timing, as for the other tools)

    import renyi
    import renyi.calibration
    import renyi.release.duckdb
    import renyi.report  # noqa: F401

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
    t = time.perf_counter()
    r = renyi.release(spec, out=os.path.join(work, "renyi-out"))
    return {"seconds": time.perf_counter() - t, "cells": sum(q.query.cells for q in r.plan.queries)}


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


WORKERS = {"renyi": run_renyi, "pandas": run_pandas, "opendp": run_opendp}


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
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--groups", type=int, default=3000)
    ap.add_argument("--only", default="renyi,pandas,opendp")
    ap.add_argument("--opendp-python", default=sys.executable)
    ap.add_argument("--timeout", type=float, default=1800.0)
    ap.add_argument("--worker")
    ap.add_argument("--data")
    ap.add_argument("--work")
    a = ap.parse_args()
    if a.worker:
        worker(a.worker, a.data, a.groups, a.work)
        return
    with tempfile.TemporaryDirectory(prefix="renyi-bench-release-") as work:
        data = os.path.join(work, "people.parquet")
        t = time.perf_counter()
        make_data(data, a.rows, a.groups)
        print(f"data: {a.rows:,} rows, {a.groups:,} counties, {os.path.getsize(data) / 2**20:.0f} MiB Parquet "
              f"(made in {time.perf_counter() - t:.1f} s); 3 queries (count, clamped sum, mean) by county, "
              f"≤ {MAX_ROWS} rows per person, ρ = {RHO}; cores: {os.cpu_count()}")
        results = {}
        for name in a.only.split(","):
            py = a.opendp_python if name == "opendp" else sys.executable
            results[name] = run(name, py, data, a.groups, work, a.timeout)
        base = results.get("renyi", {}).get("seconds")
        print(f"{'tool':<8} {'seconds':>9} {'with imports':>13} {'peak RSS MiB':>13} {'× renyi':>8}")
        for name, r in results.items():
            if "error" in r:
                print(f"{name:<8} {'—':>9} {'—':>13} {'—':>13} {'—':>8}   ({r['error']})")
                continue
            ratio = f"{r['seconds'] / base:.2f}" if base else "—"
            print(f"{name:<8} {r['seconds']:>9.2f} {r['total_seconds']:>13.2f} {r['peak_mb']:>13.0f} {ratio:>8}")


if __name__ == "__main__":
    main()
