"""A short tour: 1000 Gaussian releases, a Laplace count, and what they cost."""

import math

import renyi
from renyi.mechanisms import Gaussian


def up(x: float) -> float:
    """Round up to 4 decimals: a printed ε must stay an upper bound."""
    return math.ceil(x * 1e4) / 1e4


g = Gaussian(sigma=20.0)
total = renyi.compose((g, 1000))
print("1000 x Gaussian(sigma=20):", total)
print("  exact epsilon at delta=1e-5:", up(total.epsilon(1e-5)))
print("  via zCDP                   :", up(total.to_zcdp().epsilon(1e-5)))
print("  via RDP curve              :", up(total.to_rdp().epsilon(1e-5)))
