"""Value semantics for the small callables that hold privacy curves.

A curve such as "the Poisson-subsampled Gaussian with q = 0.01, σ = 1.1" is a *value*: two
curves built from equal parameters must compare equal and hash alike, so that guarantees and
mechanisms built from them are equal and hashable too. The accountant relies on this to reuse
the per-unit curve of a mechanism spent again (one evaluation on its grid, then dictionary
hits), which is what makes per-step accounting cheap.
"""

from __future__ import annotations

from typing import Any

__all__ = ["CurveValue"]


class CurveValue:
    """Mixin: equality and hash from the attributes named in ``__slots__``.

    Subclasses whose attributes are not hashable (numpy arrays) override :meth:`_key`.
    """

    __slots__ = ()

    def _key(self) -> tuple[Any, ...]:
        names: tuple[str, ...] = type(self).__slots__
        return tuple(getattr(self, name) for name in names)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        same: bool = self._key() == other._key()
        return same

    def __hash__(self) -> int:
        return hash((type(self).__qualname__, self._key()))
