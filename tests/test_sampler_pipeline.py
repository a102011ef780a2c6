"""Samplers in pipeline files, reports and the CLI: the report names the sampler and theorem."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from renyi import Gaussian, RandomAllocation
from renyi.cli import app
from renyi.pipeline import PipelineError, parse_pipeline

runner = CliRunner()


def _pipe(sampling: dict, count: int = 3) -> object:
    return parse_pipeline({"privacy": {"delta": 1e-5},
                           "mechanism": [{"name": "sgd", "type": "gaussian", "sigma": 1.0, "count": count,
                                          "sampling": sampling}]})


def test_allocation_in_pipeline_names_sampler_and_theorem() -> None:
    p = _pipe({"scheme": "allocation", "steps": 100})
    e = p.entries[0]
    assert e.mechanism == RandomAllocation(Gaussian(1.0), 100)
    assert "random allocation, k = 1 of t = 100" in e.assumption and "Feldman & Shenfeld" in e.assumption


def test_allocation_rate_form_and_bad_rate() -> None:
    assert _pipe({"scheme": "allocation", "rate": 0.01}).entries[0].mechanism.steps == 100
    with pytest.raises(PipelineError, match="whole number of steps"):
        _pipe({"scheme": "allocation", "rate": 0.0123})
    with pytest.raises(PipelineError, match=r"k must be in \[1, steps\]"):
        _pipe({"scheme": "allocation", "steps": 3, "k": 4})


def test_truncated_and_shuffle_in_pipeline() -> None:
    t = _pipe({"scheme": "truncated_poisson", "rate": 0.01, "max_batch": 200, "dataset_size": 10_000}).entries[0]
    assert "truncated Poisson" in t.assumption
    s = _pipe({"scheme": "shuffle", "steps": 50}).entries[0]
    assert "no amplification" in s.assumption
    with pytest.raises(PipelineError, match="max_batch must be in"):
        _pipe({"scheme": "truncated_poisson", "rate": 0.01, "max_batch": 50, "dataset_size": 10_000})


def test_cli_epsilon_allocation() -> None:
    """renyi epsilon gaussian --sampling allocation: epochs from steps, the allocation ε."""
    res = runner.invoke(app, ["epsilon", "gaussian", "--sigma", "1.0", "--sampling", "allocation",
                              "--rate", str(1 / 469), "--steps", str(4690), "--json"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    d = json.loads(res.stdout)
    expected = RandomAllocation(Gaussian(1.0), 469).compose(10).epsilon(1e-5)
    assert d["epsilon"] == pytest.approx(expected, rel=1e-6)
    assert d["epsilon"] >= expected


def test_cli_allocation_bad_input_exit_2() -> None:
    res = runner.invoke(app, ["epsilon", "gaussian", "--sigma", "1.0", "--sampling", "allocation",
                              "--rate", "0.0123", "--steps", "100"])
    assert res.exit_code == 2
    assert "whole number of steps" in res.output
