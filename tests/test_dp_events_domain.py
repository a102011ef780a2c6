"""from_dp_event refuses events it would otherwise misread: fractional counts and negative noise.

The events here are stand-ins with dp-accounting's class and attribute names (renyi reads
events by name), so these checks run without dp-accounting installed; the real classes are
checked against dp-accounting's own accountants in test_integration_dp_accounting.py.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pytest

from renyi import Gaussian, PoissonSubsampled
from renyi.dp_events import from_dp_event
from renyi.errors import DomainError


@dataclass
class GaussianDpEvent:
    noise_multiplier: Any


@dataclass
class LaplaceDpEvent:
    noise_multiplier: Any


@dataclass
class DiscreteLaplaceDpEvent:
    noise_parameter: Any
    sensitivity: Any = 1


@dataclass
class RandomizedResponseDpEvent:
    noise_parameter: Any
    num_buckets: Any


@dataclass
class SelfComposedDpEvent:
    event: Any
    count: Any


@dataclass
class ComposedDpEvent:
    events: Any


@dataclass
class PoissonSampledDpEvent:
    sampling_probability: Any
    event: Any


@dataclass
class SampledWithoutReplacementDpEvent:
    source_dataset_size: Any
    sample_size: Any
    event: Any


G = GaussianDpEvent(1.0)


@pytest.mark.parametrize("event, attr", [
    (SelfComposedDpEvent(G, 2.9), "count"),
    (SelfComposedDpEvent(G, 2.5), "count"),
    (SelfComposedDpEvent(G, float("nan")), "count"),
    (SelfComposedDpEvent(G, -1), "count"),
    (PoissonSampledDpEvent(0.01, SelfComposedDpEvent(G, 0.5)), "count"),  # was read as 0 steps: ε = 0
    (PoissonSampledDpEvent(0.01, SelfComposedDpEvent(G, 1.5)), "count"),
    (SampledWithoutReplacementDpEvent(10.5, 2, G), "source_dataset_size"),
    (SampledWithoutReplacementDpEvent(10, 2.5, G), "sample_size"),
    (RandomizedResponseDpEvent(0.5, 2.7), "num_buckets"),
    (DiscreteLaplaceDpEvent(1.0, 1.5), "sensitivity"),
])
def test_fractional_counts_are_refused(event, attr):
    """int() truncated a count downward: SelfComposedDpEvent(GaussianDpEvent(1.0), 2.9) was
    billed as 2 steps, fewer than ran."""
    with pytest.raises(DomainError, match=attr) as info:
        from_dp_event(event)
    assert info.value.name == attr or info.value.name.endswith(attr)


def test_whole_float_counts_are_their_integer():
    assert from_dp_event(SelfComposedDpEvent(G, 3.0)).epsilon(1e-5) == from_dp_event(
        SelfComposedDpEvent(G, 3)).epsilon(1e-5)


@pytest.mark.parametrize("event", [
    PoissonSampledDpEvent(0.01, ComposedDpEvent([GaussianDpEvent(-1.0)] * 2)),  # was ε = 0.816
    PoissonSampledDpEvent(0.01, SelfComposedDpEvent(GaussianDpEvent(-1.0), 2)),
    PoissonSampledDpEvent(0.01, ComposedDpEvent([GaussianDpEvent(1.0), GaussianDpEvent(-2.0)])),
    PoissonSampledDpEvent(0.01, GaussianDpEvent(-1.0)),
    PoissonSampledDpEvent(0.01, ComposedDpEvent([GaussianDpEvent(float("nan"))] * 2)),
    PoissonSampledDpEvent(0.01, LaplaceDpEvent(-1.0)),
    PoissonSampledDpEvent(0.01, DiscreteLaplaceDpEvent(-0.5)),
    SampledWithoutReplacementDpEvent(100, 10, ComposedDpEvent([GaussianDpEvent(-1.0)] * 2)),
    GaussianDpEvent(-1.0),
    ComposedDpEvent([GaussianDpEvent(-1.0)] * 2),
])
def test_negative_noise_is_refused_everywhere(event):
    with pytest.raises(DomainError, match="must be in \\[0, inf\\]; got"):
        from_dp_event(event)


def test_valid_sampled_compositions_still_compose():
    """Two Gaussians of σ = 2 on one sample are one of σ = √2."""
    got = from_dp_event(PoissonSampledDpEvent(0.01, ComposedDpEvent([GaussianDpEvent(2.0)] * 2)))
    ref = PoissonSubsampled(Gaussian(math.sqrt(2.0)), 0.01)
    assert got.epsilon(1e-5) == pytest.approx(ref.epsilon(1e-5), rel=1e-9)
    # zero noise is non-private (ε = ∞), infinite noise is no output (ε = 0)
    assert from_dp_event(PoissonSampledDpEvent(0.01, GaussianDpEvent(0.0))).epsilon(1e-5) == math.inf
    assert from_dp_event(PoissonSampledDpEvent(0.01, GaussianDpEvent(math.inf))).epsilon(1e-5) == 0.0
