"""Moved to :mod:`renyi.budget.ledger`; this path stays as a thin re-export (the same module object)."""

import sys

from renyi.budget import ledger as _moved
from renyi.budget.ledger import *  # noqa: F401,F403  (the public names, for type checkers)

sys.modules[__name__] = _moved
