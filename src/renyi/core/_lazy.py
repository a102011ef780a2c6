"""scipy submodules imported on first use.

Importing ``scipy.special`` costs about a quarter of a second (it pulls in scipy's array-API
layer), more than a whole DP-SGD ε computation. Modules that need scipy in only some of their
functions name it through these proxies, so that it is imported by the first function that
actually calls into it and never at ``import renyi...`` time.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

__all__ = ["special", "optimize", "integrate", "linalg", "fft"]


class _LazyModule:
    __slots__ = ("_name", "_module")

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attr: str) -> Any:
        mod = self._module
        if mod is None:
            mod = importlib.import_module(self._name)
            self._module = mod
        return getattr(mod, attr)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}>"


special: Any = _LazyModule("scipy.special")
optimize: Any = _LazyModule("scipy.optimize")
integrate: Any = _LazyModule("scipy.integrate")
linalg: Any = _LazyModule("scipy.linalg")
fft: Any = _LazyModule("scipy.fft")
