"""The fuzz oracle: run one call with a time limit and classify what happened.

Every call of the public API must either return a finite, valid value (no NaN anywhere; the
checks given by the caller: trivial bounds and laws) or raise a renyi error: a
:class:`renyi.errors.RenyiError` (``DomainError`` is a ``ValueError``), or a ``TypeError``
raised on purpose by renyi for a wrong type. Anything else is a finding:

* ``non_library``: another exception (ZeroDivisionError, OverflowError, IndexError, a bare
  ValueError, a TypeError from deep inside numpy, ...);
* ``nan``: a NaN in the result;
* ``hang``: the call used more than :data:`TIMEOUT` CPU seconds (or blocked for
  :data:`WALL_TIMEOUT` wall-clock seconds);
* ``accepted_invalid``: an input outside its documented domain was accepted;
* ``invalid_result``: a result that breaks a trivial bound or a law.

In-domain inputs that are refused with a renyi error are counted (``rejected_valid``) but are
not failures: a conversion may legitimately not exist. The totals of a session are printed
by ``tests/fuzz/conftest.py``.
"""

from __future__ import annotations

import dataclasses
import linecache
import math
import os
import signal
import time
import warnings
from collections import Counter
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import numpy as np

from renyi.errors import DomainError, RenyiError

#: CPU seconds (of this process, all threads) after which a call counts as a hang. CPU time, not
#: wall-clock time: on a loaded machine a call gets a fraction of a core, so a wall-clock limit
#: counts the other processes' work as the call's and flakes; the CPU time a call consumes does
#: not depend on the load. The reported fuzz counts use RENYI_FUZZ_TIMEOUT=5.
TIMEOUT = float(os.environ.get("RENYI_FUZZ_TIMEOUT", "10"))
#: Wall-clock backstop for a call that blocks without using CPU (a FIFO, a lock, a sleep): such a
#: call never reaches the CPU limit. Generous, so that load alone never reaches it.
WALL_TIMEOUT = float(os.environ.get("RENYI_FUZZ_WALL_TIMEOUT", str(max(120.0, 12 * TIMEOUT))))
#: Examples per fuzz target: small in the default suite, large with ``-m fuzz``.
SHORT = int(os.environ.get("RENYI_FUZZ_SHORT", "20"))
LONG = int(os.environ.get("RENYI_FUZZ_LONG", "1500"))


class _Counts(Counter):  # type: ignore[type-arg]
    """The session's totals; every increment also counts toward the current fuzz target."""

    def __setitem__(self, key: str, value: int) -> None:
        delta = value - self.get(key, 0)
        super().__setitem__(key, value)
        if self is COUNTS and delta:
            target = BY_TARGET.setdefault(CURRENT[0], Counter())
            target[key] += delta


#: Totals of the session, and the same per fuzz target (the test that drew the inputs).
COUNTS: Counter[str] = _Counts()
BY_TARGET: dict[str, Counter[str]] = {}
CURRENT = ["(outside a fuzz target)"]
FINDINGS: list[str] = []
#: the first in-domain inputs refused per target, with the message (the closing note explains them)
REFUSED: dict[str, list[str]] = {}
KINDS = ("non_library", "nan", "hang", "accepted_invalid", "invalid_result")


def warm_up() -> None:
    """Import what renyi imports lazily, before any call is timed.

    The first call that reaches the PLD engine or a scipy submodule pays their import (seconds
    on a loaded machine); that one-time cost is not the call's, so it must not count as a hang.
    """
    import importlib

    for name in ("scipy.special", "scipy.optimize", "scipy.integrate", "scipy.linalg", "scipy.fft",
                 "scipy.signal", "scipy.stats", "renyi.pld", "renyi.routes", "renyi.report", "renyi.cli"):
        try:
            importlib.import_module(name)
        except ImportError:
            pass


class Hang(BaseException):
    """Raised by the alarm inside a call that takes too long (a BaseException, so that no
    ``except Exception`` in the library swallows it)."""


def _on_alarm(signum: int, frame: Any) -> None:
    raise Hang()


class _Limit:
    """A CPU-time limit (ITIMER_PROF: this process's user + system time) with a wall-clock
    backstop (ITIMER_REAL), both raising :class:`Hang` inside the call.

    The backstop is for a call that blocks (a FIFO, a lock): one that used CPU in its wall-clock
    window is computing, only slowly (a niced run on a loaded machine), so the window is
    renewed and the CPU limit decides."""

    def _on_wall(self, signum: int, frame: Any) -> None:
        used = time.process_time() - self.cpu_mark
        self.cpu_mark = time.process_time()
        if used > 0.05 * min(WALL_TIMEOUT, TIMEOUT):
            signal.setitimer(signal.ITIMER_REAL, WALL_TIMEOUT)  # starved, not blocked
            return
        raise Hang()

    def __enter__(self) -> "_Limit":
        self.previous = (signal.signal(signal.SIGPROF, _on_alarm), signal.signal(signal.SIGALRM, self._on_wall))
        self.cpu0 = self.cpu_mark = time.process_time()
        signal.setitimer(signal.ITIMER_PROF, TIMEOUT)
        signal.setitimer(signal.ITIMER_REAL, WALL_TIMEOUT)
        return self

    def cpu(self) -> float:
        """CPU seconds used since entering."""
        return time.process_time() - self.cpu0

    def __exit__(self, *exc: Any) -> None:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGPROF, self.previous[0])
        signal.signal(signal.SIGALRM, self.previous[1])


def _deliberate(exc: BaseException) -> bool:
    """A TypeError raised by a ``raise`` statement in renyi's own code (a wrong-type error)."""
    tb = exc.__traceback__
    last = None
    while tb is not None:
        last = tb
        tb = tb.tb_next
    if last is None:
        return False
    fname = last.tb_frame.f_code.co_filename
    if f"{os.sep}renyi{os.sep}" not in fname:
        return False
    line = linecache.getline(fname, last.tb_lineno).strip()
    return line.startswith("raise ") or line.startswith("raise(") or " raise " in line


def has_nan(x: Any, depth: int = 0) -> bool:
    """Whether a NaN hides anywhere in a result (numbers, arrays, tuples, dataclasses)."""
    if depth > 4:
        return False
    if isinstance(x, bool):
        return False
    if isinstance(x, (float, np.floating)):
        return math.isnan(float(x))
    if isinstance(x, np.ndarray):
        return x.dtype.kind in "fc" and bool(np.any(np.isnan(x)))
    if isinstance(x, (tuple, list)):
        return any(has_nan(v, depth + 1) for v in x[:64])
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return any(has_nan(getattr(x, f.name, None), depth + 1) for f in dataclasses.fields(x))
    return False


def record(kind: str, what: str) -> None:
    COUNTS[kind] += 1
    if len(what) > 400:
        what = what[:300] + " ... " + what[-90:]
    if len(FINDINGS) < 2000:
        FINDINGS.append(f"{kind}: {what}")


def call(what: str, fn: Callable[..., Any], *args: Any, valid: bool | None = True,
         check: Callable[[Any], str | None] | None = None, **kwargs: Any) -> Any:
    """Run ``fn(*args, **kwargs)`` under the oracle; return its result (None on error).

    Args:
        what: a description for the findings list (the call with its arguments).
        valid: True when every argument is in its documented domain, False when one is
            not (the call must raise), None when the domain does not decide (either is fine).
        check: extra validity check of a returned value: a message when it is invalid.
    """
    COUNTS["tried"] += 1
    limit = _Limit()
    try:
        with limit, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with np.errstate(all="ignore"):
                out = fn(*args, **kwargs)
    except Hang:
        kind = "CPU" if limit.cpu() >= 0.9 * TIMEOUT else f"wall-clock, {WALL_TIMEOUT:g} s"
        record("hang", f"{what} (> {TIMEOUT:g} s {kind})" if kind == "CPU" else f"{what} (blocked > {kind})")
        return None
    except RenyiError as exc:
        if not str(exc):
            record("non_library", f"{what}: {type(exc).__name__} without a message")
        elif isinstance(exc, DomainError) and valid:
            COUNTS["rejected_valid"] += 1
            seen = REFUSED.setdefault(CURRENT[0], [])
            if len(seen) < 20:
                seen.append(f"{what[:200]}: {str(exc)[:200]}")
        else:
            COUNTS["library_error"] += 1
        return None
    except TypeError as exc:
        if _deliberate(exc):
            COUNTS["rejected_valid" if valid else "library_error"] += 1
        else:
            record("non_library", f"{what}: TypeError {exc}")
        return None
    except RecursionError as exc:
        record("non_library", f"{what}: RecursionError {str(exc)[:80]}")
        return None
    except Exception as exc:  # noqa: BLE001 - the finding is the point
        record("non_library", f"{what}: {type(exc).__name__} {str(exc)[:160]}")
        return None
    if limit.cpu() > TIMEOUT:
        record("hang", f"{what} (> {TIMEOUT:g} s CPU, not interruptible)")
    if has_nan(out):
        record("nan", f"{what} -> {out!r:.160}")
        return None
    if valid is False:
        record("accepted_invalid", f"{what} -> {out!r:.160}")
        return None
    COUNTS["ok"] += 1
    if check is not None:
        try:
            with _Limit(), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                msg = check(out)
        except Hang:
            record("hang", f"checking {what}")
            return None
        except (RenyiError, TypeError) as exc:
            msg = None if isinstance(exc, RenyiError) or _deliberate(exc) else f"check raised TypeError: {exc}"
        except Exception as exc:  # noqa: BLE001
            msg = f"check raised {type(exc).__name__}: {exc}"
        if msg:
            record("invalid_result", f"{what}: {msg}")
            return None
    return out


def findings_since(start: int) -> list[str]:
    return FINDINGS[start:]


def run(strategy: st.SearchStrategy[Any], body: Any, examples: int) -> None:
    """Run ``body`` on ``examples`` draws (derandomised in CI and in the default budget); fail on any new finding."""
    start = len(FINDINGS)
    CURRENT[0] = getattr(body, "__qualname__", "?").split(".")[0]

    # The default budget is derandomised everywhere (the same draws as CI: a red default suite is
    # reproducible); the long profile draws afresh unless CI is set.
    @settings(max_examples=examples, deadline=None, database=None,
              derandomize=bool(os.environ.get("CI")) or examples <= SHORT,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def inner(x: Any) -> None:
        body(x)

    inner()
    new = FINDINGS[start:]
    assert not new, f"{len(new)} findings:\n" + "\n".join(new[:40])
