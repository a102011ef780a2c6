"""Moved to :mod:`renyi.training.integrations.dp_accounting`; this path stays as a thin re-export (the same module object)."""

import sys

from renyi.training.integrations import dp_accounting as _moved
from renyi.training.integrations.dp_accounting import *  # noqa: F401,F403  (the public names, for type checkers)

sys.modules[__name__] = _moved
