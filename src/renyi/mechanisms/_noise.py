"""Adding noise to query answers: one place that validates values and keeps their shape.

Every mechanism's ``release`` goes through :func:`add_noise`, so the rules are the same
everywhere:

* a scalar (Python or numpy number, or a 0-d array) gives a Python ``float`` (``int`` for
  integer mechanisms);
* a numpy array gives a float64 (int64) array of the *same shape*; a list or tuple is
  converted to an array first; the shape is never changed silently;
* NaN or ±inf in the true answer is a :class:`~renyi.errors.DomainError` (noise cannot
  hide a non-finite value, and NaN arithmetic would silently drop the noise);
* integer mechanisms accept integer values, or floats that are whole numbers, and reject
  anything else with a :class:`~renyi.errors.DomainError`.

Randomness comes from :mod:`renyi.samplers`: ``rng=None`` is cryptographically secure; an
explicit :class:`numpy.random.Generator` is reproducible but **not** secure.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from typing import Any

import numpy as np

from renyi.core.errors import DomainError

__all__ = ["add_noise", "as_real_array", "as_int_array"]

_INT64_MAX = 2**63 - 1
#: Integer query answers must fit comfortably in int64 so that adding noise cannot wrap.
_INT_LIMIT = 2**62

NoiseFn = Callable[[Any, Any], Any]


def _is_scalar(value: Any) -> bool:
    return np.ndim(value) == 0 and not isinstance(value, (list, tuple))


def as_real_array(value: Any, name: str = "value") -> np.ndarray:
    """``value`` as a float64 array; non-numbers are a TypeError, NaN/inf a DomainError."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be real numbers; got bool")
    if isinstance(value, (str, bytes)):
        raise TypeError(f"{name} must be real numbers; got {type(value).__name__}")
    arr = np.asarray(value)
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be real numbers; got {type(value).__name__} of dtype {arr.dtype}")
    arr = arr.astype(np.float64)
    if arr.size and not np.all(np.isfinite(arr)):
        bad = arr[~np.isfinite(arr)].flat[0]
        raise DomainError(f"{name} must be finite; got {float(bad)!r}", name=name, value=bad)
    return arr


def as_int_array(value: Any, name: str = "value") -> np.ndarray:
    """``value`` as an int64 array; non-integer (or non-finite) numbers are a DomainError."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be integers; got bool")
    if isinstance(value, (str, bytes)):
        raise TypeError(f"{name} must be integers; got {type(value).__name__}")
    if isinstance(value, numbers.Integral) and not isinstance(value, np.integer):
        if abs(int(value)) > _INT_LIMIT:
            raise DomainError(f"{name} must be an integer in [-2**62, 2**62]; got {value!r}", name=name, value=value)
        return np.asarray(int(value), dtype=np.int64)
    arr = np.asarray(value)
    if arr.dtype == object:
        if all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in arr.ravel()):
            raise DomainError(f"{name} must be integers in [-2**62, 2**62]; got a larger integer", name=name)
        raise TypeError(f"{name} must be integers; got {type(value).__name__} of dtype object")
    if arr.dtype.kind in "iu":
        if arr.dtype == np.uint64 and arr.size and int(arr.max()) > _INT_LIMIT:
            raise DomainError(f"{name} must be integers in [-2**62, 2**62]; got {int(arr.max())}", name=name)
        out = arr.astype(np.int64)
    elif arr.dtype.kind == "f":
        if arr.size and not np.all(np.isfinite(arr)):
            bad = arr[~np.isfinite(arr)].flat[0]
            raise DomainError(f"{name} must be finite integers; got {float(bad)!r}", name=name, value=bad)
        if arr.size and not np.all(arr == np.round(arr)):
            bad = arr[arr != np.round(arr)].flat[0]
            raise DomainError(
                f"{name} must be integers (this mechanism adds integer noise); got {float(bad)!r}",
                name=name,
                value=bad,
            )
        if arr.size and float(np.max(np.abs(arr))) > _INT_LIMIT:
            raise DomainError(f"{name} must be integers in [-2**62, 2**62]; got {float(np.max(np.abs(arr)))!r}", name=name)
        out = arr.astype(np.int64)
    else:
        raise TypeError(f"{name} must be integers; got {type(value).__name__} of dtype {arr.dtype}")
    if out.size and int(np.max(np.abs(out))) > _INT_LIMIT:
        raise DomainError(f"{name} must be integers in [-2**62, 2**62]; got {int(np.max(np.abs(out)))}", name=name)
    return out


def add_noise(value: Any, noise_fn: NoiseFn, rng: Any = None, *, integer: bool = False) -> Any:
    """``value`` plus noise drawn by ``noise_fn(rng, size)``, with the shape of ``value``.

    Args:
        value: the true query answer: a real number, an array, or a list of numbers.
        noise_fn: draws noise; called as ``noise_fn(rng, None)`` for one scalar (returns a
            number) or ``noise_fn(rng, shape)`` for an array of that shape.
        rng: ``None`` for secure randomness, or a :class:`numpy.random.Generator`
            (reproducible, **not** secure).
        integer: the mechanism adds integer noise; values must be integers (int64 out).

    Returns:
        A ``float`` (``int``) for a scalar value, otherwise a float64 (int64) array with the
        shape of ``value``.

    Raises:
        DomainError: if the value is NaN or infinite, or not an integer for ``integer=True``.
        TypeError: if the value is not numeric, or ``rng`` is not a generator.
    """
    from renyi.mechanisms.samplers import resolve_rng

    gen = resolve_rng(rng)
    scalar = _is_scalar(value)
    if integer:
        arr = as_int_array(value)
        if scalar:
            return int(arr) + int(noise_fn(gen, None))
        noise = np.asarray(noise_fn(gen, arr.shape), dtype=np.int64).reshape(arr.shape)
        out = arr + noise
        # int64 addition wraps silently; detect it (both operands' signs differ from the result's).
        wrapped = ((arr ^ out) & (noise ^ out)) < 0
        if np.any(wrapped):
            raise OverflowError("value + noise does not fit in int64")
        return out
    real = as_real_array(value)
    if scalar:
        return float(real) + float(noise_fn(gen, None))
    real_noise = np.asarray(noise_fn(gen, real.shape), dtype=np.float64).reshape(real.shape)
    return real + real_noise


def check_finite_scalar(name: str, value: Any) -> float:
    """A finite real number (for distances and other scalar inputs to mechanisms)."""
    arr = as_real_array(value, name)
    if arr.ndim != 0:
        raise TypeError(f"{name} must be a single real number; got an array of shape {arr.shape}")
    x = float(arr)
    if not math.isfinite(x):  # pragma: no cover - as_real_array already refused it
        raise DomainError(f"{name} must be finite; got {x!r}", name=name, value=x)
    return x
