"""Calibration: the accounting pipeline inverted in one parameter, always on the safe side.

:func:`calibrate` finds the parameter x of ``make(x)`` (a mechanism or a guarantee) with the
least noise — or the most steps, or the highest rate — whose guarantee still meets a target.
It discovers the direction in which privacy improves, brackets the boundary with an
expanding geometric search, solves a monotone criterion with :func:`scipy.optimize.brentq`,
steps to the safe side, and re-verifies the result: the returned ``achieved`` guarantee never
exceeds the target.

Examples:
    >>> from renyi.mechanisms import Gaussian
    >>> from renyi.definitions import ApproxDP
    >>> cal = calibrate(lambda s: Gaussian(s), ApproxDP(1.0, 1e-5))
    >>> round(cal.value, 9)
    3.730631635
    >>> cal.achieved.epsilon <= 1.0
    True
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
from renyi.core._lazy import optimize

from renyi.core._validation import NONNEGATIVE, ORDER, POSITIVE, PROBABILITY_OPEN, check_int
from renyi.guarantees.composition import as_guarantee
from renyi.guarantees import RDP, ZCDP, ApproxDP, Guarantee, PureDP
from renyi.core.errors import ConversionError, DomainError, RenyiError

__all__ = ["Calibration", "calibrate", "calibrate_gaussian", "calibrate_laplace", "calibrate_discrete_laplace"]

#: Default search range when no bounds are given: x ∈ [1e-12, 1e12] (log-space).
_DEFAULT_LOG_RANGE = (math.log(1e-12), math.log(1e12))
_INT_MAX = 2**62


@dataclass(frozen=True, slots=True)
class Calibration:
    """The result of :func:`calibrate`.

    Attributes:
        value: the calibrated parameter (least noise / most steps / highest rate that meets
            the target).
        achieved: what ``make(value)`` achieves, in the target's own terms (an ``ApproxDP`` at
            the target δ, a ``PureDP``, a ``ZCDP`` or an RDP point); never above the target.
        target: the target guarantee.
        made: ``make(value)`` itself (the mechanism or guarantee); for a target stated under
            replace-one neighbours, restated under replace-one (:mod:`renyi._neighbouring`).
    """

    value: float | Fraction
    achieved: Guarantee
    target: Guarantee = field(repr=False)
    made: Any = field(repr=False, compare=False)
    #: the accounting route that certified ``achieved`` for an (ε, δ) target (see
    #: :mod:`renyi.routes`), else None
    method: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        # ``achieved`` was measured on ``made``: it is stated under made's neighbouring relation
        # (the target's when the target is replace-one, since make(x) is then restated).
        from renyi.guarantees.neighbouring import relation_of, with_relation

        if isinstance(self.achieved, Guarantee) and self.made is not None:
            object.__setattr__(self, "achieved", with_relation(self.achieved, relation_of(self.made)))

    def __float__(self) -> float:
        return float(self.value)


# --------------------------------------------------------------------------- targets
def _restated(make: Callable[[Any], Any], relation: str) -> Callable[[Any], Any]:
    from renyi.guarantees.neighbouring import to_relation

    def restated(x: Any) -> Any:
        return to_relation(make(x), relation)

    return restated


class _Target:
    """A target as a monotone measure: ``excess(obj)`` ≤ 0 iff obj meets the target."""

    def __init__(self, target: Any, definition: str | None, method: str | None = None) -> None:
        self.definition = definition
        if method is not None:
            from renyi.accounting.routes import route

            route(method)  # an unknown name is a DomainError now, not "cannot be met" later
        # An (ε, δ) target is measured through one accounting route: the one named, the one the
        # definition names, or (None) the minimum over all of them (renyi.routes).
        self.method = method if method is not None else definition
        self.route_used: str | None = None
        if isinstance(target, tuple) and len(target) == 2 and not isinstance(target, Guarantee):
            alpha = ORDER.check("alpha", target[0])
            eps = NONNEGATIVE.check("epsilon", target[1])
            target = RDP.from_point(alpha, eps) if math.isfinite(alpha) else PureDP(eps)
        if isinstance(target, ApproxDP) and float(target.delta) == 0.0:
            target = PureDP(float(target.epsilon))
        if isinstance(target, PureDP):
            self.kind, self.eps = "pure", float(target.epsilon)
        elif isinstance(target, ApproxDP):
            self.kind, self.eps, self.delta = "approx", float(target.epsilon), float(target.delta)
            PROBABILITY_OPEN.check("delta", self.delta)
        elif isinstance(target, ZCDP):
            self.kind, self.rho, self.xi = "zcdp", target.rho, target.xi
            if self.rho == 0.0 and self.xi == 0.0:
                raise DomainError("target rho must be in (0, inf) (ρ = ξ = 0 means no privacy loss at all); got 0.0",
                                  name="rho", value=0.0)
        elif isinstance(target, RDP):
            if not target.orders:
                raise DomainError("an RDP target must be given at specific orders: use RDP.from_point(alpha, "
                                  "epsilon) or RDP.from_points(...)", name="target")
            self.kind = "rdp"
            self.orders = np.asarray(target.orders, dtype=np.float64)
            self.eps_at = np.asarray(target.rdp(self.orders), dtype=np.float64)
        else:
            raise TypeError(f"target must be ApproxDP, PureDP, ZCDP, an RDP point or (alpha, epsilon); "
                            f"got {type(target).__name__}")
        self.target = target

    # The measures; each returns (excess, ok, achieved): excess = log(achieved/target) drives the
    # root finder, while ``ok`` is decided by direct comparison of the numbers (a log
    # difference can round an excess of one ulp to 0).
    def evaluate(self, obj: Any) -> tuple[float, bool, Guarantee | None]:
        try:
            return self._evaluate(obj)
        except ConversionError:
            return math.inf, False, None

    def _route(self, obj: Any) -> Any:
        if self.definition is None:
            return obj
        g = as_guarantee(obj)
        if self.definition == "rdp":
            return g.to_rdp()
        if self.definition == "zcdp":
            return g.to_zcdp()
        raise DomainError(f"definition must be one of None, 'rdp', 'zcdp'; got {self.definition!r}",
                          name="definition", value=self.definition)

    def _evaluate(self, obj: Any) -> tuple[float, bool, Guarantee | None]:
        if self.kind == "approx":
            from renyi.accounting.routes import best_epsilon

            # The certified upper bound of the route (PLD: the upper end of its bracket), so
            # the returned parameter meets the target one-sidedly.
            c = best_epsilon(obj, self.delta, self.method)
            e = float(c.value)
            self.route_used = c.method
            return _log_ratio(e, self.eps), e <= self.eps, ApproxDP(e, self.delta) if math.isfinite(e) else None
        src = self._route(obj)
        if self.kind == "pure":
            e = float(as_guarantee(src).rdp(math.inf)) if not isinstance(src, PureDP) else float(src.epsilon)
            return _log_ratio(e, self.eps), e <= self.eps, PureDP(e) if math.isfinite(e) else None
        if self.kind == "zcdp":
            z = src.to_zcdp()
            r = max(_log_ratio(z.rho, self.rho) if self.rho > 0 else (math.inf if z.rho > 0 else -math.inf),
                    _log_ratio(z.xi + z.rho, self.xi + self.rho))
            ok = z.rho <= self.rho and z.xi + z.rho <= self.xi + self.rho
            return r, ok, z
        vals = np.asarray(as_guarantee(src).rdp(self.orders), dtype=np.float64).reshape(self.orders.shape)
        r = max(_log_ratio(float(v), float(t)) for v, t in zip(vals, self.eps_at))
        ok = bool(np.all(vals <= self.eps_at))
        if not np.all(np.isfinite(vals)):
            return r, ok, None
        label = ", ".join(f"ε({a:g})={v:.6g}" for a, v in zip(self.orders, vals))
        return r, ok, RDP.from_points(self.orders, vals, label=f"achieved {label}")

    def describe(self) -> str:
        return repr(self.target)


def _log_ratio(achieved: float, target: float) -> float:
    """log(achieved/target) with the conventions 0/0 → −∞ (met), x/0 → +∞, ∞ → +∞."""
    if math.isnan(achieved):
        return math.inf
    if achieved <= 0.0:
        return -math.inf
    if target <= 0.0 or math.isinf(achieved):
        return math.inf
    return math.log(achieved) - math.log(target)


# --------------------------------------------------------------------------- search
class _Problem:
    def __init__(self, make: Callable[[Any], Any], target: _Target, integer: bool) -> None:
        self.make, self.target, self.integer = make, target, integer
        self.cache: dict[float, tuple[float, bool, Any, Any]] = {}

    def x_of(self, t: float) -> Any:
        return int(t) if self.integer else math.exp(t)

    def at(self, t: float) -> tuple[float, bool, Any, Any]:
        """(excess, ok, achieved, made) at the parameter x(t); excess is NaN outside make's domain."""
        if t in self.cache:
            return self.cache[t]
        x = self.x_of(t)
        try:
            made = self.make(x)
            ex, ok, ach = self.target.evaluate(made)
        except (DomainError, OverflowError, ZeroDivisionError, ConversionError):
            made, ex, ok, ach = None, math.nan, False, None
        self.cache[t] = (ex, ok, ach, made)
        return self.cache[t]

    def excess(self, t: float) -> float:
        return self.at(t)[0]

    def meets(self, t: float) -> bool:
        return self.at(t)[1]


def _expand(prob: _Problem, lo: float, hi: float, t0: float) -> list[float]:
    """Evaluate at t0 ± 1, ±2, ±4, … (clipped to [lo, hi]) until the feasibility changes."""
    pts = {t0}
    step = 1.0
    while True:
        for t in (t0 - step, t0 + step):
            t = min(max(t, lo), hi)
            if prob.integer:
                t = float(round(t))
            pts.add(t)
        ts = sorted(pts)
        flags = [prob.meets(t) for t in ts]
        valid = [not math.isnan(prob.excess(t)) for t in ts]
        if any(f for f in flags) and any((not f) and v for f, v in zip(flags, valid)):
            return ts
        if (t0 - step <= lo) and (t0 + step >= hi):
            return ts
        step *= 2.0


def _solve(prob: _Problem, t_in: float, t_out: float) -> float:
    """The feasible t closest to the boundary between t_in (meets) and t_out (does not)."""
    if prob.integer:
        i_in, i_out = int(t_in), int(t_out)
        while abs(i_out - i_in) > 1:
            imid = (i_in + i_out) // 2
            if prob.meets(float(imid)):
                i_in = imid
            else:
                i_out = imid
        return float(i_in)
    e_in, e_out = prob.excess(t_in), prob.excess(t_out)
    a: float = t_in
    b: float = t_out
    if math.isfinite(e_in) and math.isfinite(e_out):
        try:
            root = optimize.brentq(prob.excess, min(a, b), max(a, b), xtol=1e-14, rtol=4 * np.finfo(float).eps,
                                   maxiter=300)
        except (ValueError, RuntimeError):
            root = None
        if root is not None:
            # step from the root toward the feasible side until the criterion really holds
            d = math.copysign(max(abs(root), 1.0) * 2.0**-50, a - root) if a != root else 0.0
            t: float = root
            for _ in range(60):
                if prob.meets(t):
                    return t
                t = root + d
                d *= 2.0
                if (t - a) * (root - a) <= 0:  # overshot past the known-feasible end
                    break
            return a
    # bisection (infinite excess at an end, or brentq failed): keep the feasible end
    for _ in range(200):
        mid = 0.5 * (a + b)
        if mid in (a, b):
            break
        if prob.meets(mid):
            a = mid
        else:
            b = mid
        if abs(b - a) <= 1e-14 * max(1.0, abs(a)):
            break
    return a


def calibrate(make: Callable[[Any], Any], target: Any, *, bounds: tuple[float, float] | None = None,
              definition: str | None = None, integer: bool = False, method: str | None = None) -> Calibration:
    """Find the parameter of ``make`` with the least noise that meets ``target``.

    Args:
        make: x ↦ a mechanism or guarantee, monotone in privacy (σ, scale, rate, steps, ...).
        target: ``ApproxDP(ε, δ)`` (achieved ε at δ ≤ ε), ``PureDP(ε)`` or ``ApproxDP(ε, 0)``
            (ε(∞) ≤ ε), ``ZCDP(ρ, ξ)`` (achieved ρ ≤ ρ and ξ + ρ ≤ ξ_t + ρ_t), or an RDP point
            ``RDP.from_point(α, ε)`` / ``(α, ε)`` (achieved ε(α) ≤ ε at the target's orders).
        bounds: optional (lo, hi) with 0 < lo < hi: the range searched (inclusive). Without it
            x ranges over [1e-12, 1e12] (integers: [1, 2**62]).
        definition: route for the achieved value: ``None`` (the tightest the object knows),
            ``"rdp"`` (through its RDP curve) or ``"zcdp"`` (through zCDP).
        integer: the parameter is an integer (steps, counts): the largest/smallest feasible
            integer is returned.
        method: for an (ε, δ) target, the accounting route that measures ε (``"exact"``,
            ``"pld"``, ``"rdp"``, ``"zcdp"``, ...; :mod:`renyi.routes`). Default: the tightest
            valid route — its certified upper bound, so the target still holds.

    Returns:
        :class:`Calibration` with ``value`` on the safe side and ``achieved`` re-verified to
        meet the target.

    Raises:
        DomainError: if the target is infeasible (δ ≥ 1, a pure target for a mechanism with no
            pure-DP bound, or a target not reachable within the bounds), or ``make`` is not
            monotone.
    """
    if not callable(make):
        raise TypeError(f"make must be callable; got {type(make).__name__}")
    tgt = _Target(target, definition, method)
    if isinstance(target, Guarantee) and target.neighbouring == "replace_one":
        # A replace-one target is met by what make(x) guarantees under replace-one: an
        # add/remove mechanism restated (sensitivity doubled, or group privacy of two).
        make = _restated(make, "replace_one")
    if integer:
        lo_x, hi_x = (1, _INT_MAX) if bounds is None else (check_int("bounds[0]", bounds[0], minimum=0),
                                                          check_int("bounds[1]", bounds[1], minimum=0))
        if lo_x >= hi_x:
            raise DomainError(f"bounds must satisfy lo < hi; got {bounds!r}", name="bounds", value=bounds)
        lo, hi = float(lo_x), float(hi_x)
        t0 = float(min(max(1, lo_x), hi_x))
    else:
        if bounds is None:
            lo, hi = _DEFAULT_LOG_RANGE
        else:
            b0, b1 = POSITIVE.check("bounds[0]", bounds[0]), POSITIVE.check("bounds[1]", bounds[1])
            if not b0 < b1 or math.isinf(b1):
                raise DomainError(f"bounds must satisfy 0 < lo < hi < inf; got {bounds!r}", name="bounds", value=bounds)
            lo, hi = math.log(b0), math.log(b1)
        t0 = min(max(0.0, lo), hi) if bounds is None else 0.5 * (lo + hi)
    if tgt.kind == "approx" and tgt.method in (None, "rdp", "pld"):
        # DP-SGD compositions: the dedicated solvers of renyi.dpsgd, on the same route(s)
        fast = _dpsgd_route(make, tgt, lo, hi, t0, integer)
        if fast is not None:
            return fast
    prob = _Problem(make, tgt, integer)
    ts = _expand(prob, lo, hi, t0)
    flags = [prob.meets(t) for t in ts]
    valid = [t for t in ts if not math.isnan(prob.excess(t))]
    if not valid:
        raise DomainError(f"make(x) raised a DomainError at every x tried in [{prob.x_of(lo)}, {prob.x_of(hi)}]; "
                          "pass bounds inside its domain", name="bounds")
    if not any(flags):
        best = min(valid, key=prob.excess)
        achieved = prob.at(best)[2]
        if achieved is None:
            achieved = "no finite guarantee of that kind"
        why = ""
        if tgt.kind == "pure":
            why = " (a pure-ε target needs a finite ε(∞); e.g. Gaussian noise is never pure DP)"
        raise DomainError(f"target {tgt.describe()} cannot be met for x in [{prob.x_of(lo):g}, {prob.x_of(hi):g}]"
                          f"{why}; best achieved {achieved!r} at x = {prob.x_of(best):g}", name="target")
    # With a monotone criterion the feasible points form one interval that touches an end.
    feas = [t for t, f in zip(ts, flags) if f]
    infeas = [t for t, f in zip(ts, flags) if not f and not math.isnan(prob.excess(t))]
    if infeas and min(feas) < min(infeas) and max(feas) > max(infeas):
        raise DomainError("the criterion is not monotone in the parameter (feasible on both sides of an "
                          "infeasible point); calibrate within bounds where it is monotone", name="make")
    if not infeas:
        # Everything meets the target: return the end that is least private (largest excess).
        e_lo, e_hi = prob.excess(min(feas)), prob.excess(max(feas))
        if e_lo == e_hi:
            raise DomainError(f"target {tgt.describe()} is met everywhere in the range and the guarantee does not "
                              "depend on the parameter; nothing to calibrate", name="make")
        t_best = min(feas) if e_lo > e_hi else max(feas)
    elif max(feas) < min(infeas):
        # privacy degrades as x grows (steps, rate): the largest feasible x
        t_in = max(feas)
        t_out = min(t for t in infeas if t > t_in)
        t_best = _solve(prob, t_in, t_out)
    else:
        # privacy improves as x grows (noise): the smallest feasible x
        t_in = min(feas)
        t_out = max(t for t in infeas if t < t_in)
        t_best = _solve(prob, t_in, t_out)
    value = prob.x_of(t_best)
    # Re-verify at the exact value returned (no cache, no log round trip).
    made = make(value)
    _, ok, achieved = tgt.evaluate(made)
    if not ok or achieved is None:  # pragma: no cover - guarded by the search
        raise RenyiError(f"calibration failed to verify: {achieved!r} does not meet {tgt.describe()}")
    used = tgt.route_used if tgt.kind == "approx" else None
    return Calibration(value=value, achieved=achieved, target=tgt.target, made=made, method=used)


# --------------------------------------------------------------------------- DP-SGD route
def _dpsgd_params(obj: Any) -> tuple[float, float, int] | None:
    """(q, σ, T) when ``obj`` is T Poisson-subsampled Gaussian steps (DP-SGD), else None."""
    from renyi.sampling.subsampling import PoissonSubsampled, SubsampledGaussianRDP

    if isinstance(obj, PoissonSubsampled):
        nm = obj.noise_multiplier
        return None if nm is None or obj.rate in (0.0, 1.0) else (obj.rate, nm, 1)
    if isinstance(obj, SubsampledGaussianRDP):
        return obj.q, obj.sigma, obj.steps
    return None


class _Surrogate:
    """Meets the target iff the varying DP-SGD parameter is on the safe side of its solved value
    (cheap: builds ``make(x)`` and reads its parameters, no accounting)."""

    def __init__(self, index: int, solved: float, safe_above: bool) -> None:
        self.index, self.solved, self.safe_above = index, solved, safe_above

    def evaluate(self, obj: Any) -> tuple[float, bool, Any]:
        p = _dpsgd_params(obj)
        if p is None:
            raise DomainError("make(x) stopped being a DP-SGD composition", name="make")
        v = float(p[self.index])
        excess = _log_ratio(self.solved, v) if self.safe_above else _log_ratio(v, self.solved)
        return excess, (v >= self.solved) if self.safe_above else (v <= self.solved), None


def _dpsgd_route(make: Callable[[Any], Any], tgt: _Target, lo: float, hi: float, t0: float,
                 integer: bool) -> Calibration | None:
    """Calibrate a DP-SGD composition (T Poisson-subsampled Gaussian steps) by the dedicated
    solvers of :mod:`renyi.dpsgd` instead of a root search over full ε evaluations.

    Two probes of ``make`` tell which one of (q, σ, T) the parameter drives; the solver gives
    the boundary value of that parameter; a cheap search maps it back to x; the result is
    re-verified exactly as the generic path would. Returns None (generic path) whenever this
    does not apply or anything is unexpected.
    """
    from renyi.accounting import dpsgd

    probe = _Problem(make, _Target(ApproxDP(tgt.eps, tgt.delta), None), integer)
    pts = [t0, min(t0 + 1.0, hi) if t0 + 1.0 <= hi else max(t0 - 1.0, lo)]
    try:
        made = [make(probe.x_of(t)) for t in pts]
    except (DomainError, OverflowError, ZeroDivisionError, ConversionError, TypeError):
        return None
    params = [_dpsgd_params(m) for m in made]
    if params[0] is None or params[1] is None:
        return None
    moving = [i for i in range(3) if params[0][i] != params[1][i]]
    if len(moving) != 1:
        return None
    i = moving[0]
    q, sigma, steps = params[0]
    how = tgt.method  # None: the tightest of the solvers' routes (RDP, PLD), one-sided on its upper bound
    try:
        if i == 1:
            answer: Any = dpsgd.noise_multiplier(tgt.eps, tgt.delta, q, steps=steps, method=how)
        elif i == 2:
            answer = dpsgd.steps(tgt.eps, tgt.delta, sigma, q, method=how)
            if answer < 1:
                return None
        else:
            answer = dpsgd.sample_rate(tgt.eps, tgt.delta, sigma, steps=steps, method=how)
            if answer <= 0.0:
                return None
    except DomainError:
        return None
    solved = float(answer)
    prob = _Problem(make, _Surrogate(i, solved, safe_above=(i == 1)), integer)  # type: ignore[arg-type]
    ts = _expand(prob, lo, hi, t0)
    flags = [prob.meets(t) for t in ts]
    feas = [t for t, f in zip(ts, flags) if f]
    infeas = [t for t, f in zip(ts, flags) if not f and not math.isnan(prob.excess(t))]
    if not feas or not infeas:
        return None
    if max(feas) < min(infeas):
        t_best = _solve(prob, max(feas), min(t for t in infeas if t > max(feas)))
    elif min(feas) > max(infeas):
        t_best = _solve(prob, min(feas), max(t for t in infeas if t < min(feas)))
    else:
        return None
    value = prob.x_of(t_best)
    made_v = make(value)
    found = _dpsgd_params(made_v)
    if how == "rdp" and found is not None and float(found[i]) == solved and answer.achieved is not None:
        # make(value) is exactly the configuration the solver verified (with the same rounded-up
        # RDP ε that the generic check computes): no second evaluation needed
        return Calibration(value=value, achieved=ApproxDP(float(answer.achieved), tgt.delta), target=tgt.target,
                           made=made_v, method="rdp")
    _, ok, achieved = tgt.evaluate(made_v)
    if not ok or achieved is None:
        return None
    return Calibration(value=value, achieved=achieved, target=tgt.target, made=made_v, method=tgt.route_used)


# --------------------------------------------------------------------------- conveniences
def calibrate_gaussian(epsilon: float, delta: float, sensitivity: float = 1.0, count: int = 1, *,
                       method: str = "exact") -> Calibration:
    """σ of the Gaussian mechanism so that ``count`` runs are together (ε, δ)-DP.

    Args:
        epsilon: ε ∈ (0, ∞).
        delta: δ ∈ (0, 1).
        sensitivity: ℓ₂-sensitivity Δ ∈ (0, ∞).
        count: number of (adaptive) runs k ≥ 1 (up to 10⁶ and beyond: μ = √k·Δ/σ).
        method: ``"exact"`` (the analytic Gaussian, [BW18] Thm 8 / GDP — the smallest valid σ),
            ``"zcdp"`` (through ρ and [CKS20] Cor. 13), ``"rdp"`` or ``"pld"`` (the routes of
            :mod:`renyi.routes`).

    Returns:
        :class:`Calibration`; ``value`` is σ and ``made`` the k-fold guarantee.

    Examples:
        >>> round(calibrate_gaussian(1.0, 1e-5).value, 9)
        3.730631635
    """
    from renyi.mechanisms import Gaussian

    eps = POSITIVE.check("epsilon", epsilon)
    dlt = PROBABILITY_OPEN.check("delta", delta)
    sens = POSITIVE.check("sensitivity", sensitivity)
    k = check_int("count", count)
    if method not in ("exact", "zcdp", "rdp", "pld"):
        raise DomainError(f"method must be one of 'exact', 'zcdp', 'rdp', 'pld'; got {method!r}", name="method",
                          value=method)

    def make(s: float) -> Any:
        m = Gaussian(s, sens)
        return m if k == 1 else m.compose(k)

    # σ scales like √k·Δ: centre the search there so that bracketing is short.
    scale = math.sqrt(k) * sens
    return calibrate(make, ApproxDP(eps, dlt), bounds=(scale * 1e-8, scale * 1e8), method=method)


def calibrate_laplace(epsilon: float, sensitivity: float = 1.0, count: int = 1, *, delta: float = 0.0) -> Calibration:
    """Scale b of the Laplace mechanism so that ``count`` runs are ε-DP (δ = 0) or (ε, δ)-DP.

    For δ = 0 this is b = kΔ/ε (rounded up until it verifies); for δ > 0 the exact profile
    (k = 1) or the composed RDP curve (k > 1) is inverted.

    Examples:
        >>> calibrate_laplace(0.5).value
        2.0
    """
    from renyi.mechanisms import Laplace

    eps = POSITIVE.check("epsilon", epsilon)
    sens = POSITIVE.check("sensitivity", sensitivity)
    k = check_int("count", count)
    d = NONNEGATIVE.check("delta", delta)

    def make(b: float) -> Any:
        m = Laplace(b, sens)
        return m if k == 1 else m.compose(k)

    if d == 0.0:
        b = max(k * sens / eps, 5e-324)  # kΔ/ε may underflow for subnormal Δ
        while k * (sens / b) > eps:
            b = math.nextafter(b, math.inf)
        made = make(b)
        e = float(as_guarantee(made).rdp(math.inf))
        return Calibration(value=b, achieved=PureDP(e), target=PureDP(eps), made=made)
    scale = k * sens / eps
    return calibrate(make, ApproxDP(eps, d), bounds=(scale * 1e-8, scale * 1e4))


def calibrate_discrete_laplace(epsilon: float, sensitivity: int = 1, count: int = 1) -> Calibration:
    """Scale t of the discrete Laplace mechanism so that ``count`` runs are ε-DP: t = kΔ/ε as an
    exact ``Fraction`` of the float ε (rounded up until it verifies)."""
    from fractions import Fraction

    from renyi.mechanisms import DiscreteLaplace

    eps = POSITIVE.check("epsilon", epsilon)
    sens = check_int("sensitivity", sensitivity)
    k = check_int("count", count)
    t = Fraction(k * sens) / Fraction(eps)  # exact: k·Δ/t = ε exactly
    m = DiscreteLaplace(t, sens)
    e = k * float(m.epsilon)
    while e > eps:  # float(Δ/t) may round up by an ulp
        t = t * (1 + Fraction(1, 2**52))
        m = DiscreteLaplace(t, sens)
        e = k * float(m.epsilon)
    made = m if k == 1 else m.compose(k)
    return Calibration(value=t, achieved=PureDP(e), target=PureDP(eps), made=made)
