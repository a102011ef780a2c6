"""Peer libraries for cross-checks and integration tests.

Outside CI a missing peer skips its tests with a reason; in CI (``CI`` set) the peers are part
of the test install, so a missing one is an error rather than a silent skip.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

import pytest


def need(module: str) -> ModuleType:
    """Import ``module`` or skip the calling test (fail under CI, where it must be installed)."""
    if os.environ.get("CI"):
        return importlib.import_module(module)
    return pytest.importorskip(module, reason=f"{module} is not installed (pip install -e '.[test]')")
