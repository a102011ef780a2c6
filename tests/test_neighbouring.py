"""One neighbouring relation per composition (issue #16).

Every guarantee and mechanism is stated under add/remove (the default) or replace-one. A
composition of both is stated under replace-one, with each add/remove item converted (a noise
mechanism with its sensitivity doubled, anything else by group privacy of two); what cannot be
converted is refused, naming the items. Ground truths: the exact Gaussian (BW18 Thm 8, in
mpmath), exact Laplace Rényi divergences (mpmath quadrature) and randomized response.
"""

from __future__ import annotations

import json
import math
import pickle
import sqlite3
import subprocess
import sys

import mpmath as mp
import numpy as np
import pytest

import renyi
from renyi import (
    GDP,
    MCDP,
    RDP,
    ZCDP,
    Accountant,
    ApproxDP,
    ApproxRDP,
    ApproxZCDP,
    Gaussian,
    Laplace,
    PureDP,
    compose,
)
from renyi import routes
from renyi._neighbouring import align, common_relation, to_relation
from renyi.definitions.base import items_of
from renyi.errors import ConversionError, DomainError, LedgerError, NeighbouringError
from renyi.ledger import guarantee_from_json, guarantee_to_json
from renyi.mechanisms import DiscreteGaussian, DiscreteLaplace, ExponentialMechanism, RandomizedResponse
from renyi.pipeline import PipelineError, parse_pipeline
from renyi.report import compute_report
from renyi.subsampling import PoissonSubsampled

from _exact import gaussian_epsilon

RO = "replace_one"
AR = "add_remove"
ORDERS = np.array([1.01, 1.5, 2.0, 3.0, 5.0, 8.0, 16.0, 64.0])


def _laplace_divergence(alpha: float, shift: float, b: float = 1.0) -> float:
    """D_α(Lap(0, b) ‖ Lap(shift, b)) by quadrature (mpmath), the exact ground truth."""
    mp.mp.dps = 30
    a, s = mp.mpf(alpha), mp.mpf(shift)

    def f(x: mp.mpf) -> mp.mpf:
        p = mp.exp(-abs(x) / b) / (2 * b)
        q = mp.exp(-abs(x - s) / b) / (2 * b)
        return p**a * q ** (1 - a)

    integral = mp.quad(f, [-mp.inf, 0, s, mp.inf])
    return float(mp.log(integral) / (a - 1))


# --------------------------------------------------------------------------------------
# Every guarantee and mechanism knows its relation
# --------------------------------------------------------------------------------------
GUARANTEES = [
    lambda nb: PureDP(1.0, neighbouring=nb),
    lambda nb: ApproxDP(1.0, 1e-6, neighbouring=nb),
    lambda nb: ZCDP(0.5, 0.1, neighbouring=nb),
    lambda nb: ApproxZCDP(0.5, 0.0, 1e-6, neighbouring=nb),
    lambda nb: MCDP(0.6, 1.0, neighbouring=nb),
    lambda nb: GDP(1.0, neighbouring=nb),
    lambda nb: RDP.from_points([2.0, 8.0], [0.5, 1.0]) if nb == AR else renyi._neighbouring.with_relation(
        RDP.from_points([2.0, 8.0], [0.5, 1.0]), nb),
]


@pytest.mark.parametrize("make", GUARANTEES)
def test_bare_guarantee_is_add_remove_and_relation_is_part_of_the_value(make):
    """A guarantee constructed without a relation is add/remove (the library's default); the
    relation takes part in equality, hashing, repr and pickling."""
    a, r = make(AR), make(RO)
    assert a.neighbouring == AR and r.neighbouring == RO
    assert a != r and len({a, r}) == 2
    assert "replace_one" in repr(r) and "neighbouring" not in repr(a)
    if not isinstance(r, RDP):  # point curves pickle by value too, but compare by their arrays
        assert pickle.loads(pickle.dumps(r)) == r


def test_bad_relation_is_a_domain_error():
    for bad in ("replace", "", None, 1):
        with pytest.raises(DomainError, match="neighbouring must be one of"):
            ZCDP(0.5, neighbouring=bad)  # type: ignore[arg-type]
    with pytest.raises(DomainError, match="neighbouring"):
        PureDP(1.0, neighbouring="both")


@pytest.mark.parametrize("make", GUARANTEES)
def test_operations_keep_the_relation(make):
    """Composition, group privacy and conversions between definitions do not change which
    datasets are neighbours."""
    g = make(RO)
    assert g.compose(3).neighbouring == RO
    assert (g * 2).neighbouring == RO
    if not (isinstance(g, (ApproxZCDP, ApproxDP)) and float(g.delta) > 0):
        assert g.group(2).neighbouring == RO
    try:
        assert g.to_rdp().neighbouring == RO
    except ConversionError:
        pass
    try:
        assert g.to_zcdp().neighbouring == RO
    except ConversionError:
        pass
    assert g.to_approx_dp(1e-5).neighbouring == RO


def test_mechanism_guarantee_carries_the_mechanism_relation():
    assert Gaussian(1.0).guarantee.neighbouring == AR
    assert Gaussian(1.0, neighbouring=RO).guarantee == GDP(1.0, neighbouring=RO)
    assert RandomizedResponse(1.0).guarantee.neighbouring == RO
    assert Laplace(1.0, neighbouring=RO).compose(4).neighbouring == RO


# --------------------------------------------------------------------------------------
# compose: same relation unchanged; mixed converted; invalid refused
# --------------------------------------------------------------------------------------
def test_same_relation_is_unchanged():
    """All add/remove or all replace-one: nothing is converted, the numbers are as before."""
    g, lap = Gaussian(2.0), Laplace(3.0)
    c = compose((g, 5), lap)
    assert c.neighbouring == AR
    assert items_of(c) == ((g, 5), (lap, 1))
    rr = RandomizedResponse(1.0)
    c2 = compose(rr, Gaussian(2.0, neighbouring=RO))
    assert c2.neighbouring == RO and items_of(c2) == ((rr, 1), (Gaussian(2.0, neighbouring=RO), 1))
    assert compose(GDP(1.0), GDP(1.0)) == GDP(math.sqrt(2.0))


def test_mixed_gaussian_is_restated_with_doubled_sensitivity():
    """A Gaussian with add/remove sensitivity Δ has replace-one sensitivity 2Δ: the routes see
    Gaussian(σ, 2Δ, replace_one), whose GDP equals the group-of-two bound 2μ."""
    rr = RandomizedResponse(1.0)
    c = compose((Gaussian(2.0, 1.5), 10), rr)
    assert c.neighbouring == RO
    (m, k), (r, _) = items_of(c)
    assert m == Gaussian(2.0, 3.0, neighbouring=RO) and k == 10 and r is rr
    assert m.guarantee.mu == GDP(1.5 / 2.0).group(2).mu
    assert routes.items(c).items == items_of(c)  # what the routes see is the converted items
    # + and k * spell the same thing
    assert (Gaussian(2.0, 1.5).compose(10) + rr).epsilon(1e-6) == pytest.approx(c.epsilon(1e-6), rel=1e-12)


def test_converted_gaussian_is_valid_against_the_exact_replace_one_epsilon():
    """Ground truth: replace-one neighbours of a sum query with add/remove sensitivity 1 can
    differ by 2 (remove one record of value 1, add one of value −1). The restated Gaussian's ε
    is exactly the Gaussian's ε at μ = 2/σ (BW18 Thm 8 in mpmath), never below it."""
    for sigma in (0.5, 1.0, 3.0, 20.0):
        m = to_relation(Gaussian(sigma), RO)
        for delta in (1e-3, 1e-6, 1e-9):
            truth = gaussian_epsilon(2.0 / sigma, delta)
            got = m.epsilon(delta)
            assert got >= truth * (1 - 1e-9) - 1e-12
            assert got <= truth * (1 + 1e-6) + 1e-9


def test_converted_laplace_is_exact_and_tighter_than_group_privacy():
    """Laplace restated with sensitivity 2Δ: its curve equals the exact divergence
    D_α(Lap(0, b) ‖ Lap(2Δ, b)) (mpmath), and is below the generic group-of-two RDP bound
    ([BS16] Lemma 26), which is valid (above the truth) too."""
    lap = Laplace(2.0, 1.0)
    restated = to_relation(lap, RO)
    assert restated == Laplace(2.0, 2.0, neighbouring=RO)
    group = lap.guarantee.group(2)
    for a in (1.5, 2.0, 4.0, 10.0):
        truth = _laplace_divergence(a, 2.0, 2.0)
        assert float(restated.rdp(a)) == pytest.approx(truth, rel=1e-8)
        assert float(group.rdp(a)) >= truth * (1 - 1e-9)
        assert float(restated.rdp(a)) <= float(group.rdp(a)) * (1 + 1e-12)
    assert lap.guarantee_under(RO) == restated.guarantee


def test_discrete_mechanisms_double_their_sensitivity():
    assert to_relation(DiscreteGaussian(3, 1), RO) == DiscreteGaussian(3, 2, neighbouring=RO)
    assert to_relation(DiscreteLaplace(2.0, 1), RO) == DiscreteLaplace(2.0, 2, neighbouring=RO)


@pytest.mark.parametrize(("g", "expected"), [
    (PureDP(0.7), PureDP(1.4, neighbouring=RO)),
    (ApproxDP(0.5, 1e-6), ApproxDP(1.0, (1 + math.exp(0.5)) * 1e-6, neighbouring=RO)),
    (ZCDP(0.1, 0.2), ZCDP(0.4, 0.6000000000000001, neighbouring=RO)),  # [BS16] Prop. 27, k = 2: (ξ·2·H_2, 4ρ)
    (GDP(0.8), GDP(1.6, neighbouring=RO)),
])
def test_guarantee_conversions_use_the_documented_factors(g, expected):
    got = to_relation(g, RO)
    assert type(got) is type(expected) and got.neighbouring == RO
    for name in ("epsilon", "rho", "mu", "xi"):
        if hasattr(expected, name) and not callable(getattr(type(expected), name, None)):
            assert float(getattr(got, name)) == pytest.approx(float(getattr(expected, name)), rel=1e-12)
    if isinstance(g, ApproxDP):
        assert float(got.delta) == pytest.approx(float(expected.delta), rel=1e-12)
        assert float(got.delta) >= float(expected.delta)  # rounded up, never down


def test_rdp_group_of_two_is_valid_for_laplace_and_gaussian():
    """The RDP row: the group-of-two curve of an add/remove curve bounds the exact replace-one
    divergence (Laplace by quadrature; Gaussian exactly 4ρα), at every tested order."""
    lap_curve = Laplace(1.0).guarantee
    as_points = RDP.from_points(ORDERS, lap_curve.rdp(ORDERS))  # a bare curve: no closed form known
    converted = to_relation(as_points, RO)
    assert converted.neighbouring == RO
    for a in (1.5, 2.0, 4.0):
        assert float(converted.rdp(a)) >= _laplace_divergence(a, 2.0) * (1 - 1e-9)
    gauss = RDP(lambda a: 0.5 * a, convex=True, label="ρ = 0.5")
    conv = to_relation(gauss, RO)
    assert np.all(np.asarray(conv.rdp(ORDERS)) >= 4 * 0.5 * ORDERS * (1 - 1e-12))


def test_other_mechanisms_use_group_privacy():
    """No sensitivity restatement is known for the exponential mechanism (monotonicity need
    not survive a replacement) or a subsampled mechanism: their group-of-two guarantee."""
    em = ExponentialMechanism(1.0)
    g = to_relation(em, RO)
    assert g.neighbouring == RO and float(g.rdp(math.inf)) == pytest.approx(2.0)
    sub = PoissonSubsampled(Gaussian(1.0), 0.01)
    gs = to_relation(sub, RO)
    assert gs.neighbouring == RO
    assert np.all(np.asarray(gs.rdp(ORDERS)) >= np.asarray(sub.rdp(ORDERS)))
    c = compose((sub, 100), RandomizedResponse(1.0))
    assert c.neighbouring == RO and math.isfinite(c.epsilon(1e-5))


def test_replace_one_never_becomes_add_remove():
    """A replace-one guarantee does not imply an add/remove one (publishing n is 0-DP under
    replace-one): refused, naming the item."""
    rr = RandomizedResponse(1.0)
    with pytest.raises(NeighbouringError, match=r"RandomizedResponse\(epsilon=1.0"):
        rr.guarantee_under(AR)
    with pytest.raises(ConversionError):  # still the documented error of guarantee_under
        to_relation(ZCDP(0.5, neighbouring=RO), AR)


def test_invalid_mix_is_refused_naming_every_item():
    """Approximate zCDP / RDP with δ > 0 have no group privacy ([BS16] §8): an add/remove one
    cannot join a replace-one composition. One error names all of them."""
    az = ApproxZCDP(0.1, 0.0, 1e-6)
    ar = ApproxRDP(RDP.from_point(2.0, 0.5), 1e-7)
    with pytest.raises(NeighbouringError) as info:
        compose(az, ar, Gaussian(1.0), RandomizedResponse(1.0))
    msg = str(info.value)
    assert "ApproxZCDP(rho=0.1" in msg and "ApproxRDP(" in msg and "replace-one" in msg
    assert "Gaussian" not in msg  # the Gaussian converts
    assert isinstance(info.value, DomainError) and isinstance(info.value, ValueError)
    assert info.value.name == "neighbouring" and len(info.value.value) == 2
    with pytest.raises(NeighbouringError):
        az + RandomizedResponse(1.0)
    # the same items under one relation compose fine
    assert compose(az, Gaussian(1.0)).neighbouring == AR


def test_common_relation_and_align():
    assert common_relation([(Gaussian(1.0), 1)]) == AR
    assert common_relation([(Gaussian(1.0), 1), (RandomizedResponse(1.0), 2)]) == RO
    target, items = align([(Gaussian(1.0), 3), (PureDP(1.0), 1)], RO)
    assert target == RO and items == ((Gaussian(1.0, 2.0, neighbouring=RO), 3), (PureDP(2.0, neighbouring=RO), 1))


def test_nested_compositions_are_restated_item_by_item():
    inner = Gaussian(1.0).compose(4) + Laplace(2.0)
    outer = compose(inner, RandomizedResponse(0.5))
    assert outer.neighbouring == RO
    assert items_of(outer) == ((Gaussian(1.0, 2.0, neighbouring=RO), 4), (Laplace(2.0, 2.0, neighbouring=RO), 1),
                               (RandomizedResponse(0.5), 1))


def test_exact_route_on_mixed_gaussians():
    """Gaussians under both relations: all replace-one, μ² adding exactly."""
    c = compose(Gaussian(2.0), Gaussian(3.0, neighbouring=RO))
    mu = math.sqrt((2.0 / 2.0) ** 2 + (1.0 / 3.0) ** 2)
    assert c == GDP(mu, neighbouring=RO)
    assert c.best_epsilon(1e-6).method == "exact"
    assert c.epsilon(1e-6) == pytest.approx(GDP(mu).epsilon(1e-6), rel=1e-9)


# --------------------------------------------------------------------------------------
# Accountant and ledger
# --------------------------------------------------------------------------------------
def test_accountant_with_replace_one_budget_converts_add_remove_spends():
    acct = Accountant(ZCDP(1.0, neighbouring=RO))
    assert acct.neighbouring == RO
    acct.spend(Gaussian(2.0))  # ρ = 1/8 under add/remove → 4ρ = 1/2 under replace-one
    acct.spend(RandomizedResponse(0.5))
    assert acct.spent.neighbouring == RO and acct.remaining.neighbouring == RO
    rr_rho = 0.5 * math.tanh(0.25)
    assert acct.remaining.rho == pytest.approx(1.0 - 0.5 - rr_rho, rel=1e-9)
    assert acct.history[0].mechanism == repr(Gaussian(2.0, 2.0, neighbouring=RO))
    assert acct.history[0].guarantee.neighbouring == RO
    assert acct.report().neighbouring == RO and acct.report().to_dict()["neighbouring"] == RO
    assert not acct.can_spend(Gaussian(1.0))  # 4 · 1/2 = 2 > what is left


def test_accountant_under_add_remove_refuses_replace_one_spends_and_records_nothing():
    acct = Accountant(ZCDP(1.0))
    acct.spend(Gaussian(4.0))
    with pytest.raises(NeighbouringError, match="this accountant is add/remove.*RandomizedResponse"):
        acct.spend(RandomizedResponse(0.5))
    with pytest.raises(NeighbouringError):
        acct.can_spend(PureDP(0.1, neighbouring=RO))
    assert len(acct.history) == 1
    # without a budget the default is add/remove too; a relation can be given
    with pytest.raises(NeighbouringError, match="neighbouring='replace_one'"):
        Accountant().spend(RandomizedResponse(0.5))
    free = Accountant(neighbouring=RO)
    free.spend(Laplace(1.0))
    assert free.epsilon(1e-6) == pytest.approx(Laplace(1.0, 2.0).epsilon(1e-6), rel=1e-9)


def test_accountant_relation_must_match_the_budget():
    with pytest.raises(DomainError, match="budget's relation"):
        Accountant(ZCDP(1.0), neighbouring=RO)
    with pytest.raises(DomainError, match="neighbouring must be one of"):
        Accountant(neighbouring="nope")
    assert Accountant(ZCDP(1.0, neighbouring=RO), neighbouring=RO).neighbouring == RO


def test_ledger_records_the_relation(tmp_path):
    path = str(tmp_path / "nb.db")
    with Accountant(ApproxDP(10.0, 1e-5, neighbouring=RO), ledger=path) as acct:
        acct.spend(Gaussian(3.0), count=2)
        acct.spend(RandomizedResponse(0.3))
    con = sqlite3.connect(path)
    header = {k: json.loads(v) for k, v in con.execute("SELECT key, value FROM renyi_header")}
    con.close()
    assert header["neighbouring"] == RO and header["budget"]["neighbouring"] == RO
    with Accountant(ledger=path) as again:  # the ledger brings its relation
        assert again.neighbouring == RO and again.budget.neighbouring == RO
        assert [s.record["guarantee"]["neighbouring"] for s in again.history] == [RO, RO]
        assert again.history[0].guarantee.neighbouring == RO
    with pytest.raises(LedgerError, match="replace-one"):
        Accountant(ledger=path, neighbouring=AR)


def test_ledger_guarantee_json_round_trips_the_relation_and_defaults_old_rows():
    for g in (GDP(1.0, neighbouring=RO), PureDP(1.0, neighbouring=RO), ApproxDP(1.0, 1e-6, neighbouring=RO),
              ZCDP(0.3, neighbouring=RO), ApproxZCDP(0.3, 0.0, 1e-6, neighbouring=RO), MCDP(1.0, 1.0, neighbouring=RO)):
        obj = guarantee_to_json(g)
        assert obj["neighbouring"] == RO and guarantee_from_json(obj) == g
    curve = to_relation(Laplace(1.0).guarantee, RO)
    back = guarantee_from_json(guarantee_to_json(curve, orders=ORDERS))
    assert back.neighbouring == RO and np.all(np.asarray(back.rdp(ORDERS)) >= np.asarray(curve.rdp(ORDERS)) * (1 - 1e-12))
    # a row written before relations were recorded is read under the default
    assert guarantee_from_json({"type": "ZCDP", "rho": 0.5, "xi": 0.0}) == ZCDP(0.5)
    with pytest.raises(LedgerError):
        guarantee_from_json({"type": "ZCDP", "rho": 0.5, "xi": 0.0, "neighbouring": "sideways"})


def test_export_import_refuses_another_relation(tmp_path):
    src = Accountant(neighbouring=RO)
    src.spend(Gaussian(2.0))
    dump = str(tmp_path / "h.jsonl")
    src.export_jsonl(dump)
    with pytest.raises(LedgerError, match="replace_one"):
        Accountant().import_jsonl(dump)
    assert Accountant(neighbouring=RO).import_jsonl(dump) == 1


# --------------------------------------------------------------------------------------
# Pipeline files and the report
# --------------------------------------------------------------------------------------
def _pipe(mechanisms, **privacy):
    return parse_pipeline({"privacy": {"delta": 1e-5, **privacy}, "mechanism": mechanisms})


def test_pipeline_relation_and_guarantee_entries():
    p = _pipe([{"name": "z", "type": "zcdp", "rho": 0.1, "neighbouring": "replace_one"},
               {"name": "g", "type": "gaussian", "sigma": 2.0}])
    assert p.entries[0].mechanism == ZCDP(0.1, neighbouring=RO)
    assert p.neighbouring is None and p.relation() == RO
    assert p.aligned_items()[1] == (Gaussian(2.0, 2.0, neighbouring=RO), 1)
    p2 = _pipe([{"name": "r", "type": "rdp", "alpha": 4.0, "epsilon": 0.5, "neighboring": "replace_one"}])
    assert p2.entries[0].mechanism.neighbouring == RO
    forced = _pipe([{"name": "g", "type": "gaussian", "sigma": 2.0}], neighbouring="replace_one")
    assert forced.relation() == RO and forced.aligned_items()[0][0].sensitivity == 2.0
    with pytest.raises(PipelineError, match="neighbouring must be one of"):
        _pipe([{"name": "g", "type": "gaussian", "sigma": 2.0}], neighbouring="swap")


def test_report_states_the_relation_and_budget_check_uses_it():
    mechs = [{"name": "survey", "type": "randomized_response", "epsilon": 1.0},
             {"name": "counts", "type": "gaussian", "sigma": 4.0, "count": 10}]
    r = compute_report(_pipe(mechs, budget={"rho": 1.6}))
    d = r.to_dict()
    assert d["neighbouring"] == RO and "converted: counts" in d["neighbouring_note"]
    rho = 1.0 * math.tanh(0.5) + 10 * 4 * (1 / 32)  # RR's tight ρ + 10 Gaussians at 4ρ
    assert r.rho == pytest.approx(rho, rel=1e-9)
    assert r.budget.holds is (rho <= 1.6)
    same = compute_report(_pipe([{"name": "g", "type": "gaussian", "sigma": 4.0}]))
    assert same.neighbouring == AR and "converted" not in same.neighbouring_note


def test_report_refuses_an_impossible_relation_naming_the_entry():
    p = _pipe([{"name": "survey", "type": "randomized_response", "epsilon": 1.0}], neighbouring="add_remove")
    with pytest.raises(NeighbouringError, match="mechanism 'survey'"):
        compute_report(p)


def test_cli_report_prints_the_relation_and_refuses_cleanly(tmp_path):
    ok = tmp_path / "mix.toml"
    ok.write_text('[privacy]\ndelta = 1e-5\n\n[[mechanism]]\nname = "rr"\ntype = "randomized_response"\n'
                  'epsilon = 1.0\n\n[[mechanism]]\nname = "g"\ntype = "gaussian"\nsigma = 3.0\n')
    bad = tmp_path / "bad.toml"
    bad.write_text(ok.read_text().replace("delta = 1e-5", 'delta = 1e-5\nneighbouring = "add_remove"'))
    cmd = [sys.executable, "-c", "from renyi.cli import main; main()"]
    out = subprocess.run([*cmd, "report", str(ok), "--json"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["neighbouring"] == RO
    text = subprocess.run([*cmd, "report", str(ok)], capture_output=True, text=True, timeout=120)
    assert text.returncode == 0 and "neighbours: replace-one" in " ".join(text.stdout.split())
    err = subprocess.run([*cmd, "report", str(bad)], capture_output=True, text=True, timeout=120)
    assert err.returncode == 2 and "Traceback" not in err.stderr
    assert "mechanism 'rr'" in err.stderr and len(err.stderr.strip().splitlines()) == 1


def test_us_spelling_is_accepted_by_guarantees():
    assert ZCDP(0.5, neighboring=RO) == ZCDP(0.5, neighbouring=RO)
    assert ApproxDP(1.0, 1e-6, neighboring=RO).neighbouring == RO
    with pytest.raises(TypeError, match="both"):
        GDP(1.0, neighbouring=RO, neighboring=RO)


def test_limits_honour_a_guarantee_stated_under_replace_one():
    """The lower bounds of renyi.limits take a bare guarantee under their ``neighbouring``
    argument; a guarantee that names replace-one is taken as one, and an add/remove noise
    mechanism is restated with its sensitivity doubled (never looser than group privacy)."""
    from renyi.limits import packing_min_n

    z = ZCDP(0.05, neighbouring=RO)
    assert packing_min_n(20.0, z, 0.5, neighbouring="add_remove") == packing_min_n(20.0, z, 0.5)
    bare = ZCDP(0.05)
    assert packing_min_n(20.0, bare, 0.5, neighbouring="add_remove") <= packing_min_n(20.0, bare, 0.5)
    assert packing_min_n(20.0, Gaussian(3.0), 0.5) == packing_min_n(20.0, GDP(2.0 / 3.0, neighbouring=RO), 0.5)


def test_ledger_show_states_the_relation(tmp_path):
    path = str(tmp_path / "show.db")
    with Accountant(neighbouring=RO, ledger=path) as acct:
        acct.spend(Gaussian(3.0), 2)
        acct.spend(RandomizedResponse(0.5))
    cmd = [sys.executable, "-c", "from renyi.cli import main; main()", "ledger", "show", path]
    out = subprocess.run([*cmd, "--json"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["header"]["neighbouring"] == RO and data["totals"]["neighbouring"] == RO
    text = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert text.returncode == 0 and "replace-one neighbours" in " ".join(text.stdout.split())


def test_calibration_against_a_replace_one_target_restates_the_mechanism():
    """σ for a replace-one (ε, δ) target is the add/remove σ for sensitivity 2 (exact Gaussian),
    i.e. twice the add/remove σ; the achieved guarantee says replace-one."""
    a = renyi.calibrate(lambda s: Gaussian(s), ApproxDP(1.0, 1e-5))
    r = renyi.calibrate(lambda s: Gaussian(s), ApproxDP(1.0, 1e-5, neighbouring=RO))
    assert float(r.value) == pytest.approx(2 * float(a.value), rel=1e-6)
    assert r.achieved.neighbouring == RO and a.achieved.neighbouring == AR
    assert gaussian_epsilon(2.0 / float(r.value), 1e-5) <= 1.0 + 1e-9
    lap = renyi.calibrate(lambda b: Laplace(b), PureDP(1.0, neighbouring=RO))
    assert float(lap.value) == pytest.approx(2.0, rel=1e-6) and lap.achieved.neighbouring == RO


def test_routes_align_a_mixed_list():
    """A plain list of items given to the routes is stated under one relation too."""
    rr = RandomizedResponse(1.0)
    it = routes.items([(Gaussian(2.0), 3), (rr, 1)])
    assert it.items == ((Gaussian(2.0, 2.0, neighbouring=RO), 3), (rr, 1))
    assert routes.best_epsilon([(Gaussian(2.0), 3), (rr, 1)], 1e-6).value == pytest.approx(
        compose((Gaussian(2.0), 3), rr).epsilon(1e-6), rel=1e-12)
