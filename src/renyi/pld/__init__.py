"""Moved to :mod:`renyi.accounting.pld`; this path stays as a thin re-export."""

import renyi.accounting.pld as _moved
from renyi.accounting.pld import *  # noqa: F401,F403  (the public names, for type checkers)

globals().update({k: v for k, v in vars(_moved).items() if not k.startswith("__") or k == "__all__"})
