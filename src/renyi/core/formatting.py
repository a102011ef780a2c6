"""Number formatting that never understates a privacy loss.

Every ε or δ renyi prints is an upper bound; rounding it to the nearest printed digit could
make it smaller than the bound the library proved. :func:`fmt_up` therefore rounds *up* at
the printed precision (toward +∞), and :func:`fmt_down` rounds *down* for quantities where
smaller is the safe side (a remaining budget).

    >>> fmt_up(4.728386)
    '4.729'
    >>> fmt_up(4.7280000000001)
    '4.729'
    >>> fmt_down(0.12349)
    '0.1234'
    >>> fmt_up(2.5e-7)
    '2.5e-07'
    >>> fmt_up(float("inf"))
    'inf'

Only the standard library is imported here, so the CLI stays fast to start.
"""

from __future__ import annotations

import math
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

__all__ = ["fmt_up", "fmt_down", "fmt_num", "fmt_pct"]


def _fmt(x: float, digits: int, rounding: str) -> str:
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == 0.0:
        return "0"
    d = Decimal(x)  # exact binary value: rounding starts from the true float
    exp = d.adjusted()  # floor(log10 |x|)
    quantum = Decimal(1).scaleb(exp - digits + 1)
    r = d.quantize(quantum, rounding=rounding)
    if r == 0:
        return "0"
    if -4 <= r.adjusted() < 6:
        s = format(r, "f")
        if "." in s:
            s = s.rstrip("0").rstrip(".")
        return s
    mantissa = r.scaleb(-r.adjusted())
    m = format(mantissa.normalize(), "f")
    return f"{m}e{r.adjusted():+03d}"


def fmt_up(x: float, digits: int = 4) -> str:
    """``x`` with ``digits`` significant digits, rounded toward +∞ (the printed value ≥ x)."""
    return _fmt(float(x), digits, ROUND_CEILING)


def fmt_down(x: float, digits: int = 4) -> str:
    """``x`` with ``digits`` significant digits, rounded toward −∞ (the printed value ≤ x)."""
    return _fmt(float(x), digits, ROUND_FLOOR)


def fmt_num(x: float) -> str:
    """A user-given parameter, printed as given (shortest round-trip repr)."""
    x = float(x)
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    return repr(x)


def fmt_pct(share: float) -> str:
    """A share in [0, 1] as a percentage with one decimal (presentation only, not a bound)."""
    if not math.isfinite(share):
        return "–"
    return f"{100.0 * share:.1f}%"
