"""Inputs that used to hang, or good inputs that used to be refused (issue 26)."""

from __future__ import annotations

import math

import pytest

import renyi
from renyi.accounting.accuracy import half_width
from renyi.pipeline import parse_pipeline
from renyi.report import compute_report


@pytest.mark.parametrize("delta", [5e-324, 1e-320, 2.2250738585072014e-308])
def test_the_smallest_positive_deltas_are_in_the_domain(delta):
    """δ = 5e-324 is in (0, 1): the report answers (it was refused as "got 0.0" because one
    route split δ over the runs and the share underflowed); routes that cannot split it say so."""
    p = parse_pipeline({"privacy": {"delta": delta},
                        "mechanism": [{"name": "g", "type": "gaussian", "sigma": 1.0, "count": 10,
                                       "sampling": {"scheme": "poisson", "rate": 0.1}}]})
    with pytest.warns(renyi.RenyiNumericalWarning) if delta < 1e-310 else _nothing():
        r = compute_report(p)
    assert math.isfinite(r.epsilon) and r.epsilon > 0
    assert renyi.Gaussian(1.0).compose(10).epsilon(delta) > 0


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@pytest.mark.parametrize("noise", ["DiscreteGaussian", "DiscreteLaplace"])
def test_half_width_of_enormous_discrete_noise_returns(noise):
    """σ ≈ 10¹⁵⁰ (a release planned with ρ = 1e-300) hung: the integer refinement stepped by 1
    where floats cannot tell k from k ± 1. The half-width is still an upper bound."""
    m = renyi.DiscreteGaussian(1e150) if noise == "DiscreteGaussian" else renyi.DiscreteLaplace(1e150)
    lam = half_width(m)
    # the continuous quantiles: 2Φ(−z) = 0.05 and e^(−z) = 0.05
    z = 1.959963984540054 if noise == "DiscreteGaussian" else math.log(20.0)
    assert math.isfinite(lam) and lam >= 1e150 * z * (1 - 1e-12)


def test_deeply_nested_json_is_a_user_error(tmp_path):
    """A JSON file nested 10⁵ deep raised RecursionError (a traceback) in report and release."""
    from typer.testing import CliRunner

    from renyi.cli import app

    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    for args in (["report", str(deep)], ["release", str(deep), "--dry-run"]):
        r = CliRunner().invoke(app, args)
        assert r.exit_code == 2 and "nested too deeply" in r.output, (args, r.output)
