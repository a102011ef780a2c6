"""The SQLite ledger under real concurrent processes and SIGKILL.

Each worker is a separate Python process (``sys.executable``) spending from one ledger file and
logging, after each call returns, what it was told ("OK label id" or "NO label"). The tests
compare those logs with the ledger.
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

from renyi.accountant import Accountant
from renyi.definitions import ZCDP

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX processes and signals")

WORKER = textwrap.dedent(
    """
    import os, sys, time, random
    from renyi.accountant import Accountant
    from renyi.definitions import ZCDP
    from renyi.errors import BudgetExceededError

    path, wid, n, log, start = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], float(sys.argv[5])
    rng = random.Random(wid)
    acct = Accountant(ledger=path)
    while time.time() < start:
        time.sleep(0.005)
    with open(log, "a", buffering=1) as fh:
        for i in range(n):
            units = rng.choice([1, 2, 3])
            label = f"w{wid}-{i}-{units}"
            try:
                rec = acct.spend(ZCDP(units / 1024.0), label=label)
            except BudgetExceededError:
                fh.write(f"NO {label}\\n")
            else:
                fh.write(f"OK {label} {rec.id}\\n")
    """
)


def _start(path: str, wid: int, n: int, log: str, start: float) -> subprocess.Popen:
    env = dict(os.environ)
    return subprocess.Popen([sys.executable, "-c", WORKER, path, str(wid), str(n), log, str(start)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _read_log(log: str) -> tuple[dict[str, int], set[str]]:
    ok, no = {}, set()
    if not os.path.exists(log):
        return ok, no
    with open(log) as fh:
        for line in fh:
            parts = line.split()
            if len(parts) == 3 and parts[0] == "OK":
                ok[parts[1]] = int(parts[2])
            elif len(parts) == 2 and parts[0] == "NO":
                no.add(parts[1])
    return ok, no


def _ledger_rows(path: str) -> list[tuple[int, str, str, int]]:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        return con.execute("SELECT id, label, guarantee, count FROM renyi_spends ORDER BY id").fetchall()
    finally:
        con.close()


def test_eight_processes_never_overspend(tmp_path):
    """8 processes × 200 spends on one ledger: total ≤ budget, nothing lost or duplicated,
    refused spends recorded nothing, every acknowledged id is the one in the ledger."""
    path = str(tmp_path / "shared.db")
    budget_units = 1024  # budget ρ = 1.0 = 1024 units of 1/1024; ~3200 units are requested
    Accountant(budget=ZCDP(1.0), ledger=path).close()
    start = time.time() + 1.0
    logs = [str(tmp_path / f"w{w}.log") for w in range(8)]
    procs = [_start(path, w, 200, logs[w], start) for w in range(8)]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err.decode()

    acknowledged: dict[str, int] = {}
    refused: set[str] = set()
    for log in logs:
        ok, no = _read_log(log)
        assert len(ok) + len(no) == 200
        acknowledged.update(ok)
        refused |= no
    rows = _ledger_rows(path)
    labels = [r[1] for r in rows]
    assert len(labels) == len(set(labels)), "a spend was duplicated"
    assert {lab: i for i, lab, _, _ in rows} == acknowledged, "ledger and acknowledgements disagree"
    assert not (refused & set(labels)), "a refused spend was recorded"
    assert [r[0] for r in rows] == list(range(1, len(rows) + 1))
    total = sum(Fraction(json.loads(g)["rho"]).limit_denominator(1 << 20) * c for _, _, g, c in rows)
    assert total <= Fraction(budget_units, 1024)
    assert 0 < len(rows) < 1600 and refused  # the budget allowed only some
    # The last refusals were real: the remaining budget is smaller than the largest refused spend.
    with Accountant(ledger=path) as acct:
        assert acct.state["rho"] == float(total)
        assert acct.remaining.rho < 3 / 1024.0


def test_sigkill_mid_stream_leaves_consistent_ledger(tmp_path):
    """A writer killed with SIGKILL at an arbitrary moment leaves an intact ledger holding
    every spend it acknowledged and at most one spend it had not yet acknowledged."""
    path = str(tmp_path / "killed.db")
    Accountant(budget=ZCDP(1e6), ledger=path).close()
    seen: set[str] = set()
    for round_ in range(3):
        log = str(tmp_path / f"k{round_}.log")
        p = _start(path, 100 + round_, 10**6, log, 0.0)
        deadline = time.time() + 30
        target = 40 + 37 * round_
        while time.time() < deadline:
            ok, _ = _read_log(log)
            if len(ok) >= target:
                break
            time.sleep(0.002)
        os.kill(p.pid, signal.SIGKILL)
        p.wait(timeout=30)
        assert p.returncode == -signal.SIGKILL
        ok, _ = _read_log(log)
        rows = _ledger_rows(path)  # includes PRAGMA integrity_check
        mine = [lab for _, lab, _, _ in rows if lab.startswith(f"w{100 + round_}-")]
        assert set(ok) <= set(mine), "an acknowledged spend is missing"
        extra = [lab for lab in mine if lab not in ok]
        assert len(extra) <= 1, f"unacknowledged spends recorded: {extra}"
        if extra:  # the only possible extra is the spend that was in flight
            assert int(extra[0].split("-")[1]) == len(ok)
        assert not (set(mine) & seen)
        seen |= set(mine)
        with Accountant(ledger=path) as acct:  # reopens and replays cleanly
            assert len(acct.history) == len(rows)
            acct.spend(ZCDP(1 / 1024.0), label=f"after-kill-{round_}")
