"""`renyi audit`: a thin command over renyi.audit, and the Opacus example at a tiny size."""

from __future__ import annotations

import importlib.util
import json
import runpy
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import renyi
from renyi.audit import audit
from renyi.cli import app

runner = CliRunner()
ROOT = Path(__file__).resolve().parent.parent


def run(*args: str):
    return runner.invoke(app, list(args), catch_exceptions=False)


@pytest.fixture()
def scores_csv(tmp_path: Path) -> tuple[Path, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    inc = rng.random(4000) < 0.5
    s = rng.standard_normal(4000) + 2.0 * inc
    p = tmp_path / "scores.csv"
    p.write_text("score,included\n" + "".join(f"{float(x)!r},{int(b)}\n" for x, b in zip(s, inc)), encoding="utf-8")
    return p, s, inc


@pytest.fixture()
def event_toml(tmp_path: Path) -> Path:
    p = tmp_path / "run.toml"
    p.write_text('[privacy]\ndelta = 1e-5\n\n[[mechanism]]\nname = "g"\ntype = "gaussian"\nsigma = 0.5\n',
                 encoding="utf-8")
    return p


def test_json_is_the_library(scores_csv: tuple[Path, np.ndarray, np.ndarray], event_toml: Path) -> None:
    """--json prints exactly what renyi.audit.audit computes, beside the event's certified ε."""
    p, s, inc = scores_csv
    res = run("audit", str(p), "--delta", "1e-5", "--event", str(event_toml), "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    lib = audit(s, inc, delta=1e-5, event=event_toml)
    assert [r["epsilon"] for r in out["results"]] == [r.epsilon for r in lib.results]
    assert out["certified"] == renyi.Gaussian(0.5).epsilon(1e-5)
    assert out["contradictions"] == []
    assert out["results"][2]["mu"] == lib.result("gdp").mu


def test_table_for_people(scores_csv: tuple[Path, np.ndarray, np.ndarray], event_toml: Path) -> None:
    p, _, _ = scores_csv
    res = run("audit", str(p), "--delta", "1e-5", "--event", str(event_toml))
    assert res.exit_code == 0, res.output
    for word in ("audit, threshold", "audit, one_run", "audit, gdp", "renyi certified", "renyi lower",
                 "consistent"):
        assert word in res.stdout


def test_one_method_without_event(scores_csv: tuple[Path, np.ndarray, np.ndarray]) -> None:
    p, s, inc = scores_csv
    res = run("audit", str(p), "--delta", "1e-5", "--method", "one_run", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert [r["method"] for r in out["results"]] == ["one_run"] and out["certified"] is None


def test_contradiction_is_reported(tmp_path: Path, scores_csv: tuple[Path, np.ndarray, np.ndarray]) -> None:
    """Scores of σ = 0.5 declared as σ = 8: the command says the run is not the declared event."""
    p, _, _ = scores_csv
    ev = tmp_path / "claim.toml"
    ev.write_text('[privacy]\ndelta = 1e-5\n\n[[mechanism]]\nname = "g"\ntype = "gaussian"\nsigma = 8\n',
                  encoding="utf-8")
    res = run("audit", str(p), "--delta", "1e-5", "--event", str(ev))
    assert res.exit_code == 0, res.output
    assert "exceeds the certified" in res.stdout


@pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None, reason="needs matplotlib")
def test_plot(tmp_path: Path, scores_csv: tuple[Path, np.ndarray, np.ndarray], event_toml: Path) -> None:
    p, _, _ = scores_csv
    out = tmp_path / "audit.png"
    res = run("audit", str(p), "--delta", "1e-5", "--event", str(event_toml), "--plot", str(out))
    assert res.exit_code == 0, res.output
    assert out.stat().st_size > 10_000


@pytest.mark.parametrize(("rows", "args", "word"), [
    ("score,included\nnan,1\n0.2,0\n", (), "scores must be finite numbers; got nan at position 0"),
    ("score,included\n0.1,0\n0.2,0\n", (), "at least one included and one excluded canary"),
    ("score,included\n0.1,1\n0.2,0\n", ("--confidence", "1.5"), "confidence must be in (0, 1); got 1.5"),
    ("score,included\n0.1,1\n0.2,0\n", ("--delta", "0"), "delta must be in (0, 1)"),
    ("score,included\n0.1,2\n", (), "line 2: included must be 1/0"),
    ("x,y\n0.1,1\n", (), "no column 'score'"),
])
def test_bad_input_is_one_line_exit_2(tmp_path: Path, rows: str, args: tuple[str, ...], word: str) -> None:
    p = tmp_path / "bad.csv"
    p.write_text(rows, encoding="utf-8")
    argv = ["audit", str(p), "--delta", "1e-5", *args] if "--delta" not in args else ["audit", str(p), *args]
    res = run(*argv)
    assert res.exit_code == 2
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and word in lines[0] and "Traceback" not in res.stderr


def test_missing_file_exit_2(tmp_path: Path) -> None:
    res = run("audit", str(tmp_path / "none.csv"), "--delta", "1e-5")
    assert res.exit_code == 2 and "cannot read scores" in res.stderr


@pytest.mark.skipif(importlib.util.find_spec("opacus") is None or importlib.util.find_spec("torch") is None,
                    reason="the Opacus example needs torch and opacus")
def test_opacus_example_tiny(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """examples/audit_opacus.py --tiny trains, audits, and writes files `renyi audit` reads.

    One training run with many canaries: the example reports the one-run audit only (threshold
    and gdp assume one run per canary), in its report and in what it prints.
    """
    path = ROOT / "examples" / "audit_opacus.py"
    mod = runpy.run_path(str(path), run_name="not_main")
    report = mod["main"](["--tiny", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert [r.method for r in report.results] == ["one_run"] and report.design == "one_run"
    assert "audit one_run" in out and "gdp" not in out and "threshold" not in out and "μ" not in out
    assert report.certified is not None and report.contradictions() == ()
    for r in report.results:
        assert 0.0 <= r.epsilon
    res = run("audit", str(tmp_path / "scores.csv"), "--delta", "1e-5", "--design", "one_run", "--event",
              str(tmp_path / "run.toml"), "--json")
    assert res.exit_code == 0, res.output
    got = json.loads(res.stdout)
    assert got["certified"] == pytest.approx(report.certified)
    assert [r["method"] for r in got["results"]] == ["one_run"]
    assert got["results"][0]["epsilon"] == report.results[0].epsilon


def test_design_one_run_reports_only_the_one_run_audit(scores_csv: tuple[Path, np.ndarray, np.ndarray]) -> None:
    """--design one_run: the table has the one-run line only and says which design it needs."""
    p, _, _ = scores_csv
    res = run("audit", str(p), "--delta", "1e-5", "--design", "one_run")
    assert res.exit_code == 0, res.output
    assert "audit, one_run" in res.stdout and "audit, gdp" not in res.stdout
    assert "audit, threshold" not in res.stdout and "design one_run" in res.stdout
    res = run("audit", str(p), "--delta", "1e-5", "--design", "one_run", "--method", "threshold")
    assert res.exit_code == 2
    assert "method 'threshold' needs independent trials (one training run per canary)" in res.stderr


def test_undeclared_design_says_which_method_needs_what(scores_csv: tuple[Path, np.ndarray, np.ndarray]) -> None:
    """Without --design every method runs, each line names its design, and a note warns that
    threshold and gdp are not valid for one run with many canaries."""
    p, _, _ = scores_csv
    res = run("audit", str(p), "--delta", "1e-5")
    assert res.exit_code == 0, res.output
    text = " ".join(res.stdout.split())
    assert "one run per canary" in text and "a fair coin per canary" in text
    assert "only one_run is valid" in text
