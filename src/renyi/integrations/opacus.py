"""Moved to :mod:`renyi.training.integrations.opacus`; this path stays as a thin re-export (the same module object)."""

import sys

from renyi.training.integrations import opacus as _moved
from renyi.training.integrations.opacus import *  # noqa: F401,F403  (the public names, for type checkers)

sys.modules[__name__] = _moved
