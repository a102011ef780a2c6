"""Pipeline files: vector releases with a declared ℓ₂/ℓ₁ sensitivity, and disjoint cells."""

from __future__ import annotations

import re

import pytest

import renyi
from renyi.mechanisms import DiscreteGaussian, DiscreteLaplace, Gaussian, Laplace
from renyi.pipeline import PipelineError, parse_pipeline
from renyi.report import compute_report


def _pipe(**entry):
    return parse_pipeline({"privacy": {"delta": 1e-6, "budget": {"rho": 1.0}},
                           "mechanism": [{"name": "t", **entry}]})


def test_disjoint_cells_cost_one_cell():
    """3 000 disjoint cells with σ = 2 are one Gaussian release: ρ = 1/8, not 3 000/8."""
    e = _pipe(type="gaussian", sigma=2.0, cells=3000, disjoint=True).entries[0]
    assert (e.mechanism, e.count, e.cells, e.disjoint) == (Gaussian(2.0), 1, 3000, True)
    r = compute_report(_pipe(type="gaussian", sigma=2.0, cells=3000, disjoint=True))
    assert r.rho == pytest.approx(0.125)
    assert "3000 disjoint cells" in r.shares[0].mechanism
    separate = compute_report(_pipe(type="gaussian", sigma=2.0, count=3000))
    assert separate.rho == pytest.approx(3000 * 0.125)


@pytest.mark.parametrize("entry, mech", [
    ({"type": "gaussian", "sigma": 3.0, "l2_sensitivity": 2.0}, Gaussian(3.0, 2.0)),
    ({"type": "laplace", "scale": 3.0, "l1_sensitivity": 4.0}, Laplace(3.0, 4.0)),
    ({"type": "discrete_gaussian", "sigma": 3, "l2_sensitivity": 1.5}, DiscreteGaussian(3, 1.5, vector=True)),
    ({"type": "discrete_laplace", "scale": 3, "l1_sensitivity": 2}, DiscreteLaplace(3, 2, vector=True)),
])
def test_declared_vector_sensitivity(entry, mech):
    """A declared ℓ₂ (Gaussian) or ℓ₁ (Laplace) sensitivity becomes the mechanism's sensitivity."""
    e = _pipe(cells=50, **entry).entries[0]
    assert e.mechanism == mech and e.count == 1 and e.cells == 50


def test_declared_sensitivity_gives_the_vector_rho():
    """ℓ₂ = √k for k cells each changed by one: ρ = k/(2σ²)."""
    r = compute_report(_pipe(type="gaussian", sigma=2.0, cells=8, l2_sensitivity=8 ** 0.5))
    assert r.rho == pytest.approx(8 / 8)
    assert r.epsilon == renyi.Gaussian(2.0, 8 ** 0.5).epsilon(1e-6)


@pytest.mark.parametrize("entry, words", [
    ({"type": "gaussian", "sigma": 1.0, "cells": 10}, "needs disjoint = true"),
    ({"type": "gaussian", "sigma": 1.0, "l1_sensitivity": 2.0}, "takes l2_sensitivity"),
    ({"type": "laplace", "scale": 1.0, "l2_sensitivity": 2.0}, "takes l1_sensitivity"),
    ({"type": "gaussian", "sigma": 1.0, "sensitivity": 1.0, "l2_sensitivity": 2.0}, "not both"),
    ({"type": "gaussian", "sigma": 1.0, "cells": 3, "disjoint": True, "l2_sensitivity": 2.0}, "per-cell"),
    ({"type": "pure_dp", "epsilon": 1.0, "l1_sensitivity": 2.0}, "only for noise-adding types"),
    ({"type": "gaussian", "sigma": 1.0, "cells": 0, "disjoint": True}, "cells must be an integer in [1, inf)"),
    ({"type": "gaussian", "sigma": 1.0, "disjoint": "yes"}, "disjoint must be true or false"),
])
def test_bad_vector_entries(entry, words):
    """Each inconsistent vector declaration is one clear PipelineError."""
    with pytest.raises(PipelineError, match=re.escape(words)):
        _pipe(**entry)
