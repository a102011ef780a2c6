"""The report: its numbers are the library's, every route is a valid bound, shares and budget."""

from __future__ import annotations

import importlib.util
import json
import math
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import renyi
from renyi import conversions as conv
from renyi.cli._format import fmt_down, fmt_up
from renyi.pipeline import load_pipeline, parse_pipeline
from renyi.report import compute_report

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
HAS_SUBSAMPLING = importlib.util.find_spec("renyi.subsampling") is not None
needs_subsampling = pytest.mark.skipif(not HAS_SUBSAMPLING, reason="renyi.subsampling has not landed yet")


def _pipe(entries, delta=1e-5, budget=None):
    privacy = {"delta": delta}
    if budget is not None:
        privacy["budget"] = budget
    return parse_pipeline({"privacy": privacy, "mechanism": entries})


GAUSS = [{"name": "a", "type": "gaussian", "sigma": 20.0, "count": 1000},
         {"name": "b", "type": "gaussian", "sigma": 5.0, "sensitivity": 2.0, "count": 10}]


def test_gaussian_pipeline_reports_the_exact_epsilon():
    """All-Gaussian, no subsampling: the best is the exact GDP ε, equal to the library's."""
    p = _pipe(GAUSS)
    r = compute_report(p)
    total = renyi.compose(*p.items())
    assert isinstance(total, renyi.GDP)
    assert r.route == "exact"
    assert r.epsilon == total.epsilon(1e-5)
    assert r.route_by_key("exact").epsilon == total.epsilon(1e-5)


def test_every_route_is_at_least_the_exact_epsilon():
    """Exact is the truth for Gaussians: every other route is ≥ it (valid upper bounds)."""
    r = compute_report(_pipe(GAUSS))
    exact = r.route_by_key("exact").epsilon
    assert all(r.route_by_key(k).applicable for k in ("exact", "rdp", "zcdp", "rdp_classic", "basic", "advanced"))
    for route in r.routes:
        assert not route.applicable or route.epsilon >= exact, route


def test_route_numbers_are_the_library_conversions():
    """RDP and zCDP rows equal the library's conversions of the composed curve / ρ."""
    p = _pipe(GAUSS)
    r = compute_report(p)
    rho = 1000 / (2 * 20.0**2) + 10 * 4.0 / (2 * 5.0**2)
    assert r.rho == pytest.approx(rho, rel=1e-12)
    assert r.route_by_key("zcdp").epsilon == conv.zcdp_to_approx_dp(r.rho, 1e-5).value
    curve = renyi.ZCDP(r.rho).to_rdp()
    assert r.route_by_key("rdp").epsilon == pytest.approx(curve.epsilon(1e-5), rel=1e-9)
    assert r.route_by_key("rdp_classic").epsilon >= r.route_by_key("rdp").epsilon


def test_plain_composition_is_much_worse_for_many_runs():
    """Basic and advanced (ε, δ) composition are far above RDP for 1000 runs (why RDP matters)."""
    r = compute_report(_pipe(GAUSS))
    assert r.route_by_key("advanced").epsilon > 3 * r.route_by_key("rdp").epsilon
    assert r.route_by_key("basic").epsilon > r.route_by_key("advanced").epsilon


def test_shares_sum_to_one():
    """Shares of the RDP curve at α* and of ρ each sum to 1."""
    r = compute_report(_pipe(GAUSS))
    assert math.fsum(s.rdp_share for s in r.shares) == pytest.approx(1.0)
    assert math.fsum(s.rho_share for s in r.shares) == pytest.approx(1.0)
    # for Gaussians both shares are the share of ρ
    for s in r.shares:
        assert s.rdp_share == pytest.approx(s.rho_share)


def test_epsilon_alone_is_each_mechanism_on_its_own():
    """'ε alone' is the library's ε of that mechanism's runs only."""
    p = _pipe(GAUSS)
    r = compute_report(p)
    for s, e in zip(r.shares, p.entries):
        assert s.epsilon_alone == renyi.compose((e.mechanism, e.count)).epsilon(1e-5)


def test_pure_dp_pipeline():
    """A pure-DP pipeline: basic composition is exact-sum ε, no route is below the best."""
    r = compute_report(_pipe([{"name": "p", "type": "pure_dp", "epsilon": 0.1, "count": 10}]))
    assert r.route_by_key("basic").epsilon == pytest.approx(1.0)
    assert r.epsilon <= 1.0
    assert not r.route_by_key("exact").applicable


def test_approx_dp_entry_spends_its_delta():
    """An (ε, δ) entry whose δ exceeds the pipeline's δ leaves no finite ε."""
    r = compute_report(_pipe([{"name": "ptr", "type": "approx_dp", "epsilon": 1.0, "delta": 1e-4}], delta=1e-5))
    assert r.epsilon == math.inf


@pytest.mark.parametrize("limit, holds", [(13.0, True), (11.0, False), (5.0, False)])
def test_epsilon_budget_status(limit, holds):
    """An (ε, δ) budget holds iff the accountant's (ε, δ) filter admits the pipeline: ``spent``
    is the filter's ε (the accountant's ``remaining`` agrees), and the report's own (exact,
    fixed-sequence) ε is given beside it. At 11 the exact ε 10.15 fits, the filter's 12.45 does not."""
    r = compute_report(_pipe(GAUSS, budget={"epsilon": limit, "delta": 1e-5}))
    b = r.budget
    assert b.kind == "epsilon" and b.holds is holds and b.fixed_epsilon == r.epsilon
    assert b.spent >= r.epsilon and (b.spent <= limit) is holds
    assert b.remaining == limit - b.spent and "accountant" in b.note
    acct = renyi.Accountant(renyi.ApproxDP(limit, 1e-5))
    admitted = all(acct.can_spend(m, k) and acct.spend(m, k) for m, k in _pipe(GAUSS).items())
    assert admitted is holds
    if holds:
        assert acct.remaining.epsilon == pytest.approx(b.remaining, rel=1e-12)


def test_rho_budget_status():
    """A ρ budget compares the total ρ (the accountant's, summed rounding up)."""
    for limit in (1.0, 2.1):
        r = compute_report(_pipe(GAUSS, budget={"rho": limit}))
        assert r.budget.kind == "rho" and r.budget.spent == pytest.approx(r.rho, rel=1e-14)
        assert r.budget.spent >= r.rho and r.budget.holds is (r.rho <= limit)


def test_mixed_neighbouring_relations_are_converted_and_stated():
    """Mixing add/remove and replace-one mechanisms: the total is stated under replace-one,
    the add/remove entry is converted (Gaussian with doubled sensitivity), and the report says so."""
    r = compute_report(_pipe([{"name": "g", "type": "gaussian", "sigma": 3.0},
                              {"name": "rr", "type": "randomized_response", "epsilon": 1.0}]))
    assert r.neighbouring == "replace_one" and r.to_dict()["neighbouring"] == "replace_one"
    assert "converted: g" in r.neighbouring_note and "replace-one" in r.neighbouring_note
    assert "converted to replace-one" in r.shares[0].assumption
    from renyi.mechanisms import RandomizedResponse

    same = renyi.compose(renyi.Gaussian(3.0, 2.0, neighbouring="replace_one"), RandomizedResponse(1.0))
    assert r.route_by_key("rdp").epsilon == pytest.approx(same.epsilon(r.delta, method="rdp"), rel=1e-9)
    assert r.epsilon <= same.epsilon(r.delta) * (1 + 1e-9)


def test_report_is_strict_json():
    """to_dict() is plain JSON (no NaN/Infinity literals)."""
    r = compute_report(_pipe([{"name": "ptr", "type": "approx_dp", "epsilon": 1.0, "delta": 1e-4}]))
    text = json.dumps(r.to_dict(), allow_nan=False)
    assert json.loads(text)["epsilon"] == "inf"


def test_census_example():
    """examples/census.toml: exact ε, ρ budget holds."""
    p = load_pipeline(EXAMPLES / "census.toml")
    r = compute_report(p)
    assert r.route == "exact" and r.budget.holds
    assert r.epsilon == renyi.compose(*p.items()).epsilon(p.delta)


@needs_subsampling
def test_dpsgd_example_numbers_equal_the_library():
    """examples/dpsgd.toml: the report's ε is the library's ε for the same pipeline."""
    p = load_pipeline(EXAMPLES / "dpsgd.toml")
    r = compute_report(p)
    lib = renyi.compose(*p.items()).epsilon(p.delta)
    assert r.epsilon <= lib
    assert r.route_by_key("rdp").epsilon == lib or r.epsilon == lib
    assert not r.route_by_key("exact").applicable
    assert not r.route_by_key("zcdp").applicable
    assert r.shares[0].assumption == "Poisson sampling, add/remove neighbours"
    assert 0.5 < r.epsilon < 10


@needs_subsampling
def test_mixed_example():
    """examples/mixed.toml: RDP composes all three; zCDP cannot; shares sum to one."""
    p = load_pipeline(EXAMPLES / "mixed.toml")
    r = compute_report(p)
    assert r.route_by_key("rdp").applicable and math.isfinite(r.epsilon)
    assert math.fsum(s.rdp_share for s in r.shares) == pytest.approx(1.0)


# ----- ceiling formatting ----------------------------------------------------------------
@given(x=st.floats(min_value=1e-300, max_value=1e300), digits=st.integers(1, 8))
def test_fmt_up_never_prints_less(x, digits):
    """The printed ε is ≥ the true value (rounded toward +∞) and close to it."""
    s = fmt_up(x, digits)
    assert Decimal(s) >= Decimal(x)
    assert Decimal(s) <= Decimal(x) * (1 + Decimal(10) ** (1 - digits)) * (1 + Decimal("1e-12"))


@given(x=st.floats(min_value=1e-300, max_value=1e300), digits=st.integers(1, 8))
def test_fmt_down_never_prints_more(x, digits):
    """A remaining budget is printed rounded toward −∞."""
    assert Decimal(fmt_down(x, digits)) <= Decimal(x)


@pytest.mark.parametrize("x, s", [(4.7283, "4.729"), (4.75, "4.75"), (0.0, "0"), (math.inf, "inf"),
                                  (1234567.0, "1.235e+06"), (9.99999, "10")])
def test_fmt_up_examples(x, s):
    """Rounding up at 4 significant digits."""
    assert fmt_up(x) == s
