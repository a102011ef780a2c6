"""Moved to :mod:`renyi.guarantees`; this path stays as a thin re-export."""

import renyi.guarantees as _moved
from renyi.guarantees import *  # noqa: F401,F403  (the public names, for type checkers)

globals().update({k: v for k, v in vars(_moved).items() if not k.startswith("__") or k == "__all__"})
