"""Benchmark: the noise error of released means, renyi (centred sums) vs before vs Tumult Analytics.

The benchmark job of issue 29: a table of people with at most 3 rows each (so the per-person
bound binds nowhere and every tool's exact aggregate is the plain clamped one), 3 000
counties, income clamped to [0, 200 000], three queries by county (count, sum, mean) at
ρ = 0.5 split evenly (ρ = 1/6 each; a mean's ρ split evenly between its sum and its count).

* **renyi** — ``renyi.release(spec)`` once (the whole pipeline: DuckDB, ledger, noise, files),
  then the noise alone redrawn ``--reps`` times on the engine's exact aggregates: the mean is
  Σ(v − c)/count + c from the noisy *centred* sum (one row moves it by (hi − lo)/2);
* **renyi before** — the estimator renyi used before centring, on the same exact aggregates
  and the same ρ shares: the noisy plain sum (one row moves it by max(|lo|, |hi|)) over the
  noisy count;
* **Tumult Analytics** (``tmlt.analytics``, when a Python with it is given by
  ``--tumult-python``; it needs its own environment, with PySpark 3.5) — ``Session`` with
  ``AddRowsWithID("person_id")``, ``MaxRowsPerID(3)``, the same three queries, ``--tumult-reps``
  sessions.

The error of a released mean is released − exact (the exact clamped mean of the county), over
counties with at least one row; the table prints its root mean square, and the ratios to the
renyi-before column. These are measurements, not assertions.

Run:

    python benchmarks/bench_curator.py                       # 10⁶ rows, renyi only
    python benchmarks/bench_curator.py --tumult-python /path/to/venv/bin/python
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time

RHO = 0.5
MAX_ROWS = 3
BOUNDS = (0, 200_000)


def make_data(path: str, rows: int, groups: int) -> None:
    import duckdb

    con = duckdb.connect()
    con.execute(
        f"COPY (SELECT CAST(i // {MAX_ROWS} AS BIGINT) AS person_id, "
        f"'C' || lpad(CAST(hash(i + 7) % {groups} AS VARCHAR), 4, '0') AS county, "
        f"CAST(hash(i + 13) % 250000 AS BIGINT) AS income "
        f"FROM range({rows}) t(i)) TO '{path}' (FORMAT PARQUET)")
    con.close()


def keys(groups: int) -> list[str]:
    return [f"C{i:04d}" for i in range(groups)]


def exact_means(data: str, groups: int) -> dict[str, tuple[int, float]]:
    import duckdb

    con = duckdb.connect()
    rows = con.execute(f"SELECT county, count(*), avg(least(greatest(income, {BOUNDS[0]}), {BOUNDS[1]})) "
                       f"FROM read_parquet('{data}') GROUP BY county").fetchall()
    con.close()
    return {k: (int(n), float(m)) for k, n, m in rows}


def _rmse(errors: list[float]) -> float:
    return math.sqrt(math.fsum(e * e for e in errors) / len(errors))


# ----------------------------------------------------------------------------- renyi
def run_renyi(data: str, groups: int, work: str, reps: int) -> dict:
    import numpy as np

    import renyi
    from renyi.release.duckdb import DuckDBEngine
    from renyi.release.noise import add_noise
    from renyi.release.plan import _calibrate, derive_sensitivity

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
    seconds = time.perf_counter() - t
    plan = r.plan
    with DuckDBEngine(plan.spec.data) as eng:
        agg = eng.aggregate(plan, salt=1)
    qp = plan.queries[2]
    ms, mc = qp.measurements
    n = agg["mean"]["count"]
    s = agg["mean"]["sum"]
    ok = n > 0
    exact = s[ok] / n[ok]
    # the estimator before centring: the plain sum, at the same ρ share
    old_sens = derive_sensitivity(MAX_ROWS, None, None, groups, per_row=BOUNDS[1])
    old_sum = _calibrate("discrete_gaussian", old_sens, ms.rho)
    rng = np.random.default_rng(2026)
    new_err: list[float] = []
    old_err: list[float] = []
    count_err: list[float] = []
    for _ in range(reps):
        res = add_noise(plan, agg, rng)
        new_err += list(res[2].value[ok] - exact)
        count_err += list(res[0].value[ok] - n[ok])
        so = old_sum.release(s, rng=rng).astype(float)
        no = mc.mechanism.release(n, rng=rng).astype(float)
        mean_old = np.clip(np.where(no >= 1, so / np.maximum(no, 1), 0.5 * sum(BOUNDS)), *BOUNDS)
        old_err += list(mean_old[ok] - exact)
    return {"seconds": seconds, "rmse": _rmse(new_err), "rmse_before": _rmse(old_err),
            "count_rmse": _rmse(count_err), "sigma_sum": float(ms.mechanism.sigma),
            "sigma_sum_before": float(old_sum.sigma), "sigma_count": float(mc.mechanism.sigma),
            "cells": int(ok.sum()) * reps}


# ----------------------------------------------------------------------------- Tumult
def run_tumult(data: str, groups: int, work: str, reps: int) -> dict:
    import logging

    logging.getLogger("py4j").setLevel(logging.ERROR)
    from pyspark.sql import SparkSession
    from tmlt.analytics import (AddRowsWithID, KeySet, MaxRowsPerID, QueryBuilder, RhoZCDPBudget,
                                Session)

    spark = (SparkSession.builder.master("local[2]").config("spark.driver.memory", "2g")
             .config("spark.ui.enabled", "false").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    df = spark.read.parquet(data)
    ks = KeySet.from_dict({"county": keys(groups)})
    from pyspark.sql import functions as F

    clamped = F.least(F.greatest(F.col("income"), F.lit(BOUNDS[0])), F.lit(BOUNDS[1]))
    exact = {row[0]: (int(row[1]), float(row[2])) for row in
             df.groupBy("county").agg(F.count("*"), F.avg(clamped)).collect()}
    err: list[float] = []
    count_err: list[float] = []
    seconds = []
    for _ in range(reps):
        t = time.perf_counter()
        sess = Session.from_dataframe(privacy_budget=RhoZCDPBudget(RHO), source_id="people", dataframe=df,
                                      protected_change=AddRowsWithID(id_column="person_id"))
        base = QueryBuilder("people").enforce(MaxRowsPerID(MAX_ROWS)).groupby(ks)
        cnt = sess.evaluate(base.count(), RhoZCDPBudget(RHO / 3)).toPandas()
        sess.evaluate(QueryBuilder("people").enforce(MaxRowsPerID(MAX_ROWS)).groupby(ks)
                      .sum("income", low=BOUNDS[0], high=BOUNDS[1]), RhoZCDPBudget(RHO / 3)).toPandas()
        avg = sess.evaluate(QueryBuilder("people").enforce(MaxRowsPerID(MAX_ROWS)).groupby(ks)
                            .average("income", low=BOUNDS[0], high=BOUNDS[1]), RhoZCDPBudget(RHO / 3)).toPandas()
        seconds.append(time.perf_counter() - t)
        for c, v in zip(avg["county"], avg.iloc[:, 1]):
            if c in exact:
                err.append(float(v) - exact[c][1])
        for c, v in zip(cnt["county"], cnt.iloc[:, 1]):
            if c in exact:
                count_err.append(float(v) - exact[c][0])
    spark.stop()
    return {"seconds": min(seconds), "rmse": _rmse(err), "count_rmse": _rmse(count_err), "cells": len(err)}


WORKERS = {"renyi": run_renyi, "tumult": run_tumult}


def run(name: str, python: str, data: str, groups: int, work: str, reps: int, timeout: float) -> dict:
    os.makedirs(os.path.join(work, name), exist_ok=True)
    cmd = [python, os.path.abspath(__file__), "--worker", name, "--data", data, "--groups", str(groups),
           "--work", os.path.join(work, name), "--reps", str(reps)]
    env = dict(os.environ)
    if name == "tumult":
        # its own environment; Spark's Python workers must run the same interpreter
        env.pop("PYTHONPATH", None)
        env.pop("VIRTUAL_ENV", None)
        env["PYSPARK_PYTHON"] = env["PYSPARK_DRIVER_PYTHON"] = python
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    if p.returncode != 0:
        last = (p.stderr.strip().splitlines() or ["failed"])[-1]
        return {"error": last[:200]}
    return json.loads(p.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--groups", type=int, default=3000)
    ap.add_argument("--reps", type=int, default=20, help="noise redraws for renyi")
    ap.add_argument("--tumult-python", default=None, help="a Python with tmlt.analytics installed")
    ap.add_argument("--tumult-reps", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=3600.0)
    ap.add_argument("--worker")
    ap.add_argument("--data")
    ap.add_argument("--work")
    a = ap.parse_args()
    if a.worker:
        import warnings

        warnings.simplefilter("ignore")
        print(json.dumps(WORKERS[a.worker](a.data, a.groups, a.work, a.reps)))
        return
    with tempfile.TemporaryDirectory(prefix="renyi-bench-curator-") as work:
        data = os.path.join(work, "people.parquet")
        make_data(data, a.rows, a.groups)
        print(f"data: {a.rows:,} rows, {a.groups:,} counties, ≤ {MAX_ROWS} rows per person (the bound binds "
              f"nowhere); count, sum and mean of income in [{BOUNDS[0]}, {BOUNDS[1]}] by county, ρ = {RHO} "
              f"(1/6 each; a mean's sum and count 1/12 each)")
        res = {"renyi": run("renyi", sys.executable, data, a.groups, work, a.reps, a.timeout)}
        if a.tumult_python:
            res["tumult"] = run("tumult", a.tumult_python, data, a.groups, work, a.tumult_reps, a.timeout)
        r = res["renyi"]
        if "error" in r:
            print(f"renyi failed: {r['error']}")
            return
        base = r["rmse_before"]
        print(f"{'estimator':<26} {'σ of the sum':>13} {'mean RMSE':>10} {'× before':>9} {'count RMSE':>11} "
              f"{'cells':>7}")
        print(f"{'renyi before (plain sum)':<26} {r['sigma_sum_before']:>13.4g} {base:>10.1f} {1.0:>9.3f} "
              f"{'':>11} {r['cells']:>7}")
        print(f"{'renyi (centred sum)':<26} {r['sigma_sum']:>13.4g} {r['rmse']:>10.1f} {r['rmse'] / base:>9.3f} "
              f"{r['count_rmse']:>11.2f} {r['cells']:>7}")
        t = res.get("tumult")
        if t is not None:
            if "error" in t:
                print(f"{'Tumult Analytics':<26} failed: {t['error']}")
            else:
                print(f"{'Tumult Analytics':<26} {'':>13} {t['rmse']:>10.1f} {t['rmse'] / base:>9.3f} "
                      f"{t['count_rmse']:>11.2f} {t['cells']:>7}")
        print(f"renyi release seconds (whole pipeline, one run): {r['seconds']:.1f}"
              + (f"; Tumult (one session, 3 queries, best of {a.tumult_reps}): {t['seconds']:.1f}"
                 if t is not None and "error" not in t else ""))


if __name__ == "__main__":
    main()
