"""Moved to :mod:`renyi.training.dp_events`; this path stays as a thin re-export (the same module object)."""

import sys

from renyi.training import dp_events as _moved
from renyi.training.dp_events import *  # noqa: F401,F403  (the public names, for type checkers)

sys.modules[__name__] = _moved
