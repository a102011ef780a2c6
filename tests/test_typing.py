"""Types: every public name is an explicit re-export, and user code type-checks under --strict."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import renyi

INIT = Path(renyi.__file__)


def _type_checking_reexports() -> dict[str, str]:
    """``{name: module}`` for every ``from .module import name as name`` under TYPE_CHECKING."""
    tree = ast.parse(INIT.read_text(encoding="utf-8"))
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for stmt in ast.walk(node):
                if isinstance(stmt, ast.ImportFrom):
                    for alias in stmt.names:
                        if alias.asname == alias.name:
                            found[alias.name] = "." * stmt.level + (stmt.module or "")
    return found


def test_every_public_name_is_an_explicit_reexport():
    """`from renyi import X` needs `X as X` (or __all__) for mypy --strict; the lazy __all__ is opaque."""
    reexports = _type_checking_reexports()
    missing = sorted(set(renyi._EXPORTS) - set(reexports))
    assert missing == [], f"add `from <module> import X as X` under TYPE_CHECKING for {missing}"
    wrong = {n: (m, renyi._EXPORTS[n]) for n, m in reexports.items() if n in renyi._EXPORTS and m != renyi._EXPORTS[n]}
    assert wrong == {}


def test_every_public_name_resolves():
    """Each lazily exported name imports, and is the object its module defines."""
    for name, module in renyi._EXPORTS.items():
        owner = importlib.import_module(module, "renyi")
        assert getattr(renyi, name) is getattr(owner, name), name


USER_CODE = '''
from typing import assert_type

import renyi
from renyi import {names}
from renyi.definitions import Conversion

total = compose(GDP(1.0), (Gaussian(sigma=2.0), 10))
assert_type(total, GDP)
assert_type(compose(PureDP(1.0), PureDP(0.5)), PureDP)
assert_type(compose(PureDP(1.0), ApproxDP(0.5, 1e-6)), ApproxDP)
assert_type(compose(ZCDP(0.1), GDP(1.0)), ZCDP)
assert_type(compose(Laplace(1.0), Gaussian(2.0)), Guarantee)
assert_type(ZCDP(0.5).to_approx_dp(1e-5), ApproxDP)
assert_type(Laplace(1.0).to_zcdp(), ZCDP)
assert_type(PureDP(1.0).to_rdp(), RDP)
assert_type(ZCDP(0.5).best_epsilon(1e-5), Conversion)
eps: float = ZCDP(0.5).epsilon(1e-5)
delta: float = Gaussian(1.0).delta(1.0)
version: str = renyi.__version__
'''


@pytest.mark.slow
def test_user_code_passes_mypy_strict(tmp_path):
    """A user file importing every public name (and using compose/conversions) passes mypy --strict."""
    api = pytest.importorskip("mypy.api")
    names = ", ".join(n for n in renyi.__all__ if n != "__version__")
    user = tmp_path / "user.py"
    user.write_text(USER_CODE.format(names=names), encoding="utf-8")
    stdout, stderr, status = api.run(["--strict", "--no-incremental", "--python-version", "3.11",
                                      "--config-file", "", str(user)])
    assert status == 0, stdout + stderr
