"""The PLD benchmark harness (benchmarks/bench_pld.py) still runs: one tiny case of each kind,
and its time limit. No timing is asserted: the figures are the benchmark's job."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "benchmarks"


@pytest.fixture(scope="module")
def bench():  # type: ignore[no-untyped-def]
    if not (BENCH / "bench_pld.py").exists():
        pytest.skip("benchmarks/ is not part of this checkout")
    # On sys.path (not loaded from a file spec) so that spawned children can import it by name.
    sys.path.insert(0, str(BENCH))
    try:
        import bench_pld

        yield bench_pld
    finally:
        sys.path.remove(str(BENCH))


def test_case_functions_give_brackets(bench) -> None:  # type: ignore[no-untyped-def]
    lo, hi = bench.renyi_pld([(0.01, 1.0, 100)], 1e-5)
    assert 0.0 < lo <= hi < math.inf
    assert hi <= bench.renyi_rdp([(0.01, 1.0, 100)], 1e-5) * (1 + 1e-9)
    row = bench.tight_case(0.05, 2.0, 10, 1e-5)
    assert row["lower"] <= row["upper"] and row["pld_s"] >= 0.0
    assert len(bench.mixed_pipeline(8)) == 8
    bench.forget()  # clearing the caches must not break the next answer
    assert bench.renyi_pld([(0.01, 1.0, 100)], 1e-5) == (lo, hi)


def test_cli_options(bench) -> None:  # type: ignore[no-untyped-def]
    args = bench.parse(["--full", "--peer-limit", "5", "--json", "x.json"])
    assert args.peer_limit == 5.0 and args.tables.split(",") == ["1", "2", "3", "4", "5", "6"]
    with pytest.raises(SystemExit):
        bench.parse(["--tables", "9"])
    with pytest.raises(SystemExit):
        bench.parse(["--peer-limit", "0"])


def test_worker_limits_errors_and_missing_peers(bench) -> None:  # type: ignore[no-untyped-def]
    w = bench.Worker("test", ())
    try:
        assert w.run(bench.sleep_job, 0.0, limit=60).status == "ok"
        over = w.run(bench.sleep_job, 30.0, limit=0.5)
        assert over.status == "timeout" and over.seconds == 0.5
        assert bench.secs(over) == ">0.5"
        failed = w.run(bench.failing_job, limit=60)  # a new child after the kill
        assert failed.status == "error" and "on purpose" in failed.message
    finally:
        w.close()
    gone = bench.Worker("gone", ("renyi_no_such_module",)).run(bench.sleep_job, 0.0, limit=60)
    assert gone.status == "missing" and bench.secs(gone) == "n/a"
    ours = bench.Outcome("ok", seconds=0.25)
    assert bench.ratio(bench.Outcome("timeout", seconds=100.0), ours) == ">400"
    assert bench.ratio(bench.Outcome("ok", seconds=1.0), ours) == "4.0"


@pytest.mark.slow
def test_quick_tables_write_json(bench, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import json

    out = tmp_path / "bench.json"
    bench.main(["--quick", "--tables", "3,6", "--json", str(out)])
    res = json.loads(out.read_text())
    assert set(res["tables"]) == {"3", "6"} and res["meta"]["options"]["quick"] is True
    summary = res["tables"]["6"]["summary"]
    assert summary["cases"] == len(res["tables"]["6"]["rows"]) > 0
    assert summary["failed"] == [] and summary["pld_upper_above_rdp"] == []
