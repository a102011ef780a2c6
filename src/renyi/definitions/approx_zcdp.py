"""Moved to :mod:`renyi.guarantees.approx_zcdp`; this path stays as a thin re-export (the same module object)."""

import sys

from renyi.guarantees import approx_zcdp as _moved
from renyi.guarantees.approx_zcdp import *  # noqa: F401,F403  (the public names, for type checkers)

sys.modules[__name__] = _moved
