"""Moved to :mod:`renyi.mechanisms.samplers`; this path stays as a thin re-export (the same module object)."""

import sys

from renyi.mechanisms import samplers as _moved
from renyi.mechanisms.samplers import *  # noqa: F401,F403  (the public names, for type checkers)

sys.modules[__name__] = _moved
