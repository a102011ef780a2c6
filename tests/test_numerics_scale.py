"""Numerics at scale (issue #26): long lists of zCDP values, huge step counts, extreme
parameters. Each test fails on the code before its fix (the reason is in its docstring)."""

from __future__ import annotations

import math
import random

import numpy as np

import pytest

from renyi import compose
from renyi.definitions import ZCDP
from renyi.guarantees import composition


def _general(pairs):
    """The general composition path (item by item), for comparison with the fast one."""
    return composition._compose(tuple(pairs))


def test_compose_many_zcdp_reads_each_value_once(monkeypatch):
    """10⁵ ZCDP values took 4 s to compose and minutes to convert (every route converted every
    value: ZCDP.to_rdp ran 2·10⁵ times). Now the sum is read once: the conversions never build
    one RDP curve per value."""
    rng = random.Random(1)
    gs = [ZCDP(rng.uniform(1e-4, 1e-3), neighbouring="add_remove") for _ in range(5000)]
    calls = {"n": 0}
    real = ZCDP.to_rdp

    def counting(self):
        calls["n"] += 1
        return real(self)

    monkeypatch.setattr(ZCDP, "to_rdp", counting)
    out = compose(*gs)
    eps = out.epsilon(1e-5)
    assert calls["n"] <= 5, calls
    # the same value as the general path (exact sums)
    rho = math.fsum(g.rho for g in gs)
    assert out.rho == rho
    assert out == _general([(g, 1) for g in gs])
    assert eps == ZCDP(rho).epsilon(1e-5, method="rdp") or eps == ZCDP(rho).epsilon(1e-5)


def test_compose_many_zcdp_same_result_as_general_path():
    """Few kinds, counts, a list argument, ξ > 0, replace-one: the fast path gives what the
    general path gives, and remembers the merged items."""
    kinds = [ZCDP(0.001), ZCDP(0.002, 0.01), ZCDP(0.003)]
    gs = [kinds[i % 3] for i in range(300)]
    a = compose(*gs)
    b = compose(gs)
    assert a == b == _general([(g, 1) for g in gs])
    assert a._items == ((kinds[0], 100), (kinds[1], 100), (kinds[2], 100))
    r1 = [ZCDP(0.001, neighbouring="replace_one")] * 100
    c = compose(*r1)
    assert c.neighbouring == "replace_one" and c.rho == pytest.approx(0.1, rel=1e-15)
    # a composed value among them keeps its items (the general path, not the fast one)
    from renyi.mechanisms import Gaussian

    mixed = [ZCDP(0.001)] * 100 + [Gaussian(3.0).compose(2)]
    m = compose(*mixed)
    assert any(type(o).__name__ == "Gaussian" for o, _ in m._items)
    # mixed relations are stated under replace-one by the general path
    mix = compose(*([ZCDP(0.001)] * 64 + [ZCDP(0.001, neighbouring="replace_one")]))
    assert mix.neighbouring == "replace_one"


# ----- discrete Gaussian at tiny σ --------------------------------------------------------
def _dgauss_truth(sigma, d, alpha):
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 60
    s, a = mp.mpf(sigma), mp.mpf(alpha)
    X = int(40 * sigma) + int(alpha * d) + d + 10
    p = [mp.e ** (-((x - d) ** 2) / (2 * s * s)) for x in range(-X, X + 1)]
    q = [mp.e ** (-(x**2) / (2 * s * s)) for x in range(-X, X + 1)]
    z = mp.fsum(q)
    tot = mp.fsum((pi / z) ** a * (qi / z) ** (1 - a) for pi, qi in zip(p, q))
    return float(mp.log(tot) / (a - 1))


def test_discrete_gaussian_normalizer_tiny_sigma():
    """σ² underflowed to 0 below σ ≈ 1e-162: 0/0 gave NaN."""
    from renyi.divergences import discrete_gaussian_normalizer

    for s in (8.2e-212, 1e-160, 5e-324):
        assert discrete_gaussian_normalizer(s) == 1.0


@pytest.mark.parametrize("sigma,d,alpha", [(0.01, 1, 1.5), (0.01, 1, 0.5), (0.03, 3, 3.3), (0.05, 2, 1.25),
                                           (0.2, 1, 1.5), (0.3, 3, 7.5)])
def test_discrete_gaussian_divergence_small_sigma(sigma, d, alpha):
    """θ(c)/θ(0) underflowed to 0 near c = ½ for small σ: log 0 = −∞ gave D_1.5 = 0 at σ = 0.01
    (the truth is 5001.4, a privacy breach), and ∞ at α = ½. Now within 1e-12 of mpmath."""
    from renyi.divergences import discrete_gaussian_divergence

    v = float(discrete_gaussian_divergence(sigma, d, alpha))
    t = _dgauss_truth(sigma, d, alpha)
    assert v == pytest.approx(t, rel=1e-12)


def test_discrete_gaussian_divergence_tiny_sigma():
    """Δ/σ beyond 1e154: ρ overflows; the divergence is ∞ (a valid bound), never NaN or an error."""
    from renyi.divergences import discrete_gaussian_divergence

    out = discrete_gaussian_divergence(1e-200, 1, [0.5, 1.0, 2.0])
    assert list(out) == [math.inf] * 3


# ----- k-fold randomized response at huge k ---------------------------------------------
def _kov_full(eps, k, eps_prime):
    """The textbook sum over every ℓ in log space ([KOV15] Thm 3.3), written out here."""
    from scipy.special import gammaln, logsumexp

    ell = np.arange(0, k + 1, dtype=np.float64)
    a, b = (k - ell) * eps, eps_prime + ell * eps
    pos = a > b
    logc = gammaln(k + 1) - gammaln(ell[pos] + 1) - gammaln(k - ell[pos] + 1)
    terms = logc + a[pos] + np.log(-np.expm1(b[pos] - a[pos]))
    return float(np.exp(logsumexp(terms) - k * np.logaddexp(0.0, eps)))


def _kov_cdf(eps, k, eps_prime):
    """P_p(L < ℓ*) (scipy's binomial cdf): an upper bound on δ (the subtracted term dropped)."""
    from scipy.stats import binom

    p = 1.0 / (1.0 + math.exp(eps))
    return float(binom.cdf(math.ceil((k * eps - eps_prime) / (2 * eps)) - 1, k, p))


@pytest.mark.parametrize("eps,k,z", [(0.01, 2**22 + 5, 1.0), (0.5, 5 * 10**6, 3.0), (0.001, 10**9, 2.0),
                                     (0.1, 10**11, 2.0), (2.0, 2**62, 4.0)])
def test_kov_delta_huge_k(eps, k, z):
    """k + 1 summands as one array: 2⁶² runs raised numpy's "array is too big". Now a window
    around the mean (k ≤ 10¹⁰) or the Chernoff bound: an upper bound, close to scipy's binomial."""
    from renyi.composition import kov_delta

    mean = k * eps * math.tanh(eps / 2)
    sd = math.sqrt(k) * eps / math.cosh(eps / 2)  # of the loss (k − 2L)ε
    ep = mean + z * sd
    v = kov_delta(eps, k, ep)
    assert 0.0 <= v <= 1.0
    if k <= 10**7:
        ref = _kov_full(eps, k, ep)
        assert ref <= v <= ref * (1 + 1e-6)
    cdf = _kov_cdf(eps, k, ep)
    if k <= 10**10:
        assert v <= cdf * (1 + 1e-6)
    else:  # the Chernoff bound: above the cdf (so above δ), at most e^{−0.9·z²/2}
        assert cdf <= v <= math.exp(-0.9 * z * z / 2)
    assert kov_delta(eps, k, mean - sd) > 0.3


# ----- enormous σ: nothing to compute -------------------------------------------------------
def test_huge_sigma_answers_zero_without_the_order_search_or_the_pld_grid(monkeypatch):
    """σ = 1e300 (or 1e150 over 2⁶² steps): the RDP order search and the PLD grid ran for
    minutes per question (``renyi calibrate --solve steps --sigma 1e300`` hung). A bound of 0
    from the unsubsampled GDP cap is final: no valid bound is smaller."""
    from renyi import routes
    from renyi.mechanisms import Gaussian
    from renyi.sampling import _subsampled_dpsgd as sgd
    from renyi.sampling.subsampling import PoissonSubsampled

    def boom(*a, **k):
        raise AssertionError("not needed when a bound of 0 is known")

    monkeypatch.setattr(sgd, "_eps_one", boom)
    monkeypatch.setattr(sgd, "dpsgd_log_delta", boom)
    import renyi.pld as pld

    monkeypatch.setattr(pld, "epsilon_bounds", boom)
    for sigma, q, T in ((1e300, 0.01, 2**40), (1e150, 0.5, 2**62)):
        comp = PoissonSubsampled(Gaussian(sigma), q).compose(T)
        assert comp.epsilon(1e-5) == 0.0
        assert routes.best_delta(comp, 1e-3).value == 0.0


def test_calibrate_steps_with_huge_sigma_is_a_clear_error():
    from typer.testing import CliRunner

    from renyi.cli import app

    res = CliRunner().invoke(app, ["calibrate", "gaussian", "--solve", "steps", "--sigma", "1e300", "--rate", "0.01",
                                   "--epsilon", "1", "--delta", "1e-5"])
    assert res.exit_code != 0 and "nothing to calibrate" in res.output


def test_pld_overflow_reason_is_in_the_users_terms():
    """2⁶² steps: the PLD route's reason was numpy's "Python int too large to convert to C long"."""
    from renyi import pld
    from renyi.core.errors import ConversionError
    from renyi.mechanisms import Gaussian
    from renyi.sampling.subsampling import PoissonSubsampled

    with pytest.raises(ConversionError) as exc:
        pld.epsilon_bounds([(PoissonSubsampled(Gaussian(1e150), 0.5), 2**62)], 1e-5, fallback=False)
    assert "C long" not in str(exc.value)
