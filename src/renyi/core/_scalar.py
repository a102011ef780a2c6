"""Scalar root finding and bounded minimisation without scipy.

Importing ``scipy.optimize`` costs about a quarter of a second of CPU (it pulls in
``scipy.linalg``, ``scipy.sparse`` and more), more than a whole ``renyi release`` report needs
for its handful of order optimisations. The two methods here are R. P. Brent's, *Algorithms
for Minimization without Derivatives* (1973): ``zero`` (ch. 4: bisection, secant and inverse
quadratic interpolation on a bracket) and ``localmin`` (ch. 5: golden section and successive
parabolic interpolation on an interval), the methods scipy's ``brentq`` and
``minimize_scalar(method="bounded")`` implement, written from the book.

Callers in renyi only use them where every point is a valid answer (an order α at which a
bound holds, evaluated exactly at the point returned), so the solvers buy tightness, never
validity.

    >>> round(brent_root(lambda x: x * x - 2.0, 0.0, 2.0), 12)
    1.414213562373
    >>> x, fx = minimize_bounded(lambda x: (x - 0.3) ** 2, -1.0, 2.0, xatol=1e-10)
    >>> round(x, 8), fx < 1e-16
    (0.3, True)
"""

from __future__ import annotations

import math
from collections.abc import Callable

__all__ = ["brent_root", "minimize_bounded"]

_EPS = 2.0**-52
_GOLD = 0.5 * (3.0 - math.sqrt(5.0))  # 1 − 1/φ: the golden-section step


def brent_root(f: Callable[[float], float], a: float, b: float, *, xtol: float = 2e-12, rtol: float = 4 * _EPS,
               maxiter: int = 500) -> float:
    """A root of ``f`` in [a, b], where f(a) and f(b) have opposite signs (or one is 0).

    Brent's ``zero``: the bracket [b, c] always contains a sign change and shrinks until it is
    narrower than ``xtol + rtol·|b|`` (or ``maxiter`` steps: the best point so far is returned).

    Raises:
        ValueError: f(a) and f(b) have the same sign.
    """
    fa, fb = f(a), f(b)
    if fa == 0.0:
        return a
    if fb == 0.0:
        return b
    if (fa > 0.0) == (fb > 0.0):
        raise ValueError("f(a) and f(b) must have opposite signs")
    c, fc = a, fa
    d = e = b - a
    for _ in range(maxiter):
        if (fb > 0.0) == (fc > 0.0):
            c, fc = a, fa
            d = e = b - a
        if abs(fc) < abs(fb):  # b is the best point so far, c the other end of the bracket
            a, b, c = b, c, b
            fa, fb, fc = fb, fc, fb
        tol = 2.0 * _EPS * abs(b) + 0.5 * (xtol + rtol * abs(b))
        m = 0.5 * (c - b)
        if abs(m) <= tol or fb == 0.0:
            return b
        if abs(e) < tol or abs(fa) <= abs(fb):
            d = e = m  # bisection
        else:
            s = fb / fa
            if a == c:  # secant
                p, q = 2.0 * m * s, 1.0 - s
            else:  # inverse quadratic interpolation
                q, r = fa / fc, fb / fc
                p = s * (2.0 * m * q * (q - r) - (b - a) * (r - 1.0))
                q = (q - 1.0) * (r - 1.0) * (s - 1.0)
            if p > 0.0:
                q = -q
            else:
                p = -p
            if 2.0 * p < min(3.0 * m * q - abs(tol * q), abs(e * q)):
                e, d = d, p / q  # the interpolation is accepted
            else:
                d = e = m
        a, fa = b, fb
        b += d if abs(d) > tol else (tol if m > 0.0 else -tol)
        fb = f(b)
    return b


def minimize_bounded(f: Callable[[float], float], a: float, b: float, *, xatol: float = 1e-5,
                     maxiter: int = 500) -> tuple[float, float]:
    """A local minimum of ``f`` on [a, b]: (x, f(x)), the best point evaluated.

    Brent's ``localmin``: golden-section steps, replaced by a parabola through the three best
    points when it falls well inside the interval; stops when x is within about ``xatol`` of
    the minimum of a unimodal f (or after ``maxiter`` evaluations). ``f`` must return finite
    numbers (callers map an unusable point to a large value).
    """
    if not a < b:
        raise ValueError("the interval must have a < b")
    sqrt_eps = math.sqrt(_EPS)
    x = w = v = a + _GOLD * (b - a)
    fx = fw = fv = f(x)
    d = e = 0.0
    for _ in range(maxiter):
        mid = 0.5 * (a + b)
        tol = sqrt_eps * abs(x) + xatol / 3.0
        t2 = 2.0 * tol
        if abs(x - mid) <= t2 - 0.5 * (b - a):
            break
        golden = True
        if abs(e) > tol:  # try a parabola through x, w, v
            r = (x - w) * (fx - fv)
            q = (x - v) * (fx - fw)
            p = (x - v) * q - (x - w) * r
            q = 2.0 * (q - r)
            if q > 0.0:
                p = -p
            else:
                q = -q
            r, e = e, d
            if abs(p) < abs(0.5 * q * r) and q * (a - x) < p < q * (b - x):
                d = p / q
                u = x + d
                if u - a < t2 or b - u < t2:  # not too close to the ends
                    d = tol if x < mid else -tol
                golden = False
        if golden:
            e = (b - x) if x < mid else (a - x)
            d = _GOLD * e
        u = x + (d if abs(d) >= tol else (tol if d > 0.0 else -tol))
        fu = f(u)
        if fu <= fx:
            if u < x:
                b = x
            else:
                a = x
            v, fv, w, fw, x, fx = w, fw, x, fx, u, fu
        else:
            if u < x:
                a = u
            else:
                b = u
            if fu <= fw or w == x:
                v, fv, w, fw = w, fw, u, fu
            elif fu <= fv or v == x or v == w:
                v, fv = u, fu
    return x, fx
