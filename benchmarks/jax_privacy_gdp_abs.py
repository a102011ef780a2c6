"""A reproducible check of a suspected validity bug in jax-privacy's ``epsilon_from_gdp``.

Run:  PYTHONPATH=src python benchmarks/jax_privacy_gdp_abs.py [--trials 200] [--canaries 10000] [--mu 0.5]

What it checks. ``jax_privacy.auditing.CanaryScoreAuditor.epsilon_from_gdp(significance, delta)``
is documented as a lower bound on ε holding with probability ≥ 1 − significance. It bounds
FPR and FNR from above at every threshold (Clopper–Pearson, Bonferroni over 2n thresholds) and
takes μ = max |Φ⁻¹(1 − FPR⁺) − Φ⁻¹(FNR⁺)|: the *absolute value*, on the reasoning that a
negative value is the bound for the reversed test. But the reversed test ("score below t")
needs *lower* confidence bounds on FPR and FNR, not the upper ones. At an extreme threshold one
upper bound is close to 1 (the bound of a count close to its whole class: the filter only drops
bounds ≥ 1 − δ, so e.g. FNR⁺ = 0.99999 stays) and the other is small, so
Φ⁻¹(1 − FPR⁺) − Φ⁻¹(FNR⁺) is large and negative although the test detects nothing, and its
absolute value can far exceed the true μ. For a mechanism whose scores are exactly Gaussian (so the GDP
extrapolation is exact and only the statistics can fail) the reported ε should then be above
the true ε in at most a fraction ``significance`` of trials; this script counts how often it is.

Setting: the Gaussian mechanism with sensitivity 1 and σ = 1/μ, one score per canary
(score ~ N(μ·included, 1), each canary included by a fair coin: independent trials, the design
``epsilon_from_gdp`` assumes), δ = 1e-5, significance 0.05. renyi's ``method="gdp"`` is run on
the same scores: it keeps the signed value, so its bound is valid.

The failures are counted with an exact binomial test of H₀: failure rate ≤ 0.05 (one-sided
p-value printed); the trial seeds are fixed, so the counts are reproducible.
"""

from __future__ import annotations

import argparse
import importlib.metadata as md

import numpy as np
from scipy import stats

import renyi
from renyi.audit import epsilon_lower_bound


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--canaries", type=int, default=10_000)
    ap.add_argument("--mu", type=float, default=0.5)
    ap.add_argument("--delta", type=float, default=1e-5)
    args = ap.parse_args()
    try:
        from jax_privacy import auditing
    except ImportError:
        raise SystemExit("jax-privacy is not installed (pip install jax-privacy)") from None
    beta = 0.05
    truth = renyi.Gaussian(1.0 / args.mu).epsilon(args.delta)
    print(f"jax-privacy {md.version('jax-privacy')}; Gaussian mechanism μ = {args.mu} (true ε = {truth:.4f} at "
          f"δ = {args.delta:g}); {args.canaries} canaries per trial, {args.trials} trials, significance {beta}")
    jax_over = ours_over = 0
    jax_eps: list[float] = []
    ours_eps: list[float] = []
    for seed in range(args.trials):
        rng = np.random.default_rng(seed)
        inc = rng.random(args.canaries) < 0.5
        s = rng.standard_normal(args.canaries) + args.mu * inc
        e_jax = float(auditing.CanaryScoreAuditor(s[inc], s[~inc]).epsilon_from_gdp(beta, args.delta))
        e_ours = epsilon_lower_bound(s, inc, delta=args.delta, confidence=1 - beta, method="gdp").epsilon
        jax_eps.append(e_jax)
        ours_eps.append(e_ours)
        jax_over += e_jax > truth
        ours_over += e_ours > truth

    def line(name: str, over: int, eps: list[float]) -> str:
        p = stats.binom.sf(over - 1, args.trials, beta) if over else 1.0
        return (f"{name:<26} above the true ε in {over:>4} of {args.trials} trials ({over / args.trials:.1%}; "
                f"allowed {beta:.0%}; binomial p = {p:.2g}); median ε {np.median(eps):.3f}, max {max(eps):.3f}")

    print(line("jax-privacy epsilon_from_gdp", jax_over, jax_eps))
    print(line("renyi method='gdp'", ours_over, ours_eps))

    # where the jax-privacy bound comes from, in the first trial that exceeds the truth
    for seed in range(args.trials):
        if jax_eps[seed] > truth:
            rng = np.random.default_rng(seed)
            inc = rng.random(args.canaries) < 0.5
            s = rng.standard_normal(args.canaries) + args.mu * inc
            _explain(s, inc, beta, args.delta)
            break


def _explain(s: np.ndarray, inc: np.ndarray, beta: float, delta: float) -> None:
    """The threshold behind the largest |μ| (recomputed with scipy, the same formulas)."""
    pos, neg = np.sort(s[inc]), np.sort(s[~inc])
    thresholds = np.concatenate([[-np.inf], np.sort(s), [np.inf]])
    n_pos, n_neg, n = pos.size, neg.size, thresholds.size
    fn = np.searchsorted(pos, thresholds, side="left")        # included scored below t
    fp = n_neg - np.searchsorted(neg, thresholds, side="left")  # excluded scored at or above t
    g = beta / (2 * n)
    fnr_u = np.where(fn >= n_pos, 1.0, stats.beta.ppf(1 - g, fn + 1, n_pos - fn))
    fpr_u = np.where(fp >= n_neg, 1.0, stats.beta.ppf(1 - g, fp + 1, n_neg - fp))
    keep = np.maximum(fpr_u, fnr_u) < 1 - delta
    signed = stats.norm.isf(fpr_u[keep]) - stats.norm.ppf(fnr_u[keep])
    i = int(np.argmax(np.abs(signed)))
    print(f"  first failing trial: max |μ| = {abs(signed[i]):.3f} from a signed value {signed[i]:+.3f} at a threshold "
          f"with {int(fp[keep][i])} of {n_neg} excluded above it (FPR⁺ = {fpr_u[keep][i]:.6g}) and "
          f"{int(fn[keep][i])} of {n_pos} included below it (FNR⁺ = {fnr_u[keep][i]:.6g}); the largest "
          f"signed value is {signed.max():+.3f}")


if __name__ == "__main__":
    main()
