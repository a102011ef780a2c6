"""The one list of accounting routes (renyi.routes): compositions keep their mechanisms, the
answer is the minimum over the valid routes, one route can be selected, and the report, the
accountant, calibration and the CLI draw from the same list."""

from __future__ import annotations

import math
import sys
import types

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import renyi
from renyi import routes
from renyi.definitions import GDP, ZCDP, ApproxDP, PureDP
from renyi.definitions.base import items_of
from renyi.errors import ConversionError, DomainError
from renyi.mechanisms import Gaussian, Laplace, RandomizedResponse

from _exact import gaussian_epsilon


def _mixed():
    return Gaussian(3.0).compose(20) + Laplace(20.0).compose(5) + RandomizedResponse(epsilon=0.2)


def _dpsgd(T=500):
    return renyi.PoissonSubsampled(Gaussian(1.1), 0.01).compose(T)


# ----- compositions keep their mechanisms ---------------------------------------------------
def test_every_way_of_composing_keeps_the_mechanisms():
    """compose(), a + b, k * m and m.compose(k) all remember the (mechanism, count) items."""
    g, lap = Gaussian(2.0), Laplace(5.0)
    assert items_of(renyi.compose((g, 3), lap)) == ((g, 3), (lap, 1))
    assert items_of(g + lap) == ((g, 1), (lap, 1))
    assert items_of(4 * g) == ((g, 4),)
    assert items_of(g.compose(4)) == ((g, 4),)
    assert items_of((g.compose(2) + lap).compose(3)) == ((g, 6), (lap, 3))
    assert items_of(sum([g, lap, g])) == ((g, 2), (lap, 1))


def test_composed_values_keep_their_types_and_equality():
    """The composed value is the same guarantee as before (type, equality, repr)."""
    c = renyi.compose(GDP(1.0), GDP(1.0))
    assert type(c) is GDP and c == GDP(math.sqrt(2.0)) and repr(c) == repr(GDP(math.sqrt(2.0)))
    assert type(Gaussian(1.0).compose(3)) is GDP
    assert isinstance(_mixed(), renyi.RDP)
    assert hash(c) == hash(GDP(math.sqrt(2.0)))


def test_items_do_not_leak_into_shared_guarantees():
    """Composing copies: a mechanism's guarantee and the inputs stay plain."""
    g = GDP(1.0)
    _ = g.compose(3) + g
    assert items_of(g) == ((g, 1),)
    m = Gaussian(1.0)
    c = m.compose(1)
    assert items_of(c) == ((m, 1),) and items_of(m.guarantee) == ((m.guarantee, 1),)


def test_a_plain_guarantee_answers_with_its_own_conversion():
    """A guarantee built directly keeps its own conversion (method = the theorem)."""
    c = ZCDP(0.5).best_epsilon(1e-5)
    assert c.method == "CKS20 Cor. 13"
    assert ZCDP(0.5).best_epsilon(1e-5, method="zcdp").value == c.value


# ----- the minimum over the routes -------------------------------------------------------------
@pytest.mark.parametrize("make", [lambda: Gaussian(2.0).compose(10), _mixed, lambda: _dpsgd(200),
                                  lambda: Laplace(1.0), lambda: PureDP(0.5).compose(8),
                                  lambda: ApproxDP(0.1, 1e-7) + Gaussian(100.0)])
def test_best_is_the_minimum_over_the_applicable_routes(make):
    """best_epsilon = min over the table's applicable routes, and names that route (the PLD
    route counts in the default minimum only where the engine offers itself)."""
    obj = make()
    table = routes.epsilon_table(obj, 1e-5)
    offered = routes.pld_available() is not None and getattr(routes.pld_available(), "ROUTE_ENABLED", True)
    vals = {r.route.name: r.conversion.value for r in table if r.applicable and (offered or r.route.name != "pld")}
    best = obj.best_epsilon(1e-5)
    assert best.value == min(vals.values())
    assert best.method in vals and vals[best.method] == best.value
    assert obj.epsilon(1e-5) == best.value


def test_basic_composition_wins_where_it_is_tightest():
    """A tiny (ε, δ) item beside a quiet Gaussian: basic composition beats zCDP and RDP, and the
    minimum uses it (every valid route counts)."""
    obj = ApproxDP(0.1, 1e-7) + Gaussian(100.0)
    best = obj.best_epsilon(1e-5)
    assert best.value < obj.best_epsilon(1e-5, method="zcdp").value
    assert best.value <= 0.2


def test_exact_route_short_circuits_and_is_the_truth():
    """For Gaussians the best is the exact route, equal to mpmath's ε of μ-GDP."""
    c = Gaussian(2.0).compose(10).best_epsilon(1e-6)
    assert c.method == "exact"
    truth = gaussian_epsilon(math.sqrt(10) / 2.0, 1e-6)
    assert c.value >= truth and c.value == pytest.approx(truth, rel=1e-9)


@settings(max_examples=25, deadline=None)
@given(sigma=st.floats(0.5, 20.0), k=st.integers(1, 200), logd=st.floats(-12.0, -2.0))
def test_every_route_is_a_valid_bound_for_gaussians(sigma, k, logd):
    """Every applicable route's ε for k Gaussians is ≥ the exact ε (ground truth, mpmath)."""
    delta = 10.0**logd
    obj = Gaussian(sigma).compose(k)
    truth = gaussian_epsilon(math.sqrt(k) / sigma, delta)
    for r in routes.epsilon_table(obj, delta):
        if r.applicable:
            assert r.conversion.value >= truth * (1 - 1e-12) - 1e-12, r


def test_delta_routes_agree_with_epsilon_routes():
    """δ(ε(δ)) ≤ δ through the best route (the two directions are the same bound)."""
    for obj in (_mixed(), _dpsgd(300), Gaussian(1.0).compose(4)):
        e = obj.epsilon(1e-6)
        assert obj.delta(e) <= 1e-6 * (1 + 1e-6)
        assert obj.best_delta(e).method in routes.names()


# ----- method selection ----------------------------------------------------------------------
def test_method_selects_one_route():
    """method= names one route; its value is that route's, never the minimum of others."""
    obj = _mixed()
    for name in ("rdp", "zcdp", "rdp_classic"):
        c = obj.best_epsilon(1e-5, method=name)
        assert c.method == name
        assert c.value == routes.route(name).epsilon(obj, 1e-5).value
    assert obj.epsilon(1e-5, method="rdp_classic") >= obj.epsilon(1e-5)
    assert Laplace(2.0).epsilon(1e-5, method="rdp") >= Laplace(2.0).epsilon(1e-5)


def test_method_that_does_not_apply_is_a_clear_error():
    """exact for a Laplace mechanism: ConversionError saying why; unknown names: DomainError."""
    with pytest.raises(ConversionError, match="Gaussian"):
        Laplace(1.0).epsilon(1e-5, method="exact")
    with pytest.raises(DomainError, match="method must be one of"):
        Gaussian(1.0).epsilon(1e-5, method="magic")
    with pytest.raises(DomainError, match="delta"):
        Gaussian(1.0).epsilon(1.5)


def test_native_is_the_objects_own_conversion():
    """method='native' is the object's own conversion (the mechanism's exact profile)."""
    lap = Laplace(1.0)
    assert lap.best_epsilon(1e-5, method="native").method != "direct"
    assert lap.epsilon(1e-5, method="native") == lap.epsilon(1e-5, method="direct")


# ----- a stand-in PLD engine (the contract of renyi.pld) -----------------------------------------
@pytest.fixture
def fake_pld(monkeypatch):
    """A fake renyi.pld honouring the contract: supports / epsilon_bounds / delta_bounds. Its
    "upper" is 0.9 × the RDP route's ε (pretending to be tighter), its lower 0.85 ×."""
    mod = types.ModuleType("renyi.pld")
    calls = []

    def supports(m):
        return isinstance(m, (Gaussian, Laplace, renyi.PoissonSubsampled))

    def epsilon_bounds(items, delta, **kw):
        calls.append(list(items))
        e = routes.route("rdp").epsilon(list(items), delta).value
        return 0.85 * e, 0.9 * e

    def delta_bounds(items, epsilon, **kw):
        d = routes.route("rdp").delta(list(items), epsilon).value
        return 0.5 * d, 0.6 * d

    mod.supports, mod.epsilon_bounds, mod.delta_bounds, mod.calls = supports, epsilon_bounds, delta_bounds, calls
    monkeypatch.setitem(sys.modules, "renyi.pld", mod)
    return mod


def test_pld_route_is_used_with_its_bracket(fake_pld):
    """With a PLD engine, the best is its upper bound and Conversion.lower its lower bound; it
    receives the mechanisms themselves, merged with their counts."""
    obj = _dpsgd(400)
    c = obj.best_epsilon(1e-5)
    rdp = obj.epsilon(1e-5, method="rdp")
    assert c.method == "pld" and c.value == pytest.approx(0.9 * rdp) and c.lower == pytest.approx(0.85 * rdp)
    assert fake_pld.calls[-1] == [(renyi.PoissonSubsampled(Gaussian(1.1), 0.01), 400)]
    assert obj.best_delta(1.0).method == "pld"
    assert routes.route("rdp").epsilon(obj, 1e-5).lower is None


def test_pld_route_needs_every_mechanism_supported(fake_pld):
    """One unsupported item (randomized response here) makes the PLD route unavailable."""
    table = {r.route.name: r for r in routes.epsilon_table(_mixed(), 1e-5)}
    assert not table["pld"].applicable and "RandomizedResponse" in table["pld"].note
    with pytest.raises(ConversionError):
        _mixed().epsilon(1e-5, method="pld")


def test_pld_errors_make_the_route_unavailable(monkeypatch, fake_pld):
    """An engine that cannot answer (ConversionError) is skipped: the minimum of the others."""

    def refuse(items, delta, **kw):
        raise ConversionError("grid too coarse")

    monkeypatch.setattr(fake_pld, "epsilon_bounds", refuse)
    c = _dpsgd(100).best_epsilon(1e-5)
    assert c.method == "rdp"


def test_no_pld_engine_means_no_pld_route(monkeypatch):
    """Without renyi.pld installed the route says so and the others answer."""
    monkeypatch.setitem(sys.modules, "renyi.pld", None)
    table = {r.route.name: r for r in routes.epsilon_table(_dpsgd(10), 1e-5)}
    assert not table["pld"].applicable and "not available" in table["pld"].note


def test_calibration_meets_the_target_on_the_upper_bound(fake_pld):
    """Calibrating σ through the PLD route: the certified upper bound meets the target, and σ
    is smaller than through RDP (a tighter route needs less noise)."""
    target = ApproxDP(1.0, 1e-5)

    def make(s):
        return renyi.PoissonSubsampled(Gaussian(s), 0.02).compose(200)

    cal = renyi.calibrate(make, target)
    assert cal.method == "pld"
    assert cal.achieved.epsilon <= 1.0
    upper = routes.best_epsilon(make(cal.value), 1e-5, "pld").value
    assert upper <= 1.0 and upper > 0.99
    rdp = renyi.calibrate(make, target, method="rdp")
    assert rdp.method == "rdp" and rdp.value > cal.value
    assert routes.best_epsilon(make(rdp.value), 1e-5, "rdp").value <= 1.0


def test_accountant_uses_pld_only_for_its_own_spends(fake_pld, tmp_path):
    """The accountant's ε draws from the same routes: PLD when this object made every spend
    (fixed in advance), else the grid routes; its filter is unchanged."""
    m = renyi.PoissonSubsampled(Gaussian(1.1), 0.01)
    path = tmp_path / "l.db"
    with renyi.Accountant(ledger=path) as acct:
        acct.spend(m, count=300)
        c = acct.best_epsilon(1e-5)
        assert c.method == "pld" and c.lower is not None
        assert c.value == pytest.approx(routes.best_epsilon((m, 300), 1e-5).value)
        assert acct.report(1e-5).assumption == routes.route("pld").assumption
    with renyi.Accountant(ledger=path) as again:  # the ledger keeps guarantees, not mechanisms
        c2 = again.best_epsilon(1e-5)
        assert c2.method == "rdp"
        assert c2.value == pytest.approx(routes.best_epsilon((m, 300), 1e-5, "rdp").value, rel=1e-3)
        with pytest.raises(ConversionError):
            again.best_epsilon(1e-5, method="pld")


# ----- the report and the CLI draw from the same list --------------------------------------------
def test_report_rows_are_the_routes():
    """The report's rows are the routes in order, with the routes' values."""
    from renyi.pipeline import parse_pipeline
    from renyi.report import compute_report

    p = parse_pipeline({"privacy": {"delta": 1e-6}, "mechanism": [
        {"name": "g", "type": "gaussian", "sigma": 3.0, "count": 20},
        {"name": "l", "type": "laplace", "scale": 20.0, "count": 5}]})
    r = compute_report(p)
    assert tuple(x.key for x in r.routes) == routes.names()
    table = routes.epsilon_table(renyi.compose(*p.items()), 1e-6)
    for row, res in zip(r.routes, table):
        assert row.applicable == res.applicable
        if res.applicable:
            assert row.epsilon == res.conversion.value
    assert r.epsilon == routes.best(table).value <= renyi.compose(*p.items()).epsilon(1e-6)
    assert {x.key: x.adaptive for x in r.routes}["rdp"] is True


def test_cli_method_option(tmp_path):
    """renyi epsilon/delta/calibrate take --method and report the route used."""
    import json

    from typer.testing import CliRunner

    from renyi.cli import app

    run = CliRunner()
    out = run.invoke(app, ["epsilon", "gaussian", "--sigma", "2", "--steps", "10", "--method", "rdp", "--json"])
    assert out.exit_code == 0, out.output
    d = json.loads(out.output)
    assert d["route"] == "rdp"
    assert d["epsilon"] == Gaussian(2.0).compose(10).epsilon(1e-5, method="rdp")
    out = run.invoke(app, ["delta", "gaussian", "--sigma", "2", "--steps", "10", "--eps", "3", "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["method"] == "exact"
    out = run.invoke(app, ["calibrate", "gaussian", "--epsilon", "1", "--delta", "1e-5", "--method", "zcdp",
                           "--json"])
    assert out.exit_code == 0, out.output
    d = json.loads(out.output)
    assert d["method"] == "zcdp" and d["achieved"]["epsilon"] <= 1.0
    bad = run.invoke(app, ["epsilon", "laplace", "--scale", "1", "--method", "exact"])
    assert bad.exit_code == 2 and "Gaussian" in bad.output


# ----- the hypothesis-testing view ---------------------------------------------------------------
@pytest.mark.parametrize("mu", [0.3, 1.0, 2.5])
def test_tpr_bound_is_the_gaussian_tradeoff(mu):
    """For μ-GDP the bound equals the exact trade-off Φ(Φ⁻¹(FPR) + μ) and is never below it."""
    from scipy.stats import norm

    obj = Gaussian(1.0 / mu)
    for c, a in zip(routes.tpr_bounds(obj, (1e-3, 1e-2, 0.1)), (1e-3, 1e-2, 0.1)):
        truth = float(norm.cdf(norm.ppf(a) + mu))
        assert c.value >= truth - 1e-12 and c.value == pytest.approx(truth, rel=1e-7)
        assert c.method == "exact"


def test_tpr_bound_edges_and_monotonicity():
    """TPR bound ∈ [FPR, 1], non-decreasing in FPR; FPR = 0 and 1 are handled; bad FPR raises."""
    obj = _mixed()
    cs = routes.tpr_bounds(obj, (0.0, 1e-4, 1e-2, 0.5, 1.0))
    vals = [c.value for c in cs]
    assert vals == sorted(vals) and vals[-1] == 1.0 and 0.0 <= vals[0] <= vals[1]
    assert all(v >= a for v, a in zip(vals, (0.0, 1e-4, 1e-2, 0.5, 1.0)))
    with pytest.raises(DomainError, match="fpr"):
        routes.tpr_bound(obj, 1.5)


def test_report_gives_the_tradeoff():
    """renyi report's TPR at FPR ∈ {1e-3, 1e-2, 0.1} is routes.tpr_bounds of the pipeline."""
    from renyi.pipeline import parse_pipeline
    from renyi.report import compute_report

    p = parse_pipeline({"privacy": {"delta": 1e-6}, "mechanism": [
        {"name": "g", "type": "gaussian", "sigma": 3.0, "count": 20}]})
    r = compute_report(p)
    assert [f for f, _, _ in r.tradeoff] == list(routes.DEFAULT_FPRS)
    want = routes.tpr_bounds(renyi.compose(*p.items()))
    assert [t for _, t, _ in r.tradeoff] == [c.value for c in want]
    assert r.to_dict()["tradeoff"][0]["route"] == "exact"
