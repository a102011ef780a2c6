"""The accountant's fast path for a repeated step (issue 25): the same records, totals, budget
decisions and plan progress as the general path, bit for bit; never a step over the budget,
also with threads and a shared ledger."""

from __future__ import annotations

import dataclasses
import math
import pickle
import threading

import numpy as np
import pytest

from renyi import GDP, ApproxDP, Gaussian, Laplace, PureDP, ZCDP, dpsgd
from renyi.budget.accountant import Accountant
from renyi.core.errors import BudgetExceededError, ConversionError
from renyi.budget.ledger import MemoryLedger


def _slow(acct: Accountant) -> Accountant:
    """The same accountant with the fast path switched off (every spend takes the general path)."""
    acct._arm = lambda *a, **k: None  # type: ignore[method-assign]
    return acct


def _run(acct: Accountant, seq: list) -> list:
    out = []
    for item in seq:
        try:
            out.append(acct.spend(item).id)
        except BudgetExceededError:
            out.append("refused")
    return out


@pytest.mark.parametrize("budget", [None, ApproxDP(1.0, 1e-5), ZCDP(0.05), GDP(0.4), ZCDP(0.05).to_rdp()])
def test_fast_path_matches_general_path(budget) -> None:
    a, b = dpsgd.step_mechanism(1.1, 0.05), Gaussian(6.0)
    if budget is not None and not isinstance(budget, ApproxDP):  # Gaussian spends only
        a = Gaussian(9.0)
    seq = [a] * 40 + [b] * 3 + [a] * 30 + [b] + [a] * 400
    fast, slow = Accountant(budget), _slow(Accountant(budget))
    assert _run(fast, seq) == _run(slow, seq)
    assert fast.state == slow.state
    hf, hs = fast.history, slow.history
    assert [(s.id, s.count, s.label, s.mechanism, s.guarantee) for s in hf] == \
        [(s.id, s.count, s.label, s.mechanism, s.guarantee) for s in hs]
    assert [s.record["rdp"] for s in hf] == [s.record["rdp"] for s in hs]
    assert fast.epsilon(1e-5) == slow.epsilon(1e-5)
    assert fast.remaining == slow.remaining


def test_budget_edge_is_exact() -> None:
    """Spending one step at a time stops exactly where one batch spend of the same count is refused."""
    step = dpsgd.step_mechanism(2.0, 0.01)
    acct = Accountant(ApproxDP(1.0, 1e-5))
    n = 0
    with pytest.raises(BudgetExceededError):
        while True:
            acct.spend(step)
            n += 1
    assert len(acct.history) == n and n > 1000
    assert Accountant(ApproxDP(1.0, 1e-5)).can_spend(step, n)
    assert not Accountant(ApproxDP(1.0, 1e-5)).can_spend(step, n + 1)
    assert acct.within_budget
    with pytest.raises(BudgetExceededError):  # refused again, nothing recorded
        acct.spend(step)
    assert len(acct.history) == n


def test_spends_of_the_fast_path_are_ordinary_spends() -> None:
    step = dpsgd.step_mechanism(1.1, 0.01)
    acct = Accountant(ApproxDP(5.0, 1e-5))
    s = [acct.spend(step) for _ in range(5)]
    h = acct.history
    assert s == list(h) and [x.id for x in s] == [1, 2, 3, 4, 5]
    assert s[4].stored.id == 5 and s[4].record["id"] == 5 and s[4].record["time"] == s[4].time
    assert s[3].label is None and s[3].count == 1 and s[3].mechanism == s[0].mechanism
    assert pickle.loads(pickle.dumps(s[2])) == s[2] and hash(s[2]) == hash(h[2])
    assert dataclasses.asdict(s[3])["id"] == 4 and dataclasses.replace(s[3], label="x").label == "x"
    assert s[2] != s[3]


def test_a_shared_memory_ledger_sees_every_spend() -> None:
    """Two accountants on one memory ledger: the fast path notices the other's spends."""
    step = dpsgd.step_mechanism(2.0, 0.01)
    a = Accountant(ApproxDP(1.0, 1e-5))
    b = Accountant(ledger=a.ledger)
    n = 0
    with pytest.raises(BudgetExceededError):
        while True:
            a.spend(step)
            b.spend(step)
            n += 2
    ref = Accountant(ApproxDP(1.0, 1e-5))
    assert ref.can_spend(step, len(a.history)) and not ref.can_spend(step, len(a.history) + 1)
    assert a.state == _replayed(a).state


def _replayed(a: Accountant) -> Accountant:
    c = Accountant(ApproxDP(1.0, 1e-5))
    for s in a.history:
        c.spend(s.guarantee)
    return c


def test_threads_never_overspend() -> None:
    step = dpsgd.step_mechanism(2.0, 0.01)
    acct = Accountant(ApproxDP(1.0, 1e-5))
    acct.spend(step)
    counts = [0] * 4

    def work(i: int) -> None:
        try:
            while True:
                acct.spend(step)
                counts[i] += 1
        except BudgetExceededError:
            pass

    ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    n = 1 + sum(counts)
    ref = Accountant(ApproxDP(1.0, 1e-5))
    assert ref.can_spend(step, n) and not ref.can_spend(step, n + 1)
    assert [s.id for s in acct.history] == list(range(1, n + 1))
    assert acct.state["count"] == n


def test_plan_progress_on_the_fast_path() -> None:
    m1, m2 = dpsgd.step_mechanism(1.1, 0.01), dpsgd.step_mechanism(1.5, 0.02)
    acct = Accountant(ApproxDP(8.0, 1e-5), plan=[(m1, 50), (m2, 30)])
    for _ in range(50):
        acct.spend(m1)
    assert acct.plan.used == (50, 0)
    with pytest.raises(ConversionError, match="off the declared plan"):
        acct.spend(m1)  # the phase is exhausted: off the plan, nothing recorded
    assert len(acct.history) == 50
    for _ in range(20):
        acct.spend(m2)
    st = acct.plan
    assert st.used == (50, 20) and st.current == 1 and not st.finished
    assert [s.plan_phase for s in acct.history] == [0] * 50 + [1] * 20
    for _ in range(10):
        acct.spend(m2)
    assert acct.plan.finished
    with pytest.raises(ConversionError, match="exhausted"):
        acct.spend(m2)
    assert len(acct.history) == 80


def test_memory_ledger_rows_are_runs() -> None:
    led = MemoryLedger()
    acct = Accountant(ledger=led)
    g, h = Gaussian(3.0), Gaussian(4.0)
    for it in [g] * 5 + [h] * 2 + [g] * 3:
        acct.spend(it)
    assert len(led) == 10 and repr(led) == "MemoryLedger(10 spends)"
    rows = led.rows_after(0)
    assert [r.id for r in rows] == list(range(1, 11))
    assert [r.id for r in led.rows_after(6)] == [7, 8, 9, 10]
    assert led.rows_after(10) == []
    assert np.array_equal(rows[6].rdp, acct.history[6].stored.rdp)


@pytest.mark.parametrize("budget", [ApproxDP(2.0, 1e-5), ApproxDP(3.0, 1e-6), ZCDP(0.3), ZCDP(0.2, 0.01),
                                    GDP(1.5), ZCDP(0.4).to_rdp(), PureDP(3.0)])
def test_largest_admitted_count_does_not_depend_on_the_guess(budget) -> None:
    """The filter's floating point guess only says where the exact search starts: any guess,
    wrong by far, by one, infinite or NaN, gives the same largest admitted count."""
    from renyi.budget import accountant as A

    rng = np.random.default_rng(5)
    for trial in range(6):
        acct = Accountant(budget)
        base = Gaussian(float(rng.uniform(40.0, 80.0)))
        if isinstance(budget, PureDP):
            base = Laplace(float(rng.uniform(20.0, 40.0)))
        acct.spend(base, int(rng.integers(1, 5)))
        if isinstance(budget, PureDP):
            unit = Laplace(float(rng.uniform(5.0, 40.0)))
        elif not isinstance(budget, ApproxDP):
            unit = Gaussian(float(rng.uniform(5.0, 40.0)))
        else:
            unit = dpsgd.step_mechanism(float(rng.uniform(1.5, 3.0)), float(rng.uniform(0.002, 0.02)))
        acct.spend(unit)
        fold, f = acct._all, acct._filter
        true = f.guess
        answers = set()
        for shift in [None, lambda x: x, lambda x: 0.5 * x, lambda x: 2 * x + 7, lambda x: x + 1, lambda x: x - 1,
                      lambda x: math.inf, lambda x: -math.inf, lambda x: math.nan, lambda x: 0.0]:
            f.guess = (lambda t, u: None) if shift is None else (lambda t, u, s=shift: s(true(t, u)))
            answers.add(fold._largest(f))
        f.guess = true
        assert len(answers) == 1, (trial, answers)
        k = answers.pop()
        assert fold.count <= k < A._FOLD_MAX
        ref = Accountant(budget)
        ref.spend(base, acct.records[0].count)
        assert ref.can_spend(unit, k) and not ref.can_spend(unit, k + 1)
