"""Releases end to end on DuckDB: bounds enforced in SQL, coverage, ledger, crashes, bad input."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from typer.testing import CliRunner

from _peers import need

duckdb = need("duckdb")

import renyi  # noqa: E402
from renyi import Accountant, BudgetExceededError  # noqa: E402
from renyi.cli import app  # noqa: E402
from renyi.release import SpecError, add_noise, make_plan, parse_spec  # noqa: E402
from renyi.release.duckdb import DuckDBEngine  # noqa: E402
from renyi.release.noise import measured  # noqa: E402

GROUPS = [f"g{i:03d}" for i in range(200)]


def make_table(path: Path, n: int, *, units: int, seed: int = 0, extra: dict | None = None) -> dict:
    """A table of n rows: id, grp (200 groups), x (some values outside [0, 100], some NULL)."""
    rng = np.random.default_rng(seed)
    cols = {
        "id": rng.integers(0, units, n),
        "grp": np.array(GROUPS, dtype=object)[rng.integers(0, 190, n)],  # g190..g199 never occur
        "x": rng.normal(50, 40, n).round(2),
    }
    if extra:
        cols = {k: np.concatenate([cols[k], np.asarray(extra[k], dtype=cols[k].dtype)]) for k in cols}
    con = duckdb.connect()
    con.register("t", cols)
    fmt = "FORMAT PARQUET" if path.suffix == ".parquet" else "FORMAT CSV, HEADER"
    con.execute(f"COPY (SELECT id, grp, CASE WHEN x < -90 THEN NULL ELSE x END AS x FROM t) TO '{path}' ({fmt})")
    con.close()
    return cols


def spec(path: Path, tmp: Path, *, m: int = 1000, rho: float = 1.0, queries=None, **priv) -> dict:
    qs = queries or [
        {"name": "counts", "type": "count", "by": ["grp"], "keys": {"grp": GROUPS}, "weight": 1},
        {"name": "sums", "type": "sum", "column": "x", "bounds": [0, 100], "by": ["grp"], "keys": {"grp": GROUPS},
         "weight": 1, "granularity": 0.5, "missing": "drop"},
        {"name": "means", "type": "mean", "column": "x", "bounds": [0, 100], "by": ["grp"],
         "keys": {"grp": GROUPS}, "weight": 1, "missing": "drop"},
    ]
    return {"data": {"source": str(path), "privacy_unit": "id", "max_rows_per_unit": m},
            "privacy": {"budget": {"rho": rho}, **priv}, "query": qs}


@pytest.fixture(scope="module")
def big(tmp_path_factory) -> tuple[Path, dict]:
    """10⁶ rows, 200 000 individuals (≤ ~20 rows each), as Parquet."""
    d = tmp_path_factory.mktemp("big")
    p = d / "people.parquet"
    return p, make_table(p, 1_000_000, units=200_000)


def exact(cols: dict, *, bounds=(0.0, 100.0), gran=0.5):
    """Independent truth (numpy), when no contribution bound binds."""
    idx = {g: i for i, g in enumerate(GROUPS)}
    gi = np.array([idx[g] for g in cols["grp"]])
    x = cols["x"]
    ok = ~(x < -90)  # NULLs in the file
    n = np.bincount(gi, minlength=len(GROUPS))
    v = np.floor(np.clip(x, *bounds) / gran + 0.5)  # SQL round(): half away from zero (v ≥ 0 here)
    s = np.bincount(gi[ok], weights=v[ok], minlength=len(GROUPS)).astype(np.int64)
    c = np.bincount(gi[ok], minlength=len(GROUPS))
    return n, s, c


def test_end_to_end_counts_cover_at_the_stated_rate(big, tmp_path):
    """10⁶ rows: the engine's aggregates equal an independent computation, and over repeated
    noise draws the 95 % intervals cover the exact counts at the exact coverage (a binomial
    test that fails if the intervals were too narrow)."""
    path, cols = big
    plan = make_plan(parse_spec(spec(path, tmp_path, m=1000)))
    with DuckDBEngine(plan.spec.data) as eng:
        agg = eng.aggregate(plan, salt=1)
    n, s, c = exact(cols)
    assert np.array_equal(agg["counts"]["count"], n)
    assert np.array_equal(agg["sums"]["sum"], s)  # clamping and rounding as planned
    assert np.array_equal(agg["means"]["count"], c)
    assert np.all(n[190:] == 0)  # keys absent from the data are zeros (released as noisy zeros)

    rng = np.random.default_rng(7)
    reps = 40
    hits = 0
    for _ in range(reps):
        (cnt, *_rest) = add_noise(plan, agg, rng)
        hits += int(np.sum((cnt.lower <= n) & (n <= cnt.upper)))
    m = plan.measurements[0]
    s2 = float(m.mechanism.sigma) ** 2
    z = np.arange(-50 * int(math.sqrt(s2) + 1), 50 * int(math.sqrt(s2) + 1) + 1)
    w = np.exp(-z * z / (2 * s2))
    p = w[np.abs(z) <= m.half_width].sum() / w.sum()
    assert p >= 0.95
    trials = reps * len(GROUPS)
    assert stats.binomtest(hits, trials, p).pvalue > 1e-4, (hits / trials, p)


def test_sums_respect_clamping_and_means_stay_in_bounds(tmp_path):
    """Released sums are the clamped sums plus noise; means and intervals lie in the bounds."""
    path = tmp_path / "t.csv"
    cols = make_table(path, 20_000, units=20_000, seed=3)
    assert np.bincount(cols["id"]).max() <= 10  # the row bound does not bind: the truth is `exact`
    qs = [dict(q, bounds=[0, 50]) if "bounds" in q else q for q in spec(path, tmp_path)["query"]]
    r = renyi.release(spec(path, tmp_path, m=10, rho=50.0, queries=qs), out=tmp_path / "out",
                      rng=np.random.default_rng(0))
    _, s, _ = exact(cols, bounds=(0.0, 50.0))
    sums = r.results[1]
    hw = r.plan.queries[1].half_width
    assert np.all(np.abs(sums.value - s * 0.5) <= 6 * hw)
    unclamped = np.bincount([GROUPS.index(g) for g in cols["grp"]], weights=np.nan_to_num(cols["x"]),
                            minlength=200)
    assert np.max(np.abs(sums.value - unclamped)) > 6 * hw  # clamping changed the sums: the test can fail
    means = r.results[2]
    assert np.all((0 <= means.lower) & (means.lower <= means.value) & (means.value <= means.upper)
                  & (means.upper <= 50))


@pytest.mark.parametrize("bounds", [{}, {"max_groups_per_unit": 2, "max_rows_per_group": 1}])
def test_an_over_contributing_individual_moves_nothing_beyond_the_sensitivity(tmp_path, bounds):
    """Adding one individual with 60 rows over 30 groups changes the released vectors (same
    salt, same noise) by at most the derived ℓ₁/ℓ₂ sensitivities; other individuals' rows
    are untouched."""
    base = tmp_path / "base.parquet"
    more = tmp_path / "more.parquet"
    extra = {"id": [10**9] * 60, "grp": [GROUPS[i % 30] for i in range(60)], "x": [1000.0] * 60}
    make_table(base, 30_000, units=3_000, seed=5)
    make_table(more, 30_000, units=3_000, seed=5, extra=extra)
    qs = [dict(q, **bounds) for q in spec(base, tmp_path)["query"]] + [
        dict(name="var", type="variance", column="x", bounds=[0, 100], granularity=0.5, by=["grp"],
             keys={"grp": GROUPS}, **bounds),
        dict(name="distinct", type="count_distinct", column="x", by=["grp"], keys={"grp": GROUPS}, **bounds),
        dict(name="hist", type="histogram", column="x", bins=[0, 25, 50, 75, 100], by=["grp"],
             keys={"grp": GROUPS}, **bounds)]
    out = {}
    for name, path in (("base", base), ("more", more)):
        sp = parse_spec(spec(path, tmp_path, m=4, queries=qs))
        plan = make_plan(sp)
        with DuckDBEngine(sp.data) as eng:
            agg = eng.aggregate(plan, salt=12345)
        out[name] = (plan, agg, add_noise(plan, agg, np.random.default_rng(1)))
    plan = out["base"][0]
    for qp in plan.queries:
        for m in qp.measurements:
            d = (measured(m, out["more"][1][qp.query.name], qp)
                 - measured(m, out["base"][1][qp.query.name], qp))
            assert np.abs(d).sum() <= m.sensitivity.l1
            assert math.sqrt(float(np.sum(d.astype(float) ** 2))) <= m.sensitivity.l2 + 1e-9
            assert np.abs(d).sum() > 0  # the individual was counted (so the bound is exercised)
    for a, b, qp in zip(out["base"][2], out["more"][2], plan.queries):
        if qp.query.type == "count":
            assert np.max(np.abs(b.value - a.value)) <= qp.measurements[0].sensitivity.l1
        if qp.query.type == "sum":
            assert np.max(np.abs(b.value - a.value)) <= qp.measurements[0].sensitivity.l1 * 0.5


def test_ledger_equals_report_and_a_second_release_over_budget_writes_nothing(tmp_path):
    """The ledger's spend is the report's ρ; a release that would exceed the ledger's budget
    is refused: no file, no ledger entry."""
    path = tmp_path / "t.parquet"
    make_table(path, 5_000, units=1_000)
    ledger = tmp_path / "l.db"
    r = renyi.release(spec(path, tmp_path, m=3, ledger=str(ledger)), out=tmp_path / "a")
    assert sorted(os.listdir(tmp_path / "a")) == ["counts.csv", "means.csv", "release.json", "report.json",
                                                  "sums.csv"]
    with Accountant(ledger=str(ledger)) as acct:
        assert len(acct.history) == 1
        assert acct.spent.to_zcdp().rho == pytest.approx(r.report.rho, rel=1e-12)
        assert r.report.rho <= 1.0
    man = json.loads((tmp_path / "a" / "release.json").read_text())
    assert man["ledger_spend_id"] == 1 and man["release_id"] in r.spend.label
    with pytest.raises(BudgetExceededError):
        renyi.release(spec(path, tmp_path, m=3, ledger=str(ledger)), out=tmp_path / "b")
    assert not (tmp_path / "b").exists()
    with Accountant(ledger=str(ledger)) as acct:
        assert len(acct.history) == 1


_CRASH = """
import os, signal, sys, numpy as np, renyi
stage = sys.argv[1]
def hook(s):
    if s == stage:
        os.kill(os.getpid(), signal.SIGKILL)
renyi.release(sys.argv[3], out=sys.argv[4], hook=hook)
"""


@pytest.mark.parametrize("stage", ["spent", "before rename",
                                   pytest.param("aggregating", marks=pytest.mark.slow),
                                   pytest.param("file written", marks=pytest.mark.slow),
                                   pytest.param("done", marks=pytest.mark.slow)])
def test_a_kill_leaves_no_or_complete_output_and_a_ledger_that_reopens(tmp_path, stage):
    """Killed (SIGKILL) at any stage: the output directory is absent or complete, the ledger
    reopens, and it holds the spend iff the kill came after it."""
    path = tmp_path / "t.parquet"
    make_table(path, 5_000, units=1_000)
    sp = spec(path, tmp_path, m=3, ledger=str(tmp_path / "l.db"))
    (tmp_path / "spec.json").write_text(json.dumps(sp))
    out = tmp_path / "out"
    p = subprocess.run([sys.executable, "-c", _CRASH, stage, "kill", str(tmp_path / "spec.json"), str(out)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode != 0
    if out.exists():
        assert stage == "done"
        assert sorted(os.listdir(out)) == ["counts.csv", "means.csv", "release.json", "report.json", "sums.csv"]
        assert len((out / "counts.csv").read_text().splitlines()) == 201
    else:
        assert stage != "done"
    with Accountant(ledger=str(tmp_path / "l.db")) as acct:
        labels = [s.label for s in acct.history]
    assert len(labels) == (0 if stage == "aggregating" else 1)
    assert all(lb.startswith("release ") for lb in labels)


def test_a_failure_after_the_spend_is_recorded_and_writes_nothing(tmp_path):
    """An error while writing: no output directory, the spend stays, and the ledger records
    the failure (a zero-cost entry naming it)."""
    path = tmp_path / "t.parquet"
    make_table(path, 5_000, units=1_000)
    sp = spec(path, tmp_path, m=3, ledger=str(tmp_path / "l.db"))

    def hook(stage):
        if stage == "file written":
            raise RuntimeError("disk on fire")

    with pytest.raises(RuntimeError, match="disk on fire"):
        renyi.release(sp, out=tmp_path / "out", hook=hook)
    assert not (tmp_path / "out").exists()
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".out.tmp")]
    with Accountant(ledger=str(tmp_path / "l.db")) as acct:
        h = acct.history
    assert len(h) == 2 and h[0].guarantee.to_zcdp().rho > 0 and h[1].guarantee.to_zcdp().rho == 0
    assert "FAILED after its spend #1" in h[1].label and "disk on fire" in h[1].label


def _ledger_rows(path: Path) -> int:
    if not path.exists():
        return 0
    with Accountant(ledger=str(path)) as acct:
        return len(acct.history)


@pytest.mark.parametrize("case, words", [
    ("missing column", "column 'nope' is not in"),
    ("null unit", "has 1 NULL value(s)"),
    ("text sum", "must be numeric to be summed"),
    ("out not empty", "exists and is not empty"),
])
def test_bad_input_is_refused_before_anything_is_spent(tmp_path, case, words):
    """Problems found only with the table are still reported before the spend: nothing recorded."""
    path = tmp_path / "t.csv"
    make_table(path, 2_000, units=500)
    out = tmp_path / "out"
    qs = None
    if case == "missing column":
        qs = [{"name": "c", "type": "count", "by": ["nope"], "keys": {"nope": ["a"]}}]
    elif case == "text sum":
        qs = [{"name": "s", "type": "sum", "column": "grp", "bounds": [0, 1]}]
    elif case == "null unit":
        con = duckdb.connect()
        con.execute(f"COPY (SELECT * FROM read_csv('{path}') UNION ALL SELECT NULL, 'g000', 1.0) TO '{path}.2.csv' "
                    "(FORMAT CSV, HEADER)")
        con.close()
        path = Path(f"{path}.2.csv")
    elif case == "out not empty":
        out.mkdir()
        (out / "x").write_text("")
    ledger = tmp_path / "l.db"
    with pytest.raises(SpecError, match=words.replace("(", r"\(").replace(")", r"\)")):
        renyi.release(spec(path, tmp_path, queries=qs, ledger=str(ledger)), out=out)
    assert _ledger_rows(ledger) == 0


def test_dry_run_reads_no_row(tmp_path):
    """A dry run plans and reports without the table existing, and spends nothing."""
    sp = spec(tmp_path / "absent.parquet", tmp_path, ledger=str(tmp_path / "l.db"))
    r = renyi.release(sp, dry_run=True)
    assert r.dry_run and r.files == () and r.report.rho <= 1.0
    assert not (tmp_path / "l.db").exists()


def test_parquet_output_and_duckdb_source_with_discrete_laplace(tmp_path):
    """A DuckDB table in, Parquet files out, discrete Laplace noise: same columns as CSV."""
    db = tmp_path / "t.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE people AS SELECT i % 300 AS id, 'g00' || (i % 3)::VARCHAR AS grp, "
                "(i % 7)::DOUBLE AS x FROM range(3000) t(i)")
    con.close()
    sp = {"data": {"source": str(db), "table": "people", "privacy_unit": "id", "max_rows_per_unit": 10},
          "privacy": {"budget": {"epsilon": 2.0, "delta": 1e-8}, "noise": "discrete_laplace"},
          "output": {"format": "parquet"},
          "query": [{"name": "c", "type": "count", "by": ["grp"], "keys": {"grp": ["g000", "g001", "g002", "g009"]}}]}
    r = renyi.release(sp, out=tmp_path / "o")
    con = duckdb.connect()
    rows = con.execute(f"SELECT * FROM read_parquet('{tmp_path / 'o' / 'c.parquet'}')").fetchall()
    assert [c[0] for c in con.description] == ["grp", "value", "lower", "upper"]
    assert [x[0] for x in rows] == ["g000", "g001", "g002", "g009"]
    assert r.plan.measurements[0].noise_name == "discrete Laplace"
    assert all(lo <= v <= hi for _, v, lo, hi in rows)


def test_cli_release(tmp_path):
    """renyi release: dry run exits 0; a bad spec is one line and exit 2; over budget exit 1."""
    path = tmp_path / "t.csv"
    make_table(path, 2_000, units=500)
    sp = tmp_path / "spec.json"
    sp.write_text(json.dumps(spec(path, tmp_path, m=3, ledger=str(tmp_path / "l.db"))))
    runner = CliRunner()
    r = runner.invoke(app, ["release", str(sp), "--dry-run"])
    assert r.exit_code == 0, r.output
    assert "dry run: no row read" in r.output and "ℓ₂" in r.output
    r = runner.invoke(app, ["release", str(sp), "--out", str(tmp_path / "o"), "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["ledger_spend_id"] == 1
    r = runner.invoke(app, ["release", str(sp), "--out", str(tmp_path / "o2")])
    assert r.exit_code == 1 and "would exceed the budget" in r.output
    bad = json.loads(sp.read_text())
    bad["query"][0]["weight"] = 0
    sp.write_text(json.dumps(bad))
    r = runner.invoke(app, ["release", str(sp)])
    assert r.exit_code == 2
    assert r.output.strip().count("\n") == 0 and "weight must be in (0, inf); got 0" in r.output


def test_renyi_release_is_callable_and_a_package():
    """`renyi.release(spec)` runs a release; `renyi.release.make_plan` is still reachable."""
    assert callable(renyi.release) and renyi.release.make_plan is make_plan
    assert "release" in renyi.__all__


def test_sql_is_inspectable_and_salted(tmp_path):
    """The engine's statements are plain SQL; the salt enters the random row choice."""
    plan = make_plan(parse_spec(spec(tmp_path / "t.csv", tmp_path, m=2)))
    (tmp_path / "t.csv").write_text("id,grp,x\n1,g000,1\n")
    with DuckDBEngine(plan.spec.data) as eng:
        sql = eng.sql(plan, salt=99)
    assert len(sql) == 4 and "md5(concat_ws('|', '99', 'row'" in sql[0] and "PARTITION BY __renyi_unit" in sql[0]
    assert "__renyi_rn <= 2" in sql[0] and "hash(" not in " ".join(sql)  # the portable hash only


def test_shipped_example_runs(tmp_path):
    """examples/release: the generator script makes the table, and the spec releases from it."""
    ex = Path(__file__).resolve().parent.parent / "examples" / "release"
    subprocess.run([sys.executable, str(ex / "make_data.py"), "--rows", "3000", "--out", str(tmp_path)],
                   check=True, capture_output=True, timeout=120)
    (tmp_path / "spec.toml").write_text((ex / "spec.toml").read_text())
    r = renyi.release(tmp_path / "spec.toml", out=tmp_path / "out")
    assert r.plan.spec.rho == pytest.approx(0.0132426, rel=1e-5)
    assert [qp.measurements[0].sensitivity.l2 for qp in r.plan.queries] == [3.0, 1.0, 2250.0]  # the mean's sum is centred
    rows = (tmp_path / "out" / "records_by_county.csv").read_text().splitlines()
    assert rows[0] == "county,value,lower,upper" and len(rows) == 41  # C39, C40: noisy zeros
    assert (tmp_path / "releases.db").exists()


@pytest.mark.parametrize("m, units", [(3, 2_000), (65, 150)])  # with and without the top-m pre-cut
def test_row_bound_is_the_smallest_hashes_even_with_identical_rows(tmp_path, m, units):
    """The kept rows are each individual's m rows of smallest salted hash (what a row_number()
    window keeps), also when identical rows tie: never more than m rows per individual. The
    hash is the portable md5 of the salt and the row's text (a float x as ⌊x·10⁶⌋)."""
    from renyi.release.duckdb import kept_column, kept_sql

    rng = np.random.default_rng(11)
    n = 20_000
    cols = {"id": rng.integers(0, units, n), "grp": np.array(GROUPS[:5], dtype=object)[rng.integers(0, 5, n)],
            "x": rng.integers(0, 3, n).astype(float)}  # few distinct rows per individual: many ties
    con = duckdb.connect()
    con.register("t", cols)
    con.execute(f"COPY t TO '{tmp_path / 't.parquet'}' (FORMAT PARQUET)")
    con.close()
    plan = make_plan(parse_spec(spec(tmp_path / "t.parquet", tmp_path, m=m)))
    with DuckDBEngine(plan.spec.data) as eng:
        eng._con.execute(kept_sql(plan, 77, eng.floating()))
        per_unit = eng._con.execute("SELECT max(c) FROM (SELECT count(*) c FROM __renyi_kept GROUP BY __renyi_unit)")
        assert per_unit.fetchone()[0] == m
        grp, x = kept_column(plan, "grp"), kept_column(plan, "x")
        got = eng._con.execute(f"SELECT {grp}, count(*), sum({x}) FROM __renyi_kept GROUP BY {grp} ORDER BY {grp}"
                               ).fetchall()
        ref = eng._con.execute(
            f"SELECT grp, count(*), sum(x) FROM (SELECT *, row_number() OVER (PARTITION BY id ORDER BY "
            "md5(concat_ws('|', '77', 'row', CAST(id AS VARCHAR), CAST(grp AS VARCHAR), "
            "CAST(CAST(floor(x * 1e6) AS BIGINT) AS VARCHAR))), grp, x) AS rn "
            f"FROM read_parquet('{tmp_path / 't.parquet'}')) WHERE rn <= {m} GROUP BY grp ORDER BY grp").fetchall()
    assert got == ref


# ----- data column names never meet the engine's own ----------------------------------------------
@pytest.mark.parametrize("name", ["__renyi_rn", "__renyi_h", "__renyi_n", "__renyi_hs", "__RENYI_RN", "__renyi_c0",
                                  "__renyi_unit", "__renyi_kept", "idx", "v", "gr", "rr", "k0", "n", "s"])
def test_a_column_named_like_an_internal_one_changes_nothing(tmp_path, name):
    """A data column may have any name: 50 people × 20 rows with max_rows_per_unit = 1 sum to
    50, counted or summed, whatever the column is called (a column named ``__renyi_rn`` once
    replaced the row number and released 1000; one named ``__renyi_unit`` grouped by the unit)."""
    ids = np.repeat(np.arange(50), 20)
    con = duckdb.connect()
    con.register("t", {"id": ids, "w": np.ones(1000), "g": (np.arange(1000) % 3).astype(np.int64)})
    con.execute(f'COPY (SELECT id, w AS "{name}", g AS "{name}_g" FROM t) TO \'{tmp_path / "t.csv"}\' (FORMAT CSV, HEADER)')
    con.close()
    s = {"data": {"source": str(tmp_path / "t.csv"), "privacy_unit": "id", "max_rows_per_unit": 1},
         "privacy": {"budget": {"rho": 1.0}},
         "query": [{"name": "s", "type": "sum", "column": name, "bounds": [0, 1]},
                   {"name": "c", "type": "count", "by": [f"{name}_g"], "keys": {f"{name}_g": ["0", "1", "2"]}}]}
    plan = make_plan(parse_spec(s))
    with DuckDBEngine(plan.spec.data) as eng:
        agg = eng.aggregate(plan, 5)
    assert agg["s"]["sum"].tolist() == [50] and agg["s"]["count"].tolist() == [50]
    assert agg["c"]["count"].sum() == 50

    # and with 20 rows each kept, a column named like the unit's alias groups by itself
    s["data"]["max_rows_per_unit"] = 20
    plan = make_plan(parse_spec(s))
    with DuckDBEngine(plan.spec.data) as eng:
        agg = eng.aggregate(plan, 5)
    assert agg["s"]["sum"].tolist() == [1000]
    assert agg["c"]["count"].tolist() == [334, 333, 333]


@pytest.mark.parametrize("query, words", [
    ({"type": "count", "by": ["ID"], "keys": {"ID": ["1"]}}, "privacy unit"),
    ({"type": "sum", "column": "Id", "bounds": [0, 1]}, "privacy unit"),
    ({"type": "count", "by": ["g", "G"], "keys": {"g": ["1"], "G": ["1"]}}, "twice"),
    ({"type": "count", "by": ["Value"], "keys": {"Value": ["1"]}}, "output column"),
    ({"type": "count", "by": ["lower"], "keys": {"lower": ["1"]}}, "output column"),
])
def test_names_equal_up_to_case_are_one_column(tmp_path, query, words):
    """SQL matches column names without regard to case: grouping by "ID" is grouping by the
    unit id, and a group column named like an output column would overwrite it."""
    s = {"data": {"source": str(tmp_path / "t.csv"), "privacy_unit": "id"}, "privacy": {"budget": {"rho": 1.0}},
         "query": [{"name": "q", **query}]}
    with pytest.raises(SpecError, match=words):
        parse_spec(s)


# ----- paths that failed after the spend are refused before it ----------------------------------
@pytest.mark.parametrize("case, words", [
    ("out is a symlink", "symbolic link"),
    ("ledger inside out", "inside the output directory"),
    ("name over 255 bytes", "too long for a file name"),
    ("noise beyond int64", "too large to release as 64-bit integers"),
    ("source glob", "pattern of several files"),
    ("another release holds out", "another release is writing"),
])
def test_paths_that_failed_after_the_spend_are_refused_before_it(tmp_path, case, words):
    """Each of these passed the pre-spend checks, was spent, and then failed while writing."""
    path = tmp_path / "t.csv"
    make_table(path, 500, units=100)
    out = tmp_path / "out"
    ledger = tmp_path / "l.db"
    qs, rho = None, 1.0
    if case == "out is a symlink":
        (tmp_path / "real").mkdir()
        os.symlink(tmp_path / "real", out)
    elif case == "ledger inside out":
        out.mkdir()
        ledger = out / "l.db"
    elif case == "name over 255 bytes":
        qs = [{"name": "é" * 130, "type": "count"}]
    elif case == "noise beyond int64":
        qs = [{"name": "s", "type": "sum", "column": "x", "bounds": [0, 1e12]}]
        rho = 1e-12
    elif case == "source glob":
        path = tmp_path / "*.csv"
        path.write_text("id,x\n1,2\n")
    kw = {"ledger": str(ledger)}
    sp = spec(path, tmp_path, queries=qs, rho=rho, **kw)
    if case == "another release holds out":
        import fcntl

        fd = os.open(tmp_path / ".out.renyi-lock", os.O_RDWR | os.O_CREAT)
        fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        with pytest.raises(SpecError, match=words):
            renyi.release(sp, out=out)
    finally:
        if case == "another release holds out":
            os.close(fd)
    assert _ledger_rows(ledger) == 0
    assert not [n for n in os.listdir(tmp_path) if ".tmp-" in n]


def test_stale_temporaries_of_killed_releases_are_removed(tmp_path):
    """A release killed while writing leaves .out.tmp-*; the next release into out removes it."""
    path = tmp_path / "t.csv"
    make_table(path, 500, units=100)
    stale = tmp_path / ".out.tmp-abc123"
    stale.mkdir()
    (stale / "counts.csv").write_text("partial")
    other = tmp_path / ".other.tmp-abc123"  # another output's: left alone
    other.mkdir()
    renyi.release(spec(path, tmp_path, m=3), out=tmp_path / "out", rng=np.random.default_rng(0))
    assert not stale.exists() and other.exists()
    assert (tmp_path / "out" / "counts.csv").exists()
    assert not (tmp_path / ".out.renyi-lock").exists()


def test_a_duckdb_file_cannot_read_other_files(tmp_path):
    """A supplied DuckDB file's views run with file access off: a view reading any file fails
    (before the spend), the table itself is read."""
    secret = tmp_path / "secret.csv"
    secret.write_text("id,x\n1,42\n")
    db = tmp_path / "d.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE t AS SELECT range % 50 AS id, 1.0 AS x FROM range(200)")
    con.execute(f"CREATE VIEW leak AS SELECT * FROM read_csv('{secret}')")
    con.close()
    q = [{"name": "s", "type": "sum", "column": "x", "bounds": [0, 100]}]
    base = {"privacy_unit": "id", "format": "duckdb", "max_rows_per_unit": 10}
    ok = {"data": {"source": str(db), "table": "t", **base}, "privacy": {"budget": {"rho": 1.0}}, "query": q}
    plan = make_plan(parse_spec(ok))
    with DuckDBEngine(plan.spec.data) as eng:
        assert eng.aggregate(plan, 1)["s"]["sum"].tolist() == [200]
    bad = {"data": {"source": str(db), "table": "leak", **base}, "privacy": {"budget": {"rho": 1.0}}, "query": q}
    plan = make_plan(parse_spec(bad))
    with pytest.raises(SpecError) as info:
        with DuckDBEngine(plan.spec.data) as eng:
            eng.columns()
            eng.aggregate(plan, 1)
    assert "42" not in str(info.value)


def test_data_values_never_appear_in_errors(tmp_path):
    """A value that breaks the CSV's sniffed type fails the release before the spend with a
    SpecError whose message holds no data (DuckDB quotes the value and the whole line)."""
    rows = ["id,x"] + [f"{i},{i}" for i in range(30_000)] + ["7,alice-secret-1979"]  # past the sniffed sample
    (tmp_path / "t.csv").write_text("\n".join(rows) + "\n")
    q = [{"name": "s", "type": "sum", "column": "x", "bounds": [0, 10]}]
    sp = spec(tmp_path / "t.csv", tmp_path, queries=q, ledger=str(tmp_path / "l.db"))
    with pytest.raises(SpecError) as info:
        renyi.release(sp, out=tmp_path / "out")
    assert "alice" not in str(info.value) and info.value.__cause__ is None
    assert _ledger_rows(tmp_path / "l.db") == 0


def test_new_query_types_end_to_end_with_targets_post_and_public_truncation(tmp_path):
    """variance, std, count_distinct, histogram, a target and post-processing through the
    whole release: files (with the histogram's bin column and a consistent query's levels),
    release.json (the centring derivation, what the intervals cover), report.json (the same,
    plus the truncation effect measured on a public table) and the CLI's dry run."""
    path = tmp_path / "t.parquet"
    cols = make_table(path, 20_000, units=2_000, seed=8)
    pub = tmp_path / "public.csv"
    make_table(pub, 5_000, units=500, seed=9)
    k = {"grp": GROUPS}
    qs = [
        {"name": "var", "type": "variance", "column": "x", "bounds": [0, 100], "by": ["grp"], "keys": k, "missing": "drop"},
        {"name": "sd", "type": "std", "column": "x", "bounds": [0, 100], "by": ["grp"], "keys": k, "missing": "drop"},
        {"name": "mean", "type": "mean", "column": "x", "bounds": [0, 100], "by": ["grp"], "keys": k, "missing": "drop"},
        {"name": "distinct", "type": "count_distinct", "column": "x", "by": ["grp"], "keys": k,
         "max_distinct_per_unit": 2},
        {"name": "hist", "type": "histogram", "column": "x", "bins": [0, 50, 100], "by": ["grp"], "keys": k, "missing": "drop",
         "post": ["non_negative"]},
        {"name": "counts", "type": "count", "by": ["grp"], "keys": k, "target": {"half_width": 40}},
        {"name": "levels", "type": "count", "by": ["grp"], "keys": k, "post": ["consistent"]},
    ]
    sp = spec(path, tmp_path, m=5, rho=2.0, queries=qs)
    sp["data"]["public"] = str(pub)
    runner = CliRunner()
    (tmp_path / "s.json").write_text(json.dumps(sp))
    res = runner.invoke(app, ["release", str(tmp_path / "s.json"), "--dry-run"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert "target counts: ±40 at 0.95" in res.output and "truncation effect" in res.output
    r = renyi.release(sp, out=tmp_path / "out", rng=np.random.default_rng(0))
    names = sorted(os.path.basename(f) for f in r.files)
    assert "levels.total.csv" in names and "hist.csv" in names and "levels.csv" in names
    hist = (tmp_path / "out" / "hist.csv").read_text().splitlines()
    assert hist[0] == "grp,bin,value,lower,upper" and len(hist) == 1 + 2 * len(GROUPS)
    man = json.loads((tmp_path / "out" / "release.json").read_text())
    mq = {q["name"]: q for q in man["queries"]}
    assert "centred" in mq["mean"]["measurements"][0]["centring"] and mq["mean"]["measurements"][0]["centre"] == 50
    assert mq["levels"]["interval"].startswith("a bound after the least-squares projection")
    assert "noise only" in mq["counts"]["interval"] and mq["counts"]["target"] == {"half_width": 40, "coverage": 0.95}
    rep = json.loads((tmp_path / "out" / "report.json").read_text())
    assert "noise only" in rep["intervals"]["cover"]
    te = rep["intervals"]["truncation_effect"]["queries"]
    assert set(te) == {q["name"] for q in qs}
    assert te["counts"]["total_relative_change"] < 0  # ≤ 5 of ~10 rows per person kept: counts drop
    res = {x.name: x for x in r.results}
    v, s_ = res["var"], res["sd"]
    assert np.all((0 <= v.lower) & (v.lower <= v.value) & (v.value <= v.upper) & (v.upper <= 2500))
    assert np.all(s_.upper <= 50)
    assert np.all(res["hist"].value >= 0)
    assert r.plan.queries[5].half_width <= 40
    del cols


def test_kept_rows_built_in_buckets_are_the_same(tmp_path, monkeypatch):
    """Issue 27 (memory): a large table's kept rows are built bucket by bucket of the privacy
    unit; every individual's rows are in one bucket, so the aggregates are identical."""
    import renyi.release.duckdb as rd

    path = tmp_path / "t.parquet"
    make_table(path, 20_000, units=3_000)
    plan = make_plan(parse_spec(spec(path, tmp_path, m=3)))
    with DuckDBEngine(plan.spec.data) as eng:
        assert eng.buckets() == 1
        one = eng.aggregate(plan, 11)
    monkeypatch.setattr(rd, "ROWS_PER_BUCKET", 3_000)
    with DuckDBEngine(plan.spec.data) as eng:
        assert eng.buckets() == 7
        many = eng.aggregate(plan, 11)
    for q in one:
        for v in one[q]:
            assert np.array_equal(one[q][v], many[q][v]), (q, v)
    assert one["counts"]["count"].sum() < 20_000  # the bound binds


@pytest.mark.parametrize("m", [1, 3, 5])
def test_kept_rows_equal_one_window_over_every_row(tmp_path, m):
    """Issue 27 (time): DuckDB's kept rows (no window for individuals with ≤ m rows, a top-m cut
    only for those with > 4m rows, the window for the rest) are exactly the rows of the plain
    formulation, one row_number() window over every row ordered by the salted hash then the
    values (Spark's). Individuals of every size from 1 to 60 rows, duplicate rows, and values
    whose hash text ties (floats equal to 10⁻⁶)."""
    import dataclasses

    import duckdb

    from renyi.release.sql import DUCKDB, kept_select

    rng = np.random.default_rng(m)
    units, grp, x = [], [], []
    for u in range(400):
        n = int(rng.choice([1, 2, m, m + 1, 2 * m, 4 * m, 4 * m + 1, 60]))
        for _ in range(n):
            units.append(u)
            grp.append(str(rng.choice(["a", "b", "c"])))
            x.append(float(rng.choice([1.0, 1.0 + 1e-9, 2.5, 7.0])))  # 1.0 and 1 + 1e-9 hash alike
        if n > 1:  # an exact duplicate row
            units.append(u), grp.append(grp[-1]), x.append(x[-1])
    path = tmp_path / "t.parquet"
    con = duckdb.connect()
    con.register("t", {"id": np.array(units), "grp": np.array(grp, dtype=object), "x": np.array(x)})
    con.execute(f"COPY t TO '{path}' (FORMAT PARQUET)")
    qs = [{"name": "s", "type": "sum", "column": "x", "bounds": [0, 10], "by": ["grp"],
           "keys": {"grp": ["a", "b", "c"]}}]
    plan = make_plan(parse_spec(spec(path, tmp_path, m=m, queries=qs)))
    src = f"read_parquet('{path}')"
    got = kept_select(plan, 99, src, DUCKDB, {"x"})
    want = kept_select(plan, 99, src, dataclasses.replace(DUCKDB, topk=False), {"x"})
    assert "min(__renyi_h" in got and "min(__renyi_h" not in want
    a = con.execute(f"SELECT * FROM ({got}) ORDER BY ALL").fetchall()
    b = con.execute(f"SELECT * FROM ({want}) ORDER BY ALL").fetchall()
    assert a == b and len(a) < len(units)
