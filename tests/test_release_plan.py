"""Release specs and plans (no data): parsing, errors, derived sensitivities, budget split."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from renyi.conversions import zcdp_rho_for
from renyi.release import SpecError, derive_sensitivity, make_plan, parse_spec


def _spec(**over):
    q = {"name": "n", "type": "count", "by": ["g"], "keys": {"g": ["a", "b", "c"]}}
    q.update(over.pop("query", {}))
    data = {"source": "t.csv", "privacy_unit": "id", "max_rows_per_unit": 2}
    data.update(over.pop("data", {}))
    priv = {"budget": {"rho": 0.5}}
    priv.update(over.pop("privacy", {}))
    return {"data": data, "privacy": priv, "query": [q, *over.pop("more", [])], **over}


# ----------------------------------------------------------------------------- sensitivities
def _brute(rows: int, groups: int | None, per_group: int | None, cells: int) -> tuple[int, float]:
    """max ℓ₁ and ℓ₂ over every contribution vector the bounds allow (exhaustive)."""
    g = groups if groups is not None else rows
    r = per_group if per_group is not None else rows
    best1, best2 = 0, 0.0
    for c in itertools.product(range(r + 1), repeat=cells):
        if sum(c) <= rows and sum(1 for x in c if x) <= g:
            best1 = max(best1, sum(c))
            best2 = max(best2, math.sqrt(sum(x * x for x in c)))
    return best1, best2


@given(st.integers(1, 6), st.one_of(st.none(), st.integers(1, 4)), st.one_of(st.none(), st.integers(1, 4)),
       st.integers(1, 4))
def test_sensitivity_is_the_exact_worst_case(rows, groups, per_group, cells):
    """The derived ℓ₁/ℓ₂ equal the maximum over all contribution vectors the bounds allow."""
    s = derive_sensitivity(rows, groups, per_group, cells)
    b1, b2 = _brute(rows, groups, per_group, cells)
    assert s.l1 == b1
    assert s.l2 == pytest.approx(b2, rel=1e-15)
    assert s.l2 >= b2  # never below the truth


def test_sensitivity_scales_with_the_clamping_bound():
    """A sum's sensitivity is the count's times the per-row bound."""
    c = derive_sensitivity(4, 4, 1, 100)
    s = derive_sensitivity(4, 4, 1, 100, per_row=7)
    assert (s.l1, s.l2) == (7 * c.l1, 7 * c.l2) == (28.0, 14.0)
    assert "ℓ₂ = 7 × √(4×1²) = 14" in s.derivation()


# ----------------------------------------------------------------------------- budget and plan
def test_epsilon_delta_budget_becomes_plain_rho():
    """(ε, δ) is converted to the largest plain ρ implying it, not to δ-approximate zCDP."""
    s = parse_spec(_spec(privacy={"budget": {"epsilon": 1.0, "delta": 1e-10}}))
    assert s.rho == zcdp_rho_for(1.0, 1e-10)
    assert 0.0132 < s.rho < 0.01325
    assert s.delta == 1e-10  # the report's δ defaults to the budget's


def test_plan_splits_the_budget_by_weight_and_stays_within_it():
    """Shares follow the weights, a mean's share is split, every σ is on the safe side."""
    s = parse_spec(_spec(query={"weight": 1.0}, more=[
        {"name": "m", "type": "mean", "column": "x", "bounds": [0, 10], "by": ["g"], "keys": {"g": ["a"]},
         "weight": 3.0}]))
    p = make_plan(s)
    assert p.rho <= s.rho
    assert p.rho == pytest.approx(s.rho, rel=1e-6)
    assert p.queries[0].rho == pytest.approx(0.125, rel=1e-6)
    assert [m.kind for m in p.queries[1].measurements] == ["sum", "count"]
    for m in p.measurements:
        assert m.achieved_rho <= m.rho
        sigma = float(m.mechanism.sigma)
        assert sigma == pytest.approx(m.sensitivity.l2 / math.sqrt(2 * m.rho), rel=1e-6)


def test_discrete_laplace_plan_uses_l1_and_tanh_rho():
    """Discrete Laplace noise: ε = Δ₁/t and ρ = ε·tanh(ε/2) within the share."""
    s = parse_spec(_spec(privacy={"noise": "discrete_laplace"}, data={"max_rows_per_unit": 3},
                         query={"max_rows_per_group": 1}))
    m = make_plan(s).measurements[0]
    assert m.sensitivity.l1 == 3.0 and m.sensitivity.l2 == pytest.approx(math.sqrt(3))
    eps = 3.0 / float(m.mechanism.scale)
    assert eps * math.tanh(eps / 2) <= m.rho
    assert eps * math.tanh(eps / 2) == pytest.approx(m.rho, rel=1e-6)


def test_plan_half_width_covers_95_percent_exactly():
    """The per-cell half-width is the smallest integer h with P(|Z| ≤ h) ≥ 0.95 (direct sum)."""
    m = make_plan(parse_spec(_spec())).measurements[0]
    s2 = float(m.mechanism.sigma) ** 2
    k = range(-2000, 2001)
    w = [math.exp(-x * x / (2 * s2)) for x in k]
    tot = math.fsum(w)

    def cov(h):
        return math.fsum(wi for x, wi in zip(k, w) if abs(x) <= h) / tot

    assert cov(m.half_width) >= 0.95 > cov(m.half_width - 1)


# ----------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("over, words", [
    ({"query": {"keys": {"g": ["a", "b", "a"]}}}, "duplicate: 'a'"),
    ({"query": {"type": "sum", "column": "x", "bounds": [5, 1]}}, "lower <= upper"),
    ({"query": {"weight": 0}}, "weight must be in (0, inf); got 0"),
    ({"query": {"weight": -1.0}}, "weight must be in (0, inf)"),
    ({"query": {"keys": None}}, "missing required key 'keys'"),
    ({"query": {"type": "sum", "column": "x"}}, "needs bounds"),
    ({"query": {"type": "median"}}, "type must be one of count, sum, mean"),
    ({"query": {"by": ["id"], "keys": {"id": ["1"]}}}, "cannot group by the privacy unit"),
    ({"data": {"max_rows_per_unit": 0}}, "max_rows_per_unit must be an integer in [1, inf); got 0"),
    ({"privacy": {"budget": {"epsilon": 1.0}}}, "a pure ε is not a ρ budget"),
    ({"privacy": {"budget": {"rho": -1}}}, "rho must be in (0, inf)"),
    ({"query": {"name": "n"}, "more": [{"name": "n", "type": "count"}]}, "duplicate name"),
    ({"data": {"source": "t.xlsx"}}, "cannot tell the format"),
    ({"query": {"colour": 1}}, "unknown key 'colour'"),
])
def test_bad_specs_give_one_clear_error(over, words):
    """Each bad spec is a SpecError (a ValueError) with a one-line message naming the problem."""
    with pytest.raises(SpecError) as e:
        parse_spec(_spec(**over))
    assert isinstance(e.value, ValueError)
    assert words in str(e.value)
    assert "\n" not in str(e.value)


def test_duplicate_keys_in_a_key_file(tmp_path):
    """A key file with a repeated group is refused, naming the group."""
    (tmp_path / "k.csv").write_text("g,h\na,1\nb,1\na,1\n")
    with pytest.raises(SpecError, match=r"duplicate: \('a', '1'\)"):
        parse_spec(_spec(query={"by": ["g", "h"], "keys": {"file": "k.csv"}}), base_dir=str(tmp_path))


def test_inline_keys_are_a_cross_product():
    """Inline lists per column give every combination, in order."""
    s = parse_spec(_spec(query={"by": ["g", "h"], "keys": {"g": ["a", "b"], "h": [1, 2]}}))
    assert s.queries[0].keys == (("a", "1"), ("a", "2"), ("b", "1"), ("b", "2"))
