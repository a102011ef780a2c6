"""The PLD route in the default minimum over routes (issue #17): chosen where it wins, skipped
where it cannot win, one-sided calibration on its certified upper bound, fallbacks that are
never below the truth, and the regimes where peers fail (tiny δ, T ≥ 10⁵)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import renyi
from renyi import dpsgd, routes
from renyi.definitions import ApproxDP
from renyi.errors import ConversionError, RenyiNumericalWarning
from renyi.mechanisms import Gaussian, Laplace
from renyi.subsampling import PoissonSubsampled

pld = pytest.importorskip("renyi.pld", reason="the PLD engine (renyi.pld) is not part of this installation")

STEP = PoissonSubsampled(Gaussian(1.1), 0.025)


@pytest.fixture(autouse=True)
def pld_on(monkeypatch):
    """These tests are about the default: on, whatever RENYI_PLD_ROUTE says in this shell."""
    monkeypatch.setattr(pld, "ROUTE_ENABLED", True)
    monkeypatch.delenv("RENYI_PLD_ROUTE", raising=False)


def test_default_minimum_is_pld_for_dpsgd():
    """The issue's new-user case (q = 0.025, σ = 1.1, T = 80, δ = 1e-5): renyi gave 1.642 on
    the RDP route; the default is now the PLD upper bound (dp-accounting 1.306, PRV 1.316),
    named, with its lower bound. Fails if the default silently falls back to RDP."""
    c = STEP.compose(80).best_epsilon(1e-5)
    assert c.method == "pld"
    assert c.lower is not None and 1.29 < c.lower <= c.value < 1.32
    assert STEP.compose(80).epsilon(1e-5) == c.value
    assert STEP.compose(80).epsilon(1e-5, method="rdp") > 1.6


def test_dpsgd_functions_default_to_pld():
    """renyi.dpsgd.epsilon/delta: the PLD route by default, RDP when asked for."""
    e = dpsgd.epsilon(1.0, 0.01, steps=10_000, delta=1e-5)
    assert e.method.startswith("PLD") and e.lower is not None and e.lower <= e
    assert 6.17 < e < 6.25  # dp-accounting 6.188, the truth ≈ 6.19; RDP 6.71
    r = dpsgd.epsilon(1.0, 0.01, steps=10_000, delta=1e-5, method="rdp")
    assert r.method.startswith("RDP") and r > 6.6
    d = dpsgd.delta(1.0, 0.01, steps=10_000, epsilon=float(e))
    assert d.method.startswith("PLD") and d <= 1e-5 * (1 + 1e-6)


def test_escape_hatch_turns_pld_off(monkeypatch):
    """RENYI_PLD_ROUTE=0 (read at import into ROUTE_ENABLED; dpsgd reads the variable): the
    default minimum is the RDP route again; method="pld" still works."""
    monkeypatch.setattr(pld, "ROUTE_ENABLED", False)
    monkeypatch.setenv("RENYI_PLD_ROUTE", "0")
    obj = STEP.compose(80)
    assert obj.best_epsilon(1e-5).method == "rdp"
    assert obj.best_epsilon(1e-5, method="pld").method == "pld"
    assert dpsgd.epsilon(1.1, 0.025, steps=80, delta=1e-5).method.startswith("RDP")


def test_pld_skipped_where_it_cannot_win(monkeypatch):
    """Pure Gaussian compositions (the exact route is the truth) and one run of an
    unsubsampled mechanism (its own exact profile) never ask the PLD engine."""
    calls = []
    real = pld.epsilon_bounds

    def spy(*a, **k):
        calls.append(a)
        return real(*a, **k)

    monkeypatch.setattr(pld, "epsilon_bounds", spy)
    assert Gaussian(2.0).compose(10).best_epsilon(1e-5).method == "exact"
    assert routes.best_epsilon(Laplace(1.0), 1e-5).method == "direct"
    acct = renyi.Accountant()
    acct.spend(Gaussian(3.0), count=5)
    assert acct.best_epsilon(1e-5).method == "exact"
    assert calls == []
    # ... while a mixed pipeline does use it
    mixed = Laplace(20.0).compose(10) + STEP.compose(80)
    assert mixed.best_epsilon(1e-5).method == "pld" and len(calls) == 1


def test_accountant_reports_pld_for_fixed_sequences_budget_stays_rdp():
    """spend(m, count=T): the reported ε may use PLD (the sequence is fixed), and the report
    says so; the budget filter is still the RDP one (adaptive validity)."""
    from renyi.errors import BudgetExceededError

    acct = renyi.Accountant(budget=ApproxDP(3.0, 1e-5))
    acct.spend(STEP, count=80)
    c = acct.best_epsilon(1e-5)
    assert c.method == "pld" and c.value < 1.32
    assert "fixed in advance" in routes.route(c.method).assumption
    # the filter is RDP's: a budget between the PLD ε (1.31) and the RDP ε (1.64) refuses
    strict = renyi.Accountant(budget=ApproxDP(1.5, 1e-5))
    with pytest.raises(BudgetExceededError):
        strict.spend(STEP, count=80)


def test_calibrate_on_pld_is_one_sided_and_needs_less_noise():
    """renyi.calibrate for DP-SGD: by default through the solvers on the tightest route; the
    certified PLD upper bound at the returned σ meets the target, and the σ is below RDP's."""
    target = ApproxDP(1.5, 1e-5)

    def make(s):
        return PoissonSubsampled(Gaussian(s), 0.025).compose(80)

    cal = renyi.calibrate(make, target, bounds=(0.5, 3.0))
    assert cal.method == "pld"
    assert pld.epsilon_bounds([(PoissonSubsampled(Gaussian(cal.value), 0.025), 80)], 1e-5)[1] <= 1.5
    rdp = renyi.calibrate(make, target, bounds=(0.5, 3.0), method="rdp")
    assert cal.value < 0.97 * rdp.value
    # within 1e-3 of the boundary: 0.1 % less noise already fails on the certified bound
    assert pld.epsilon_bounds([(PoissonSubsampled(Gaussian(cal.value * 0.999), 0.025), 80)], 1e-5)[1] > 1.5 * 0.999


@pytest.mark.parametrize("solver", ["noise_multiplier", "steps", "sample_rate"])
def test_dpsgd_solvers_one_sided_on_pld_upper(solver):
    """Each DP-SGD solver (default route) returns a parameter whose certified PLD upper bound
    meets the target, and gives more utility than the RDP solver."""
    eps, dlt, q, t, s = 2.0, 1e-5, 0.01, 2000, 1.0
    if solver == "noise_multiplier":
        x = dpsgd.noise_multiplier(eps, dlt, q, steps=t)
        rdp = dpsgd.noise_multiplier(eps, dlt, q, steps=t, method="rdp")
        cfg = (float(x), q, t)
        assert x < rdp
    elif solver == "steps":
        x = dpsgd.steps(eps, dlt, s, q)
        rdp = dpsgd.steps(eps, dlt, s, q, method="rdp")
        cfg = (s, q, int(x))
        assert x > rdp
        # one more step breaks the target on the certified bound
        assert pld.epsilon_bounds([(PoissonSubsampled(Gaussian(s), q), int(x) + 1)], dlt)[1] > eps
    else:
        x = dpsgd.sample_rate(eps, dlt, s, steps=t)
        rdp = dpsgd.sample_rate(eps, dlt, s, steps=t, method="rdp")
        cfg = (s, float(x), t)
        assert x > rdp
    assert x.method.startswith("PLD")
    upper = pld.epsilon_bounds([(PoissonSubsampled(Gaussian(cfg[0]), cfg[1]), cfg[2])], dlt)[1]
    assert upper <= eps and x.achieved <= eps


def test_unresolvable_grid_falls_back_never_below(monkeypatch):
    """A question the grid cannot resolve (here: a tiny cap on grid points): asked by name it
    returns the RDP route's ε with a warning; in the default minimum PLD steps aside (the RDP
    route answers); never a smaller number, never an exception."""
    from renyi.pld import distribution as dist

    items = [(PoissonSubsampled(Gaussian(0.9), 0.02), 500)]
    rdp = routes.best_epsilon(items, 1e-7, "rdp").value
    monkeypatch.setattr(dist, "_MAX_POINTS", 8)
    dist._ANSWERS.clear()
    with pytest.warns(RenyiNumericalWarning, match="RDP route"):
        lo, hi = pld.epsilon_bounds(items, 1e-7)
    assert (lo, hi) == (0.0, rdp)
    with pytest.raises(ConversionError):
        pld.epsilon_bounds(items, 1e-7, fallback=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        c = routes.best_epsilon(items, 1e-7)
    assert c.method == "rdp" and c.value == rdp


@pytest.mark.parametrize("delta", [1e-10, 1e-18])
def test_tiny_delta_long_training_is_never_below_the_truth(delta):
    """The issue's regime where dp-accounting's one-shot FFT returns 32.19 below the truth
    (q = 0.001, σ = 0.6, T = 10⁶, δ = 1e-10: truth ≥ 32.39): the certified upper bound stays
    above it, the bracket is narrower than 1 %, and δ = 1e-18 is finite and resolved."""
    lo, hi = pld.epsilon_bounds([(PoissonSubsampled(Gaussian(0.6), 0.001), 10**6)], delta)
    assert hi - lo <= 0.01 * hi
    if delta == 1e-10:
        assert hi >= 32.39 and lo <= 32.45
    assert math.isfinite(hi) and hi < routes.best_epsilon([(PoissonSubsampled(Gaussian(0.6), 0.001), 10**6)],
                                                          delta, "rdp").value


def test_coarse_grid_lower_end_is_a_valid_profile():
    """Regression: on a grid much coarser than a step's loss (q = 0.001), the optimistic
    discretisation collapsed to one atom with mass > 1 whose profile exceeded the true one
    (a 'lower' bound above the truth). It must stay below the true profile everywhere."""
    from renyi.pld._grid import discretise, support_range
    from renyi.pld._profiles import pairs_for

    rem, _ = pairs_for(PoissonSubsampled(Gaussian(0.6), 0.001))
    for h in (2.0**-7, 2.0**-9, 2.0**-12):
        lo_i, hi_i = support_range(rem, h, -30.0)
        _, low = discretise(rem, h, lo_i, hi_i)
        m, z = np.exp(low.log_mass), low.values
        assert m.sum() + low.inf_mass <= 1 + 1e-9
        for e in np.linspace(-0.02, 0.3, 33):
            truth = math.exp(float(rem.log_delta(np.array([e]))[0]))
            mine = float(np.sum(m * np.maximum(0.0, -np.expm1(e - z)))) + low.inf_mass
            assert mine <= truth * (1 + 1e-9) + 1e-15


def test_coarse_grid_bracket_contains_the_truth():
    """T = 100 steps of q = 0.001, σ = 0.6 at δ = 1e-5: dp-accounting at a 1e-5 grid gives
    0.7795936 (an estimate, not a bound); the certified bracket contains it."""
    lo, hi = pld.epsilon_bounds([(PoissonSubsampled(Gaussian(0.6), 0.001), 100)], 1e-5)
    assert lo <= 0.7795936 <= hi <= 0.7796 * 1.01


def test_discounted_tail_sums_match_the_recursion():
    """The blocked filter behind δ(ε) equals the first-order recursion, including rates at
    which one block covers only a few points."""
    from renyi.pld._fft import _discounted_tail_sums

    rng = np.random.default_rng(1)
    for n, rate in [(1, 0.1), (2, 1.0), (50, 0.3), (3000, 0.5), (5000, 3.0), (400, 300.0), (30, 0.0)]:
        x = rng.random(n)
        ref = np.zeros(n)
        acc = 0.0
        for a in range(n - 1, -1, -1):
            ref[a] = acc
            acc = math.exp(-rate) * (acc + x[a])
        np.testing.assert_allclose(_discounted_tail_sums(x, rate), ref, rtol=1e-12, atol=0)


def test_infinite_mass_above_delta_is_infinite_without_a_warning():
    """An (ε, δ₀) step with δ₀ > δ: the loss is +∞ with probability δ₀, so no finite ε exists
    at δ (not a grid that 'could not resolve' it): (∞, ∞), and no fallback warning."""
    import warnings

    from renyi.definitions import ApproxDP

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert pld.epsilon_bounds([(ApproxDP(1.0, 1e-4), 3)], 1e-5) == (math.inf, math.inf)
    lo, hi = pld.epsilon_bounds([(ApproxDP(1.0, 1e-4), 3)], 1e-3)
    assert 0.0 < lo <= hi < math.inf


@pytest.mark.parametrize("q,sigma,steps,delta,inside", [
    (0.001, 0.6, 100_000, 1e-5, None),
    (0.001, 0.8, 100_000, 1e-10, 4.0687),  # dp-accounting's estimate (not a bound)
])
def test_heavy_tilt_is_narrowed_until_its_window_fits(q, sigma, steps, delta, inside):
    """Regression (the tightness grid, before): at small q and σ the RDP-optimal tilt moves the
    composed law onto the far tail of the steps' loss, wider than any window of 2²⁰ points at
    the grid the step needs; the engine fell back to RDP (first case) or returned a 74 % bracket
    whose upper end was above the RDP route (second). A smaller tilt fits and is as valid."""
    m = PoissonSubsampled(Gaussian(sigma), q)
    lo, hi = pld.epsilon_bounds([(m, steps)], delta, fallback=False)
    assert 0 < lo <= hi <= lo * 1.01
    assert hi < routes.best_epsilon([(m, steps)], delta, "rdp").value
    if inside is not None:
        assert lo <= inside <= hi


def test_mixed_neighbouring_relations_are_aligned_as_the_routes_do():
    """Randomized response is replace-one, noise mechanisms add/remove by default: the PLD
    engine used to compose each under its own relation (a number valid under neither). It now
    restates the list under replace-one first, exactly as renyi.compose and the routes do."""
    from renyi._neighbouring import align
    from renyi.mechanisms import RandomizedResponse

    items = [(Gaussian(5.0), 10), (RandomizedResponse(epsilon=0.5), 3), (Laplace(10.0), 5)]
    lo, hi = pld.epsilon_bounds(items, 1e-6)
    assert (lo, hi) == pld.epsilon_bounds(list(align(items)[1]), 1e-6)
    assert routes.best_epsilon(items, 1e-6).value == pytest.approx(hi, rel=1e-12)
    # a Poisson-subsampled Gaussian restated under replace-one has its own pair now (issue #26:
    # PoissonSubsampledReplaceOne), below the group privacy of two the RDP route uses
    mixed = [(PoissonSubsampled(Gaussian(1.0), 0.01), 100), (RandomizedResponse(epsilon=0.5), 1)]
    lo, hi = pld.epsilon_bounds(mixed, 1e-6, fallback=False)
    assert 0 < lo <= hi < routes.best_epsilon(mixed, 1e-6, "rdp").value
    # other Poisson-subsampled mechanisms are known only under add/remove: still refused
    with pytest.raises(ConversionError):
        pld.epsilon_bounds([(PoissonSubsampled(Laplace(1.0), 0.01), 100),
                            (RandomizedResponse(epsilon=0.5), 1)], 1e-6)
