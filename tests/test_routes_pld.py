"""The PLD route through renyi.routes with the real engine (renyi.pld): chosen where it is the
tightest, valid against exact ground truth, calibration one-sided on its upper bound, and the
report, accountant and CLI showing it with its bracket."""

from __future__ import annotations

import math

import pytest

import renyi
from renyi import routes
from renyi.definitions import ApproxDP
from renyi.mechanisms import Gaussian

from _exact import gaussian_epsilon

pytest.importorskip("renyi.pld", reason="the PLD engine (renyi.pld) is not part of this installation")

DPSGD = renyi.PoissonSubsampled(Gaussian(1.1), 0.025)


@pytest.fixture(autouse=True)
def pld_in_the_minimum(monkeypatch):
    """Offer the PLD engine for the default minimum (renyi.pld.ROUTE_ENABLED, off by default)."""
    import renyi.pld

    monkeypatch.setattr(renyi.pld, "ROUTE_ENABLED", True)


def test_reports_and_named_method_ask_pld_even_when_not_offered(monkeypatch):
    """With the engine not offering itself (the default), the default minimum skips it, while
    method="pld" and the report's table ask it."""
    import renyi.pld

    monkeypatch.setattr(renyi.pld, "ROUTE_ENABLED", False)
    obj = DPSGD.compose(80)
    assert obj.best_epsilon(1e-5).method == "rdp"
    c = obj.best_epsilon(1e-5, method="pld")
    assert c.method == "pld" and c.value < obj.epsilon(1e-5)
    table = {r.route.name: r for r in routes.epsilon_table(obj, 1e-5)}
    assert table["pld"].applicable and table["pld"].conversion.value == c.value


def test_dpsgd_uses_the_pld_route_with_its_bracket():
    """DP-SGD (q = 0.025, σ = 1.1, T = 80, δ = 1e-5): the best route is PLD, well below RDP,
    with lower ≤ upper; every other route is above its lower bound."""
    obj = DPSGD.compose(80)
    table = {r.route.name: r.conversion for r in routes.epsilon_table(obj, 1e-5) if r.applicable}
    best = obj.best_epsilon(1e-5)
    assert best.method == "pld" and best.value == table["pld"].value
    assert best.lower is not None and best.lower <= best.value
    assert best.value < 0.85 * table["rdp"].value
    assert all(c.value >= best.lower for c in table.values())


def test_pld_route_is_valid_for_gaussians():
    """k Gaussians: the PLD route's upper bound is ≥ the exact ε (mpmath) and its lower bound
    ≤ it; the default answer is the exact route."""
    obj = Gaussian(2.0).compose(10)
    truth = gaussian_epsilon(math.sqrt(10) / 2.0, 1e-5)
    c = routes.route("pld").epsilon(obj, 1e-5)
    assert c.lower <= truth + 1e-12 <= c.value + 2e-12
    assert obj.best_epsilon(1e-5).method == "exact"


def test_calibration_through_pld_is_one_sided():
    """σ for DP-SGD at ε = 1.5: through PLD the certified upper bound meets the target, and
    less noise is needed than through RDP."""
    target = ApproxDP(1.5, 1e-5)

    def make(s):
        return renyi.PoissonSubsampled(Gaussian(s), 0.025).compose(80)

    cal = renyi.calibrate(make, target, bounds=(0.5, 3.0))
    assert cal.method == "pld"
    assert routes.best_epsilon(make(cal.value), 1e-5, "pld").value <= 1.5
    rdp = renyi.calibrate(make, target, bounds=(0.5, 3.0), method="rdp")
    assert cal.value < rdp.value


def test_accountant_and_report_show_the_pld_route():
    """spend(m, count=T) reports the PLD ε (fixed sequence); the report's PLD row brackets it."""
    from renyi.pipeline import parse_pipeline
    from renyi.report import compute_report

    acct = renyi.Accountant()
    acct.spend(DPSGD, count=80)
    c = acct.best_epsilon(1e-5)
    assert c.method == "pld"
    assert c.value == DPSGD.compose(80).epsilon(1e-5)
    p = parse_pipeline({"privacy": {"delta": 1e-5}, "mechanism": [
        {"name": "sgd", "type": "gaussian", "sigma": 1.1, "sampling": {"scheme": "poisson", "rate": 0.025},
         "count": 80}]})
    r = compute_report(p, tradeoff=False)
    row = r.route_by_key("pld")
    assert r.route == "pld" and row.lower is not None and row.lower <= row.epsilon == r.epsilon
    assert not row.adaptive
