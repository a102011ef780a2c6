"""The one hook by which values reach the layers above them.

Guarantee and mechanism values live low in the tree, yet users call ``g.epsilon(δ)``,
``m.compose(k)`` and ``g + h`` on them: the answer comes from the accounting routes and the
composition algebra, which sit above the values and import them. Rather than importing upward
(which would put the whole package in one import circle), a value asks this registry for the
function by name, and the module that owns the function registers it when it is imported.

Every name a value may ask for is in :data:`PROVIDERS`, with the module that provides it.
``renyi/__init__`` does not import those modules eagerly (``import renyi`` stays cheap), so
:func:`get` imports the named provider on first use: the import is by the documented name in
this one table, never scattered through the values.

Adding a hook: add its name and provider here, and call :func:`provide` in the provider.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F")

#: hook name -> the module that provides it (imported on first use)
PROVIDERS: dict[str, str] = {
    # guarantee and mechanism sugar: the minimum over the accounting routes
    "best_epsilon": "renyi.accounting.routes",
    "best_delta": "renyi.accounting.routes",
    # ``a + b``, ``k * a``, ``m.compose(k)``: the composition algebra
    "compose": "renyi.guarantees.composition",
    # restating a result under its input's neighbouring relation
    "with_relation": "renyi.guarantees.neighbouring",
    # guarantee types named by a lower value type's conversion methods (``g.to_rdp()``)
    "ApproxDP": "renyi.guarantees.approx",
    "RDP": "renyi.guarantees.rdp",
    "ZCDP": "renyi.guarantees.zcdp",
}

_registry: dict[str, Any] = {}


def provide(name: str, value: F) -> F:
    """Register ``value`` as the implementation of hook ``name`` (called by its provider)."""
    if name not in PROVIDERS:
        raise KeyError(f"unknown hook {name!r}; add it to renyi.core.hooks.PROVIDERS")
    _registry[name] = value
    return value


def get(name: str) -> Any:
    """The implementation of hook ``name``, importing its provider on first use."""
    try:
        return _registry[name]
    except KeyError:
        importlib.import_module(PROVIDERS[name])
        return _registry[name]


def call(name: str, *args: Any, **kwargs: Any) -> Any:
    """``get(name)(*args, **kwargs)``."""
    fn: Callable[..., Any] = get(name)
    return fn(*args, **kwargs)
