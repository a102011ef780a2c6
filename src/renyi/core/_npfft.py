"""Real FFTs for the PLD engine, from numpy (``numpy.fft``, pocketfft).

``scipy.fft`` computes the same transforms (also pocketfft; the engine's answers are unchanged
to the bit on the DP-SGD cases tried) but importing it costs more than a whole DP-SGD ε, so the
engine uses numpy's. The engine's error bounds (Higham 2002, Thm 24.2, with a safety factor) hold for
either: both are Cooley–Tukey-type FFTs with the same structure.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["rfft", "irfft", "next_fast_len"]


def rfft(x: Any, n: int | None = None, axis: int = -1) -> np.ndarray:
    """The DFT of a real array (``numpy.fft.rfft``)."""
    return np.fft.rfft(x, n=n, axis=axis)


def irfft(x: Any, n: int | None = None, axis: int = -1) -> np.ndarray:
    """The inverse of :func:`rfft` (``numpy.fft.irfft``)."""
    return np.fft.irfft(x, n=n, axis=axis)


def next_fast_len(target: int, real: bool = True) -> int:
    """The smallest 5-smooth number (2^a·3^b·5^c) ≥ ``target``: the lengths ``scipy.fft`` picks
    for real transforms (``next_fast_len(target, real=True)``), so the engine's grids are the same."""
    target = int(target)
    if target <= 6:
        return max(target, 1)
    best = 1 << (target - 1).bit_length()  # a power of two always qualifies
    p5 = 1
    while p5 < best:
        p35 = p5
        while p35 < best:
            # the smallest power of two taking p35 to at least target
            q = -(-target // p35)
            p2 = 1 << (q - 1).bit_length()
            cand = p2 * p35
            if cand < best:
                best = cand
            p35 *= 3
        p5 *= 5
    return best
