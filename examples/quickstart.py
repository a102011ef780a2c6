"""A short tour: 1000 Gaussian releases, a Laplace count, and what they cost."""

import renyi
from renyi.mechanisms import Gaussian

g = Gaussian(sigma=20.0)
total = renyi.compose((g, 1000))
print("1000 x Gaussian(sigma=20):", total)
print("  exact epsilon at delta=1e-5:", round(total.epsilon(1e-5), 4))
print("  via zCDP                   :", round(total.to_zcdp().epsilon(1e-5), 4))
print("  via RDP curve              :", round(total.to_rdp().epsilon(1e-5), 4))
