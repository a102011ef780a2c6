"""Benchmark: the fixed cost and the peak memory of one `renyi release` on DuckDB (issue 27).

One release of the job of ``bench_release.py`` (count, clamped sum and mean of income by
county over 3 000 public keys, ≤ 3 rows per person, ρ = 0.5, a ledger, the files and the
report), each in its own process so that the peak RSS is its own, beside a plain DuckDB
``GROUP BY`` of the same file. CPU seconds are printed beside wall-clock ones: on a shared
machine the wall-clock time mostly measures the load.

Run (``--src`` compares source trees, e.g. ``git archive ed5614f src | tar -x -C /tmp/before``):

    python benchmarks/bench_release_cost.py --rows 1000,1000000,10000000
    python benchmarks/bench_release_cost.py --rows 1000000 --src before=/tmp/before/src --src after=src
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

KEYS = [f"C{i:04d}" for i in range(3000)]


def worker(src: str, data: str, what: str, work: str) -> None:
    sys.path.insert(0, src)
    t0 = time.perf_counter()
    if what == "groupby":
        import duckdb

        con = duckdb.connect()
        t = time.perf_counter()
        con.execute(f"SELECT county, count(*), sum(least(greatest(income, 0), 200000)) FROM read_parquet('{data}') "
                    "GROUP BY county").fetchall()
        sec = time.perf_counter() - t
    else:
        import renyi

        k = {"county": KEYS}
        qs = [{"name": "count", "type": "count", "by": ["county"], "keys": k},
              {"name": "sum", "type": "sum", "column": "income", "bounds": [0, 200000], "by": ["county"], "keys": k},
              {"name": "mean", "type": "mean", "column": "income", "bounds": [0, 200000], "by": ["county"], "keys": k}]
        spec = {"data": {"source": data, "privacy_unit": "person_id", "max_rows_per_unit": 3},
                "privacy": {"budget": {"rho": 0.5}, "ledger": os.path.join(work, "l.db")}, "query": qs}
        t = time.perf_counter()
        renyi.release(spec, out=os.path.join(work, "out"))
        sec = time.perf_counter() - t
    r = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"seconds": sec, "with_imports": time.perf_counter() - t0, "cpu": r.ru_utime + r.ru_stime,
                      "peak_mb": r.ru_maxrss / 1024}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default="1000,1000000")
    ap.add_argument("--src", action="append", default=[], help="name=path of a source tree (default: this one)")
    ap.add_argument("--worker", nargs=4, metavar=("SRC", "DATA", "WHAT", "WORK"))
    a = ap.parse_args()
    if a.worker:
        worker(*a.worker)
        return
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
    srcs = [tuple(s.split("=", 1)) for s in a.src] or [("renyi", here)]
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from bench_release import make_data

    print(f"{'rows':>10} {'run':<10} {'seconds':>8} {'CPU s':>7} {'peak MiB':>9}")
    with tempfile.TemporaryDirectory(prefix="renyi-bench-cost-") as tmp:
        for rows in (int(x) for x in a.rows.split(",")):
            data = os.path.join(tmp, f"p{rows}.parquet")
            make_data(data, rows, len(KEYS))
            for name, src in [("groupby", here), *srcs]:
                work = os.path.join(tmp, "w")
                shutil.rmtree(work, ignore_errors=True)
                os.makedirs(work)
                what = "groupby" if name == "groupby" else "renyi"
                p = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", os.path.abspath(src), data,
                                    what, work], capture_output=True, text=True)
                if p.returncode:
                    print(f"{rows:>10} {name:<10} failed: {(p.stderr.strip().splitlines() or ['?'])[-1][:100]}")
                    continue
                r = json.loads(p.stdout.strip().splitlines()[-1])
                print(f"{rows:>10} {name:<10} {r['seconds']:>8.2f} {r['cpu']:>7.2f} {r['peak_mb']:>9.0f}")


if __name__ == "__main__":
    main()
