"""The renyi command: the installed executable (subprocess) and in-process (CliRunner)."""

from __future__ import annotations

import importlib.util
import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import renyi
from renyi import conversions as conv
from renyi.cli import app
from renyi.pipeline import load_pipeline
from renyi.report import compute_report

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
RENYI = shutil.which("renyi")
needs_exe = pytest.mark.skipif(RENYI is None, reason="the renyi console script is not installed")
HAS_SUBSAMPLING = importlib.util.find_spec("renyi.subsampling") is not None
HAS_ACCOUNTANT = importlib.util.find_spec("renyi.accountant") is not None
HAS_CALIBRATION = importlib.util.find_spec("renyi.calibration") is not None

runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, list(args), catch_exceptions=False)


def exe(*args: str, timeout: float = 120.0) -> subprocess.CompletedProcess:
    return subprocess.run([RENYI, *args], capture_output=True, text=True, timeout=timeout)


def _one_error_line(stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


# ----- the installed executable --------------------------------------------------------
@needs_exe
def test_exe_help_lists_every_command():
    """`renyi --help` exits 0 and lists every command."""
    out = exe("--help")
    assert out.returncode == 0
    for cmd in ("report", "epsilon", "delta", "calibrate", "convert", "plot", "ledger"):
        assert cmd in out.stdout


@needs_exe
def test_exe_report_json_equals_library():
    """`renyi report examples/census.toml --json` prints the library's numbers."""
    out = exe("report", str(EXAMPLES / "census.toml"), "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    p = load_pipeline(EXAMPLES / "census.toml")
    assert data["epsilon"] == renyi.compose(*p.items()).epsilon(p.delta)
    assert data["budget"]["holds"] is True
    assert [m["name"] for m in data["mechanisms"]] == ["county totals", "age × sex tables"]


@needs_exe
def test_exe_bad_pipeline_is_one_line_exit_2(tmp_path):
    """A bad pipeline file: one line on stderr, exit code 2, no traceback."""
    f = tmp_path / "bad.toml"
    f.write_text('[privacy]\ndelta = 1e-5\n[[mechanism]]\nname = "x"\ntype = "gaussian"\nsigma = -1\n')
    out = exe("report", str(f))
    assert out.returncode == 2
    assert _one_error_line(out.stderr).endswith("mechanism 'x': sigma must be in (0, inf); got -1")


def test_missing_file_exit_2(tmp_path):
    """A missing file says so (exit 2, one line)."""
    res = runner.invoke(app, ["report", str(tmp_path / "nope.toml")])
    assert res.exit_code == 2 and "no such file" in _one_error_line(res.stderr)


@needs_exe
def test_exe_help_does_not_import_heavy_modules():
    """`renyi --help` imports neither matplotlib nor the report machinery."""
    code = ("import sys; sys.argv = ['renyi', '--help']\nfrom renyi.cli import main\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "bad = [m for m in ('matplotlib', 'renyi.report', 'renyi.plots') if m in sys.modules]\n"
            "print('HEAVY', bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "HEAVY []" in out.stdout, out.stdout + out.stderr


def test_help_imports_no_numerical_stack():
    """`renyi --help` loads neither numpy, scipy nor matplotlib (start-up is measured in
    benchmarks/bench_cli_startup.py; this checks the structure that makes it fast)."""
    code = (
        "import sys\n"
        "from renyi.cli import main\n"
        "sys.argv = ['renyi', '--help']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = sorted(m for m in ('numpy', 'scipy', 'matplotlib') if m in sys.modules)\n"
        "sys.stderr.write('HEAVY=' + ','.join(heavy))\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert "HEAVY=" in res.stderr and res.stderr.strip().endswith("HEAVY="), res.stderr[-300:]


# ----- in process -----------------------------------------------------------------------
COMMANDS = [["report"], ["epsilon"], ["delta"], ["calibrate"], ["convert"], ["plot", "compositions"],
            ["plot", "rdp"], ["plot", "profile"], ["plot", "plrv"], ["ledger", "show"], ["ledger", "export"]]


@pytest.mark.parametrize("cmd", COMMANDS, ids=" ".join)
def test_every_command_has_help_with_examples(cmd):
    """Each command has help text with at least one example."""
    res = run(*cmd, "--help")
    assert res.exit_code == 0
    assert "Examples" in res.stdout and "renyi " + cmd[0] in res.stdout


def test_report_text_shows_routes_shares_and_budget():
    """The human report shows the best ε (rounded up), every definition, shares and budget."""
    res = run("report", str(EXAMPLES / "census.toml"))
    assert res.exit_code == 0
    r = compute_report(load_pipeline(EXAMPLES / "census.toml"))
    from renyi.cli._format import fmt_up

    assert f"ε ≤ {fmt_up(r.epsilon)}" in res.stdout
    for title in ("exact (Gaussian DP)", "RDP (CKS20", "zCDP", "advanced composition", "basic composition"):
        assert title in res.stdout
    assert "county totals" in res.stdout and "holds" in res.stdout


@pytest.mark.skipif(not HAS_SUBSAMPLING, reason="renyi.subsampling has not landed yet")
@pytest.mark.parametrize("name", ["dpsgd", "mixed"])
def test_report_subsampled_examples(name):
    """The DP-SGD and mixed examples run and state the Poisson sampling assumption."""
    res = run("report", str(EXAMPLES / f"{name}.toml"), "--json")
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    p = load_pipeline(EXAMPLES / f"{name}.toml")
    assert data["epsilon"] == compute_report(p).epsilon
    assert any(m["assumption"] == "Poisson sampling, add/remove neighbours" for m in data["mechanisms"])


def test_epsilon_gaussian_json_equals_library():
    """`renyi epsilon gaussian` reports the exact GDP ε of k runs."""
    res = run("epsilon", "gaussian", "--sigma", "2", "--steps", "100", "--delta", "1e-6", "--json")
    assert res.exit_code == 0
    data = json.loads(res.stdout)
    assert data["epsilon"] == renyi.GDP(0.5).compose(100).epsilon(1e-6)
    assert data["route"] == "exact"


def test_epsilon_laplace_text():
    """`renyi epsilon laplace` prints a rounded-up ε line."""
    res = run("epsilon", "laplace", "--scale", "10", "--steps", "20")
    assert res.exit_code == 0 and res.stdout.startswith("ε ≤ ")


def test_epsilon_wrong_option_for_mechanism_exit_2():
    """--sigma for a Laplace mechanism is a user error (exit 2, one line)."""
    res = runner.invoke(app, ["epsilon", "laplace", "--sigma", "1"])
    assert res.exit_code == 2 and "unknown key 'sigma'" in res.stderr


def test_epsilon_domain_error_exit_2():
    """σ ≤ 0 is a DomainError: exit 2, the library's message."""
    res = runner.invoke(app, ["epsilon", "gaussian", "--sigma", "-1"])
    assert res.exit_code == 2 and "sigma must be in (0, inf)" in res.stderr


def test_delta_gaussian_equals_exact():
    """`renyi delta` gives the exact δ(ε) for Gaussians."""
    res = run("delta", "gaussian", "--sigma", "2", "--steps", "100", "--eps", "3", "--json")
    data = json.loads(res.stdout)
    assert data["delta"] == pytest.approx(renyi.GDP(5.0).delta(3.0), rel=1e-12)


@pytest.mark.parametrize("args, key, expected", [
    (["zcdp", "--rho", "0.5", "--delta", "1e-6"], "epsilon", conv.zcdp_to_approx_dp(0.5, 1e-6).value),
    (["pure", "--epsilon", "1", "--to", "zcdp"], "rho", math.tanh(0.5)),
    (["rdp", "--alpha", "8", "--epsilon", "2", "--delta", "1e-5"], "epsilon",
     renyi.RDP.from_point(8.0, 2.0).epsilon(1e-5)),
    (["gdp", "--mu", "1", "--delta", "1e-5"], "epsilon", renyi.GDP(1.0).epsilon(1e-5)),
    (["mcdp", "--mu", "0.6", "--tau", "1", "--to", "zcdp"], "rho", 0.5),
    (["approx", "--epsilon", "1", "--delta", "1e-6", "--target-delta", "1e-5"], "epsilon",
     renyi.ApproxDP(1.0, 1e-6).epsilon(1e-5)),
])
def test_convert_equals_library(args, key, expected):
    """`renyi convert` prints the library's conversion."""
    res = run("convert", *args, "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)[key] == pytest.approx(expected, rel=1e-12)


def test_convert_text_rounds_up():
    """The text output of `renyi convert zcdp` is the conversion rounded up."""
    res = run("convert", "zcdp", "--rho", "0.5", "--delta", "1e-6")
    assert "ε ≤ 5.222 at δ = 1e-06" in res.stdout  # 5.22136… rounded up


def test_convert_impossible_is_exit_2():
    """A conversion that does not exist is a user error."""
    res = runner.invoke(app, ["convert", "zcdp", "--rho", "1", "--to", "gdp"])
    assert res.exit_code == 2 and "GDP" in res.stderr


@pytest.mark.skipif(not HAS_CALIBRATION, reason="renyi.calibration has not landed yet")
def test_calibrate_gaussian_is_analytic_gaussian():
    """σ for (1, 1e-5) is the analytic-Gaussian ≈ 3.73 and meets the target."""
    res = run("calibrate", "gaussian", "--epsilon", "1", "--delta", "1e-5", "--json")
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert 3.72 < data["value"] < 3.74
    assert renyi.GDP(1.0 / data["value"]).epsilon(1e-5) <= 1.0


@pytest.mark.skipif(not HAS_CALIBRATION, reason="renyi.calibration has not landed yet")
def test_calibrate_steps_is_an_integer_meeting_the_target():
    """Solving for steps returns the most steps that stay within the target."""
    data = json.loads(run("calibrate", "gaussian", "--solve", "steps", "--sigma", "5", "--epsilon", "8",
                          "--delta", "1e-5", "--json").stdout)
    n = data["value"]
    assert isinstance(n, int)
    assert renyi.GDP(0.2).compose(n).epsilon(1e-5) <= 8.0 < renyi.GDP(0.2).compose(n + 1).epsilon(1e-5)


def test_calibrate_needs_a_target():
    """No target: exit 2 with a clear message."""
    res = runner.invoke(app, ["calibrate", "gaussian"])
    assert res.exit_code == 2 and "target" in res.stderr


def test_plot_unwritable_path_exit_1(tmp_path):
    """An unwritable plot path is a clear error with exit code 1."""
    res = runner.invoke(app, ["plot", "compositions", "-o", str(tmp_path / "no" / "such" / "dir.png")])
    assert res.exit_code == 1 and "does not exist" in res.stderr


def test_report_plot_bad_suffix_exit_2(tmp_path):
    """A plot file with an unknown suffix is refused before any work."""
    res = runner.invoke(app, ["report", str(EXAMPLES / "census.toml"), "--plot", str(tmp_path / "x.gif")])
    assert res.exit_code == 2 and ".png" in res.stderr


def test_report_with_plot_writes_png(tmp_path):
    """`renyi report --plot` writes a PNG and still prints the report."""
    out = tmp_path / "census.png"
    res = run("report", str(EXAMPLES / "census.toml"), "--plot", str(out), "--json")
    assert res.exit_code == 0
    assert json.loads(res.stdout)["plot"] == str(out)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.skipif(not HAS_ACCOUNTANT, reason="renyi.accountant has not landed yet")
def test_ledger_show_and_export(tmp_path):
    """A ledger written by the Accountant can be shown and exported (JSON and CSV)."""
    from renyi.accountant import Accountant
    from renyi.mechanisms import Gaussian

    path = tmp_path / "spend.db"
    acc = Accountant(ledger=str(path))
    acc.spend(Gaussian(10.0), count=50)
    acc.spend(renyi.PureDP(0.1))
    acc_eps = acc.epsilon(1e-5)
    close = getattr(acc, "close", None)
    if close:
        close()
    res = run("ledger", "show", str(path), "--delta", "1e-5", "--json")
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["totals"]["records"] == 2 and data["totals"]["runs"] == 51
    # the smaller of two valid bounds: the accountant's (same totals) and renyi.compose
    expected = min(acc_eps, renyi.compose((Gaussian(10.0), 50), renyi.PureDP(0.1)).epsilon(1e-5))
    assert data["totals"]["epsilon"] == pytest.approx(expected, rel=1e-9)
    assert run("ledger", "show", str(path)).exit_code == 0
    exported = json.loads(run("ledger", "export", str(path)).stdout)
    assert len(exported["records"]) == 2
    csv_out = tmp_path / "spend.csv"
    assert run("ledger", "export", str(path), "--format", "csv", "-o", str(csv_out)).exit_code == 0
    assert len(csv_out.read_text().splitlines()) == 3


@pytest.mark.skipif(not HAS_ACCOUNTANT, reason="renyi.accountant has not landed yet")
def test_ledger_show_long_ledger_prints_plain_rows(tmp_path, monkeypatch):
    """A long ledger is shown as plain aligned lines (a rich table of 10⁵ rows took minutes):
    one header line, one line per spend, the same totals line."""
    from renyi.accountant import Accountant
    from renyi.cli import ledger as cli_ledger
    from renyi.mechanisms import Gaussian

    path = tmp_path / "spend.db"
    with Accountant(ledger=str(path)) as acc:
        for i in range(5):
            acc.spend(Gaussian(10.0 + i), label=f"g{i}")
    monkeypatch.setattr(cli_ledger, "_PLAIN_ABOVE", 3)
    res = run("ledger", "show", str(path))
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    head = [i for i, ln in enumerate(lines) if ln.strip().startswith("id") and "time (UTC)" in ln]
    assert len(head) == 1
    rows = lines[head[0] + 1:head[0] + 6]
    assert [r.split()[0] for r in rows] == ["1", "2", "3", "4", "5"] and all("Gaussian" in r for r in rows)
    assert "┃" not in res.stdout and any(ln.startswith("total: 5 spends") for ln in lines)


def test_ledger_missing_file_exit_2(tmp_path):
    """Showing a ledger that does not exist does not create it."""
    path = tmp_path / "none.db"
    res = runner.invoke(app, ["ledger", "show", str(path)])
    assert res.exit_code == 2 and "no such ledger" in res.stderr and not path.exists()


def test_version():
    """--version prints the package version."""
    assert renyi.__version__ in run("--version").stdout


def test_a_bad_option_value_is_one_line_with_exit_code_2(monkeypatch, capsys):
    """Regression: `--group-size 2.5` (or any integer option given a fraction, or an unknown
    option) printed click's four-line usage error; the console script prints one line."""
    import sys

    import typer.core

    import renyi.cli as cli

    plain = sys.modules.get("click")
    if plain is not None:
        monkeypatch.setattr(plain.exceptions.UsageError, "show", plain.exceptions.UsageError.show)
    bundled = getattr(getattr(typer.core, "_click", None), "exceptions", None)
    if bundled is not None:
        monkeypatch.setattr(bundled.UsageError, "show", bundled.UsageError.show)
    for argv in (["epsilon", "gaussian", "--sigma", "1", "--rate", "0.01", "--steps", "100",
                  "--delta", "1e-5", "--group-size", "2.5"],
                 ["epsilon", "gaussian", "--no-such-option"]):
        monkeypatch.setattr("sys.argv", ["renyi", *argv])
        with pytest.raises(SystemExit) as exc:
            cli.main()
        err = capsys.readouterr().err
        assert exc.value.code == 2
        assert err.count("\n") == 1 and err.startswith("error: "), err
    assert "--group-size" in err or "--no-such-option" in err
