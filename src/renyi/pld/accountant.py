"""Moved to :mod:`renyi.accounting.pld.accountant`; this path stays as a thin re-export (the same module object)."""

import sys

from renyi.accounting.pld import accountant as _moved
from renyi.accounting.pld.accountant import *  # noqa: F401,F403  (the public names, for type checkers)

sys.modules[__name__] = _moved
