"""Issue 29: centred sums in means, variance/std, count_distinct, histograms, accuracy targets,
post-processing. Plan-level (no DuckDB): derivations checked exhaustively, coverage by
simulation on synthetic exact aggregates, bad input refused before anything is read."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from renyi import accuracy
from renyi.release import SpecError, add_noise, derive_sensitivity, make_plan, parse_spec
from renyi.release.noise import measured, project_levels
from renyi.release.plan import _calibrate, centring, levels


def _spec(*queries, rho=0.5, m=3, noise=None):
    priv = {"budget": {"rho": rho}}
    if noise:
        priv["noise"] = noise
    return {"data": {"source": "t.csv", "privacy_unit": "id", "max_rows_per_unit": m},
            "privacy": priv, "query": list(queries)}


G = [f"g{i}" for i in range(50)]


def _q(**kw):
    q = {"name": kw.pop("name", "q"), "by": ["g"], "keys": {"g": G}}
    q.update(kw)
    return q


# ----------------------------------------------------------------------------- centring
@pytest.mark.parametrize("lo, hi, g", [(lo, hi, g) for lo in (-7, -2.5, 0, 3) for hi in (0, 4, 9.5, 200)
                                       for g in (1.0, 0.5, 3.0) if lo <= hi])
def test_centring_bound_is_the_exact_smallest_over_integer_centres(lo, hi, g):
    """Every rounded clamped value v lies in [L, H]; |v − c| ≤ B for all of them, and no integer
    centre gives a smaller bound (exhaustive over the values and the centres)."""
    c, b = centring(lo, hi, g)
    xs = np.linspace(lo - 5, hi + 5, 2001)
    v = np.round(np.clip(xs, lo, hi) / g)  # numpy rounds halves to even, SQL away from 0: both in [L, H]
    v2 = np.sign(np.clip(xs, lo, hi) / g) * np.floor(np.abs(np.clip(xs, lo, hi) / g) + 0.5)
    vals = set(v.astype(int)) | set(v2.astype(int))
    assert max(abs(x - c) for x in vals) <= b
    lo_u, hi_u = math.floor(lo / g), math.ceil(hi / g)
    assert b == min(max(hi_u - cc, cc - lo_u) for cc in range(lo_u, hi_u + 1))
    assert b <= max(abs(lo_u), abs(hi_u))  # never worse than the plain sum


def test_mean_sum_sensitivity_is_half_on_the_benchmark_job():
    """Issue 29's job ([0, 200000], ≤ 3 rows, ρ = 0.5 over 3 queries): the sum inside a mean
    gets σ ≈ 7.35e5 (1.47e6 before centring) and the derivation says so."""
    s = parse_spec(_spec(_q(name="c", type="count"), _q(name="s", type="sum", column="x", bounds=[0, 200000]),
                         _q(name="m", type="mean", column="x", bounds=[0, 200000])))
    p = make_plan(s)
    ms, mc = p.queries[2].measurements
    assert (ms.kind, ms.centre, ms.sensitivity.per_row, ms.sensitivity.l2) == ("sum", 100000, 100000, 300000.0)
    assert float(ms.mechanism.sigma) == pytest.approx(300000 / math.sqrt(2 * 0.5 / 6), rel=1e-6)
    old = _calibrate("discrete_gaussian", derive_sensitivity(3, None, None, 50, per_row=200000), ms.rho)
    assert float(ms.mechanism.sigma) / float(old.sigma) == pytest.approx(0.5, rel=1e-6)
    assert 7.3e5 < float(ms.mechanism.sigma) < 7.4e5


def test_centred_mean_noise_error_is_at_most_044_of_the_plain_sum_estimator():
    """Same ρ, same data as the benchmark (means near 120 000 in [0, 200 000], ~333 rows per
    group): the released mean's RMS noise error is ≤ 0.45× the plain-sum estimator's (0.44
    expected), measured over 7 500 simulated cells."""
    rng = np.random.default_rng(3)
    # the mean alone at the ρ it gets in the benchmark's three-query spec
    p = make_plan(parse_spec(_spec(_q(name="m", type="mean", column="x", bounds=[0, 200000]), rho=0.5 / 3)))
    qp = p.queries[0]
    ms, mc = qp.measurements
    n = rng.integers(280, 390, 50)
    x_sum = np.array([int(rng.uniform(0, 250000, k).clip(0, 200000).round().sum()) for k in n], dtype=np.int64)
    exact = {"m": {"count": n, "sum": x_sum}}
    old = _calibrate("discrete_gaussian", derive_sensitivity(3, None, None, 50, per_row=200000), ms.rho)
    new_e, old_e = [], []
    for _ in range(150):
        res = add_noise(p, exact, rng)
        new_e.append(res[0].value - x_sum / n)
        so = old.release(x_sum, rng=rng).astype(float)
        no = mc.mechanism.release(n, rng=rng).astype(float)
        old_e.append(np.clip(so / np.maximum(no, 1), 0, 200000) - x_sum / n)
    ratio = math.sqrt(np.mean(np.square(new_e)) / np.mean(np.square(old_e)))
    assert ratio <= 0.45, ratio
    assert ratio >= 0.40  # the simulation is what it claims (the plain sum really is twice as noisy)


# ----------------------------------------------------------------------------- sensitivities, exhaustive
def _allocations(rows, groups, per_group, cells):
    g = groups if groups is not None else rows
    r = per_group if per_group is not None else rows
    for c in itertools.product(range(r + 1), repeat=cells):
        if sum(c) <= rows and sum(1 for x in c if x) <= g:
            yield c


@pytest.mark.parametrize("rows, groups, per_group, cells, bins",
                         [(3, None, None, 2, 2), (4, 2, 1, 3, 2), (4, 3, 2, 2, 3), (5, 2, 3, 3, 2), (2, 1, 2, 3, 3),
                          (6, 3, 2, 3, 2)])
def test_histogram_sensitivity_is_the_exact_worst_case(rows, groups, per_group, cells, bins):
    """A histogram's vector over groups × bins: the derived ℓ₁/ℓ₂ (the count's, over the
    groups) equal the maximum over every way one individual's rows fall in groups and bins."""
    best1, best2 = 0, 0.0
    for c in _allocations(rows, groups, per_group, cells):
        # every split of each group's c_j rows over the bins
        splits = [[s for s in itertools.product(range(cj + 1), repeat=bins) if sum(s) == cj] for cj in c]
        for combo in itertools.product(*splits):
            flat = [x for s in combo for x in s]
            best1 = max(best1, sum(flat))
            best2 = max(best2, math.sqrt(sum(x * x for x in flat)))
    p = make_plan(parse_spec(_spec(
        {"name": "h", "type": "histogram", "column": "x", "bins": list(range(bins + 1)), "by": ["g"],
         "keys": {"g": G[:cells]}, **({"max_groups_per_unit": groups} if groups else {}),
         **({"max_rows_per_group": per_group} if per_group else {})}, m=rows)))
    sens = p.measurements[0].sensitivity
    assert p.measurements[0].cells == cells * bins
    assert (sens.l1, sens.l2) == pytest.approx((best1, best2), rel=1e-15)


@pytest.mark.parametrize("rows, groups, per_group, k, cells",
                         [(3, None, None, None, 3), (4, 2, 3, 1, 3), (5, 3, 2, 1, 3), (4, None, 4, 2, 2),
                          (6, 2, None, 2, 3), (3, 3, 1, 5, 4)])
def test_count_distinct_sensitivity_is_the_exact_worst_case(rows, groups, per_group, k, cells):
    """Removing an individual lowers a group's distinct count by at most the values only it
    holds there: ≤ its rows in the group and ≤ k. The derived ℓ₁/ℓ₂ equal the maximum over
    every allocation of rows and every choice of ≤ min(rows, k) new values per group."""
    kk = k if k is not None else rows
    best1, best2 = 0, 0.0
    for c in _allocations(rows, groups, per_group, cells):
        d = [min(cj, kk) for cj in c]  # the worst case: every kept value is new
        best1 = max(best1, sum(d))
        best2 = max(best2, math.sqrt(sum(x * x for x in d)))
    q = {"name": "d", "type": "count_distinct", "column": "x", "by": ["g"], "keys": {"g": G[:cells]}}
    for key, v in (("max_groups_per_unit", groups), ("max_rows_per_group", per_group), ("max_distinct_per_unit", k)):
        if v is not None:
            q[key] = v
    sens = make_plan(parse_spec(_spec(q, m=rows))).measurements[0].sensitivity
    assert (sens.l1, sens.l2) == pytest.approx((best1, best2), rel=1e-15)


@pytest.mark.parametrize("lo, hi, g", [(0, 10, 1.0), (-3, 4, 1.0), (2, 9, 0.5), (-5, -1, 1.0)])
def test_variance_sum_of_squares_per_row_bound_is_exact(lo, hi, g):
    """Every row's (v − c)² − q lies within ±per_row, attained (exhaustive over v in [L, H])."""
    p = make_plan(parse_spec(_spec(_q(type="variance", column="x", bounds=[lo, hi], granularity=g))))
    m2, ms, mc = p.queries[0].measurements
    lo_u, hi_u = math.floor(lo / g), math.ceil(hi / g)
    terms = [(v - m2.centre) ** 2 - m2.shift for v in range(lo_u, hi_u + 1)]
    assert max(abs(t) for t in terms) == m2.sensitivity.per_row
    assert max(abs(v - ms.centre) for v in range(lo_u, hi_u + 1)) == ms.sensitivity.per_row
    assert (m2.kind, ms.kind, mc.kind) == ("sum2", "sum", "count")
    assert m2.unit == g * g


@pytest.mark.parametrize("rows, groups, per_group", [(3, None, None), (4, 2, 1), (4, 3, 2), (5, 2, 3)])
def test_consistent_level_sensitivities_bound_every_contribution(rows, groups, per_group):
    """A coarser level merges groups: over every allocation of one individual's rows to the
    fine groups, the coarse vectors' ℓ₁/ℓ₂ stay within the derived ones (an upper bound)."""
    keys = [("a", "1"), ("a", "2"), ("a", "3"), ("b", "1")]
    q = {"name": "c", "type": "count", "by": ["s", "t"], "keys": {"file": None}, "post": ["consistent"]}
    spec = _spec({**q, "keys": {"s": ["a", "b"], "t": ["1", "2", "3"]}}, m=rows)
    for key, v in (("max_groups_per_unit", groups), ("max_rows_per_group", per_group)):
        if v is not None:
            spec["query"][0][key] = v
    p = make_plan(parse_spec(spec))
    fine = p.queries[0].query.keys
    assert len(p.measurements) == 3 and p.measurements[0].level == () and p.measurements[1].level == ("s",)
    for m in p.measurements[:-1]:
        n = len(m.level)
        pos = {k: i for i, k in enumerate(m.keys)}
        best1, best2 = 0, 0.0
        for c in _allocations(rows, groups, per_group, len(fine)):
            coarse = [0] * len(m.keys)
            for k, x in zip(fine, c):
                coarse[pos[k[:n]]] += x
            best1 = max(best1, sum(coarse))
            best2 = max(best2, math.sqrt(sum(x * x for x in coarse)))
        assert m.sensitivity.l1 >= best1 and m.sensitivity.l2 >= best2 - 1e-12
    del keys


# ----------------------------------------------------------------------------- coverage (simulation)
def _covers(lower, upper, truth):
    return int(np.sum((lower <= truth) & (truth <= upper)))


def _assert_rate(hits, trials, nominal):
    """At least the nominal rate: a one-sided binomial test that fails when intervals are too narrow."""
    assert stats.binomtest(hits, trials, nominal, alternative="less").pvalue > 1e-4, (hits / trials, nominal)


def _groups(rng, n_groups, lo, hi, g, sizes=(1, 40)):
    vals = [np.round(np.clip(rng.normal((lo + hi) / 2 + (hi - lo) / 4, (hi - lo) / 3, k), lo, hi) / g).astype(int)
            for k in rng.integers(*sizes, n_groups)]
    return vals


@pytest.mark.parametrize("qtype", ["mean", "variance", "std"])
def test_ratio_intervals_cover_at_the_stated_rate(qtype):
    """Mean, variance and std: over repeated noise the intervals cover the exact statistic of
    the (clamped, rounded) values at least 95 % of the time, groups of 1 to 40 rows."""
    rng = np.random.default_rng(11)
    lo, hi, g = -20.0, 100.0, 0.5
    p = make_plan(parse_spec(_spec(_q(type=qtype, column="x", bounds=[lo, hi], granularity=g), rho=2.0)))
    vals = _groups(rng, 50, lo, hi, g)
    qp = p.queries[0]
    c = qp.measurements[-2].centre if qtype != "mean" else qp.measurements[0].centre
    exact = {"count": np.array([len(v) for v in vals]), "sum": np.array([v.sum() for v in vals]),
             "sum2": np.array([int(((v - c) ** 2).sum()) for v in vals])}
    truth = np.array([v.mean() * g if qtype == "mean" else v.var() * g * g for v in vals])
    if qtype == "std":
        truth = np.sqrt(truth)
    hits = 0
    reps = 120
    width = []
    for _ in range(reps):
        (r,) = add_noise(p, {"q": exact}, rng)
        hits += _covers(r.lower, r.upper, truth)
        width.append(np.median(r.upper - r.lower))
        assert np.all((r.lower <= r.value) & (r.value <= r.upper))
    _assert_rate(hits, reps * 50, 0.95)
    assert np.median(width) < (hi - lo) * (1 if qtype == "mean" else (hi - lo) / 4)  # not trivially wide


@pytest.mark.parametrize("noise", ["discrete_gaussian", "discrete_laplace"])
def test_histogram_and_count_distinct_intervals_cover_at_the_exact_rate(noise):
    """Each cell's interval covers at the exact coverage of its noise (two-sided binomial test
    against the exact probability P(|Z| ≤ h))."""
    rng = np.random.default_rng(5)
    p = make_plan(parse_spec(_spec(
        _q(name="h", type="histogram", column="x", bins=[0, 1, 2, 5]),
        _q(name="d", type="count_distinct", column="x", max_distinct_per_unit=2), noise=noise, rho=0.3)))
    exact = {"h": {"count": rng.integers(0, 30, 150)}, "d": {"count": rng.integers(0, 30, 50),
                                                              "distinct": rng.integers(0, 10, 50)}}
    hits = {"h": 0, "d": 0}
    reps = 120
    for _ in range(reps):
        h, d = add_noise(p, exact, rng)
        assert h.by == ("g", "bin") and h.keys[:3] == (("g0", "[0, 1)"), ("g0", "[1, 2)"), ("g0", "[2, 5]"))
        hits["h"] += _covers(h.lower, h.upper, exact["h"]["count"])
        hits["d"] += _covers(d.lower, d.upper, exact["d"]["distinct"])
    for qp in p.queries:
        m = qp.measurements[0]
        pr = 1.0 - accuracy.failure_probability(m.mechanism, m.half_width)
        assert pr >= 0.95
        trials = reps * m.cells
        assert stats.binomtest(hits[qp.query.name], trials, pr).pvalue > 1e-4


# ----------------------------------------------------------------------------- consistency
def _tree_design(children, sizes):
    """The 0/1 matrix of every level's cells over the leaves, coarsest first."""
    leaves = sizes[-1]
    rows = [np.eye(leaves)]
    for lv in range(len(sizes) - 2, -1, -1):
        par = children[lv]
        up = np.zeros((sizes[lv], sizes[lv + 1]))
        up[par, np.arange(sizes[lv + 1])] = 1
        rows.insert(0, up @ rows[0])
    return rows


def test_projection_is_the_weighted_least_squares_solution_with_its_variances():
    """The two-pass tree projection equals the explicit GLS solution (leaves free, every level
    observed with its own variance), and its error variances equal a·(AᵀWA)⁻¹·aᵀ."""
    rng = np.random.default_rng(0)
    children = [np.array([0, 0, 0]), np.array([0, 0, 1, 2, 2, 2, 2])]
    sizes = [1, 3, 7]
    var = [4.0, 9.0, 2.5]
    y = [rng.normal(0, 5, n) for n in sizes]
    x, p = project_levels(children, y, var)
    mats = _tree_design(children, sizes)
    a = np.vstack(mats)
    w = np.diag(np.concatenate([np.full(n, 1 / v) for n, v in zip(sizes, var)]))
    cov = np.linalg.inv(a.T @ w @ a)
    leaves = cov @ a.T @ w @ np.concatenate(y)
    for lv in range(3):
        assert np.allclose(x[lv], mats[lv] @ leaves, rtol=1e-10, atol=1e-10)
        assert np.allclose(p[lv], np.diag(mats[lv] @ cov @ mats[lv].T), rtol=1e-10)
    # consistent: every parent is the sum of its children
    assert np.allclose(np.bincount(children[1], weights=x[2]), x[1])
    assert np.allclose(x[1].sum(), x[0][0])


@pytest.mark.parametrize("noise", ["discrete_gaussian", "discrete_laplace"])
def test_consistent_counts_add_up_and_their_intervals_cover(noise):
    """post = ["consistent"]: the total equals the sum of the states, each state the sum of its
    counties; the (bound) intervals cover at ≥ 95 % at every level, and the projection does
    not make the counties' errors larger."""
    rng = np.random.default_rng(9)
    states = {"a": ["1", "2", "3"], "b": ["1", "2"], "c": ["1", "2", "3", "4"]}
    keys_file = [(s, c) for s, cs in states.items() for c in cs]
    q = {"name": "c", "type": "count", "by": ["s", "t"], "keys": {"s": list(states), "t": ["1", "2", "3", "4"]},
         "post": ["consistent", "non_negative"]}
    p = make_plan(parse_spec(_spec(q, noise=noise, rho=0.2)))
    qp = p.queries[0]
    fine = qp.query.keys
    assert len(fine) == 12 and len(qp.measurements) == 3
    n = rng.integers(0, 50, len(fine))
    hits = [0, 0, 0]
    err_fine, err_raw = [], []
    reps = 150
    for _ in range(reps):
        (r,) = add_noise(p, {"c": {"count": n}}, rng)
        assert not r.exact_intervals and len(r.levels) == 2
        total, by_s = r.levels
        truths = [np.array([n.sum()]), np.array([n[[k[0] == s for k in fine]].sum() for s in "abc"]), n]
        for i, res in enumerate((total, by_s, r)):
            hits[i] += _covers(res.lower, res.upper, truths[i])
            assert np.all(res.value >= 0) and np.all(res.lower >= 0)
        if np.all(r.value > 0):  # away from the non-negativity clip the parts add up exactly
            assert by_s.value.sum() == pytest.approx(total.value[0], rel=1e-9)
        err_fine.append(r.value - n)
        m = qp.measurements[-1]
        err_raw.append(m.mechanism.release(n, rng=rng) - n)
    for i, cells in enumerate((1, 3, 12)):
        _assert_rate(hits[i], reps * cells, 0.95)
    assert np.mean(np.square(err_fine)) <= np.mean(np.square(err_raw)) * 1.05
    del keys_file


def test_non_negative_counts_keep_coverage():
    """post = ["non_negative"]: values and bounds are ≥ 0 and the intervals still cover the
    exact counts at the noise's exact rate or more."""
    rng = np.random.default_rng(2)
    p = make_plan(parse_spec(_spec(_q(type="count", post=["non_negative"]), rho=0.05)))
    n = np.zeros(50, dtype=np.int64)
    hits = 0
    for _ in range(100):
        (r,) = add_noise(p, {"q": {"count": n}}, rng)
        assert np.all(r.value >= 0) and np.all(r.lower >= 0) and np.all(r.upper >= r.value)
        hits += _covers(r.lower, r.upper, n)
    _assert_rate(hits, 5000, 0.95)


# ----------------------------------------------------------------------------- targets
def test_targets_are_met_with_the_smallest_rho_and_cover_in_simulation():
    """Each target query gets the least noise whose interval at its coverage is within its
    half-width (one unit less noise would not meet it); the plan spends only their sum; the
    released intervals cover at the target coverage (simulation)."""
    qs = [_q(name="c", type="count", target={"half_width": 50, "coverage": 0.95}),
          _q(name="s", type="sum", column="x", bounds=[0, 1000], granularity=10,
             target={"half_width": 20000, "coverage": 0.9}),
          _q(name="h", type="histogram", column="x", bins=[0, 10, 100], target={"half_width": 30, "coverage": 0.99})]
    s = parse_spec(_spec(*qs, rho=5.0, m=3))
    p = make_plan(s)
    targets = [(50, 0.95), (20000, 0.9), (30, 0.99)]
    for qp, (h, cov) in zip(p.queries, targets):
        m = qp.measurements[0]
        assert qp.half_width <= h and m.coverage == cov
        assert 1 - accuracy.failure_probability(m.mechanism, m.half_width) >= cov
        # the smallest ρ: a noise 0.1 % larger would miss the target
        from renyi.mechanisms import DiscreteGaussian

        bigger = DiscreteGaussian(float(m.mechanism.sigma) * 1.001, m.sensitivity.l2, vector=True)
        assert accuracy.half_width(bigger, cov) * m.unit > h or \
            accuracy.half_width(bigger, cov) * m.unit > accuracy.half_width(m.mechanism, cov) * m.unit
        assert qp.needed_rho == pytest.approx(m.achieved_rho)
    assert p.rho == pytest.approx(sum(qp.needed_rho for qp in p.queries))
    assert p.rho < s.rho  # only what the targets need is spent
    rng = np.random.default_rng(4)
    exact = {"c": {"count": rng.integers(0, 100, 50)}, "s": {"count": np.zeros(50, int),
                                                              "sum": rng.integers(0, 5000, 50)},
             "h": {"count": rng.integers(0, 100, 100)}}
    hits = [0, 0, 0]
    reps = 100
    for _ in range(reps):
        res = add_noise(p, exact, rng)
        hits[0] += _covers(res[0].lower, res[0].upper, exact["c"]["count"])
        hits[1] += _covers(res[1].lower, res[1].upper, exact["s"]["sum"] * 10.0)
        hits[2] += _covers(res[2].lower, res[2].upper, exact["h"]["count"])
        for r, (h, _) in zip(res, targets):
            assert np.all(r.upper - r.value <= h)
    for hit, (_, cov), cells in zip(hits, targets, (50, 50, 100)):
        _assert_rate(hit, reps * cells, cov)


def test_target_total_is_no_larger_than_a_hand_tuned_weight_split():
    """A hand-tuned weight split meeting the same targets (weights ∝ each query's need,
    total raised until every target holds) spends at least the solved total."""
    qs = [_q(name="c", type="count", target={"half_width": 40}),
          _q(name="s", type="sum", column="x", bounds=[0, 500], target={"half_width": 20000}),
          _q(name="d", type="count_distinct", column="x", target={"half_width": 25})]
    solved = make_plan(parse_spec(_spec(*qs, rho=10.0)))
    # hand-tuned: the same queries with weights, at the smallest total (bisection) meeting every target
    weighted = [{k: v for k, v in q.items() if k != "target"} for q in qs]
    for w, qp in zip(weighted, solved.queries):
        w["weight"] = round(qp.needed_rho / solved.rho, 2)  # a curator's rounded shares

    def meets(total):
        p = make_plan(parse_spec(_spec(*weighted, rho=total)))
        return all(qp.half_width <= q["target"]["half_width"] for qp, q in zip(p.queries, qs))

    lo, hi = solved.rho * 0.5, solved.rho * 4
    assert meets(hi) and not meets(lo)
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if meets(mid) else (mid, hi)
    assert solved.rho <= hi
    assert make_plan(parse_spec(_spec(*weighted, rho=hi))).rho >= solved.rho


def test_targets_beyond_the_budget_name_the_queries_before_anything_is_read():
    """Targets that cannot all fit: one error naming each query and the ρ it needs."""
    qs = [_q(name="tight", type="count", target={"half_width": 1}),
          _q(name="loose", type="count", target={"half_width": 500})]
    with pytest.raises(SpecError) as e:
        make_plan(parse_spec(_spec(*qs, rho=0.5)))
    msg = str(e.value)
    assert "'tight'" in msg and "cannot be met within the budget ρ = 0.5" in msg and "\n" not in msg
    with pytest.raises(SpecError, match="together need"):
        make_plan(parse_spec(_spec(_q(name="a", type="count", target={"half_width": 5}),
                                   _q(name="b", type="count", target={"half_width": 5}), rho=1.0)))


def test_targets_and_weights_mix():
    """Weighted queries share what the targets leave."""
    p = make_plan(parse_spec(_spec(_q(name="t", type="count", target={"half_width": 30}),
                                   _q(name="w1", type="count", weight=1), _q(name="w3", type="count", weight=3))))
    t, w1, w3 = p.queries
    assert w3.rho == pytest.approx(3 * w1.rho)
    assert t.rho + w1.rho + w3.rho <= 0.5
    assert p.rho == pytest.approx(0.5, rel=1e-6)


# ----------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("query, words", [
    (_q(type="histogram", column="x"), "needs bins"),
    (_q(type="histogram", column="x", bins=[0, 5, 5]), "strictly increasing; got bins[1] = 5 >= bins[2] = 5"),
    (_q(type="histogram", column="x", bins=[1]), "needs bins"),
    (_q(type="histogram", column="x", bins=[0, "a"]), "bins[1] must be a number"),
    (_q(type="histogram", column="x", bins=[0, 1], bounds=[0, 1]), "bounds is not used by a histogram"),
    (_q(type="count_distinct"), "needs column"),
    (_q(type="count_distinct", column="x", max_distinct_per_unit=0), "max_distinct_per_unit must be an integer"),
    (_q(type="count", max_distinct_per_unit=2), "max_distinct_per_unit is not used by a count"),
    (_q(type="variance", column="x"), "needs bounds"),
    (_q(type="std", column="x", bounds=[0, 1e9]), "exceeds 2**26"),
    (_q(type="count", target={"half_width": 0}), "target.half_width must be in (0, inf); got 0"),
    (_q(type="count", target={"half_width": 5, "coverage": 1.0}), "target.coverage must be in (0, 1)"),
    (_q(type="count", target={"coverage": 0.9}), "target needs half_width"),
    (_q(type="count", target=5), "target must be a table"),
    (_q(type="count", target={"half_width": 5, "alpha": 1}), "unknown key 'alpha'"),
    (_q(type="count", target={"half_width": 5}, weight=2), "a weight or a target, not both"),
    (_q(type="mean", column="x", bounds=[0, 1], target={"half_width": 5}), "target is for count, sum"),
    (_q(type="count", post=["smooth"]), "post must be one of non_negative, consistent"),
    (_q(type="sum", column="x", bounds=[0, 1], post=["non_negative"]), "non_negative is for count"),
    (_q(type="mean", column="x", bounds=[0, 1], post=["consistent"]), "consistent is for count and sum"),
    (_q(type="count", by=[], keys=None, post=["consistent"]), "consistent needs by columns"),
    (_q(type="count", post=["consistent"], target={"half_width": 9}), "cannot be combined with post consistent"),
    (_q(type="histogram", column="x", bins=[0, 1], by=["bin"], keys={"bin": ["a"]}), "rename the by column 'bin'"),
])
def test_bad_input_is_one_clear_error(query, words):
    """Each bad query is one SpecError (a ValueError) naming the key, raised by parse_spec,
    i.e. before any table is opened or anything spent."""
    with pytest.raises(SpecError) as e:
        parse_spec(_spec(query))
    assert words in str(e.value), str(e.value)
    assert "\n" not in str(e.value)


def test_levels_come_from_the_public_keys():
    assert levels(("a",), (("x",), ("y",))) == [((), ((),)), (("a",), (("x",), ("y",)))]


def test_measured_centres_exactly_with_python_integers():
    """Centring is exact integer arithmetic, even where c·count is beyond 2⁵³."""
    p = make_plan(parse_spec(_spec(_q(type="mean", column="x", bounds=[0, 2.0**50], keys={"g": ["a"]}))))
    qp = p.queries[0]
    ms = qp.measurements[0]
    n = np.array([3000], dtype=np.int64)
    s = np.array([2**50 * 2000 + 7], dtype=np.int64)
    got = measured(ms, {"count": n, "sum": s}, qp)
    assert int(got[0]) == 2**50 * 2000 + 7 - ms.centre * 3000


def test_an_engine_missing_an_aggregate_fails_before_the_spend():
    """An engine that does not compute what a query type needs is refused by name (the check
    runs between the aggregation and the spend)."""
    from renyi.release.run import check_aggregates

    p = make_plan(parse_spec(_spec(_q(type="variance", column="x", bounds=[0, 10]))))
    n = np.zeros(50, dtype=np.int64)
    with pytest.raises(SpecError, match="did not compute 'sum2'"):
        check_aggregates(p, {"q": {"count": n, "sum": n}})
    with pytest.raises(SpecError, match="returned 3 values of 'sum'"):
        check_aggregates(p, {"q": {"count": n, "sum": n[:3], "sum2": n}})
    check_aggregates(p, {"q": {"count": n, "sum": n, "sum2": n}})


@pytest.mark.parametrize("sigma", [0.3, 1.0, 2.5, 17.0])
def test_discrete_gaussian_is_sigma2_subgaussian(sigma):
    """The projected intervals rely on E[e^{tZ}] ≤ e^{t²σ²/2} for Z ~ 𝒩_ℤ(0, σ²): checked by
    exact sums over a grid of t (log space)."""
    from scipy.special import logsumexp

    z = np.arange(-int(60 * sigma) - 60, int(60 * sigma) + 61, dtype=float)
    lw = -z * z / (2 * sigma * sigma)
    for t in np.concatenate([np.linspace(0.01, 3, 40) / sigma, [5 / sigma]]):
        log_mgf = logsumexp(lw + t * z) - logsumexp(lw)
        assert log_mgf <= t * t * sigma * sigma / 2 + 1e-12
