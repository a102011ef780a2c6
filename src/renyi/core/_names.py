"""Spellings: ``neighboring`` (US) is accepted wherever ``neighbouring`` (the library's name) is.

Every peer library spells it the American way, so ``Gaussian(1.0, neighboring="replace_one")``
must work. The canonical keyword stays ``neighbouring`` (it is the attribute name and the key
written to ledgers and reports); the alias is translated at the call boundary:

* mechanism and guarantee classes through :class:`MechanismMeta`, the metaclass of
  :class:`~renyi.mechanisms.Mechanism` and :class:`~renyi.definitions.Guarantee` (so every
  subclass, including future ones, accepts it);
* functions through the :func:`accepts_neighboring` decorator;
* pipeline files and the command line in :mod:`renyi.pipeline` and :mod:`renyi.cli`.

Type checkers see the canonical keyword only.
"""

from __future__ import annotations

import functools
from abc import ABCMeta
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

__all__ = ["ALIASES", "canonical_keywords", "accepts_neighboring", "MechanismMeta"]

_P = ParamSpec("_P")
_R = TypeVar("_R")
_T = TypeVar("_T")

#: alternative spelling -> the library's keyword
ALIASES = {"neighboring": "neighbouring"}


def canonical_keywords(kwargs: dict[str, Any], where: str) -> dict[str, Any]:
    """``kwargs`` with every alias renamed to its canonical keyword (a new dict if any was).

    Raises:
        TypeError: both spellings were given (as Python does for a repeated keyword).
    """
    if not any(alias in kwargs for alias in ALIASES):
        return kwargs
    out = dict(kwargs)
    for alias, name in ALIASES.items():
        if alias in out:
            if name in out:
                raise TypeError(f"{where}() got both {name!r} and its alias {alias!r}")
            out[name] = out.pop(alias)
    return out


def accepts_neighboring(fn: Callable[_P, _R]) -> Callable[_P, _R]:
    """Let ``fn`` take ``neighboring=`` as an alias of its ``neighbouring`` keyword."""

    @functools.wraps(fn)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        return fn(*args, **canonical_keywords(kwargs, fn.__name__))

    return wrapper


class MechanismMeta(ABCMeta):
    """Metaclass of the mechanisms: translates ``neighboring=`` before ``__init__`` runs."""

    def __call__(cls: type[_T], *args: Any, **kwargs: Any) -> _T:
        # typed through ``type[_T]`` so that checkers still see ``Gaussian(...)`` as a Gaussian
        obj: _T = super().__call__(*args, **canonical_keywords(kwargs, cls.__name__))  # type: ignore[misc]
        return obj
