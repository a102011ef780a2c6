"""What no mechanism can do: mutual-information bounds and sample-size lower bounds for zCDP.

Bun & Steinke (2016), §6, bound how much a zCDP mechanism can reveal about its whole input,
and turn that into sample sizes below which *no* ρ-zCDP algorithm can be accurate. This
module turns those inequalities into numbers, and puts beside each lower bound the n that the
Gaussian mechanism achieves, so the gap is visible. Every number comes from an inequality
derived below; no asymptotic Θ(·) statement is ever evaluated.

**Neighbours.** As in the paper, datasets are x ∈ 𝒳ⁿ and neighbours differ in one row
(replace-one). A guarantee stated for add/remove neighbours is a replace-one guarantee of a
group of two (one replacement = one removal and one addition): pass ``neighbouring="add_remove"``
and the group-of-two guarantee is used (4ρ for ρ-zCDP).

**Mutual information** (in nats), for any random dataset X and a (ξ, ρ)-zCDP mechanism M:

* *dependent rows* (Bun & Steinke 2016, Proposition 28): two datasets differ in at most n rows,
  so group privacy (their Proposition 27) gives (ξ·n·H_n, n²ρ)-zCDP between any two inputs;
  the KL divergence (order 1) is at most ξ·n·H_n + ρn², and I(X; M(X)) ≤ max_{x,x'} KL(M(x)‖M(x'))
  by convexity. H_n ≤ 1 + log n gives the paper's form ξ·n(1 + log n) + ρn²; the harmonic
  number itself is used here (tighter, equally valid).
* *independent rows* (Lemma 29): by the chain rule each row adds at most the KL of one
  replacement, ξ + ρ, so I ≤ n(ξ + ρ).
* *m independent blocks of ℓ rows* (Theorem 30): I ≤ m(ξ·ℓ·H_ℓ + ρℓ²).

For pure ε-DP the KL of a group of k is at most kε·tanh(kε/2) (the KL of randomized response
with parameter kε, the worst ε-DP pair); this is never above the zCDP route
k²·ε·tanh(ε/2), so it is used. For (μ, τ)-mCDP the KL of one step is at most μ (the mean of
the privacy loss), and groups go through (μ − τ²/2, τ²/2)-zCDP (Bun & Steinke 2016, Lemma 24).

**Fano's inequality.** If K is uniform on M values and an estimator K̂ computed from Y errs
with probability P_e ≤ β ≤ (M − 1)/M, then
I(K; Y) ≥ log M − h(β) − β·log(M − 1) =: F(M, β), h the binary entropy in nats
(h(p) + p·log(M − 1) increases on [0, (M − 1)/M], so P_e ≤ β gives the bound at β).

**Sample sizes.** Put the same uniformly random key K ∈ [T] in all n rows. Any histogram
whose every count is within n/2 of the truth reveals K (the true key's count exceeds n/2, every
other count is below it), so a mechanism accurate to < n/2 with probability ≥ 1 − β gives
F(T, β) ≤ I(K; M(X)) ≤ I(X; M(X)) ≤ ξ·n·H_n + ρn², hence

    n ≥ n_min = the smallest n with ξ·n·H_n + ρn² ≥ F(T, β)     (= ⌈√(F/ρ)⌉ when ξ = 0).

The same argument with a uniformly random row v ∈ {0, 1}^d (M = 2^d) gives the bound for d
one-way marginals answered within 1/2 (rounding the marginals reveals v). These are the
packing arguments of Bun & Steinke (2016), §6 (their Lemma 35 states the bound with the
weaker (1 − β)·log M − log 2 in place of F).

**What the Gaussian achieves.** A histogram has ℓ₂-sensitivity √2 under replace-one (one
count down, one up) and 1 under add/remove; d counts of bits have ℓ₂-sensitivity √d under
both. With σ = Δ₂/√(2ρ) the noise of all cells stays below λ with probability ≥ 1 − β for λ
from :func:`renyi.accuracy.half_width` (exact for independent cells), so every n > 2λ is
accurate to < n/2: the achievable n is ⌊2λ⌋ + 1.

**Approximate DP needs no T.** :func:`stability_histogram_n` gives the n at which a
stability-based (ε, δ)-DP histogram is accurate in the same sense; it does not depend on T,
which zCDP's lower bound does (through log T): the separation Bun & Steinke (2016) stress.

    >>> histogram_min_n(10**6, rho=0.5, beta=0.05)
    6
    >>> gaussian_histogram_n(10**6, rho=0.5, beta=0.05)
    16
    >>> from renyi import ZCDP
    >>> round(mutual_information_bound(ZCDP(0.5), 100), 6)
    5000.0
"""

from __future__ import annotations

import math
from typing import Any

from renyi.core._validation import NONNEGATIVE, POSITIVE, PROBABILITY_OPEN, check_int
from renyi.guarantees.conversions import pure_dp_to_zcdp
from renyi.guarantees import MCDP, ZCDP, Guarantee, PureDP
from renyi.core.errors import DomainError
from renyi.core._names import accepts_neighboring

__all__ = [
    "NEIGHBOURING",
    "mutual_information_bound",
    "fano_bound",
    "packing_min_n",
    "histogram_min_n",
    "marginals_min_n",
    "gaussian_histogram_n",
    "gaussian_marginals_n",
    "stability_histogram_n",
]

#: Neighbouring relations the bounds accept (the paper's is replace-one).
NEIGHBOURING = ("replace_one", "add_remove")
_EULER = 0.5772156649015329
#: Relative margin: round-off may only lower a Fano bound and raise an MI bound.
_MARGIN = 1e-12


# --------------------------------------------------------------------------- helpers
def _harmonic(k: int) -> float:
    """H_k, or for k ≥ 1000 the upper bound log k + γ + 1/(2k) (the next series term is negative)."""
    if k < 1000:
        return math.fsum(1.0 / i for i in range(1, k + 1))
    return math.log(k) + _EULER + 1.0 / (2 * k)


def _check_neighbouring(value: str) -> str:
    if value not in NEIGHBOURING:
        raise DomainError(f"neighbouring must be one of {', '.join(NEIGHBOURING)}; got {value!r}",
                          name="neighbouring", value=value)
    return value


def _group_kl(guarantee: Any, k: int) -> float:
    """An upper bound on KL(M(x)‖M(x')) for datasets that differ in k rows (replace-one)."""
    if isinstance(guarantee, PureDP):
        e = k * float(guarantee.epsilon)
        rr = e * math.tanh(e / 2.0)  # KL of randomized response at kε (the worst kε-DP pair)
        via_zcdp = k * k * pure_dp_to_zcdp(float(guarantee.epsilon))
        return min(rr, via_zcdp)
    if isinstance(guarantee, MCDP):
        xi, rho = guarantee.mu - guarantee.tau**2 / 2.0, guarantee.tau**2 / 2.0
        via = max(0.0, xi) * k * _harmonic(k) + rho * k * k
        return min(guarantee.mu, via) if k == 1 else via
    z = guarantee if isinstance(guarantee, ZCDP) else guarantee.to_zcdp()
    return float(z.xi) * k * _harmonic(k) + float(z.rho) * k * k


def _as_replace_one(guarantee: Any, neighbouring: str) -> Any:
    """The replace-one guarantee of a guarantee or mechanism."""
    from renyi.guarantees.composition import as_guarantee

    from renyi.guarantees.neighbouring import to_relation

    nb = _check_neighbouring(neighbouring)
    if not isinstance(guarantee, Guarantee) and getattr(guarantee, "neighbouring", None) in NEIGHBOURING:
        nb = guarantee.neighbouring  # a mechanism states its own relation
    elif isinstance(guarantee, Guarantee) and guarantee.neighbouring == "replace_one":
        nb = "replace_one"  # a guarantee that names replace-one is one, whatever the default says
    if nb == "add_remove":
        # group privacy of two, or for a noise mechanism its sensitivity doubled (tighter)
        return as_guarantee(to_relation(guarantee, "replace_one"))
    return as_guarantee(guarantee)


def _zcdp_params(rho: float, xi: float) -> Any:
    return ZCDP(POSITIVE.check("rho", rho), NONNEGATIVE.check("xi", xi))


# --------------------------------------------------------------------------- public API
@accepts_neighboring
def mutual_information_bound(
    guarantee: Any,
    n: int,
    *,
    block: int | None = None,
    neighbouring: str = "replace_one",
) -> float:
    """An upper bound on I(X; M(X)) in nats for a private M on datasets of n rows.

    Args:
        guarantee: a ``ZCDP`` (ξ, ρ), ``PureDP``, ``MCDP``, ``GDP``, any guarantee with a
            zCDP conversion, or a mechanism (its own neighbouring relation is used).
        n: the number of rows n ≥ 1.
        block: ``None`` for arbitrarily dependent rows (Bun & Steinke 2016, Proposition 28);
            ``1`` for independent rows (Lemma 29); ℓ ≥ 1 dividing n for n/ℓ independent
            blocks of ℓ rows each (Theorem 30).
        neighbouring: the relation a bare guarantee is stated under: ``"replace_one"`` (the
            paper's) or ``"add_remove"`` (then its group-of-two guarantee is used).

    Returns:
        An upper bound on the mutual information between the dataset and the output: with
        κ(k) the KL bound for datasets differing in k rows (ξ·k·H_k + ρk² for (ξ, ρ)-zCDP),
        κ(n) for dependent rows and (n/ℓ)·κ(ℓ) for blocks.

    Raises:
        DomainError: n < 1, a block that does not divide n, or an unknown relation.
        ConversionError: a guarantee without a zCDP bound (e.g. (ε, δ)-DP with δ > 0).

    Examples:
        >>> round(mutual_information_bound(ZCDP(0.5), 10), 9)
        50.0
        >>> round(mutual_information_bound(ZCDP(0.5), 10, block=1), 9)
        5.0
        >>> round(mutual_information_bound(ZCDP(0.5), 10, block=5), 9)
        25.0
    """
    n = check_int("n", n, minimum=1)
    g = _as_replace_one(guarantee, neighbouring)
    if block is None:
        out = _group_kl(g, n)
    else:
        ell = check_int("block", block, minimum=1)
        if n % ell:
            raise DomainError(f"block must divide n = {n}; got {block!r}", name="block", value=block)
        out = (n // ell) * _group_kl(g, ell)
    return out * (1.0 + _MARGIN) if math.isfinite(out) else out


def fano_bound(log_size: float, beta: float) -> float:
    """F(M, β) = log M − h(β) − β·log(M − 1): the information, in nats, any estimator needs to
    identify a uniformly random one of M values with error probability ≤ β.

    Args:
        log_size: log M > 0 (M ≥ 2 candidates; given as a log so that M = 2^d or 10^400 work).
        beta: error probability β ∈ (0, 1).

    Returns:
        A lower bound on I(K; Y) (0 when β ≥ (M − 1)/M: guessing already succeeds).
    """
    lm = POSITIVE.check("log_size", log_size)
    b = PROBABILITY_OPEN.check("beta", beta)
    if lm < math.log(2.0) * (1.0 - 1e-15):
        raise DomainError(f"the number of candidates must be in [2, inf); got exp({lm!r})", name="log_size",
                          value=log_size)
    # log(M − 1) = log M + log(1 − 1/M), accurate for M near 2 and for astronomically large M
    log_m1 = lm + math.log1p(-math.exp(-lm)) if lm > 1e-300 else -math.inf
    if lm <= 0.0 or b >= -math.expm1(-lm):  # β ≥ (M − 1)/M
        return 0.0
    h = -b * math.log(b) - (1.0 - b) * math.log1p(-b)
    out = lm - h - b * log_m1
    return max(0.0, out - _MARGIN * max(1.0, abs(out)))


@accepts_neighboring
def packing_min_n(log_size: float, guarantee: Any, beta: float, *, neighbouring: str = "replace_one") -> int:
    """The smallest n at which a private mechanism could identify one of M inputs put in all n rows.

    Any mechanism with ``guarantee`` that, on datasets whose n rows all equal a uniformly random
    one of M values, lets that value be recovered with probability ≥ 1 − β needs
    κ(n) ≥ F(M, β) (module docstring); this returns the smallest such n.

    Args:
        log_size: log M (M ≥ 2).
        guarantee: as in :func:`mutual_information_bound`.
        beta: failure probability β ∈ (0, 1).
        neighbouring: as in :func:`mutual_information_bound`.

    Returns:
        A lower bound n_min ≥ 1 on the number of rows (never above the true threshold: the
        Fano bound is rounded down and the MI bound up).
    """
    need = fano_bound(log_size, beta)
    g = _as_replace_one(guarantee, neighbouring)
    if need <= 0.0:
        return 1

    def enough(n: int) -> bool:
        return _group_kl(g, n) * (1.0 + _MARGIN) >= need

    hi = 1
    while not enough(hi):
        hi *= 2
        if hi > 2**62:
            raise DomainError("the guarantee reveals too little for any n below 2**62", name="guarantee",
                              value=guarantee)
    lo = hi // 2  # enough(lo) is false (or lo = 0)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if enough(mid):
            hi = mid
        else:
            lo = mid
    return hi


def _log_keys(keys: float) -> float:
    t = POSITIVE.check("keys", keys)
    if t < 2.0:
        raise DomainError(f"keys must be in [2, inf); got {keys!r}", name="keys", value=keys)
    return math.log(t)


@accepts_neighboring
def histogram_min_n(keys: float, rho: float, beta: float, *, xi: float = 0.0,
                    neighbouring: str = "replace_one") -> int:
    """No (ξ, ρ)-zCDP histogram over T keys keeps every count within n/2 w.p. ≥ 1 − β unless n ≥ this.

    Args:
        keys: the number of keys T ≥ 2 (a float, so T = 1e300 works).
        rho: ρ > 0.
        beta: failure probability β ∈ (0, 1).
        xi: ξ ≥ 0.
        neighbouring: the relation ρ is stated under (``"replace_one"`` or ``"add_remove"``).

    Returns:
        The smallest n with ξ·n·H_n + ρn² ≥ log T − h(β) − β·log(T − 1) (module docstring):
        a lower bound on the dataset size.

    Examples:
        >>> histogram_min_n(1e6, 0.5, 0.05), histogram_min_n(1e6, 0.5, 0.05, neighbouring="add_remove")
        (6, 3)
    """
    lt = _log_keys(keys)
    return packing_min_n(lt, _zcdp_params(rho, xi), beta, neighbouring=neighbouring)


@accepts_neighboring
def marginals_min_n(d: int, rho: float, beta: float, *, xi: float = 0.0,
                    neighbouring: str = "replace_one") -> int:
    """No (ξ, ρ)-zCDP algorithm answers d one-way marginals within 1/2 w.p. ≥ 1 − β unless n ≥ this.

    Rows are in {0, 1}^d; a marginal is the fraction of rows with a 1 in that column.

    Args:
        d: the number of attributes d ≥ 1.
        rho: ρ > 0.
        beta: failure probability β ∈ (0, 1).
        xi: ξ ≥ 0.
        neighbouring: the relation ρ is stated under.

    Returns:
        The smallest n with ξ·n·H_n + ρn² ≥ d·log 2 − h(β) − β·log(2^d − 1).

    Examples:
        >>> marginals_min_n(100, 0.5, 0.05)
        12
    """
    d = check_int("d", d, minimum=1)
    return packing_min_n(d * math.log(2.0), _zcdp_params(rho, xi), beta, neighbouring=neighbouring)


def _gaussian_n(sensitivity: float, rho: float, cells: float, beta: float) -> int:
    """⌊2λ⌋ + 1 for the simultaneous half-width λ of σ = Δ/√(2ρ) over ``cells`` independent cells.

    ``cells`` may exceed the integers the accuracy API takes (T = 1e300 keys): the per-cell
    target 1 − (1 − β)^{1/T} only needs T as a real number.
    """
    from renyi.accounting.accuracy import _cell_half_width, _log_cell_beta

    b = PROBABILITY_OPEN.check("beta", beta)
    sigma = sensitivity / math.sqrt(2.0 * rho)
    lam = _cell_half_width("gaussian", sigma, _log_cell_beta(math.log(b), cells, "independent"))
    return math.floor(2.0 * lam) + 1


@accepts_neighboring
def gaussian_histogram_n(keys: float, rho: float, beta: float, *, neighbouring: str = "replace_one") -> int:
    """The smallest n at which the ρ-zCDP Gaussian histogram keeps every count within n/2 w.p. ≥ 1 − β.

    σ = Δ₂/√(2ρ) with Δ₂ = √2 (replace-one) or 1 (add/remove); the simultaneous half-width λ
    over T independent cells is :func:`renyi.accuracy.half_width`; n = ⌊2λ⌋ + 1 > 2λ.

    Args:
        keys: T ≥ 2 (an integer-valued float up to 1e300 works).
        rho: ρ > 0.
        beta: failure probability β ∈ (0, 1).
        neighbouring: ``"replace_one"`` or ``"add_remove"``.

    Returns:
        An achievable n (an upper bound on the least n any ρ-zCDP algorithm needs).
    """
    _log_keys(keys)
    rho = POSITIVE.check("rho", rho)
    nb = _check_neighbouring(neighbouring)
    return _gaussian_n(math.sqrt(2.0) if nb == "replace_one" else 1.0, rho, math.ceil(keys), beta)


@accepts_neighboring
def gaussian_marginals_n(d: int, rho: float, beta: float, *, neighbouring: str = "replace_one") -> int:
    """The smallest n at which ρ-zCDP Gaussian noise on d column counts keeps every marginal within 1/2.

    The d counts have ℓ₂-sensitivity √d under both relations (a row changes each count by at
    most 1); an error below n/2 in every count is an error below 1/2 in every marginal.

    Returns:
        An achievable n.
    """
    d = check_int("d", d, minimum=1)
    rho = POSITIVE.check("rho", rho)
    _check_neighbouring(neighbouring)
    return _gaussian_n(math.sqrt(d), rho, d, beta)


def stability_histogram_n(epsilon: float, delta: float, beta: float) -> int:
    """The smallest n at which a stability-based (ε, δ)-DP histogram keeps every count within n/2.

    The algorithm (after Korolova, Kenthapadi, Mishra & Ntoulas 2009 and Bun, Nissim & Stemmer
    2016): for each key y with c_y ≥ 1 draw ĉ_y = c_y + Lap(b), b = 2/ε, and publish it only if
    ĉ_y ≥ τ = 1 + b·log(1/δ); unpublished keys read 0. Keys absent from the data are never
    published, so nothing depends on T.

    Privacy (replace-one): a replacement changes two counts, a → a − 1 and b′ → b′ + 1; all
    other published values are identically distributed. Each of the two changed keys is either
    present on both sides (a Laplace shift of 1: (1/b, 0)-DP) or has count 1 on one side and 0
    on the other; then it is published with probability p = ½e^{−(τ−1)/b} = δ/2 on one side
    and never on the other, which is (log(1/(1 − p)), p)-DP. Independent parts compose:
    (2·max(1/b, log(1/(1 − p))), 2p) = (ε, δ) since log(1/(1 − δ/2)) ≤ ε/2 (checked).
    Under add/remove only one count changes, which gives (ε/2, δ/2): the n holds for both.

    Accuracy: a published count errs by |Z_y|; an unpublished one by c_y < τ − Z_y. At most n
    keys are present, so with probability ≥ 1 − β every error is below τ + b·log(n/β)
    (P[|Lap(b)| > t] = e^{−t/b}, union bound). The returned n is the smallest with
    τ + b·log(n/β) < n/2.

    Args:
        epsilon: ε > 0.
        delta: δ ∈ (0, 1).
        beta: failure probability β ∈ (0, 1).

    Returns:
        An achievable n for (ε, δ)-DP, independent of the number of keys.

    Examples:
        >>> stability_histogram_n(1.0, 1e-6, 0.05)
        88
    """
    eps = POSITIVE.check("epsilon", epsilon)
    dlt = PROBABILITY_OPEN.check("delta", delta)
    b_ = PROBABILITY_OPEN.check("beta", beta)
    scale = 2.0 / eps
    if -math.log1p(-dlt / 2.0) > eps / 2.0:
        raise DomainError(f"delta must be small enough that log(1/(1 − δ/2)) ≤ ε/2; got delta={delta!r}",
                          name="delta", value=delta)
    tau = 1.0 + scale * -math.log(dlt)  # (1/δ overflows to inf below δ ≈ 5.6e-309)

    def ok(n: int) -> bool:
        return tau + scale * (math.log(n) - math.log(b_)) < n / 2.0

    hi = 1
    while not ok(hi):
        hi *= 2
        if hi > 2**1022:  # n/2 would leave the range of a double (tiny ε, δ or β)
            raise DomainError(f"no n up to 1.8e308 is enough for epsilon={epsilon!r}, delta={delta!r}, "
                              f"beta={beta!r} (the threshold 1 + (2/ε)·log(1/δ) is {tau:.3g})",
                              name="epsilon", value=epsilon)
    lo = hi // 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi

