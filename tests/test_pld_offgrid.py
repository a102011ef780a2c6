"""Tight off the tested grid (issue #26, part B): the subsampled-Gaussian δ at 1e-251 (defect 5),
random DP-SGD setups that fell back to RDP or came out of order in δ, the second direction that
could not be resolved at tiny δ, 10¹² steps, and brackets wider than 1 % that say why.

Ground truth: mpmath (40–80 digits) for the Gaussian and subsampled-Gaussian profiles, the
truths quoted in the issue, and dp-accounting (slow tier) as an independent cross-check.
"""

from __future__ import annotations

import math
import warnings

import mpmath as mp
import numpy as np
import pytest

from renyi import dpsgd, routes
from renyi._logmath import log_delta_gaussian
from renyi.errors import ConversionError, RenyiNumericalWarning
from renyi.mechanisms import Gaussian
from renyi.subsampling import PoissonSubsampled

pld = pytest.importorskip("renyi.pld", reason="the PLD engine (renyi.pld) is not part of this installation")
from renyi.pld import distribution as dist  # noqa: E402


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    """Each test starts without remembered answers (they keep answers monotone across calls)."""
    monkeypatch.setattr(pld, "ROUTE_ENABLED", True)
    monkeypatch.setattr(dist, "_MONO", {}, raising=False)
    monkeypatch.setattr(dist, "_ANSWERS", {})
    monkeypatch.setattr(dist, "_ANSWER_NOTES", {}, raising=False)


# ----------------------------------------------------------------------------------------------
# defect 5: the Gaussian profile far in its tail
# ----------------------------------------------------------------------------------------------
def _mp_gaussian_log_delta(eps: float, mu: float) -> float:
    mp.mp.dps = 80
    e, m = mp.mpf(eps), mp.mpf(mu)
    a, b = m / 2 - e / m, -m / 2 - e / m
    phi = lambda z: mp.erfc(-z / mp.sqrt(2)) / 2  # noqa: E731
    return float(mp.log(phi(a) - mp.e**e * phi(b)))


def test_defect5_subsampled_gaussian_delta_not_below_exact():
    """PoissonSubsampled(Gaussian(48.164…), 0.001).delta(0.001) was 6.68269081779e-251, below the
    exact 6.68269081857e-251 (a relative 1.2e-10: log δ of the Gaussian lost digits to
    cancellation at ε/μ = 33). The exact value, removal direction (the larger), by mpmath."""
    s, q, e = 48.16410658965806, 0.001000000000000001, 0.001000000000000001
    mp.mp.dps = 60
    S, Q, E = mp.mpf(s), mp.mpf(q), mp.mpf(e)
    sf = lambda z: mp.erfc(z / mp.sqrt(2)) / 2  # noqa: E731
    x = (mp.log((mp.e**E - 1 + Q) / Q) * 2 * S**2 + 1) / 2  # the loss crosses ε at x
    exact = (1 - Q) * sf(x / S) + Q * sf((x - 1) / S) - mp.e**E * sf(x / S)
    got = PoissonSubsampled(Gaussian(s), q).delta(e)
    assert float(exact) == pytest.approx(6.6826908185687858758e-251, rel=1e-15)
    assert got >= float(exact)
    assert got <= float(exact) * (1 + 1e-8)
    lo, hi = pld.delta_bounds([(PoissonSubsampled(Gaussian(s), q), 1)], e)
    assert lo <= float(exact) <= hi


def test_gaussian_log_delta_matches_mpmath_in_the_tail():
    """log δ(ε) of the Gaussian within 1e-11 of mpmath, from the body to ε/μ = 1000 and for μ
    from 1e-5 to 30 (the first form alone erred by up to 9e-9, more than the engine's margin of
    2e-10 for a profile's own error)."""
    rng = np.random.default_rng(26)
    worst = 0.0
    for _ in range(300):
        mu = 10 ** rng.uniform(-5, 1.5)
        a = rng.uniform(-40, 3) if rng.random() < 0.5 else -(10 ** rng.uniform(0, 3))
        eps = (mu / 2 - a) * mu
        if eps < 0:
            continue
        truth = _mp_gaussian_log_delta(eps, mu)
        if not math.isfinite(truth) or truth < -740:
            continue
        worst = max(worst, abs(float(log_delta_gaussian(eps, mu)) - truth))
    assert worst < 1e-11
    # arrays, broadcasting and the edges keep working
    out = np.asarray(log_delta_gaussian(np.array([0.0, 0.5, 1e3]), 1.0))
    assert out.shape == (3,) and out[0] == pytest.approx(math.log(math.erf(0.5 / math.sqrt(2))), rel=1e-12)
    assert out[2] == -math.inf or out[2] < -1e5


# ----------------------------------------------------------------------------------------------
# off the grid: the issue's three cases, within 1 % of the truth
# ----------------------------------------------------------------------------------------------
ISSUE_CASES = [
    # (σ, q, steps, δ, the truth quoted in the issue, what renyi gave before)
    (1.2145134580804209, 0.0005546305088804292, 23673, 1e-7, 0.37941, 0.6734),
    (1.0631230273236183, 0.0012474521171358147, 25017, 1e-6, 1.01765, 1.1900),
    (1.1268704974600978, 0.0022563764643014164, 3665, 1.333521432163324e-14, 1.4959, 2.048),
]


@pytest.mark.parametrize("sigma,q,steps,delta,truth,before", ISSUE_CASES)
def test_issue_offgrid_cases_within_one_percent(sigma, q, steps, delta, truth, before):
    """The default route gave the RDP route's ε (up to 1.77× the truth): the PLD tilt sat at the
    RDP-optimal order, whose tilted law lies on the steps' far tail (a tilted mean of 24 for an
    answer of 0.38), so no window resolved the answer. Now the tilt centres on the answer."""
    c = dpsgd.epsilon(sigma, q, steps=steps, delta=delta)
    assert c.method.startswith("PLD")
    assert float(c) <= 1.01 * truth
    assert c.lower is not None and c.lower <= truth * (1 + 2e-4)  # the truths are rounded
    assert float(c) - c.lower <= 0.01 * float(c)
    assert float(c) < before


def test_epsilon_non_increasing_in_delta_issue_case():
    """δ = 1e-7 gave 0.6734 and δ = 1e-8 gave 0.4206: ε rose with δ."""
    sigma, q, steps = ISSUE_CASES[0][:3]
    e7 = float(dpsgd.epsilon(sigma, q, steps=steps, delta=1e-7))
    e8 = float(dpsgd.epsilon(sigma, q, steps=steps, delta=1e-8))
    assert e8 >= e7


def test_answers_kept_monotone_whatever_the_order():
    """Asked in any order, the answers for one composition are non-increasing in δ (and the
    δ's non-increasing in ε), and each is still a valid bracket (checked against the answers
    of a fresh process state: every bracket contains the fresh one's lower end)."""
    m = [(PoissonSubsampled(Gaussian(0.9), 0.01), 3000)]
    deltas = [1e-5, 1e-9, 1e-6, 1e-12, 1e-7, 1e-3]
    got = {d: pld.epsilon_bounds(m, d) for d in deltas}
    ordered = sorted(deltas)
    ups = [got[d][1] for d in ordered]
    lows = [got[d][0] for d in ordered]
    assert all(a >= b for a, b in zip(ups, ups[1:]))
    assert all(a >= b for a, b in zip(lows, lows[1:]))
    eps = [0.5, 3.0, 1.0, 2.0]
    ds = {e: pld.delta_bounds(m, e) for e in eps}
    ups_d = [ds[e][1] for e in sorted(eps)]
    assert all(a >= b for a, b in zip(ups_d, ups_d[1:]))
    # a δ asked at an ε answered before keeps to it: δ(ε(δ)) ≤ δ
    e5 = got[1e-5][1]
    assert pld.delta_bounds(m, e5)[1] <= 1e-5 * (1 + 1e-9)


def test_monotone_store_rules():
    """The store's rules on made-up answers: an upper end at a smaller x caps a later one, a
    larger one at a larger x raises it, lower ends likewise, and the note says so."""
    key = ("made-up",)
    assert dist._monotone("epsilon", key, 1e-6, 1.0, 1.2)[:2] == (1.0, 1.2)
    lo, hi, note = dist._monotone("epsilon", key, 1e-5, 0.8, 1.5)  # above the answer at 1e-6
    assert hi == 1.2 and lo == 0.8 and "smaller δ" in note
    lo, hi, _ = dist._monotone("epsilon", key, 1e-7, 0.9, 1.1)  # below the answer at 1e-6
    assert hi == 1.2 and lo == 1.0
    pts = dist._MONO[("epsilon", key)]
    assert [p[0] for p in pts] == sorted(p[0] for p in pts)
    assert all(a[2] >= b[2] and a[1] >= b[1] for a, b in zip(pts, pts[1:]))


def test_second_direction_resolved_at_tiny_delta():
    """σ = 0.7596, q = 0.0177, T = 22977: δ ≤ 6e-13 was unresolved (ConversionError in the
    default route): the add direction's discretisation sent ~1e-15 of round-off mass per step
    to +∞ (to keep its Q-mass ≤ 1), 6e-11 after all steps, above δ. It now goes to the step's
    top grid point."""
    m = [(PoissonSubsampled(Gaussian(0.7596291528065311), 0.017706763988539275), 22977)]
    lo, hi = pld.epsilon_bounds(m, 1e-14, fallback=False)
    assert 61.3 < lo <= hi < 61.7
    assert hi - lo <= 0.01 * hi


def test_huge_step_count_is_sane():
    """10¹² steps of a rate-10⁻⁷ subsampled Gaussian: the PLD route gave [0, 36.6] (no grid
    resolves one step's loss inside a window of 2²⁰ points), 73× the RDP route's 0.503. It now
    counts as unresolved: the default route is the RDP one, and method='pld' falls back to it
    with a warning that gives the reason."""
    comp = PoissonSubsampled(Gaussian(1.0), 1e-7).compose(10**12)
    rdp = routes.best_epsilon(comp, 1e-5, "rdp").value
    assert rdp == pytest.approx(0.50287, rel=1e-4)
    c = routes.best_epsilon(comp, 1e-5)
    assert c.value <= rdp
    with pytest.warns(RenyiNumericalWarning, match="RDP"):
        b = pld.epsilon_bracket([(PoissonSubsampled(Gaussian(1.0), 1e-7), 10**12)], 1e-5)
    assert b.upper == pytest.approx(rdp) and "RDP" in b.note
    with pytest.raises(ConversionError):
        pld.epsilon_bounds([(PoissonSubsampled(Gaussian(1.0), 1e-7), 10**12)], 1e-5, fallback=False)


def test_bracket_notes_empty_when_tight():
    m = [(PoissonSubsampled(Gaussian(1.1), 0.025), 80)]
    b = pld.epsilon_bracket(m, 1e-5)
    assert b.note == "" and b.upper - b.lower <= 0.01 * b.upper
    assert pld.bracket_note(m, 1e-5) == ""
    assert tuple(b)[:2] == pld.epsilon_bounds(m, 1e-5)


# ----------------------------------------------------------------------------------------------
# slow tier: the random-setup scan and a wide bracket's reason
# ----------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_wide_bracket_says_why():
    """T·q = 0.57 sampled steps, δ = 1e-14: the composed law is a mixture over how many steps
    sampled the record, and no single tilt makes its answer region carry the FFT's precision;
    the bracket stays wider than 1 % and says why, in the engine and in the route's detail."""
    m = PoissonSubsampled(Gaussian(1.2386224150367546), 0.0002545391330670227)
    b = pld.epsilon_bracket([(m, 2243)], 1e-14, fallback=False)
    assert b.upper - b.lower > 0.01 * b.upper
    assert "floating-point" in b.note or "window" in b.note or "refinements" in b.note
    c = routes.best_epsilon(m.compose(2243), 1e-14, "pld")
    assert b.note in c.detail


def _setups(n: int, seed: int) -> list[tuple[float, float, int]]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        s = float(rng.uniform(0.6, 2.5))
        q = float(10 ** rng.uniform(-4, -1.3))
        t = int(10 ** rng.uniform(2, 5))
        out.append((s, q, t))
    return out


@pytest.mark.slow
def test_random_setups_scan():
    """40 random DP-SGD setups (σ ∈ [0.6, 2.5], q ∈ [1e-4, 0.05], T ∈ [100, 10⁵]) × 21 δ from
    1e-14 to 1e-2: the PLD engine resolves every question (no fallback), every bracket is at
    most 1 % wide or says why, and ε is non-increasing in δ for every setup. Before: 6
    unresolved, 5 brackets above 1 % (up to 36 %) without a reason."""
    deltas = np.logspace(-14, -2, 21)
    wide_without_reason = []
    for s, q, t in _setups(40, 0):
        m = [(PoissonSubsampled(Gaussian(s), q), t)]
        ups = []
        for d in deltas:
            b = pld.epsilon_bracket(m, float(d), fallback=False)
            ups.append(b.upper)
            if b.upper - b.lower > 0.01 * b.upper and not b.note:
                wide_without_reason.append((s, q, t, d, b))
        assert all(a >= c for a, c in zip(ups, ups[1:])), (s, q, t, ups)
    assert wide_without_reason == []


@pytest.mark.slow
def test_issue_cases_against_dp_accounting():
    """dp-accounting's PLD (an estimate, not a bound) lands inside or within 0.5 % of renyi's
    certified brackets for the issue's first two cases. Not the third: at δ = 1.3e-14 its
    one-shot FFT with truncated tails gives 4.27 where the truth is 1.4959 (issue #17)."""
    dp_accounting = pytest.importorskip("dp_accounting")
    from dp_accounting.pld import pld_privacy_accountant

    for sigma, q, steps, delta, _, _ in ISSUE_CASES[:2]:
        acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
        acc.compose(dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), steps)
        theirs = acc.get_epsilon(delta)
        lo, hi = pld.epsilon_bounds([(PoissonSubsampled(Gaussian(sigma), q), steps)], delta)
        assert lo * 0.995 <= theirs <= hi * 1.005


def test_notes_do_not_pile_up_on_delta_questions():
    """δ-questions record why a bracket is wide too; only ε-questions report it, and the list
    is emptied per question (it grew by one entry per wide δ-question before)."""
    m = [(PoissonSubsampled(Gaussian(1.2386224150367546), 0.0002545391330670227), 2243)]
    for e in (0.05, 0.06, 0.07):
        pld.delta_bounds(m, e)
    assert len(dist._NOTES) <= 2
