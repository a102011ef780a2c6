"""Mechanisms: one module per family."""

from .base import Mechanism
from .discrete import DiscreteGaussian, DiscreteLaplace
from .exponential import ExponentialMechanism
from .gaussian import Gaussian
from .laplace import Laplace
from .ptr import ProposeTestRelease, ptr_mode
from .randomized_response import RandomizedResponse

__all__ = [
    "Mechanism",
    "Gaussian",
    "Laplace",
    "RandomizedResponse",
    "DiscreteGaussian",
    "DiscreteLaplace",
    "ExponentialMechanism",
    "ProposeTestRelease",
    "ptr_mode",
]
