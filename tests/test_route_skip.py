"""The default minimum skips a route only when it certifiably cannot win (issue #24).

``renyi.accounting._route_skip`` bounds the value of the rdp, rdp_classic, advanced and basic
routes from below for compositions of Poisson-subsampled Gaussians (example or person level);
the default ``.epsilon(δ)`` then computes a route only when that bound is below the best value
in hand. These tests would fail if a skip ever removed a winning route: on random setups
(off any grid: random q, σ, k, T, δ, single items and mixed lists) every bound is checked
against the route's value computed fully, and the default answer against the minimum over
all routes.
"""

from __future__ import annotations

import math
import random

import pytest

from renyi.accounting import _route_skip, routes
from renyi.core.errors import ConversionError
from renyi.mechanisms import Gaussian
from renyi.sampling.subsampling import PoissonSubsampled


def _setup(rng: random.Random) -> tuple[list[tuple[object, int]], float]:
    def one() -> tuple[object, int]:
        k = rng.choice([1, 1, 2, 3, 5, 8])
        q = 10 ** rng.uniform(-3.0, -0.5)
        s = rng.uniform(0.6, 3.0)
        t = rng.choice([1, 3, 10, 50, 100, 400])
        return PoissonSubsampled(Gaussian(s), q).group(k), t

    parts = [one() for _ in range(rng.choice([1, 1, 1, 2]))]
    return parts, 10 ** rng.uniform(-9.0, -3.0)


def _all_routes(parts: list[tuple[object, int]], delta: float) -> dict[str, float]:
    it = routes.items(parts)
    out = {}
    for r in routes.ROUTES:
        try:
            out[r.name] = r.epsilon(it, delta).value
        except ConversionError:
            pass
    return out


def _check_bounds(parts: list[tuple[object, int]], delta: float, values: dict[str, float]) -> int:
    """Every lower bound against the route's full value; returns how many certified ≥ target."""
    it = routes.items(parts)
    b = _route_skip.plan(it.items, delta, it.curve)
    assert b is not None
    certified = 0
    for name in _route_skip.GUARDED:
        if name not in values:
            continue
        v = values[name]
        assert b.lower(name, math.inf, full=True) <= v * (1 + 1e-12) + 1e-15, (name, parts, delta)
        for f in (0.3, 0.9, 0.999, 1.0, 1.001, 1.1, 3.0):
            target = v * f
            w = b.lower(name, target)
            if w >= target:  # a skip would happen at this target: the route must be ≥ w
                certified += 1
                assert v >= w * (1 - 1e-12), (name, f, v, w, parts, delta)
    return certified


@pytest.mark.parametrize("seed", [1, 3, 4, 5])
def test_lower_bounds_never_exceed_the_routes_and_default_is_the_minimum(seed: int) -> None:
    rng = random.Random(1000 + seed)
    parts, delta = _setup(rng)
    values = _all_routes(parts, delta)
    _check_bounds(parts, delta, values)
    best = routes.best_epsilon(parts, delta)
    assert best.value == min(values.values()), (parts, delta, values, best)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(40))
def test_lower_bounds_random_sweep(seed: int) -> None:
    rng = random.Random(5000 + seed)
    parts, delta = _setup(rng)
    values = _all_routes(parts, delta)
    _check_bounds(parts, delta, values)
    assert routes.best_epsilon(parts, delta).value == min(values.values())


def test_the_benchmark_case_skips_and_keeps_the_answer() -> None:
    """k = 1, q = 0.001, σ = 2, T = 100 (issue #24's slowest ratio): the comparison routes are
    skipped, their bounds are below their values, and the answer is the PLD's, the minimum."""
    comp = 100 * PoissonSubsampled(Gaussian(2.0), 0.001).group(1)
    res = {r.route.name: r for r in routes._table(comp, 1e-5, "epsilon", True)}
    for name in ("rdp_classic", "advanced", "basic"):
        assert res[name].conversion is None and res[name].note.startswith("skipped"), res[name]
    values = _all_routes([(comp, 1)], 1e-5)
    assert _check_bounds([(PoissonSubsampled(Gaussian(2.0), 0.001).group(1), 100)], 1e-5, values) > 0
    c = comp.best_epsilon(1e-5)
    assert c.method == "pld" and c.value == min(values.values())


def test_skip_bounds_are_certified_near_the_decision() -> None:
    """k = 2: the rdp_classic bound is within a few % of the route (not vacuous), below it."""
    m = PoissonSubsampled(Gaussian(2.0), 0.001).group(2)
    it = routes.items([(m, 100)])
    b = _route_skip.plan(it.items, 1e-5, it.curve)
    assert b is not None and b.positive()
    v = routes.route("rdp_classic").epsilon(it, 1e-5).value
    lb = b.lower("rdp_classic", math.inf, full=True)
    assert 0.9 * v <= lb <= v


def test_no_plan_outside_the_subsampled_gaussians() -> None:
    from renyi.mechanisms import Laplace

    it = routes.items([(PoissonSubsampled(Laplace(1.0), 0.01), 10)])
    assert _route_skip.plan(it.items, 1e-5, it.curve) is None
    it = routes.items([(PoissonSubsampled(Gaussian(1.0), 1.0), 10)])
    assert _route_skip.plan(it.items, 1e-5, it.curve) is None


def test_tiny_total_variation_keeps_the_old_order() -> None:
    """σ = 1e6: one step's TV is far below δ, so a cheap route may return 0 and the PLD must
    not go first (the old order, with its stop at 0)."""
    m = PoissonSubsampled(Gaussian(1e6), 0.01)
    it = routes.items([(m, 10)])
    b = _route_skip.plan(it.items, 1e-5, it.curve)
    assert b is not None and not b.positive()
    assert routes._pld_first(it, 1e-5) is None


def test_the_fast_path_asks_every_route() -> None:
    """Each route of ROUTES appears in the fast path's table (computed, skipped or with its
    reason): a route added to the list later (the CLT route was) is never left out."""
    comp = 100 * PoissonSubsampled(Gaussian(2.0), 0.001).group(2)
    res = routes._pld_first(routes.items(comp), 1e-5)
    assert res is not None
    assert [r.route.name for r in res] == list(routes.names())
