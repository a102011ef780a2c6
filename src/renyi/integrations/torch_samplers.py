"""Moved to :mod:`renyi.training.integrations.torch_samplers`; this path stays as a thin re-export (the same module object)."""

import sys

from renyi.training.integrations import torch_samplers as _moved
from renyi.training.integrations.torch_samplers import *  # noqa: F401,F403  (the public names, for type checkers)

sys.modules[__name__] = _moved
