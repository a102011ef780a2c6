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


class _Blocked(BaseException):
    pass


def _within(seconds: int):
    """A guard so that a regression fails the test instead of blocking the suite forever."""
    import contextlib
    import signal

    @contextlib.contextmanager
    def guard():
        def on_alarm(*_):
            raise _Blocked(f"blocked for {seconds} s")

        old = signal.signal(signal.SIGALRM, on_alarm)
        signal.alarm(seconds)
        try:
            yield
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)

    return guard()


def _spec_dict(keys_file: str | None = None) -> dict:
    q = {"name": "n", "type": "count", "by": ["g"],
         "keys": {"file": keys_file} if keys_file else {"g": ["a", "b"]}}
    return {"data": {"source": "t.csv", "privacy_unit": "id", "max_rows_per_unit": 1},
            "privacy": {"budget": {"rho": 0.5}}, "query": [q]}


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("what", ["spec", "pipeline", "key file", "cli report", "cli release", "ledger key file"])
def test_a_fifo_named_as_an_input_file_is_refused_not_read(tmp_path, what):
    """A FIFO given as a spec, pipeline or key file blocked forever in open() (nobody writes
    to it); it is refused at once, naming the path, as one CLI error line."""
    import os

    from typer.testing import CliRunner

    from renyi.cli import app
    from renyi.pipeline import PipelineError, load_pipeline
    from renyi.release import SpecError, load_spec, parse_spec

    fifo = tmp_path / ("f.csv" if what == "key file" else "f.json")
    os.mkfifo(fifo)
    with _within(20):
        if what == "spec":
            with pytest.raises(SpecError, match="not a regular file"):
                load_spec(fifo)
        elif what == "pipeline":
            with pytest.raises(PipelineError, match="not a regular file"):
                load_pipeline(fifo)
        elif what == "key file":
            with pytest.raises(SpecError, match="not a regular file"):
                parse_spec(_spec_dict("f.csv"), base_dir=str(tmp_path))
        else:
            if what == "ledger key file":
                from renyi import ZCDP, Accountant

                with Accountant(budget=ZCDP(1.0), ledger=str(tmp_path / "l.db")) as acct:
                    acct.spend(ZCDP(0.1))
                args = ["ledger", "verify", str(tmp_path / "l.db"), "--key-file", str(fifo)]
            else:
                args = ["report", str(fifo)] if what == "cli report" else ["release", str(fifo), "--dry-run"]
            r = CliRunner().invoke(app, args)
            assert r.exit_code == 2 and "regular file" in r.output, r.output
            assert len([ln for ln in r.output.splitlines() if ln.strip()]) == 1


@pytest.mark.parametrize("what", ["spec toml", "spec json", "pipeline toml", "pipeline json", "key file"])
def test_a_utf8_byte_order_mark_is_accepted(tmp_path, what):
    """Files saved by editors that write a UTF-8 BOM were refused with a misleading error
    ("invalid statement" at line 1, or a JSON syntax error at column 1); the BOM is dropped."""
    import json

    from renyi.pipeline import load_pipeline
    from renyi.release import load_spec, parse_spec

    bom = "\ufeff"
    pipeline = {"privacy": {"delta": 1e-5},
                "mechanism": [{"name": "g", "type": "gaussian", "sigma": 1.0, "count": 3}]}
    if what == "spec json":
        (tmp_path / "s.json").write_text(bom + json.dumps(_spec_dict()), encoding="utf-8")
        assert load_spec(tmp_path / "s.json").queries[0].keys == (("a",), ("b",))
    elif what == "spec toml":
        (tmp_path / "s.toml").write_text(
            bom + '[data]\nsource = "t.csv"\nprivacy_unit = "id"\nmax_rows_per_unit = 1\n'
            '[privacy.budget]\nrho = 0.5\n[[query]]\nname = "n"\ntype = "count"\n', encoding="utf-8")
        assert load_spec(tmp_path / "s.toml").queries[0].name == "n"
    elif what == "pipeline json":
        (tmp_path / "p.json").write_text(bom + json.dumps(pipeline), encoding="utf-8")
        assert load_pipeline(tmp_path / "p.json").entries[0].name == "g"
    elif what == "pipeline toml":
        (tmp_path / "p.toml").write_text(
            bom + '[privacy]\ndelta = 1e-5\n[[mechanism]]\nname = "g"\ntype = "gaussian"\nsigma = 1.0\ncount = 3\n',
            encoding="utf-8")
        assert load_pipeline(tmp_path / "p.toml").entries[0].name == "g"
    else:
        (tmp_path / "k.csv").write_text(bom + "g\na\nb\n", encoding="utf-8")
        s = parse_spec(_spec_dict("k.csv"), base_dir=str(tmp_path))
        assert s.queries[0].keys == (("a",), ("b",))


@pytest.mark.parametrize("noise", ["discrete_gaussian", "discrete_laplace"])
def test_a_tiny_rho_dry_run_returns(tmp_path, noise):
    """`renyi release --dry-run` of a spec with ρ = 1e-300 hung (its half-width search on
    σ ≈ 10¹⁵⁰ stepped by 1); it now plans, reports and exits 0 within seconds of CPU."""
    import json
    import time

    from typer.testing import CliRunner

    from renyi.cli import app

    s = _spec_dict()
    s["privacy"] = {"budget": {"rho": 1e-300}, "noise": noise}
    (tmp_path / "s.json").write_text(json.dumps(s), encoding="utf-8")
    t0 = time.process_time()
    with _within(120):
        r = CliRunner().invoke(app, ["release", str(tmp_path / "s.json"), "--dry-run"])
    assert r.exit_code == 0, r.output
    assert "dry run" in r.output
    assert time.process_time() - t0 < 20.0
