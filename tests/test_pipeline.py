"""Pipeline files: parsing, the example files, and one-line errors for every kind of mistake."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from renyi.mechanisms import Gaussian
from renyi.pipeline import MECHANISM_TYPES, Budget, PipelineError, load_pipeline, parse_pipeline

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
HAS_SUBSAMPLING = importlib.util.find_spec("renyi.subsampling") is not None
needs_subsampling = pytest.mark.skipif(not HAS_SUBSAMPLING, reason="renyi.subsampling has not landed yet")


def _one(**entry):
    base = {"name": "m", "type": "gaussian", "sigma": 2.0}
    base.update(entry)
    return {"privacy": {"delta": 1e-5}, "mechanism": [base]}


def test_entries_unpack_as_name_mechanism_count():
    """An entry unpacks as (name, mechanism, count), the mechanism built by the library."""
    p = parse_pipeline(_one(count=7))
    [(name, mech, count)] = list(p.entries)
    assert (name, mech, count) == ("m", Gaussian(2.0), 7)
    assert p.items() == [(Gaussian(2.0), 7)]


def test_count_defaults_to_one_and_delta_is_kept():
    """Without count a mechanism runs once; δ is the file's."""
    p = parse_pipeline(_one())
    assert p.entries[0].count == 1 and p.delta == 1e-5 and p.budget is None


@pytest.mark.parametrize(
    "budget, expected",
    [({"epsilon": 8.0, "delta": 1e-6}, Budget(epsilon=8.0, delta=1e-6)),
     ({"epsilon": 2.0}, Budget(epsilon=2.0, delta=1e-5)),
     ({"rho": 0.5}, Budget(rho=0.5))],
)
def test_budget_forms(budget, expected):
    """(ε, δ) and ρ budgets; an ε budget without δ takes the pipeline's δ."""
    d = _one()
    d["privacy"]["budget"] = budget
    assert parse_pipeline(d).budget == expected


def test_delta_may_come_from_the_budget():
    """With only a budget δ, ε is reported at that δ."""
    p = parse_pipeline({"privacy": {"budget": {"epsilon": 1.0, "delta": 1e-7}},
                        "mechanism": [{"name": "g", "type": "gaussian", "sigma": 3.0}]})
    assert p.delta == 1e-7


@pytest.mark.parametrize("alias", ["Gaussian", "GAUSSIAN", "gaussian"])
def test_type_is_case_insensitive(alias):
    """Type names ignore case (and hyphens vs underscores)."""
    assert parse_pipeline(_one(type=alias)).entries[0].type == "gaussian"


def test_guarantee_types():
    """Guarantee-level entries (pure_dp, approx_dp, zcdp, gdp, rdp) build guarantee values."""
    from renyi.definitions import GDP, ZCDP, ApproxDP, PureDP

    d = {"privacy": {"delta": 1e-5}, "mechanism": [
        {"name": "a", "type": "pure_dp", "epsilon": 0.5},
        {"name": "b", "type": "approx-dp", "epsilon": 0.5, "delta": 1e-8},
        {"name": "c", "type": "zcdp", "rho": 0.1},
        {"name": "d", "type": "gdp", "mu": 0.3},
        {"name": "e", "type": "rdp", "alpha": 8, "epsilon": 0.2},
    ]}
    mechs = [e.mechanism for e in parse_pipeline(d).entries]
    assert mechs[:4] == [PureDP(0.5), ApproxDP(0.5, 1e-8), ZCDP(0.1), GDP(0.3)]
    assert float(mechs[4].rdp(8.0)) == 0.2


@given(sigma=st.floats(1e-3, 1e6), count=st.integers(1, 10**7))
def test_any_valid_gaussian_round_trips(sigma, count):
    """Every valid (σ, count) gives exactly that mechanism and count (nothing is changed)."""
    e = parse_pipeline(_one(sigma=sigma, count=count)).entries[0]
    assert e.mechanism == Gaussian(sigma) and e.count == count


def test_census_example_parses():
    """examples/census.toml: two vector releases of disjoint cells (3000 + 2000) under a ρ budget."""
    p = load_pipeline(EXAMPLES / "census.toml")
    assert [(e.count, e.cells, e.disjoint) for e in p.entries] == [(1, 3000, True), (1, 2000, True)]
    assert p.budget == Budget(rho=0.5)


@needs_subsampling
def test_dpsgd_example_rate_is_batch_over_dataset():
    """examples/dpsgd.toml: Poisson rate 256/60000, σ = 1.1, 60 epochs of steps."""
    e = load_pipeline(EXAMPLES / "dpsgd.toml").entries[0]
    assert e.sampling.scheme == "poisson" and e.sampling.rate == 256 / 60000
    assert e.count == math.ceil(60 * 60000 / 256)
    assert e.base == Gaussian(1.1)


@needs_subsampling
def test_mixed_example_parses():
    """examples/mixed.toml: Laplace, exponential mechanism, subsampled Gaussian."""
    p = load_pipeline(EXAMPLES / "mixed.toml")
    assert [e.type for e in p.entries] == ["laplace", "exponential", "gaussian"]


def test_json_is_accepted_with_the_same_keys(tmp_path):
    """A JSON file with the same keys gives the same pipeline as TOML."""
    toml_p = load_pipeline(EXAMPLES / "census.toml")
    import tomllib

    data = tomllib.loads((EXAMPLES / "census.toml").read_text())
    f = tmp_path / "census.json"
    f.write_text(json.dumps(data))
    json_p = load_pipeline(f)
    assert json_p.items() == toml_p.items() and json_p.budget == toml_p.budget


# ----- errors: one line, naming what is wrong ------------------------------------------
def _err(tmp_path, text: str, suffix: str = ".toml") -> str:
    f = tmp_path / f"bad{suffix}"
    f.write_text(text)
    with pytest.raises(PipelineError) as info:
        load_pipeline(f)
    msg = str(info.value)
    assert "\n" not in msg
    return msg


GOOD_HEAD = '[privacy]\ndelta = 1e-5\n\n[[mechanism]]\nname = "q"\n'


def test_toml_syntax_error_has_line_number(tmp_path):
    """A TOML syntax error says so, with its line number."""
    msg = _err(tmp_path, GOOD_HEAD + 'type = "gaussian"\nsigma = = 2\n')
    assert "TOML syntax error" in msg and "line 7" in msg


def test_json_syntax_error_has_line_number(tmp_path):
    """A JSON syntax error says so, with its line number."""
    msg = _err(tmp_path, '{\n "privacy": {"delta": 1e-5},\n "mechanism": [\n}', ".json")
    assert "JSON syntax error at line 4" in msg


def test_unknown_type_lists_known_types(tmp_path):
    """An unknown mechanism type names it and lists the known ones."""
    msg = _err(tmp_path, GOOD_HEAD + 'type = "gausian"\nsigma = 2\n')
    assert "'gausian'" in msg and "mechanism 'q'" in msg
    for t in MECHANISM_TYPES:
        assert t in msg


def test_missing_parameter_names_mechanism_and_key(tmp_path):
    """A missing parameter names the mechanism and the key."""
    msg = _err(tmp_path, GOOD_HEAD + 'type = "gaussian"\n')
    assert "mechanism 'q'" in msg and "'sigma'" in msg


def test_out_of_range_parameter_names_mechanism_key_and_range(tmp_path):
    """An out-of-range value gives the library's domain message, prefixed with the mechanism."""
    msg = _err(tmp_path, GOOD_HEAD + 'type = "gaussian"\nsigma = -1.0\n')
    assert msg.endswith("mechanism 'q': sigma must be in (0, inf); got -1.0")


def test_wrong_type_names_the_key(tmp_path):
    """A string where a number belongs says which key and what it got."""
    msg = _err(tmp_path, GOOD_HEAD + 'type = "gaussian"\nsigma = "1.1"\n')
    assert "mechanism 'q': sigma must be a number; got a string '1.1'" in msg


def test_unknown_key_is_refused(tmp_path):
    """A misspelt parameter is an error, not silently ignored."""
    msg = _err(tmp_path, GOOD_HEAD + 'type = "gaussian"\nsigma = 2\nsensitivty = 1\n')
    assert "unknown key 'sensitivty'" in msg


def test_bad_count_and_rate(tmp_path):
    """count < 1 and a sampling rate outside [0, 1] are refused."""
    assert "count must be" in _err(tmp_path, GOOD_HEAD + 'type = "gaussian"\nsigma = 2\ncount = 0\n')
    msg = _err(tmp_path, GOOD_HEAD + 'type = "gaussian"\nsigma = 2\nsampling = { scheme = "poisson", rate = 1.5 }\n')
    assert "rate must be in [0, 1]" in msg


def test_missing_delta_and_no_mechanisms(tmp_path):
    """A pipeline needs a δ and at least one mechanism."""
    assert "'delta'" in _err(tmp_path, '[[mechanism]]\nname = "q"\ntype = "gaussian"\nsigma = 1\n')
    assert "no mechanisms" in _err(tmp_path, "[privacy]\ndelta = 1e-5\n")


def test_missing_file_says_so(tmp_path):
    """A missing file is reported as such."""
    with pytest.raises(PipelineError, match="no such file"):
        load_pipeline(tmp_path / "nope.toml")


def test_pipeline_error_is_a_domain_error():
    """PipelineError is a DomainError (so a ValueError)."""
    from renyi.errors import DomainError

    assert issubclass(PipelineError, DomainError) and issubclass(PipelineError, ValueError)
