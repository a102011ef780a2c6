"""Prints the fuzz oracle's totals at the end of a session that ran fuzz targets."""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))


def pytest_collection_finish(session):  # noqa: ARG001
    from _fuzz_oracle import warm_up

    warm_up()


def pytest_terminal_summary(terminalreporter, exitstatus, config):  # noqa: ARG001
    from _fuzz_oracle import COUNTS, KINDS

    if not COUNTS["tried"]:
        return
    tr = terminalreporter
    tr.section("renyi fuzz oracle")
    tr.write_line(f"calls tried: {COUNTS['tried']}  (returned a valid value: {COUNTS['ok']}, "
                  f"renyi errors on bad input: {COUNTS['library_error']}, "
                  f"in-domain inputs refused with a renyi error: {COUNTS['rejected_valid']})")
    tr.write_line("findings: " + ", ".join(f"{k} {COUNTS[k]}" for k in KINDS))
