"""Issue 27: key discovery (keys = "discover") by Gaussian thresholding under approximate zCDP.
The threshold against an independent tail sum, the false-release rate by simulation (within δ),
no key outside the data ever released, and the δ in the plan, the report and the ledger."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from scipy import stats

from renyi.release import SpecError, make_plan, parse_spec, release_report
from renyi.release.noise import discover_keys, noise_query
from renyi.release.plan import discovery_threshold


def _spec(*queries, budget=None, m=3, **priv):
    return {"data": {"source": "t.csv", "privacy_unit": "id", "max_rows_per_unit": m},
            "privacy": {"budget": budget or {"rho": 0.5, "delta": 1e-6}, **priv}, "query": list(queries)}


def _q(**kw):
    q = {"name": "n", "type": "count", "by": ["g"], "keys": "discover", "max_groups_per_unit": 2}
    q.update(kw)
    return q


def _dg_upper_tail(sigma, j):
    """P[Z ≥ j] for 𝒩_ℤ(0, σ²), by direct summation in mpmath (independent of renyi)."""
    mpmath.mp.dps = 40
    w = lambda x: mpmath.exp(-mpmath.mpf(x) ** 2 / (2 * mpmath.mpf(sigma) ** 2))
    top = int(j + 60 * sigma + 50)
    norm = w(0) + 2 * mpmath.fsum(w(x) for x in range(1, top))
    return mpmath.fsum(w(x) for x in range(j, top)) / norm


@pytest.mark.parametrize("sigma, k, delta", [(3.0, 1, 1e-3), (7.5, 2, 1e-6), (2.2, 5, 1e-9), (12.0, 3, 0.05)])
def test_threshold_is_the_least_valid_integer(sigma, k, delta):
    tau = discovery_threshold(sigma, k, delta)

    def false_release(t):  # a key only the added person has: count 1, released if 1 + Z ≥ t
        p = _dg_upper_tail(sigma, t - 1)
        return 1 - (1 - p) ** k

    assert false_release(tau) <= delta
    assert false_release(tau - 1) > delta


def _exact(keys, persons, **vecs):
    return {"keys": [tuple(k) for k in keys], "persons": np.asarray(persons, dtype=np.int64),
            **{k: np.asarray(v, dtype=np.int64) for k, v in vecs.items()}}


def test_false_release_rate_within_delta_by_simulation():
    """A person alone in k = 2 groups (count 1 each): the chance that either is released, over
    12 000 runs of the mechanism, is within δ = 0.05 (and near it: the threshold is tight)."""
    p = make_plan(parse_spec(_spec(_q(discovery_delta=0.05), budget={"rho": 0.5, "delta": 0.05})))
    qp = p.queries[0]
    (m,) = [x for x in qp.measurements if x.kind == "discovery"]
    assert m.sensitivity.groups == 2
    rng = np.random.default_rng(7)
    reps = 12000
    # vectorised: the same draw as discover_keys (the mechanism's release on the counts)
    noisy = m.mechanism.release(np.ones(2 * reps, dtype=np.int64), rng=rng).reshape(reps, 2)
    hits = int(np.sum(np.any(noisy >= m.threshold, axis=1)))
    assert stats.binomtest(hits, reps, m.delta, alternative="greater").pvalue > 0.01, (hits, reps * m.delta)
    assert hits > 0.5 * reps * m.delta
    # and through discover_keys itself (fewer runs)
    out = sum(len(discover_keys(qp, _exact([("x",), ("y",)], [1, 1], count=[1, 1]), rng)[0].query.keys) > 0
              for _ in range(1500))
    assert stats.binomtest(out, 1500, m.delta, alternative="greater").pvalue > 0.01


def test_no_key_outside_the_data_is_ever_released():
    p = make_plan(parse_spec(_spec(_q(), budget={"rho": 5.0, "delta": 1e-3})))
    qp = p.queries[0]
    rng = np.random.default_rng(3)
    data_keys = [(f"k{i}",) for i in range(30)]
    persons = rng.integers(0, 200, 30)
    seen = set()
    for _ in range(100):
        r = noise_query(qp, _exact(data_keys, persons, count=persons), rng)
        assert set(r.keys) <= set(data_keys)
        assert list(r.keys) == sorted(r.keys)
        seen |= set(r.keys)
    # large groups are found
    assert {k for k, n in zip(data_keys, persons) if n > 100} <= seen


def test_discovered_values_are_aligned_with_their_keys():
    p = make_plan(parse_spec(_spec(_q(type="sum", column="x", bounds=[0, 10], missing="drop"),
                                   budget={"rho": 50.0, "delta": 1e-3})))
    qp = p.queries[0]
    rng = np.random.default_rng(4)
    keys = [("b",), ("a",), ("c",)]
    r = noise_query(qp, _exact(keys, [1000, 2000, 0], count=[1000, 2000, 0], sum=[5000, 100, 0]), rng)
    assert r.keys == (("a",), ("b",))
    assert abs(r.value[0] - 100) < 60 and abs(r.value[1] - 5000) < 60


def test_empty_discovery_releases_an_empty_table():
    p = make_plan(parse_spec(_spec(_q(type="mean", column="x", bounds=[0, 10]))))
    r = noise_query(p.queries[0], _exact([("a",)], [0], count=[0], sum=[0]), np.random.default_rng(0))
    assert r.keys == () and len(r.value) == 0


def test_delta_in_plan_report_and_spend():
    s = parse_spec(_spec(_q(), _q(name="m", type="mean", column="x", bounds=[0, 10]),
                         budget={"epsilon": 1.0, "delta": 1e-6}))
    assert s.discovery_delta == pytest.approx(5e-7)  # half the budget's δ, split over the two queries
    p = make_plan(s)
    assert p.delta == pytest.approx(5e-7, rel=1e-6) and p.delta <= 5e-7
    from renyi.guarantees import ApproxZCDP
    from renyi.guarantees.conversions import zcdp_rho_for

    assert s.rho == pytest.approx(zcdp_rho_for(1.0, (1e-6 - 5e-7) / (1 - 5e-7)))
    spend = p.spend()
    assert float(spend.delta) <= 5e-7 * (1 + 1e-12)
    rep = release_report(p)
    assert rep.budget.holds and rep.budget.delta == pytest.approx(5e-7)
    assert rep.epsilon <= 1.0  # (ε, δ) of the whole release at the budget's δ
    assert any("gaussian_thresholding" in sh.mechanism for sh in rep.shares)
    from renyi.budget.accountant import Accountant

    acct = Accountant(ApproxZCDP(s.rho, 0.0, s.discovery_delta))
    assert acct.can_spend(spend)


@pytest.mark.parametrize("spec, field", [
    (_spec(_q(), budget={"rho": 0.5}), "budget"),
    (_spec(_q(discovery_delta=2e-6)), "discovery_delta"),
    (_spec(_q(discovery_delta=0.0)), "discovery_delta"),
    (_spec(_q(discovery_share=1.0)), "discovery_share"),
    (_spec(_q(by=[], keys="discover")), "keys"),
    (_spec(_q(post=["consistent"])), "post"),
    (_spec(_q(target={"half_width": 5})), "target"),
    (_spec({"name": "n", "type": "count", "by": ["g"], "keys": {"g": ["a"]}, "discovery_delta": 1e-9}),
     "discovery_delta"),
    (_spec(_q(), delta=1e-7), "delta"),
])
def test_bad_discovery_specs_name_the_field(spec, field):
    with pytest.raises(SpecError) as e:
        parse_spec(spec)
    assert field in str(e.value)
    assert "\n" not in str(e.value)


# ----------------------------------------------------------------------------- end to end (DuckDB)
def _table(tmp_path):
    rows = ["id,g,x"]
    for i in range(300):  # 300 people, 3 rows each, in groups g0..g4 (several groups per person)
        for j in range(3):
            rows.append(f"{i},g{(i + j) % 5},{j}")
    rows.append("9999,lonely,1")  # one person alone in a group
    (tmp_path / "t.csv").write_text("\n".join(rows) + "\n")
    return str(tmp_path / "t.csv")


def test_engine_counts_people_per_data_group_under_the_groups_bound(tmp_path):
    pytest.importorskip("duckdb")
    from renyi.release.duckdb import DuckDBEngine

    s = parse_spec(_spec(_q(max_groups_per_unit=1), budget={"rho": 1.0, "delta": 1e-6}, m=3)
                   | {"data": {"source": _table(tmp_path), "privacy_unit": "id", "max_rows_per_unit": 3}})
    with DuckDBEngine(s.data) as eng:
        agg = eng.aggregate(make_plan(s), 5)["n"]
    assert agg["keys"] == [("g0",), ("g1",), ("g2",), ("g3",), ("g4",), ("lonely",)]
    # each person keeps one of its 3 groups: 301 people in all, one per person
    assert int(agg["persons"].sum()) == 301 and agg["persons"][-1] == 1
    # each person's 3 rows are in 3 different groups: one row per person is left
    assert agg["count"].tolist() == agg["persons"].tolist() and int(agg["count"].sum()) == 301


def test_discovery_release_spends_delta_on_the_ledger(tmp_path):
    pytest.importorskip("duckdb")
    import renyi
    from renyi import Accountant

    src = _table(tmp_path)
    sp = _spec(_q(), budget={"rho": 2.0, "delta": 1e-6}, ledger=str(tmp_path / "l.db"))
    sp["data"]["source"] = src
    r = renyi.release(sp, out=str(tmp_path / "out"), rng=np.random.default_rng(0))
    assert {k[0] for k in r.results[0].keys} <= {"g0", "g1", "g2", "g3", "g4"}  # "lonely" needs luck of δ
    assert r.manifest["delta_spent"] == pytest.approx(1e-6, rel=1e-6)
    with Accountant(ledger=str(tmp_path / "l.db")) as acct:
        assert float(acct.history[0].guarantee.delta) <= 1e-6 * (1 + 1e-12)
    # a plain-ρ ledger has no δ: refused before anything is spent or written
    plain = str(tmp_path / "plain.db")
    Accountant(renyi.ZCDP(5.0), ledger=plain).close()
    sp["privacy"]["ledger"] = plain
    with pytest.raises(renyi.RenyiError) as e:
        renyi.release(sp, out=str(tmp_path / "out2"))
    assert "δ" in str(e.value) or "delta" in str(e.value)
    assert not (tmp_path / "out2").exists()
    with Accountant(ledger=plain) as acct:
        assert len(acct.history) == 0
