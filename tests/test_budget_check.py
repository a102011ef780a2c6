"""One budget check: `renyi report` says a budget holds exactly when the accountant admits the
pipeline (ρ budgets and (ε, δ) budgets), and says which verdict it gives."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import renyi
from renyi.accountant import BudgetCheck, check_budget
from renyi.errors import BudgetExceededError, ConversionError
from renyi.pipeline import parse_pipeline
from renyi.report import compute_report


def _pipe(entries, budget, delta=1e-5):
    return parse_pipeline({"privacy": {"delta": delta, "budget": budget}, "mechanism": entries})


def _accountant_admits(budget, items) -> bool:
    """An independent run: an Accountant with the budget (δ of approximate steps reserved),
    spending every item in order."""
    def delta_of(m):
        g = m if isinstance(m, renyi.Guarantee) else m.guarantee
        return float(g.params[1]) if isinstance(g, renyi.ApproxDP) else 0.0

    sum_delta = sum(k * delta_of(m) for m, k in items)
    kwargs = {}
    if isinstance(budget, renyi.ApproxDP) and float(budget.delta) > 0 and sum_delta > 0:
        if sum_delta >= float(budget.delta):
            return False
        kwargs["approx_delta"] = sum_delta
    acct = renyi.Accountant(budget, **kwargs)
    try:
        for m, k in items:
            acct.spend(m, k)
    except (BudgetExceededError, ConversionError):
        return False
    return True


def _budget_of(b, delta):
    if "rho" in b:
        return renyi.ZCDP(b["rho"])
    d = b.get("delta", delta)
    return renyi.PureDP(b["epsilon"]) if d == 0 else renyi.ApproxDP(b["epsilon"], d)


APPROX = {"name": "ptr", "type": "approx", "epsilon": 0.5, "delta": 2e-6, "count": 2}
GAUSS = {"name": "g", "type": "gaussian", "sigma": 4.0, "count": 20}
SGD = {"name": "sgd", "type": "gaussian", "sigma": 1.1, "count": 2000,
       "sampling": {"scheme": "poisson", "rate": 0.004}}


@pytest.mark.parametrize("entries, budget, holds", [
    # (ε, δ) steps under an (ε, δ) budget: their δ's are reserved, the rest is the filter's
    ([GAUSS, APPROX], {"epsilon": 8.0, "delta": 1e-5}, True),
    ([GAUSS, APPROX], {"epsilon": 3.0, "delta": 1e-5}, False),
    # their δ's use up the budget's δ: nothing is left for the RDP part
    ([GAUSS, APPROX], {"epsilon": 100.0, "delta": 4e-6}, False),
    # (ε, δ) steps under a ρ budget: no zCDP bound for an approximate step
    ([GAUSS, APPROX], {"rho": 100.0}, False),
    ([GAUSS], {"rho": 100.0}, True),
    # pure-DP budget (δ = 0): Gaussians have no pure-DP bound
    ([GAUSS], {"epsilon": 100.0, "delta": 0.0}, False),
    ([{"name": "p", "type": "pure", "epsilon": 0.1, "count": 10}], {"epsilon": 1.0 + 1e-12, "delta": 0.0}, True),
])
def test_report_verdict_is_the_accountants(entries, budget, holds):
    p = _pipe(entries, budget)
    r = compute_report(p)
    assert r.budget.holds is holds
    assert _accountant_admits(_budget_of(budget, p.delta), p.items()) is holds
    assert r.budget.filter  # the report names the filter that decided
    if not holds:
        assert r.budget.remaining < 0


def test_pld_fits_but_the_adaptive_filter_refuses():
    """A DP-SGD sequence whose fixed-sequence (PLD) ε fits the budget while the accountant's
    adaptive (ε, δ) filter does not: the report says EXCEEDED, and says why."""
    p0 = _pipe([SGD], {"epsilon": 100.0, "delta": 1e-5})
    r0 = compute_report(p0)
    fixed, filt = r0.budget.fixed_epsilon, r0.budget.spent
    assert r0.route == "pld" and fixed == r0.epsilon and fixed < filt
    limit = 0.5 * (fixed + filt)
    r = compute_report(_pipe([SGD], {"epsilon": limit, "delta": 1e-5}))
    assert r.epsilon <= limit and not r.budget.holds
    assert "fixed in advance" in r.budget.note and "accountant" in r.budget.note
    assert not _accountant_admits(renyi.ApproxDP(limit, 1e-5), p0.items())
    # and the other way round: at the filter's own ε the budget holds for both
    r2 = compute_report(_pipe([SGD], {"epsilon": filt * (1 + 1e-9), "delta": 1e-5}))
    assert r2.budget.holds and _accountant_admits(renyi.ApproxDP(filt * (1 + 1e-9), 1e-5), p0.items())


def test_check_budget_returns_the_accountants_numbers():
    items = [(renyi.Gaussian(3.0), 5), (renyi.ApproxDP(0.2, 1e-7), 3)]
    chk = check_budget(renyi.ApproxDP(6.0, 1e-5), items)
    assert isinstance(chk, BudgetCheck) and chk.holds and chk.approx_delta == pytest.approx(3e-7)
    acct = renyi.Accountant(renyi.ApproxDP(6.0, 1e-5), approx_delta=chk.approx_delta)
    for m, k in items:
        acct.spend(m, k)
    assert acct.remaining.epsilon == pytest.approx(6.0 - chk.spent, rel=1e-12)
    assert chk.filter == acct.filter
    refused = check_budget(renyi.ZCDP(10.0), items)
    assert not refused.holds and "zCDP" in refused.reason
    assert check_budget(renyi.GDP(1.0), [(renyi.Gaussian(2.0), 4)]).spent == pytest.approx(1.0)
    assert not check_budget(renyi.GDP(1.0), [(renyi.Gaussian(2.0), 5)]).holds


_ENTRY = st.one_of(
    st.builds(lambda s, k: {"name": "g", "type": "gaussian", "sigma": s, "count": k},
              st.floats(0.5, 50.0), st.integers(1, 50)),
    st.builds(lambda b, k: {"name": "l", "type": "laplace", "scale": b, "count": k},
              st.floats(0.5, 50.0), st.integers(1, 20)),
    st.builds(lambda e, d, k: {"name": "a", "type": "approx", "epsilon": e, "delta": d, "count": k},
              st.floats(0.01, 1.0), st.sampled_from([1e-8, 1e-7, 1e-6]), st.integers(1, 3)),
)
_BUDGET = st.one_of(
    st.builds(lambda e, d: {"epsilon": e, "delta": d}, st.floats(0.1, 30.0), st.sampled_from([1e-6, 1e-5, 1e-3])),
    st.builds(lambda r: {"rho": r}, st.floats(0.01, 10.0)),
)


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(st.lists(_ENTRY, min_size=1, max_size=3), _BUDGET)
def test_report_never_disagrees_with_the_accountant(entries, budget):
    """Random pipelines and budgets: "holds" in the report ⇔ the accountant admits every step
    (a whole report per example, ~2 s each: behind ``-m slow``; the cases above run by default)."""
    entries = [dict(e, name=f"{e['name']}{i}") for i, e in enumerate(entries)]
    p = _pipe(entries, budget)
    r = compute_report(p)
    assert r.budget.holds is _accountant_admits(_budget_of(budget, p.delta), p.items())
    if r.budget.holds:
        assert r.budget.spent <= r.budget.limit and math.isfinite(r.budget.spent)
