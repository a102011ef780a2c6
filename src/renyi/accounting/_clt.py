"""A certified central-limit bound for very long compositions of a Poisson-subsampled Gaussian.

At 10¹² steps of rate 10⁻⁷ one step's privacy loss is about q wide while the composed loss is
about q·√T wide: no PLD grid of 2²⁰ points resolves both, and the RDP route is ~10 % loose.
There the composed loss is very nearly Gaussian, and Berry–Esseen makes that exact:

1. **One step, discretised both ways.** In units of the noise, x ~ N(0, 1), the remove pair is
   P = (1−q)N(0, 1) + qN(μ, 1), Q = N(0, 1) with loss L(x) = log(1 − q + q·e^{μx − μ²/2})
   (increasing); the add pair swaps P and Q (loss −L, decreasing). The x-axis is cut at
   points x₀ < … < x_n. *Upper:* each cell's (P, Q)-mass is split onto the two losses at its
   ends keeping both masses (Doroshenko et al. 2022, "connect the dots"); a two-point law with
   the same mean of e^{−L} is larger in convex order, so every hockey-stick divergence
   H_{e^ε}, ε ∈ ℝ, grows: the discrete pair dominates the true one at every ε, hence after any
   number of compositions (Zhu, Dong & Wang 2022, Thm 10). The outer cell whose loss is
   unbounded goes to +∞ (remove) or to its finite end (add), the Q-excess to −∞. The
   replace-one pair (1−q)N(0, 1) + qN(±μ, 1) (:class:`~renyi.PoissonSubsampledReplaceOne`) is
   cut the same way (its loss increases in x; symmetric, so one direction; the cell below x₀
   rounded up to its top loss). *Lower:* each
   cell merged into one atom at log(P/Q) (a post-processing, dominated by the true pair). Cell
   masses are computed with mpmath at 40 digits (q ≥ 10⁻²⁰: a cell's loss spread keeps ≥ 18 of them).
2. **The T-fold sum, tilted.** For a discrete step law with finite atoms z_i (masses p_i)
   and +∞ w.p. p_∞, δ(ε) = 1 − (1 − p_∞)^T + Z(λ)^T·E_λ[g(S)] for every λ ≥ 0, where
   Z(λ) = Σ p_i e^{λz_i}, g(s) = e^{−λs}(1 − e^{ε−s})₊ and S is the sum of T independent draws
   from the tilted law p_i e^{λz_i}/Z(λ).
3. **Berry–Esseen.** sup_s |P(S ≤ s) − Φ((s − Tm)/√(Tv))| ≤ C·ρ/(v^{3/2}√T) with m, v, ρ the
   tilted law's mean, variance and third absolute central moment, C = 0.5600 (Shevtsova 2010,
   valid for non-identical summands too; the i.i.d. constant is 0.4748). Integrating by parts,
   |E g(S) − E g(N)| ≤ V(g)·C·ρ/(v^{3/2}√T), V(g) the total variation of g
   (2·max g for λ > 0, 1 for λ = 0). E g(N) has a closed form (two Gaussian tails).

Every float sum carries an explicit rounding bound (n·u per term, 4× over), the unknown
exact m and v enter through |∂E g(N)/∂M| ≤ V/(s√(2π)) and |∂E g(N)/∂s| ≤ V·0.242/s, and the
closed form is evaluated with mpmath at 40 digits. The upper bound is valid for every T; it
is tight only where C·ρ/(v^{3/2}√T) is small (T ≳ 10⁸ for σ ≈ 1): at 10¹² steps its error is
about 10⁻⁴ of δ. Compositions of up to 8 distinct Poisson-subsampled Gaussians (all add/remove
or all replace-one) are covered: the tilt λ is common, the blocks' moments add, and
Shevtsova's constant holds for non-identical summands.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import mpmath
import numpy as np
from scipy import special

from renyi.core.errors import ConversionError

__all__ = ["applies", "epsilon_bounds", "delta_bounds", "BE_CONSTANT"]

#: Shevtsova (2010), "An improvement of convergence rate estimates in the Lyapunov theorem",
#: Doklady Math. 82: C ≤ 0.5600 for sums of independent (not necessarily identical) terms.
BE_CONSTANT = 0.56
_U = 2.0**-53
_SUP_U_PHI = 0.24197072451914337 + 1e-15  # max_u |u|φ(u) = φ(1)
_INV_SQRT_2PI = 0.3989422804014327 * (1 + 1e-15)
#: from this many steps the route is in the default minimum (no PLD grid resolves such counts
#: of a small-rate step, and Berry–Esseen's term is ~10⁻³ of δ or less)
MIN_STEPS = 2**24
#: from this many steps it is also asked where the PLD bracket is wider than 1 % (so that ε
#: does not jump down at MIN_STEPS where the PLD grid is not tight); below, Berry–Esseen's term
#: is too large to help
WIDE_STEPS = 2**14
#: the +∞ mass of T steps is kept at most this (x_n chosen from it)
_INF_BUDGET = 1e-30
_CELLS = 1500
_LAMBDAS = np.concatenate([[0.0], np.logspace(-2.0, 4.0, 241)])


@dataclass(frozen=True)
class _Step:
    """A discrete step law: finite atoms z (float) with masses p (float), +∞ w.p. p_inf.

    The exact pair it stands for has masses within a relative 2⁻⁵² of p (and atoms within
    2⁻⁵² of z) and Σp + p_inf = 1 exactly."""

    z: np.ndarray
    p: np.ndarray
    p_inf: float


def _cell_masses(cuts: list[mpmath.mpf]) -> list[mpmath.mpf]:
    """N(0, 1) masses of (−∞, c₀], [c₀, c₁], …, [c_n, ∞), one erfc per cut (its small side)."""
    r2 = mpmath.sqrt(2)
    small = [mpmath.erfc(abs(c) / r2) / 2 for c in cuts]  # Φ(c) for c < 0, Φc(c) for c ≥ 0

    def cdf(i: int) -> mpmath.mpf:
        return small[i] if cuts[i] < 0 else 1 - small[i]

    out = [cdf(0)]
    for i in range(len(cuts) - 1):
        a, b = cuts[i], cuts[i + 1]
        if a >= 0:
            out.append(small[i] - small[i + 1])
        elif b < 0:
            out.append(small[i + 1] - small[i])
        else:
            out.append(cdf(i + 1) - cdf(i))
    out.append(small[-1] if cuts[-1] >= 0 else 1 - small[-1])
    return out


def _steps(mu: float, q: float, steps: int, ro: bool = False) -> tuple[_Step, _Step, _Step, _Step]:
    """(remove upper, add upper, remove lower, add lower) step laws for N(0,1) vs N(μ,1) at rate q
    (``ro``: the replace-one pair, symmetric, given twice); the cut x_n for step counts up to
    the next 2^(8k), so that nearby T share one law."""
    return _steps_for(mu, q, 2 ** (8 * math.ceil(math.log2(max(steps, 2)) / 8)), ro)


@lru_cache(maxsize=32)
def _steps_for(mu: float, q: float, steps: int, ro: bool) -> tuple[_Step, _Step, _Step, _Step]:
    with mpmath.workdps(40):
        M, Qr = mpmath.mpf(mu), mpmath.mpf(q)
        # x_n: P(x > x_n) ≤ budget/T under both measures (N(μ, 1) is the heavier)
        budget = _INF_BUDGET / steps
        hi = mu - float(special.ndtri(max(budget, 1e-300))) + 0.5  # (only sets how small p_∞ is)
        lo = -hi if ro else -max(8.0, hi - mu)
        xs = [mpmath.mpf(lo) + (mpmath.mpf(hi) - lo) * i / _CELLS for i in range(_CELLS + 1)]
        q0 = _cell_masses(xs)  # N(0, 1) masses of the cells (−∞, x₀], …, [x_n, ∞)
        q1 = _cell_masses([x - M for x in xs])  # N(μ, 1)
        mix = [(1 - Qr) * a + Qr * b for a, b in zip(q0, q1)]
        if ro:
            # replace-one: (1−q)N(0) + qN(μ) against (1−q)N(0) + qN(−μ); the ratio at the cuts
            # (0 at −∞, ∞ at ∞), loss increasing; x ↦ −x swaps the two, so one direction
            q2 = _cell_masses([x + M for x in xs])  # N(−μ, 1)
            mix2 = [(1 - Qr) * a + Qr * b for a, b in zip(q0, q2)]
            r = [mpmath.mpf(0)] + [(1 - Qr + Qr * mpmath.exp(M * x - M * M / 2))
                                   / (1 - Qr + Qr * mpmath.exp(-M * x - M * M / 2)) for x in xs]
        else:
            # ratio r = mixture / N(0) density at each cut (r(−∞) = 1 − q, r(∞) = ∞)
            r = [1 - Qr] + [1 - Qr + Qr * mpmath.exp(M * x - M * M / 2) for x in xs]
        out = []
        for remove in ((True,) if ro else (True, False)):
            Pc, Qc = ((mix, mix2) if ro else (mix, q0)) if remove else (q0, mix)
            # loss at the cuts, increasing along the cells for remove, decreasing for add
            ell = [(mpmath.log(v) if v > 0 else mpmath.mpf("-inf")) if remove else -mpmath.log(v) for v in r]
            n = len(ell)
            up = [mpmath.mpf(0)] * n
            p_inf = mpmath.mpf(0)
            low_z: list[mpmath.mpf] = []
            low_p: list[mpmath.mpf] = []
            for c in range(len(Pc)):  # cell c spans cuts c-1 .. c (cut −1 = −∞, cut n−1+1 = +∞)
                P, Qm = Pc[c], Qc[c]
                if P <= 0:
                    continue
                if Qm > 0:
                    low_z.append(mpmath.log(P / Qm))
                    low_p.append(P)
                if c == 0 and ro:
                    up[1] += P  # loss in (−∞, ell[1]]: rounded up to ell[1], Q-excess to −∞
                    continue
                if c == len(Pc) - 1:
                    if remove:
                        p_inf += P  # loss unbounded above: +∞, its Q-mass to −∞
                    else:
                        up[n - 1] += P  # loss below ell[n-1]: rounded up to it, Q-excess to −∞
                    continue
                ia, ib = c, c + 1  # cell c lies between r-index c (left end) and c+1 (right end)
                a, b = ell[ia], ell[ib]
                lo_i, hi_i = (ia, ib) if a <= b else (ib, ia)
                za, zb = ell[lo_i], ell[hi_i]
                ya, yb = mpmath.exp(-za), mpmath.exp(-zb)
                if ya - yb <= ya * mpmath.mpf(1e-22):
                    # a cell too narrow for 40 digits to split it to 10⁻¹⁸: rounded up to its
                    # top loss instead (L ≤ zb on it, so P·e^{−zb} ≤ its Q-mass; the rest to −∞)
                    up[hi_i] += P
                    continue
                ybar = Qm / P  # mean of e^{−L} under P on the cell ∈ [yb, ya]
                pb = P * (ya - ybar) / (ya - yb)
                pb = min(max(pb, mpmath.mpf(0)), P)
                up[hi_i] += pb
                up[lo_i] += P - pb
            z_up = np.array([float(v) for v in ell])
            p_up = np.array([float(v) for v in up])
            keep = p_up > 0
            # a mass that underflows to 0.0 in float (< 2.3e-308) is counted at +∞ (upper); the
            # lower law's p_inf only lowers log Z (its masses are dropped, which lowers δ)
            lost = float(np.count_nonzero(~keep)) * 2.3e-308
            upper = _Step(z_up[keep], p_up[keep], float(p_inf) * (1 + 1e-15) + lost)
            zl = np.array([float(v) for v in low_z])
            pl = np.array([float(v) for v in low_p])
            kl = pl > 0
            lower = _Step(zl[kl], pl[kl], float(np.count_nonzero(~kl)) * 2.3e-308)
            out.append((upper, lower))
    if ro:
        return out[0][0], out[0][0], out[0][1], out[0][1]
    return out[0][0], out[1][0], out[0][1], out[1][1]


@dataclass(frozen=True)
class _Moments:
    """Per λ (arrays) of the composed sum: log Z(λ)^T upper/lower, the tilted mean (midpoint M,
    error dM), the variance's lower/upper ends, the summed third absolute moments (upper), and
    an upper bound on P(some step is +∞)."""

    lam: np.ndarray
    tk_hi: np.ndarray
    tk_lo: np.ndarray
    M: np.ndarray
    dM: np.ndarray
    v_lo: np.ndarray
    v_hi: np.ndarray
    R: np.ndarray
    p_inf_t: float


def _moments(st: _Step, steps: int) -> _Moments:
    """The T-fold sum's moments on the whole λ grid (NaN where λ·max|z| ≥ 50 or the variance's
    lower end is not positive)."""
    z, p = st.z, st.p
    zmax = float(np.max(np.abs(z)))
    lam = _LAMBDAS
    n = z.size
    # relative rounding of a sum of n terms each with a few operations, 4× over, plus the
    # inputs' own 2⁻⁵² (atoms: through e^{λz}, relative λ|z|·2⁻⁵²)
    g = 4.0 * (n + 16) * _U
    L = np.where(lam * zmax < 50.0, lam, np.nan)[:, None]
    with np.errstate(invalid="ignore"):
        lz = L * z[None, :]
        e = np.exp(lz)
        alz = np.abs(lz)
        em1 = np.expm1(lz)
        a_terms = p * em1
        A = a_terms.sum(axis=1)
        # rounding of the sum, and the inputs' error: p (relative 2u) and z (through e^{λz})
        a_err = g * np.abs(a_terms).sum(axis=1) + (2.0 * _U * p * (np.abs(em1) + alz * e)).sum(axis=1)
        # log Z = log1p(A − p_inf), Z = 1 − p_inf + A exactly in the reals
        x_hi = A + a_err - st.p_inf * (1 - 4 * _U)
        x_lo = A - a_err - st.p_inf * (1 + 4 * _U)
        k_hi = steps * np.log1p(x_hi)
        k_lo = steps * np.log1p(x_lo)
        tk_hi = k_hi + 4 * _U * np.abs(k_hi)
        tk_lo = k_lo - 4 * _U * np.abs(k_lo)
        Z = 1.0 - st.p_inf + A
        w = p * e / Z[:, None]
        zrel = g + 8.0 * _U * (1.0 + alz) + (a_err / Z)[:, None]  # relative error of each w_i·z_i term
        m = (w * z).sum(axis=1)
        dm = (np.abs(w * z) * zrel).sum(axis=1) + 1e-300
        dev = z[None, :] - m[:, None]
        v2 = (w * dev * dev).sum(axis=1)
        verr = (w * dev * dev * (zrel + 4 * _U)).sum(axis=1) + (w * 2 * np.abs(dev) * np.abs(z) * 2 * _U).sum(axis=1)
        # E(z − m̂)² = v + (m − m̂)²: v ≤ v2 (+ rounding), v ≥ v2 − dm² (− rounding)
        v_hi = v2 + verr
        v_lo = v2 - verr - dm * dm
        r3 = (w * np.abs(dev) ** 3).sum(axis=1)
        r3 = r3 * (1 + 4 * g) + (w * np.abs(dev) ** 3 * zrel).sum(axis=1)
        # Minkowski: ρ^{1/3} ≤ (E|z − m̂|³)^{1/3} + |m − m̂|
        rho = (np.cbrt(r3) * (1 + 4 * _U) + dm) ** 3 * (1 + 8 * _U)
        bad = ~(v_lo > 0)
    p_inf_t = -math.expm1(steps * math.log1p(-st.p_inf)) * (1 + 8 * _U) if st.p_inf > 0 else 0.0

    def t(x: np.ndarray, up: float) -> np.ndarray:
        out: np.ndarray = np.where(bad, np.nan, steps * x * up)
        return out

    return _Moments(lam, np.where(bad, np.nan, tk_hi), np.where(bad, np.nan, tk_lo), t(m, 1.0),
                    t(dm, 1 + 4 * _U), t(v_lo, 1 - 4 * _U), t(v_hi, 1 + 4 * _U), t(rho, 1 + 4 * _U), p_inf_t)


def _combine(parts: list[_Moments]) -> _Moments:
    """The moments of a sum of independent blocks (NaN at a λ where any block has none), with
    the rounding of the k-term sums; the λ's where every block has moments."""
    if len(parts) == 1:
        mo = parts[0]
    else:
        k = len(parts)
        r = 4.0 * k * _U

        def tot(name: str) -> np.ndarray:
            return np.sum([getattr(m, name) for m in parts], axis=0)  # type: ignore[no-any-return]

        def mag(name: str) -> np.ndarray:
            return np.sum([np.abs(getattr(m, name)) for m in parts], axis=0)  # type: ignore[no-any-return]

        log_fin = math.fsum(math.log1p(-m.p_inf_t) for m in parts if m.p_inf_t > 0)
        mo = _Moments(parts[0].lam, tot("tk_hi") + r * mag("tk_hi"), tot("tk_lo") - r * mag("tk_lo"), tot("M"),
                      tot("dM") * (1 + r) + r * mag("M"), tot("v_lo") * (1 - r), tot("v_hi") * (1 + r),
                      tot("R") * (1 + r), -math.expm1(log_fin) * (1 + 8 * _U) if log_fin < 0 else 0.0)
    keep = np.isfinite(mo.tk_hi) & np.isfinite(mo.tk_lo) & np.isfinite(mo.M) & (mo.v_lo > 0) & np.isfinite(mo.R)
    return _Moments(mo.lam[keep], mo.tk_hi[keep], mo.tk_lo[keep], mo.M[keep], mo.dM[keep], mo.v_lo[keep],
                    mo.v_hi[keep], mo.R[keep], mo.p_inf_t)


def _g_max(lam: np.ndarray, eps: float) -> np.ndarray:
    """max_s g(s) = e^{−λε}·λ^λ/(λ+1)^{λ+1} (1 at λ = 0), as a log."""
    with np.errstate(divide="ignore", invalid="ignore"):
        val = -lam * eps + special.xlogy(lam, lam) - (lam + 1.0) * np.log1p(lam)
    return np.where(lam > 0, val, 0.0)


def _log_gauss_term(lam: np.ndarray, M: np.ndarray, s: np.ndarray, eps: float) -> np.ndarray:
    """log E[g(Y)], Y ~ N(M, s²), float (for the search)."""
    a = -lam * M + lam * lam * s * s / 2.0 + special.log_ndtr(-(eps - M + lam * s * s) / s)
    b = eps - (lam + 1.0) * M + (lam + 1.0) ** 2 * s * s / 2.0 + special.log_ndtr(-(eps - M + (lam + 1.0) * s * s) / s)
    with np.errstate(invalid="ignore", divide="ignore"):
        d = np.where(b < a, a + np.log1p(-np.exp(np.minimum(b - a, 0.0))), -np.inf)
    return d


def _sd(mo: _Moments) -> tuple[np.ndarray, np.ndarray]:
    """The composed sum's standard deviation, lower and upper ends."""
    return np.sqrt(mo.v_lo) * (1 - 4 * _U), np.sqrt(mo.v_hi) * (1 + 4 * _U)


def _bound_terms(mo: _Moments, eps: float, upper: bool) -> np.ndarray:
    """log of the bound on the finite part of δ(ε) at every λ (float, for the search)."""
    sl, sh = _sd(mo)
    main = _log_gauss_term(mo.lam, mo.M, (sl + sh) / 2.0, eps)
    logv = _g_max(mo.lam, eps) + np.where(mo.lam > 0, math.log(2.0), 0.0)
    err = _err(mo)
    if upper:
        tot: np.ndarray = mo.tk_hi + np.logaddexp(main, logv + np.log(err))
        return tot
    with np.errstate(invalid="ignore"):
        diff = np.exp(main) - np.exp(logv) * err
    return np.where(diff > 0, mo.tk_lo + np.log(np.where(diff > 0, diff, 1.0)), -np.inf)


def _err(mo: _Moments) -> np.ndarray:
    """The Berry–Esseen term plus the moments' uncertainty, per unit of V(g)."""
    sl, sh = _sd(mo)
    be = BE_CONSTANT * mo.R / sl**3
    out: np.ndarray = (be + _INV_SQRT_2PI * mo.dM / sl + _SUP_U_PHI * (sh - sl) / sl) * (1 + 1e-9)
    return out


def _certify(mo: _Moments, i: int, eps: float, upper: bool) -> float:
    """The bound on δ(ε) at λ = mo.lam[i], with the closed form in mpmath (40 digits)."""
    sl, sh = _sd(mo)
    with mpmath.workdps(40):
        lam = mpmath.mpf(float(mo.lam[i]))
        M = mpmath.mpf(float(mo.M[i]))
        s = (mpmath.mpf(float(sl[i])) + mpmath.mpf(float(sh[i]))) / 2
        e = mpmath.mpf(eps)
        t1 = mpmath.exp(-lam * M + lam**2 * s**2 / 2) * mpmath.ncdf(-(e - M + lam * s**2) / s)
        t2 = mpmath.exp(e - (lam + 1) * M + (lam + 1) ** 2 * s**2 / 2) * mpmath.ncdf(-(e - M + (lam + 1) * s**2) / s)
        main = max(t1 - t2, mpmath.mpf(0))
        if lam > 0:
            v = 2 * mpmath.exp(-lam * e + lam * mpmath.log(lam) - (lam + 1) * mpmath.log1p(lam))
        else:
            v = mpmath.mpf(1)
        err = mpmath.mpf(float(_err(mo)[i])) * (1 + mpmath.mpf(1e-12))
        tk = mpmath.mpf(float(mo.tk_hi[i] if upper else mo.tk_lo[i]))
        if upper:
            fin = mpmath.exp(tk) * (main * (1 + mpmath.mpf(1e-25)) + v * err)
            tot = mpmath.mpf(mo.p_inf_t) + fin
            return float(tot * (1 + mpmath.mpf(1e-15))) * (1 + 4 * _U)
        fin = mpmath.exp(tk) * (main * (1 - mpmath.mpf(1e-25)) - v * err)
        return max(float(fin * (1 - mpmath.mpf(1e-15))) * (1 - 4 * _U), 0.0)


def _params(mech: object) -> tuple[float, float, bool]:
    from renyi.mechanisms import Gaussian
    from renyi.sampling.subsampling import PoissonSubsampled, PoissonSubsampledReplaceOne

    ro = type(mech) is PoissonSubsampledReplaceOne
    if not (type(mech) is PoissonSubsampled or ro):
        raise ConversionError("the CLT route covers Poisson-subsampled Gaussians composed many times")
    assert isinstance(mech, (PoissonSubsampled, PoissonSubsampledReplaceOne))
    if type(mech.mechanism) is not Gaussian:
        raise ConversionError("the CLT route covers Poisson-subsampled Gaussians composed many times")
    if not ro and mech.mechanism.neighbouring != "add_remove":
        raise ConversionError("the CLT route covers add/remove or the replace-one subsampled Gaussian only")
    q = float(mech.rate)
    mu = float(mech.mechanism.sensitivity / mech.mechanism.sigma)
    if not 1e-20 <= q < 1.0:
        raise ConversionError("the CLT route needs a sampling rate in [1e-20, 1)")
    if not 0.0 < mu <= 20.0:
        raise ConversionError("the CLT route needs sensitivity/sigma in (0, 20]")
    return mu, q, ro


#: more distinct items than this: not covered (one step law each)
_MAX_ITEMS = 8


def applies(items: list[tuple[object, int]],
            min_steps: int = MIN_STEPS) -> tuple[tuple[tuple[float, float, int], ...], bool]:
    """((μ, q, T) per item, replace-one?) of a composition of Poisson-subsampled Gaussians (all
    add/remove or all replace-one, at most 8 distinct) with ≥ ``min_steps`` steps in all, else
    ConversionError."""
    if not 1 <= len(items) <= _MAX_ITEMS:
        raise ConversionError(f"the CLT route covers 1 to {_MAX_ITEMS} distinct Poisson-subsampled Gaussians")
    total = sum(int(k) for _, k in items)
    if total < min_steps:
        raise ConversionError(f"the CLT route needs at least {min_steps} steps (Berry–Esseen); got {total}")
    out: list[tuple[float, float, int]] = []
    kinds: set[bool] = set()
    for mech, k in items:
        mu, q, ro = _params(mech)
        out.append((mu, q, int(k)))
        kinds.add(ro)
    if len(kinds) != 1:
        raise ConversionError("the CLT route needs one neighbouring relation for every item")
    return tuple(sorted(out)), kinds.pop()


@lru_cache(maxsize=64)
def _moments_cached(mu: float, q: float, steps: int, which: int, upper: bool, ro: bool) -> _Moments:
    return _moments(_steps(mu, q, steps, ro)[which + (0 if upper else 2)], steps)


@lru_cache(maxsize=64)
def _composed(entries: tuple[tuple[float, float, int], ...], which: int, upper: bool, ro: bool) -> _Moments:
    """The moments of the whole composition in one direction (0 remove, 1 add)."""
    return _combine([_moments_cached(mu, q, k, which, upper, ro) for mu, q, k in entries])


def _delta_at(mo: _Moments, eps: float, upper: bool) -> float:
    """Bound on δ(ε) of one direction, minimised (upper) / maximised (lower) over λ."""
    if not mo.lam.size:
        return 1.0 if upper else 0.0
    logs = _bound_terms(mo, eps, upper)
    if upper:
        i = int(np.nanargmin(logs))
    else:
        if not np.any(np.isfinite(logs)):
            return 0.0
        i = int(np.nanargmax(logs))
    return _certify(mo, i, eps, upper)


def delta_bounds(items: list[tuple[object, int]], epsilon: float, *,
                 min_steps: int = MIN_STEPS) -> tuple[float, float]:
    """(lower, upper) on δ(ε) of the composition (max over the two directions)."""
    entries, ro = applies(items, min_steps)
    dirs = (0,) if ro else (0, 1)
    up = max(_delta_at(_composed(entries, w, True, ro), epsilon, True) for w in dirs)
    lo = max(_delta_at(_composed(entries, w, False, ro), epsilon, False) for w in dirs)
    return min(lo, up), min(up, 1.0)


def _eps_one(mo: _Moments, delta: float, upper: bool) -> float:
    """Smallest ε with the upper bound ≤ δ (upper), or largest ε with the lower bound > δ (lower)."""
    ld = math.log(delta)
    if not mo.lam.size:
        return math.inf if upper else 0.0
    if upper and mo.p_inf_t >= delta / 2:
        return math.inf
    target = math.log(delta - mo.p_inf_t) if upper else ld

    def best(eps: float) -> tuple[float, int]:
        logs = _bound_terms(mo, eps, upper)
        if upper:
            i = int(np.nanargmin(logs))
        else:
            if not np.any(np.isfinite(logs)):
                return -math.inf, 0
            i = int(np.nanargmax(logs))
        return float(logs[i]), i

    def ok(eps: float) -> bool:  # upper: certified δ(ε) ≤ δ; lower: certified δ(ε) > δ
        v, i = best(eps)
        if upper:
            if not v <= target:
                return False
            return _certify(mo, i, eps, True) <= delta
        if not v > ld:
            return False
        return _certify(mo, i, eps, False) > delta

    if upper:
        if ok(0.0):
            return 0.0
        hi = 1.0
        while not ok(hi):
            hi *= 2.0
            if hi > 1e4:
                return math.inf
        lo = 0.0
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            if ok(mid):
                hi = mid
            else:
                lo = mid
            if hi - lo <= 1e-7 * hi:
                break
        return hi
    if not ok(0.0):
        return 0.0
    lo, hi = 0.0, 1.0
    while ok(hi):
        lo, hi = hi, hi * 2.0
        if hi > 1e4:
            return lo
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if ok(mid):
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-7 * hi:
            break
    return lo


def epsilon_bounds(items: list[tuple[object, int]], delta: float, *,
                   min_steps: int = MIN_STEPS) -> tuple[float, float]:
    """(lower, upper) on ε(δ) of the composition: the upper end is certified (see the module
    docstring), the lower end is certified for the true composition too. The bound holds for
    every T; ``min_steps`` is where the route is worth asking."""
    entries, ro = applies(items, min_steps)
    dirs = (0,) if ro else (0, 1)
    up = max(_eps_one(_composed(entries, w, True, ro), delta, True) for w in dirs)
    if not math.isfinite(up):
        raise ConversionError("the CLT (Berry–Esseen) bound does not reach this δ")
    lo = max(_eps_one(_composed(entries, w, False, ro), delta, False) for w in dirs)
    return min(lo, up), up
