"""Moved to :mod:`renyi.accounting.routes`; this path stays as a thin re-export (the same module object)."""

import sys

from renyi.accounting import routes as _moved
from renyi.accounting.routes import *  # noqa: F401,F403  (the public names, for type checkers)

sys.modules[__name__] = _moved
