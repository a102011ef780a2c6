"""Moved to :mod:`renyi.guarantees.rdp`; this path stays as a thin re-export (the same module object)."""

import sys

from renyi.guarantees import rdp as _moved
from renyi.guarantees.rdp import *  # noqa: F401,F403  (the public names, for type checkers)

sys.modules[__name__] = _moved
