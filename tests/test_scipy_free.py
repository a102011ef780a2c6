"""The release path without scipy (issue 27: importing scipy.special and scipy.optimize was a
third of a DuckDB release's fixed cost): Brent's root finder and bounded minimiser, log Φ and
its inverse, against mpmath and scipy; and a release that imports neither."""

from __future__ import annotations

import math
import os
import random
import subprocess
import sys

import mpmath as mp
import numpy as np
import pytest

from renyi.core._logmath import log_ndtr_np, logsumexp_np, ndtri_exp_np
from renyi.core._scalar import brent_root, minimize_bounded


def _mp_log_ndtr(x: float) -> float:
    mp.mp.dps = 50
    if x > 0:  # log(1 − Φ(−x)), without rounding 1 − 1e-65 to 1 at 50 digits
        return float(mp.log1p(-mp.ncdf(-mp.mpf(x))))
    return float(mp.log(mp.ncdf(mp.mpf(x))))


def test_log_ndtr_matches_mpmath():
    """log Φ(x) against mpmath within 1e-15 relative, from −1e3 (the far tails the half-widths
    use) to 38 (where log Φ(x) ≈ −Φ(−x) is tiny; scipy's log_ndtr is off by up to 1e-13 there)."""
    rng = random.Random(1)
    xs = [0.0, -1e-300, 1e-300, -0.5, 0.5, -8.0, -37.5, -40.0, -300.0, -1000.0, 5.0, 12.0, 38.0]
    xs += [rng.uniform(-60.0, 0.0) for _ in range(300)] + [rng.uniform(0.0, 38.0) for _ in range(100)]
    got = log_ndtr_np(np.array(xs))
    for x, g in zip(xs, got):
        want = _mp_log_ndtr(x)
        assert g == pytest.approx(want, rel=1e-15, abs=1e-300), x
    assert float(log_ndtr_np(-math.inf)) == -math.inf and float(log_ndtr_np(math.inf)) == 0.0
    assert math.isnan(float(log_ndtr_np(math.nan)))


def test_ndtri_exp_inverts_log_ndtr():
    """z = Φ⁻¹(e^y) for y from −1e5 to −1e-12: log Φ(z) = y to 1e-14 (mpmath), as scipy's."""
    from scipy import special

    rng = random.Random(2)
    ys = [-1e-12, -1e-3, -math.log(2.0), -0.7, -1.0, -20.0, -699.0, -701.0, -1e4, -1e5]
    ys += [-math.exp(rng.uniform(-25.0, 11.0)) for _ in range(200)]
    for y in ys:
        z = ndtri_exp_np(y)
        assert _mp_log_ndtr(z) == pytest.approx(y, rel=1e-13, abs=1e-25), y
        assert z == pytest.approx(float(special.ndtri_exp(y)), rel=1e-12, abs=1e-12), y
    assert ndtri_exp_np(0.0) == math.inf
    with pytest.raises(ValueError):
        ndtri_exp_np(0.1)


def test_logsumexp():
    from scipy import special

    rng = np.random.default_rng(3)
    for _ in range(50):
        a = rng.normal(0.0, 300.0, rng.integers(1, 40))
        assert logsumexp_np(a) == pytest.approx(float(special.logsumexp(a)), rel=1e-14)
    assert logsumexp_np([]) == -math.inf and logsumexp_np([-math.inf, -math.inf]) == -math.inf
    assert logsumexp_np([1.0, math.inf]) == math.inf


def test_brent_root_against_scipy():
    """Roots of increasing functions, brackets up to 1e300 wide, to scipy's brentq accuracy."""
    from scipy import optimize

    rng = random.Random(4)
    for _ in range(200):
        rho, e = math.exp(rng.uniform(-20, 5)), rng.uniform(-1.0, 50.0)

        def g(a: float) -> float:  # zcdp_delta_cks's optimality condition
            return (2.0 * a - 1.0) * rho - e + math.log1p(-1.0 / a)

        lo, hi = 1.0 + 1e-12, max(2.0, (1.0 + abs(e) / rho) / 2.0 + 1.0)
        while g(hi) < 0:
            hi *= 2.0
        if g(lo) >= 0:
            continue
        got = brent_root(g, lo, hi, xtol=1e-14, rtol=1e-15)
        want = optimize.brentq(g, lo, hi, xtol=1e-14, rtol=1e-15)
        assert got == pytest.approx(want, rel=1e-13, abs=1e-13)
    assert brent_root(lambda x: x, -1.0, 1e300) == pytest.approx(0.0, abs=1e-11)
    with pytest.raises(ValueError):
        brent_root(lambda x: x * x + 1.0, -1.0, 1.0)


def test_minimize_bounded_against_scipy():
    """Minima of smooth unimodal functions (and an interior kink, and a minimum at an end)."""
    from scipy import optimize

    rng = random.Random(5)
    for _ in range(200):
        c, s, p = rng.uniform(-3, 3), rng.uniform(0.1, 10), rng.choice([2.0, 4.0, 1.0])
        lo, hi = c - rng.uniform(0.1, 6), c + rng.uniform(0.1, 6)

        def f(x: float) -> float:
            return s * abs(x - c) ** p + math.exp(0.1 * x)

        x, fx = minimize_bounded(f, lo, hi, xatol=1e-10)
        ref = optimize.minimize_scalar(f, bounds=(lo, hi), method="bounded", options={"xatol": 1e-10})
        # both stop within √u·|x| + xatol of the minimum (u the unit round-off)
        assert fx == f(x) and abs(x - float(ref.x)) <= 3.0 * (1.5e-8 * max(1.0, abs(x)) + 1e-10)
    x, fx = minimize_bounded(lambda x: x, 2.0, 5.0, xatol=1e-9)
    assert x == pytest.approx(2.0, abs=1e-6)


def test_a_release_imports_no_scipy(tmp_path):
    """A DuckDB release of counts, sums and means (plan, aggregates, noise, report, files)
    never imports scipy."""
    pytest.importorskip("duckdb")
    code = f"""
import sys, csv, os
p = os.path.join({str(tmp_path)!r}, "t.csv")
with open(p, "w", newline="") as f:
    w = csv.writer(f); w.writerow(["pid", "g", "x"])
    for i in range(200): w.writerow([i % 50, "ab"[i % 2], i * 1.5])
import renyi
spec = {{"data": {{"source": p, "privacy_unit": "pid", "max_rows_per_unit": 3}},
        "privacy": {{"budget": {{"rho": 0.5}}, "ledger": os.path.join({str(tmp_path)!r}, "l.db")}},
        "query": [{{"name": "c", "type": "count", "by": ["g"], "keys": {{"g": ["a", "b"]}}}},
                  {{"name": "m", "type": "mean", "column": "x", "bounds": [0, 300], "by": ["g"],
                    "keys": {{"g": ["a", "b"]}}}}]}}
renyi.release(spec, out=os.path.join({str(tmp_path)!r}, "out"))
print(sorted(m for m in sys.modules if m == "scipy" or m.startswith("scipy.")))
"""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_the_clt_route_turns_short_compositions_away_without_its_import():
    """The CLT route's pre-check (before importing its module, which loads scipy and mpmath)
    uses the module's own step threshold and messages."""
    from renyi.accounting import _clt, routes
    from renyi.errors import ConversionError
    from renyi import PoissonSubsampled
    from renyi.mechanisms import Gaussian

    assert routes._CLT_MIN_STEPS == _clt.MIN_STEPS
    sub = PoissonSubsampled(Gaussian(1.0), 0.01)
    many = [(PoissonSubsampled(Gaussian(1.0 + i / 10), 0.01), 2**24) for i in range(9)]
    for obj, words in (([(sub, 3), (Gaussian(2.0), 1)], "at least 16777216 steps .*got 4"),
                       ([(sub, 5)], "at least 16777216 steps"),
                       (many, "1 to 8 distinct")):
        with pytest.raises(ConversionError, match=words):
            routes.route("clt").epsilon(obj, 1e-6)
        with pytest.raises(ConversionError, match=words):
            _clt.epsilon_bounds(obj, 1e-6) if len(obj) > 1 else _clt.applies(obj)
