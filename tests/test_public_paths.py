"""Every public name still imports from where users imported it before the layered move.

``data_public_names.json`` was written at 215ef58, before the package was split into layers
(issue 22): for every public module path, the names it exported. Each must still import from
the same path, and be the same object as at the module's new home.
"""

from __future__ import annotations

import importlib
import json
import pathlib

import pytest

SNAPSHOT = json.loads((pathlib.Path(__file__).parent / "data_public_names.json").read_text(encoding="utf-8"))
_PEERS = {"renyi.integrations.opacus": "opacus", "renyi.integrations.dp_accounting": "dp_accounting",
          "renyi.integrations.torch_samplers": "torch"}


@pytest.mark.parametrize("path", sorted(SNAPSHOT))
def test_public_names_import_from_their_old_paths(path: str) -> None:
    """``from <old path> import <name>`` works for every name of the snapshot."""
    if path in _PEERS:
        pytest.importorskip(_PEERS[path])
    module = importlib.import_module(path)
    missing = [name for name in SNAPSHOT[path] if not hasattr(module, name)]
    assert missing == []


def test_old_module_paths_are_the_moved_modules() -> None:
    """An old module path is the moved module itself (monkeypatching either reaches both)."""
    import renyi.accounting.routes
    import renyi.routes

    assert renyi.routes is renyi.accounting.routes
    from renyi.definitions.rdp import RDP
    from renyi.guarantees.rdp import RDP as RDP2

    assert RDP is RDP2


def test_the_snapshot_covers_the_documented_paths() -> None:
    """The snapshot is not empty and names the paths the docs promise."""
    for path in ("renyi", "renyi.pld", "renyi.dpsgd", "renyi.accuracy", "renyi.limits", "renyi.release",
                 "renyi.routes", "renyi.integrations.opacus", "renyi.definitions"):
        assert path in SNAPSHOT and SNAPSHOT[path]
