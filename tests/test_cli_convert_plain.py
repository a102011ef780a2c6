"""`renyi convert approx ... --to zcdp`: the plain ρ a target allows first, then δ-approximate zCDP."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from renyi.cli import app
from renyi.conversions import zcdp_rho_for, zcdp_to_approx_dp


def test_plain_rho_first_then_approximate():
    """The plain-zCDP ρ (≈ 0.0132 for (1, 1e-10)) is printed first, rounded down, each labelled."""
    r = CliRunner().invoke(app, ["convert", "approx", "--epsilon", "1", "--delta", "1e-10", "--to", "zcdp"])
    assert r.exit_code == 0, r.output
    lines = [ln for ln in r.output.splitlines() if "zCDP:" in ln]
    assert lines[0].startswith("plain zCDP:") and "ρ ≤ 0.01324 " in lines[0]
    assert lines[1].startswith("δ-approximate zCDP:") and "δ = 1e-10" in lines[1]
    j = json.loads(CliRunner().invoke(app, ["convert", "approx", "--epsilon", "1", "--delta", "1e-10", "--to",
                                            "zcdp", "--json"]).output)
    assert j["plain_rho"] == zcdp_rho_for(1.0, 1e-10)
    assert zcdp_to_approx_dp(j["plain_rho"], 1e-10).value <= 1.0  # the plain ρ really implies the target
