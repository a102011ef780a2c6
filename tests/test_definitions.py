"""Guarantee values: construction, the protocol, laws (hypothesis), bad input and numerics."""

import math
import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import renyi
from renyi import GDP, MCDP, RDP, ZCDP, ApproxDP, ApproxRDP, ApproxZCDP, DomainError, PureDP
from renyi.composition import advanced_composition, bs16_cor39, kov_delta, optimal_homogeneous_composition

rhos = st.floats(min_value=1e-8, max_value=50.0)
epsilons = st.floats(min_value=1e-4, max_value=30.0)
deltas = st.floats(min_value=1e-12, max_value=0.5)
ks = st.integers(min_value=1, max_value=1000)


def all_guarantees():
    return [
        PureDP(1.0),
        ApproxDP(1.0, 1e-6),
        ZCDP(0.3),
        ZCDP(0.3, xi=0.05),
        ApproxZCDP(0.3, 0.0, 1e-7),
        MCDP(0.6, 1.0),
        GDP(0.8),
        RDP(lambda a: 0.2 * a, label="0.2α"),
        RDP.from_points([2, 4, 8, 16], [0.4, 0.8, 1.6, 3.2]),
        ApproxRDP(RDP(lambda a: 0.2 * a), 1e-7),
    ]


# ----- the protocol ---------------------------------------------------------------------
@pytest.mark.parametrize("g", all_guarantees(), ids=repr)
def test_protocol(g):
    """Every guarantee answers rdp/epsilon/delta/compose/+/k*; outputs are ≥ 0 and never NaN."""
    r = np.asarray(g.rdp(np.array([1.5, 2.0, 10.0, np.inf])))
    assert r.shape == (4,) and not np.any(np.isnan(r)) and np.all(r >= 0)
    e = g.epsilon(1e-5)
    assert e >= 0 and not math.isnan(e)
    assert 0 <= g.delta(2.0) <= 1
    c = g.best_epsilon(1e-5)
    assert c.value == e and isinstance(c.method, str)
    assert (g + g).epsilon(1e-4) >= g.epsilon(1e-4) or math.isinf(g.epsilon(1e-4))
    assert (3 * g).epsilon(1e-4) == pytest.approx(g.compose(3).epsilon(1e-4), rel=1e-9)
    assert isinstance(repr(g), str) and "object at" not in repr(g)


@pytest.mark.parametrize("g", [PureDP(1.0), ApproxDP(1.0, 0.0), ZCDP(0.3), GDP(0.5), MCDP(0.6, 1.0)], ids=repr)
def test_frozen_and_picklable(g):
    with pytest.raises((AttributeError, TypeError)):
        g.rho = 3.0  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(g)) == g


def test_parameter_is_also_the_method():
    p = PureDP(2.0)
    assert p.epsilon == 2.0 and p.epsilon + 1 == 3.0
    assert p.epsilon(1e-3) < 2.0
    a = ApproxDP(1.0, 1e-6)
    assert a.delta == 1e-6 and a.delta(0.5) > 1e-6


def test_to_approx_dp():
    assert ZCDP(0.5).to_approx_dp(1e-5) == ApproxDP(ZCDP(0.5).epsilon(1e-5), 1e-5)


# ----- composition --------------------------------------------------------------------
def test_compose_type_rules():
    z, p, g, a = ZCDP(0.1), PureDP(1.0), GDP(1.0), ApproxDP(1.0, 1e-6)
    r = RDP(lambda x: 0.1 * x)
    assert isinstance(renyi.compose(g, g), GDP)
    assert isinstance(renyi.compose(p, p), PureDP)
    assert isinstance(renyi.compose(p, a), ApproxDP)
    assert isinstance(renyi.compose(z, p), ZCDP)
    assert isinstance(renyi.compose(g, z), ZCDP)
    assert isinstance(renyi.compose(z, r), RDP)
    assert isinstance(renyi.compose(z, a), ApproxZCDP)
    assert isinstance(renyi.compose(r, a), ApproxRDP)
    zm = renyi.compose(z, MCDP(0.6, 1.0))
    assert zm.rho == pytest.approx(0.6) and zm.xi == pytest.approx(0.1)


def test_mixed_composition_with_approx_dp_is_valid():
    """zCDP + (ε, δ)-DP through approximate zCDP (BS16 Lemma 37): δ adds, ρ adds."""
    total = renyi.compose(ZCDP(0.1), ApproxDP(1.0, 1e-6))
    assert total.rho == pytest.approx(0.1 + math.tanh(0.5))
    assert total.delta == pytest.approx(1e-6)


def test_cor39_and_routes_for_pure_composition():
    """theory §10.5: optimal ≤ RDP ≤ zCDP ≤ Cor 39 ≤ DRV for 100 × 0.1-DP at δ' = 1e-5."""
    opt = optimal_homogeneous_composition(0.1, 0.0, 100, 1e-5).epsilon
    via_rdp = (100 * PureDP(0.1).to_rdp()).epsilon(1e-5)
    via_zcdp = (100 * PureDP(0.1).to_zcdp()).epsilon(1e-5)
    cor39 = bs16_cor39([0.1] * 100, [0.0] * 100, 1e-5).epsilon
    drv = advanced_composition(0.1, 0.0, 100, 1e-5).epsilon
    assert opt == pytest.approx(4.306791372516507, rel=1e-6)
    assert via_rdp == pytest.approx(4.61523, rel=1e-5)
    assert via_zcdp == pytest.approx(4.72613, rel=1e-5)
    assert cor39 == pytest.approx(5.34535, rel=1e-5)
    assert drv == pytest.approx(5.850235092944558, rel=1e-9)
    assert opt <= via_rdp <= via_zcdp <= cor39 <= drv


@pytest.mark.parametrize("i,expected", [(1, 2.88233857618648e-4), (2, 3.132267576111354e-3), (3, 0.016080131993213)])
def test_kov_golden(i, expected):
    assert kov_delta(0.1, 10, (10 - 2 * i) * 0.1) == pytest.approx(expected, rel=1e-9)


def test_cor39_heterogeneous_golden():
    assert bs16_cor39([0.1] * 100, [1e-7] * 100, 1e-6).epsilon == pytest.approx(5.799302201348589, rel=1e-9)


def test_approx_dp_compose_methods():
    a = ApproxDP(0.1, 1e-7)
    assert a.compose(10) == ApproxDP(1.0, 1e-6) or a.compose(10).epsilon == pytest.approx(1.0)
    opt = a.compose(100, method="optimal", delta_prime=1e-4)
    adv = a.compose(100, method="advanced", delta_prime=1e-5)
    assert opt.epsilon < adv.epsilon
    with pytest.raises(TypeError):
        a.compose(10, method="optimal")


# ----- group privacy --------------------------------------------------------------------
def test_group_privacy_values():
    assert ZCDP(0.1).group(2) == ZCDP(0.4)
    assert PureDP(0.5).group(3) == PureDP(1.5)
    g = ApproxDP(0.1, 1e-6).group(3)
    assert g.epsilon == pytest.approx(0.3)
    assert g.delta <= 3 * math.exp(0.2) * 1e-6
    assert GDP(1.0).group(3) == GDP(3.0)
    # Gaussian vs Mironov (theory §10.2): the Lemma-26 recursion is exact at these points.
    curve = RDP(lambda a: 0.1 * a)
    assert float(curve.group(2).rdp(2.0)) == pytest.approx(0.8)
    assert float(curve.group(8).rdp(10.0)) <= 216.0
    with pytest.raises(renyi.ConversionError):
        ApproxZCDP(0.1, 0.0, 1e-6).group(2)


@given(rho=rhos, k=st.integers(2, 64), alpha=st.floats(1.01, 100))
def test_group_privacy_increases_loss(rho, k, alpha):
    curve = RDP(lambda a: rho * a)
    assert float(curve.group(k).rdp(alpha)) >= float(curve.rdp(alpha))
    assert ZCDP(rho).group(k).rho >= rho


# ----- laws -----------------------------------------------------------------------------
@given(r1=rhos, r2=rhos, alpha=st.floats(1.001, 1e4))
def test_composition_adds(r1, r2, alpha):
    c1, c2 = RDP(lambda a: r1 * a), RDP(lambda a: r2 * a)
    assert float((c1 + c2).rdp(alpha)) == pytest.approx(float(c1.rdp(alpha)) + float(c2.rdp(alpha)), rel=1e-12)
    assert (ZCDP(r1) + ZCDP(r2)).rho == pytest.approx(r1 + r2)


@given(rho=rhos, k=ks)
def test_kfold_equals_k_sums(rho, k):
    z = ZCDP(rho)
    assert z.compose(k).rho == pytest.approx(math.fsum([rho] * k), rel=1e-12)
    assert (k * GDP(math.sqrt(2 * rho))).mu == pytest.approx(math.sqrt(2 * rho * k), rel=1e-12)


@given(rho=rhos, d1=deltas, d2=deltas)
def test_epsilon_decreasing_in_delta(rho, d1, d2):
    lo, hi = sorted([d1, d2])
    assert ZCDP(rho).epsilon(hi) <= ZCDP(rho).epsilon(lo)
    assert GDP(math.sqrt(2 * rho)).epsilon(hi) <= GDP(math.sqrt(2 * rho)).epsilon(lo)


@given(rho=rhos, delta=deltas)
def test_delta_of_epsilon_round_trip(rho, delta):
    for g in (ZCDP(rho), GDP(math.sqrt(2 * rho)), RDP(lambda a: rho * a)):
        eps = g.epsilon(delta)
        assert eps >= 0
        if eps > 0:
            assert g.delta(eps) <= delta * (1 + 1e-9)


@given(r1=rhos, r2=rhos, delta=deltas)
def test_conversions_monotone(r1, r2, delta):
    lo, hi = sorted([r1, r2])
    # (round-off: ρ one ulp apart gave ε apart by 1e-17 relative, the wrong way)
    assert ZCDP(lo).epsilon(delta) <= ZCDP(hi).epsilon(delta) * (1 + 1e-12)
    assert RDP(lambda a: lo * a).epsilon(delta) <= RDP(lambda a: hi * a).epsilon(delta) * (1 + 1e-9)


@given(eps=epsilons, delta=deltas)
def test_pure_routes_valid(eps, delta):
    """Every route from ε-DP gives an ε' that is at least the exact (randomized-response) one."""
    exact = PureDP(eps).epsilon(delta)
    assert PureDP(eps).to_rdp().epsilon(delta) >= exact * (1 - 1e-12)
    assert PureDP(eps).to_zcdp().epsilon(delta) >= exact * (1 - 1e-12)


@given(eps=epsilons, a1=st.floats(1.0001, 1e5), a2=st.floats(1.0001, 1e5))
def test_rdp_curve_nondecreasing(eps, a1, a2):
    lo, hi = sorted([a1, a2])
    assert float(PureDP(eps).rdp(lo)) <= float(PureDP(eps).rdp(hi)) * (1 + 1e-12)


@given(
    orders=st.lists(st.floats(1.01, 500), min_size=1, max_size=8, unique=True),
    rho=rhos,
    alpha=st.floats(1.001, 1000),
)
def test_from_points_conservative(orders, rho, alpha):
    """A curve rebuilt from points of a convex curve is never below the true curve."""
    o = np.array(sorted(orders))
    pts = RDP.from_points(o, rho * o)
    assert float(pts.rdp(alpha)) >= rho * alpha * (1 - 1e-12)


# ----- bad input ------------------------------------------------------------------------
BAD = [
    (lambda: ZCDP(-1.0), "rho"),
    (lambda: ZCDP(float("nan")), "rho"),
    (lambda: ZCDP(0.1, xi=-0.1), "xi"),
    (lambda: PureDP(-0.5), "epsilon"),
    (lambda: ApproxDP(1.0, 1.0), "delta"),
    (lambda: ApproxDP(1.0, -1e-9), "delta"),
    (lambda: GDP(float("inf")), "mu"),
    (lambda: MCDP(-1, 1), "mu"),
    (lambda: ZCDP(0.5).epsilon(0.0), "delta"),
    (lambda: ZCDP(0.5).epsilon(1.0), "delta"),
    (lambda: ZCDP(0.5).epsilon(float("nan")), "delta"),
    (lambda: ZCDP(0.5).delta(-1.0), "epsilon"),
    (lambda: ZCDP(0.5).rdp(1.0), "alpha"),
    (lambda: ZCDP(0.5).rdp([2.0, 0.5]), "alpha"),
    (lambda: ZCDP(0.5).rdp(float("nan")), "alpha"),
    (lambda: ZCDP(0.5).compose(0), "k"),
    (lambda: ZCDP(0.5).compose(2.5), "k"),
    (lambda: ZCDP(0.5).group(-1), "k"),
    (lambda: RDP.from_points([], []), "orders"),
]


@pytest.mark.parametrize("case", range(len(BAD)))
def test_bad_input_raises_domain_error(case):
    f, name = BAD[case]
    with pytest.raises(DomainError) as err:
        f()
    assert name in str(err.value)
    assert isinstance(err.value, ValueError)


@pytest.mark.parametrize("f", [lambda: ZCDP("0.5"), lambda: PureDP(None), lambda: ZCDP(0.1).compose("3"), lambda: ZCDP(True)])
def test_wrong_types(f):
    with pytest.raises(TypeError):
        f()


def test_domain_error_message_grammar():
    with pytest.raises(DomainError, match=r"rho must be in \[0, inf\); got -1.0"):
        ZCDP(-1.0)


# ----- numerics -------------------------------------------------------------------------
@pytest.mark.parametrize("rho", [1e-12, 1e-8, 1e-4, 1.0, 100.0, 1e4])
@pytest.mark.parametrize("delta", [1e-5, 1e-10, 1e-300])
def test_no_overflow_zcdp(rho, delta):
    e = ZCDP(rho).epsilon(delta)
    assert math.isfinite(e) and e >= 0
    assert GDP(math.sqrt(2 * rho)).epsilon(delta) <= e
    assert RDP(lambda a: rho * a).epsilon(delta) >= GDP(math.sqrt(2 * rho)).epsilon(delta)


@pytest.mark.parametrize("eps", [1e-8, 0.1, 1.0, 50.0, 500.0])
def test_no_overflow_pure(eps):
    a = np.array([1.0 + 1e-12, 1.0 + 1e-6, 1.5, 2.0, 1e3, 1e6, np.inf])
    r = PureDP(eps).rdp(a)
    assert np.all(np.isfinite(r)) and np.all(np.diff(r) >= -1e-12 * eps)
    assert r[-1] == eps and r[0] == pytest.approx(eps * math.tanh(eps / 2), rel=1e-6)
    assert math.isfinite(PureDP(eps).epsilon(1e-300))
    assert math.isfinite(PureDP(eps).to_rdp().epsilon(1e-300))


def test_pure_curve_near_one_is_stable():
    """F_ε just above α = 1 agrees with the KL limit ε·tanh(ε/2) (no 0/0 cancellation)."""
    for eps in [1e-6, 1e-3, 1.0, 10.0]:
        v = float(PureDP(eps).rdp(1.0 + 1e-10))
        assert v == pytest.approx(eps * math.tanh(eps / 2), rel=1e-6)


def test_large_order_rdp():
    assert float(ZCDP(1e-3).rdp(1e6)) == pytest.approx(1e3)
    assert float(ZCDP(1e-3).rdp(np.inf)) == math.inf
    assert float(ZCDP(0.0, xi=0.2).rdp(np.inf)) == 0.2


def test_compose_counts_convert_each_run_first():
    """k × ε-DP mixed with zCDP enters as k·ε·tanh(ε/2), not (kε)·tanh(kε/2)."""
    total = renyi.compose((PureDP(0.1), 10), ZCDP(0.01))
    assert total.rho == pytest.approx(10 * 0.1 * math.tanh(0.05) + 0.01, rel=1e-12)
    approx = renyi.compose((ApproxDP(0.1, 1e-7), 10), ZCDP(0.01))
    assert approx.rho == pytest.approx(total.rho, rel=1e-12)
    assert approx.delta == pytest.approx(1 - (1 - 1e-7) ** 10, rel=1e-9)


def test_approx_dp_epsilon_at_own_delta_is_exact():
    assert ApproxDP(2.0, 1e-5).epsilon(1e-5) == 2.0
