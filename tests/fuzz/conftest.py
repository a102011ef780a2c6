"""Prints the fuzz oracle's totals at the end of a session that ran fuzz targets.

The totals are the closing note's fuzz counts: calls tried, and findings per kind (non-library
exceptions, NaN escapes, hangs, accepted out-of-domain inputs, invalid results), for the whole
session and per target. ``RENYI_FUZZ_SUMMARY=path.json`` also writes them as JSON. Reproduce:

    RENYI_FUZZ_TIMEOUT=5 RENYI_FUZZ_LONG=300 python -m pytest tests/fuzz -m fuzz   # long profile
    python -m pytest tests/fuzz                                                    # default (CI) budget
"""

from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))


def pytest_collection_finish(session):  # noqa: ARG001
    from _fuzz_oracle import warm_up

    warm_up()


def pytest_terminal_summary(terminalreporter, exitstatus, config):  # noqa: ARG001
    from _fuzz_oracle import BY_TARGET, COUNTS, FINDINGS, KINDS, LONG, REFUSED, SHORT, TIMEOUT, WALL_TIMEOUT

    if not COUNTS["tried"]:
        return
    tr = terminalreporter
    tr.section("renyi fuzz oracle")
    tr.write_line(f"calls tried: {COUNTS['tried']}  (returned a valid value: {COUNTS['ok']}, "
                  f"renyi errors on bad input: {COUNTS['library_error']}, "
                  f"in-domain inputs refused with a renyi error: {COUNTS['rejected_valid']})")
    tr.write_line("findings: " + ", ".join(f"{k} {COUNTS[k]}" for k in KINDS))
    tr.write_line(f"(hang limit {TIMEOUT:g} s CPU, {WALL_TIMEOUT:g} s wall-clock for a blocked call; examples per target: {SHORT} default, {LONG} with -m fuzz)")
    width = max(len(t) for t in BY_TARGET)
    tr.write_line(f"  {'target':<{width}}  {'tried':>7}  {'valid':>7}  {'refused':>7}  findings")
    for name in sorted(BY_TARGET):
        c = BY_TARGET[name]
        found = sum(c[k] for k in KINDS)
        tr.write_line(f"  {name:<{width}}  {c['tried']:>7}  {c['ok']:>7}  {c['library_error'] + c['rejected_valid']:>7}"
                      f"  {found}")
    out = os.environ.get("RENYI_FUZZ_SUMMARY")
    if out:
        with open(out, "w", encoding="utf-8") as fh:
            json.dump({"timeout_s": TIMEOUT, "timeout_kind": "cpu", "wall_timeout_s": WALL_TIMEOUT, "examples_short": SHORT, "examples_long": LONG, "totals": dict(COUNTS),
                       "by_target": {k: dict(v) for k, v in BY_TARGET.items()},
                       "refused_in_domain_examples": REFUSED, "findings": FINDINGS}, fh, indent=2, sort_keys=True)
        tr.write_line(f"fuzz summary written to {out}")
