"""Exact binomial tail bounds behind the audits (no renyi imports beyond the core).

Two pieces of mathematics live here:

* the one-sided Clopper–Pearson upper confidence bound of a binomial proportion, computed as a
  Beta quantile (Clopper & Pearson 1934); it is exact, not asymptotic;
* the p-value of the one-run audit (Steinke, Nasr & Jagielski 2023, Thm 3 / Alg. 2 of the
  arXiv version 2305.08846): under (ε, δ)-DP the number of correct guesses W among r guesses on
  m canaries satisfies P[W ≥ v] ≤ f(v) + 2mδ · max_{1≤i≤v} (f(v − i) − f(v)) / i, where
  f(u) = P[Binomial(r, e^ε/(1 + e^ε)) ≥ u].

Every function is vectorised over numpy arrays and errs on the side that makes the audit's ε
*smaller* (a larger upper bound on a rate, a larger p-value), so the lower bound stays valid.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from renyi.core._lazy import special

__all__ = ["clopper_pearson_upper", "one_run_p_value", "one_run_epsilon"]

#: Relative slack added to computed upper bounds: betainccinv and bdtrc are accurate to a few
#: ulps; 1e-12 covers that many times over and moves no printed digit.
_SLACK = 1e-12


def clopper_pearson_upper(k: ArrayLike, n: ArrayLike, gamma: float) -> np.ndarray:
    """Exact one-sided upper confidence bound on a binomial proportion.

    For X ~ Binomial(n, p), ``U = clopper_pearson_upper(X, n, γ)`` satisfies P[p > U] ≤ γ for
    every p. U is the (1 − γ)-quantile of Beta(k + 1, n − k), and 1 when k = n
    (Clopper & Pearson 1934). The same quantile is the exact upper bound for the (k+1)-th
    largest of n uniform order statistics, which is what makes data-chosen thresholds valid
    (see :mod:`renyi.audit.bounds`).

    Args:
        k: observed counts, integers in [0, n].
        n: numbers of trials, integers ≥ 1.
        gamma: the error probability γ ∈ (0, 1).

    Returns:
        An upper bound on p, in (0, 1].
    """
    kk, nn = np.broadcast_arrays(np.asarray(k, dtype=np.float64), np.asarray(n, dtype=np.float64))
    out = np.ones(kk.shape, dtype=np.float64)
    inner = kk < nn
    if np.any(inner):
        u = special.betainccinv(kk[inner] + 1.0, nn[inner] - kk[inner], gamma)
        out[inner] = np.minimum(1.0, np.asarray(u, dtype=np.float64) * (1.0 + _SLACK))
    return out


def _binom_sf(u: np.ndarray, r: np.ndarray, q: np.ndarray) -> np.ndarray:
    """P[Binomial(r, q) ≥ u] for integer-valued float arrays (1 for u ≤ 0, 0 for u > r)."""
    with np.errstate(invalid="ignore"):
        # bdtrc(k, n, p) = P[X > k] = P[X ≥ k + 1]
        s = special.bdtrc(u - 1.0, r.astype(np.int64), q)
    s = np.where(u <= 0, 1.0, np.where(u > r, 0.0, s))
    return np.asarray(s, dtype=np.float64)


def _binom_cdf(u: np.ndarray, r: np.ndarray, q: np.ndarray) -> np.ndarray:
    """P[Binomial(r, q) ≤ u] for integer-valued float arrays (0 for u < 0, 1 for u ≥ r)."""
    with np.errstate(invalid="ignore"):
        c = special.bdtr(np.maximum(u, 0.0), r.astype(np.int64), q)
    c = np.where(u < 0, 0.0, np.where(u >= r, 1.0, c))
    return np.asarray(c, dtype=np.float64)


def _binom_logpmf(u: np.ndarray, r: np.ndarray, q: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        lp = (special.gammaln(r + 1.0) - special.gammaln(u + 1.0) - special.gammaln(r - u + 1.0)
              + special.xlogy(u, q) + special.xlog1py(r - u, -q))
    return np.asarray(np.where((u < 0) | (u > r), -np.inf, lp), dtype=np.float64)


def _window_max(r: np.ndarray, v: np.ndarray, q: np.ndarray, fv: np.ndarray) -> np.ndarray:
    """max over i in [1, v] of (f(v − i) − f(v)) / i, the mean binomial mass of {v−i, …, v−1}.

    The binomial pmf is log-concave, so along i the window mean first rises (while the next
    mass to the left exceeds the current mean) and then falls for good: once a new term is at
    most the mean, every later term is smaller still. The largest mean is therefore found by a
    binary search on the sign of pmf(v − i − 1) − mean(i), in O(log v) evaluations instead of v.
    """
    # The window's mass is a difference of two tail probabilities; take it in the tail where
    # both are small (lower tails when f(v) > ½), so it does not cancel.
    lower = fv > 0.5
    cdf_v = _binom_cdf(v - 1.0, r, q)

    def mean(i: np.ndarray) -> np.ndarray:
        upper_tail = _binom_sf(v - i, r, q) - fv
        lower_tail = cdf_v - _binom_cdf(v - i - 1.0, r, q)
        return np.asarray(np.where(lower, lower_tail, upper_tail) / i, dtype=np.float64)

    lo = np.zeros_like(v)            # rises(0) holds by convention
    hi = np.maximum(v, 1.0)          # rises(v) is false: the mass left of 0 is 0
    while True:
        active = hi - lo > 1.0
        if not np.any(active):
            break
        mid = np.where(active, np.floor((lo + hi) / 2.0), lo)
        safe = np.maximum(mid, 1.0)
        rises = np.exp(_binom_logpmf(v - safe - 1.0, r, q)) > mean(safe)
        rises = rises | (mid == 0)
        lo = np.where(active & rises, mid, lo)
        hi = np.where(active & ~rises, mid, hi)
    best = mean(np.clip(hi, 1.0, np.maximum(v, 1.0)))
    return np.asarray(np.where(v >= 1, np.maximum(best, 0.0), 0.0), dtype=np.float64)


def one_run_p_value(m: ArrayLike, r: ArrayLike, v: ArrayLike, epsilon: ArrayLike, delta: float) -> np.ndarray:
    """Upper bound on P[W ≥ v] under (ε, δ)-DP in the one-run audit.

    Steinke, Nasr & Jagielski (2023), Theorem 3 (and their Algorithm 2, whose p-value this is):
    with m canaries each included independently with probability ½ and r guesses,
    P[W ≥ v] ≤ f(v) + 2mδ · max_{1≤i≤v} (f(v − i) − f(v)) / i, f(u) = P[Bin(r, q) ≥ u],
    q = e^ε / (1 + e^ε).

    Args:
        m: numbers of canaries.
        r: numbers of guesses (abstentions excluded), 0 ≤ r ≤ m.
        v: numbers of correct guesses, 0 ≤ v ≤ r.
        epsilon: ε ≥ 0 of the null hypothesis.
        delta: δ ∈ [0, 1) of the null hypothesis.

    Returns:
        The p-value, in [0, 1] (an upper bound on the probability, so a valid p-value).
    """
    mm, rr, vv, ee = np.broadcast_arrays(*(np.asarray(x, dtype=np.float64) for x in (m, r, v, epsilon)))
    q = special.expit(ee)
    fv = _binom_sf(vv, rr, q)
    p = fv * (1.0 + _SLACK)
    if delta > 0.0:
        p = p + 2.0 * mm * delta * _window_max(rr, vv, q, fv) * (1.0 + _SLACK)
    return np.asarray(np.minimum(p, 1.0), dtype=np.float64)


def _rejects(m: np.ndarray, r: np.ndarray, v: np.ndarray, epsilon: np.ndarray, delta: float,
             gamma: float) -> np.ndarray:
    """``one_run_p_value(...) <= gamma``, computing the window term only where it decides.

    The window mean is at most the largest binomial mass (the pmf at the mode), so where
    f(v) > γ the test cannot reject and where f(v) + 2mδ·pmf(mode) ≤ γ it must; the exact
    window maximum is needed only in between (a narrow band of ε).
    """
    q = special.expit(epsilon)
    fv = _binom_sf(v, r, q) * (1.0 + _SLACK)
    out = fv <= gamma
    if delta == 0.0 or not np.any(out):
        return np.asarray(out)
    mode = np.clip(np.floor((r + 1.0) * q), 0.0, r)
    cap = 2.0 * m * delta * np.exp(_binom_logpmf(mode, r, q)) * (1.0 + _SLACK)
    band = out & (fv + cap > gamma)
    if np.any(band):
        p = one_run_p_value(m[band], r[band], v[band], epsilon[band], delta)
        out[band] = p <= gamma
    return np.asarray(out)


def one_run_epsilon(m: ArrayLike, r: ArrayLike, v: ArrayLike, delta: float, gamma: float,
                    *, rounds: int = 6) -> np.ndarray:
    """The largest ε whose (ε, δ)-DP hypothesis the one-run p-value rejects at level γ.

    The p-value is non-decreasing in ε (a larger ε is a weaker hypothesis; checked numerically
    in the tests), so the rejected ε form an interval [0, ε̂). It is bracketed on the powers of
    two up to 4096, then narrowed by a 16-point grid per round, every point of a round in one
    vectorised call (6 rounds narrow the bracket by 17⁶ ≈ 2.4·10⁷). The returned ε is the largest
    grid point that *was* rejected, so it never overshoots the boundary.

    Args:
        m, r, v: as in :func:`one_run_p_value` (broadcast together).
        delta: δ ∈ [0, 1).
        gamma: the level γ ∈ (0, 1) of the test.
        rounds: grid refinements after the bracket.

    Returns:
        ε ≥ 0 for each entry (0 where not even ε = 0 is rejected).
    """
    mm, rr, vv = np.broadcast_arrays(*(np.asarray(x, dtype=np.float64) for x in (m, r, v)))
    mm, rr, vv = mm.ravel(), rr.ravel(), vv.ravel()
    shape = np.broadcast_shapes(*(np.shape(x) for x in (m, r, v)))

    def rejected(eps: np.ndarray) -> np.ndarray:
        k = eps.shape[1]
        rej = _rejects(np.repeat(mm, k), np.repeat(rr, k), np.repeat(vv, k), eps.ravel(), delta, gamma)
        return rej.reshape(eps.shape)

    def last_rejected(eps: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        rej = rejected(eps)
        n_rej = rej.sum(axis=1)  # monotone: the rejected points are a prefix of each row
        idx = np.arange(mm.size)
        new_lo = np.where(n_rej > 0, eps[idx, np.maximum(n_rej - 1, 0)], lo)
        new_hi = np.where(n_rej < eps.shape[1], eps[idx, np.minimum(n_rej, eps.shape[1] - 1)], hi)
        return new_lo, new_hi

    zero = np.zeros(mm.size)
    ok = rejected(zero[:, None])[:, 0]
    powers = np.broadcast_to(2.0 ** np.arange(13), (mm.size, 13))
    lo, hi = last_rejected(powers, zero, np.full(mm.size, 2.0 ** 13))
    steps = np.arange(1, 17) / 17.0
    for _ in range(rounds):
        grid = lo[:, None] + (hi - lo)[:, None] * steps[None, :]
        lo, hi = last_rejected(grid, lo, hi)
    return np.asarray(np.where(ok, lo, 0.0).reshape(shape), dtype=np.float64)
