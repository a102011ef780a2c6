"""Issue 27: quantiles by group over a public candidate grid (the exponential mechanism) with
intervals. Plan-level: the score's sensitivity exhaustively, the mechanism's bounded range
exactly, the zCDP cost, and the intervals' coverage by simulation (an invalid variant fails)."""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pytest
from scipy import stats

from renyi.release import SpecError, make_plan, parse_spec
from renyi.release.noise import quantile_scores, release_quantiles


def _spec(*queries, rho=0.5, m=1, **data):
    return {"data": {"source": "t.csv", "privacy_unit": "id", "max_rows_per_unit": m, **data},
            "privacy": {"budget": {"rho": rho}}, "query": list(queries)}


def _q(**kw):
    q = {"name": "med", "type": "quantile", "column": "x", "bounds": [0, 20], "granularity": 1,
         "by": ["g"], "keys": {"g": ["a", "b", "c", "d", "e"]}}
    q.update(kw)
    return q


def _lr(values, k):
    h = np.bincount(np.asarray(values, dtype=np.int64), minlength=k).astype(float)
    r = np.cumsum(h)
    return r - h, r


# ----------------------------------------------------------------------------- the score
@pytest.mark.parametrize("q", [0.1, 0.5, 0.75, 0.99])
def test_score_moves_by_at_most_max_q_1mq_per_row(q):
    """Exhaustive over small data sets on a grid of 6 values and every added row (and the padded
    variants the interval ends use): |Δu(c)| ≤ max(q, 1 − q) for every candidate."""
    k = 6
    bound = max(q, 1 - q) + 1e-12
    worst = 0.0
    for n in range(0, 5):
        for data in itertools.combinations_with_replacement(range(k), n):
            lo, up = _lr(data, k)
            for x in range(k):
                lo2, up2 = _lr((*data, x), k)
                for s, shift in ((0.0, 0.0), (2.5, 0.0), (2.5, 5.0)):
                    pad_lo = np.where(np.arange(k) > 0, s, 0.0)
                    pad_up = np.where(np.arange(k) == k - 1, 2 * s, s)
                    u1 = quantile_scores((lo + pad_lo)[None], (up + pad_up)[None], np.array([q * n + shift]))
                    u2 = quantile_scores((lo2 + pad_lo)[None], (up2 + pad_up)[None], np.array([q * (n + 1) + shift]))
                    worst = max(worst, float(np.max(np.abs(u1 - u2))))
    assert worst <= bound
    assert worst >= max(q, 1 - q) - 1e-9  # the bound is attained: the derivation is tight


def test_score_is_zero_exactly_at_the_quantiles():
    lo, up = _lr([1, 1, 3, 7], 10)
    u = quantile_scores(lo[None], up[None], np.array([2.0]))[0]  # median of 4 values: rank 2
    assert set(np.flatnonzero(u == 0.0)) == {1, 2, 3}  # x(2) = 1 through x(3) = 3


@pytest.mark.parametrize("q, r", [(0.5, 1), (0.9, 3)])
def test_exponential_mechanism_is_epsilon_bounded_range_on_neighbours(q, r):
    """The exact output distributions of the plan's mechanism on random neighbouring groups
    (one person adds up to r rows): every log ratio lies in an interval of length ≤ ε (the
    bounded range behind ρ = ε²/8, [CR21] §3)."""
    p = make_plan(parse_spec(_spec(_q(quantiles=[q], max_rows_per_group=r), m=r)))
    rng = np.random.default_rng(5)
    k = 21
    for m in p.queries[0].measurements:
        eps = m.mechanism.bounded_range
        assert m.runs * eps * eps / 8 <= m.rho * (1 + 1e-9)
        eta = m.mechanism.eta
        for _ in range(200):
            n = int(rng.integers(0, 12))
            data = rng.integers(0, k, n)
            extra = rng.integers(0, k, int(rng.integers(1, r + 1)))
            logp = []
            for d in (data, np.concatenate([data, extra])):
                lo, up = _lr(d, k)
                s = m.slack
                if m.kind != "quantile":
                    lo = lo + np.where(np.arange(k) > 0, s, 0.0)
                    up = up + np.where(np.arange(k) == k - 1, 2 * s, s)
                t = q * len(d) + (2 * s if m.kind == "quantile_upper" else 0.0)
                u = eta * quantile_scores(lo[None], up[None], np.array([t]))[0]
                logp.append(u - np.logaddexp.reduce(u))
            diff = logp[0] - logp[1]
            assert diff.max() - diff.min() <= eps * (1 + 1e-9)


def test_quantile_costs_and_budget_split():
    p = make_plan(parse_spec(_spec(_q(quantiles=[0.25, 0.5, 0.75]), rho=0.3)))
    qp = p.queries[0]
    assert len(qp.measurements) == 9
    assert p.rho <= 0.3
    assert p.rho == pytest.approx(0.3, rel=1e-6)
    pt = [m for m in qp.measurements if m.kind == "quantile"]
    assert all(m.achieved_rho == pytest.approx(0.3 / 3 / 2, rel=1e-8) for m in pt)
    # the zCDP cost of each: ε²/8 of its bounded range ([CR21]), checked against the guarantee
    for m in qp.measurements:
        assert m.achieved_rho == pytest.approx(m.mechanism.bounded_range ** 2 / 8 * m.runs, rel=1e-12)


# ----------------------------------------------------------------------------- intervals
def _true_quantile_range(values, q, k):
    lo, up = _lr(values, k)
    n = len(values)
    ok = np.flatnonzero((lo <= q * n) & (q * n <= up))
    return ok.min(), ok.max()  # every q-quantile on the grid


def _coverage(p, groups, reps, rng):
    qp = p.queries[0]
    q = qp.query
    k = len(q.candidates)
    h = np.stack([np.bincount(np.asarray(g, dtype=np.int64), minlength=k) for g in groups])
    hits = np.zeros((len(groups), len(q.quantiles)))
    for _ in range(reps):
        r = release_quantiles(qp, {"count": h.reshape(-1)}, rng)
        lo = r.lower.reshape(len(groups), -1)
        up = r.upper.reshape(len(groups), -1)
        val = r.value.reshape(len(groups), -1)
        assert np.all(lo <= val) and np.all(val <= up)
        for i, g in enumerate(groups):
            for j, qq in enumerate(q.quantiles):
                a, b = _true_quantile_range(g, qq, k)
                hits[i, j] += (lo[i, j] <= q.candidates[a]) and (up[i, j] >= q.candidates[b])
    return hits / reps


def _groups(rng):
    return [np.array([], dtype=np.int64), np.array([7]), rng.integers(0, 21, 5),
            np.concatenate([np.full(30, 2), np.full(30, 15)]),  # an atom-and-gap group
            np.clip(np.round(rng.normal(10, 3, 400)), 0, 20).astype(np.int64)]


def test_quantile_intervals_cover_at_the_stated_rate():
    """Groups of 0, 1, 5, 60 (two atoms, a gap) and 400 rows; 0.1/0.5/0.9: every interval contains
    every q-quantile in ≥ 95 % of 300 runs (exact binomial test at 1 %)."""
    rng = np.random.default_rng(11)
    p = make_plan(parse_spec(_spec(_q(quantiles=[0.1, 0.5, 0.9]), rho=0.2)))
    cov = _coverage(p, _groups(rng), 300, rng)
    reps = 300
    for c in cov.reshape(-1):
        assert stats.binomtest(int(round(c * reps)), reps, 0.95, alternative="less").pvalue > 0.01, cov


def test_interval_without_padding_fails_on_small_groups():
    """The padding is what makes the ends valid at every n: without it (slack 0) the interval
    of a one-row group misses its quantile far more often than 5 %; the same test fails."""
    rng = np.random.default_rng(12)
    p = make_plan(parse_spec(_spec(_q(quantiles=[0.5], keys={"g": ["a"]}), rho=0.2)))
    qp = p.queries[0]
    assert _coverage(p, [np.array([3])], 300, rng)[0, 0] >= 0.95
    broken = dataclasses.replace(qp, measurements=tuple(dataclasses.replace(m, slack=0.0) for m in qp.measurements))
    p2 = dataclasses.replace(p, queries=(broken,))
    cov = _coverage(p2, [np.array([3])], 300, rng)
    assert cov[0, 0] < 0.9


def test_point_estimate_is_accurate_with_enough_data():
    rng = np.random.default_rng(13)
    p = make_plan(parse_spec(_spec(_q(quantiles=[0.5], bounds=[0, 1000], granularity=1), rho=1.0)))
    qp = p.queries[0]
    k = len(qp.query.candidates)
    data = [np.clip(np.round(rng.normal(400, 100, 5000)), 0, 1000).astype(np.int64) for _ in range(5)]
    h = np.stack([np.bincount(d, minlength=k) for d in data])
    r = release_quantiles(qp, {"count": h.reshape(-1)}, rng)
    assert np.all(np.abs(r.value - [np.median(d) for d in data]) <= 10)
    assert np.all(r.upper - r.lower <= 40)


def test_several_quantiles_add_a_quantile_column():
    rng = np.random.default_rng(1)
    p = make_plan(parse_spec(_spec(_q(quantiles=[0.5, 0.9]))))
    qp = p.queries[0]
    k = len(qp.query.candidates)
    r = release_quantiles(qp, {"count": np.ones(5 * k, dtype=np.int64)}, rng)
    assert r.by == ("g", "quantile")
    assert r.keys[:3] == (("a", "0.5"), ("a", "0.9"), ("b", "0.5"))
    assert len(r.value) == 10
    one = make_plan(parse_spec(_spec(_q())))
    assert release_quantiles(one.queries[0], {"count": np.ones(5 * k, dtype=np.int64)}, rng).by == ("g",)


# ----------------------------------------------------------------------------- spec
@pytest.mark.parametrize("change, field", [
    ({"quantiles": [0.5, 1.0]}, "quantiles"),
    ({"quantiles": []}, "quantiles"),
    ({"quantiles": [0.5, 0.5]}, "quantiles"),
    ({"quantiles": "0.5"}, "quantiles"),
    ({"bounds": None}, "bounds"),
    ({"granularity": 0.0001, "bounds": [0, 400000]}, "granularity"),
    ({"bins": [0, 1]}, "bins"),
    ({"target": {"half_width": 1}}, "target"),
])
def test_bad_quantile_specs_name_the_field(change, field):
    q = _q(**change)
    q = {k: v for k, v in q.items() if v is not None}
    with pytest.raises(SpecError) as e:
        parse_spec(_spec(q))
    assert field in str(e.value)
    assert "\n" not in str(e.value)


def test_quantile_key_only_for_quantiles():
    with pytest.raises(SpecError, match="quantiles is not used by a sum"):
        parse_spec(_spec({"name": "s", "type": "sum", "column": "x", "bounds": [0, 1], "quantiles": [0.5]}))


def test_by_column_named_quantile_refused_with_several():
    with pytest.raises(SpecError, match="quantile"):
        parse_spec(_spec(_q(by=["quantile"], keys={"quantile": ["a"]}, quantiles=[0.1, 0.2])))


def test_candidate_grid_includes_both_bounds():
    s = parse_spec(_spec(_q(bounds=[0, 10], granularity=4)))
    assert s.queries[0].candidates == (0.0, 4.0, 8.0, 10.0)
    assert math.isclose(len(parse_spec(_spec(_q(bounds=[0, 400000], granularity=100))).queries[0].candidates), 4001)


# ----------------------------------------------------------------------------- end to end (DuckDB)
def test_quantile_counts_in_duckdb_match_numpy(tmp_path):
    duckdb = pytest.importorskip("duckdb")
    from renyi.release.duckdb import DuckDBEngine

    rng = np.random.default_rng(2)
    n = 3000
    ids = np.arange(n)
    g = np.array(["a", "b", "c"], dtype=object)[rng.integers(0, 3, n)]
    x = rng.normal(8, 6, n).round(3)
    con = duckdb.connect()
    con.register("t", {"id": ids, "g": g, "x": x})
    con.execute(f"COPY t TO '{tmp_path / 't.parquet'}' (FORMAT PARQUET)")
    con.close()
    s = parse_spec(_spec(_q(quantiles=[0.5, 0.9], bounds=[0, 20], granularity=2.5, keys={"g": ["a", "b", "c"]}),
                         source=str(tmp_path / "t.parquet")))
    q = s.queries[0]
    with DuckDBEngine(s.data) as eng:
        agg = eng.aggregate(make_plan(s), 1)
    k = len(q.candidates)
    assert k == 9
    # reference: clamp, round to the grid (half away from zero, as SQL), cap at the top candidate
    j = np.minimum(np.floor((np.clip(x, 0, 20) - 0) / 2.5 + 0.5), k - 1).astype(int)
    ref = np.zeros((3, k), dtype=np.int64)
    for gi, name in enumerate("abc"):
        ref[gi] = np.bincount(j[g == name], minlength=k)
    assert agg["med"]["count"].tolist() == ref.reshape(-1).tolist()


def test_quantile_release_end_to_end(tmp_path):
    pytest.importorskip("duckdb")
    import renyi

    rng = np.random.default_rng(3)
    rows = ["id,g,x"] + [f"{i},{'ab'[i % 2]},{v:.1f}" for i, v in enumerate(rng.normal(50, 10, 4000))]
    (tmp_path / "t.csv").write_text("\n".join(rows) + "\n")
    sp = _spec(_q(quantiles=[0.5, 0.9], bounds=[0, 100], keys={"g": ["a", "b", "zz"]}), rho=2.0,
               source=str(tmp_path / "t.csv"))
    r = renyi.release(sp, out=str(tmp_path / "out"), rng=rng)
    text = (tmp_path / "out" / "med.csv").read_text().splitlines()
    assert text[0] == "g,quantile,value,lower,upper" and len(text) == 7
    res = r.results[0]
    vals = dict(zip(res.keys, zip(res.value, res.lower, res.upper)))
    assert abs(vals[("a", "0.5")][0] - 50) <= 2 and abs(vals[("b", "0.9")][0] - 62.8) <= 3
    assert vals[("zz", "0.5")][1:] == (0.0, 100.0)  # an empty group: the whole range
    assert r.manifest["queries"][0]["quantiles"] == [0.5, 0.9]
    assert "exponential mechanism" in r.manifest["queries"][0]["measurements"][0]["noise"]
