"""Packaging: shipped examples (``renyi examples``, ``renyi report --example``), the built
wheel's contents, and a clean install of the wheel."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from renyi._examples import example_path, examples, examples_dir
from renyi.cli import app
from renyi.errors import DomainError

ROOT = Path(__file__).resolve().parent.parent
runner = CliRunner()


def test_examples_are_the_top_level_files():
    """The package's examples are the repository's examples/ (one source, not copies)."""
    shipped = {e.path.name: e.path.read_bytes() for e in examples()}
    top = {p.name: p.read_bytes() for p in (ROOT / "examples").iterdir() if p.suffix in (".toml", ".json", ".py")}
    assert shipped == top
    assert {"census", "dpsgd", "mixed"} <= {e.name for e in examples() if e.kind == "pipeline"}


def test_example_path_by_name_and_file_name():
    """An example is found by its name or its file name; an unknown name lists the known ones."""
    assert example_path("dpsgd") == example_path("dpsgd.toml") == examples_dir() / "dpsgd.toml"
    with pytest.raises(DomainError, match="example must be one of .*dpsgd.*; got 'nope'"):
        example_path("nope")


def test_every_example_has_a_summary():
    """`renyi examples` shows a one-sentence summary for every file."""
    for e in examples():
        assert e.summary and len(e.summary) < 300, e


def test_cli_examples_lists_them():
    """`renyi examples --json` lists every shipped example; `renyi examples NAME` prints the file."""
    out = runner.invoke(app, ["examples", "--json"], catch_exceptions=False)
    assert out.exit_code == 0
    names = [e["name"] for e in json.loads(out.stdout)["examples"]]
    assert names == [e.name for e in examples()]
    text = runner.invoke(app, ["examples", "census"], catch_exceptions=False)
    assert text.exit_code == 0 and text.stdout == (ROOT / "examples" / "census.toml").read_text(encoding="utf-8")


def test_report_example_equals_report_of_the_file():
    """`renyi report --example census` is the report of examples/census.toml."""
    a = runner.invoke(app, ["report", "--example", "census", "--json"], catch_exceptions=False)
    b = runner.invoke(app, ["report", str(ROOT / "examples" / "census.toml"), "--json"], catch_exceptions=False)
    assert a.exit_code == b.exit_code == 0
    ja, jb = json.loads(a.stdout), json.loads(b.stdout)
    ja.pop("source"), jb.pop("source")
    assert ja == jb


@pytest.mark.parametrize("args", [["report"], ["report", "examples/census.toml", "--example", "census"],
                                  ["report", "--example", "nope"], ["examples", "nope"]])
def test_report_needs_exactly_one_source(args):
    """No pipeline, both a file and --example, or an unknown example: one error line, exit 2."""
    out = runner.invoke(app, args)
    assert out.exit_code == 2
    assert out.stderr.strip().startswith("error:") and len(out.stderr.strip().splitlines()) == 1


# ----- the built wheel, installed into a clean virtualenv (slow: builds and downloads) -----
@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    pytest.importorskip("build")
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(ROOT)],
                   check=True, capture_output=True, text=True, timeout=600)
    (whl,) = out.glob("renyi-*.whl")
    return whl


@pytest.mark.slow
def test_wheel_contains_license_and_examples(wheel):
    """The wheel carries the licence text and every example file."""
    names = zipfile.ZipFile(wheel).namelist()
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert any(n.endswith("/py.typed") for n in names)
    for e in examples():
        assert f"renyi/examples/{e.path.name}" in names
    meta = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert "License-Expression: Apache-2.0" in meta


@pytest.mark.slow
def test_wheel_in_a_clean_venv_runs_the_main_job(wheel, tmp_path):
    """A fresh virtualenv (no system site-packages) with only the wheel runs the examples."""
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True, system_site_packages=False, clear=True).create(env_dir)
    bindir = env_dir / ("Scripts" if os.name == "nt" else "bin")
    py = bindir / "python"
    subprocess.run([str(py), "-m", "pip", "install", "--quiet", str(wheel)], check=True, timeout=900)
    renyi_exe = str(bindir / "renyi")
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    listed = subprocess.run([renyi_exe, "examples"], capture_output=True, text=True, cwd=tmp_path, env=clean,
                            timeout=120)
    assert listed.returncode == 0, listed.stderr
    assert "dpsgd" in listed.stdout and "census" in listed.stdout
    rep = subprocess.run([renyi_exe, "report", "--example", "dpsgd"], capture_output=True, text=True,
                         cwd=tmp_path, env=clean, timeout=300)
    assert rep.returncode == 0, rep.stderr
    assert "ε ≤" in rep.stdout
    where = subprocess.run([str(py), "-c", "import renyi; print(renyi.__file__)"], capture_output=True,
                           text=True, cwd=tmp_path, env=clean, timeout=60)
    assert str(env_dir) in where.stdout, "the check must run the installed wheel, not the checkout"


# ----- names: the US spelling `neighboring` is accepted wherever `neighbouring` is ----------
def test_neighboring_alias_in_the_api():
    """Mechanisms, methods and functions take `neighboring=` as `neighbouring=`."""
    from renyi import ExponentialMechanism, Gaussian, Laplace, ptr_mode
    from renyi.mechanisms import DiscreteGaussian

    assert Gaussian(1.0, neighboring="replace_one") == Gaussian(1.0, neighbouring="replace_one")
    assert Laplace(2.0, neighboring="replace_one").neighbouring == "replace_one"
    assert DiscreteGaussian(2.0, neighboring="replace_one").neighboring == "replace_one"
    assert ExponentialMechanism(1.0, neighboring="replace_one").neighbouring == "replace_one"
    assert Laplace.from_epsilon(1.0, neighboring="replace_one").neighbouring == "replace_one"
    assert ptr_mode(1.0, 1e-6, neighboring="add_remove").neighbouring == "add_remove"
    assert Gaussian(1.0).guarantee_under(neighboring="replace_one") == Gaussian(1.0).guarantee_under("replace_one")
    with pytest.raises(TypeError, match="both 'neighbouring' and its alias 'neighboring'"):
        Gaussian(1.0, neighbouring="add_remove", neighboring="replace_one")
    with pytest.raises(DomainError, match="neighbouring must be one of"):
        Gaussian(1.0, neighboring="sideways")


def test_neighboring_alias_in_pipeline_files_and_cli(tmp_path):
    """A pipeline file may spell the key `neighboring`; the CLI takes `--neighboring`."""
    from renyi.pipeline import build_mechanism

    assert build_mechanism("laplace", {"scale": 2.0, "neighboring": "replace_one"}).neighbouring == "replace_one"
    with pytest.raises(DomainError, match="not both"):
        build_mechanism("laplace", {"scale": 2.0, "neighboring": "replace_one", "neighbouring": "add_remove"})
    a = runner.invoke(app, ["limits", "histogram", "--keys", "100", "--rho", "0.5", "--neighboring", "add-remove",
                            "--json"])
    b = runner.invoke(app, ["limits", "histogram", "--keys", "100", "--rho", "0.5", "--neighbouring", "add-remove",
                            "--json"])
    assert a.exit_code == b.exit_code == 0 and a.stdout == b.stdout
