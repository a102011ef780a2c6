"""Numerics at scale (issue #26): long lists of zCDP values, huge step counts, extreme
parameters. Each test fails on the code before its fix (the reason is in its docstring)."""

from __future__ import annotations

import math
import random

import pytest

from renyi import compose
from renyi.definitions import ZCDP
from renyi.guarantees import composition


def _general(pairs):
    """The general composition path (item by item), for comparison with the fast one."""
    return composition._compose(tuple(pairs))


def test_compose_many_zcdp_reads_each_value_once(monkeypatch):
    """10⁵ ZCDP values took 4 s to compose and minutes to convert (every route converted every
    value: ZCDP.to_rdp ran 2·10⁵ times). Now the sum is read once: the conversions never build
    one RDP curve per value."""
    rng = random.Random(1)
    gs = [ZCDP(rng.uniform(1e-4, 1e-3), neighbouring="add_remove") for _ in range(5000)]
    calls = {"n": 0}
    real = ZCDP.to_rdp

    def counting(self):
        calls["n"] += 1
        return real(self)

    monkeypatch.setattr(ZCDP, "to_rdp", counting)
    out = compose(*gs)
    eps = out.epsilon(1e-5)
    assert calls["n"] <= 5, calls
    # the same value as the general path (exact sums)
    rho = math.fsum(g.rho for g in gs)
    assert out.rho == rho
    assert out == _general([(g, 1) for g in gs])
    assert eps == ZCDP(rho).epsilon(1e-5, method="rdp") or eps == ZCDP(rho).epsilon(1e-5)


def test_compose_many_zcdp_same_result_as_general_path():
    """Few kinds, counts, a list argument, ξ > 0, replace-one: the fast path gives what the
    general path gives, and remembers the merged items."""
    kinds = [ZCDP(0.001), ZCDP(0.002, 0.01), ZCDP(0.003)]
    gs = [kinds[i % 3] for i in range(300)]
    a = compose(*gs)
    b = compose(gs)
    assert a == b == _general([(g, 1) for g in gs])
    assert a._items == ((kinds[0], 100), (kinds[1], 100), (kinds[2], 100))
    r1 = [ZCDP(0.001, neighbouring="replace_one")] * 100
    c = compose(*r1)
    assert c.neighbouring == "replace_one" and c.rho == pytest.approx(0.1, rel=1e-15)
    # a composed value among them keeps its items (the general path, not the fast one)
    from renyi.mechanisms import Gaussian

    mixed = [ZCDP(0.001)] * 100 + [Gaussian(3.0).compose(2)]
    m = compose(*mixed)
    assert any(type(o).__name__ == "Gaussian" for o, _ in m._items)
    # mixed relations are stated under replace-one by the general path
    mix = compose(*([ZCDP(0.001)] * 64 + [ZCDP(0.001, neighbouring="replace_one")]))
    assert mix.neighbouring == "replace_one"
