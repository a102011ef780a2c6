"""Fuzzing the command line: hostile arguments and hostile pipeline files.

Oracle: the command finishes within the time limit, exits 0, 1 or 2 (the documented codes),
never prints a traceback, prints at most one error line, writes strict JSON with ``--json``
(no NaN/Infinity literals) and no terminal escape codes (its output is not a terminal).
"""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
from typing import Any

import pytest
from _fuzz_oracle import FINDINGS, LONG, SHORT, call, record, run
from hypothesis import strategies as st
from typer.testing import CliRunner

from renyi.cli import app

BUDGETS = [pytest.param(max(10, SHORT // 2), id="short"),
           pytest.param(LONG // 3, id="long", marks=[pytest.mark.slow, pytest.mark.fuzz])]
ESC = re.compile(r"\x1b\[")
runner = CliRunner()


def _strict_json(text: str) -> Any:
    def bad(token: str) -> Any:
        raise ValueError(f"non-strict JSON literal {token}")

    return json.loads(text, parse_constant=bad)


def invoke(args: list[str]) -> None:
    what = "renyi " + " ".join(args)

    def go() -> Any:
        return runner.invoke(app, args, catch_exceptions=True, env={"NO_COLOR": None, "TERM": "dumb"})

    res = call(what, go, valid=None)
    if res is None:
        return
    out, err = res.stdout, res.stderr if hasattr(res, "stderr") else ""
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        record("non_library", f"{what}: exit {res.exit_code} with {type(res.exception).__name__}: {res.exception}")
        return
    if res.exit_code not in (0, 1, 2):
        record("non_library", f"{what}: exit code {res.exit_code}")
    if "Traceback" in out or "Traceback" in err:
        record("non_library", f"{what}: printed a traceback")
    if ESC.search(out) or ESC.search(err):
        record("invalid_result", f"{what}: terminal escape codes written to a non-terminal")
    if res.exit_code != 0:
        lines = [ln for ln in err.splitlines() if ln.strip()]
        if len(lines) != 1 and "Usage:" not in err:
            record("invalid_result", f"{what}: exit {res.exit_code} with {len(lines)} error lines: {err[:200]!r}")
    elif "--json" in args and out.strip():
        try:
            _strict_json(out)
        except ValueError as exc:
            record("invalid_result", f"{what}: stdout is not strict JSON ({exc}): {out[:200]!r}")
        if re.search(r"\bnan\b", out, re.IGNORECASE):
            record("nan", f"{what}: NaN in the output")




NUMBERS = st.one_of(
    st.sampled_from(["0", "-0", "1", "-1", "0.5", "1e-5", "5e-324", "1e308", "1e309", "inf", "-inf", "nan", "NaN",
                     "1e-320", "2", "10", "1000000", "1.1", "abc", "", " ", "1,5", "0x10", "1_000", "9" * 400]),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(-5, 10**6).map(str),
)
MECHS = st.sampled_from(["gaussian", "laplace", "randomized-response", "discrete-gaussian", "discrete-laplace",
                         "exponential", "bogus"])


def _opts(names: list[str]) -> st.SearchStrategy[list[str]]:
    return st.lists(st.tuples(st.sampled_from(names), NUMBERS), max_size=5).map(
        lambda kv: [x for k, v in kv for x in (k, v)])


MECH_OPTS = ["--sigma", "--scale", "--epsilon", "--p", "--k", "--sensitivity", "--rate", "--steps", "--delta"]


@pytest.mark.parametrize("examples", BUDGETS)
def test_fuzz_cli_epsilon_delta(examples):
    """`renyi epsilon` / `renyi delta` with hostile numbers."""
    def body(x: Any) -> None:
        cmd, mech, opts, sampling, js = x
        args = [cmd, mech, *opts, *(["--sampling", sampling] if sampling else [])]
        if cmd == "delta":
            args += ["--eps", "1"]
        invoke(args + (["--json"] if js else []))

    run(st.tuples(st.sampled_from(["epsilon", "delta"]), MECHS, _opts(MECH_OPTS),
                  st.sampled_from([None, "poisson", "without-replacement"]), st.booleans()), body, examples)


@pytest.mark.parametrize("examples", BUDGETS)
def test_fuzz_cli_convert(examples):
    """`renyi convert` between every pair of definitions with hostile numbers."""
    def body(x: Any) -> None:
        src, opts, to, js, orders = x
        args = ["convert", src, *opts, *(["--to", to] if to else []), *(["--orders", orders] if orders else [])]
        invoke(args + (["--json"] if js else []))

    run(st.tuples(st.sampled_from(["approx", "zcdp", "rdp", "pure", "gdp", "mcdp", "approx-zcdp", "bogus"]),
                  _opts(["--epsilon", "--delta", "--rho", "--xi", "--alpha", "--mu", "--tau", "--target-delta",
                         "--target-epsilon"]),
                  st.sampled_from([None, "approx", "zcdp", "rdp", "pure", "gdp"]), st.booleans(),
                  st.sampled_from([None, "2,4,inf", "", "nan", "1", "0.5,2", "x", "inf"])), body, examples)


@pytest.mark.parametrize("examples", BUDGETS)
def test_fuzz_cli_calibrate(examples):
    """`renyi calibrate` with hostile targets."""
    def body(x: Any) -> None:
        mech, solve, opts, js = x
        args = ["calibrate", mech, *(["--solve", solve] if solve else []), *opts]
        invoke(args + (["--json"] if js else []))

    run(st.tuples(MECHS, st.sampled_from([None, "sigma", "scale", "epsilon", "steps", "rate"]),
                  _opts(["--epsilon", "--delta", "--rho", "--alpha", "--sigma", "--scale", "--mech-epsilon", "--k",
                         "--sensitivity", "--rate", "--steps"]), st.booleans()), body, examples)


# ----- pipeline files ---------------------------------------------------------------------------
TOML_VALUES = st.one_of(
    st.sampled_from(["0", "-1", "1", "0.5", "1e-5", "1e308", "inf", "-inf", "nan", '"x"', "true", "[]", "{}",
                     "1.1", "15000", "0.004", "2", "5e-324", "9" * 30]),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
)
MECH_KEYS = ["sigma", "scale", "epsilon", "p", "k", "sensitivity", "count", "rate"]


@st.composite
def pipelines(draw: Any) -> str:
    lines = []
    if draw(st.booleans()):
        lines.append(f'title = "{draw(st.sampled_from(["t", "x" * 3, "ü"]))}"')
    lines.append("[privacy]")
    if draw(st.booleans()):
        lines.append(f"delta = {draw(TOML_VALUES)}")
    budget = draw(st.sampled_from([None, "epsilon", "rho", "both", "junk"]))
    if budget == "epsilon":
        lines.append(f"budget = {{ epsilon = {draw(TOML_VALUES)}, delta = {draw(TOML_VALUES)} }}")
    elif budget == "rho":
        lines.append(f"budget = {{ rho = {draw(TOML_VALUES)} }}")
    elif budget == "both":
        lines.append(f"budget = {{ rho = {draw(TOML_VALUES)}, epsilon = {draw(TOML_VALUES)} }}")
    elif budget == "junk":
        lines.append(f"budget = {draw(TOML_VALUES)}")
    for i in range(draw(st.integers(0, 3))):
        lines.append("[[mechanism]]")
        lines.append(f'name = "m{i}"')
        lines.append(f'type = "{draw(st.sampled_from(["gaussian", "laplace", "randomized_response", "discrete_gaussian", "discrete_laplace", "exponential", "rdp", "zcdp", "approx", "pure", "bogus"]))}"')
        for key in draw(st.lists(st.sampled_from(MECH_KEYS + ["rho", "alpha", "delta", "mu"]), max_size=4, unique=True)):
            lines.append(f"{key} = {draw(TOML_VALUES)}")
        sampling = draw(st.sampled_from([None, "poisson", "without_replacement", "bogus"]))
        if sampling:
            lines.append(f'sampling = {{ scheme = "{sampling}", rate = {draw(TOML_VALUES)} }}')
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("examples", BUDGETS)
def test_fuzz_cli_report(examples, tmp_path_factory):
    """`renyi report` on hostile pipeline files (TOML, and JSON with the same keys)."""
    d = tmp_path_factory.mktemp("pipelines")

    def body(x: Any) -> None:
        text, js, as_json = x
        path = os.path.join(d, "p.toml")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
        if as_json:
            import tomllib

            try:
                obj = tomllib.loads(text)
            except tomllib.TOMLDecodeError:
                obj = None
            if obj is not None:
                path = os.path.join(d, "p.json")
                with open(path, "w", encoding="utf-8") as fh:
                    fh.write(json.dumps(obj, default=str))
        invoke(["report", path] + (["--json"] if js else []))

    run(st.tuples(pipelines(), st.booleans(), st.booleans()), body, examples)


def test_cli_report_rdp_point_at_order_inf():
    """The audit's traceback: `report --json` on an RDP point at order ∞."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "p.toml")
        with open(path, "w") as fh:
            fh.write('[privacy]\ndelta = 1e-5\n[[mechanism]]\nname = "x"\ntype = "rdp"\nalpha = inf\nepsilon = 1.0\n')
        start = len(FINDINGS)
        invoke(["report", path, "--json"])
        invoke(["report", path])
        assert FINDINGS[start:] == []


def test_cli_json_is_strict_for_infinite_values():
    """Infinite results are written as strings, never as the non-standard Infinity literal."""
    res = runner.invoke(app, ["convert", "approx", "--epsilon", "1", "--delta", "0.5", "--to", "zcdp", "--json"])
    if res.exit_code == 0:
        _strict_json(res.stdout)
    assert math.isfinite(1.0)
