"""Releases on Spark: the same statements as DuckDB, the same aggregates, the same order.

One local Spark session (``local[2]``) is shared by the module's tests; tables are small.
The failure cases (a master that does not answer, a session that cannot start) run the CLI in
a subprocess, where no session is running.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from _peers import need

duckdb = need("duckdb")

from renyi.release import SpecError, add_noise, make_plan, parse_spec  # noqa: E402
from renyi.release.duckdb import DuckDBEngine  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
GROUPS = [f"g{i:02d}" for i in range(40)]


def _java() -> bool:
    home = os.environ.get("JAVA_HOME")
    return shutil.which("java") is not None or (home is not None and os.path.exists(os.path.join(home, "bin", "java")))


@pytest.fixture(scope="module")
def spark():
    need("pyspark")
    if not _java() and not os.environ.get("CI"):
        pytest.skip("the spark engine needs Java 17 or later")
    from pyspark.sql import SparkSession

    s = (SparkSession.builder.master("local[2]").appName("renyi-tests").config("spark.ui.enabled", "false")
         .config("spark.sql.shuffle.partitions", "4").config("spark.log.level", "ERROR").getOrCreate())
    yield s
    s.stop()


def make_table(path: Path, n: int, *, units: int, seed: int = 0) -> None:
    """n rows: id (≈ n/units rows each, so the row bound binds), grp (text; g38, g39 never occur),
    x (two decimals, some outside the bounds, some NULL), k (small integers)."""
    rng = np.random.default_rng(seed)
    con = duckdb.connect()
    con.register("t", {"id": rng.integers(0, units, n), "grp": np.array(GROUPS, dtype=object)[rng.integers(0, 38, n)],
                       "x": rng.normal(50, 40, n).round(2), "k": rng.integers(0, 30, n)})
    fmt = "FORMAT PARQUET" if path.suffix == ".parquet" else "FORMAT CSV, HEADER"
    con.execute(f"COPY (SELECT id, grp, CASE WHEN x < -60 THEN NULL ELSE x END AS x, k FROM t) TO '{path}' ({fmt})")
    con.close()


def queries(**bounds) -> list[dict]:
    k = {"grp": GROUPS}
    return [
        {"name": "n", "type": "count", "by": ["grp"], "keys": k},
        {"name": "s", "type": "sum", "column": "x", "bounds": [0, 100], "granularity": 0.5, "by": ["grp"], "keys": k,
         "missing": "drop"},
        {"name": "m", "type": "mean", "column": "x", "bounds": [-20, 120], "by": ["grp"], "keys": k, "missing": "drop",
         **bounds},
        {"name": "v", "type": "variance", "column": "x", "bounds": [0, 100], "by": ["grp"], "keys": k, "missing": "drop",
         **bounds},
        {"name": "d", "type": "count_distinct", "column": "k", "by": ["grp"], "keys": k, "max_distinct_per_unit": 1,
         **bounds},
        {"name": "h", "type": "histogram", "column": "x", "bins": [0, 25, 50, 75, 100], "by": ["grp"], "keys": k,
         "missing": "drop", **bounds},
        {"name": "total", "type": "sum", "column": "k", "bounds": [0, 20]},
    ]


def spec(path: Path, *, m: int = 3, engine: dict | None = None, qs=None, **priv) -> dict:
    return {"data": {"source": str(path), "privacy_unit": "id", "max_rows_per_unit": m},
            "privacy": {"budget": {"rho": 1.0}, **priv}, "query": qs or queries(),
            "engine": engine or {"name": "spark"}}


@pytest.mark.parametrize("suffix, bounds", [(".parquet", {}), (".csv", {"max_groups_per_unit": 2,
                                                                       "max_rows_per_group": 1})])
def test_spark_and_duckdb_give_identical_aggregates(spark, tmp_path, suffix, bounds):
    """10⁵ rows, 20 000 individuals (the row bound m = 3 binds for most), every query type, with
    and without group bounds: with one salt both engines keep the same rows and return the same
    integers, cell by cell (the portable md5 row hash and the one SQL generator)."""
    from renyi.release.spark import SparkEngine

    path = tmp_path / f"t{suffix}"
    make_table(path, 100_000, units=20_000)
    # issue 27's kinds too: a quantile (NULL replaced by 50), a mean over discovered keys
    extra = [{"name": "q", "type": "quantile", "column": "x", "bounds": [0, 100], "granularity": 5,
              "quantiles": [0.5, 0.9], "by": ["grp"], "keys": {"grp": GROUPS}, "missing": 50, **bounds},
             {"name": "disc", "type": "mean", "column": "x", "bounds": [0, 100], "by": ["grp"], "keys": "discover",
              "missing": "drop", **bounds}]
    sp = spec(path, qs=queries(**bounds) + extra)
    sp["privacy"]["budget"] = {"rho": 1.0, "delta": 1e-6}
    plan = make_plan(parse_spec(sp))
    with DuckDBEngine(plan.spec.data) as eng:
        a = eng.aggregate(plan, salt=2024)
        other = eng.aggregate(plan, salt=2025)
    with SparkEngine(plan.spec.data) as eng:
        assert eng.session is spark  # the running session is used, never stopped
        b = eng.aggregate(plan, salt=2024)
    assert a.keys() == b.keys()
    assert a["disc"]["keys"] == b["disc"]["keys"] == [(g,) for g in GROUPS[:38]]
    assert a["q"]["count"].size == 40 * 21
    for q in a:
        assert a[q].keys() == b[q].keys(), q
        for v in a[q]:
            if v == "keys":
                continue
            assert a[q][v].dtype == b[q][v].dtype == np.int64
            assert np.array_equal(a[q][v], b[q][v]), (q, v)
    assert a["n"]["count"].sum() < 100_000  # the row bound dropped rows: the choice matters
    assert any(not np.array_equal(a[q][v], other[q][v]) for q in a for v in a[q] if v != "keys")  # and the salt
    assert a["n"]["count"][38:].tolist() == [0, 0]
    assert spark.catalog.listTables() == []  # no view or cached table left behind


def test_spark_intervals_cover_at_the_stated_rate(spark, tmp_path):
    """Spark's exact counts with renyi's noise: over 60 draws the 95 % intervals of 40 cells
    cover the exact counts at the exact coverage of the discrete Gaussian (binomial test)."""
    from renyi.release.spark import SparkEngine

    path = tmp_path / "t.parquet"
    make_table(path, 20_000, units=5_000, seed=1)
    plan = make_plan(parse_spec(spec(path, qs=queries()[:1])))
    with SparkEngine(plan.spec.data) as eng:
        agg = eng.aggregate(plan, salt=7)
    n = agg["n"]["count"]
    rng = np.random.default_rng(3)
    reps, hits = 60, 0
    for _ in range(reps):
        (r,) = add_noise(plan, agg, rng)
        hits += int(np.sum((r.lower <= n) & (n <= r.upper)))
    m = plan.measurements[0]
    s2 = float(m.mechanism.sigma) ** 2
    z = np.arange(-60 * int(math.sqrt(s2) + 1), 60 * int(math.sqrt(s2) + 1) + 1)
    w = np.exp(-z * z / (2 * s2))
    p = w[np.abs(z) <= m.half_width].sum() / w.sum()
    assert p >= 0.95
    assert stats.binomtest(hits, reps * len(GROUPS), p).pvalue > 1e-4, (hits / (reps * len(GROUPS)), p)


def test_cli_release_on_spark(spark, tmp_path):
    """`renyi release spec.toml` with `[engine] name = "spark"`: the files, the ledger spend and
    the manifest, as with DuckDB."""
    from typer.testing import CliRunner

    from renyi.cli import app

    path = tmp_path / "t.parquet"
    make_table(path, 5_000, units=2_000, seed=2)
    sp = tmp_path / "spec.json"
    sp.write_text(json.dumps(spec(path, qs=queries()[:3], ledger=str(tmp_path / "l.db"))))
    r = CliRunner().invoke(app, ["release", str(sp), "--out", str(tmp_path / "out")])
    assert r.exit_code == 0, r.output
    assert sorted(os.listdir(tmp_path / "out")) == ["m.csv", "n.csv", "release.json", "report.json", "s.csv"]
    rows = (tmp_path / "out" / "n.csv").read_text().splitlines()
    assert rows[0] == "grp,value,lower,upper" and len(rows) == 41
    man = json.loads((tmp_path / "out" / "release.json").read_text())
    assert man["ledger_spend_id"] is not None
    assert spark.catalog.listTables() == []


# ----- bad input: one clear error before any spend, nothing written --------------------------------
def _run_cli(tmp_path: Path, engine: dict, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    path = tmp_path / "t.csv"
    path.write_text("id,grp,x\n1,g00,1.5\n2,g01,2.5\n")
    sp = tmp_path / "spec.json"
    sp.write_text(json.dumps(spec(path, engine=engine, qs=queries()[:1], ledger=str(tmp_path / "l.db"))))
    e = dict(os.environ, PYTHONPATH=str(ROOT / "src"), **(env or {}))
    cli = "import sys; from renyi.cli import main; sys.argv[0] = 'renyi'; main()"
    return subprocess.run([sys.executable, "-c", cli, "release", str(sp), "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=timeout, env=e)


def _nothing_spent(tmp_path: Path) -> None:
    from renyi import Accountant

    assert not (tmp_path / "out").exists()
    if (tmp_path / "l.db").exists():
        with Accountant(None, ledger=str(tmp_path / "l.db")) as acct:
            assert acct.history == ()


def test_a_master_that_does_not_answer_is_refused_before_the_spend(tmp_path):
    need("pyspark")
    r = _run_cli(tmp_path, {"name": "spark", "master": "spark://127.0.0.1:1"})
    assert r.returncode != 0
    last = r.stderr.strip().splitlines()[-1]
    assert "Spark master spark://127.0.0.1:1 does not answer" in last and "nothing was spent" in last
    _nothing_spent(tmp_path)


def test_a_master_that_never_registers_times_out_before_the_spend(tmp_path):
    """A port that accepts connections but is no Spark master: the session does not come up
    within start_timeout, and the release stops there."""
    need("pyspark")
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    try:
        port = srv.getsockname()[1]
        r = _run_cli(tmp_path, {"name": "spark", "master": f"spark://127.0.0.1:{port}", "start_timeout": 3})
    finally:
        srv.close()
    assert r.returncode != 0
    assert "did not start or answer within 3 s" in r.stderr.strip().splitlines()[-1]
    _nothing_spent(tmp_path)


def test_a_session_that_cannot_start_is_refused_before_the_spend(tmp_path):
    need("pyspark")
    r = _run_cli(tmp_path, {"name": "spark"}, env={"JAVA_HOME": str(tmp_path / "no-java")})
    assert r.returncode != 0
    assert "cannot start a Spark session (master local[*])" in r.stderr.strip().splitlines()[-1]
    _nothing_spent(tmp_path)


@pytest.mark.parametrize("engine, words", [
    ({"name": "duckdb", "master": "local[2]"}, "master is only for name = \"spark\""),
    ({"name": "spark", "master": "http://x"}, "master must be a Spark master URL"),
    ({"name": "spark", "conf": {"executor.memory": "4g"}}, "conf keys must be Spark settings"),
    ({"name": "spark", "start_timeout": 0}, "start_timeout must be in (0, inf)"),
    ({"name": "flink"}, "name must be one of duckdb, spark"),
])
def test_engine_section_is_checked_when_parsed(tmp_path, engine, words):
    with pytest.raises(SpecError) as e:
        parse_spec(spec(tmp_path / "t.csv", engine=engine))
    assert words in str(e.value)


def test_spark_refuses_a_duckdb_file(tmp_path):
    s = spec(tmp_path / "t.duckdb", engine={"name": "spark"})
    s["data"]["table"] = "t"
    with pytest.raises(SpecError, match="read by the duckdb engine only"):
        parse_spec(s)


def test_csv_options_and_missing_values_agree(spark, tmp_path):
    """A ';'-separated CSV (the delimiter detected, as DuckDB does), 'NA' as its null text and NaN
    values: missing counts, a dropped and a replaced missing value, a quantile and discovered keys
    give the same exact aggregates on Spark as on DuckDB."""
    from renyi.release.spark import SparkEngine

    rng = np.random.default_rng(5)
    n = 20_000
    ids = rng.integers(0, 4_000, n)
    g = np.array([f"h{i}" for i in range(12)], dtype=object)[rng.integers(0, 12, n)]
    x = rng.normal(10, 6, n).round(1).astype(object)
    x[rng.random(n) < 0.03] = "NA"
    x[rng.random(n) < 0.02] = "NaN"
    path = tmp_path / "t.csv"
    path.write_text("id;g;x\n" + "".join(f"{a};{b};{c}\n" for a, b, c in zip(ids, g, x)))
    keys = {"g": [f"h{i}" for i in range(12)]}
    qs = [{"name": "med", "type": "quantile", "column": "x", "bounds": [0, 20], "by": ["g"], "keys": keys,
           "missing": "drop"},
          {"name": "s", "type": "sum", "column": "x", "bounds": [0, 20], "missing": 5, "by": ["g"], "keys": keys},
          {"name": "m", "type": "mean", "column": "x", "bounds": [0, 20], "missing": "drop"},
          {"name": "found", "type": "count", "by": ["g"], "keys": "discover", "max_groups_per_unit": 2}]
    s = spec(path, qs=qs)
    s["data"]["null_string"] = "NA"
    s["privacy"]["budget"] = {"rho": 1.0, "delta": 1e-6}
    plan = make_plan(parse_spec(s))
    with DuckDBEngine(plan.spec.data) as eng:
        a = eng.aggregate(plan, salt=99)
        miss_a = eng.missing_count("x")
    with SparkEngine(plan.spec.data) as eng:
        assert sorted(eng.columns()) == ["g", "id", "x"] and eng.columns()["x"].numeric
        b = eng.aggregate(plan, salt=99)
        miss_b = eng.missing_count("x")
    assert miss_a == miss_b > 0.04 * n
    assert a.keys() == b.keys()
    for q in a:
        assert a[q].keys() == b[q].keys(), q
        for v in a[q]:
            if v == "keys":
                assert list(a[q][v]) == list(b[q][v]), q
            else:
                assert np.array_equal(a[q][v], b[q][v]), (q, v)
    assert sorted(a["found"]["keys"]) == sorted((k,) for k in keys["g"])


def test_csv_options_on_both_engines(spark, tmp_path):
    """Issue 27: the CSV options (delimiter, a literal NULL, no header with named columns) read
    alike on Spark and DuckDB, with the missing-value policy applied the same way."""
    from renyi.release.spark import SparkEngine

    rng = np.random.default_rng(5)
    lines = [f"{i % 700};{GROUPS[i % 7]};{'NULL' if i % 13 == 0 else round(float(rng.normal(50, 30)), 2)}"
             for i in range(3000)]
    path = tmp_path / "t.csv"
    path.write_text("\n".join(lines) + "\n")
    k = {"grp": GROUPS[:7]}
    qs = [{"name": "s", "type": "sum", "column": "x", "bounds": [0, 100], "by": ["grp"], "keys": k, "missing": 10},
          {"name": "q", "type": "quantile", "column": "x", "bounds": [0, 100], "granularity": 10, "by": ["grp"],
           "keys": k, "missing": "drop"}]
    sp = {"data": {"source": str(path), "privacy_unit": "id", "max_rows_per_unit": 2, "delimiter": ";",
                   "null_string": "NULL", "header": False, "columns": ["id", "grp", "x"]},
          "privacy": {"budget": {"rho": 1.0}}, "query": qs}
    plan = make_plan(parse_spec(sp))
    with DuckDBEngine(plan.spec.data) as eng:
        assert eng.columns()["x"].numeric and eng.missing_count("x") == 231
        a = eng.aggregate(plan, salt=3)
    with SparkEngine(plan.spec.data) as eng:
        assert eng.columns()["x"].numeric and eng.missing_count("x") == 231
        b = eng.aggregate(plan, salt=3)
    for q in a:
        for v in a[q]:
            assert np.array_equal(a[q][v], b[q][v]), (q, v)
    assert a["q"]["count"].sum() < a["s"]["count"].sum()  # the NULLs dropped there, replaced here
