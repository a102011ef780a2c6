"""PLD benchmark: renyi.pld versus dp-accounting's PLDAccountant, the PRV accountant and Opacus.

Run:  python benchmarks/bench_pld.py [--quick | --full] [--peer-limit S] [--renyi-limit S]
                                     [--json PATH] [--tables 1,2,...]
      (PYTHONPATH=src if renyi is not installed; run it under `nice` on a shared machine)

Every computation runs in a child process with a wall-clock limit, so one run prints every
figure in bounded time. Times are measured inside the child, after its imports: they are the
library's computation, not Python's start-up. A peer over its limit prints "> S s" and its
ratio as "> x" (a lower bound: renyi's time is known); a missing peer prints "n/a"; a case
that raises prints the error and the run goes on. Ratios are peer time ÷ renyi time.

Tables (issue #17):
  1. DP-SGD ε (q = 0.01, σ = 1.0) for T = 10³ … 10⁶, at δ = 1e-5 and at δ = 1e-10: renyi (a
     fresh question each time: answer caches cleared, best of 2) against dp-accounting's PLD
     and the PRV accountant (one run each); then T = 10⁷ and 10⁸ for renyi alone.
  2. 50 heterogeneous training phases (distinct q, σ, steps), the same three libraries.
  3. ε asked every 100 steps during 10⁴ steps of training (renyi.pld.PLDAccountant).
  4. Calibrating σ for a target ε: renyi.dpsgd.noise_multiplier (one-sided on the PLD's
     certified upper bound) against opacus get_noise_multiplier(accountant="prv"); renyi's
     certified bracket at both σ (a smaller σ is tighter, if it is valid).
  5. Memory: each case in a fresh process: RSS after the imports, peak RSS (ru_maxrss), and
     tracemalloc's peak of the computation (a second fresh process), including the mixed
     pipeline of 200, 1000 and 10⁴ distinct mechanisms (one neighbouring relation); then the
     default route's peak in the same process. 5b: what each import adds to RSS.
  6. (--full) Tightness over the DP-SGD grid of issue #17 (q ∈ {0.001, 0.01, 0.05}, σ ∈ {0.6,
     0.8, 1, 1.5, 2, 3}, T ∈ {10², …, 10⁶}, δ ∈ {1e-5, 1e-10}): the bracket's width, flagged
     above 1 %, and the RDP route beside it. The true ε lies in the bracket, so a width ≤ 1 %
     puts the reported upper end within 1 % of the truth.

--quick runs a small subset (about a minute); the default run takes under ~10 minutes with the
default limits; --full adds table 6 and the whole calibration grid. --json PATH writes every
table's rows (and the run's machine, commit and load) as JSON.
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import math
import multiprocessing as mp
import os
import platform
import re
import subprocess
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

# The harness imports nothing heavy at module level: a child process imports only what its
# jobs need, so that the import baseline of the memory table is renyi's alone.

Phases = list[tuple[float, float, int]]  # (sample rate q, noise multiplier σ, steps)

RENYI = ("renyi", "renyi.pld", "renyi.routes", "renyi.dpsgd")
PEERS: dict[str, tuple[str, ...]] = {
    "dpacc": ("dp_accounting", "dp_accounting.pld.pld_privacy_accountant"),
    "prv": ("prv_accountant", "prv_accountant.privacy_random_variables"),
    "opacus": ("opacus.accountants.utils", "opacus.accountants.prv"),
}
#: Modules the accounting code has no use for; the memory table says if any got imported.
HEAVY = ("matplotlib", "pandas", "duckdb", "torch", "polars", "pyarrow", "opacus", "rich", "typer",
         "mpmath", "sympy", "scipy.stats", "scipy.optimize", "scipy.integrate")


# --------------------------------------------------------------------------------------
# Child processes with a wall-clock limit
# --------------------------------------------------------------------------------------

@dataclass
class Outcome:
    """What a job in a child process gave: ``status`` is ok, timeout, error or missing."""

    status: str
    seconds: float | None = None
    value: Any = None
    message: str = ""
    notes: list[str] = field(default_factory=list)  # renyi warnings raised by the job

    @property
    def ok(self) -> bool:
        return self.status == "ok"


_CACHE_NAME = re.compile(r"^_[A-Z0-9_]*(CACHE|ANSWERS|DISC|PAIRS|MEMO|LAST)[A-Z0-9_]*$")


def forget() -> None:
    """Drop renyi's answer caches, so that the next timing is a fresh question.

    Clears every module-level dict of a ``renyi`` module whose name says it is a cache, and
    every ``functools`` cache, without naming them: the engine's internals change.
    """
    for name, mod in list(sys.modules.items()):
        if not name.startswith("renyi") or mod is None:
            continue
        for attr, val in list(vars(mod).items()):
            if isinstance(val, dict) and _CACHE_NAME.match(attr):
                val.clear()
            elif callable(getattr(val, "cache_clear", None)) and getattr(val, "__module__", None) == name:
                val.cache_clear()


def _serve(conn: Connection, imports: tuple[str, ...], quiet: bool) -> None:
    """The child: import ``imports``, say ready, then run jobs until told to stop."""
    if quiet:  # peers log at C level (absl, torch); the tables are printed by the parent
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
    warnings.simplefilter("ignore")
    logging.getLogger("absl").setLevel(logging.ERROR)
    try:
        for name in imports:
            importlib.import_module(name)
    except ImportError as exc:
        conn.send(("missing", f"{type(exc).__name__}: {exc}"))
        return
    except Exception as exc:  # a peer whose import breaks is reported, not fatal
        conn.send(("error", f"import: {type(exc).__name__}: {exc}"))
        return
    conn.send(("ready", ""))
    while True:
        try:
            job = conn.recv()
        except EOFError:
            return
        if job is None:
            return
        fn, args, repeat, fresh = job
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                best, out = math.inf, None
                for _ in range(repeat):
                    if fresh:
                        forget()
                    t0 = time.perf_counter()
                    out = fn(*args)
                    best = min(best, time.perf_counter() - t0)
            notes = sorted({f"{w.category.__name__}: {str(w.message)[:160]}" for w in caught
                            if w.category.__module__.startswith("renyi")})
            conn.send(("ok", best, out, notes))
        except Exception as exc:
            conn.send(("error", f"{type(exc).__name__}: {str(exc)[:240]}"))


class Worker:
    """A child process (spawned, so nothing is inherited) that runs jobs under a time limit.

    The child imports ``imports`` once, before any job, so that a job's time is its
    computation. A job over its limit kills the child; the next job starts a new one. A child
    whose imports fail with ImportError marks the worker missing for good.
    """

    def __init__(self, name: str, imports: Sequence[str] = (), *, import_limit: float = 300.0,
                 quiet: bool = True) -> None:
        self.name = name
        self.imports = tuple(imports)
        self.import_limit = import_limit
        self.quiet = quiet
        self._proc: Any = None
        self._conn: Connection | None = None
        self._missing: Outcome | None = None

    def _start(self) -> Outcome | None:
        if self._missing is not None:
            return self._missing
        if self._proc is not None and self._proc.is_alive():
            return None
        self._kill()
        ctx = mp.get_context("spawn")
        parent, child = ctx.Pipe()
        proc = ctx.Process(target=_serve, args=(child, self.imports, self.quiet), daemon=True,
                           name=f"bench-{self.name}")
        proc.start()
        child.close()
        self._proc, self._conn = proc, parent
        if not parent.poll(self.import_limit):
            self._kill()
            return Outcome("error", message=f"{self.name}: imports took over {self.import_limit:g} s")
        try:
            msg = parent.recv()
        except (EOFError, OSError):
            self._kill()
            return Outcome("error", message=f"{self.name}: child died while importing")
        if msg[0] == "ready":
            return None
        self._kill()
        out = Outcome(msg[0], message=msg[1])
        if msg[0] == "missing":
            self._missing = out
        return out

    def run(self, fn: Callable[..., Any], *args: Any, limit: float, repeat: int = 1,
            fresh: bool = False) -> Outcome:
        """Run ``fn(*args)`` in the child (``repeat`` times, best time kept; ``fresh`` clears
        renyi's caches before each) and wait at most ``limit`` seconds per repetition."""
        down = self._start()
        if down is not None:
            return down
        assert self._conn is not None
        self._conn.send((fn, args, repeat, fresh))
        if not self._conn.poll(limit * repeat):
            self._kill()
            return Outcome("timeout", seconds=limit)
        try:
            msg = self._conn.recv()
        except (EOFError, OSError):
            code = self._proc.exitcode if self._proc is not None else None
            self._kill()
            return Outcome("error", message=f"{self.name}: child died (exit code {code})")
        if msg[0] == "ok":
            return Outcome("ok", seconds=msg[1], value=msg[2], notes=msg[3])
        return Outcome("error", message=msg[1])

    def _kill(self) -> None:
        if self._proc is not None:
            if self._proc.is_alive():
                self._proc.kill()
            self._proc.join(10)
        if self._conn is not None:
            self._conn.close()
        self._proc, self._conn = None, None

    def close(self) -> None:
        if self._proc is not None and self._proc.is_alive() and self._conn is not None:
            try:
                self._conn.send(None)
                self._proc.join(5)
            except (OSError, BrokenPipeError):
                pass
        self._kill()


def once(fn: Callable[..., Any], *args: Any, limit: float, quiet: bool = True) -> Outcome:
    """Run one job in a fresh child that imports nothing first (for memory measurements)."""
    w = Worker("fresh", (), quiet=quiet)
    try:
        return w.run(fn, *args, limit=limit)
    finally:
        w.close()


# --------------------------------------------------------------------------------------
# Jobs (run in the child; module-level so that they pickle by name; plain data out)
# --------------------------------------------------------------------------------------

def dpsgd_items(phases: Phases) -> list[tuple[Any, int]]:
    from renyi.mechanisms import Gaussian
    from renyi.subsampling import PoissonSubsampled

    return [(PoissonSubsampled(Gaussian(s), q), t) for q, s, t in phases]


def renyi_pld(phases: Phases, delta: float) -> tuple[float, float]:
    """renyi's certified (lower, upper) ε bracket of a DP-SGD composition."""
    from renyi.pld import epsilon_bounds

    return epsilon_bounds(dpsgd_items(phases), delta)


def renyi_rdp(phases: Phases, delta: float) -> float:
    from renyi import routes

    return float(routes.best_epsilon(dpsgd_items(phases), delta, "rdp").value)


def dpacc_pld(phases: Phases, delta: float) -> float:
    """dp-accounting's PLDAccountant at its defaults."""
    import dp_accounting
    from dp_accounting.pld import pld_privacy_accountant

    acc = pld_privacy_accountant.PLDAccountant()
    for q, s, t in phases:
        acc.compose(dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(s)), t)
    return float(acc.get_epsilon(delta))


def prv(phases: Phases, delta: float) -> float:
    """The PRV accountant (Gopi et al.) with ε error 0.01 and δ error δ/1000; its upper estimate."""
    from prv_accountant import PRVAccountant
    from prv_accountant.privacy_random_variables import PoissonSubsampledGaussianMechanism

    prvs = [PoissonSubsampledGaussianMechanism(q, s) for q, s, _ in phases]
    acc = PRVAccountant(prvs, eps_error=0.01, delta_error=delta / 1000,
                        max_self_compositions=[t for _, _, t in phases])
    return float(acc.compute_epsilon(delta, [t for _, _, t in phases])[2])


def renyi_sigma(eps: float, delta: float, q: float, t: int) -> tuple[float, float]:
    """renyi.dpsgd.noise_multiplier (default route): (σ, the ε it reaches)."""
    from renyi import dpsgd

    s = dpsgd.noise_multiplier(eps, delta, q, steps=t)
    return float(s), float(s.achieved)


def opacus_sigma(eps: float, delta: float, q: float, t: int) -> float:
    from opacus.accountants.utils import get_noise_multiplier

    return float(get_noise_multiplier(target_epsilon=eps, target_delta=delta, sample_rate=q, steps=t,
                                      accountant="prv"))


def training(steps: int, q: float = 0.01, sigma: float = 1.0, delta: float = 1e-5) -> dict[str, Any]:
    """ε every 100 steps of a training run (renyi.pld.PLDAccountant): per-question times."""
    from renyi.mechanisms import Gaussian
    from renyi.pld import PLDAccountant
    from renyi.subsampling import PoissonSubsampled

    acct = PLDAccountant()
    m = PoissonSubsampled(Gaussian(sigma), q)
    t0 = time.perf_counter()
    last: Any = None
    asks = []
    for i in range(1, steps + 1):
        acct.step(m)
        if i % 100 == 0:
            a0 = time.perf_counter()
            last = acct.epsilon(delta)
            asks.append(time.perf_counter() - a0)
    total = time.perf_counter() - t0
    return {"steps": steps, "total_s": total, "ms_per_step": 1e3 * total / steps, "first_s": asks[0],
            "median_s": sorted(asks)[len(asks) // 2], "last_s": asks[-1],
            "lower": float(last.lower), "upper": float(last.upper)}


def mixed_pipeline(n: int) -> list[tuple[Any, int]]:
    """n distinct mechanisms: Laplace counts, randomized response, Gaussians, subsampled phases.

    All under one neighbouring relation (replace-one, that of randomized response), so that the
    composition has a guarantee at all: subsampling is without replacement, the replace-one
    scheme. (Mixing add/remove mechanisms in makes the default route state the guarantee for
    replace-one, where a Poisson-subsampled Gaussian becomes a group of 2 with no PLD.)
    """
    from renyi.mechanisms import Gaussian, Laplace, RandomizedResponse
    from renyi.subsampling import SubsampledWithoutReplacement

    items: list[tuple[Any, int]] = []
    for i in range(n):
        k = i % 4
        if k == 0:
            items.append((Laplace(200.0 + i, neighbouring="replace_one"), 1))
        elif k == 1:
            items.append((RandomizedResponse(epsilon=0.01 + 1e-6 * i), 1))
        elif k == 2:
            items.append((Gaussian(50.0 + 0.01 * i, neighbouring="replace_one"), 1))
        else:
            items.append((SubsampledWithoutReplacement(Gaussian(1.0 + 1e-5 * i, neighbouring="replace_one"), 0.001),
                          10))
    return items


#: Table 5's cases: name → (what, argument, δ).
MEMORY_CASES: dict[str, tuple[str, Any, float]] = {
    "DP-SGD q=0.01 σ=1 T=10⁶ δ=1e-5": ("dpsgd", [(0.01, 1.0, 10**6)], 1e-5),
    "DP-SGD q=0.05 σ=0.6 T=10⁶ δ=1e-10": ("dpsgd", [(0.05, 0.6, 10**6)], 1e-10),
    "50 phases δ=1e-5": ("phases", 50, 1e-5),
    "mixed pipeline, 50 mechanisms δ=1e-6": ("mixed", 50, 1e-6),
    "mixed pipeline, 200 mechanisms δ=1e-6": ("mixed", 200, 1e-6),
    "mixed pipeline, 1000 mechanisms δ=1e-6": ("mixed", 1000, 1e-6),
    "mixed pipeline, 10⁴ mechanisms δ=1e-6": ("mixed", 10**4, 1e-6),
}


def _rss_mb() -> tuple[float, float]:
    """(current RSS, peak RSS) of this process in MiB (Linux /proc; else ru_maxrss twice)."""
    try:
        text = Path("/proc/self/status").read_text()
        cur = int(re.search(r"VmRSS:\s+(\d+)", text).group(1)) / 1024  # type: ignore[union-attr]
        hwm = int(re.search(r"VmHWM:\s+(\d+)", text).group(1)) / 1024  # type: ignore[union-attr]
        return cur, hwm
    except (OSError, AttributeError):
        import resource

        raw = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        peak = raw / (2**20 if sys.platform == "darwin" else 1024)
        return peak, peak


def memory_case(name: str, traced: bool) -> dict[str, Any]:
    """One case of table 5, meant for a fresh process: RSS before and after ``import renyi,
    renyi.pld``, the peak RSS of the whole process, and (``traced``) tracemalloc's peak of the
    computation alone."""
    import resource
    import tracemalloc

    what, arg, delta = MEMORY_CASES[name]
    rss_start, _ = _rss_mb()
    import renyi  # noqa: F401
    import renyi.pld

    rss_import, _ = _rss_mb()
    items = (dpsgd_items(arg) if what == "dpsgd" else dpsgd_items(phases_of(arg)) if what == "phases"
             else mixed_pipeline(arg))
    if traced:
        tracemalloc.start()
    t0 = time.perf_counter()
    lo, hi = renyi.pld.epsilon_bounds(items, delta)
    seconds = time.perf_counter() - t0
    traced_peak = tracemalloc.get_traced_memory()[1] / 2**20 if traced else None
    if traced:
        tracemalloc.stop()
    peak = _peak_mb()
    heavy = [m for m in HEAVY if m in sys.modules]
    return {"case": name, "rss_start_mb": rss_start, "rss_import_mb": rss_import, "peak_rss_mb": peak,
            "traced_peak_mb": traced_peak, "seconds": seconds, "lower": lo, "upper": hi,
            "heavy_imports": heavy, "modules": len(sys.modules)}


def default_route_case(name: str) -> dict[str, Any]:
    """Table 5, for a fresh process: the question as a user asks it, the default route (the
    minimum over the routes, so also the RDP route and its imports): its time and peak RSS;
    then (after the peak was read) the RDP route's ε alone."""
    what, arg, delta = MEMORY_CASES[name]
    from renyi import routes

    items = (dpsgd_items(arg) if what == "dpsgd" else dpsgd_items(phases_of(arg)) if what == "phases"
             else mixed_pipeline(arg))
    t1 = time.perf_counter()
    best = routes.best_epsilon(items, delta)
    default_s = time.perf_counter() - t1
    peak_default = _peak_mb()
    heavy = [m for m in HEAVY if m in sys.modules]
    rdp = float(routes.best_epsilon(items, delta, "rdp").value)
    return {"peak_rss_default_route_mb": peak_default, "default_route_s": default_s,
            "default_epsilon": float(best.value), "default_method": best.method, "rdp": rdp,
            "heavy_imports_default_route": heavy}


def _peak_mb() -> float:
    """Peak RSS of this process so far, MiB (ru_maxrss: KiB on Linux, bytes on macOS)."""
    import resource

    raw = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return max(raw / (2**20 if sys.platform == "darwin" else 1024), _rss_mb()[1])


#: Table 5b: what each import adds to a fresh process, in the order renyi's accounting needs them.
IMPORT_STEPS = ("numpy", "scipy.special", "scipy.fft", "renyi", "renyi.pld", "renyi.routes", "renyi.dpsgd",
                "scipy.optimize")


def import_costs() -> list[tuple[str, float, float, int]]:
    """(module, RSS after importing it (MiB), seconds, modules loaded) for each of IMPORT_STEPS."""
    out = [("(python + harness)", _rss_mb()[0], 0.0, len(sys.modules))]
    for name in IMPORT_STEPS:
        t0 = time.perf_counter()
        importlib.import_module(name)
        out.append((name, _rss_mb()[0], time.perf_counter() - t0, len(sys.modules)))
    return out


def tight_case(q: float, sigma: float, t: int, delta: float) -> dict[str, Any]:
    """One case of table 6: the PLD bracket (timed) and the RDP route's ε."""
    t0 = time.perf_counter()
    lo, hi = renyi_pld([(q, sigma, t)], delta)
    seconds = time.perf_counter() - t0
    return {"lower": lo, "upper": hi, "rdp": renyi_rdp([(q, sigma, t)], delta), "pld_s": seconds}


def check_sigmas(q: float, t: int, delta: float, sigmas: list[float]) -> list[tuple[float, float]]:
    """renyi's certified ε bracket at each σ (table 4's validity check)."""
    return [renyi_pld([(q, s, t)], delta) for s in sigmas]


def phases_of(n: int) -> Phases:
    return [(0.005 + 0.001 * (i % 7), 0.8 + 0.05 * (i % 11), 200 + 37 * i) for i in range(n)]


def sleep_job(seconds: float) -> float:
    """A job that only waits (tests the time limit)."""
    time.sleep(seconds)
    return seconds


def failing_job() -> None:
    raise ValueError("on purpose")


# --------------------------------------------------------------------------------------
# The run: workers, formatting, tables
# --------------------------------------------------------------------------------------

class Bench:
    """One run: its options, workers (renyi and one per peer) and the rows of every table."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.quick: bool = args.quick
        self.full: bool = args.full
        self.peer_limit: float = args.peer_limit
        self.renyi_limit: float = args.renyi_limit
        quiet = not args.verbose
        self.quiet = quiet
        self.workers = {"renyi": Worker("renyi", RENYI, quiet=quiet)}
        for name, mods in PEERS.items():
            self.workers[name] = Worker(name, mods, quiet=quiet)
        self.results: dict[str, Any] = {"meta": meta(args), "tables": {}}
        self.over: dict[str, int] = {}  # table 1: peer → the smallest T where it went over its limit

    def renyi(self, fn: Callable[..., Any], *args: Any, repeat: int = 2, fresh: bool = True,
              limit: float | None = None) -> Outcome:
        return self.workers["renyi"].run(fn, *args, limit=limit or self.renyi_limit, repeat=repeat, fresh=fresh)

    def peer(self, name: str, fn: Callable[..., Any], *args: Any) -> Outcome:
        return self.workers[name].run(fn, *args, limit=self.peer_limit)

    def table(self, key: str, title: str) -> list[dict[str, Any]]:
        print(f"\n{title}", flush=True)
        rows: list[dict[str, Any]] = []
        self.results["tables"][key] = {"title": title, "rows": rows}
        return rows

    def note(self, key: str, text: str) -> None:
        print(f"   {text}", flush=True)
        self.results["tables"][key].setdefault("notes", []).append(text)

    def close(self) -> None:
        for w in self.workers.values():
            w.close()


def meta(args: argparse.Namespace) -> dict[str, Any]:
    here = Path(__file__).resolve().parent
    try:
        commit = subprocess.run(["git", "-C", str(here), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, timeout=10).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        commit = None
    try:
        load = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        load = None
    return {"date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "commit": commit, "loadavg": load,
            "cpus": os.cpu_count(), "python": platform.python_version(), "machine": platform.machine(),
            "options": {k: v for k, v in vars(args).items() if k != "json"}}


def secs(o: Outcome, spec: str = ".3f") -> str:
    """A time column: the time, '> S s' over the limit, 'n/a' missing, 'error', 'skip'."""
    if o.status == "ok":
        return format(o.seconds, spec)
    if o.status == "timeout":
        return f">{o.seconds:g}"
    return {"missing": "n/a", "skip": "skip"}.get(o.status, "error")


def val(o: Outcome, spec: str = ".4f", pick: Callable[[Any], float] | None = None) -> str:
    if o.status != "ok":
        return "—"
    v = o.value if pick is None else pick(o.value)
    return format(v, spec)


def ratio(peer: Outcome, ours: Outcome) -> str:
    """Peer time ÷ renyi time; over the peer's limit it is a lower bound ('>')."""
    if ours.status != "ok" or not ours.seconds:
        return "n/a"
    if peer.status == "ok" and peer.seconds is not None:
        return f"{peer.seconds / ours.seconds:.1f}"
    if peer.status == "timeout" and peer.seconds is not None:
        return f">{peer.seconds / ours.seconds:.0f}"
    return "n/a"


def peer_eps(peer: Outcome, ours: Outcome) -> str:
    """A peer's ε, marked '!' when it is below renyi's certified lower bound (so provably below
    the true ε of the composition: an invalid privacy claim)."""
    if peer.status != "ok":
        return "—"
    lower = (ours.value["lower"] if isinstance(ours.value, dict) else ours.value[0]) if ours.ok else None
    below = lower is not None and peer.value < lower
    return f"{peer.value:.4f}{'!' if below else ''}"


def row_of(o: Outcome) -> dict[str, Any]:
    """An outcome as JSON: status, seconds (the limit when timed out), value, message."""
    d = asdict(o)
    if not d["notes"]:
        del d["notes"]
    if not d["message"]:
        del d["message"]
    return d


def report_failures(b: Bench, key: str, label: str, *outs: tuple[str, Outcome]) -> None:
    for who, o in outs:
        if o.status == "error":
            b.note(key, f"{label}: {who} failed: {o.message}")
        for n in o.notes:
            b.note(key, f"{label}: {who} warned: {n}")


SKIPPED = Outcome("skip", message="not run: over the limit at a smaller T or a larger δ")


def table_steps(b: Bench) -> None:
    ts = [10**3, 10**4] if b.quick else [10**3, 10**4, 10**5, 10**6]
    big = [10**8] if b.quick else [10**7, 10**8]
    for block, delta in enumerate((1e-5,) if b.quick else (1e-5, 1e-10)):
        key = f"1{'ab'[block]}"
        rows = b.table(key, f"1{'ab'[block]}. DP-SGD q=0.01 σ=1.0 δ={delta:g} (seconds; ×peer = peer time ÷ "
                            f"renyi time; peers limited to {b.peer_limit:g} s; '!' = a peer ε below renyi's "
                            "certified lower end, i.e. below the true ε)")
        print(f"{'T':>9} {'renyi s':>8} {'[lower, upper]':>24} {'dpacc s':>8} {'dpacc ε':>9} "
              f"{'prv s':>7} {'prv ε':>9} {'×dpacc':>7} {'×prv':>6}")
        limited = False
        for t in ts + big:
            ph = [(0.01, 1.0, t)]
            r = b.renyi(renyi_pld, ph, delta)
            peers = {}
            for name, fn in (("dpacc", dpacc_pld), ("prv", prv)):
                if t in big:
                    peers[name] = Outcome("skip", message="renyi alone")
                elif name == "prv" and delta < 1e-5 and t >= 10**5 and not b.full:
                    peers[name] = Outcome("skip", message="with --full")
                elif t >= b.over.get(name, math.inf):
                    peers[name] = SKIPPED
                else:
                    peers[name] = b.peer(name, fn, ph, delta)
                    if peers[name].status == "timeout":
                        b.over[name] = t
                limited = limited or peers[name] is SKIPPED or peers[name].status == "timeout"
            br = f"[{r.value[0]:.4f}, {r.value[1]:.4f}]" if r.ok else r.status
            if t in big:
                rdp = b.renyi(renyi_rdp, ph, delta, repeat=1, fresh=False)
                print(f"{t:>9.0e} {secs(r):>8} {br:>24}   renyi alone; RDP route ε {val(rdp)}", flush=True)
                peers["rdp"] = rdp
            else:
                print(f"{t:>9} {secs(r):>8} {br:>24} {secs(peers['dpacc']):>8} {peer_eps(peers['dpacc'], r):>9} "
                      f"{secs(peers['prv']):>7} {peer_eps(peers['prv'], r):>9} {ratio(peers['dpacc'], r):>7} "
                      f"{ratio(peers['prv'], r):>6}", flush=True)
            rows.append({"T": t, "delta": delta, "renyi": row_of(r), **{k: row_of(v) for k, v in peers.items()}})
            report_failures(b, key, f"T={t}", ("renyi", r), *peers.items())
        if delta < 1e-5 and not b.full and not b.quick:
            b.note(key, "PRV at T ≥ 10⁵ and δ = 1e-10 ('skip'): only with --full (over 2 minutes)")
        if limited:
            b.note(key, f"'>' = over the {b.peer_limit:g} s limit (ratio: a lower bound); 'skip' = not run at this "
                        "or a larger T once over the limit at a larger δ or smaller T (--peer-limit S to wait longer)")


def table_phases(b: Bench) -> None:
    n = 3 if b.quick else 50
    ph = phases_of(n)
    rows = b.table("2", f"2. {n} heterogeneous phases (distinct q, σ, steps; {sum(t for *_, t in ph)} steps), δ=1e-5")
    r = b.renyi(renyi_pld, ph, 1e-5)
    d = b.peer("dpacc", dpacc_pld, ph, 1e-5)
    p = b.peer("prv", prv, ph, 1e-5)
    br = f"[{r.value[0]:.4f}, {r.value[1]:.4f}]" if r.ok else r.status
    print(f"   renyi {secs(r)} s {br}   dp-accounting {secs(d)} s ε={peer_eps(d, r)} (×{ratio(d, r)})   "
          f"prv {secs(p)} s ε={peer_eps(p, r)} (×{ratio(p, r)})", flush=True)
    rows.append({"phases": n, "delta": 1e-5, "renyi": row_of(r), "dpacc": row_of(d), "prv": row_of(p)})
    report_failures(b, "2", f"{n} phases", ("renyi", r), ("dpacc", d), ("prv", p))


def table_training(b: Bench) -> None:
    steps = 2000 if b.quick else 10**4
    rows = b.table("3", f"3. ε every 100 steps during {steps} steps (q=0.01, σ=1.0, δ=1e-5), "
                        "renyi.pld.PLDAccountant")
    o = b.renyi(training, steps, repeat=1)
    if o.ok:
        v = o.value
        print(f"   total {v['total_s']:.2f} s = {v['ms_per_step']:.3f} ms per step; per question: first "
              f"{v['first_s']:.3f} s, median {v['median_s']:.3f} s, last {v['last_s']:.3f} s; "
              f"final [{v['lower']:.4f}, {v['upper']:.4f}]", flush=True)
    else:
        print(f"   {o.status}: {o.message}")
    rows.append(row_of(o))


CALIBRATION_QUICK = [(3.0, 0.01, 10**3)]
CALIBRATION_DEFAULT = [(1.0, 0.01, 10**3), (3.0, 0.01, 10**3), (8.0, 0.01, 10**3), (1.0, 0.004, 10**4),
                       (3.0, 0.01, 10**4), (8.0, 0.004, 10**4), (3.0, 0.004, 10**5)]
CALIBRATION_FULL = [(e, q, t) for t in (10**3, 10**4, 10**5) for q in (0.004, 0.01) for e in (1.0, 3.0, 8.0)]


def table_calibration(b: Bench) -> None:
    delta = 1e-5
    cases = CALIBRATION_QUICK if b.quick else CALIBRATION_FULL if b.full else CALIBRATION_DEFAULT
    rows = b.table("4", f"4. σ for a target ε (δ={delta:g}): renyi.dpsgd.noise_multiplier vs opacus "
                        f"get_noise_multiplier(accountant='prv'), peer limited to {b.peer_limit:g} s;\n"
                        "   renyi's certified ε bracket at each σ ('!' = the lower end is above the target: "
                        "that σ is provably too small)")
    print(f"{'ε':>4} {'q':>6} {'T':>7} {'renyi s':>8} {'σ renyi':>9} {'ε upper at σ':>13} {'opacus s':>9} "
          f"{'σ opacus':>9} {'ε bracket at σ opacus':>22} {'σ ratio':>8} {'×opacus':>8}")
    for eps, q, t in cases:
        r = b.renyi(renyi_sigma, eps, delta, q, t, repeat=1)
        o = b.peer("opacus", opacus_sigma, eps, delta, q, t)
        sig = ([r.value[0]] if r.ok else []) + ([o.value] if o.ok else [])
        chk = b.renyi(check_sigmas, q, t, delta, sig, repeat=1, fresh=False) if sig else Outcome("skip")
        at_r = at_o = None
        if chk.ok:
            at_r = chk.value[0] if r.ok else None
            at_o = chk.value[-1] if o.ok else None
        ok_r = at_r is not None and at_r[1] <= eps
        up_r = "—" if at_r is None else f"{at_r[1]:.4f}{'' if ok_r else ' INVALID'}"
        br_o = "—" if at_o is None else f"[{at_o[0]:.4f}, {at_o[1]:.4f}]{'!' if at_o[0] > eps else ' '}"
        srat = f"{r.value[0] / o.value:.4f}" if r.ok and o.ok else "—"
        print(f"{eps:>4g} {q:>6} {t:>7} {secs(r):>8} {val(r, '.5f', lambda v: v[0]):>9} {up_r:>13} {secs(o):>9} "
              f"{val(o, '.5f'):>9} {br_o:>22} {srat:>8} {ratio(o, r):>8}", flush=True)
        rows.append({"epsilon": eps, "q": q, "T": t, "delta": delta, "renyi": row_of(r), "opacus": row_of(o),
                     "renyi_bracket_at_renyi_sigma": at_r, "renyi_bracket_at_opacus_sigma": at_o,
                     "renyi_sigma_valid": ok_r})
        report_failures(b, "4", f"ε={eps:g} q={q} T={t}", ("renyi", r), ("opacus", o), ("check", chk))
    b.note("4", "σ ratio = σ renyi ÷ σ opacus (below 1: renyi certifies the target with less noise); opacus "
                "stops its bisection within 0.01 of the target on its PRV estimate")


def table_memory(b: Bench) -> None:
    names = [n for n in MEMORY_CASES if " 50 mech" not in n]
    if b.quick:
        names = [n for n in MEMORY_CASES if "T=10⁶ δ=1e-5" in n or " 50 mech" in n]
    rows = b.table("5", "5. memory: each case in a fresh process (MiB; RSS after `import renyi, renyi.pld`, "
                        "peak RSS of the process, tracemalloc's peak of the computation)")
    print(f"   {'case':<40} {'time s':>7} {'RSS start':>9} {'RSS import':>10} {'peak RSS':>9} {'traced':>7}  "
          f"{'PLD [lower, upper]':>22} {'default s':>9} {'peak RSS':>9} {'default ε':>17} {'RDP ε':>9}")
    traced_up_to = 1e9 if b.full else -1.0 if b.quick else 20.0
    over = False
    default_imports: dict[tuple[str, ...], list[str]] = {}
    for name in names:
        if over and name.startswith("mixed"):
            print(f"   {name:<40} {'skip':>7}  (a smaller pipeline was over the limit)", flush=True)
            rows.append({"case": name, "rss": row_of(Outcome("skip"))})
            continue
        o = once(memory_case, name, False, limit=b.renyi_limit, quiet=b.quiet)
        over = over or (o.status == "timeout" and name.startswith("mixed"))
        dr = once(default_route_case, name, limit=b.renyi_limit, quiet=b.quiet) if o.ok else Outcome("skip")
        tr = (once(memory_case, name, True, limit=b.renyi_limit, quiet=b.quiet)
              if o.ok and o.value["seconds"] <= traced_up_to else Outcome("skip"))
        if o.ok:
            v = o.value
            traced = f"{tr.value['traced_peak_mb']:.1f}" if tr.ok else tr.status
            br = f"[{v['lower']:.4f}, {v['upper']:.4f}]"
            dv = dr.value if dr.ok else {}
            dflt = f"{dv['default_epsilon']:.4f} {dv['default_method']}" if dr.ok else secs(dr)
            dpeak = f"{dv['peak_rss_default_route_mb']:.1f}" if dr.ok else secs(dr)
            dsec = f"{dv['default_route_s']:.2f}" if dr.ok else secs(dr)
            drdp = f"{dv['rdp']:.4f}" if dr.ok else "—"
            print(f"   {name:<40} {v['seconds']:>7.2f} {v['rss_start_mb']:>9.1f} {v['rss_import_mb']:>10.1f} "
                  f"{v['peak_rss_mb']:>9.1f} {traced:>7}  {br:>22} {dsec:>9} {dpeak:>9} "
                  f"{dflt:>17} {drdp:>9}", flush=True)
            if v["heavy_imports"]:
                b.note("5", f"{name}: the PLD answer imported {v['heavy_imports']}")
            extra = sorted(set(dv.get("heavy_imports_default_route", [])) - set(v["heavy_imports"]))
            if extra:
                default_imports.setdefault(tuple(extra), []).append(name)
        else:
            what = f"over the {b.renyi_limit:g} s limit" if o.status == "timeout" else o.message
            print(f"   {name:<40} {secs(o):>7}  ({what})", flush=True)
        rows.append({"case": name, "rss": row_of(o), "traced": row_of(tr), "default_route": row_of(dr)})
        report_failures(b, "5", name, ("renyi", o), ("default route", dr))
    for mods, cases in default_imports.items():
        b.note("5", f"the default route imported {list(mods)} in {len(cases)} of "
                    f"{len(names)} cases (see 5b for its cost)")
    o = once(import_costs, limit=b.renyi_limit, quiet=b.quiet)
    if o.ok:
        steps = o.value
        print("   5b. imports, one after the other in a fresh process: + MiB of RSS (s, modules loaded)")
        print("      " + "; ".join(f"{n} +{rss - prev[1]:.1f} ({sec:.2f} s, {mods - prev[3]})"
                                    for prev, (n, rss, sec, mods) in zip(steps, steps[1:])))
        print(f"      start {steps[0][1]:.1f} MiB, total {steps[-1][1]:.1f} MiB", flush=True)
        rows.append({"case": "import costs", "steps": steps})
    b.note("5", "RSS start: the child before importing renyi (Python + this harness); peak RSS: of the process after "
                "the PLD answer (epsilon_bounds); traced: tracemalloc's peak of that computation, in a second fresh "
                f"process ({'skipped with --quick' if b.quick else 'always with --full' if b.full else f'skipped when the first took over {traced_up_to:g} s'}); default s, peak RSS: "
                "the default route (routes.best_epsilon: the minimum over routes) asked alone in a third fresh process")


TIGHT_QUICK = ([0.01], [1.0], [100, 10**4])
TIGHT_FULL = ([0.001, 0.01, 0.05], [0.6, 0.8, 1.0, 1.5, 2.0, 3.0], [100, 10**3, 10**4, 10**5, 10**6])


def table_tightness(b: Bench, grid: tuple[list[float], list[float], list[int]] | None = None) -> None:
    qs, sig, ts = grid or (TIGHT_QUICK if b.quick else TIGHT_FULL)
    rows = b.table("6", "6. tightness: width = (upper − lower)/upper; rdp/upper = RDP route ε ÷ PLD upper; at δ = 1e-10 "
                        "and T ≥ 10⁵ also dp-accounting's PLD ε ('!' = below renyi's certified lower end)")
    print(f"{'q':>6} {'σ':>4} {'T':>8} {'δ':>6} {'lower':>11} {'upper':>11} {'width %':>8} {'rdp/upper':>9} {'s':>6} "
          f"{'dpacc ε':>11}")
    wide: list[tuple[float, float, int, float]] = []
    above: list[tuple[float, float, int, float]] = []
    failed: list[tuple[float, float, int, float]] = []
    warned: list[tuple[float, float, int, float]] = []
    peer_below: list[tuple[float, float, int, float]] = []
    peer_asked = 0
    worst, worst_case = 0.0, None
    for q in qs:
        for s in sig:
            for t in ts:
                for d in (1e-5, 1e-10):
                    case = (q, s, t, d)
                    o = b.renyi(tight_case, q, s, t, d, repeat=1)
                    # dp-accounting's one-shot FFT loses validity at tiny δ and many steps (issue #17)
                    pe = (b.peer("dpacc", dpacc_pld, [(q, s, t)], d) if d <= 1e-10 and t >= 10**5
                          else Outcome("skip"))
                    rows.append({"q": q, "sigma": s, "T": t, "delta": d, **row_of(o), "dpacc": row_of(pe)})
                    if not o.ok:
                        failed.append(case)
                        print(f"{q:>6} {s:>4} {t:>8} {d:>6.0e}  {o.status}: {o.message or f'> {o.seconds:g} s'}",
                              flush=True)
                        continue
                    v = o.value
                    lo, hi, rdp = v["lower"], v["upper"], v["rdp"]
                    w = (hi - lo) / hi if hi > 0 else 0.0
                    if w > worst:
                        worst, worst_case = w, case
                    flags = []
                    if w > 0.01:
                        wide.append(case)
                        flags.append("wider than 1 %")
                    if hi > rdp:
                        above.append(case)
                        flags.append("PLD upper above RDP")
                    if o.notes:
                        warned.append(case)
                        flags.append("; ".join(o.notes)[:100])
                    if pe.status != "skip":
                        peer_asked += 1
                        if pe.ok and pe.value < lo:
                            peer_below.append(case)
                    pcol = peer_eps(pe, o) if pe.ok else secs(pe) if pe.status != "skip" else ""
                    flag = f"  <-- {'; '.join(flags)}" if flags else ""
                    print(f"{q:>6} {s:>4} {t:>8} {d:>6.0e} {lo:>11.5f} {hi:>11.5f} "
                          f"{100 * w:>8.3f} {rdp / hi if hi > 0 else math.inf:>9.4f} {v['pld_s']:>6.2f} "
                          f"{pcol:>11}{flag}", flush=True)
    n = len(rows)
    summary = {"cases": n, "widest_percent": 100 * worst, "widest_case": worst_case,
               "wider_than_1_percent": wide, "pld_upper_above_rdp": above, "failed": failed, "warned": warned,
               "dpacc_asked": peer_asked, "dpacc_below_renyi_lower": peer_below}
    b.results["tables"]["6"]["summary"] = summary

    def listed(cases: list[tuple[float, float, int, float]]) -> str:
        return f"{len(cases)} {cases}" if cases else "0"

    print(f"   summary: {n} cases (q, σ, T, δ); widest bracket {100 * worst:.3f} % at {worst_case}; wider than 1 %: "
          f"{listed(wide)}; PLD upper above the RDP ε: {listed(above)}; failed or over the limit: "
          f"{listed(failed)}; with a renyi warning (fallback): {listed(warned)}; dp-accounting's ε below renyi's "
          f"certified lower end: {listed(peer_below)} of {peer_asked} asked", flush=True)


TABLES: dict[str, Callable[[Bench], None]] = {
    "1": table_steps, "2": table_phases, "3": table_training, "4": table_calibration, "5": table_memory,
    "6": table_tightness,
}


def parse(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    size = p.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="a small subset (about a minute)")
    size.add_argument("--full", action="store_true", help="everything, with the tightness grid (table 6)")
    p.add_argument("--peer-limit", type=float, default=120.0, metavar="S",
                   help="wall-clock limit of one peer computation, seconds (default 120)")
    p.add_argument("--renyi-limit", type=float, default=120.0, metavar="S",
                   help="wall-clock limit of one renyi computation, seconds (default 120)")
    p.add_argument("--tables", default=None, metavar="LIST",
                   help="comma-separated tables to run, e.g. 1,4 (default: 1-5, and 6 with --full)")
    p.add_argument("--json", type=Path, default=None, metavar="PATH", help="write every table's rows as JSON")
    p.add_argument("--verbose", action="store_true", help="let the child processes print (peers' logs)")
    args = p.parse_args(argv)
    if args.peer_limit <= 0 or args.renyi_limit <= 0:
        p.error("limits must be positive")
    if args.tables is None:
        args.tables = "1,2,3,4,5,6" if args.full else "1,2,3,4,5"
    bad = set(args.tables.split(",")) - set(TABLES)
    if bad:
        p.error(f"--tables: unknown table(s) {sorted(bad)}; choose from {sorted(TABLES)}")
    return args


def main(argv: Sequence[str] | None = None) -> None:
    args = parse(argv)
    b = Bench(args)
    m = b.results["meta"]
    print(f"bench_pld {m['date']}  commit {m['commit']}  load average {m['loadavg']}  cpus {m['cpus']}  "
          f"python {m['python']}  options {' '.join(sys.argv[1:] if argv is None else argv) or '(default)'}",
          flush=True)
    t0 = time.perf_counter()
    try:
        for key in args.tables.split(","):
            TABLES[key](b)
    finally:
        b.close()
        b.results["meta"]["wall_s"] = time.perf_counter() - t0
        b.results["meta"]["loadavg_end"] = [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None
        if args.json is not None:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(json.dumps(b.results, indent=1, default=str) + "\n")
    print(f"\nwall time {time.perf_counter() - t0:.0f} s; load average at the end {b.results['meta'].get('loadavg_end')}",
          flush=True)


if __name__ == "__main__":
    main()
