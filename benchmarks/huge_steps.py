"""Very long DP-SGD runs (10⁹ … 10¹⁵ steps): renyi before and after the CLT route (issue #26).

For each case, ``renyi.dpsgd.epsilon(σ, q, steps=T, delta=δ)`` is run by the tree under test
and by a snapshot of main before the route (``--before``, default 7b32004, exported with
``git archive``), each in a fresh process (cold caches), with its time. Printed beside them:
the certified bracket of the CLT route ([lower, upper] — the lower end is of a dominated
pair, so it bounds the true ε from below), the RDP route (a certified upper bound computed
independently), and the μ-GDP limit law (Bu et al. 2020: μ = q√(T(e^{1/σ²} − 1)); not a bound,
its error is O(1/√T) relative).

    PYTHONPATH=src python benchmarks/huge_steps.py [--before 7b32004]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

CASES = [  # (σ, q, T, δ); replace-one cases in RO_CASES
    (1.0, 1e-7, 10**12, 1e-5),   # the "36.3 where the answer is 0.58"
    (1.0, 1e-11, 10**12, 1e-5),  # the "10.0 where the answer is 0.0"
    (1.0, 1e-8, 10**12, 1e-5),
    (2.0, 1e-7, 10**12, 1e-5),
    (1.0, 1e-7, 10**12, 1e-10),
    (0.8, 1e-7, 10**12, 1e-6),
    (1.1, 1e-5, 10**9, 1e-5),
    (1.0, 1e-9, 10**15, 1e-5),
]
#: replace-one (``PoissonSubsampledReplaceOne(Gaussian(σ), q).compose(T).best_epsilon(δ)``);
#: limit law μ = q√(2T(e^{1/σ²} − e^{−1/σ²}))
RO_CASES = [
    (1.0, 1e-7, 10**12, 1e-5),
    (2.0, 1e-7, 10**12, 1e-6),
]


def _worker() -> None:
    import warnings

    import renyi

    out = []
    for s, q, t, d in CASES:
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            e = renyi.dpsgd.epsilon(s, q, steps=t, delta=d)
        out.append({"eps": float(e), "lower": getattr(e, "lower", None), "method": e.method.split(":")[0],
                    "sec": time.perf_counter() - t0})
    from renyi.mechanisms import Gaussian
    from renyi.sampling.subsampling import PoissonSubsampledReplaceOne

    for s, q, t, d in RO_CASES:
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            c = PoissonSubsampledReplaceOne(Gaussian(s), q).compose(t).best_epsilon(d)
        out.append({"eps": c.value, "lower": c.lower, "method": c.method, "sec": time.perf_counter() - t0})
    print(json.dumps(out))


def _run(path: str) -> list[dict[str, object]]:
    env = dict(os.environ, PYTHONPATH=path)
    r = subprocess.run([sys.executable, __file__, "--worker"], env=env, capture_output=True, text=True, check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _gdp_eps(mu: float, delta: float) -> float:
    from scipy import optimize, stats

    def d(e: float) -> float:
        return float(stats.norm.cdf(-e / mu + mu / 2) - math.exp(e) * stats.norm.cdf(-e / mu - mu / 2))

    return 0.0 if d(0.0) <= delta else float(optimize.brentq(lambda e: d(e) - delta, 0.0, 200.0, xtol=1e-14))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--before", default="7b32004")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        _worker()
        return
    root = Path(__file__).resolve().parent.parent
    with tempfile.TemporaryDirectory() as tmp:
        arc = Path(tmp) / "before.tar"
        subprocess.run(["git", "-C", str(root), "archive", "-o", str(arc), args.before, "src"], check=True)
        with tarfile.open(arc) as tf:
            tf.extractall(tmp, filter="data")
        before = _run(str(Path(tmp) / "src"))
    after = _run(str(root / "src"))

    from renyi import Gaussian, PoissonSubsampled
    from renyi.accounting import _clt, routes

    print(f"| σ | q | T | δ | before ({args.before}) | s | after | s | CLT bracket [lower, upper] | RDP route "
          "| μ-GDP limit | after / limit − 1 |")
    print("|---|---|---|---|---|---:|---|---:|---|---:|---:|---:|")
    from renyi.sampling.subsampling import PoissonSubsampledReplaceOne

    rows = [(c, False) for c in CASES] + [(c, True) for c in RO_CASES]
    for ((s, q, t, d), ro), b, a in zip(rows, before, after):
        mech = PoissonSubsampledReplaceOne(Gaussian(s), q) if ro else PoissonSubsampled(Gaussian(s), q)
        it = [(mech, t)]
        try:
            lo, hi = _clt.epsilon_bounds(it, d)
            br = f"[{lo:.6g}, {hi:.6g}]"
        except Exception as exc:  # noqa: BLE001 - printed
            br = f"n/a ({exc})"
        rdp = routes.best_epsilon(mech.compose(t), d, "rdp").value
        var = 2 * (math.exp(1 / s**2) - math.exp(-1 / s**2)) if ro else math.expm1(1 / s**2)
        lim = _gdp_eps(q * math.sqrt(t * var), d)
        rel = f"{float(a['eps']) / lim - 1:+.2e}" if lim > 0 else ("0" if a["eps"] == 0 else "—")  # type: ignore[arg-type]
        print(f"| {s:g}{' (replace-one)' if ro else ''} | {q:g} | {t:.0e} | {d:g} | {b['eps']:.6g} ({b['method']}) | {b['sec']:.1f} "
              f"| {a['eps']:.6g} ({a['method']}) | {a['sec']:.1f} | {br} | {rdp:.6g} | {lim:.6g} | {rel} |")


if __name__ == "__main__":
    main()
