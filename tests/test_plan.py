"""Declared plans: Accountant(budget, plan=...) bills a fixed sequence at its certified ε.

The rule (renyi.plan): the plan is billed once at creation at the smallest certified ε over
the routes at plan_delta; spends that follow it in order cost nothing more; any other spend
goes through the (ε, δ) filter on what the plan left; a plan that does not fit, a bad plan, a
plan under another relation and a spend after the plan with nothing left are refused with
nothing recorded.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from fractions import Fraction

import pytest

from renyi import Accountant, ApproxDP, Gaussian, Laplace, ZCDP, dpsgd
from renyi.accountant import replay
from renyi.errors import BudgetExceededError, ConversionError, DomainError, LedgerError, NeighbouringError
from renyi.ledger import open_readonly, verify
from renyi.routes import best_epsilon

SIGMA, RATE, STEPS, DELTA = 1.1, 0.01, 200, 1e-5


@pytest.fixture(scope="module")
def step():
    return dpsgd.step_mechanism(SIGMA, RATE)


@pytest.fixture(scope="module")
def dpsgd_eps():
    return dpsgd.epsilon(SIGMA, RATE, steps=STEPS, delta=DELTA)


def test_billed_epsilon_is_dpsgd_epsilon(step, dpsgd_eps):
    """A DP-SGD plan is billed at renyi.dpsgd.epsilon of the same schedule (its PLD upper end),
    inside the certified bracket, and below what the adaptive RDP filter would charge."""
    acct = Accountant(ApproxDP(3.0, DELTA), plan=dpsgd.plan(SIGMA, RATE, steps=STEPS))
    p = acct.plan
    assert p is not None and p.steps == STEPS and p.steps_run == 0
    assert p.epsilon == float(dpsgd_eps)
    assert dpsgd_eps.lower is not None and dpsgd_eps.lower <= p.epsilon
    assert p.lower == pytest.approx(dpsgd_eps.lower, rel=1e-12)
    assert p.delta == DELTA and p.method == "pld"
    # the adaptive filter alone needs more for the same steps
    plain = Accountant(ApproxDP(3.0, DELTA))
    plain.spend(step, STEPS)
    assert plain.budget.epsilon - plain.remaining.epsilon > p.epsilon


def test_multi_phase_plan_is_billed_as_the_composition():
    phases = dpsgd.plan(1.1, 0.01, steps=60) + dpsgd.plan(0.9, 0.02, steps=40)
    acct = Accountant(ApproxDP(3.0, DELTA), plan=phases)
    assert acct.plan.epsilon == best_epsilon(phases, DELTA).value
    assert [ph.count for ph in acct.plan.phases] == [60, 40]


def test_plan_steps_cost_nothing_more_and_early_stop_is_stated(step):
    acct = Accountant(ApproxDP(3.0, DELTA), plan=[(step, 50)], plan_delta=DELTA / 2)
    before = acct.remaining
    for _ in range(20):
        s = acct.spend(step)
        assert s.plan_phase == 0
    assert acct.remaining == before and acct.within_budget
    p = acct.plan
    assert p.steps_run == 20 and not p.finished
    assert "stopping before the end is allowed" in p.describe()
    assert acct.report().plan == p


def test_spend_after_plan_exhausted_is_refused_and_records_nothing(step):
    acct = Accountant(ApproxDP(3.0, DELTA), plan=[(step, 5)])
    for _ in range(5):
        acct.spend(step)
    assert acct.plan.finished
    n = len(acct.records)
    with pytest.raises(ConversionError, match="plan is exhausted"):
        acct.spend(step)
    with pytest.raises(ConversionError, match="off the declared plan"):
        acct.spend(Gaussian(100.0))
    assert len(acct.records) == n
    assert acct.can_spend  # the method exists; off-plan spends raise as spend does
    with pytest.raises(ConversionError):
        acct.can_spend(step)


def test_more_steps_than_the_phase_has_left_are_off_the_plan(step):
    acct = Accountant(ApproxDP(3.0, DELTA), plan=[(step, 5)])
    with pytest.raises(ConversionError, match="5 of 5 steps left"):
        acct.spend(step, 6)
    assert acct.spend(step, 5).plan_phase == 0


def test_off_plan_spends_go_through_the_filter_on_what_the_plan_left(step):
    budget = ApproxDP(3.0, DELTA)
    acct = Accountant(budget, plan=[(step, 50)], plan_delta=DELTA / 2)
    eps_p = acct.plan.epsilon
    left0 = acct.remaining
    alone = Accountant(ApproxDP(3.0 - eps_p, DELTA / 2))  # the filter on what the plan left, by itself
    assert left0.delta == DELTA / 2 and left0.epsilon == pytest.approx(alone.remaining.epsilon, abs=1e-12)
    s = acct.spend(Gaussian(8.0), label="eval")
    assert s.plan_phase is None
    assert acct.remaining.epsilon < left0.epsilon
    # the filter on what is left refuses what does not fit, recording nothing
    n = len(acct.records)
    with pytest.raises(BudgetExceededError, match="off the declared plan"):
        acct.spend(Gaussian(0.3))
    assert len(acct.records) == n
    # a standalone (ε − ε_P, δ/2) filter decides the same
    same = Accountant(ApproxDP(3.0 - eps_p, DELTA / 2))
    same.spend(Gaussian(8.0))
    assert same.remaining.epsilon == pytest.approx(acct.remaining.epsilon, abs=1e-9)


def test_plan_and_filter_add_up_to_at_most_the_budget_exactly(step):
    """ε_P + ε_O ≤ ε and δ_P + δ_O ≤ δ in exact rational arithmetic."""
    for eps, delta, pd in [(3.0, 1e-5, 3e-6), (2.2, 1e-6, 7.7e-7), (5.1, 3e-5, 1e-5)]:
        acct = Accountant(ApproxDP(eps, delta), plan=[(step, 40)], plan_delta=pd)
        f = acct._filter
        assert Fraction(f.spec.epsilon) + Fraction(f.eps_o) <= Fraction(eps)
        assert Fraction(f.spec.delta) + Fraction(f.delta_o) <= Fraction(delta)


def test_skipping_to_a_later_phase_ends_the_earlier_ones():
    a, b = dpsgd.step_mechanism(1.1, 0.01), dpsgd.step_mechanism(0.9, 0.02)
    acct = Accountant(ApproxDP(3.0, DELTA), plan=[(a, 10), (b, 10)], plan_delta=DELTA / 2)
    acct.spend(a, 3)
    assert acct.spend(b).plan_phase == 1
    assert acct.plan.stopped_early == (0,)
    assert "phase(s) 1 stopped early" in acct.plan.describe()
    # phase 0 is closed: its mechanism is now off the plan, billed by the filter
    assert acct.spend(a).plan_phase is None


def test_plan_that_does_not_fit_records_nothing(tmp_path, step):
    path = tmp_path / "no.db"
    with pytest.raises(BudgetExceededError, match="nothing was recorded"):
        Accountant(ApproxDP(0.5, DELTA), path, plan=[(step, 500)])
    assert not path.exists()


@pytest.mark.parametrize("bad", ["steps", [], 3, {"a": 1}, [(Gaussian(1.0), 0)], [(Gaussian(1.0), 1.5)],
                                 [Gaussian(1.0), "x"]])
def test_a_plan_that_is_not_a_composition_is_a_clear_error(tmp_path, bad):
    path = tmp_path / "bad.db"
    with pytest.raises(DomainError) as info:
        Accountant(ApproxDP(3.0, DELTA), path, plan=bad)
    assert info.value.name == "plan"
    assert not path.exists()


def test_plan_under_another_relation_is_refused(tmp_path):
    path = tmp_path / "rel.db"
    with pytest.raises(NeighbouringError, match="plan"):
        Accountant(ApproxDP(3.0, DELTA, neighbouring="replace_one"), path, plan=[(Gaussian(2.0), 10)])
    assert not path.exists()
    with pytest.raises(NeighbouringError):
        Accountant(ApproxDP(3.0, DELTA), plan=[(Gaussian(2.0, neighbouring="replace_one"), 10)])
    # stated under the accountant's relation, it is accepted
    acct = Accountant(ApproxDP(3.0, DELTA, neighbouring="replace_one"),
                      plan=[(Gaussian(10.0, neighbouring="replace_one"), 10)])
    assert acct.spend(Gaussian(10.0, neighbouring="replace_one")).plan_phase == 0
    # an add/remove spend restated under replace-one is another mechanism: off the plan
    with pytest.raises(ConversionError):
        acct.spend(Gaussian(2.0))


def test_plan_needs_an_approx_dp_budget_and_a_valid_plan_delta(step):
    with pytest.raises(DomainError) as info:
        Accountant(ZCDP(1.0), plan=[(step, 10)])
    assert info.value.name == "budget"
    with pytest.raises(DomainError):
        Accountant(None, plan=[(step, 10)])
    for pd in (0.0, 2e-5, -1.0, float("nan")):
        with pytest.raises(DomainError) as info:
            Accountant(ApproxDP(3.0, DELTA), plan=[(step, 10)], plan_delta=pd)
        assert info.value.name == "plan_delta"
    with pytest.raises(DomainError) as info:
        Accountant(ApproxDP(3.0, DELTA), plan_delta=1e-6)
    assert info.value.name == "plan_delta"
    with pytest.raises(DomainError):  # approx_delta + plan_delta > δ
        Accountant(ApproxDP(3.0, DELTA), plan=[(step, 10)], plan_delta=DELTA / 2, approx_delta=0.6 * DELTA)


def test_reopening_restates_the_plan(tmp_path, step):
    path = str(tmp_path / "p.db")
    with Accountant(ApproxDP(3.0, DELTA), path, plan=[(step, 30)], plan_delta=DELTA / 2) as a:
        for _ in range(7):
            a.spend(step)
        a.spend(Gaussian(8.0))
        st, left = a.plan, a.remaining
    with Accountant(ledger=path) as b:
        assert b.plan == st and b.remaining == left
        assert b.spend(step).plan_phase == 0 and b.plan.steps_run == 8
    with Accountant(ApproxDP(3.0, DELTA), path, plan=[(step, 30)]) as c:  # the same plan restated
        assert c.plan.steps_run == 8
    with pytest.raises(LedgerError, match="differs from the plan declared"):
        Accountant(ApproxDP(3.0, DELTA), path, plan=[(step, 31)])
    other = str(tmp_path / "plain.db")
    Accountant(ApproxDP(3.0, DELTA), other).close()
    with pytest.raises(LedgerError, match="created without a plan"):
        Accountant(ApproxDP(3.0, DELTA), other, plan=[(step, 30)])
    led = open_readonly(path)
    try:
        assert replay(led.header, led.iter_rows(0)).plan.steps_run == 8
    finally:
        led.close()


def test_the_plan_is_inside_the_hash_chain(tmp_path, step):
    path = str(tmp_path / "chain.db")
    with Accountant(ApproxDP(3.0, DELTA), path, plan=[(step, 30)]) as a:
        a.spend(step, 2)
    assert verify(path).ok
    con = sqlite3.connect(path)
    plan = json.loads(con.execute("SELECT value FROM renyi_header WHERE key = 'plan'").fetchone()[0])
    plan["phases"][0]["count"] = 3000  # a bigger plan for the same bill
    con.execute("UPDATE renyi_header SET value = ? WHERE key = 'plan'", (json.dumps(plan),))
    con.commit()
    con.close()
    rep = verify(path)
    assert not rep.ok and any(i is None and "header" in m for i, m in rep.problems)


def test_a_row_that_claims_a_phase_it_does_not_follow_is_caught(step):
    acct = Accountant(ApproxDP(3.0, DELTA), plan=[(step, 3)], plan_delta=DELTA / 2)
    acct.spend(step, 3)
    acct.spend(Gaussian(8.0))
    rows = list(acct.records)
    forged = rows[-1]
    forged_g = dict(forged.guarantee, plan_phase=0)  # an off-plan spend relabelled as on the plan
    import dataclasses

    rows[-1] = dataclasses.replace(forged, guarantee=forged_g)
    with pytest.raises(LedgerError, match="does not follow the declared plan"):
        replay(acct.header, rows)


def test_ledger_without_plan_rejects_plan_rows(step):
    acct = Accountant(ApproxDP(3.0, DELTA))
    acct.spend(step)
    import dataclasses

    r = acct.records[0]
    with pytest.raises(LedgerError, match="declares no plan"):
        replay(acct.header, [dataclasses.replace(r, guarantee=dict(r.guarantee, plan_phase=0))])


def test_import_is_refused_on_either_side_of_a_plan(tmp_path, step):
    a = Accountant(ApproxDP(3.0, DELTA), plan=[(step, 3)])
    a.spend(step)
    out = tmp_path / "x.jsonl"
    a.export_jsonl(out)
    with pytest.raises(LedgerError, match="plan"):
        Accountant(ApproxDP(3.0, DELTA)).import_jsonl(out)
    plain = Accountant(ApproxDP(3.0, DELTA))
    plain.spend(Gaussian(5.0))
    out2 = tmp_path / "y.jsonl"
    plain.export_jsonl(out2)
    with pytest.raises(LedgerError, match="plan"):
        a.import_jsonl(out2)


def test_composition_and_guarantee_plans():
    from renyi import compose

    g = Gaussian(5.0)
    acct = Accountant(ApproxDP(3.0, DELTA), plan=compose((g, 4), (Laplace(10.0), 2)), plan_delta=DELTA / 2)
    assert [ph.count for ph in acct.plan.phases] == [4, 2]
    assert acct.spend(g, 4).plan_phase == 0
    assert acct.spend(Laplace(10.0)).plan_phase == 1
    # a guarantee as a plan: spends of an equal guarantee follow it
    b = Accountant(ApproxDP(3.0, DELTA), plan=(ZCDP(0.01), 5))
    assert b.spend(ZCDP(0.01), 5).plan_phase == 0


def test_cli_show_and_verify_restate_the_plan(tmp_path, step):
    from typer.testing import CliRunner

    from renyi.cli import app

    path = str(tmp_path / "cli.db")
    with Accountant(ApproxDP(3.0, DELTA), path, plan=[(step, 30)], plan_delta=DELTA / 2) as a:
        a.spend(step, 4)
        a.spend(Gaussian(8.0))
    r = CliRunner().invoke(app, ["ledger", "show", path])
    assert r.exit_code == 0, r.output
    assert "plan of 1 phase(s), 30 step(s)" in r.output and "4 of 30 steps" in r.output
    r = CliRunner().invoke(app, ["ledger", "show", path, "--json"])
    assert r.exit_code == 0
    assert '"steps_run": 4' in r.output
    r = CliRunner().invoke(app, ["ledger", "verify", path])
    assert r.exit_code == 0 and "4 of 30 step(s) run" in r.output


# --------------------------------------------------------------------------------------
# Processes: concurrent writers and SIGKILL, as for every ledger write
# --------------------------------------------------------------------------------------
WORKER = textwrap.dedent(
    """
    import sys, time, random
    from renyi.accountant import Accountant
    from renyi.mechanisms import Gaussian
    from renyi.errors import BudgetExceededError, ConversionError

    path, wid, n, log, start = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], float(sys.argv[5])
    rng = random.Random(wid)
    acct = Accountant(ledger=path)
    while time.time() < start:
        time.sleep(0.005)
    with open(log, "a", buffering=1) as fh:
        for i in range(n):
            off = rng.random() < 0.2
            label = f"w{wid}-{i}-{'off' if off else 'on'}"
            try:
                rec = acct.spend(Gaussian(40.0 if off else 50.0), label=label)
            except (BudgetExceededError, ConversionError):
                fh.write(f"NO {label}\\n")
            else:
                fh.write(f"OK {label} {rec.id} {rec.plan_phase}\\n")
    """
)


def _start(path, wid, n, log, start):
    return subprocess.Popen([sys.executable, "-c", WORKER, path, str(wid), str(n), log, str(start)],
                            env=dict(os.environ), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _read_log(log):
    ok, no = {}, set()
    if os.path.exists(log):
        with open(log) as fh:
            for line in fh:
                parts = line.split()
                if len(parts) == 4 and parts[0] == "OK":
                    ok[parts[1]] = (int(parts[2]), None if parts[3] == "None" else int(parts[3]))
                elif len(parts) == 2 and parts[0] == "NO":
                    no.add(parts[1])
    return ok, no


def _rows(path):
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        return con.execute("SELECT id, label, guarantee, count FROM renyi_spends ORDER BY id").fetchall()
    finally:
        con.close()


PLAN_STEPS = 150


def _plan_ledger(path):
    # on the plan: Gaussian(50) × 150; what it leaves is spent off the plan by Gaussian(40)
    Accountant(ApproxDP(1.6, 1e-6), path, plan=[(Gaussian(50.0), PLAN_STEPS)], plan_delta=5e-7).close()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX processes and signals")
def test_four_processes_share_a_plan_and_never_overspend(tmp_path):
    path = str(tmp_path / "shared.db")
    _plan_ledger(path)
    start = time.time() + 1.0
    logs = [str(tmp_path / f"w{w}.log") for w in range(4)]
    procs = [_start(path, w, 80, logs[w], start) for w in range(4)]
    for p in procs:
        _, err = p.communicate(timeout=180)
        assert p.returncode == 0, err.decode()
    ack, refused = {}, set()
    for log in logs:
        ok, no = _read_log(log)
        assert len(ok) + len(no) == 80
        ack.update(ok)
        refused |= no
    rows = _rows(path)
    assert {lab: i for i, lab, _, _ in rows} == {lab: v[0] for lab, v in ack.items()}
    assert not (refused & {r[1] for r in rows})
    on = [r for r in rows if json.loads(r[2]).get("plan_phase") == 0]
    assert len(on) == PLAN_STEPS  # 4 × 80 × 0.8 ≈ 256 asked: exactly the plan's steps were free
    assert all(r[1].endswith("-on") for r in on)
    with Accountant(ledger=path) as acct:
        assert acct.within_budget and acct.plan.finished
        assert acct.plan.steps_run == PLAN_STEPS
        # refusals were real: the filter on what the plan left has less than one more spend
        assert not acct.can_spend(Gaussian(40.0)) or not any(lab.endswith("-off") for lab in refused)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX processes and signals")
def test_sigkill_on_a_plan_ledger_leaves_it_consistent(tmp_path):
    path = str(tmp_path / "killed.db")
    _plan_ledger(path)
    log = str(tmp_path / "k.log")
    p = _start(path, 7, 10**6, log, 0.0)
    deadline = time.time() + 60
    while time.time() < deadline:
        ok, _ = _read_log(log)
        if len(ok) >= 60:
            break
        time.sleep(0.002)
    os.kill(p.pid, signal.SIGKILL)
    p.wait(timeout=30)
    ok, _ = _read_log(log)
    rows = _rows(path)
    mine = [lab for _, lab, _, _ in rows]
    assert set(ok) <= set(mine)
    assert len([lab for lab in mine if lab not in ok]) <= 1
    assert verify(path).ok
    with Accountant(ledger=path) as acct:
        on = sum(1 for _, _, g, _ in rows if json.loads(g).get("plan_phase") == 0)
        assert acct.plan.steps_run == on and acct.within_budget
        acct.spend(Gaussian(50.0) if on < PLAN_STEPS else Gaussian(1e4), label="after-kill")
