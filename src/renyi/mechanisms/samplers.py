"""Randomness for mechanisms: a secure generator and exact, vectorized discrete samplers.

Accounting code never imports this module; only ``Mechanism.release`` does.

**Sources of randomness.** Every public function takes ``rng``:

* ``rng=None`` (the default) uses :class:`SecureGenerator`, which reads every random bit
  from ``os.urandom`` (the operating system's CSPRNG). Nothing is cached or expanded
  in user space, so there is no seed to recover.
* an explicit :class:`numpy.random.Generator` gives reproducible draws. **It is not
  cryptographically secure** (PCG64 state can be recovered from its output): use it for
  tests, simulations and benchmarks, never to protect real data. Note that a numpy
  ``Generator`` seeded from ``secrets`` is still not a CSPRNG, which is why the secure
  default is not one.

**Exact discrete samplers.** :func:`sample_discrete_laplace` and
:func:`sample_discrete_gaussian` follow Canonne, Kamath & Steinke (2020), "The Discrete
Gaussian for Differential Privacy", §5 (Algorithms 1–3). Their
parameters are rationals, and every accept/reject decision compares a uniform random
integer with an exact integer: no floating-point number and no ``exp``/``log`` is ever
evaluated on the decision path, so the output distribution is exactly the stated one
(up to the quality of the random bits). Floats are converted with ``Fraction(x)``, which is
exact. Each sampler runs the CKS loops on whole int64 numpy arrays at once (one lane per
candidate); every product that could exceed 2**63 − 1 is guarded, and the few lanes that
would overflow are finished with Python integers, so exactness never depends on the size
of the inputs (only the speed does).

**Continuous samplers.** :func:`uniform01`, :func:`normal` and :func:`laplace` return
float64 variates. Mironov (2012), "On significance of the least significant bits for
differential privacy", showed that textbook floating-point Laplace noise leaks the secret
through the pattern of representable outputs; the same holds for the Gaussian. Use them
only where that is acceptable, and prefer the discrete samplers (on a fixed-point grid)
when the released value must carry a formal guarantee.

References:
    C. Canonne, G. Kamath, T. Steinke (2020). The Discrete Gaussian for Differential
    Privacy. NeurIPS 2020; arXiv:2004.00010, §5.
    I. Mironov (2012). On significance of the least significant bits for differential
    privacy. CCS 2012.
"""

from __future__ import annotations

import decimal
import math
import numbers
import os
from fractions import Fraction
from functools import lru_cache
from typing import Any, Callable, Union

import numpy as np

from renyi.core._validation import NONNEGATIVE, POSITIVE, check_int
from renyi.core.errors import DomainError

__all__ = [
    "SecureGenerator",
    "secure_rng",
    "resolve_rng",
    "uniform_int",
    "uniform01",
    "normal",
    "laplace",
    "sample_bernoulli_exp",
    "sample_discrete_laplace",
    "sample_discrete_gaussian",
]

RNG = Union["SecureGenerator", np.random.Generator]

_INT64_MAX = 2**63 - 1
#: Largest value the int64 fast paths may produce in an intermediate product. Every
#: overflow guard reads this at call time; tests lower it to force the exact slow paths.
_LIMIT = _INT64_MAX
#: Lanes per vectorized pass: large enough to amortize Python overhead, small enough
#: to stay in cache and bound memory.
_CHUNK = 1 << 17


# --------------------------------------------------------------------------- generators


class SecureGenerator:
    """Cryptographically secure random variates read from ``os.urandom``.

    Stateless: every call asks the operating system for fresh bytes, so instances are
    interchangeable and safe to share between threads. Uniform integers use masked
    rejection sampling (no modulo bias); floats use 53 random bits.

    Examples:
        >>> g = SecureGenerator()
        >>> x = g.integers(10, size=5)
        >>> bool(((0 <= x) & (x < 10)).all())
        True
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return "SecureGenerator()"

    @staticmethod
    def random_raw(n: int, bits: int = 64) -> np.ndarray:
        """``n`` independent uniform words of ``bits`` ∈ {32, 64} bits (uint32/uint64)."""
        dtype = np.uint64 if bits == 64 else np.uint32
        nbytes = n * (bits // 8)
        return np.frombuffer(os.urandom(nbytes), dtype=dtype) if n else np.empty(0, dtype)

    def integers(self, low: Any, high: Any = None, size: Any = None) -> Any:
        """Uniform integers in ``[low, high)`` (or ``[0, low)`` when ``high`` is omitted).

        Args:
            low: lower bound, or the exclusive upper bound when ``high`` is None.
            high: exclusive upper bound: an int or an integer array (broadcast).
            size: output shape; ``None`` gives a Python int when the bounds are ints.

        Returns:
            An int64 array, or a Python int; see :func:`uniform_int`.
        """
        if high is None:
            low, high = 0, low
        if _is_pyint(low) and _is_pyint(high):
            return int(low) + uniform_int(self, int(high) - int(low), size)
        return np.asarray(low) + uniform_int(self, np.asarray(high) - np.asarray(low), size)

    def random(self, size: Any = None) -> Any:
        """Uniform floats on ``[0, 1)`` with 53 random bits."""
        return uniform01(self, size)

    def standard_normal(self, size: Any = None) -> Any:
        """Standard normal floats (Box–Muller; see the floating-point caveat in :func:`normal`)."""
        return normal(self, size)

    def laplace(self, loc: float = 0.0, scale: float = 1.0, size: Any = None) -> Any:
        """Laplace floats (inverse CDF; see the caveat in :func:`laplace`)."""
        return loc + scale * laplace(self, size)


_SECURE = SecureGenerator()


def secure_rng() -> SecureGenerator:
    """The default, cryptographically secure source of randomness (``os.urandom``)."""
    return _SECURE


def resolve_rng(rng: Any = None) -> RNG:
    """Turn an ``rng`` argument into a generator.

    Args:
        rng: ``None`` for secure randomness (:class:`SecureGenerator`), a
            :class:`SecureGenerator`, or a :class:`numpy.random.Generator` for
            reproducible draws that are **not** secure.

    Returns:
        The generator to draw from.

    Raises:
        TypeError: for anything else, including integer seeds and the legacy
            ``RandomState`` (ask for ``numpy.random.default_rng(seed)`` explicitly, so
            that giving up security is always a visible choice).
    """
    if rng is None:
        return _SECURE
    if isinstance(rng, (SecureGenerator, np.random.Generator)):
        return rng
    raise TypeError(
        "rng must be None (secure), a renyi.samplers.SecureGenerator or a "
        f"numpy.random.Generator (reproducible, not secure); got {type(rng).__name__}"
    )


# --------------------------------------------------------------------------- small helpers


def _is_pyint(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _shape(size: Any) -> tuple[int, ...] | None:
    """Validate ``size`` (None, an int ≥ 0 or a tuple of them) and return it as a shape."""
    if size is None:
        return None
    if isinstance(size, (tuple, list)):
        return tuple(check_int("size", s, minimum=0) for s in size)
    return (check_int("size", size, minimum=0),)


def _words(rng: RNG, n: int, bits: int = 64) -> np.ndarray:
    """``n`` uniform words of ``bits`` ∈ {32, 64} bits from either kind of generator."""
    if isinstance(rng, SecureGenerator):
        return rng.random_raw(n, bits)
    dtype = np.uint64 if bits == 64 else np.uint32
    return rng.integers(0, np.iinfo(dtype).max, size=n, dtype=dtype, endpoint=True)


def _smear(x: np.ndarray) -> np.ndarray:
    """All bits below the top set bit of each uint64 set: the rejection-sampling mask."""
    for k in (1, 2, 4, 8, 16, 32):
        x = x | (x >> np.uint64(k))
    return x


def _secure_below_scalar(high: int, n: int) -> np.ndarray:
    """``n`` uniform int64 on [0, high), 1 ≤ high ≤ 2**63 − 1, by masked rejection."""
    nbits = (high - 1).bit_length()
    bits = 32 if nbits <= 32 else 64
    mask = (1 << nbits) - 1
    out = np.empty(n, np.int64)
    filled = 0
    while filled < n:
        need = n - filled
        # acceptance ≥ 1/2 per attempt because mask < 2·high; oversample a little
        w = _words(_SECURE, need + need // 2 + 8, bits) & mask
        w = w[w < high][:need]
        out[filled : filled + w.size] = w
        filled += w.size
    return out


def _secure_below_int64(high: np.ndarray) -> np.ndarray:
    """Uniform on [0, high) for an int64 array ``high`` ≥ 1, by masked rejection."""
    h = np.ascontiguousarray(high, dtype=np.int64).ravel().astype(np.uint64)
    mask = _smear(h - np.uint64(1))
    out = np.empty(h.size, np.uint64)
    todo = np.arange(h.size)
    narrow = bool(h.size) and int(h.max()) <= 2**32
    while todo.size:
        # acceptance ≥ 1/2 per attempt because mask < 2·high
        w = _words(_SECURE, todo.size, 32).astype(np.uint64) if narrow else _words(_SECURE, todo.size, 64)
        w = w & mask[todo]
        ok = w < h[todo]
        out[todo[ok]] = w[ok]
        todo = todo[~ok]
    return out.astype(np.int64).reshape(np.shape(high))


def _below_big(rng: RNG, high: int, n: int) -> np.ndarray:
    """``n`` uniform Python ints in [0, high) for any ``high`` ≥ 1 (object array; slow)."""
    nbits = max((high - 1).bit_length(), 1)
    nw = (nbits + 63) // 64
    mask = (1 << nbits) - 1
    out = np.empty(n, dtype=object)
    i = 0
    while i < n:
        words = _words(rng, (n - i) * nw).tolist()
        for j in range(0, len(words), nw):
            v = 0
            for w in words[j : j + nw]:
                v = (v << 64) | w
            v &= mask
            if v < high:  # masked rejection: no modulo bias
                out[i] = v
                i += 1
    return out


def _below(rng: RNG, high: int, n: int) -> np.ndarray:
    """``n`` uniform integers in [0, high) for a Python int ``high`` ≥ 1.

    int64 when ``high`` ≤ ``_LIMIT``, otherwise an object array of Python ints.
    """
    if high > _LIMIT:
        return _below_big(rng, high, n)
    if isinstance(rng, SecureGenerator):
        return _secure_below_scalar(high, n)
    # numpy's bounded integers use rejection (Lemire), so they are unbiased
    return rng.integers(0, high, size=n, dtype=np.int64)


def _compact(a: np.ndarray) -> np.ndarray:
    """An object array of Python ints as int64 when every element fits, else unchanged."""
    if a.dtype != object or a.size == 0:
        return a.astype(np.int64) if a.dtype == object else a
    if max(a.max(), -a.min()) <= _LIMIT:
        return a.astype(np.int64)
    return a


def _to_int64_output(a: np.ndarray) -> np.ndarray:
    if a.dtype == object:
        if a.size and max(a.max(), -a.min()) > _INT64_MAX:
            # a renyi error (a ValueError), not a bare OverflowError: the scale is out of range
            raise DomainError("a sample exceeded the int64 range (|x| ≤ 9.2e18): the noise scale is too large "
                              "for int64 output; use a smaller scale", name="scale", value=None)
        return a.astype(np.int64)
    return a


def _as_fraction(name: str, x: Any, allow_zero: bool = False) -> Fraction:
    """Exact positive rational from an int, Fraction, Decimal or float (``Fraction(x)`` is exact)."""
    if isinstance(x, (bool, np.bool_)):
        raise TypeError(f"{name} must be a positive rational number; got bool")
    if isinstance(x, np.ndarray) and x.ndim == 0:
        x = x.item()
    if isinstance(x, (numbers.Rational, np.integer)):
        q = Fraction(int(x)) if isinstance(x, np.integer) else Fraction(x)
    elif isinstance(x, (float, np.floating, decimal.Decimal)):
        if isinstance(x, decimal.Decimal) and not x.is_finite():
            raise DomainError(f"{name} must be in {POSITIVE}; got {x!r}", name=name, value=x)
        # NaN and ±inf are rejected with the usual wording
        (NONNEGATIVE if allow_zero else POSITIVE).check(name, float(x))
        q = Fraction(x if isinstance(x, decimal.Decimal) else float(x))
    else:
        raise TypeError(f"{name} must be a positive rational number; got {type(x).__name__} {x!r}")
    if q < 0 or (q == 0 and not allow_zero):
        dom = NONNEGATIVE if allow_zero else POSITIVE
        raise DomainError(f"{name} must be in {dom}; got {x!r}", name=name, value=x)
    return q


# --------------------------------------------------------------------------- uniform / continuous


def uniform_int(rng: Any, high: Any, size: Any = None) -> Any:
    """Exactly uniform integers in ``[0, high)``.

    Rejection sampling, so there is no modulo bias. For the secure generator each
    attempt masks fresh ``os.urandom`` words to the bit length of ``high − 1`` and keeps
    them if below ``high`` (success probability ≥ 1/2).

    Args:
        rng: ``None`` (secure), a :class:`SecureGenerator` or a numpy ``Generator``.
        high: exclusive upper bound ≥ 1: a Python int (any size) or an integer array
            (broadcast against ``size``).
        size: output shape (int or tuple); ``None`` gives a Python int for scalar ``high``
            and ``high``'s shape for an array.

    Returns:
        int64 array (object array of Python ints when ``high`` > 2**63 − 1), or a Python int.

    Raises:
        DomainError: if ``high`` < 1 or ``size`` is negative.
        TypeError: if ``high`` is not an integer.
    """
    g = resolve_rng(rng)
    shape = _shape(size)
    if _is_pyint(high):
        h = int(high)
        if h < 1:
            raise DomainError(f"high must be an integer in [1, inf); got {high!r}", name="high", value=high)
        n = 1 if shape is None else math.prod(shape)
        out = _below(g, h, n) if h <= _INT64_MAX else _below_big(g, h, n)
        return int(out[0]) if shape is None else out.reshape(shape)
    arr = np.asarray(high)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"high must be an integer or integer array; got dtype {arr.dtype}")
    if arr.size and int(arr.min()) < 1:
        raise DomainError(
            f"high must be an integer in [1, inf); got {int(arr.min())!r}", name="high", value=arr.min()
        )
    if arr.dtype == np.uint64 and arr.size and int(arr.max()) > _INT64_MAX:
        raise DomainError(f"high must be at most 2**63 - 1 in an array; got {int(arr.max())}", name="high")
    arr = np.broadcast_to(arr.astype(np.int64), arr.shape if shape is None else shape)
    if isinstance(g, SecureGenerator):
        return _secure_below_int64(np.ascontiguousarray(arr))
    return g.integers(0, arr, dtype=np.int64)


def uniform01(rng: Any, size: Any = None) -> Any:
    """Uniform floats on ``[0, 1)``: ``k · 2**−53`` with ``k`` uniform on 53 bits.

    Floating-point caveat: see the module docstring (Mironov 2012).
    """
    g = resolve_rng(rng)
    shape = _shape(size)
    n = 1 if shape is None else math.prod(shape)
    if isinstance(g, SecureGenerator):
        out = (_words(g, n) >> np.uint64(11)).astype(np.float64) * 2.0**-53
    else:
        out = g.random(n)  # numpy also uses 53 bits
    return float(out[0]) if shape is None else out.reshape(shape)


def normal(rng: Any, size: Any = None) -> Any:
    """Standard normal floats.

    The secure generator uses Box–Muller on 53-bit uniforms; a numpy ``Generator`` uses
    its ziggurat. **Floating-point caveat:** like the textbook Laplace mechanism attacked
    by Mironov (2012), floating-point Gaussian noise can leak through its low-order bits;
    for a formal guarantee on a grid use :func:`sample_discrete_gaussian`.
    """
    g = resolve_rng(rng)
    shape = _shape(size)
    n = 1 if shape is None else math.prod(shape)
    if isinstance(g, SecureGenerator):
        m = (n + 1) // 2
        u1 = 1.0 - uniform01(g, m)  # (0, 1], so the log is finite
        u2 = uniform01(g, m)
        r = np.sqrt(-2.0 * np.log(u1))
        out = np.concatenate([r * np.cos(2 * np.pi * u2), r * np.sin(2 * np.pi * u2)])[:n]
    else:
        out = g.standard_normal(n)
    return float(out[0]) if shape is None else out.reshape(shape)


def laplace(rng: Any, size: Any = None) -> Any:
    """Standard Laplace floats (density e^{−|x|}/2).

    **Floating-point caveat:** this is the textbook construction that Mironov (2012)
    attacked: the set of floats it can output depends on the secret it is added to.
    Use it only where that leak is acceptable; otherwise use
    :func:`sample_discrete_laplace` on a fixed-point grid (or a snapping mechanism).
    """
    g = resolve_rng(rng)
    shape = _shape(size)
    n = 1 if shape is None else math.prod(shape)
    if isinstance(g, SecureGenerator):
        e = -np.log(1.0 - uniform01(g, n))  # Exp(1) by inverse CDF on (0, 1]
        sign = (_words(g, n, 32) & np.uint32(1)).astype(np.float64) * 2.0 - 1.0
        out = sign * e
    else:
        out = g.laplace(size=n)
    return float(out[0]) if shape is None else out.reshape(shape)


# --------------------------------------------------------------------------- exact Bernoullis


@lru_cache(maxsize=None)
def _inv_e_digit(j: int) -> int:
    """The ``j``-th base-2**32 digit (j ≥ 0) of e^{−1} = 0.d₀d₁d₂…, computed exactly.

    The alternating series Σ (−1)^k/k! brackets e^{−1} between consecutive partial sums;
    we add terms until both brackets have the same floor at 32·(j+1) bits, which then is
    the floor of e^{−1}·2^{32(j+1)} (e^{−1} is irrational, so this terminates).
    """
    bits = 32 * (j + 1)
    s, term, k = Fraction(1), Fraction(1), 0
    while True:
        k += 1
        term /= -k
        nxt = s + term
        lo, hi = (s, nxt) if s < nxt else (nxt, s)
        if math.floor(lo * 2**bits) == math.floor(hi * 2**bits) and abs(term) < Fraction(1, 2**bits):
            result: int = math.floor(lo * 2**bits) & 0xFFFFFFFF
            return result
        s = nxt


def _bern_inv_e(rng: RNG, n: int) -> np.ndarray:
    """``n`` independent Bernoulli(e^{−1}) bits.

    Exact: the bit is [U < e^{−1}] for a uniform real U whose base-2**32 digits are drawn
    lazily and compared with the exact digits of e^{−1}; the next digit is needed only
    on a tie (probability 2**−32). Equivalent to, and ~3× cheaper than, the von Neumann
    loop of CKS Algorithm 1 with γ = 1 (which the reference implementation uses).
    """
    w = _words(rng, n, 32)
    d = np.uint32(_inv_e_digit(0))
    res = w < d
    tie = np.flatnonzero(w == d)
    j = 1
    while tie.size:
        d = np.uint32(_inv_e_digit(j))
        w = _words(rng, tie.size, 32)
        res[tie] = w < d
        tie = tie[w == d]
        j += 1
    return res


def _geometric_inv_e(rng: RNG, n: int) -> np.ndarray:
    """Number of successes of Bernoulli(e^{−1}) before the first failure (CKS Alg. 2 step V)."""
    v = np.zeros(n, np.int64)
    live = np.arange(n)
    while live.size:
        live = live[_bern_inv_e(rng, live.size)]
        v[live] += 1
    return v


def _bern_exp_rounds(rng: RNG, f: np.ndarray) -> np.ndarray:
    """Per lane, the AND of ``f[i]`` independent Bernoulli(e^{−1}) bits = Bernoulli(e^{−f[i]}).

    CKS Algorithm 1 for γ > 1: the integer part. Lanes stop at their first 0, so the
    expected work is < 1.6 draws per lane however large ``f`` is.
    """
    ok = np.ones(f.size, bool)
    live = np.flatnonzero(f > 0)
    rem = f[live]
    while live.size:
        b = _bern_inv_e(rng, live.size)
        ok[live[~b]] = False
        live, rem = live[b], rem[b] - 1
        more = rem > 0
        live, rem = live[more], rem[more]
    return ok


def _bern_exp_frac(rng: RNG, r: np.ndarray, den: int) -> np.ndarray:
    """Bernoulli(exp(−r[i]/den)) per lane for 0 ≤ r[i] ≤ den: CKS Algorithm 1 (von Neumann).

    K starts at 1; while Bernoulli(γ/K) succeeds, K += 1; return [K odd]. All running
    lanes share the same K, so K is a scalar. Bernoulli(r/(den·K)) = [uniform(den·K) < r];
    when den·K would exceed int64 it is split exactly as
    Bernoulli(r/den) · Bernoulli(1/K) = [uniform(den) < r] · [uniform(K) = 0].
    """
    out = np.empty(r.size, bool)
    live = np.arange(r.size)
    k = 1
    while live.size:
        m = live.size
        if den * k <= _LIMIT:
            a = _below(rng, den * k, m) < r
        else:
            a = (_below(rng, den, m) < r) & (_below(rng, k, m) == 0)
        a = np.asarray(a, dtype=bool)
        out[live[~a]] = k % 2 == 1
        live, r = live[a], r[a]
        k += 1
    return out


def _bern_exp(rng: RNG, f: np.ndarray, r: np.ndarray, den: int) -> np.ndarray:
    """Bernoulli(exp(−(f + r/den))) per lane: integer part first (it rejects most lanes)."""
    ok = _bern_exp_rounds(rng, f)
    idx = np.flatnonzero(ok)
    ok[idx] = _bern_exp_frac(rng, r[idx], den)
    return ok


def sample_bernoulli_exp(gamma: Any, size: Any = None, rng: Any = None) -> Any:
    """Exact Bernoulli(exp(−γ)) for a rational γ ≥ 0 (CKS 2020, Algorithm 1).

    Args:
        gamma: γ ∈ [0, ∞): int, Fraction, Decimal or float (converted exactly).
        size: output shape; ``None`` gives a Python bool.
        rng: ``None`` (secure) or a generator, see :func:`resolve_rng`.

    Returns:
        bool array (or bool): True with probability exactly e^{−γ}.

    Raises:
        DomainError: if γ is negative, NaN or infinite.
    """
    g = resolve_rng(rng)
    shape = _shape(size)
    q = _as_fraction("gamma", gamma, allow_zero=True)
    n = 1 if shape is None else math.prod(shape)
    f, rem = divmod(q.numerator, q.denominator)
    fa = np.full(n, f, dtype=np.int64 if f <= _LIMIT else object)
    ra = np.full(n, rem, dtype=np.int64 if q.denominator <= _LIMIT else object)
    out = _bern_exp(g, fa, ra, q.denominator)
    return bool(out[0]) if shape is None else out.reshape(shape)


# --------------------------------------------------------------------------- discrete Laplace


def _floordiv(x: np.ndarray, s: int) -> np.ndarray:
    if s == 1:
        return x
    if s > _LIMIT:
        if x.dtype != object:  # x ≤ _LIMIT < s
            return np.zeros(x.size, np.int64)
        return _compact(x // s)
    return x // s


def _int_full(n: int, value: int) -> np.ndarray:
    return np.full(n, value, dtype=np.int64 if value <= _LIMIT else object)


def _dlap_pass(rng: RNG, t: int, s: int, m: int) -> np.ndarray:
    """One vectorized pass of CKS Algorithm 2 on ``m`` lanes; returns the accepted samples.

    P(z) ∝ exp(−|z|·s/t). Rejected lanes (step 2 D = 0, or the duplicate zero) are
    dropped instead of restarted: lanes are independent, so the survivors are i.i.d.

    For scale t/s ≤ 2 with t > 64 the magnitude is drawn directly instead: |Y| = the number of
    successes of Bernoulli(exp(−s/t)) before the first failure, so P(|Y| = y) ∝ e^{−ys/t}
    exactly as after CKS step 5. This needs ≤ 2.6 Bernoullis per lane and avoids
    U ∈ {0, …, t−1}, whose von Neumann loop is costly when t is a 2⁵²-sized numerator
    (a float scale near 1). Steps 6–7 are shared.
    """
    if 2 * s >= t and t > 64:
        f, r = divmod(s, t)
        y = np.zeros(m, np.int64)
        live = np.arange(m)
        while live.size:
            live = live[_bern_exp(rng, _int_full(live.size, f), _int_full(live.size, r), t)]
            y[live] += 1
        return _sign_and_fold(rng, y)
    u = _below(rng, t, m)  # step 1
    keep = _bern_exp_frac(rng, u, t)  # step 2: Bernoulli(exp(−U/t))
    u = u[keep]
    k = u.size
    v = _geometric_inv_e(rng, k)  # step 3
    # step 4, X = U + t·V, guarded: V > vmax would overflow int64 (probability ~e^{−vmax})
    if u.dtype != object and t <= _LIMIT and (k == 0 or int(v.max()) <= (_LIMIT - (t - 1)) // t):
        x = u + v * t
    else:
        x = u.astype(object) + v.astype(object) * t
    return _sign_and_fold(rng, _floordiv(x, s))  # step 5


def _sign_and_fold(rng: RNG, y: np.ndarray) -> np.ndarray:
    """CKS Algorithm 2 steps 6–7: a random sign, dropping −0 so that 0 is not counted twice."""
    b = _below(rng, 2, y.size).astype(bool)
    ok = ~(b & (y == 0))
    z = np.where(b, -y, y)[ok]
    return _compact(np.asarray(z)) if z.dtype == object else z


def _fill(pass_fn: Callable[[int], np.ndarray], n: int, rate: float) -> np.ndarray:
    """Concatenate the accepted samples of independent passes until ``n`` are collected.

    ``rate`` (an estimate of the acceptance per lane) only sizes the batches; it never
    touches a decision. Taking the first accepted lanes in lane order keeps them i.i.d.
    """
    out = np.empty(n, np.int64)
    filled = 0
    rate = min(max(rate, 1e-3), 1.0)
    while filled < n:
        need = n - filled
        m = min(int(need / rate * 1.05) + 32, _CHUNK)
        z = _to_int64_output(pass_fn(m))
        take = min(z.size, need)
        out[filled : filled + take] = z[:take]
        filled += take
    return out


def _dlap_rate(t: int, s: int) -> float:
    """P(a lane of :func:`_dlap_pass` is accepted); floats here only size batches."""
    try:
        tf, ratio = float(t), float(Fraction(s, t))
    except OverflowError:
        return 0.3
    if 2 * s >= t and t > 64:  # direct geometric: only the duplicate zero is dropped
        return 1 + math.expm1(-ratio) / 2
    # P(D = 1) = E[e^{−U/t}] = (1 − e^{−1})/(t(1 − e^{−1/t})); P(Y = 0 | D = 1) = 1 − e^{−s/t}
    pd = (1 - math.exp(-1)) / (tf * -math.expm1(-1 / tf)) if tf < 1e300 else 1 - math.exp(-1)
    return pd * (1 + math.expm1(-ratio) / 2)


def sample_discrete_laplace(scale: Any, size: Any = None, rng: Any = None) -> Any:
    """Exact discrete Laplace samples: P(z) ∝ exp(−|z|/scale) on ℤ.

    Canonne, Kamath & Steinke (2020), §5, Algorithm 2, with
    scale = t/s in lowest terms. Decisions use only uniform integers compared with exact
    integers (no floating point); a float ``scale`` is converted exactly with
    ``Fraction(scale)``. Adding it to an integer query of sensitivity Δ gives
    ε = Δ/scale pure DP (the discrete analogue of the Laplace mechanism's ε = Δ/b).

    Args:
        scale: t/s ∈ (0, ∞): int, Fraction, Decimal or float.
        size: output shape (int or tuple); ``None`` gives a Python int.
        rng: ``None`` (secure, the default) or a numpy ``Generator`` (reproducible,
            **not** secure); see :func:`resolve_rng`.

    Returns:
        int64 array of shape ``size`` (or a Python int).

    Raises:
        DomainError: if ``scale`` is not in (0, ∞), ``size`` is negative, or a sample does not
            fit in int64 (probability below exp(−2**62/scale)).
        TypeError: if ``scale`` is not a real number or ``rng`` not a generator.

    Examples:
        >>> import numpy as np
        >>> x = sample_discrete_laplace(3, size=4, rng=np.random.default_rng(0))
        >>> x.dtype, x.shape
        (dtype('int64'), (4,))
    """
    q = _as_fraction("scale", scale)
    g = resolve_rng(rng)
    shape = _shape(size)
    n = 1 if shape is None else math.prod(shape)
    t, s = q.numerator, q.denominator
    out = _fill(lambda m: _dlap_pass(g, t, s, m), n, _dlap_rate(t, s))
    return int(out[0]) if shape is None else out.reshape(shape)


# --------------------------------------------------------------------------- discrete Gaussian


class _GaussPlan:
    """Exact integer constants for one σ² (computed once per call, Python ints).

    Proposal DLap(t) with t = σ²/c, acceptance Bernoulli(exp(−(|Y| − c)²/(2σ²))) (CKS
    Algorithm 3 generalised: the identity e^{−y²/(2σ²)} = e^{|y|/t}·e^{−(|y|−c)²/(2σ²)}·const
    holds for any c > 0). CKS take t = ⌊σ⌋ + 1, which makes c = σ²/t a fraction whose
    denominator multiplies into the acceptance test (for σ = 10⁶ the test needs 10²⁴).
    Here, for σ ≥ 1, c = round(σ) is an integer (so t ≈ σ), and γ = (|Y| − c)²·d/(2n)
    stays within int64 for all but astronomically rare lanes, even for σ = 10⁶ or a
    float σ² with a 2⁵⁰ denominator. For σ < 1, c is CKS's σ² rounded down to a dyadic
    rational with 11 significant bits (t ∈ [1, 1 + 2⁻¹⁰)). The acceptance rate per
    proposal is 0.65–0.76 for σ ≥ 1 (CKS: 0.54–0.76) and ≈ CKS's 0.45–0.70 for σ < 1.
    """

    __slots__ = ("tn", "ts", "cn", "cd", "p", "q", "ylim", "g0", "rate")

    def __init__(self, sigma2: Fraction) -> None:
        n, d = sigma2.numerator, sigma2.denominator
        fl = math.isqrt(n // d)  # ⌊σ⌋ = ⌊√⌊σ²⌋⌋, exactly
        if fl >= 1:
            # round(σ) = ⌊σ⌋ + 1 iff σ² ≥ (⌊σ⌋ + ½)², i.e. 4n ≥ (2⌊σ⌋ + 1)²·d
            cn, cd = (fl + 1 if 4 * n >= (2 * fl + 1) ** 2 * d else fl), 1
        else:
            # CKS's c = σ² (t = 1), rounded down to 11 significant bits so that its
            # denominator stays small: c = ⌊2^k σ²⌋/2^k with 2^10 ≤ 2^k σ² < 2^11
            k = 0
            while (n << k) < (d << 10):
                k += 1
            c = Fraction((n << k) // d, 1 << k)
            cn, cd = c.numerator, c.denominator
        t = sigma2 / Fraction(cn, cd)
        w = Fraction(d, 2 * n * cd * cd)  # γ = B²·w with B = |Y|·cd − cn
        self.tn, self.ts = t.numerator, t.denominator
        self.cn, self.cd = cn, cd
        self.p, self.q = w.numerator, w.denominator
        # Fast lanes: |Y| ≤ ylim guarantees |B| ≤ bmax, B² ≤ _LIMIT and B²·p ≤ _LIMIT.
        bmax = math.isqrt(_LIMIT // self.p) if self.p <= _LIMIT else -1
        if self.q > _LIMIT or cn > bmax or cd > _LIMIT:
            self.ylim = -1
        else:
            self.ylim = (bmax + cn) // cd
        # Slow lanes have |Y| > ylim, so γ ≥ γ(ylim + 1) when that side is past c: the
        # first g0 rounds of Bernoulli(e^{−1}) can run before any Python-int arithmetic.
        b_low = (self.ylim + 1) * cd - cn
        self.g0 = min(b_low * b_low * self.p // self.q, 64) if b_low > 0 else 0
        sig = math.sqrt(float(sigma2)) if sigma2 < 2**1000 else math.inf
        self.rate = _dlap_rate(self.tn, self.ts) * (0.7 if sig >= 1 else 0.4)


def _gauss_pass(rng: RNG, plan: _GaussPlan, m: int) -> np.ndarray:
    y = _dlap_pass(rng, plan.tn, plan.ts, m)
    if y.size == 0:
        return y
    ay = np.abs(y)
    fast = ay <= plan.ylim if plan.ylim >= 0 else np.zeros(y.size, bool)
    accept = np.zeros(y.size, bool)

    idx = np.flatnonzero(fast)
    if idx.size:
        b = ay[idx].astype(np.int64) * plan.cd - plan.cn
        num = b * b * plan.p  # ≤ _LIMIT by the choice of ylim
        accept[idx] = _bern_exp(rng, num // plan.q, num % plan.q, plan.q)

    idx = np.flatnonzero(~fast)
    if idx.size:
        # Rare lanes (huge |Y|, or parameters beyond int64): γ ≥ g0 is known, so spend
        # g0 rounds of Bernoulli(e^{−1}) first; survivors finish with Python ints.
        alive = _bern_exp_rounds(rng, np.full(idx.size, plan.g0, np.int64))
        idx = idx[alive]
        if idx.size:
            b = ay[idx].astype(object) * plan.cd - plan.cn
            num = b * b * plan.p
            f, r = num // plan.q, num % plan.q
            accept[idx] = _bern_exp(rng, _compact(f - plan.g0), _compact(r) if plan.q <= _LIMIT else r, plan.q)
    return y[accept]


def sample_discrete_gaussian(sigma2: Any, size: Any = None, rng: Any = None) -> Any:
    """Exact discrete Gaussian samples 𝒩_ℤ(0, σ²): P(z) ∝ exp(−z²/(2σ²)) on ℤ.

    Canonne, Kamath & Steinke (2020), §5, Algorithm 3: a discrete
    Laplace proposal accepted with probability exp(−(|Y| − c)²/(2σ²)), c = σ²/t. The
    choice of c (see ``_GaussPlan``) keeps the integers small; the identity behind the
    test is exact for any c > 0. Every decision compares uniform integers with exact
    integers: no floating point is used; a float ``sigma2`` is converted exactly.
    Adding it to an integer query with sensitivity Δ is Δ²/(2σ²)-zCDP ([CKS20] Prop 5).

    Args:
        sigma2: σ² ∈ (0, ∞) (note: the variance parameter, not σ): int, Fraction,
            Decimal or float.
        size: output shape (int or tuple); ``None`` gives a Python int.
        rng: ``None`` (secure, the default) or a numpy ``Generator`` (reproducible,
            **not** secure); see :func:`resolve_rng`.

    Returns:
        int64 array of shape ``size`` (or a Python int).

    Raises:
        DomainError: if ``sigma2`` is not in (0, ∞), ``size`` is negative, or a sample does not
            fit in int64 (negligible unless σ ≳ 10¹⁸).
        TypeError: if ``sigma2`` is not a real number or ``rng`` not a generator.

    Examples:
        >>> from fractions import Fraction
        >>> import numpy as np
        >>> z = sample_discrete_gaussian(Fraction(25, 2), size=3, rng=np.random.default_rng(1))
        >>> z.shape
        (3,)
    """
    q = _as_fraction("sigma2", sigma2)
    g = resolve_rng(rng)
    shape = _shape(size)
    n = 1 if shape is None else math.prod(shape)
    plan = _GaussPlan(q)
    out = _fill(lambda m: _gauss_pass(g, plan, m), n, plan.rate)
    return int(out[0]) if shape is None else out.reshape(shape)


# --------------------------------------------------------------------------- reference


def _reference_bernoulli_exp(gamma: Fraction, randbelow: Callable[[int], int]) -> bool:
    """CKS Algorithm 1, one sample, Python ints (reference for tests and benchmarks)."""
    while gamma > 1:
        if not _reference_bernoulli_exp(Fraction(1), randbelow):
            return False
        gamma -= 1
    k = 1
    while randbelow(gamma.denominator * k) < gamma.numerator:
        k += 1
    return k % 2 == 1


def _reference_discrete_laplace(scale: Fraction, randbelow: Callable[[int], int]) -> int:
    """CKS Algorithm 2, one sample, exactly as written in the paper."""
    t, s = scale.numerator, scale.denominator
    while True:
        u = randbelow(t)
        if not _reference_bernoulli_exp(Fraction(u, t), randbelow):
            continue
        v = 0
        while _reference_bernoulli_exp(Fraction(1), randbelow):
            v += 1
        y = (u + t * v) // s
        b = randbelow(2)
        if b == 1 and y == 0:
            continue
        return (1 - 2 * b) * y


def _reference_discrete_gaussian(sigma2: Fraction, randbelow: Callable[[int], int]) -> int:
    """CKS Algorithm 3, one sample, with CKS's own t = ⌊σ⌋ + 1."""
    t = math.isqrt(sigma2.numerator // sigma2.denominator) + 1
    while True:
        y = _reference_discrete_laplace(Fraction(t), randbelow)
        gamma = (abs(y) - sigma2 / t) ** 2 / (2 * sigma2)
        if _reference_bernoulli_exp(gamma, randbelow):
            return y
