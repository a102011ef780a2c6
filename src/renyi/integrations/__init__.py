"""Moved to :mod:`renyi.training.integrations`; this path stays as a thin re-export."""

import renyi.training.integrations as _moved
from renyi.training.integrations import *  # noqa: F401,F403  (the public names, for type checkers)

globals().update({k: v for k, v in vars(_moved).items() if not k.startswith("__") or k == "__all__"})
