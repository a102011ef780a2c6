"""Every public member has a docstring: the names in ``renyi.__all__`` and in the ``__all__``
of every public module, and the public methods and properties of every public class."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from types import ModuleType

import pytest

import renyi

#: packages that need an optional dependency to import (skipped when it is missing)
_OPTIONAL = {"renyi.integrations.opacus": "opacus", "renyi.integrations.dp_accounting": "dp_accounting"}


def public_modules() -> list[ModuleType]:
    mods = [renyi]
    for info in pkgutil.walk_packages(renyi.__path__, "renyi."):
        if any(part.startswith("_") for part in info.name.split(".")[1:]) or info.name.startswith("renyi.examples"):
            continue
        need = _OPTIONAL.get(info.name)
        if need is not None and importlib.util.find_spec(need) is None:
            continue
        mods.append(importlib.import_module(info.name))
    return mods


def _own_members(cls: type) -> list[tuple[str, object]]:
    out = []
    for name, value in vars(cls).items():
        if name.startswith("_"):
            continue
        if isinstance(value, (staticmethod, classmethod)):
            value = value.__func__
        if inspect.isfunction(value) or isinstance(value, property):
            out.append((name, value))
    return out


def _inherits_doc(cls: type, name: str) -> bool:
    """An override documented by its base (inspect.getdoc follows the MRO for methods)."""
    return bool(inspect.getdoc(getattr(cls, name, None)))


def undocumented() -> list[str]:
    missing: set[str] = set()
    seen: set[int] = set()
    for mod in public_modules():
        if not (mod.__doc__ or "").strip():
            missing.add(mod.__name__)
        for name in getattr(mod, "__all__", []):
            obj = getattr(mod, name, None)
            if obj is None or id(obj) in seen or isinstance(obj, (int, float, str, tuple, dict, frozenset)):
                continue
            seen.add(id(obj))
            if inspect.ismodule(obj):
                continue
            if not (getattr(obj, "__doc__", None) or "").strip():
                missing.add(f"{mod.__name__}.{name}")
            if inspect.isclass(obj):
                for member, value in _own_members(obj):
                    doc = value.__doc__ if not isinstance(value, property) else value.fget.__doc__
                    if not (doc or "").strip() and not _inherits_doc(obj, member):
                        missing.add(f"{obj.__module__}.{obj.__qualname__}.{member}")
    return sorted(missing)


def test_every_public_member_has_a_docstring():
    """Shift-Tab in a notebook shows something for every public name, method and property."""
    missing = undocumented()
    assert missing == [], f"{len(missing)} public members without a docstring:\n" + "\n".join(missing)


def test_the_check_can_fail():
    """The enumeration sees methods: a class with an undocumented public method is reported."""

    class Probe:
        """Documented."""

        def method(self) -> None:
            pass

    assert _own_members(Probe) and not (Probe.method.__doc__ or "").strip()


def test_no_reference_to_the_unpublished_theory_notes():
    """Docstrings and docs cite papers (or docs pages), never the team's theory notes ("theory §…"),
    which are not part of the repository."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    pattern = re.compile(r"theory(\.md)?\s*§")
    hits = []
    for base, suffixes in ((root / "src" / "renyi", (".py",)), (root / "docs", (".md", ".py"))):
        for path in base.rglob("*"):
            if path.suffix in suffixes and path.is_file():
                for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                    if pattern.search(line):
                        hits.append(f"{path.relative_to(root)}:{n}: {line.strip()}")
    assert hits == [], "cite the paper and theorem (or link a docs page) instead:\n" + "\n".join(hits)
