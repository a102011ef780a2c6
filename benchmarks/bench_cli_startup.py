"""Start-up time of the `renyi` command (target: `renyi --help` under 0.5 s).

Run: python benchmarks/bench_cli_startup.py
"""

import shutil
import subprocess
import sys
import time


def best_of(cmd: list[str], n: int = 5) -> float:
    best = float("inf")
    for _ in range(n):
        t0 = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=False)
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    exe = shutil.which("renyi")
    rows = [("python -c pass (baseline)", [sys.executable, "-c", "pass"])]
    if exe:
        rows.append(("renyi --help", [exe, "--help"]))
        rows.append(("renyi --version", [exe, "--version"]))
    rows.append(("python -c 'import renyi'", [sys.executable, "-c", "import renyi"]))
    rows.append(("python -c 'import renyi.conversions'", [sys.executable, "-c", "import renyi.conversions"]))
    print(f"{'command':45s} {'best of 5 (s)':>14s}")
    for name, cmd in rows:
        print(f"{name:45s} {best_of(cmd):14.3f}")


if __name__ == "__main__":
    main()
