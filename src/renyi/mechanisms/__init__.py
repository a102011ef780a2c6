"""Mechanisms: one module per family."""

from .base import Mechanism
from .gaussian import Gaussian

__all__ = ["Mechanism", "Gaussian"]
