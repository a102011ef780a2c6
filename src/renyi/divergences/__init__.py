"""Rényi divergences: discrete, continuous (numerical) and closed forms; the privacy loss.

The layer just above :mod:`renyi.core`: numbers about pairs of distributions, nothing about
privacy definitions (:mod:`.discrete`, :mod:`.numerical`, :mod:`.closed_forms`, :mod:`.plrv`).

D_α(P‖Q) = 1/(α−1) · log ∫ p^α q^{1−α} for α ∈ (0, 1) ∪ (1, ∞), with the limits
D_0 = −log Q(p > 0), D_1 = KL(P‖Q) and D_∞ = log ess sup_P p/q ([vEH14];
[BS16] Def 14).

Every function here is vectorized over the order: a scalar ``alpha`` gives a ``float``, an
array gives an array of the same shape. Every order in [0, ∞] is accepted unless a docstring
says otherwise. The orders α = 1 and α = ∞ have their own code paths, and orders near 1 use
forms built on ``expm1``/``log1p`` so that α = 1 + 1e-12 is as accurate as α = 2.

All computations are in log space: the general discrete case evaluates
log Σ_i e^{log p_i + (α−1) z_i} with z_i = log p_i − log q_i, so probabilities down to 1e-300
and orders up to 1e6 (and beyond) stay finite and accurate.

Examples:
    >>> round(renyi_divergence([0.75, 0.25], [0.25, 0.75], 2.0), 10)
    0.8472978604
    >>> gaussian_divergence(0.0, 1.0, 2.0, 3.0)
    0.375
    >>> float(laplace_divergence(1.0, float("inf")))
    1.0
"""

from renyi.divergences import closed_forms as _closed_forms
from renyi.divergences import discrete as _discrete
from renyi.divergences import numerical as _numerical
from renyi.divergences.closed_forms import *  # noqa: F401,F403
from renyi.divergences.discrete import *  # noqa: F401,F403
from renyi.divergences.numerical import *  # noqa: F401,F403

__all__ = [
    "NORMALIZATION_TOL",
    "DivergenceEstimate",
    "renyi_divergence",
    "renyi_divergence_log",
    "renyi_divergence_continuous",
    "gaussian_divergence",
    "gaussian_divergence_unequal",
    "mvn_divergence",
    "laplace_divergence",
    "bernoulli_divergence",
    "randomized_response_divergence",
    "kary_randomized_response_divergence",
    "pure_dp_curve",
    "discrete_laplace_divergence",
    "discrete_gaussian_divergence",
    "discrete_gaussian_normalizer",
    "exponential_family_divergence",
    "poisson_divergence",
    "exponential_divergence",
]

# ``renyi.divergences`` was one module: its private helpers stay reachable under the old name.
for _part in (_discrete, _numerical, _closed_forms):
    globals().update({k: v for k, v in vars(_part).items() if not k.startswith("__")})
del _part
