"""The CLI in training words: --batch-size, --dataset-size, --epochs, --neighbouring; pipeline epochs."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from renyi import dpsgd
from renyi.cli import app
from renyi.pipeline import PipelineError, parse_pipeline

runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, list(args), catch_exceptions=False)


def test_epsilon_from_batch_size_and_epochs():
    r = run("epsilon", "gaussian", "--sigma", "1.1", "--batch-size", "256", "--dataset-size", "60000",
            "--epochs", "10", "--method", "rdp", "--json")  # the RDP route, as dpsgd.epsilon
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    ref = dpsgd.epsilon(1.1, batch_size=256, dataset_size=60_000, epochs=10, delta=1e-5, method="rdp")
    assert d["epsilon"] == pytest.approx(float(ref), rel=1e-12)


def test_delta_from_batch_size_and_epochs():
    r = run("delta", "gaussian", "--sigma", "1.1", "--batch-size", "256", "--dataset-size", "60000",
            "--epochs", "10", "--eps", "1.0", "--method", "rdp", "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    ref = dpsgd.delta(1.1, batch_size=256, dataset_size=60_000, epochs=10, epsilon=1.0, method="rdp")
    assert d["delta"] == pytest.approx(float(ref), rel=1e-3)


def test_calibrate_sigma_steps_rate():
    r = run("calibrate", "gaussian", "--batch-size", "256", "--dataset-size", "60000", "--epochs", "10",
            "--epsilon", "1", "--delta", "1e-5", "--method", "rdp", "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    ref = dpsgd.noise_multiplier(1.0, 1e-5, batch_size=256, dataset_size=60_000, epochs=10, method="rdp")
    assert d["value"] == pytest.approx(float(ref), rel=1e-9) and d["value"] >= float(ref) * (1 - 1e-12)
    assert d["achieved"]["epsilon"] <= 1.0 and d["steps"] == 2344
    r = run("calibrate", "gaussian", "--solve", "steps", "--sigma", "1.1", "--batch-size", "256",
            "--dataset-size", "60000", "--epsilon", "1", "--delta", "1e-5", "--method", "rdp", "--json")
    assert r.exit_code == 0, r.output
    ref_t = dpsgd.steps(1.0, 1e-5, 1.1, batch_size=256, dataset_size=60_000, method="rdp")
    assert json.loads(r.output)["value"] == int(ref_t)


@pytest.mark.parametrize(
    "args",
    [
        ["--batch-size", "256", "--epochs", "10"],
        ["--batch-size", "600", "--dataset-size", "500", "--epochs", "10"],
        ["--rate", "0.01", "--steps", "200", "--epochs", "1"],
        ["--rate", "1.5", "--steps", "10"],
        ["--epochs", "3"],
        ["--rate", "0.01", "--batch-size", "10", "--dataset-size", "1000", "--steps", "5"],
    ],
)
def test_bad_schedules_are_one_line_exit_2(args):
    r = run("epsilon", "gaussian", "--sigma", "1.1", *args)
    assert r.exit_code == 2
    assert "Traceback" not in r.output and len(r.output.strip().splitlines()) == 1


def test_neighbouring_option():
    r = run("epsilon", "gaussian", "--sigma", "2", "--neighbouring", "replace-one", "--sampling",
            "without-replacement", "--rate", "0.01", "--steps", "10", "--json")
    assert r.exit_code == 0, r.output
    r = run("epsilon", "gaussian", "--sigma", "2", "--neighbouring", "replace-one", "--rate", "0.01",
            "--steps", "10")
    assert r.exit_code == 2 and "add_remove" in r.output  # Poisson sampling needs add/remove


def test_pipeline_epochs_key():
    base = {"name": "sgd", "type": "gaussian", "sigma": 1.1,
            "sampling": {"scheme": "poisson", "batch_size": 256, "dataset_size": 60_000}}
    p = parse_pipeline({"privacy": {"delta": 1e-5}, "mechanism": [{**base, "epochs": 3}]})
    assert p.entries[0].count == 704
    p = parse_pipeline({"privacy": {"delta": 1e-5}, "mechanism": [{**base, "epochs": 3, "count": 704}]})
    assert p.entries[0].count == 704
    with pytest.raises(PipelineError, match="do not add up"):
        parse_pipeline({"privacy": {"delta": 1e-5}, "mechanism": [{**base, "epochs": 3, "count": 700}]})
    with pytest.raises(PipelineError, match="epochs needs sampling"):
        parse_pipeline({"privacy": {"delta": 1e-5}, "mechanism": [{"name": "g", "type": "gaussian", "sigma": 1.0,
                                                                     "epochs": 3}]})
