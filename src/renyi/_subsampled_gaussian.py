"""Moved to :mod:`renyi.sampling._subsampled_gaussian` (split in three); this path re-exports all.

The numerics of amplification by subsampling were one module; they are now
:mod:`renyi.sampling._subsampled_gaussian` (the Poisson-subsampled Gaussian's exact series),
:mod:`renyi.sampling._subsampled_general` (any base curve: ZW19, WBK19) and
:mod:`renyi.sampling._subsampled_dpsgd` (the DP-SGD ε and calibration fast path).
"""

from renyi.sampling import _subsampled_dpsgd as _dpsgd
from renyi.sampling import _subsampled_gaussian as _gaussian
from renyi.sampling import _subsampled_general as _general
from renyi.sampling._subsampled_dpsgd import *  # noqa: F401,F403
from renyi.sampling._subsampled_gaussian import *  # noqa: F401,F403
from renyi.sampling._subsampled_general import *  # noqa: F401,F403

import sys as _sys
import types as _types

_PARTS = (_gaussian, _general, _dpsgd)
for _part in _PARTS:
    globals().update({k: v for k, v in vars(_part).items() if not k.startswith("__")})


class _Facade(_types.ModuleType):
    """Setting a name here sets it in the part that owns it too (tests patch series caps)."""

    def __setattr__(self, name: str, value: object) -> None:
        for part in _PARTS:
            if name in vars(part):
                setattr(part, name, value)
        super().__setattr__(name, value)


_sys.modules[__name__].__class__ = _Facade
