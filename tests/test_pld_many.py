"""Compositions of many distinct mechanisms in the PLD engine (renyi.pld._many).

Ground truth shares no code with renyi: the exact Gaussian curve (tests/_exact.py, mpmath)
and the exact δ(ε) of a product of binary randomized responses with distinct ε, enumerated
atom by atom in mpmath.
"""

from __future__ import annotations

import functools
import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _exact import gaussian_epsilon
from renyi.definitions import GDP, ApproxDP
from renyi.mechanisms import Gaussian, Laplace, RandomizedResponse
from renyi.pld import delta_bounds, epsilon_bounds
from renyi.pld._many import merge_gaussians
from renyi.pld._profiles import LossProfile, Profile, pairs_for
from renyi.plrv import GaussianPrivacyLoss
from renyi.subsampling import PoissonSubsampled


# ----------------------------------------------------------------------------------------------
# Gaussian merging
# ----------------------------------------------------------------------------------------------
def test_distinct_gaussians_merge_into_one_exact_pair() -> None:
    """Distinct Gaussians (and a GDP value) become one pair with μ² = Σ cμ²; others stay."""
    lap = pairs_for(Laplace(3.0))[0]
    steps = [(pairs_for(Gaussian(2.0))[0], 3), (lap, 2), (pairs_for(GDP(0.5))[0], 1),
             (pairs_for(Gaussian(4.0, sensitivity=3.0))[0], 5)]
    out = merge_gaussians(steps)
    assert [c for _, c in out] == [1, 2]
    merged = out[0][0]
    assert isinstance(merged, LossProfile) and isinstance(merged.loss, GaussianPrivacyLoss)
    mu2 = 3 * 0.5**2 + 0.5**2 + 5 * 0.75**2
    assert merged.loss.rho == pytest.approx(mu2 / 2, rel=1e-15)
    assert out[1] == (lap, 2)
    # one distinct Gaussian (any count): nothing to merge, the list is returned as it is
    one = [(pairs_for(Gaussian(2.0))[0], 7), (lap, 1)]
    assert merge_gaussians(one) is one


@pytest.mark.parametrize("delta", [1e-5, 1e-12])
def test_composed_distinct_gaussians_bracket_the_exact_gdp_epsilon(delta: float) -> None:
    """30 distinct Gaussians: lower ≤ exact μ-GDP ε ≤ upper, upper within 0.1 %."""
    sigmas = [3.0 + 0.37 * i for i in range(30)]
    items = [(Gaussian(s), 1 + i % 3) for i, s in enumerate(sigmas)]
    mu = math.sqrt(sum(c / s**2 for (_, c), s in zip(items, sigmas)))
    exact = gaussian_epsilon(mu, delta)
    lo, hi = epsilon_bounds(items, delta)
    assert lo <= exact <= hi
    assert hi <= exact * 1.001


# ----------------------------------------------------------------------------------------------
# bundles of small steps
# ----------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=4)
def _rr_product_law(eps0s: tuple[float, ...]) -> tuple[tuple[mp.mpf, ...], tuple[mp.mpf, ...]]:
    """The exact law of the loss under P of the product of binary randomized responses with
    ε₀ = eps0s (mpmath): Σ ±ε₀ᵢ, +ε₀ᵢ w.p. e^{ε₀ᵢ}/(1 + e^{ε₀ᵢ}), enumerated atom by atom."""
    with mp.workdps(30):
        law = {mp.mpf(0): mp.mpf(1)}
        for e0 in eps0s:
            e = mp.mpf(e0)
            p = mp.e**e / (1 + mp.e**e)
            nxt: dict[mp.mpf, mp.mpf] = {}
            for z, w in law.items():
                for dz, pz in ((e, p), (-e, 1 - p)):
                    nxt[z + dz] = nxt.get(z + dz, mp.mpf(0)) + w * pz
            law = nxt
        return tuple(law), tuple(law.values())


def _rr_product_delta(eps0s: list[float], eps: float) -> mp.mpf:
    """Exact δ(ε) = E[(1 − e^{ε − Z})₊] of that product (mpmath)."""
    zs, ps = _rr_product_law(tuple(eps0s))
    with mp.workdps(30):
        x = mp.mpf(eps)
        return mp.fsum(w * (1 - mp.e ** (x - z)) for z, w in zip(zs, ps) if z > x)


def _rr_product_epsilon(eps0s: list[float], delta: float) -> float:
    """ε(δ) of that product by bisection on δ(ε) (decreasing), summed in float64 (all terms
    positive: relative error ~1e-13, far inside the brackets tested)."""
    zs, ps = _rr_product_law(tuple(eps0s))
    z = np.array([float(v) for v in zs])
    p = np.array([float(v) for v in ps])
    lo, hi = 0.0, sum(eps0s)
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if float(np.sum(np.where(z > mid, p * -np.expm1(mid - z), 0.0))) > delta:
            lo = mid
        else:
            hi = mid
    return lo


@pytest.fixture
def bundled(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Bundles from two small steps on, and a count of the bundles' compositions."""
    from renyi.pld import _many
    from renyi.pld import distribution as dist

    monkeypatch.setattr(_many, "MIN_BUNDLE", 2)
    calls = [0]
    orig = _many.Bundle.tilted

    def spy(self: _many.Bundle, lam: float, n: int) -> tuple:  # type: ignore[type-arg]
        calls[0] += 1
        return orig(self, lam, n)

    monkeypatch.setattr(_many.Bundle, "tilted", spy)
    for cache in (dist._ANSWERS, dist._CACHE, dist._DISC):
        cache.clear()
    return calls


RR_EPS = [0.05 + 0.013 * i for i in range(14)]


def test_bundled_distinct_randomized_responses_bracket_the_exact_delta(bundled: list[int]) -> None:
    """14 randomized responses with distinct ε, composed as one bundle: lower ≤ exact ≤ upper."""
    items = [(RandomizedResponse(epsilon=e), 1) for e in RR_EPS]
    for eps in (0.0, 0.3, 0.9, 1.6):
        exact = _rr_product_delta(RR_EPS, eps)
        lo, hi = delta_bounds(items, eps)
        assert lo <= exact * (1 + 1e-12) and exact <= hi, (eps, lo, exact, hi)
    for delta in (1e-3, 1e-8):
        exact_e = _rr_product_epsilon(RR_EPS, delta)
        lo, hi = epsilon_bounds(items, delta)
        assert lo <= exact_e + 1e-12 and exact_e <= hi, (delta, lo, exact_e, hi)
        assert hi <= exact_e * 1.01
    assert bundled[0] > 0


def test_bundle_equals_the_plain_engine(bundled: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    """The same composition with and without the bundle (randomized responses, Laplace counts,
    (ε, δ)-DP pairs with +∞ masses): the same bracket, up to the error bounds' slack."""
    from renyi.pld import _many
    from renyi.pld import distribution as dist

    items = [(RandomizedResponse(epsilon=e), 1) for e in RR_EPS] + [(Laplace(40.0 + i), 1) for i in range(6)]
    items += [(ApproxDP(0.05 + 0.01 * i, 1e-9 * (1 + i)), 1) for i in range(4)]  # +∞ masses
    with_bundle = epsilon_bounds(items, 1e-6)
    assert bundled[0] > 0
    monkeypatch.setattr(_many, "MIN_BUNDLE", 10**9)
    for cache in (dist._ANSWERS, dist._CACHE, dist._DISC):
        cache.clear()
    plain = epsilon_bounds(items, 1e-6)
    assert with_bundle == pytest.approx(plain, rel=1e-8)  # (the tree's error bounds: ~1e-9 wider)


@pytest.mark.parametrize("k", [3, 5])
def test_bundled_k_fold_laplace_brackets_the_mpmath_profile(bundled: list[int], k: int) -> None:
    """k runs of one Laplace (Δ/b = 0.5) as k leaves of a bundle: lower ≤ exact ≤ upper."""
    from renyi.pld import _many
    from test_pld_curves import _laplace_delta

    _many.MIN_BUNDLE = 1  # (restored by the fixture's monkeypatch)
    for eps in (0.3, 1.7):
        exact = _laplace_delta(0.5, k, eps)
        lo, hi = delta_bounds([(Laplace(2.0), k)], eps)
        assert lo <= exact * (1 + 1e-12) and exact <= hi, (eps, lo, exact, hi)
        assert hi <= exact * 1.01 + 1e-12
    assert bundled[0] > 0


@pytest.mark.parametrize("la,lb,n", [(5, 40, 4096), (300, 700, 4096), (900, 800, 1024), (3, 1000, 1024)])
def test_tree_node_error_bound_holds(la: int, lb: int, n: int) -> None:
    """A tree node's computed convolution is within its ℓ₂ bound of the exact one (long double);
    direct, FFT and folded (circular) products."""
    from renyi.pld._many import _combine

    rng = np.random.default_rng(la * lb)
    a = rng.random(la) ** 8 * np.exp(-np.linspace(0, 30, la))
    b = rng.random(lb) ** 8
    b /= b.sum()
    y, err = _combine((a, 0.0), (b, 0.0), n)
    exact = np.convolve(a.astype(np.longdouble), b.astype(np.longdouble))
    if exact.size > n:
        exact = np.concatenate([exact, np.zeros((-exact.size) % n, dtype=np.longdouble)]).reshape(-1, n).sum(axis=0)
    gap = float(np.sqrt(np.sum((y.astype(np.longdouble) - exact) ** 2)))
    assert gap <= err
    assert err < 1e-10 * float(np.max(exact))  # and it is not vacuous
    # errors already carried by the operands propagate: E_a‖B‖₁ + ‖A‖₁E_b + E_aE_b√min
    _, err2 = _combine((a, 1e-9), (b, 2e-9), n)
    assert err2 >= 1e-9 * b.sum() + 2e-9 * a.sum()


# ----------------------------------------------------------------------------------------------
# buckets of near-identical subsampled Gaussians
# ----------------------------------------------------------------------------------------------
def test_bucket_groups_by_rate_and_direction_and_keeps_extremes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Buckets hold one rate and direction; upper = largest μ, lower = smallest, counts add."""
    from renyi.pld import _many
    from renyi.pld._profiles import PoissonProfile

    monkeypatch.setattr(_many, "BUCKET_MIN", 4)
    monkeypatch.setattr(_many, "BUCKET_RATIO", 0.01)
    sig = [1.0, 1.001, 1.002, 1.003, 1.5]
    steps = [(pairs_for(PoissonSubsampled(Gaussian(s), 0.01))[0], 2) for s in sig]
    steps.append((pairs_for(PoissonSubsampled(Gaussian(1.0), 0.02))[0], 3))  # another rate: kept
    lap = pairs_for(Laplace(2.0))[0]
    steps.append((lap, 1))
    out = _many.bucket(steps)
    buckets = [(p, c) for p, c in out if isinstance(p, _many.Bucket)]
    assert len(buckets) == 1 and buckets[0][1] == 8
    b = buckets[0][0]
    assert isinstance(b.upper, PoissonProfile) and isinstance(b.lower, PoissonProfile)
    assert b.upper.base.loss.rho == pytest.approx(0.5)  # σ = 1: the largest μ
    assert b.lower.base.loss.rho == pytest.approx(0.5 / 1.003**2)
    assert (steps[4][0], 2) in out and (steps[5][0], 3) in out and (lap, 1) in out
    assert len(out) == 4
    # fewer distinct steps than BUCKET_MIN: unchanged
    monkeypatch.setattr(_many, "BUCKET_MIN", 64)
    assert _many.bucket(steps) is steps


def test_bucketed_dpsgd_phases_bracket_overlaps_the_exact_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    """70 DP-SGD phases with distinct σ: bucketed and exact brackets both hold the truth, so
    they overlap; the bucketed one is only slightly wider."""
    from renyi.pld import _many
    from renyi.pld import distribution as dist

    items = [(PoissonSubsampled(Gaussian(1.0 + 0.0003 * i), 0.01), 20) for i in range(70)]
    for cache in (dist._ANSWERS, dist._CACHE, dist._DISC):
        cache.clear()
    exact = epsilon_bounds(items, 1e-6)
    monkeypatch.setattr(_many, "BUCKET_MIN", 8)
    monkeypatch.setattr(_many, "MAX_BUCKETS", 4)
    for cache in (dist._ANSWERS, dist._CACHE, dist._DISC):
        cache.clear()
    calls = [0]
    orig = _many.discretise_step

    def spy(p: Profile, *a: object) -> object:
        calls[0] += isinstance(p, _many.Bucket)
        return orig(p, *a)  # type: ignore[arg-type]

    monkeypatch.setattr(dist, "discretise_step", spy)
    got = epsilon_bounds(items, 1e-6)
    assert calls[0] > 0
    assert got[0] <= exact[1] and exact[0] <= got[1]
    assert got[1] <= exact[1] * 1.02


# ----------------------------------------------------------------------------------------------
# 10⁴ distinct mechanisms (issue #17: "a mixed pipeline of 10⁴ distinct mechanisms composes",
# "no case above 200 MB")
# ----------------------------------------------------------------------------------------------
_HUGE = """
import json, resource, time
from renyi.mechanisms import Gaussian, Laplace, RandomizedResponse
from renyi.pld import epsilon_bounds
from renyi.subsampling import PoissonSubsampled
items = []
for i in range(10_000):  # the mixed pipeline of benchmarks/bench_pld.py
    k = i % 4
    if k == 0:
        items.append((Laplace(200.0 + i), 1))
    elif k == 1:
        items.append((RandomizedResponse(epsilon=0.01 + 1e-6 * i), 1))
    elif k == 2:
        items.append((Gaussian(50.0 + 0.01 * i), 1))
    else:
        items.append((PoissonSubsampled(Gaussian(1.0 + 1e-5 * i), 0.001), 10))
t = time.perf_counter()
lo, hi = epsilon_bounds(items, 1e-6)
print(json.dumps({"lo": lo, "hi": hi, "s": time.perf_counter() - t,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


@pytest.mark.slow
def test_ten_thousand_distinct_mechanisms_compose_within_200_mb() -> None:
    """10⁴ distinct mechanisms: a finite certified bracket, peak RSS (imports included) ≤ 200
    MB, and an upper end below the RDP route's ε for the same pipeline (5.3474, from
    ``routes.best_epsilon(items, 1e-6, "rdp")``, computed once: it takes a minute)."""
    import json
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _HUGE], capture_output=True, text=True, check=True, timeout=600)
    res = json.loads(out.stdout.strip().splitlines()[-1])
    assert 0.0 < res["lo"] <= res["hi"] < math.inf
    assert res["peak_mb"] <= 200.0, res
    assert res["hi"] < 5.3474, res


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(eps0s=st.lists(st.floats(0.01, 0.8), min_size=2, max_size=9, unique=True),
       eps=st.floats(0.0, 2.0))
def test_bundled_randomized_responses_bracket_the_truth_law(bundled: list[int], eps0s: list[float],
                                                            eps: float) -> None:
    """Law: any product of distinct binary randomized responses, composed as a bundle, gives
    lower ≤ exact δ(ε) ≤ upper."""
    from renyi.pld import distribution as dist

    dist._ANSWERS.clear()
    items = [(RandomizedResponse(epsilon=e), 1) for e in eps0s]
    exact = _rr_product_delta(eps0s, eps)
    lo, hi = delta_bounds(items, eps)
    assert lo <= exact * (1 + 1e-12) + 1e-300 and exact <= hi * (1 + 1e-12) + 1e-300, (lo, exact, hi)
