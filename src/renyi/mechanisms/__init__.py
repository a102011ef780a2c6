"""Mechanisms: one module per family."""

from renyi.mechanisms.base import Mechanism
from renyi.mechanisms.discrete import DiscreteGaussian, DiscreteLaplace
from renyi.mechanisms.exponential import ExponentialMechanism
from renyi.mechanisms.gaussian import Gaussian
from renyi.mechanisms.laplace import Laplace
from renyi.mechanisms.ptr import ProposeTestRelease, ptr_mode
from renyi.mechanisms.randomized_response import RandomizedResponse

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
