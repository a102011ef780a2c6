"""Lower bounds on ε from canary scores: thresholding, the one-run audit, and Gaussian DP.

An audit inserts canaries, each either *included* in the training data or not, scores every
canary after training (higher = looks more included: a loss drop, a likelihood ratio, a dot
product with the final update), and turns the scores into a statement that holds with
probability at least ``confidence`` = 1 − β: *the mechanism is not (ε, δ)-DP for any ε below
the reported bound*. The certified ε of the accountant is an upper bound on the same quantity;
an audit whose lower bound exceeds it has found a bug (in the training code or the accounting),
unless the 1 − β event failed.

Three methods, each valid for one experiment *design* (``DESIGNS``), with its validity
argument (stated fully in the docs page ``docs/audit.md``). One training run with many
canaries is **not** a set of independent trials: the canaries share the model, so their scores
are dependent, and only ``"one_run"`` is valid for it.

``"threshold"``
    Design: independent trials, one training run per canary (or canaries whose scores are
    independent given their inclusion); not one run with many canaries. For a test "score
    above t", (ε, δ)-DP gives TPR ≤ e^ε·FPR + δ and TNR ≤ e^ε·FNR + δ [KOV15, Thm 2.1], so
    ε ≥ max(log((1 − δ − FNR)/FPR), log((1 − δ − FPR)/FNR)). FPR and FNR are replaced by exact
    Clopper–Pearson upper bounds [CP34]. The threshold is chosen from the data, which a single
    Clopper–Pearson interval does not allow; here thresholds are indexed by a *fixed* grid of
    ranks (t = the (k+1)-th highest excluded score, k ∈ {0, 1, 2, 4, …}, and symmetrically from
    the included scores), where the false-positive rate at that threshold is exactly the
    (k+1)-th uniform order statistic, Beta(k+1, n−k), whose quantile *is* the Clopper–Pearson
    bound; the other rate is binomial given the threshold. A Bonferroni correction over the
    2·|grid| bounds makes all of them hold at once with probability ≥ 1 − β, so the maximum
    over thresholds is valid. Ties are broken by an independent random key (a randomised test,
    post-processing of the output).

``"one_run"``
    Design: one training run (or several); each of m canaries included by its own independent
    fair coin (probability ½); the scores may depend on each other in any way. The auditor
    guesses "included" for the k highest scores and "excluded" for the k lowest and
    abstains on the rest; under (ε, δ)-DP the number of correct guesses is dominated as in
    Steinke, Nasr & Jagielski (2023), Thm 3 (see :func:`renyi.audit._binomial.one_run_p_value`).
    k runs over a fixed grid {1, 2, 4, …, ⌊m/2⌋} with a Bonferroni correction.

``"gdp"``
    Design: independent trials, as for ``"threshold"`` (whose simultaneous confidence corners
    it uses). If the mechanism is μ*-GDP, its trade-off curve lies above G_μ*, so at every
    threshold
    μ* ≥ Φ⁻¹(1 − FPR) − Φ⁻¹(FNR) ≥ Φ⁻¹(1 − FPR⁺) − Φ⁻¹(FNR⁺) [DRS22, Def. 2.5–2.7]; the maximum
    over the grid, ``mu``, is a valid lower confidence bound on the smallest μ the mechanism
    satisfies, for *any* mechanism. ``epsilon`` is the ε at δ of μ-GDP with that μ [DRS22,
    Cor. 2.13]: a lower bound on the mechanism's ε **only if its trade-off curve is Gaussian**
    (the Gaussian mechanism, and DP-SGD in its central-limit regime [DRS22, Thm 3.5]), as in
    Nasr et al. (2023). For Laplace or randomised response it can exceed the true ε; the
    result says so in ``assumption``.

References:
    [CP34] C. J. Clopper, E. S. Pearson, "The use of confidence or fiducial limits illustrated in
    the case of the binomial", Biometrika 26 (1934).
    [KOV15] P. Kairouz, S. Oh, P. Viswanath, "The composition theorem for differential privacy",
    ICML 2015, Thm 2.1.
    [JUO20] M. Jagielski, J. Ullman, A. Oprea, "Auditing differentially private machine learning:
    how private is private SGD?", NeurIPS 2020.
    [SNJ23] T. Steinke, M. Nasr, M. Jagielski, "Privacy auditing with one (1) training run",
    NeurIPS 2023, arXiv:2305.08846, Thm 3 and Alg. 2.
    [NHS+23] M. Nasr, J. Hayes, T. Steinke, B. Balle, F. Tramèr, M. Jagielski, N. Carlini,
    A. Terzis, "Tight auditing of differentially private machine learning", USENIX Security 2023.
    [DRS22] J. Dong, A. Roth, W. Su, "Gaussian differential privacy", JRSS-B 84 (2022).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from renyi.audit._binomial import clopper_pearson_upper, one_run_epsilon
from renyi.core import _logmath as lm
from renyi.core._lazy import optimize, special
from renyi.core._validation import PROBABILITY_OPEN, UNIT_CLOSED_OPEN
from renyi.core.errors import DomainError

__all__ = ["DESIGNS", "METHODS", "AuditResult", "EmpiricalTradeoff", "epsilon_lower_bound", "gdp_epsilon_lower"]

#: The audit methods, in the order the CLI prints them.
METHODS = ("threshold", "one_run", "gdp")

#: The experiment design each method's guarantee needs, in words (``AuditResult.design``).
#: ``threshold`` and ``gdp`` treat every canary as an independent trial (Clopper–Pearson counts
#: of independent Bernoulli outcomes), which one training run with many canaries does not give:
#: the canaries share the model. ``one_run`` needs only each canary's own fair coin.
DESIGNS = {
    "threshold": "independent trials: one training run per canary (not one run with many canaries)",
    "one_run": "one training run (or more), each canary included by its own fair coin",
    "gdp": "independent trials: one training run per canary (not one run with many canaries); "
           "epsilon also assumes a Gaussian trade-off",
}

#: Largest number of empirical trade-off points kept on a result (for plots); the bound itself
#: always uses every canary.
_MAX_POINTS = 2001

#: The one-run audit needs each canary included by an independent fair coin [SNJ23, §3]; a count
#: of included canaries this improbable under Binomial(m, ½) means another design was used.
_FAIR_COIN_P = 1e-6

_GDP_ASSUMPTION = ("the mechanism's trade-off curve is Gaussian (tightly μ-GDP, e.g. the Gaussian mechanism "
                   "or DP-SGD in its central-limit regime); mu is valid for any mechanism, epsilon only then")


@dataclass(frozen=True, slots=True, eq=False)
class EmpiricalTradeoff:
    """The attack's empirical trade-off, for plots and reports.

    Attributes:
        fpr: false-positive rates of the tests "score above t" over all thresholds (point
            estimates, non-decreasing; at most ~2000 points kept).
        tpr: the matching true-positive rates.
        fpr_upper: simultaneous upper confidence bounds on the FPR at the tested thresholds
            (``"threshold"`` and ``"gdp"``; empty for ``"one_run"``).
        tpr_lower: the matching lower confidence bounds on the TPR (1 − FNR⁺).
    """

    fpr: np.ndarray
    tpr: np.ndarray
    fpr_upper: np.ndarray = field(default_factory=lambda: np.zeros(0))
    tpr_lower: np.ndarray = field(default_factory=lambda: np.zeros(0))


@dataclass(frozen=True, slots=True)
class AuditResult:
    """A lower bound on ε from canary scores, valid with probability ≥ ``confidence``.

    Attributes:
        epsilon: the lower bound on ε at ``delta`` (≥ 0; 0 when the scores show nothing).
        method: ``"threshold"``, ``"one_run"`` or ``"gdp"``.
        confidence: 1 − β, the probability that the statement holds.
        delta: the δ at which ε is bounded.
        canaries: number of canaries scored.
        included: how many of them were included.
        mu: ``"gdp"`` only: a lower confidence bound on the smallest μ for which the mechanism
            is μ-GDP (valid for any mechanism); ``None`` for the other methods.
        assumption: what ``epsilon`` rests on beyond the audit design ("" when nothing).
        witness: the test that achieved the bound, in words.
        tradeoff: the empirical trade-off points (not compared, not in ``repr``).

    ``design`` (a property) is the experiment design the guarantee needs, from ``DESIGNS``:
    a ``"threshold"`` or ``"gdp"`` result from one training run with many canaries is outside
    it and proves nothing.
    """

    epsilon: float
    method: str
    confidence: float
    delta: float
    canaries: int
    included: int
    mu: float | None = None
    assumption: str = ""
    witness: str = ""
    tradeoff: EmpiricalTradeoff = field(default_factory=lambda: EmpiricalTradeoff(np.zeros(0), np.zeros(0)),
                                        compare=False, repr=False)

    @property
    def design(self) -> str:
        """The experiment design this result's guarantee needs (``DESIGNS[method]``)."""
        return DESIGNS[self.method]

    def __str__(self) -> str:
        s = (f"ε ≥ {self.epsilon:.4g} at δ = {self.delta:g} with confidence {self.confidence:g} "
             f"({self.method}; {self.included} of {self.canaries} canaries included)")
        if self.mu is not None:
            s += f"; μ ≥ {self.mu:.4g}"
        return s

    def to_dict(self) -> dict[str, Any]:
        """The result as a JSON-ready dict (without the trade-off arrays)."""
        return {"epsilon": self.epsilon, "method": self.method, "confidence": self.confidence,
                "delta": self.delta, "canaries": self.canaries, "included": self.included, "mu": self.mu,
                "assumption": self.assumption, "witness": self.witness, "design": self.design}


# --------------------------------------------------------------------------------------
# input
# --------------------------------------------------------------------------------------
def _canaries(scores: Any, included: Any) -> tuple[np.ndarray, np.ndarray]:
    """Validated (scores as float64, included as bool), both 1-D of one length."""
    if isinstance(scores, (str, bytes)):
        raise TypeError(f"scores must be an array of real numbers; got {type(scores).__name__}")
    try:
        s = np.asarray(scores, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError("scores must be an array of real numbers") from None
    if s.ndim != 1:
        raise DomainError(f"scores must be one-dimensional (one score per canary); got shape {s.shape}",
                          name="scores", value=s.shape)
    bad = ~np.isfinite(s)
    if np.any(bad):
        i = int(np.flatnonzero(bad)[0])
        raise DomainError(f"scores must be finite numbers; got {float(s[i])!r} at position {i}", name="scores",
                          value=float(s[i]))
    inc_raw = np.asarray(included)
    if inc_raw.shape != s.shape:
        raise DomainError(f"included must have one entry per score ({s.shape[0]}); got shape {inc_raw.shape}",
                          name="included", value=inc_raw.shape)
    if inc_raw.dtype.kind == "b":
        inc = inc_raw.astype(bool)
    elif inc_raw.dtype.kind in "iuf":
        ok = (inc_raw == 0) | (inc_raw == 1)
        if not np.all(ok):
            i = int(np.flatnonzero(~ok)[0])
            raise DomainError(f"included must be booleans or 0/1; got {inc_raw[i].item()!r} at position {i}",
                              name="included", value=inc_raw[i])
        inc = inc_raw == 1
    else:
        raise TypeError(f"included must be booleans or 0/1; got an array of {inc_raw.dtype}")
    n1 = int(inc.sum())
    if n1 == 0 or n1 == s.size:
        raise DomainError(
            f"included must mark at least one included and one excluded canary; got {n1} included of {s.size}",
            name="included", value=n1)
    return s, inc


def _ranks(scores: np.ndarray, seed: int) -> np.ndarray:
    """A strict total order of the canaries consistent with their scores.

    Ties are broken by an independent uniform key: the tests below then act on a continuous
    score, which is what the order-statistic argument needs, and a randomised test is
    post-processing of the mechanism's output, so DP bounds it the same way.
    """
    key = np.random.default_rng(seed).random(scores.size)
    order = np.lexsort((key, scores))
    rank = np.empty(scores.size, dtype=np.int64)
    rank[order] = np.arange(scores.size)
    return rank


def _grid(n: int) -> np.ndarray:
    """Ranks 0, 1, 2, 4, 8, … below n: a data-independent set of thresholds (given the counts).

    Doubling is the best of the spacings tried (ratios 2, 1.5, 1.25, 1.1 on Gaussian scores,
    10⁴ canaries): a finer grid pays more in the Bonferroni correction than it gains.
    """
    out = [0]
    x = 1
    while x <= n - 1:
        out.append(x)
        x *= 2
    return np.asarray(out, dtype=np.int64)


def _empirical(rank: np.ndarray, inc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    lab = inc[np.argsort(-rank)]
    tp = np.concatenate([[0], np.cumsum(lab)]).astype(np.float64)
    fp = np.concatenate([[0], np.cumsum(~lab)]).astype(np.float64)
    if tp.size > _MAX_POINTS:
        keep = np.unique(np.linspace(0, tp.size - 1, _MAX_POINTS).round().astype(np.int64))
        tp, fp = tp[keep], fp[keep]
    return fp / fp[-1], tp / tp[-1]


def _corners(rank: np.ndarray, inc: np.ndarray, beta: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Upper confidence bounds (FPR⁺, FNR⁺) at the grid thresholds, all holding at once w.p. ≥ 1 − β.

    Family A: t = the (k+1)-th highest excluded rank, guess "included" above t: exactly k false
    positives, and FPR(t) is the (k+1)-th largest of n₀ uniforms, Beta(k+1, n₀−k), whose
    (1−γ)-quantile is the Clopper–Pearson bound for k; given t (a function of the excluded
    canaries only), the false negatives are Binomial(n₁, FNR(t)). Family B mirrors this from
    the included canaries. 2·(|A| + |B|) bounds at γ = β / (2·(|A| + |B|)) each.

    Returns:
        (fpr_upper, fnr_upper, k) with k the grid rank of each threshold (family B negated − 1).
    """
    neg = np.sort(rank[~inc])          # ascending
    pos = np.sort(rank[inc])
    n0, n1 = neg.size, pos.size
    ka, kb = _grid(n0), _grid(n1)
    gamma = beta / (2.0 * (ka.size + kb.size))
    ta = neg[n0 - 1 - ka]              # k excluded canaries rank above ta
    fn_a = np.searchsorted(pos, ta, side="right")        # included at or below ta
    tb = pos[kb]                       # k included canaries rank below tb
    fp_b = n0 - np.searchsorted(neg, tb, side="left")    # excluded at or above tb
    fpr = np.concatenate([clopper_pearson_upper(ka, n0, gamma), clopper_pearson_upper(fp_b, n0, gamma)])
    fnr = np.concatenate([clopper_pearson_upper(fn_a, n1, gamma), clopper_pearson_upper(kb, n1, gamma)])
    return fpr, fnr, np.concatenate([ka, -1 - kb])


def _threshold_epsilon(fpr: np.ndarray, fnr: np.ndarray, delta: float) -> np.ndarray:
    """ε ≥ max(log((1−δ−FNR)/FPR), log((1−δ−FPR)/FNR)) at each corner (−∞ where vacuous)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.log(np.maximum(1.0 - delta - fnr, 0.0)) - np.log(fpr)
        b = np.log(np.maximum(1.0 - delta - fpr, 0.0)) - np.log(fnr)
    out = np.fmax(a, b)
    return np.asarray(np.where(np.isnan(out), -np.inf, out), dtype=np.float64)


def gdp_epsilon_lower(mu: float, delta: float) -> float:
    """ε at δ of μ-GDP, rounded *down* (for a lower bound): the root of δ_μ(ε) = δ.

    δ_μ(ε) = Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ) [DRS22, Cor. 2.13], in log space. The root is
    moved down by the same floating-point margin that :func:`renyi.conversions.gdp_to_approx_dp`
    moves it up, so this never exceeds the exact ε.

    Args:
        mu: μ ≥ 0.
        delta: δ ∈ (0, 1).

    Returns:
        ε ≥ 0 with δ_μ(ε) ≥ δ (0 when δ_μ(0) ≤ δ).
    """
    if mu <= 0.0:
        return 0.0
    ld = math.log(delta)

    def f(e: float) -> float:
        return float(lm.log_delta_gaussian(e, mu)) - ld

    if f(0.0) <= 0.0:
        return 0.0
    hi = 1.0
    while f(hi) > 0.0:
        hi *= 2.0
        if hi > 1e12:  # δ_μ(ε) > δ this far out only for μ beyond any audit
            return float(hi / 2.0)
    eps = float(optimize.brentq(f, 0.0, hi, xtol=1e-14, rtol=1e-14, maxiter=500))
    for _ in range(64):
        if f(eps) >= 0.0:
            break
        eps = math.nextafter(eps - abs(eps) * 1e-15, -math.inf)
    log_r = eps + float(lm.log_ndtr(-mu / 2.0 - eps / mu)) - float(lm.log_ndtr(mu / 2.0 - eps / mu))
    margin = 1e-13 * math.exp(min(-log_r, 700.0)) + 1e-15 * eps
    return max(0.0, eps - margin)


def _round_down(x: float) -> float:
    return max(0.0, math.nextafter(float(x), -math.inf)) if x > 0 else 0.0


# --------------------------------------------------------------------------------------
# the public function
# --------------------------------------------------------------------------------------
def epsilon_lower_bound(scores: Any, included: Any, *, delta: float, confidence: float = 0.95,
                        method: str = "threshold", seed: int = 0, guesses: int | None = None) -> AuditResult:
    """A statistically valid lower bound on ε at δ from canary scores.

    With probability at least ``confidence`` over the canaries' randomness, the audited
    mechanism is not (ε', δ)-DP for any ε' < the returned ``epsilon`` (for ``"gdp"``: under
    the Gaussian trade-off assumption stated in ``assumption``; its ``mu`` needs none).

    Args:
        scores: one finite real score per canary; higher means "looks included".
        included: one boolean (or 0/1) per canary: was it in the training data.
        delta: δ ∈ [0, 1) (``"gdp"``: δ ∈ (0, 1)).
        confidence: 1 − β ∈ (0, 1).
        method: ``"threshold"`` — *design: independent trials*, one training run per canary
            (or canaries whose scores are independent given their inclusion); Clopper–Pearson
            with a Bonferroni-corrected threshold choice. **Not valid for one training run
            with many canaries** (their scores are dependent through the shared model).
            ``"one_run"`` — *design: one training run*, each canary included by its own
            independent fair coin; the scores may be dependent in any way (Steinke, Nasr &
            Jagielski 2023, Thm 3). The method to use for one run with many canaries.
            ``"gdp"`` — *design: independent trials*, as ``"threshold"``; the μ-GDP the
            trade-off rules out (Nasr et al. 2023), its ε valid only for a Gaussian trade-off.
            ``DESIGNS`` holds these designs in words; every result carries its own in
            ``.design``.
        seed: seed of the random tie-breaking key (any fixed value is valid).
        guesses: ``"one_run"`` only: a number k of guesses per side fixed *before* seeing the
            scores (the k highest guessed included, the k lowest excluded; 1 ≤ k ≤ m/2). The
            bound is then the one test at level β, with no Bonferroni correction over the grid
            of k: more power when k is well chosen in advance (e.g. from a pilot run), less
            when it is not. None (default) picks the best k on the grid {1, 2, 4, …} and pays
            for the choice.

    Returns:
        An :class:`AuditResult`; ``epsilon`` is a lower bound on ε, rounded down.

    Raises:
        DomainError: NaN or infinite scores, no included (or no excluded) canary, ``delta`` or
            ``confidence`` out of range, an unknown method, or (``"one_run"``) an inclusion
            count implausible for independent fair coins.

    References:
        Steinke, Nasr & Jagielski (2023), Thm 3; Nasr et al. (2023); Jagielski, Ullman & Oprea
        (2020); Clopper & Pearson (1934). See the module docstring for the validity arguments.

    Examples:
        >>> import numpy as np
        >>> rng = np.random.default_rng(1)
        >>> included = rng.random(2000) < 0.5
        >>> scores = rng.normal(size=2000) + 2.0 * included      # a 2-GDP mechanism
        >>> r = epsilon_lower_bound(scores, included, delta=1e-5, method="gdp")
        >>> 1.5 < r.mu <= 2.0
        True
        >>> epsilon_lower_bound(scores, included, delta=1e-5).epsilon > 1.0
        True
    """
    if method not in METHODS:
        raise DomainError(f"method must be one of {', '.join(METHODS)}; got {method!r}", name="method",
                          value=method)
    if guesses is not None and method != "one_run":
        raise DomainError(f"guesses applies to method='one_run' only; got method={method!r}", name="guesses",
                          value=guesses)
    conf = PROBABILITY_OPEN.check("confidence", confidence)
    if method == "gdp":
        d = PROBABILITY_OPEN.check("delta", delta)
    else:
        d = UNIT_CLOSED_OPEN.check("delta", delta)
    s, inc = _canaries(scores, included)
    beta = 1.0 - conf
    rank = _ranks(s, seed)
    fpr_pts, tpr_pts = _empirical(rank, inc)
    m, n1 = int(s.size), int(inc.sum())

    if method == "one_run":
        return _one_run(rank, inc, d, conf, beta, fpr_pts, tpr_pts, guesses)

    fpr, fnr, k = _corners(rank, inc, beta)
    trade = EmpiricalTradeoff(fpr_pts, tpr_pts, fpr, 1.0 - fnr)
    if method == "threshold":
        eps = _threshold_epsilon(fpr, fnr, d)
        i = int(np.argmax(eps))
        best = max(0.0, float(eps[i]))
        witness = _corner_words(k[i], fpr[i], fnr[i]) if best > 0 else "no threshold rules out ε > 0"
        return AuditResult(_round_down(best), method, conf, d, m, n1, witness=witness, tradeoff=trade)
    # gdp
    with np.errstate(divide="ignore"):
        mus = -(special.ndtri(fpr) + special.ndtri(fnr))
    i = int(np.argmax(mus))
    mu = max(0.0, float(mus[i]))
    mu = _round_down(mu)
    eps_g = gdp_epsilon_lower(mu, d)
    witness = _corner_words(k[i], fpr[i], fnr[i]) if mu > 0 else "no threshold rules out μ > 0"
    return AuditResult(_round_down(eps_g), method, conf, d, m, n1, mu=mu, assumption=_GDP_ASSUMPTION,
                       witness=witness, tradeoff=trade)


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _corner_words(k: int, fpr: float, fnr: float) -> str:
    where = (f"threshold at the {_ordinal(int(k) + 1)} highest excluded score" if k >= 0 else
             f"threshold at the {_ordinal(-int(k))} lowest included score")
    return f"{where}: FPR ≤ {fpr:.4g}, FNR ≤ {fnr:.4g} (simultaneous bounds)"


def _guesses(rank: np.ndarray, inc: np.ndarray, k: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The one-run guesses on the fixed grid k ∈ {1, 2, 4, …, ⌊m/2⌋} (or the one given k): the k
    highest scores are guessed included, the k lowest excluded, the rest abstain. Returns
    (k, r = 2k, v = correct)."""
    m = rank.size
    lab = inc[np.argsort(-rank)]
    top = np.concatenate([[0], np.cumsum(lab)])              # included among the k highest
    bottom = np.concatenate([[0], np.cumsum(~lab[::-1])])    # excluded among the k lowest
    ks = _grid(m // 2 + 1)[1:] if k is None else np.asarray([k], dtype=np.int64)
    return ks, 2 * ks, top[ks] + bottom[ks]


def _one_run(rank: np.ndarray, inc: np.ndarray, delta: float, conf: float, beta: float,
             fpr_pts: np.ndarray, tpr_pts: np.ndarray, guesses: int | None = None) -> AuditResult:
    m, n1 = int(rank.size), int(inc.sum())
    if guesses is not None:
        if isinstance(guesses, bool) or not isinstance(guesses, (int, np.integer)):
            raise TypeError(f"guesses must be an integer; got {type(guesses).__name__}")
        if not 1 <= int(guesses) <= m // 2:
            raise DomainError(f"guesses must be in [1, {m // 2}] (at most half the {m} canaries per side); "
                              f"got {int(guesses)}", name="guesses", value=int(guesses))
    # two-sided binomial test of the fair-coin design (the theorem's hypothesis)
    tail = min(float(special.bdtr(min(n1, m - n1), np.int64(m), 0.5)) * 2.0, 1.0)
    if tail < _FAIR_COIN_P:
        raise DomainError(
            f"included must come from an independent fair coin per canary for method='one_run' "
            f"(Steinke, Nasr & Jagielski 2023); got {n1} included of {m} (two-sided p = {tail:.2g}); "
            "the one-run theorem covers no other inclusion rule (method='threshold' needs one training run "
            "per canary)", name="included", value=n1)
    ks, r, v = _guesses(rank, inc, None if guesses is None else int(guesses))
    trade = EmpiricalTradeoff(fpr_pts, tpr_pts)
    if ks.size == 0:
        return AuditResult(0.0, "one_run", conf, delta, m, n1, witness="too few canaries to guess",
                           tradeoff=trade)
    eps = one_run_epsilon(m, r, v, delta, beta / ks.size)
    i = int(np.argmax(eps))
    best = max(0.0, float(eps[i]))
    witness = (f"{int(v[i])} of {int(r[i])} guesses correct (the {int(ks[i])} highest guessed included, "
               f"the {int(ks[i])} lowest excluded, the rest abstained"
               f"{'; k fixed in advance' if guesses is not None else ''})")
    return AuditResult(_round_down(best), "one_run", conf, delta, m, n1, witness=witness, tradeoff=trade)
