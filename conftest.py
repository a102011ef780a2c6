"""Collection settings for the whole repository.

The integration adapters import their host libraries (torch via Opacus, dp-accounting) at
module import; they are exercised by ``tests/test_integration_*.py`` (which skip or fail
according to ``tests/_peers.py``), not by doctest collection.
"""

collect_ignore_glob = ["src/renyi/integrations/*.py", "src/renyi/training/integrations/*.py"]


def pytest_ignore_collect(collection_path, config):  # type: ignore[no-untyped-def]
    """The old module paths are thin re-exports of moved modules (the same module object), so
    their doctests are collected once, from the module's new home."""
    p = str(collection_path)
    if p.endswith(".py") and "src/renyi" in p.replace("\\", "/"):
        try:
            with open(p, encoding="utf-8") as f:
                head = f.read(200)
        except OSError:
            return None
        if head.startswith('"""Moved to :mod:'):
            return True
    return None
