"""Collection settings for the whole repository.

The integration adapters import their host libraries (torch via Opacus, dp-accounting) at
module import; they are exercised by ``tests/test_integration_*.py`` (which skip or fail
according to ``tests/_peers.py``), not by doctest collection.
"""

collect_ignore_glob = ["src/renyi/integrations/*.py"]
