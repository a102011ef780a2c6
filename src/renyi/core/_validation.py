"""Parameter domains as data.

A :class:`Interval` checks a value, words the error and can be inspected by tests,
so the message and the check can never disagree::

    >>> POSITIVE.check("sigma", 1.5)
    1.5
    >>> POSITIVE.check("sigma", -1.0)
    Traceback (most recent call last):
    ...
    renyi.core.errors.DomainError: sigma must be in (0, inf); got -1.0
"""

from __future__ import annotations

import math
import os
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np

from renyi.core.errors import DomainError

__all__ = [
    "Interval",
    "POSITIVE",
    "NONNEGATIVE",
    "NONNEGATIVE_EXTENDED",
    "PROBABILITY_OPEN",
    "PROBABILITY",
    "UNIT_CLOSED_OPEN",
    "ORDER",
    "ORDER_ANY",
    "REAL",
    "check_int",
    "check_real",
    "check_array",
]


def _fmt(x: float) -> str:
    if x == math.inf:
        return "inf"
    if x == -math.inf:
        return "-inf"
    return repr(float(x)) if not float(x).is_integer() else str(int(x)) if abs(x) < 1e16 else repr(float(x))


@dataclass(frozen=True, slots=True)
class Interval:
    """A real interval with open or closed ends; ``inf`` ends may be included."""

    lo: float
    hi: float
    lo_closed: bool = False
    hi_closed: bool = False

    def __str__(self) -> str:
        left = "[" if self.lo_closed else "("
        right = "]" if self.hi_closed else ")"
        return f"{left}{_fmt(self.lo)}, {_fmt(self.hi)}{right}"

    def contains(self, x: float) -> bool:
        if math.isnan(x):
            return False
        above = x >= self.lo if self.lo_closed else x > self.lo
        below = x <= self.hi if self.hi_closed else x < self.hi
        return above and below

    def check(self, name: str, value: Any) -> float:
        """Return ``value`` as a float, or raise naming ``name``, this domain and the value."""
        x = check_real(name, value)
        if not self.contains(x):
            raise DomainError(f"{name} must be in {self}; got {value!r}", name=name, value=value)
        return x

    def check_array(self, name: str, value: Any) -> np.ndarray:
        """Vectorized :meth:`check`: every element must lie in the domain."""
        arr = check_array(name, value)
        lo_ok = arr >= self.lo if self.lo_closed else arr > self.lo
        hi_ok = arr <= self.hi if self.hi_closed else arr < self.hi
        bad = ~(lo_ok & hi_ok)  # NaN fails both comparisons, so it is caught here
        if np.any(bad):
            first = arr[bad].flat[0]
            raise DomainError(
                f"{name} must be in {self}; got {float(first)!r}", name=name, value=first
            )
        return arr


def check_real(name: str, value: Any) -> float:
    """Return ``value`` as a float; a non-number is a ``TypeError`` and NaN a ``DomainError``."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.floating, np.integer)):
        if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "fiu":
            value = value.item()
        else:
            raise TypeError(f"{name} must be a real number; got {type(value).__name__} {value!r}")
    try:
        x = float(value)
    except OverflowError:  # a Python int beyond the range of a double
        raise DomainError(f"{name} must be a number within the range of a double (|x| < 1.8e308); got an "
                          f"integer of {len(str(abs(int(value))))} digits", name=name, value=value) from None
    if math.isnan(x):
        raise DomainError(f"{name} must be a number, not NaN", name=name, value=value)
    return x


def check_array(name: str, value: Any) -> np.ndarray:
    """Return ``value`` as a non-empty float64 array; non-numeric input is a ``TypeError``.

    Strings, booleans and complex numbers are not real numbers here even where numpy would
    convert them; an empty array is a ``DomainError`` (there is no order to evaluate).
    """
    if isinstance(value, (bool, np.bool_, str, bytes)):
        raise TypeError(f"{name} must be real numbers; got {type(value).__name__} {value!r}")
    raw = value if isinstance(value, np.ndarray) else None
    if raw is None:
        try:
            raw = np.asarray(value)
        except (TypeError, ValueError, OverflowError):
            raise TypeError(f"{name} must be real numbers; got {type(value).__name__}") from None
    if raw.dtype.kind not in "fiu" and not (raw.dtype.kind == "O" and raw.size and all(
            isinstance(v, numbers.Real) and not isinstance(v, bool) for v in raw.flat)):
        raise TypeError(f"{name} must be real numbers; got an array of {raw.dtype}")
    try:
        arr = np.asarray(raw, dtype=np.float64)
    except OverflowError:
        raise DomainError(f"{name} must be numbers within the range of a double (|x| < 1.8e308)",
                          name=name, value=value) from None
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be real numbers; got {type(value).__name__}") from None
    if arr.size == 0:
        raise DomainError(f"{name} must contain at least one value; got an empty array", name=name, value=value)
    return arr


def check_int(name: str, value: Any, minimum: int = 1) -> int:
    """Return ``value`` as an ``int`` ≥ ``minimum``; floats that are whole numbers are accepted."""
    if isinstance(value, bool):
        raise TypeError(f"{name} must be an integer; got bool")
    if isinstance(value, (numbers.Integral, np.integer)):
        k = int(value)
    elif isinstance(value, (numbers.Real, np.floating)):
        v = float(value)
        if math.isnan(v) or math.isinf(v) or not v.is_integer():
            raise DomainError(
                f"{name} must be an integer in [{minimum}, inf); got {value!r}", name=name, value=value
            )
        k = int(v)
    else:
        raise TypeError(f"{name} must be an integer; got {type(value).__name__} {value!r}")
    if k < minimum:
        raise DomainError(
            f"{name} must be an integer in [{minimum}, inf); got {value!r}", name=name, value=value
        )
    if k > MAX_INT:
        # Counts multiply privacy parameters as doubles: beyond the largest double they overflow.
        raise DomainError(f"{name} must be an integer in [{minimum}, 1.8e308] (a finite double); got an "
                          f"integer of {len(str(k))} digits", name=name, value=value)
    return k


#: Largest integer accepted by :func:`check_int`: the largest finite double.
MAX_INT = int(1.7976931348623157e308)


POSITIVE = Interval(0.0, math.inf)
NONNEGATIVE = Interval(0.0, math.inf, lo_closed=True)
#: [0, ∞], for bounds that may be infinite.
NONNEGATIVE_EXTENDED = Interval(0.0, math.inf, lo_closed=True, hi_closed=True)
REAL = Interval(-math.inf, math.inf)
PROBABILITY_OPEN = Interval(0.0, 1.0)
PROBABILITY = Interval(0.0, 1.0, lo_closed=True, hi_closed=True)
UNIT_CLOSED_OPEN = Interval(0.0, 1.0, lo_closed=True)
#: Rényi orders of RDP guarantees: α ∈ (1, ∞].
ORDER = Interval(1.0, math.inf, hi_closed=True)
#: Orders of Rényi divergences: α ∈ [0, ∞].
ORDER_ANY = Interval(0.0, math.inf, lo_closed=True, hi_closed=True)


def read_user_text(path: str, what: str, error: Any) -> str:
    """The text of a small file the user named (a spec, a pipeline, a key list).

    Only a regular file is read: a FIFO, socket or device named by mistake would block
    forever or never end, so it is refused (opened without blocking, then checked). A UTF-8
    byte-order mark, as some editors write, is dropped (``tomllib`` would otherwise report
    "invalid statement" at line 1). Every failure raises ``error(message)``.
    """
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise error(f"{path}: no such file") from None
    except IsADirectoryError:
        raise error(f"{path}: is a directory, not {what}") from None
    except OSError as e:
        raise error(f"{path}: cannot read ({e.strerror})") from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise error(f"{path}: is a directory, not {what}")
        if not stat.S_ISREG(mode):
            raise error(f"{path}: not a regular file (a FIFO, socket or device is never read as {what})")
        with os.fdopen(fd, "rb") as f:
            fd = -1
            raw = f.read()
    except OSError as e:
        raise error(f"{path}: cannot read ({e.strerror})") from None
    finally:
        if fd >= 0:
            os.close(fd)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise error(f"{path}: not a UTF-8 text file") from None
