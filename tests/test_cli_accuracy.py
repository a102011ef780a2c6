"""`renyi accuracy` and `renyi limits`: thin commands over renyi.accuracy and renyi.limits."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from renyi import Gaussian, ZCDP
from renyi.accuracy import half_width, noise_for
from renyi.cli import app
from renyi.limits import gaussian_histogram_n, histogram_min_n, marginals_min_n

runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, list(args), catch_exceptions=False)


def test_accuracy_forward_json_is_the_library():
    """--sigma: the half-width printed is the library's, with ρ and ε at δ."""
    res = run("accuracy", "gaussian", "--sigma", "100", "--cells", "3000", "--beta", "0.05", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["half_width"] == half_width(Gaussian(100.0), cells=3000, beta=0.05)
    assert out["privacy"]["rho"] == pytest.approx(1 / 20000)
    assert out["privacy"]["epsilon"] == Gaussian(100.0).epsilon(1e-6)
    assert out["failure_probability"] <= 0.05


def test_accuracy_inverse_json_is_the_library():
    """--half-width: the σ printed is noise_for's, and its interval is within the request."""
    res = run("accuracy", "gaussian", "--half-width", "300", "--cells", "3000", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["sigma"] == noise_for(300.0, cells=3000, beta=0.05)
    assert out["half_width"] <= 300.0
    assert out["privacy"]["rho"] == pytest.approx(1 / (2 * out["sigma"] ** 2))


def test_accuracy_human_output():
    res = run("accuracy", "gaussian", "--half-width", "300", "--cells", "3000")
    assert res.exit_code == 0
    assert "σ ≤ 69.7711" in res.stdout and "ρ =" in res.stdout and "at δ = 1e-06" in res.stdout


def test_accuracy_discrete_laplace_with_coverage():
    res = run("accuracy", "discrete-laplace", "--scale", "4", "--coverage", "0.9", "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["half_width"] == 9.0


@pytest.mark.parametrize("args,word", [
    (("accuracy", "gaussian", "--sigma", "-1"), "sigma"),
    (("accuracy", "gaussian"), "--half-width"),
    (("accuracy", "gaussian", "--sigma", "1", "--half-width", "2"), "--half-width"),
    (("accuracy", "gaussian", "--scale", "1"), "--sigma"),
    (("accuracy", "gaussian", "--sigma", "1", "--beta", "1.5"), "beta"),
    (("accuracy", "gaussian", "--sigma", "1", "--beta", "0.1", "--coverage", "0.9"), "not both"),
    (("accuracy", "gaussian", "--sigma", "1", "--cells", "0"), "cells"),
    (("limits", "histogram", "--keys", "1", "--rho", "0.5"), "keys"),
    (("limits", "histogram", "--keys", "100", "--rho", "0"), "rho"),
    (("limits", "histogram", "--keys", "100", "--rho", "0.5", "--beta", "0"), "beta"),
])
def test_bad_input_is_one_line_exit_2(args, word):
    """Bad input: one line on stderr naming the problem, exit code 2."""
    res = run(*args)
    assert res.exit_code == 2
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and word in lines[0] and "Traceback" not in res.stderr


def test_limits_histogram_json_is_the_library():
    res = run("limits", "histogram", "--keys", "1e6", "--rho", "0.5", "--beta", "0.05", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["n_min"] == histogram_min_n(1e6, 0.5, 0.05) == 6
    assert out["n_gaussian"] == gaussian_histogram_n(1e6, 0.5, 0.05)
    assert out["n_min"] <= out["n_gaussian"]
    assert out["epsilon"] == ZCDP(0.5).epsilon(1e-6)


def test_limits_histogram_human_output():
    res = run("limits", "histogram", "--keys", "1e6", "--rho", "0.5", "--beta", "0.05")
    assert res.exit_code == 0
    assert "no zCDP algorithm below" in res.stdout and "Gaussian" in res.stdout


def test_limits_marginals_and_information():
    res = run("limits", "marginals", "--d", "100", "--rho", "0.5", "--json")
    assert json.loads(res.stdout)["n_min"] == marginals_min_n(100, 0.5, 0.05)
    res = run("limits", "information", "--n", "10", "--rho", "0.5", "--block", "1", "--json")
    assert json.loads(res.stdout)["mutual_information_nats"] == pytest.approx(5.0)


def test_allocate_json_is_the_library():
    from renyi.accuracy import Query, allocate

    res = run("allocate", "--rho", "1", "--loss", "max-relative", "--query", "counts:cells=3000,magnitude=500",
              "--query", "sums:sensitivity=100,cells=3000,magnitude=2e5", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    lib = allocate(ZCDP(1.0), [Query("counts", cells=3000, magnitude=500.0),
                               Query("sums", sensitivity=100.0, cells=3000, magnitude=2e5)], loss="max_relative")
    assert out == json.loads(json.dumps(lib.to_dict()))


def test_allocate_human_output_and_errors():
    res = run("allocate", "--epsilon", "1", "--loss", "variance", "--query", "a", "--query", "b:sensitivity=2")
    assert res.exit_code == 0 and "laplace noise" in res.stdout and "loss =" in res.stdout
    for args, word in [(("--rho", "1", "--query", "x:foo=1"), "key=value"),
                       (("--rho", "1", "--epsilon", "1", "--query", "x"), "exactly one"),
                       (("--rho", "0", "--query", "x"), "rho")]:
        res = run("allocate", *args)
        assert res.exit_code == 2 and word in res.stderr
