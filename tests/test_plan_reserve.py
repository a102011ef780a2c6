"""Steps recorded ahead on a plan (``plan_reserve``, issue 25): a block's row is committed
before its steps run, so a crash loses progress only, never lets a run exceed its plan."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time

import pytest

from renyi import ApproxDP, Gaussian
from renyi.budget.accountant import Accountant
from renyi.budget.ledger import verify
from renyi.core.errors import ConversionError, DomainError

STEPS = 400


def _ledger(path: str, steps: int = STEPS) -> None:
    Accountant(ApproxDP(1.6, 1e-6), path, plan=[(Gaussian(80.0), steps)]).close()


def test_blocks_double_up_to_the_reserve_and_stop_at_the_phase_end(tmp_path) -> None:
    path = str(tmp_path / "r.db")
    _ledger(path, 40)
    with Accountant(ledger=path, plan_reserve=8) as acct:
        got = [acct.spend(Gaussian(80.0)) for _ in range(40)]
        assert [s.count for s in got[:7]] == [1, 2, 2, 4, 4, 4, 4]
        assert acct.plan.used == (40,) and acct.plan.finished
        with pytest.raises(ConversionError, match="exhausted"):
            acct.spend(Gaussian(80.0))  # the plan holds all of δ: off the plan is refused
        rows = acct.records
    assert [r.count for r in rows] == [1, 2, 4, 8, 8, 8, 8, 1]
    assert sum(r.count for r in rows) == 40 and all(r.guarantee["plan_phase"] == 0 for r in rows)
    assert verify(path).ok


def test_labelled_steps_and_other_mechanisms_take_the_general_path(tmp_path) -> None:
    path = str(tmp_path / "l.db")
    Accountant(ApproxDP(1.6, 1e-6), path, plan=[(Gaussian(80.0), 10), (Gaussian(90.0), 10)]).close()
    with Accountant(ledger=path, plan_reserve=4) as acct:
        acct.spend(Gaussian(80.0), label="a")
        acct.spend(Gaussian(80.0))
        acct.spend(Gaussian(90.0))  # the next phase: the open block of phase 0 is left behind
        acct.spend(Gaussian(90.0))
        assert [r.count for r in acct.records] == [1, 1, 2]
        assert acct.plan.used == (2, 2)  # the second step of phase 1 was in its block of 2
        with pytest.raises(ConversionError):
            acct.spend(Gaussian(80.0))  # phase 0 is behind the run: off the plan
        assert len(acct.records) == 3


def test_status_says_what_was_recorded_ahead(tmp_path) -> None:
    path = str(tmp_path / "s.db")
    _ledger(path, 40)
    with Accountant(ledger=path, plan_reserve=8) as acct:
        for _ in range(4):
            acct.spend(Gaussian(80.0))
        st = acct.plan
        assert st.used == (7,) and st.ahead == 3 and "3 of them recorded ahead" in st.describe()
        assert st.to_dict()["ahead"] == 3
    with Accountant(ledger=path) as again:  # another process only sees the rows
        assert again.plan.used == (7,) and again.plan.ahead == 0


@pytest.mark.parametrize("bad", [0, -1, 1.5, "8", True])
def test_bad_reserve_is_a_clear_error(tmp_path, bad) -> None:
    path = str(tmp_path / "b.db")
    _ledger(path)
    with pytest.raises((DomainError, TypeError), match="plan_reserve"):
        Accountant(ledger=path, plan_reserve=bad)
    with pytest.raises(DomainError, match="plan_reserve needs a plan"):
        Accountant(ApproxDP(1.0, 1e-5), plan_reserve=8)
    with pytest.raises(DomainError, match="plan_reserve needs a plan"):
        Accountant(ApproxDP(1.0, 1e-5), str(tmp_path / "none.db"), plan_reserve=8)
    assert not os.path.exists(tmp_path / "none.db")  # nothing was written
    plain = str(tmp_path / "plain.db")
    Accountant(ApproxDP(1.0, 1e-5), plain).close()
    with pytest.raises(DomainError, match="plan_reserve needs a plan"):
        Accountant(ledger=plain, plan_reserve=8)


WORKER = textwrap.dedent(
    """
    import sys
    from renyi.accountant import Accountant
    from renyi.mechanisms import Gaussian
    from renyi.errors import ConversionError

    path, log, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    acct = Accountant(ledger=path, plan_reserve=16)
    with open(log, "a", buffering=1) as fh:
        for i in range(n):
            try:
                acct.spend(Gaussian(80.0))
            except ConversionError:
                fh.write("NO\\n")
            else:
                fh.write("RAN\\n")  # the step's noise would be added here
    """
)


def _start(path: str, log: str, n: int) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", WORKER, path, log, str(n)], env=dict(os.environ),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _ran(log: str) -> int:
    if not os.path.exists(log):
        return 0
    with open(log) as fh:
        return sum(1 for line in fh if line.strip() == "RAN")


def _on_plan(path: str) -> int:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = con.execute("SELECT guarantee, count FROM renyi_spends").fetchall()
    finally:
        con.close()
    return sum(c for g, c in rows if json.loads(g).get("plan_phase") == 0)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX processes and signals")
def test_sigkill_mid_block_never_lets_the_run_exceed_the_plan(tmp_path) -> None:
    """Kill a worker mid-run, then run a second one to the end of the plan: the steps that
    really ran (both logs) never exceed the plan, and the ledger covers every one of them."""
    path = str(tmp_path / "k.db")
    _ledger(path)
    log1, log2 = str(tmp_path / "1.log"), str(tmp_path / "2.log")
    p = _start(path, log1, 10**6)
    deadline = time.time() + 60
    while time.time() < deadline and _ran(log1) < 100:
        time.sleep(0.002)
    os.kill(p.pid, signal.SIGKILL)
    p.wait(timeout=30)
    ran1 = _ran(log1)
    recorded = _on_plan(path)
    assert ran1 <= recorded <= ran1 + 16  # rows cover every step that ran, ahead by < one block
    assert verify(path).ok
    p2 = _start(path, log2, STEPS)
    _, err = p2.communicate(timeout=120)
    assert p2.returncode == 0, err.decode()
    assert _ran(log1) + _ran(log2) <= STEPS  # never beyond the plan, whatever the crash lost
    assert _on_plan(path) == STEPS
    with Accountant(ledger=path) as acct:
        assert acct.plan.finished and acct.within_budget


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX processes")
def test_two_processes_share_blocks_of_one_plan(tmp_path) -> None:
    path = str(tmp_path / "two.db")
    _ledger(path)
    logs = [str(tmp_path / f"{i}.log") for i in range(2)]
    procs = [_start(path, lg, 300) for lg in logs]
    for p in procs:
        _, err = p.communicate(timeout=180)
        assert p.returncode == 0, err.decode()
    assert sum(_ran(lg) for lg in logs) <= STEPS
    assert _on_plan(path) == STEPS and verify(path).ok


def test_can_spend_agrees_with_spend_inside_the_last_block(tmp_path) -> None:
    path = str(tmp_path / "c.db")
    _ledger(path, 3)
    with Accountant(ledger=path, plan_reserve=2) as acct:
        acct.spend(Gaussian(80.0))  # block of 1
        acct.spend(Gaussian(80.0))  # block of 2: the plan's last two steps are recorded
        assert acct.plan.used == (3,) and acct.plan.ahead == 1
        assert acct.can_spend(Gaussian(80.0))
        acct.spend(Gaussian(80.0))
        with pytest.raises(ConversionError, match="exhausted"):
            acct.can_spend(Gaussian(80.0))


def test_off_plan_spends_between_blocks_follow_the_rule(tmp_path) -> None:
    """With room left by plan_delta, an off-plan spend is billed by the filter on what the plan
    left (a row of its own), and the plan's next step opens a new block."""
    path = str(tmp_path / "o.db")
    Accountant(ApproxDP(3.0, 1e-5), path, plan=[(Gaussian(80.0), 100)], plan_delta=5e-6).close()
    with Accountant(ledger=path, plan_reserve=4) as acct:
        for _ in range(3):
            acct.spend(Gaussian(80.0))
        off = acct.spend(Gaussian(10.0))
        assert off.plan_phase is None
        nxt = acct.spend(Gaussian(80.0))
        assert nxt.plan_phase == 0 and nxt.id == off.id + 1
        assert [r.count for r in acct.records] == [1, 2, 1, 4]
        assert acct.within_budget and acct.remaining.epsilon < 3.0 - acct.plan.epsilon
