"""Fuzzing the public API: constructors, the privacy protocol, conversions, transformers,
composition, calibration and the accountant, with hostile and valid inputs.

The oracle (``_fuzz_oracle.call``) counts every call and records findings; each test fails if
its targets produced any. ``-m fuzz`` runs the long profile (``RENYI_FUZZ_LONG`` examples per
target); the default suite runs ``RENYI_FUZZ_SHORT``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from _fuzz_oracle import COUNTS, FINDINGS, LONG, SHORT, call, run
from _fuzz_values import all_ok, arg, in_domain, orders_arg, valid
from hypothesis import strategies as st

import renyi
from renyi import conversions as conv

BUDGETS = [pytest.param(SHORT, id="short"), pytest.param(LONG, id="long", marks=[pytest.mark.slow, pytest.mark.fuzz])]




# ----- validity checks of results -------------------------------------------------------------
def eps_ok(x: Any) -> str | None:
    v = float(getattr(x, "value", x))
    if not v >= 0.0:
        return f"ε = {v!r} < 0"
    w = getattr(x, "witness", None)
    if w is not None and not w > 1.0:
        return f"witness order {w!r} ≤ 1"
    return None


def delta_ok(x: Any) -> str | None:
    v = float(getattr(x, "value", x))
    if not 0.0 <= v <= 1.0:
        return f"δ = {v!r} outside [0, 1]"
    return None


def rdp_ok(x: Any) -> str | None:
    a = np.asarray(x, dtype=np.float64)
    if np.any(a < 0):
        return f"negative RDP value {a.min()!r}"
    return None


def guarantee_ok(g: Any) -> str | None:
    if not isinstance(g, renyi.Guarantee):
        return f"not a guarantee: {type(g).__name__}"
    return None


# ----- strategies of values ---------------------------------------------------------------------
GUARANTEES: dict[str, tuple[Any, list[tuple[str, str]]]] = {
    "PureDP": (renyi.PureDP, [("epsilon", "nonneg")]),
    "ApproxDP": (renyi.ApproxDP, [("epsilon", "nonneg"), ("delta", "unit_co")]),
    "ZCDP": (renyi.ZCDP, [("rho", "nonneg"), ("xi", "nonneg")]),
    "ApproxZCDP": (renyi.ApproxZCDP, [("rho", "nonneg"), ("xi", "nonneg"), ("delta", "unit_co")]),
    "MCDP": (renyi.MCDP, [("mu", "nonneg"), ("tau", "nonneg")]),
    "GDP": (renyi.GDP, [("mu", "gdp_mu")]),
}
MECHANISMS: dict[str, tuple[Any, list[tuple[str, str]]]] = {
    "Gaussian": (renyi.Gaussian, [("sigma", "pos"), ("sensitivity", "pos")]),
    "Laplace": (renyi.Laplace, [("scale", "pos"), ("sensitivity", "pos")]),
    "RandomizedResponse": (renyi.RandomizedResponse, [("epsilon", "nonneg")]),
    "DiscreteGaussian": (renyi.DiscreteGaussian, [("sigma", "pos")]),
    "DiscreteLaplace": (renyi.DiscreteLaplace, [("scale", "pos")]),
    "ExponentialMechanism": (renyi.ExponentialMechanism, [("epsilon", "pos"), ("sensitivity", "pos")]),
}


def built(table: dict[str, tuple[Any, list[tuple[str, str]]]]) -> st.SearchStrategy[tuple[str, Any, list, bool | None]]:
    """(name, constructor, [(param, value)], validity)."""
    def one(name: str) -> st.SearchStrategy[Any]:
        ctor, params = table[name]
        return st.tuples(*[arg(kind) for _, kind in params]).map(
            lambda vs, ctor=ctor, params=params, name=name: (
                name, ctor, [(p, v) for (p, _), (v, _ok) in zip(params, vs)], all_ok([ok for _, ok in vs])))
    return st.sampled_from(sorted(table)).flatmap(one)


def _junk(x: Any) -> bool:
    """NaN, empty, non-numeric: outside every domain, array or not."""
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        return True
    return isinstance(x, (str, bytes, bool)) or arr.size == 0 or bool(np.any(np.isnan(arr)))


def _desc(name: str, kv: list[tuple[str, Any]]) -> str:
    return f"{name}({', '.join(f'{k}={v!r}' for k, v in kv)})"


#: the neighbouring relations (every guarantee and noise mechanism takes ``neighbouring=``)
RELATIONS = st.sampled_from(["add_remove", "replace_one"])


def valid_mechanism() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.builds(renyi.Gaussian, valid("pos").filter(lambda x: 1e-3 < x < 1e7), neighbouring=RELATIONS),
        st.builds(renyi.Laplace, valid("pos").filter(lambda x: 1e-3 < x < 1e7), neighbouring=RELATIONS),
        st.builds(renyi.RandomizedResponse, st.floats(0.0, 20.0)),
        st.builds(renyi.DiscreteGaussian, st.floats(0.1, 100.0), neighbouring=RELATIONS),
        st.builds(renyi.DiscreteLaplace, st.floats(0.1, 100.0), neighbouring=RELATIONS),
    )


def valid_guarantee() -> st.SearchStrategy[Any]:
    small = st.floats(0.0, 50.0)
    return st.one_of(
        st.builds(renyi.PureDP, small, neighbouring=RELATIONS),
        st.builds(renyi.ApproxDP, small, st.floats(0.0, 0.5), neighbouring=RELATIONS),
        st.builds(renyi.ZCDP, small, small, neighbouring=RELATIONS),
        st.builds(renyi.ApproxZCDP, small, small, st.floats(0.0, 0.5), neighbouring=RELATIONS),
        st.builds(renyi.MCDP, small, small, neighbouring=RELATIONS),
        st.builds(renyi.GDP, small, neighbouring=RELATIONS),
        valid_mechanism().map(lambda m: m.guarantee),
    )


# ----- the protocol -------------------------------------------------------------------------------
def protocol(what: str, obj: Any, draws: Any) -> None:
    """Every protocol method with hostile arguments."""
    (alpha, a_ok), (delta, d_ok), (eps, e_ok), (k, k_ok) = draws
    call(f"{what}.rdp({alpha!r})", obj.rdp, alpha, valid=a_ok, check=rdp_ok)
    call(f"{what}.epsilon({delta!r})", obj.epsilon, delta, valid=d_ok, check=eps_ok)
    call(f"{what}.best_epsilon({delta!r})", obj.best_epsilon, delta, valid=d_ok, check=eps_ok)
    call(f"{what}.delta({eps!r})", obj.delta, eps, valid=e_ok, check=delta_ok)
    call(f"{what}.to_approx_dp({delta!r})", obj.to_approx_dp, delta, valid=None if d_ok else d_ok)
    call(f"{what}.compose({k!r})", obj.compose, k, valid=k_ok, check=guarantee_ok)
    call(f"{what}.group({k!r})", obj.group, k, valid=None if k_ok else k_ok)
    call(f"{what}.to_zcdp()", obj.to_zcdp, valid=None)
    call(f"{what}.to_rdp()", obj.to_rdp, valid=None)


PROTOCOL_ARGS = st.tuples(orders_arg(), arg("prob_open"), arg("nonneg"), arg("count"))


@pytest.mark.parametrize("examples", BUDGETS)
def test_fuzz_guarantees(examples):
    """Guarantee constructors with hostile parameters, then the whole protocol."""
    def body(x: Any) -> None:
        (name, ctor, kv, ok), draws = x
        what = _desc(name, kv)
        g = call(what, ctor, *[v for _, v in kv], valid=ok)
        if g is not None:
            protocol(what, g, draws)

    run(st.tuples(built(GUARANTEES), PROTOCOL_ARGS), body, examples)


@pytest.mark.parametrize("examples", BUDGETS)
def test_fuzz_mechanisms(examples):
    """Mechanism constructors with hostile parameters, then the whole protocol."""
    def body(x: Any) -> None:
        (name, ctor, kv, ok), draws = x
        what = _desc(name, kv)
        m = call(what, ctor, *[v for _, v in kv], valid=ok)
        if m is not None:
            protocol(what, m, draws)

    run(st.tuples(built(MECHANISMS), PROTOCOL_ARGS), body, examples)


@pytest.mark.parametrize("examples", BUDGETS)
def test_fuzz_rdp_curves(examples):
    """RDP.from_points and RDP.from_point with hostile points, then the protocol."""
    eps_arrays = st.one_of(arg("nonneg_ext"), st.lists(st.floats(0, 1e6), min_size=1, max_size=6).map(
        lambda v: (np.array(v), True)), st.sampled_from([np.array([]), np.array([math.nan])]).map(lambda a: (a, False)))
    pts = st.one_of(
        st.tuples(orders_arg(), eps_arrays).map(lambda t: ((t[0][0], t[1][0]), None if t[0][1] and t[1][1] else
                                                           (False if t[0][1] is False or t[1][1] is False else None))),
        st.tuples(arg("order"), arg("nonneg_ext")).map(lambda t: ((t[0][0], t[1][0]), all_ok([t[0][1], t[1][1]]))),
    )

    def body(x: Any) -> None:
        ((a, e), ok), draws = x
        # lists and arrays are array-like for from_points even where the scalar domain says no
        arrayish = isinstance(a, (list, np.ndarray)) or isinstance(e, (list, np.ndarray))
        c = call(f"RDP.from_points({a!r}, {e!r})", renyi.RDP.from_points, a, e,
                 valid=None if ok or (arrayish and not _junk(a) and not _junk(e)) else ok)
        if c is not None:
            protocol(f"RDP.from_points({a!r}, {e!r})", c, draws)
        scalar = np.ndim(a) == 0 and np.ndim(e) == 0 and not isinstance(a, (list, str, bytes)) and not isinstance(
            e, (list, str, bytes))
        c = call(f"RDP.from_point({a!r}, {e!r})", renyi.RDP.from_point, a, e,
                 valid=(None if ok else ok) if scalar else False)
        if c is not None:
            protocol(f"RDP.from_point({a!r}, {e!r})", c, draws)

    run(st.tuples(pts, PROTOCOL_ARGS), body, examples)


# ----- transformers -------------------------------------------------------------------------------
@pytest.mark.parametrize("examples", BUDGETS)
def test_fuzz_subsampling(examples):
    """Subsampling with hostile rates, nested transformers; subsampling never costs more
    than the mechanism it subsamples."""
    def body(x: Any) -> None:
        mech, (rate, r_ok), nest, (delta, d_ok), draws = x
        base = renyi.PoissonSubsampled if nest[0] else renyi.SubsampledWithoutReplacement
        inner = mech
        what = f"{base.__name__}({inner!r}, {rate!r})"
        s = call(what, base, inner, rate, valid=None if r_ok else r_ok)
        if s is None:
            return
        protocol(what, s, draws)
        if d_ok:
            e_sub = call(f"{what}.epsilon({delta!r})", s.epsilon, delta, check=eps_ok)
            base_g = inner.guarantee_under(s.neighbouring) if hasattr(inner, "guarantee_under") else inner
            e_base = call(f"{inner!r} under {s.neighbouring}.epsilon({delta!r})", base_g.epsilon, delta, check=eps_ok)
            if e_sub is not None and e_base is not None and e_sub > e_base * (1 + 1e-9) + 1e-12:
                from _fuzz_oracle import record

                record("invalid_result", f"{what}.epsilon({delta!r}) = {e_sub!r} > unsubsampled {e_base!r}")
        if nest[1]:
            w2 = f"{base.__name__}({what}, {rate!r})"
            s2 = call(w2, base, s, rate, valid=None if r_ok else r_ok)
            if s2 is not None and d_ok:
                call(f"{w2}.epsilon({delta!r})", s2.epsilon, delta, check=eps_ok)

    run(st.tuples(valid_mechanism(), arg("unit"), st.tuples(st.booleans(), st.booleans()), arg("prob_open"),
                  PROTOCOL_ARGS), body, examples)


@pytest.mark.parametrize("examples", BUDGETS)
def test_fuzz_compose(examples):
    """compose over heterogeneous lists with hostile counts."""
    item = st.one_of(valid_guarantee(), valid_mechanism(),
                     st.tuples(st.one_of(valid_guarantee(), valid_mechanism()), arg("count")))

    def body(x: Any) -> None:
        items, (delta, d_ok) = x
        ok = all_ok([it[1][1] if isinstance(it, tuple) else True for it in items]) if items else False
        flat = [(it[0], it[1][0]) if isinstance(it, tuple) else it for it in items]
        g = call(f"compose{tuple(flat)!r}", renyi.compose, *flat, valid=None if ok else ok, check=guarantee_ok)
        if g is not None:
            call(f"compose{tuple(flat)!r}.epsilon({delta!r})", g.epsilon, delta, valid=d_ok, check=eps_ok)

    run(st.tuples(st.lists(item, min_size=0, max_size=4), arg("prob_open")), body, examples)


# ----- conversions --------------------------------------------------------------------------------
CONVERSIONS: list[tuple[str, list[str], Any]] = [
    ("pure_dp_rdp", ["nonneg", "orders_kl"], rdp_ok),
    ("pure_dp_to_zcdp", ["nonneg"], None),
    ("pure_dp_delta", ["nonneg", "nonneg_ext"], delta_ok),
    ("pure_dp_epsilon", ["nonneg", "unit"], eps_ok),
    ("approx_dp_delta", ["nonneg", "unit_co", "nonneg_ext"], delta_ok),
    ("approx_dp_epsilon", ["nonneg", "unit_co", "unit"], eps_ok),
    ("approx_dp_to_approx_zcdp", ["nonneg", "unit_co"], None),
    ("zcdp_to_rdp", ["nonneg", "nonneg", "orders"], rdp_ok),
    ("zcdp_to_approx_dp", ["nonneg", "prob_open", "nonneg"], eps_ok),
    ("zcdp_to_approx_dp_bs21", ["nonneg", "prob_open", "nonneg"], eps_ok),
    ("zcdp_to_approx_dp_bs38", ["nonneg", "prob_open", "nonneg"], eps_ok),
    ("zcdp_to_approx_dp_cks", ["nonneg", "prob_open", "nonneg"], eps_ok),
    ("zcdp_delta", ["nonneg", "nonneg", "nonneg_ext"], delta_ok),
    ("zcdp_delta_bs21", ["nonneg", "nonneg", "nonneg_ext"], delta_ok),
    ("zcdp_delta_bs38", ["nonneg", "nonneg", "nonneg_ext"], delta_ok),
    ("zcdp_delta_cks", ["nonneg", "nonneg", "nonneg_ext"], delta_ok),
    ("zcdp_rho_for", ["nonneg", "prob_open", "nonneg"], None),  # ε = 0 is in the domain: ρ = 0
    ("mcdp_to_zcdp", ["nonneg", "nonneg"], None),
    ("approx_zcdp_to_approx_dp", ["nonneg", "nonneg", "unit_co", "prob_open"], eps_ok),
    ("rdp_point_to_approx_dp", ["order", "nonneg_ext", "prob_open"], eps_ok),
    ("rdp_point_delta", ["order", "nonneg_ext", "nonneg"], delta_ok),
    ("gdp_delta", ["nonneg", "nonneg"], delta_ok),
    ("gdp_to_approx_dp", ["nonneg", "prob_open"], eps_ok),
    ("tv_bound", ["nonneg_ext"], delta_ok),
]


def _conv_args(kinds: list[str]) -> st.SearchStrategy[list[tuple[Any, bool | None]]]:
    return st.tuples(*[orders_arg(kl=k == "orders_kl") if k.startswith("orders") else arg(k)
                       for k in kinds]).map(list)


@pytest.mark.parametrize("examples", BUDGETS)
def test_fuzz_conversions(examples):
    """Every named conversion with hostile scalars."""
    def one(spec: tuple[str, list[str], Any]) -> st.SearchStrategy[Any]:
        return _conv_args(spec[1]).map(lambda a, spec=spec: (spec, a))

    def body(x: Any) -> None:
        (name, _, check), args = x
        fn = getattr(conv, name)
        vals = [v for v, _ in args]
        ok = all_ok([o for _, o in args])
        call(f"conversions.{name}{tuple(vals)!r}", fn, *vals, valid=ok, check=check)

    run(st.sampled_from(CONVERSIONS).flatmap(one), body, examples)


@pytest.mark.parametrize("examples", BUDGETS)
def test_fuzz_curve_conversions(examples):
    """Conversions that take a curve, with hostile δ and ε."""
    def body(x: Any) -> None:
        g, (delta, d_ok), (eps, e_ok) = x
        curve = g.to_rdp() if hasattr(g, "to_rdp") else g
        for name, v, ok, check in (("rdp_to_approx_dp", delta, d_ok, eps_ok),
                                   ("rdp_to_approx_dp_mironov", delta, d_ok, eps_ok),
                                   ("rdp_delta", eps, e_ok, delta_ok)):
            call(f"conversions.{name}({curve!r}, {v!r})", getattr(conv, name), curve, v, valid=None if ok else ok,
                 check=check)
        call(f"conversions.rdp_to_zcdp({curve!r})", conv.rdp_to_zcdp, curve, valid=None)

    gs = st.one_of(st.builds(renyi.ZCDP, st.floats(0, 10)), st.builds(renyi.PureDP, st.floats(0, 10)),
                   st.builds(renyi.GDP, st.floats(0, 10)),
                   valid_mechanism().map(lambda m: m.guarantee).filter(lambda g: not isinstance(g, renyi.ApproxDP)))
    run(st.tuples(gs, arg("prob_open"), arg("nonneg")), body, examples)


# ----- calibration ----------------------------------------------------------------------------------
@pytest.mark.parametrize("examples", BUDGETS)
def test_fuzz_calibration(examples):
    """The calibrators with hostile targets; what they return meets the target."""
    def meets(target_eps: float, delta: float) -> Any:
        def check(c: Any) -> str | None:
            a = c.achieved
            got = a.epsilon(delta) if delta > 0 else float(a.rdp(math.inf))
            if got > target_eps * (1 + 1e-9) + 1e-12:
                return f"achieved ε {got!r} above the target {target_eps!r}"
            return None
        return check

    def body(x: Any) -> None:
        (eps, e_ok), (delta, d_ok), (sens, s_ok), (count, c_ok), which = x
        if which == 0:
            ok = all_ok([e_ok and (eps > 0 if e_ok else e_ok), d_ok, s_ok, c_ok])
            call(f"calibrate_gaussian({eps!r}, {delta!r}, {sens!r}, {count!r})", renyi.calibrate_gaussian, eps, delta,
                 sens, count, valid=None if ok else ok,
                 check=meets(eps, delta) if ok else None)
        elif which == 1:
            ok = all_ok([e_ok, s_ok, c_ok])
            call(f"calibrate_laplace({eps!r}, {sens!r}, {count!r})", renyi.calibrate_laplace, eps, sens, count,
                 valid=None if ok else ok)
        else:
            target = call(f"ApproxDP({eps!r}, {delta!r})", renyi.ApproxDP, eps, delta,
                          valid=all_ok([in_domain("nonneg", eps), in_domain("unit_co", delta)]))
            if target is not None:
                call(f"calibrate(Gaussian, {target!r})", renyi.calibrate, lambda s: renyi.Gaussian(s), target, valid=None)

    run(st.tuples(arg("pos"), arg("prob_open"), arg("pos"), arg("count"), st.integers(0, 2)), body, examples)


# ----- the accountant -----------------------------------------------------------------------------
@pytest.mark.parametrize("examples", BUDGETS)
def test_fuzz_accountant(examples):
    """In-memory accountants with hostile budgets and spends: a refusal spends nothing."""
    def body(x: Any) -> None:
        budget, items, (delta, d_ok) = x
        acct = call(f"Accountant({budget!r})", renyi.Accountant, budget, valid=None)
        if acct is None:
            return
        for it, (k, k_ok) in items:
            before = acct.state["spends"]
            r = call(f"{acct!r}.spend({it!r}, {k!r})", acct.spend, it, k, valid=None if k_ok else k_ok)
            if r is None and acct.state["spends"] != before:
                from _fuzz_oracle import record

                record("invalid_result", f"a refused spend of {it!r} was recorded")
            call(f"{acct!r}.epsilon({delta!r})", acct.epsilon, delta, valid=d_ok, check=eps_ok)
        call(f"{acct!r}.remaining", lambda: acct.remaining, valid=None)
        call(f"{acct!r}.report()", acct.report, valid=None)

    budgets = st.one_of(st.none(), valid_guarantee(), st.builds(renyi.ApproxDP, st.floats(0.01, 10), st.floats(1e-9, 0.1)))
    items = st.lists(st.tuples(st.one_of(valid_guarantee(), valid_mechanism()), arg("count")), max_size=3)
    run(st.tuples(budgets, items, arg("prob_open")), body, examples)


# ----- neighbouring relations -----------------------------------------------------------------------
@pytest.mark.parametrize("examples", BUDGETS)
def test_fuzz_neighbouring(examples):
    """Compositions of items under random relations: stated under the common relation
    (replace-one when they mix) with a valid ε, or refused with a renyi error; accountants
    under a random relation convert or refuse, recording nothing when they refuse; hostile
    relation values are a DomainError."""
    def body(x: Any) -> None:
        items, relation, (delta, d_ok) = x
        rels = {getattr(o, "neighbouring", "add_remove") for o, _ in items}
        expected = rels.pop() if len(rels) == 1 else "replace_one"

        def same_relation(g: Any) -> str | None:
            return None if g.neighbouring == expected else f"stated under {g.neighbouring!r}, expected {expected!r}"

        total = call(f"compose{tuple(items)!r}", renyi.compose, *items, valid=None, check=same_relation)
        if total is not None:
            call(f"{total!r}.epsilon({delta!r})", total.epsilon, delta, valid=d_ok, check=eps_ok)
        target = relation if isinstance(relation, str) and relation in ("add_remove", "replace_one") else None
        for obj, _ in items:
            call(f"ZCDP(0.1, neighbouring={relation!r})", renyi.ZCDP, 0.1, neighbouring=relation,
                 valid=target is not None)
            if hasattr(obj, "guarantee_under"):
                call(f"{obj!r}.guarantee_under({relation!r})", obj.guarantee_under, relation,
                     valid=None if target is not None else False)
        acct = call(f"Accountant(neighbouring={relation!r})", renyi.Accountant, neighbouring=relation,
                    valid=target is not None or relation is None)  # None: the default relation
        if acct is not None:
            for obj, k in items:
                before = acct.state["spends"]
                r = call(f"{acct!r}.spend({obj!r}, {k!r})", acct.spend, obj, k, valid=None)
                if r is None and acct.state["spends"] != before:
                    from _fuzz_oracle import record

                    record("invalid_result", f"a refused spend of {obj!r} was recorded")

    hostile = st.one_of(RELATIONS, st.sampled_from(["", "Replace_One", "add-remove", "both"]), st.none(),
                        st.integers(-2, 2))
    items = st.lists(st.tuples(st.one_of(valid_guarantee(), valid_mechanism()), st.integers(1, 50)),
                     min_size=1, max_size=4)
    run(st.tuples(items, hostile, arg("prob_open")), body, examples)


def test_fuzz_counts_are_reported():
    """The oracle counted something (the session summary prints the totals)."""
    assert COUNTS["tried"] >= 0 and in_domain("pos", 1.0)
