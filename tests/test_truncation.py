"""Truncated Poisson sampling and sampling without replacement under add/remove."""

from __future__ import annotations

import pytest
from scipy.stats import binom

from renyi import Gaussian, Laplace, PoissonSubsampled, SubsampledWithoutReplacement
from renyi.errors import DomainError
from renyi.truncation import TruncatedPoisson


def test_truncation_delta_is_binomial_tail() -> None:
    """δ_trunc = P[Bin(n, q) ≥ cap]."""
    m = TruncatedPoisson(Gaussian(1.0), rate=0.01, max_batch=130, dataset_size=10_000)
    assert m.truncation_delta == pytest.approx(binom.sf(129, 10_000, 0.01), rel=1e-12)
    assert m.truncation_delta >= binom.sf(129, 10_000, 0.01)


def test_truncated_costs_at_least_poisson() -> None:
    """The capped sampler is never reported more private than plain Poisson."""
    p = PoissonSubsampled(Gaussian(1.0), 0.01).compose(1000)
    t = TruncatedPoisson(Gaussian(1.0), 0.01, 200, 10_000).compose(1000)
    # on the same route (RDP; plain Poisson's default is the tighter PLD route)
    assert t.epsilon(1e-5) >= p.epsilon(1e-5, method="rdp") >= p.epsilon(1e-5)
    # a generous cap costs almost nothing
    assert t.epsilon(1e-5) == pytest.approx(p.epsilon(1e-5, method="rdp"), rel=1e-3)


def test_tight_cap_is_expensive() -> None:
    """A cap near the expected batch size makes δ_trunc large (ε infinite at small δ)."""
    t = TruncatedPoisson(Gaussian(1.0), 0.01, 100, 10_000).compose(100)
    assert t.epsilon(1e-5) == float("inf")


def test_rate_one_without_truncation_is_the_mechanism() -> None:
    """rate 1 and a cap above n: the base mechanism's exact guarantee."""
    g = Gaussian(1.0)
    assert TruncatedPoisson(g, 1.0, 11, 10).epsilon(1e-5) == g.epsilon(1e-5)


def test_poisson_rate_one_is_the_mechanism() -> None:
    g = Gaussian(1.5)
    assert PoissonSubsampled(g, 1.0).epsilon(1e-5) == g.epsilon(1e-5)


def test_cap_below_expected_batch() -> None:
    with pytest.raises(DomainError, match=r"max_batch must be in \[100, inf\).*expected batch size.*got 99"):
        TruncatedPoisson(Gaussian(1.0), 0.01, 99, 10_000)


def test_bad_sizes() -> None:
    with pytest.raises(DomainError, match="dataset_size"):
        TruncatedPoisson(Gaussian(1.0), 0.01, 10, 0)
    with pytest.raises(DomainError, match="rate"):
        TruncatedPoisson(Gaussian(1.0), 1.5, 10, 10)
    with pytest.raises(DomainError, match="add_remove"):
        TruncatedPoisson(Gaussian(1.0, neighbouring="replace_one"), 0.1, 10, 10)


def test_without_replacement_add_remove_gaussian() -> None:
    """Add/remove, fixed batch: the Poisson-type mixture with the replace-one shift 2Δ."""
    m = SubsampledWithoutReplacement(Gaussian(2.0), 0.01, neighbouring="add_remove")
    ref = PoissonSubsampled(Gaussian(1.0), 0.01)  # σ/Δ_replace = 2/2
    assert float(m.rdp(8.0)) == pytest.approx(float(ref.rdp(8.0)), rel=1e-12)
    assert "add/remove" in m.sampling


def test_without_replacement_both_relations_are_named_and_differ() -> None:
    """Both neighbouring relations are available; replace-one keeps [WBK19]."""
    g = Gaussian(1.0, sensitivity=2.0, neighbouring="replace_one")
    ro = SubsampledWithoutReplacement(g, 0.05)
    ar = SubsampledWithoutReplacement(Laplace(1.0), 0.05, neighbouring="add_remove")
    assert ro.neighbouring == "replace_one" and ar.neighbouring == "add_remove"
    assert float(ar.rdp(4.0)) <= float(Laplace(1.0).guarantee_under("replace_one").rdp(4.0))


def test_without_replacement_bad_relation() -> None:
    with pytest.raises(DomainError, match="neighbouring must be one of"):
        SubsampledWithoutReplacement(Gaussian(1.0), 0.1, neighbouring="swap")
