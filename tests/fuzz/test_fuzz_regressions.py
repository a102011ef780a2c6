"""Regression tests, one per finding of the long fuzz profile (each failed before its fix)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from typer.testing import CliRunner

import renyi
from renyi import conversions as conv
from renyi.cli import app
from renyi.errors import ConversionError, DomainError

MAX = 1.7976931348623157e308


def test_rdp_point_at_the_largest_order_converts():
    """An order near the largest double put the optimiser's bracket past exp's range (OverflowError)."""
    assert renyi.RDP.from_point(MAX, 0.0).epsilon(5e-324) == 0.0
    e = renyi.RDP.from_point(MAX, 3.0).epsilon(1e-5)
    # at α ≈ 1.8e308 the point is ε-DP up to a negligible mass: ε(δ) is 3-DP's tight ε
    assert 3.0 + math.log1p(-1e-5 * (1 + math.exp(-3.0))) - 1e-12 <= e <= 3.0 + 1e-9


def test_discrete_gaussian_delta_at_huge_epsilon():
    """a = εσ²/Δ − Δ/2 overflowed to inf and math.floor(inf) raised."""
    dg = renyi.DiscreteGaussian(2)
    assert dg.delta(MAX) == 0.0
    assert dg.delta(1e300) == 0.0
    # the cut-off is a bound on the tail, not a change of the value where it is representable
    assert 0.0 < dg.delta(10.0) < 1e-80
    assert dg.delta(1.0) == pytest.approx(0.0072487768, rel=1e-8)


def test_randomized_response_zero_at_the_smallest_delta_is_immediate():
    """The 'slow' call was the first import of the PLD engine (scipy), now warmed up by the oracle."""
    import time

    renyi.RandomizedResponse(0).epsilon(0.5)  # imports paid here
    t0 = time.process_time()  # CPU time: the load of other processes does not count
    assert renyi.RandomizedResponse(0).epsilon(5e-324) == 0.0
    assert time.process_time() - t0 < 2.0


def test_zcdp_rho_for_epsilon_zero_is_in_the_domain():
    """ε = 0 is a valid target: only ρ = 0 meets it."""
    assert conv.zcdp_rho_for(0.0, 1e-5) == 0.0
    assert conv.zcdp_rho_for(0, 0.5) == 0.0
    assert conv.zcdp_to_approx_dp(0.0, 1e-5).value <= 0.0
    with pytest.raises(DomainError, match="epsilon"):
        conv.zcdp_rho_for(-5e-324, 1e-5)


def test_zcdp_rho_for_a_target_below_xi():
    """ε < ξ: ρ = 0 is returned only when it meets the target, else no ρ exists."""
    rho = conv.zcdp_rho_for(0.5, 1e-5, 0.5)
    assert rho == 0.0 and conv.zcdp_to_approx_dp(rho, 1e-5, 0.5).value <= 0.5
    with pytest.raises(ConversionError, match="rho"):
        conv.zcdp_rho_for(0.1, 1e-5, 0.5)


def test_pure_dp_rdp_at_the_kl_order():
    """pure_dp_rdp is defined on [1, ∞]: α = 1 is the KL, ε·tanh(ε/2)."""
    assert conv.pure_dp_rdp(1e300, 1.0) == 1e300
    assert conv.pure_dp_rdp(1.0, 1.0) == pytest.approx(math.tanh(0.5))
    np.testing.assert_allclose(conv.pure_dp_rdp(1.0, np.array([1.0, 2.0])),
                               [math.tanh(0.5), conv.pure_dp_rdp(1.0, 2.0)])
    with pytest.raises(DomainError, match="alpha"):
        conv.pure_dp_rdp(1.0, 1.0 - 1e-16)


def test_gaussian_with_overflowing_rho_names_sigma():
    """σ = 1e-300 made ρ = Δ²/(2σ²) infinite; the error came from ZCDP and named rho."""
    with pytest.raises(DomainError, match="sigma") as info:
        renyi.Gaussian(1e-300)
    assert info.value.name == "sigma"
    with pytest.raises(DomainError, match="mu"):
        renyi.GDP(1e300)
    g = renyi.GDP(renyi.definitions.gdp.MU_MAX)
    assert math.isfinite(g.rho) and g.epsilon(1e-5) >= g.rho


def test_cli_gaussian_tiny_sigma_is_one_clear_line():
    res = CliRunner().invoke(app, ["epsilon", "gaussian", "--sigma", "1e-300"])
    assert res.exit_code == 2
    err = res.stderr.strip().splitlines()
    assert len(err) == 1 and "sigma" in err[0] and "rho must be" not in err[0]


@pytest.mark.parametrize("sigma", [1e-3, 1e-8, 1e-150])
def test_pld_route_with_huge_losses_falls_back(sigma):
    """A Gaussian with σ ≪ Δ overflowed the PLD engine's tilted moments (ValueError: NaN to integer)."""
    from renyi import routes

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = routes.epsilon_table(renyi.Gaussian(sigma), 1e-5)
    exact = next(r for r in table if r.route.name == "exact").conversion.value
    for r in table:
        if r.conversion is not None:
            assert r.conversion.value >= exact * (1 - 1e-12)
    res = CliRunner().invoke(app, ["epsilon", "gaussian", "--sigma", repr(sigma), "--delta", "1e-5"])
    assert res.exit_code == 0, res.output


def test_pld_with_no_finite_loss_atoms():
    """Randomized response at a huge ε: its finite atoms underflow, the PLD grid had none
    (ValueError: zero-size array to reduction operation minimum)."""
    m = renyi.SubsampledWithoutReplacement(renyi.RandomizedResponse(510511), 0.01)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # the removal pair puts mass γ = 0.01 where the other has none: δ(ε) = γ exactly (the
        # PLD route); the RDP route gives the trivial 1
        assert 0.01 <= m.delta(1.0) <= 1.0
        res = CliRunner().invoke(app, ["delta", "randomized-response", "--epsilon", "510511", "--sampling",
                                       "without-replacement", "--eps", "1"])
    assert res.exit_code == 0, res.output


def test_cli_warnings_are_one_line(capsys):
    """The console script shows renyi's warnings as one line, and hides numpy's RuntimeWarnings."""
    from renyi.cli._common import one_line_warnings
    from renyi.errors import RenyiNumericalWarning

    with warnings.catch_warnings():  # restores warnings.showwarning on exit
        warnings.simplefilter("always")
        one_line_warnings()
        warnings.warn("PLD could not resolve", RenyiNumericalWarning)
        warnings.warn("overflow encountered", RuntimeWarning)
    err = capsys.readouterr().err
    assert err == "warning: PLD could not resolve\n"


def test_discrete_laplace_epsilon_root_uses_the_exact_delta():
    """DiscreteLaplace(1e-16).epsilon(0.7) took > 5 s: each step of its root search asked the
    whole route table; the exact δ (no route is smaller) is enough."""
    import time

    m = renyi.DiscreteLaplace(scale=1e-16)
    m.epsilon(0.5)  # imports paid here
    t0 = time.process_time()  # CPU time: the load of other processes does not count
    assert m.epsilon(0.6985904132976533) == 1e16
    assert time.process_time() - t0 < 2.0
    m = renyi.DiscreteLaplace(scale=0.5)
    e = m.epsilon(1e-6)
    assert m.delta(e) <= 1e-6 and m.delta(e * (1 - 1e-6)) > 1e-6


# ----- findings of the strategies over the rest of the API (test_fuzz_more.py) ------------------
def test_routes_native_method_on_a_composition_is_a_domain_error():
    from renyi import routes

    with pytest.raises(DomainError, match="native"):
        routes.best_delta((renyi.Gaussian(2.0), 3), 1.0, "native")
    assert routes.best_delta(renyi.Gaussian(2.0), 1.0, "native").value > 0


def test_kov_delta_allocation_blocks_truncation_delta_validate():
    from renyi.allocation import allocation_blocks
    from renyi.composition import kov_delta
    from renyi.truncation import truncation_delta

    with pytest.raises(TypeError):
        kov_delta([1.0], 3, 0.5)
    with pytest.raises(DomainError, match="k"):
        allocation_blocks(52, 9.9e-202)
    with pytest.raises(DomainError, match="k"):
        allocation_blocks(3, 4)
    assert allocation_blocks(10, 3) == (4, 3, 3)
    with pytest.raises(DomainError, match="rate"):
        truncation_delta(1e6, 10, 10)
    assert 0.0 < truncation_delta(0.5, 3, 10) <= 1.0


def test_decode_floats_refuses_a_damaged_value():
    from renyi.errors import LedgerError
    from renyi.ledger import decode_floats

    for bad in (1, -math.inf, {}, None):
        with pytest.raises(LedgerError):
            decode_floats(bad)


def test_allocate_with_extreme_budgets_is_a_domain_error():
    from renyi import accuracy

    with pytest.raises(DomainError):
        accuracy.allocate(5e-324, [{"name": "q", "sensitivity": 1.4e16, "cells": 4}, accuracy.Query("r", cells=3)])
    with pytest.raises(DomainError):
        accuracy.allocate(9.5e299, [{"name": "q", "sensitivity": 1e155, "cells": 3}, accuracy.Query("r", cells=3)],
                          loss="max_relative")


def test_samplers_out_of_int64_range_is_a_domain_error():
    from renyi.samplers import sample_discrete_laplace

    with pytest.raises(DomainError, match="int64"):
        sample_discrete_laplace(8e299, size=(2, 3), rng=np.random.default_rng(0))


def test_divergences_at_overflowing_losses():
    from renyi import divergences, plrv

    loss = plrv.randomized_response_privacy_loss(3.0e299)
    assert plrv.power_means(loss, 2e16) == math.inf  # was NaN (∞ − ∞ in log-sum-exp)
    assert divergences.discrete_gaussian_normalizer(7.97e299) == pytest.approx(math.sqrt(2 * math.pi) * 7.97e299)
    assert divergences.discrete_gaussian_normalizer(1.0) == pytest.approx(2.506628288043, abs=1e-12)


def test_stability_histogram_n_without_a_representable_n():
    from renyi import limits

    with pytest.raises(DomainError, match="no n"):
        limits.stability_histogram_n(5e-324, 5e-324, 5e-324)
    assert limits.stability_histogram_n(1.0, 1e-6, 0.05) == 88


# ---- the four crashes of the last long fuzz run (2026-11-24) ----------------------------------

def test_schedule_with_overflowing_epochs_is_a_domain_error() -> None:
    from renyi import dpsgd
    from renyi.errors import DomainError

    with pytest.raises(DomainError, match="epochs"):
        dpsgd.schedule(5e-324, steps=491, epochs=4.3e185)


def test_exponential_divergence_when_the_rate_ratio_overflows() -> None:
    import sys

    import mpmath as mp

    from renyi.divergences import exponential_divergence

    big = sys.float_info.max
    for a in (0.1, 0.5, 0.9):
        with mp.workdps(50):
            r1, r2, aa = mp.mpf(0.25), mp.mpf(big), mp.mpf(a)
            exact = float((aa * mp.log(r1) + (1 - aa) * mp.log(r2) - mp.log(aa * r1 + (1 - aa) * r2)) / (aa - 1))
        assert exponential_divergence(0.25, big, a) == pytest.approx(exact, rel=1e-12)
    assert exponential_divergence(0.25, big, 2.0) == math.inf


def test_gaussian_histogram_n_at_the_smallest_beta() -> None:
    from renyi.limits import gaussian_histogram_n

    assert gaussian_histogram_n(52, 7.3e299, 5e-324) >= 1


def test_optimal_homogeneous_composition_with_no_room_for_delta_prime() -> None:
    from renyi.composition import optimal_homogeneous_composition
    from renyi.errors import DomainError

    with pytest.raises(DomainError, match="delta_prime"):
        optimal_homogeneous_composition(4.8e299, 0.87, 1539, 5e-324)


def test_dpsgd_steps_at_a_huge_target_is_a_capped_int():
    """ε = 6e299 at a rate of 5e-324: the solver's T was +∞ and int(min(floor(∞), 2⁶²)) raised
    OverflowError; the answer is now the cap, verified like any other."""
    t = renyi.dpsgd.steps(6.219569876578099e+299, 5e-324, 1.0000000000000002, 5e-324)
    assert int(t) == 1 << 62


@pytest.mark.parametrize("lam", [0.0, -0.0])
def test_failure_probability_at_zero_half_width_is_in_domain(lam):
    """λ = 0 is in failure_probability's domain [0, ∞) (the fuzz oracle counted it as accepted
    out of domain): P[|Z| > 0] < 1 for discrete noise, which is 0 with positive probability."""
    from renyi.accuracy import failure_probability

    p = failure_probability(renyi.DiscreteLaplace(100.0), lam, 1)
    assert 0.99 < p < 1.0


@pytest.mark.parametrize("fn", [lambda a: np.array([1.0, 2.0]), lambda a: "x", lambda a: np.ones((2, 2)),
                                lambda a: {"a": 1}])
def test_a_user_curve_of_the_wrong_shape_is_a_domain_error(fn):
    """A user's RDP curve returning the wrong shape or type raised numpy's ValueError
    ("operands could not be broadcast"): now a DomainError saying what the curve must return."""
    g = renyi.RDP(fn)
    for call in (lambda: g.rdp(2.0), lambda: g.rdp(np.array([2.0, 3.0, 4.0])), lambda: g.epsilon(1e-5),
                 lambda: renyi.compose(g, renyi.Gaussian(1.0)).epsilon(1e-5)):
        with pytest.raises(DomainError, match="must return one real number per order"):
            call()


def test_the_hang_check_counts_cpu_time_not_the_load(monkeypatch):
    """The oracle's hang limit is CPU time of the call (ITIMER_PROF), so a call that only waits
    (what a loaded machine does to every call) is not a hang, and a busy loop is; a call blocked
    without using CPU is caught by the wall-clock backstop."""
    import time

    import _fuzz_oracle as fo

    monkeypatch.setattr(fo, "TIMEOUT", 0.2)
    monkeypatch.setattr(fo, "WALL_TIMEOUT", 5.0)
    start, hangs = len(fo.FINDINGS), fo.COUNTS["hang"]

    def busy() -> int:
        t0, n = time.process_time(), 0
        while time.process_time() - t0 < 3.0:
            n += 1
        return n

    assert fo.call("sleep(0.5)", time.sleep, 0.5, valid=None) is None  # waiting: 0.5 s wall, ~0 CPU
    assert fo.COUNTS["hang"] == hangs
    assert fo.call("busy()", busy, valid=None) is None
    assert fo.COUNTS["hang"] == hangs + 1 and "CPU" in fo.FINDINGS[-1]
    monkeypatch.setattr(fo, "WALL_TIMEOUT", 0.5)
    assert fo.call("sleep(3)", time.sleep, 3.0, valid=None) is None
    assert fo.COUNTS["hang"] == hangs + 2 and "blocked" in fo.FINDINGS[-1]

    def starved() -> int:  # computing, but slowly (a niced process on a loaded machine): 1.5 s wall, ~0.75 s CPU
        t0, n = time.perf_counter(), 0
        while time.perf_counter() - t0 < 1.5:
            t1 = time.process_time()
            while time.process_time() - t1 < 0.05:
                n += 1
            time.sleep(0.05)
        return n

    monkeypatch.setattr(fo, "TIMEOUT", 5.0)
    assert fo.call("starved()", starved, valid=None) is not None
    assert fo.COUNTS["hang"] == hangs + 2
    del fo.FINDINGS[start:]
    fo.COUNTS["hang"] = hangs


@pytest.mark.parametrize("method", ["independent", "union"])
def test_failure_probability_of_a_zero_width_interval_is_one(method):
    """λ = 5e-324 against σ ≈ 8000: the cell's tail is 1 and log(−expm1(0)) raised
    'math domain error' (a bare ValueError)."""
    from renyi.accounting.accuracy import failure_probability

    assert failure_probability(renyi.Gaussian(8001.586762761519), 5e-324, 504, method=method) == 1.0
    assert failure_probability(renyi.Gaussian(1.0), 0.0, 1, method=method) == 1.0
    assert failure_probability(renyi.Laplace(1.0), 0.0, 3, method=method) == 1.0


@pytest.mark.parametrize("m", [1e308, 10**200, 10**400], ids=["1e308", "10^200", "10^400"])
def test_a_huge_max_rows_per_unit_is_a_spec_error(m):
    """max_rows_per_unit = 1e308 (an integer-valued float) raised OverflowError deriving ℓ₂
    (int too large to convert to float), and 1e200 an error about calibration bounds."""
    from renyi.release import SpecError, make_plan, parse_spec

    spec = {"data": {"source": "people.csv", "privacy_unit": "id", "max_rows_per_unit": m},
            "privacy": {"budget": {"epsilon": 1.0, "delta": 1e-10}},
            "query": [{"name": "c", "type": "count", "by": ["g"], "keys": {"g": ["a", "b"]}}]}
    with pytest.raises(SpecError, match="max_rows_per_unit"):
        make_plan(parse_spec(spec))


@pytest.mark.parametrize(("rows", "groups", "per_group", "cells", "per_row"),
                         [(2**60 + 1, None, None, 2, 1), (3, 2, 2, 5, 7), (10**30 + 7, 3, 10**29, 4, 3),
                          (5, None, 2, 9, 1)])
def test_derived_sensitivities_are_never_below_the_exact_ones(rows, groups, per_group, cells, per_row):
    """ℓ₁ and ℓ₂ as floats are upper bounds on the exact integers and √integers (float(2⁶⁰ + 1)
    and √ of an integer beyond 2⁵³ rounded down before)."""
    from fractions import Fraction

    from renyi.release import derive_sensitivity

    s = derive_sensitivity(rows, groups, per_group, cells, per_row)
    g = min(rows, cells, groups if groups is not None else rows)
    r = min(rows, per_group if per_group is not None else rows)
    full = min(rows // r, g)
    rem = rows - full * r if full < g else 0
    assert Fraction(s.l1) >= per_row * min(rows, g * r)
    assert Fraction(s.l2) ** 2 >= per_row**2 * (full * r * r + rem * rem)
    assert s.l2 <= s.l1 * (1 + 1e-15)


def test_two_laplace_at_the_smallest_delta_is_quick_and_pure():
    """compose(Laplace(0.001), Laplace(0.001)).epsilon(5e-324) took > 30 s of CPU: the convex
    minorant of the PLD's optimistic discretisation (1.2·10⁶ points) removed one or two points
    per O(n) round for 10⁴ rounds, and stopped unconverged."""
    import time

    a = renyi.Laplace(0.001)
    t0 = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e = renyi.compose(a, a).epsilon(5e-324)
    assert time.process_time() - t0 < 10.0
    assert 2000.0 * (1 - 1e-9) <= e <= 2000.0 * (1 + 1e-12)  # the pure ε of the pair, at δ ≈ 0


@pytest.mark.parametrize("seed", range(4))
def test_the_greatest_convex_minorant_is_convex_and_below_every_point(seed):
    """The vertices it returns pass the slope test (the stack and the vectorised test agree)
    and the chain lies below every point, also on long nearly collinear stretches."""
    from renyi.accounting.pld._grid import _greatest_convex_minorant

    rng = np.random.default_rng(seed)
    n = 20_000
    x = np.sort(rng.uniform(0.0, 10.0, n))
    x[0], x[-1] = 0.0, 10.0
    y = 1.0 - 0.1 * x + 1e-13 * rng.standard_normal(n)  # collinear up to round-off: cascades
    y[n // 3: n // 2] += np.linspace(0, 1e-3, n // 2 - n // 3) ** 2  # a convex bump
    v = _greatest_convex_minorant(x, y)
    assert v[0] == 0 and v[-1] == n - 1
    s = np.diff(y[v]) / np.diff(x[v])
    assert np.all(s[1:] >= s[:-1])
    chain = np.interp(x, x[v], y[v])
    assert np.all(chain <= y + 1e-12)


def test_a_cap_reached_almost_surely_is_refused_in_the_users_words():
    """TruncatedPoisson(rate ≈ 1, max_batch = n): δ = P[Bin(n, q) ≥ n] rounds to 1, and the
    refusal named an internal "delta must be in [0, 1); got 1.0"; it names max_batch."""
    t = renyi.TruncatedPoisson(renyi.DiscreteGaussian(1.9), rate=0.9999999999999999, max_batch=2, dataset_size=2)
    with pytest.raises(DomainError, match=r"max_batch must be above 2 .* got 2") as e:
        t.epsilon(0.001)
    assert e.value.name == "max_batch"
    # a cap above the data set never binds: δ = 0, the Poisson-subsampled guarantee
    t = renyi.TruncatedPoisson(renyi.Gaussian(1.0), rate=0.5, max_batch=3, dataset_size=2)
    assert t.truncation_delta == 0.0 and math.isfinite(t.epsilon(1e-5))


def test_advanced_composition_route_with_an_underflowing_delta_share():
    """δ = 5e-324 split over two items underflows to 0, and the advanced-composition route
    raised "delta_prime must be in (0, 1); got 0.0", which refused the whole question."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c = renyi.compose((renyi.DiscreteLaplace(40.64013795816594), 44), (renyi.DiscreteLaplace(0.1), 1))
        e = c.epsilon(5e-324)
    assert 44 / 40.64013795816594 + 10 - 1e-9 <= e <= (44 / 40.64013795816594 + 10) * (1 + 1e-12)


def test_mcdp_with_mu_below_tau_squared_over_two_has_an_rdp_curve():
    """(μ, τ)-mCDP with μ < τ²/2 (ξ = μ − τ²/2 < 0) raised "xi must be in [0, inf)" from
    .rdp / .to_rdp, so composing it with a mechanism of the other relation was refused."""
    m = renyi.MCDP(284.4666354346992, 82.46368325130612)
    rho, xi = 82.46368325130612**2 / 2, 284.4666354346992 - 82.46368325130612**2 / 2
    for a in (1.5, 2.0, 100.0):
        assert m.rdp(a) == pytest.approx(max(0.0, xi + rho * a), rel=1e-15)
    assert m.rdp(1 + 1e-12) == pytest.approx(284.4666354346992, rel=1e-9) and m.rdp(math.inf) == math.inf  # → ξ + ρ = μ
    assert m.to_rdp().rdp(2.0) == m.rdp(2.0)
    # BS16 Lemma 24 is tight for the Gaussian: μ = τ²/2 = ρ
    assert renyi.MCDP(0.5, 1.0).rdp(3.0) == pytest.approx(1.5)
    mr = renyi.MCDP(284.4666354346992, 82.46368325130612, neighbouring="replace_one")
    assert math.isfinite(renyi.compose(mr, renyi.Gaussian(1.0)).epsilon(1e-3))


def test_a_pld_bracket_that_falls_back_to_rdp_is_ordered():
    """The exponential mechanism's PLD uses the pure-DP pair, which dominates it without being
    tight; its lower end 5.16e-5 was returned with the RDP route's upper end 0.0 (Pinsker on the
    bounded-range curve: δ ≥ TV), a bracket [5.16e-5, 0]."""
    from renyi import pld

    m = renyi.PoissonSubsampled(renyi.ExponentialMechanism(0.01), 0.01)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lo, up = pld.epsilon_bounds([(m, 668)], 0.001)
    assert 0.0 <= lo <= up


@pytest.mark.parametrize("args", [(3.5266672787558666e+299, 859, 10.0), (6.147664250716925e+16, 26, -5.75e-180),
                                  (9007199254740992.0, 449, 0.1), (2.2482781360631835e+109, 1, 0.25),
                                  (0.9999999999999999, 283, -math.inf)])
def test_kov_delta_at_huge_epsilon_or_minus_infinity_is_a_probability(args):
    """exp of the rounding margin of a huge kε overflowed ('math range error'), and ε′ = −∞
    made ceil(+∞) raise; δ ≤ 1 is the answer there (δ(−∞) = 1 exactly)."""
    from renyi.guarantees.approx import kov_delta

    d = kov_delta(*args)
    assert 0.0 <= d <= 1.0
    if args[2] == -math.inf:
        assert d == 1.0


def test_stability_histogram_n_at_the_smallest_delta():
    """1/δ overflowed to inf at δ = 5e-324, so the threshold τ was inf and the call refused
    with "no n up to 1.8e308 is enough"; τ = 1 + (2/ε)·log(1/δ) is finite."""
    from renyi.accounting.limits import stability_histogram_n

    n = stability_histogram_n(2.9431861211331635e+141, 5e-324, 5e-324)
    assert 1 <= n <= 16
    assert stability_histogram_n(1.0, 5e-324, 0.05) >= stability_histogram_n(1.0, 1e-300, 0.05)
    assert stability_histogram_n(1.0, 1e-6, 0.05) == 88


def test_laplace_divergence_of_equal_laws_at_the_largest_order_is_zero():
    """t = 0 at α = 1.8e308: 2α − 1 overflowed to inf and ∞·0 gave NaN."""
    from renyi import divergences

    assert divergences.laplace_divergence(0.0, MAX) == 0.0
    assert divergences.laplace_divergence(1.0, MAX) == 1.0  # D_α → D_∞ = t


# ----- the hangs of the long profile (issue #26), each with the validity of its answer ---------
def _cpu(fn):
    """(result, CPU seconds) of fn() with warnings silenced (CPU time: the machine's load does not count)."""
    import time

    t0 = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = fn()
    return out, time.process_time() - t0


def test_poisson_profile_at_a_subnormal_rate_matches_mpmath():
    """(e^ε − 1)/q overflowed at q = 5e-324 for every ε ≳ 1e-16, and the remove pair's profile
    became δ = 0 there: the sampled mass q of every step was lost."""
    import mpmath as mp

    from renyi.accounting.pld._profiles import PoissonProfile, _gaussian

    mp.mp.dps = 50
    sigma = 0.027
    mu = mp.mpf(1) / mp.mpf(sigma)
    for q in (5e-324, 1e-310, 1e-300):
        prof = PoissonProfile(_gaussian(1.0 / sigma), q)
        es = [1e-12, 1e-5, 1e-3, 1.0, 10.0]
        got = prof.log_delta(np.array(es))
        for e, g in zip(es, got):
            inner = mp.log1p(mp.expm1(mp.mpf(e)) / mp.mpf(q))
            dg = mp.ncdf(-inner / mu + mu / 2) - mp.exp(inner) * mp.ncdf(-inner / mu - mu / 2)
            want = float(mp.log(mp.mpf(q) * dg))
            assert g == pytest.approx(want, rel=1e-9, abs=1e-9), (q, e, g, want)


def test_subsampled_gaussian_at_a_subnormal_rate_is_not_below_the_sampled_mass():
    """A privacy breach behind the `dpsgd.steps(2, 5e-324, 1e-16, 5e-324)` hang (19 s of CPU):
    with the sampled mass lost, the PLD gave δ(1) = 0 for two steps of σ = 1e-16 at q = 5e-324
    (truth ≈ 2q = 1e-323: a sampled record's loss is ≈ 5e31) and ε(5e-324) ≈ 1.7e-7 (truth ≈
    1e32), so the solver answered 2187 steps. Two steps put mass 2q > δ at a loss ≈ 1/(2σ²)."""
    from renyi import pld

    m = renyi.PoissonSubsampled(renyi.Gaussian(1e-16), 5e-324)
    for t in (2, 50):
        lo, hi = pld.delta_bounds([(m, t)], 1.0)
        assert hi >= t * 5e-324 * (1 - 1e-9)
        assert float(renyi.dpsgd.delta(1e-16, 5e-324, steps=t, epsilon=1.0)) >= t * 5e-324 * (1 - 1e-9)
        e, _ = _cpu(lambda: renyi.dpsgd.epsilon(1e-16, 5e-324, steps=t, delta=5e-324, method="pld"))
        assert float(e) >= 1e31
    t, cpu = _cpu(lambda: renyi.dpsgd.steps(2, 5e-324, 1e-16, 5e-324))
    assert int(t) <= 1 and cpu < 5.0  # two steps are ≈ 1e32-DP at this δ


def test_noise_multiplier_at_a_subnormal_delta_declines_the_grid_quickly():
    """`dpsgd.noise_multiplier(0.5, 5e-324, 5e-324, steps=7)` took 114 s of CPU: every PLD
    evaluation of its bisection built grids of 2·10⁶ points at δ = 5e-324, where the
    transform's round-off margins (relative to δ) do not hold. The PLD route now declines δ
    below the smallest normal double before building a grid; the RDP answer meets the target."""
    s, cpu = _cpu(lambda: renyi.dpsgd.noise_multiplier(0.5, 5e-324, 5e-324, steps=7))
    assert cpu < 5.0
    assert float(renyi.dpsgd.epsilon(float(s), 5e-324, steps=7, delta=5e-324, method="rdp")) <= 0.5
    with pytest.raises(ConversionError, match="smallest normal double"):
        renyi.routes.route("pld").epsilon(renyi.routes.items([(renyi.PoissonSubsampled(renyi.Gaussian(0.03),
                                                                                          5e-324), 7)]), 5e-324)


def test_subsampled_laplace_add_pair_support_is_its_own():
    """The add pair of a subsampled Laplace put its loss in [−0.01, 0] (−log(1 − q), the bound
    for an unbounded base) where it is within 1e-6: δ(0.001) of 7 518 steps of Laplace(9893)
    at q = 0.01 built grids of 2.7·10⁶ points a step (> 5 s of CPU per question)."""
    from renyi.accounting.pld._profiles import pairs_for

    m = renyi.PoissonSubsampled(renyi.Laplace(9893.0), 0.01)
    for prof in pairs_for(m):
        for p in (prof, prof.dual()):
            s = p.sup_loss()
            assert s < 2e-6
            # the bound is the ess sup: δ vanishes just above it and not below
            assert p.log_delta(np.array([s * (1 + 1e-9) + 1e-300]))[0] == -np.inf
            assert p.log_delta(np.array([s * (1 - 1e-3)]))[0] > -np.inf
    c, cpu = _cpu(lambda: renyi.routes.best_delta((m, 7518), 0.001))
    assert cpu < 5.0 and c.method == "pld"
    assert 8e-36 <= c.lower <= c.value <= 1.19e-35


@pytest.mark.parametrize("args", [(1e300, 0.5, 1 - 1e-16, 7), (1e300, 1e-9, 1 - 1e-16, 1000)])
def test_noise_multiplier_at_a_huge_target_stops_at_the_floor(args):
    """ε = 1e300: the RDP solver stops at σ = 2⁻¹² (the target is met there), but the PLD
    refinement then walked σ toward 0 by factors of e (≈ 1e-150 meets ε = 1e300), 40 PLD
    evaluations (> 5 s of CPU). It now stops at the same floor; the answer meets the target."""
    eps, delta, q, t = args
    s, cpu = _cpu(lambda: renyi.dpsgd.noise_multiplier(eps, delta, q, steps=t))
    assert float(s) == 2.0**-12 and s.achieved <= eps and cpu < 5.0
    assert float(renyi.dpsgd.epsilon(float(s), q, steps=t, delta=delta)) <= eps


def test_a_run_that_rarely_samples_the_example_is_zero_dp_at_that_delta():
    """σ = 1e-16 at q = 5e-324 over 2·10⁴ steps at δ = 1e-9: 5 s of CPU in the PLD grid for
    ε = 1e36, where the example is in some batch with probability p ≈ 1e-319 ≤ δ, so ε = 0
    (outside that event the outputs have the same law). Below p the answer is not 0."""
    e, cpu = _cpu(lambda: renyi.dpsgd.epsilon(1e-16, 5e-324, steps=20000, delta=1e-9))
    assert float(e) == 0.0 and cpu < 5.0
    e, _ = _cpu(lambda: renyi.dpsgd.epsilon(1e-16, 5e-324, steps=20000, delta=1e-9, method="pld"))
    assert float(e) == 0.0
    # p = 1 − (1 − 1e-3)^10 ≈ 0.00996; with σ = 0.1 a sampled step is almost surely
    # distinguishable: at δ = p/2 the ε is far from 0 (PLD bracket [42.14, 42.15]), at δ ≥ p it is 0
    from renyi.sampling.subsampling import PoissonSubsampledReplaceOne

    p = -math.expm1(10 * math.log1p(-1e-3))
    m = renyi.PoissonSubsampled(renyi.Gaussian(0.1), 1e-3)
    assert m.compose(10).epsilon(p * (1 + 1e-9)) == 0.0
    assert m.compose(10).epsilon(p / 2) > 40.0
    assert renyi.pld.epsilon_bounds([(m, 10)], p / 2)[0] > 40.0
    r1 = PoissonSubsampledReplaceOne(renyi.Gaussian(0.1), 1e-3)
    assert renyi.pld.epsilon_bounds([(r1, 10)], p * (1 + 1e-9)) == (0.0, 0.0)
    assert renyi.pld.epsilon_bounds([(r1, 10)], p / 2)[0] > 40.0


def test_dpsgd_epsilon_stops_at_a_bound_of_zero():
    """σ = 0.5, q = 1e-5, 2·10⁴ steps at δ = 0.1: the RDP route gives ε = 0 (no valid bound is
    smaller), yet the PLD grid was built for the same 0: 22 s of CPU."""
    e, cpu = _cpu(lambda: renyi.dpsgd.epsilon(0.5, 1e-5, steps=20000, delta=0.1))
    assert float(e) == 0.0 and e.lower == 0.0 and cpu < 5.0


def test_delta_of_a_run_that_almost_never_samples_the_example_is_that_probability():
    """`dpsgd.delta(0.5, 5e-324, steps=2, epsilon=0)` built PLD grids for > 5 s of CPU: δ(ε) ≤
    P(the example is ever sampled) = 1 − (1 − q)² ≈ 1e-323, below the smallest normal double,
    where no finer answer has a significant bit more. The answer is that probability (an ulp up)."""
    for method in (None, "pld"):
        d, cpu = _cpu(lambda: renyi.dpsgd.delta(0.5, 5e-324, steps=2, epsilon=0.0, method=method))
        assert 2 * 5e-324 <= float(d) <= 4 * 5e-324 and cpu < 5.0
    # and in the normal range the engine still answers (a finer δ than that probability)
    m = renyi.PoissonSubsampled(renyi.Gaussian(0.5), 1e-3)
    lo, hi = renyi.pld.delta_bounds([(m, 10)], 0.0)
    assert 0.0 < lo <= hi < -math.expm1(10 * math.log1p(-1e-3))


def test_laplace_runs_at_a_tiny_delta_skip_the_grid_when_the_pure_bound_is_tight():
    """compose(Laplace(27.4), Laplace(4.7e5), DiscreteLaplace(82.9), Laplace(4.7e5)).epsilon(1e-30)
    took > 5 s of CPU in the PLD grid, for no gain: each Laplace run is at its largest loss with
    probability ≥ 1/2, so ε(1e-30) ≥ Σεᵢ + log(1 − 2⁴·1e-30), which the pure bound Σεᵢ meets."""
    c = renyi.compose(renyi.Laplace(27.42050734766171), renyi.Laplace(470000.0),
                      renyi.DiscreteLaplace(82.89580560595128), renyi.Laplace(470000.0))
    e, cpu = _cpu(lambda: c.best_epsilon(1e-30))
    pure = 1 / 27.42050734766171 + 2 / 470000.0 + 1 / 82.89580560595128
    assert cpu < 5.0 and pure * (1 - 1e-12) <= e.value <= pure * (1 + 1e-12)
    from renyi.accounting.routes import _laplace_floor, items

    # the floor is below the truth: one Laplace run, ε(δ) = ε₀ + 2·log(1 − δ) exactly
    for d in (1e-30, 1e-6, 0.1):
        f = _laplace_floor(items(renyi.Laplace(2.0)), d)
        assert f is not None and f <= 0.5 + 2 * math.log1p(-d)
    # and below the PLD's certified upper bound where the grid answers
    for m, k, d in ((renyi.Laplace(1.0), 3, 1e-6), (renyi.DiscreteLaplace(2.0), 4, 1e-4)):
        f = _laplace_floor(items([(m, k)]), d)
        assert f is not None and f <= renyi.pld.epsilon_bounds([(m, k)], d)[1]
