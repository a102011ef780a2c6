"""renyi.from_dp_event and the dp-accounting PrivacyAccountant, against the real dp-accounting.

For a table of DpEvent trees, renyi's ε must lie between dp-accounting's optimistic PLD value
(a lower estimate of the true ε) and its RDP accountant's value (an upper bound on a grid).
"""

from __future__ import annotations

import math

import pytest
from _peers import need

import renyi
from renyi.dp_events import UnsupportedDpEventError

pytestmark = pytest.mark.optional

dpa = need("dp_accounting")
from dp_accounting import dp_event as E  # noqa: E402
from dp_accounting.pld import privacy_loss_distribution as pldlib  # noqa: E402
from dp_accounting.privacy_accountant import NeighboringRelation as NR  # noqa: E402
from dp_accounting.rdp import rdp_privacy_accountant as rdp  # noqa: E402

from renyi.integrations.dp_accounting import RenyiAccountant  # noqa: E402

DELTA = 1e-5
STEP = E.PoissonSampledDpEvent(0.01, E.GaussianDpEvent(1.1))

ADD_REMOVE = [
    E.GaussianDpEvent(2.0),
    E.SelfComposedDpEvent(E.GaussianDpEvent(5.0), 10),
    E.LaplaceDpEvent(2.0),
    E.SelfComposedDpEvent(STEP, 1000),
    E.ComposedDpEvent([E.SelfComposedDpEvent(STEP, 500), E.GaussianDpEvent(10.0)]),
    E.PoissonSampledDpEvent(0.05, E.ComposedDpEvent([E.GaussianDpEvent(2.0), E.GaussianDpEvent(2.0)])),
    E.ComposedDpEvent([E.ZCDpEvent(0.05), E.NoOpDpEvent(), E.GaussianDpEvent(3.0)]),
]
REPLACE_ONE = [
    E.RandomizedResponseDpEvent(0.5, 4),
    E.SelfComposedDpEvent(E.RandomizedResponseDpEvent(0.8, 2), 20),
]


def _has(event, name):
    if type(event).__name__ == name:
        return True
    inner = getattr(event, "event", None)
    if inner is not None and _has(inner, name):
        return True
    return any(_has(e, name) for e in getattr(event, "events", []) or [])


def _optimistic(event, q=1.0):
    """dp-accounting's optimistic PLD for the events it covers here (None otherwise)."""
    name = type(event).__name__
    kw = {"pessimistic_estimate": False, "value_discretization_interval": 1e-3, "sampling_prob": q}
    if name == "GaussianDpEvent":
        return pldlib.from_gaussian_mechanism(event.noise_multiplier, **kw)
    if name == "LaplaceDpEvent":
        return pldlib.from_laplace_mechanism(event.noise_multiplier, **kw)
    if name == "PoissonSampledDpEvent" and q == 1.0:
        return _optimistic(event.event, event.sampling_probability)
    if name == "SelfComposedDpEvent":
        inner = _optimistic(event.event, q)
        return None if inner is None else inner.self_compose(event.count)
    if name == "ComposedDpEvent" and q == 1.0:
        parts = [_optimistic(e) for e in event.events if type(e).__name__ != "NoOpDpEvent"]
        if any(p is None for p in parts):
            return None
        out = parts[0]
        for p_ in parts[1:]:
            out = out.compose(p_)
        return out
    return None


def _pld_lower(event):
    """dp-accounting's optimistic PLD ε (a lower estimate of the true ε), or None."""
    d = _optimistic(event)
    return None if d is None else d.get_epsilon_for_delta(DELTA)


@pytest.mark.parametrize("event", ADD_REMOVE, ids=lambda e: type(e).__name__)
def test_add_remove_table(event):
    ours = renyi.from_dp_event(event).epsilon(DELTA)
    ref = rdp.RdpAccountant(neighboring_relation=NR.ADD_OR_REMOVE_ONE).compose(event).get_epsilon(DELTA)
    assert ours <= ref * (1 + 1e-9)
    low = _pld_lower(event)
    if low is not None:
        assert ours >= low
    acct = RenyiAccountant()
    assert acct.supports(event)
    assert acct.compose(event).get_epsilon(DELTA) == pytest.approx(ours, rel=1e-12)


@pytest.mark.parametrize("event", REPLACE_ONE, ids=lambda e: type(e).__name__)
def test_replace_one_table(event):
    ours = renyi.from_dp_event(event).epsilon(DELTA)
    ref = rdp.RdpAccountant(neighboring_relation=NR.REPLACE_ONE).compose(event).get_epsilon(DELTA)
    assert ours <= ref * (1 + 1e-9)
    acct = RenyiAccountant(NR.REPLACE_ONE)
    assert acct.compose(event).get_epsilon(DELTA) == pytest.approx(ours, rel=1e-12)


def test_without_replacement_is_replace_one():
    """Sampling without replacement is read under replace-one neighbours (inferred), as WBK19."""
    ev = E.SelfComposedDpEvent(E.SampledWithoutReplacementDpEvent(10_000, 100, E.GaussianDpEvent(2.0)), 200)
    g = renyi.from_dp_event(ev)
    m = renyi.SubsampledWithoutReplacement(renyi.Gaussian(2.0, neighbouring="replace_one"), 0.01)
    assert g.epsilon(DELTA) == (200 * m).epsilon(DELTA)
    assert RenyiAccountant(NR.REPLACE_ONE).compose(ev).get_epsilon(DELTA) == pytest.approx(g.epsilon(DELTA), rel=1e-12)


def test_randomized_response_trap():
    """RR noise parameter p: truth with probability 1 − p + p/k, so ε = log(1 + k(1−p)/p)."""
    g = renyi.from_dp_event(E.RandomizedResponseDpEvent(0.5, 4))
    assert float(g.epsilon) == pytest.approx(math.log(1 + 4 * 0.5 / 0.5), rel=1e-14)
    assert float(g.epsilon) >= math.log(5)
    assert renyi.from_dp_event(E.RandomizedResponseDpEvent(1.0, 4)).epsilon(DELTA) == 0.0


def test_discrete_laplace_trap():
    """DiscreteLaplace noise parameter a is the inverse scale: ε = Δ·a."""
    g = renyi.from_dp_event(E.DiscreteLaplaceDpEvent(0.5, 2))
    assert g.scale == pytest.approx(2.0)
    assert g.rdp(math.inf) == pytest.approx(1.0, rel=1e-12)


def test_noop_and_nonprivate():
    assert renyi.from_dp_event(E.NoOpDpEvent()).epsilon(DELTA) == 0.0
    assert math.isinf(renyi.from_dp_event(E.NonPrivateDpEvent()).epsilon(DELTA))
    assert math.isinf(renyi.from_dp_event(E.ComposedDpEvent([E.NonPrivateDpEvent(), STEP])).epsilon(DELTA))


def test_incremental_compose_merges_steps():
    """One step at a time equals one composition of many steps (and stays one entry)."""
    acct = RenyiAccountant()
    for _ in range(300):
        acct.compose(STEP)
    assert len(acct._parts) == 1
    assert acct.get_epsilon(DELTA) == renyi.from_dp_event(E.SelfComposedDpEvent(STEP, 300)).epsilon(DELTA)
    d = acct.get_delta(acct.get_epsilon(DELTA))
    assert d <= DELTA * (1 + 1e-6)


@pytest.mark.parametrize(
    "event, relation, name",
    [
        (E.UnsupportedDpEvent(), None, "UnsupportedDpEvent"),
        (E.SampledWithReplacementDpEvent(100, 10, E.GaussianDpEvent(1.0)), None, "SampledWithReplacementDpEvent"),
        (E.SingleEpochTreeAggregationDpEvent(1.0, 10), None, "SingleEpochTreeAggregationDpEvent"),
        (E.PoissonSampledDpEvent(0.1, E.RandomizedResponseDpEvent(0.5, 2)), None, "PoissonSampledDpEvent"),
        (E.ComposedDpEvent([STEP, E.SampledWithoutReplacementDpEvent(100, 10, E.GaussianDpEvent(1.0))]), None,
         "ComposedDpEvent"),
        (STEP, "replace_one", "PoissonSampledDpEvent"),
        (E.SampledWithoutReplacementDpEvent(100, 10, E.GaussianDpEvent(1.0)), "add_remove",
         "SampledWithoutReplacementDpEvent"),
    ],
)
def test_unsupported_events_are_named(event, relation, name):
    """An event renyi cannot account is one clear error naming it (and dp-accounting's accountant
    interface reports it through supports/compose)."""
    with pytest.raises(UnsupportedDpEventError) as info:
        renyi.from_dp_event(event, neighbouring=relation)
    assert name in str(info.value)
    rel = NR.REPLACE_ONE if relation == "replace_one" else NR.ADD_OR_REMOVE_ONE
    acct = RenyiAccountant(rel)
    if relation is not None or name != "ComposedDpEvent":
        assert not acct.supports(event)
        with pytest.raises(dpa.UnsupportedEventError):
            acct.compose(event)


def test_bad_relation():
    with pytest.raises(ValueError, match="REPLACE_SPECIAL"):
        RenyiAccountant(NR.REPLACE_SPECIAL)
    with pytest.raises(renyi.DomainError, match="neighbouring"):
        renyi.from_dp_event(STEP, neighbouring="swap")
