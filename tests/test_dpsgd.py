"""renyi.dpsgd: the training vocabulary, its solvers, and per-step accounting speed paths."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import renyi
from renyi import dpsgd
from renyi.errors import DomainError

# Golden values: theory test vectors for the Poisson-subsampled Gaussian (CKS conversion,
# continuous order), computed there with mpmath at the optimal order.
GOLDEN = [
    (0.01, 1.1, 1000, 1e-5, 1.71171433122),
    (0.01, 1.1, 10_000, 1e-5, 5.63180966702),
]


@pytest.mark.parametrize("q, sigma, steps, delta, eps", GOLDEN)
def test_epsilon_golden(q, sigma, steps, delta, eps):
    """ε matches the reference values, from above and within 10⁻⁹ relative."""
    e = dpsgd.epsilon(sigma, q, steps=steps, delta=delta, method="rdp")
    assert eps * (1 - 1e-10) <= e <= eps * (1 + 1e-9)
    assert e.bound == "upper bound on ε"
    assert e.method.startswith("RDP")
    assert e.witness is not None and 1 < e.witness < 64


def test_epsilon_same_as_composed_mechanism():
    """The training API answers exactly what the mechanism algebra answers, route by route."""
    from renyi import routes

    m = renyi.PoissonSubsampled(renyi.Gaussian(1.3), 0.02)
    rdp = dpsgd.epsilon(1.3, 0.02, steps=500, delta=1e-6, method="rdp")
    assert float(rdp) == routes.best_epsilon(500 * m, 1e-6, "rdp").value
    best = dpsgd.epsilon(1.3, 0.02, steps=500, delta=1e-6)
    assert best <= rdp
    assert float(best) == pytest.approx((500 * m).epsilon(1e-6), rel=1e-12)


def test_tightest_route():
    """Default: the smaller of RDP and (when the engine offers it) PLD, with the PLD lower bound."""
    from renyi.routes import pld_available

    e = dpsgd.epsilon(1.1, 0.01, steps=1000, delta=1e-5)
    rdp = dpsgd.epsilon(1.1, 0.01, steps=1000, delta=1e-5, method="rdp")
    assert e <= rdp
    engine = pld_available()
    if engine is None:
        assert float(e) == float(rdp) and e.lower is None
        with pytest.raises(DomainError, match="pld"):
            dpsgd.epsilon(1.1, 0.01, steps=1000, delta=1e-5, method="pld")
    else:
        offered = engine.supports(dpsgd.step_mechanism(1.1, 0.01))
        assert (e.lower is not None) == offered
        p = dpsgd.epsilon(1.1, 0.01, steps=1000, delta=1e-5, method="pld")
        assert p.lower is not None and p.lower <= p < rdp  # PLD is the tighter route here
        assert p.method.startswith("PLD")
    with pytest.raises(DomainError, match="method"):
        dpsgd.epsilon(1.1, 0.01, steps=1000, delta=1e-5, method="exact")


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"sample_rate": 0.0, "steps": 10}, "sample_rate"),
        ({"sample_rate": 1.5, "steps": 10}, "sample_rate"),
        ({"sample_rate": -0.1, "steps": 10}, "sample_rate"),
        ({"sample_rate": 0.01, "steps": 10, "epochs": 2}, "steps"),
        ({"sample_rate": 0.01}, "steps"),
        ({"batch_size": 600, "dataset_size": 500, "steps": 10}, "batch_size"),
        ({"batch_size": 600, "steps": 10}, "dataset_size"),
        ({"sample_rate": 0.02, "batch_size": 600, "dataset_size": 60_000, "steps": 10}, "sample_rate"),
        ({"sample_rate": 0.01, "steps": 0}, "steps"),
        ({"sample_rate": 0.01, "steps": 2.5}, "steps"),
        ({"sample_rate": 0.01, "epochs": -1.0}, "epochs"),
        ({"steps": 10}, "sample_rate"),
    ],
)
def test_schedule_that_does_not_add_up(kwargs, name):
    """Each inconsistent or out-of-domain schedule is one DomainError naming the parameter."""
    with pytest.raises(DomainError) as info:
        dpsgd.epsilon(1.0, delta=1e-5, **kwargs)
    assert info.value.name == name
    assert name in str(info.value)


def test_bad_noise_and_delta():
    with pytest.raises(DomainError, match="noise_multiplier"):
        dpsgd.epsilon(0.0, 0.01, steps=10, delta=1e-5)
    with pytest.raises(DomainError, match="delta"):
        dpsgd.epsilon(1.0, 0.01, steps=10, delta=0.0)
    with pytest.raises(DomainError, match="target_epsilon"):
        dpsgd.noise_multiplier(-1.0, 1e-5, 0.01, steps=10)
    with pytest.raises(DomainError, match="target_delta"):
        dpsgd.noise_multiplier(1.0, 1.0, 0.01, steps=10)


def test_noise_multiplier_is_tight_and_safe():
    """The σ found meets the target; 10⁻⁷ less noise does not."""
    s = dpsgd.noise_multiplier(2.0, 1e-5, batch_size=256, dataset_size=60_000, epochs=5, method="rdp")
    sched = dpsgd.schedule(batch_size=256, dataset_size=60_000, epochs=5)
    kw = {"steps": sched.steps, "delta": 1e-5, "method": "rdp"}
    assert s.achieved <= 2.0
    assert dpsgd.epsilon(s, sched.sample_rate, **kw) <= 2.0
    assert dpsgd.epsilon(s * (1 - 1e-7), sched.sample_rate, **kw) > 2.0


def test_steps_is_tight_and_safe():
    t = dpsgd.steps(1.5, 1e-5, 1.0, 0.01, method="rdp")
    assert isinstance(t, int) and t > 0
    assert dpsgd.epsilon(1.0, 0.01, steps=int(t), delta=1e-5, method="rdp") <= 1.5
    assert dpsgd.epsilon(1.0, 0.01, steps=int(t) + 1, delta=1e-5, method="rdp") > 1.5
    assert dpsgd.steps(1e-3, 1e-5, 0.5, 0.5, method="rdp") == 0  # not even one step


def test_sample_rate_is_tight_and_safe():
    q = dpsgd.sample_rate(1.5, 1e-5, 1.0, steps=1000, method="rdp")
    assert 0 < q < 1
    assert dpsgd.epsilon(1.0, q, steps=1000, delta=1e-5, method="rdp") <= 1.5
    assert dpsgd.epsilon(1.0, q * (1 + 1e-7), steps=1000, delta=1e-5, method="rdp") > 1.5
    assert dpsgd.sample_rate(1e3, 1e-5, 5.0, steps=10, method="rdp") == 1.0


def test_solvers_on_the_tightest_route():
    """Default solvers meet the target as the default ε measures it, and never need more noise
    (fewer steps, a smaller rate) than the RDP route alone."""
    s = dpsgd.noise_multiplier(2.0, 1e-5, 0.01, steps=300)
    assert dpsgd.epsilon(s, 0.01, steps=300, delta=1e-5) <= 2.0
    assert s <= dpsgd.noise_multiplier(2.0, 1e-5, 0.01, steps=300, method="rdp")
    t = dpsgd.steps(2.0, 1e-5, 1.0, 0.01)
    assert dpsgd.epsilon(1.0, 0.01, steps=int(t), delta=1e-5) <= 2.0
    assert t >= dpsgd.steps(2.0, 1e-5, 1.0, 0.01, method="rdp")


def test_delta_inverts_epsilon():
    """δ(ε(δ)) ≤ δ, and δ at a smaller ε is larger."""
    e = dpsgd.epsilon(1.1, 0.01, steps=1000, delta=1e-5, method="rdp")
    kw = {"steps": 1000, "method": "rdp"}
    assert dpsgd.delta(1.1, 0.01, epsilon=float(e), **kw) <= 1e-5 * (1 + 1e-9)
    assert dpsgd.delta(1.1, 0.01, epsilon=float(e) * 0.9, **kw) > 1e-5
    assert dpsgd.delta(1.1, 0.01, epsilon=0.0, **kw) <= 1.0
    assert dpsgd.delta(1.1, 0.01, steps=1000, epsilon=float(e)) <= 1e-5 * (1 + 1e-9)


def test_sweep_matches_scalars():
    """Array inputs broadcast; each entry equals the scalar answer."""
    sig = np.array([0.7, 1.0, 2.0])
    q = np.array([[0.001], [0.05]])
    sw = dpsgd.epsilon(sig, q, steps=2000, delta=1e-6, method="rdp")
    assert isinstance(sw, dpsgd.Sweep) and sw.values.shape == (2, 3)
    for i in range(2):
        for j in range(3):
            one = dpsgd.epsilon(float(sig[j]), float(q[i, 0]), steps=2000, delta=1e-6, method="rdp")
            assert sw.values[i, j] == pytest.approx(float(one), rel=1e-9)
    epochs = dpsgd.epsilon(1.0, batch_size=[128, 256], dataset_size=10_000, epochs=2, delta=1e-5, method="rdp")
    assert epochs.values[0] < epochs.values[1]


def test_answers_pickle_and_repr():
    e = dpsgd.epsilon(1.1, 0.01, steps=100, delta=1e-5)
    back = pickle.loads(pickle.dumps(e))
    assert float(back) == float(e) and back.method == e.method
    assert "upper bound on ε" in repr(e)


@given(
    sigma=st.floats(0.5, 5.0),
    q=st.floats(1e-4, 0.2),
    steps=st.integers(1, 5000),
)
def test_monotone_in_noise_and_steps(sigma, q, steps):
    """More noise never costs more; more steps never cost less."""
    e = dpsgd.epsilon(sigma, q, steps=steps, delta=1e-5, method="rdp")
    assert dpsgd.epsilon(sigma * 1.1, q, steps=steps, delta=1e-5, method="rdp") <= e * (1 + 1e-9)
    assert dpsgd.epsilon(sigma, q, steps=steps + 10, delta=1e-5, method="rdp") >= e * (1 - 1e-9)


# ------------------------------------------------------------------ values and per-step spends
def test_mechanisms_and_curves_are_values():
    """Equal parameters → equal and hashable guarantees (for every subsampling route)."""
    for make in (
        lambda: renyi.PoissonSubsampled(renyi.Gaussian(1.1), 0.025),
        lambda: renyi.PoissonSubsampled(renyi.Laplace(2.0), 0.1),
        lambda: renyi.SubsampledWithoutReplacement(renyi.Gaussian(1.1), 0.025),
        lambda: renyi.PoissonSubsampled(renyi.DiscreteGaussian(2.0), 0.1),
    ):
        a, b = make(), make()
        assert a == b and hash(a) == hash(b)
        assert a.guarantee == b.guarantee and hash(a.guarantee) == hash(b.guarantee)
    assert renyi.PoissonSubsampled(renyi.Gaussian(1.1), 0.025).guarantee != \
        renyi.PoissonSubsampled(renyi.Gaussian(1.2), 0.025).guarantee


def test_per_step_spends_reuse_the_unit_curve(monkeypatch):
    """Repeated spends evaluate the curve once; the totals equal one spend of count=N."""
    from renyi import accountant as acc_mod

    calls = []
    real = acc_mod._unit_of
    monkeypatch.setattr(acc_mod, "_unit_of", lambda g, grid: calls.append(g) or real(g, grid))
    m = renyi.PoissonSubsampled(renyi.Gaussian(1.1), 0.025)
    per_step = renyi.Accountant()
    for _ in range(200):
        per_step.spend(renyi.PoissonSubsampled(renyi.Gaussian(1.1), 0.025))
    assert len(calls) == 1
    bulk = renyi.Accountant()
    bulk.spend(m, count=200)
    e1, e2 = per_step.epsilon(1e-5), bulk.epsilon(1e-5)
    assert e1 == pytest.approx(e2, rel=1e-12)
    # per-step sums are rounded up at each step: never below the bulk total
    assert np.all(np.asarray(per_step.state["rdp"], dtype=float) >= np.asarray(bulk.state["rdp"], dtype=float))
    # and the accountant's grid route is never below the exact fast path
    assert e1 >= (200 * m).epsilon(1e-5) * (1 - 1e-12)


def test_per_step_budget_check_stays_exact():
    """A budget refuses the first step that would exceed it, and spends nothing then."""
    m = renyi.PoissonSubsampled(renyi.Gaussian(1.0), 0.01)
    acct = renyi.Accountant(budget=renyi.ApproxDP(2.0, 1e-5))
    n = 0
    with pytest.raises(renyi.BudgetExceededError):
        while True:
            acct.spend(m)
            n += 1
    assert n > 10 and acct.state["count"] == n
    assert acct.can_spend(m) is False
    fresh = renyi.Accountant(budget=renyi.ApproxDP(2.0, 1e-5))
    fresh.spend(m, count=n)
    with pytest.raises(renyi.BudgetExceededError):
        fresh.spend(m)


def test_different_mechanisms_do_not_share_units():
    acct = renyi.Accountant()
    acct.spend(renyi.PoissonSubsampled(renyi.Gaussian(1.0), 0.05))
    acct.spend(renyi.PoissonSubsampled(renyi.Gaussian(2.0), 0.05))
    r = acct.records
    assert r[0].rdp is not r[1].rdp and not np.array_equal(r[0].rdp, r[1].rdp)


def test_calibrate_routes_dpsgd_to_the_solver(monkeypatch):
    """renyi.calibrate on a DP-SGD composition uses the dedicated solver and agrees with it."""
    calls = []
    real = dpsgd.noise_multiplier
    monkeypatch.setattr(dpsgd, "noise_multiplier", lambda *a, **k: calls.append(k) or real(*a, **k))
    c = renyi.calibrate(lambda s: 500 * renyi.PoissonSubsampled(renyi.Gaussian(s), 0.02), renyi.ApproxDP(2.0, 1e-5),
                        method="rdp")
    assert calls and c.value == float(real(2.0, 1e-5, 0.02, steps=500, method="rdp"))
    assert c.achieved.epsilon <= 2.0
    assert dpsgd.epsilon(c.value, 0.02, steps=500, delta=1e-5, method="rdp") <= 2.0
